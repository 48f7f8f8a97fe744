//! Losses and distances.

use super::prelude::*;

#[rustfmt::skip]
pub(super) const OPS: &[OpDef] = &[
    op("aten.mse_loss.default").run(x::loss::mse_loss),
    op("aten.l1_loss.default").run(x::loss::l1_loss),
    op("aten.smooth_l1_loss.default").run(x::loss::smooth_l1_loss),
    op("aten.huber_loss.default").run(x::loss::huber_loss),
    op("aten.soft_margin_loss.default").run(x::loss::soft_margin_loss),
    op("aten.kl_div.default").run(x::loss::kl_div),
    op("aten.binary_cross_entropy.default").run(x::loss::binary_cross_entropy),
    op("aten.binary_cross_entropy_with_logits.default").run(x::loss::binary_cross_entropy_with_logits),
    op("aten.poisson_nll_loss.default").run(x::loss::poisson_nll_loss),
    op("aten.margin_ranking_loss.default").run(x::loss::margin_ranking_loss),
    op("aten.hinge_embedding_loss.default").run(x::loss::hinge_embedding_loss),
    op("aten.cosine_embedding_loss.default").run(x::loss::cosine_embedding_loss),
    op("aten.triplet_margin_loss.default").run(x::loss::triplet_margin_loss),
    op("aten.multilabel_margin_loss.default").run(x::loss::multilabel_margin_loss),
    op("aten.multi_margin_loss.default").run(x::loss::multi_margin_loss),
    op("aten.nll_loss_nd.default").run(x::nll::nll_loss_nd),
    op("aten.cross_entropy_loss.default").run(x::nll::cross_entropy_loss),
    // `F.linear_cross_entropy`'s custom ops: Inductor calls them as fallback kernels.
    op("torch_nn._linear_cross_entropy_batch_chunked.default").run(x::linear_ce::linear_cross_entropy).eager(),
    op("torch_nn._linear_cross_entropy_batch_chunked_no_reduction.default").run(x::linear_ce::linear_cross_entropy_no_reduction).eager(),
    op("aten.cosine_similarity.default").run(x::distance::cosine_similarity),
    op("aten.pairwise_distance.default").run(x::distance::pairwise_distance),
    op("aten.pdist.default").run(x::distance::pdist).lower(K::Heavy, l::distance::pdist),
    op("aten._pdist_forward.default").run(x::distance::pdist).lower(K::Heavy, l::distance::pdist),
    op("aten.cdist.default").run(x::distance::cdist).lower(K::Heavy, l::distance::cdist),
    op("aten._cdist_forward.default").run(x::distance::cdist).lower(K::Heavy, l::distance::cdist),
    op("aten.dist.default").run(x::distance::dist).lower(K::Reduction, l::distance::dist),
    op("aten.renorm.default").run(x::distance::renorm).lower(K::Reduction, l::reduce::renorm),
    op("aten.glu.default").run(x::distance::glu),
    op("aten.prelu.default").run(x::distance::prelu),
    op("aten._prelu_kernel.default").run(x::distance::prelu),
    op("aten.rrelu.default").run(x::distance::rrelu),
    op("aten.block_diag.default").run(x::distance::block_diag).lower(K::Pointwise, l::layout::block_diag),
    op("aten.cartesian_prod.default").run(x::distance::cartesian_prod),
    op("aten.combinations.default").run(x::distance::combinations),
];
