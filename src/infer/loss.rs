//! Meta functions of the losses, distances and gates (registered in `ops/table/loss.rs`): a
//! reduced loss is zero-dim, an unreduced one has its per-element or per-sample shape.

use super::ops::{broadcast_operands, Out};
use super::{contiguous, norm_dim, Args, InferError};
use crate::ir::{Arg, TensorMeta, ValueKind};
use crate::sym::Expr;

fn one(m: TensorMeta) -> Out {
    Ok(vec![ValueKind::Tensor(m)])
}

fn reduced(a: &Args) -> Result<bool, InferError> {
    Ok(a.int("reduction", Some(1))? != 0)
}

/// A loss that is elementwise before its reduction: its operands broadcast, or zero-dim.
pub(crate) fn pointwise_loss(a: &Args) -> Out {
    let names = ["self", "input", "input1", "input2", "target", "weight", "pos_weight"];
    let (like, sizes) = broadcast_operands(a, &names)?;
    one(contiguous(like, like.dtype, if reduced(a)? { Vec::new() } else { sizes }))
}

/// A loss of one value per sample: unreduced, the shape of `per_sample`.
fn per_sample(a: &Args, like: &TensorMeta, per_sample: Vec<Expr>) -> Result<TensorMeta, InferError> {
    Ok(contiguous(like, like.dtype, if reduced(a)? { Vec::new() } else { per_sample }))
}

/// `cosine_embedding_loss`: one value per target entry.
pub(crate) fn target_shaped_loss(a: &Args) -> Out {
    let x = a.tensor("input1").or_else(|_| a.tensor("self"))?;
    let t = a.tensor("target")?;
    one(per_sample(a, x, t.sizes.clone())?)
}

/// `triplet_margin_loss`: the broadcast of the three inputs without its last dimension.
pub(crate) fn triplet_loss(a: &Args) -> Out {
    let (like, mut sizes) = broadcast_operands(a, &["anchor", "positive", "negative"])?;
    sizes.pop();
    one(per_sample(a, like, sizes)?)
}

/// `multi_margin_loss` / `multilabel_margin_loss`: one value per row of a 2-D input (zero-dim
/// for a single sample); `_forward` adds `is_target`, the target's shape in the input's dtype.
pub(crate) fn margin_loss(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let rows = if x.sizes.len() == 2 { vec![x.sizes[0].clone()] } else { Vec::new() };
    let loss = per_sample(a, x, rows)?;
    if !a.target.ends_with("_forward.default") {
        return one(loss);
    }
    let t = a.tensor("target")?;
    Ok(vec![ValueKind::Tensor(loss), ValueKind::Tensor(contiguous(x, x.dtype, t.sizes.clone()))])
}

/// The class-index losses: unreduced, the target's shape (the input without its class
/// dimension for class probabilities); the `_forward` ops add the zero-dim total weight.
pub(crate) fn class_loss(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let t = a.tensor("target")?;
    let sizes = if t.dtype.is_floating() && t.sizes == x.sizes {
        let class_dim = usize::from(x.sizes.len() != 1);
        x.sizes.iter().enumerate().filter(|(i, _)| *i != class_dim).map(|(_, s)| s.clone()).collect()
    } else {
        t.sizes.clone()
    };
    let loss = per_sample(a, x, sizes)?;
    if !a.target.ends_with("_forward.default") {
        return one(loss);
    }
    Ok(vec![ValueKind::Tensor(loss), ValueKind::Tensor(contiguous(x, x.dtype, Vec::new()))])
}

/// `cosine_similarity`: the broadcast inputs without `dim`.
pub(crate) fn cosine_similarity(a: &Args) -> Out {
    let (like, mut sizes) = broadcast_operands(a, &["x1", "x2"])?;
    let dim = a.int("dim", Some(1))?;
    if !sizes.is_empty() {
        let d = norm_dim(dim, sizes.len()).ok_or_else(|| a.err(format!("dim {dim} out of range")))?;
        sizes.remove(d);
    }
    one(contiguous(like, like.dtype, sizes))
}

/// `pairwise_distance`: the broadcast inputs without (or, keepdim, with a 1 for) the last.
pub(crate) fn pairwise_distance(a: &Args) -> Out {
    let (like, mut sizes) = broadcast_operands(a, &["x1", "x2"])?;
    if let Some(last) = sizes.last_mut() {
        if a.bool("keepdim", false)? {
            *last = Expr::int(1);
        } else {
            sizes.pop();
        }
    }
    one(contiguous(like, like.dtype, sizes))
}

/// `glu`: the input with `dim` halved.
pub(crate) fn glu(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dim = a.int("dim", Some(-1))?;
    let d = norm_dim(dim, x.sizes.len()).filter(|_| !x.sizes.is_empty()).ok_or_else(|| a.err(format!("dim {dim} out of range")))?;
    let mut sizes = x.sizes.clone();
    let n = sizes[d].as_int().ok_or_else(|| a.err("glu over a dynamic dimension"))?;
    sizes[d] = Expr::int(n / 2);
    one(contiguous(x, x.dtype, sizes))
}

/// `_softmax_backward_data`: the gradient's shape in `input_dtype`.
pub(crate) fn softmax_backward_data(a: &Args) -> Out {
    let g = a.tensor("grad_output")?;
    let dtype = match a.get("input_dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => g.dtype,
    };
    one(contiguous(g, dtype, g.sizes.clone()))
}

/// `native_dropout_backward`: the gradient's shape and dtype.
pub(crate) fn dropout_backward(a: &Args) -> Out {
    let g = a.tensor("grad_output")?;
    one(contiguous(g, g.dtype, g.sizes.clone()))
}

