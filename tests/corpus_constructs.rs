//! Defects the corpus tier (issue 25, torch 2.11 exports) found, each held by a small real
//! artifact in `samples/corpus/torch-2.15/`: a generated architecture that has the construct
//! (`scripts/gen_corpus.py`), or a module of a few nodes that spells it as the architecture does
//! (`scripts/gen_construct_samples.py`, `construct_*`). Each goes through the stages of the corpus
//! tier (`tests/common/stages.rs`) against torch's own decompositions and outputs.

mod common;

use std::path::PathBuf;

use common::stages::*;
use xpu_workbench::decomp::Mode;

fn case(name: &str) -> Case {
    case_of("2.15", name)
}

/// A sample exported by torch `torch` (`samples/corpus/torch-<torch>/`).
fn case_of(torch: &str, name: &str) -> Case {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("samples/corpus/torch-{torch}"));
    let exp = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.expect.json"))).unwrap()).unwrap();
    Case { torch: torch.into(), name: name.to_string(), dir, exp }
}

/// Every model stage of the corpus tier but OpenCL; panics with every stage that failed.
fn all_stages_pass(name: &str) {
    stages_pass(name, true)
}

/// The corpus tier's stages up to the decompositions, and with `eval` the interpreter's too.
fn stages_pass(name: &str, eval: bool) {
    stages_pass_of(case(name), eval)
}

fn stages_pass_of(c: Case, eval: bool) {
    let name = c.name.clone();
    let mut failed = Vec::new();
    let mut check = |stage: &str, r: Outcome| {
        if let Err((cell, long)) = r {
            failed.push(format!("{stage}: {cell}: {long}"));
        }
    };
    check("import", stage_import(&c));
    let model = c.load().unwrap();
    check("shapes", stage_shapes(&c, &model));
    check("guards", stage_guards(&c, &model));
    check("core", stage_decomp(&c, &model, Mode::Core, "core"));
    check("full", stage_decomp(&c, &model, Mode::Full, "inductor"));
    for mode in [Mode::None, Mode::Lite, Mode::Full].into_iter().filter(|_| eval) {
        check(&format!("eval {}", mode.name()), stage_eval(&c, &model, mode));
    }
    assert!(failed.is_empty(), "{name}:\n{}", failed.join("\n"));
}

/// `torch.tensor(..)` in forward exports as `lift_fresh_copy` + `detach_`, `.detach()` as
/// `detach`: torch's functionalization drops the in-place `detach_` and makes `detach` an `alias`.
#[test]
fn detach_and_detach_in_place_become_what_torch_makes_of_them() {
    all_stages_pass("construct_tensor_detach");
}

/// `torch.sym_min` / `torch.sym_max` of a dynamic size: named as the archive names them, run
/// by the interpreter, their results bounding a slice and a `zeros`.
#[test]
fn sym_min_and_sym_max_of_a_dynamic_size() {
    all_stages_pass("construct_sym_min_max");
}

/// `F.pad` by `-len % block` pads by a SymInt: `pad` → `constant_pad_nd` keeps the SymInt.
#[test]
fn pad_by_a_symint() {
    all_stages_pass("construct_pad_symint");
}

/// Hubert (`transformers:HubertForSequenceClassification`): its positional convolution is
/// weight-normalised (`_weight_norm` over dim 2 → `_weight_norm_interface` → `linalg_vector_norm`
/// → `pow`/`sum`/`pow`), its feature extractor a `GroupNorm` of one group per channel
/// (`group_norm` → `native_group_norm`, which Inductor's table folds into a scale and shift).
#[test]
fn weight_norm_and_group_norm_as_torch_decomposes_them() {
    all_stages_pass("hf_hubert_audio_classification");
}

/// `arange` as Parakeet and XLNet call it: a negative step from a dynamic start, a float step
/// with an integer dtype, a float dtype, and `arange.start`; Inductor's table makes each `iota`s.
#[test]
fn aranges_with_negative_and_float_steps() {
    all_stages_pass("construct_aranges");
}

/// `zeros_like` → `full_like` (→ `full`), `empty_like` of a product of sizes → `empty_permuted`
/// (→ `empty`) with the size folded from the symbols, `floor_divide` by a number →
/// `div(rounding_mode="floor")`, `linalg.norm` over one dim → `pow`/`sum`/`pow`, and a
/// `padding="same"` convolution → `convolution`.
#[test]
fn factories_floor_divide_norms_and_same_padding() {
    all_stages_pass("construct_factories");
}

/// Qwen2-MoE (`transformers:Qwen2MoeForCausalLM`), a router of the MoE family the corpus found:
/// `floor_divide` by 2, `empty_like` of a `[2*s53*s72]` tensor whose size torch folds from the
/// symbols, and the same product computed again later. Its experts call
/// `transformers.grouped_mm_fallback`, which the interpreter does not run (not this test's).
/// Only the op multisets are compared: the no-rule report on its core ATen ops (`topk`, `sort`)
/// and on the custom op is not this test's.
#[test]
fn a_moe_router_decomposes_as_torch_does() {
    let c = case("hf_qwen2_moe_causal_lm");
    let model = c.load().unwrap();
    check_stage("import", stage_import(&c));
    for (mode, key) in [(Mode::Core, "core"), (Mode::Full, "inductor")] {
        let d = xpu_workbench::decomp::decompose(&model.graphs[0], mode, &Default::default()).unwrap();
        let want = common::archive_histogram(&c.exp["ops"][key]);
        let got = d.graph.op_histogram();
        let diff: Vec<String> = want
            .keys()
            .chain(got.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|k| want.get(*k) != got.get(*k))
            .map(|k| format!("{k}: ours {:?}, torch {:?}", got.get(k), want.get(k)))
            .collect();
        assert!(diff.is_empty(), "{key}: {}", diff.join("; "));
    }
}

fn check_stage(stage: &str, r: Outcome) {
    if let Err((cell, long)) = r {
        panic!("{stage}: {cell}: {long}");
    }
}

/// Siglip (`transformers:SiglipForImageClassification`): its patch embedding is a
/// `conv2d.padding` ("valid"), which torch's tables make a `convolution`.
#[test]
fn a_valid_padding_convolution_becomes_convolution() {
    all_stages_pass("hf_siglip_image_classification");
}

/// `repeat_interleave(2, dim=1)` (grouped-query attention's `repeat_kv`) and of a vector, which
/// both torches' tables make `unsqueeze`/`expand`/`clone`/`view` (issue 25: ~30 corpus stages kept
/// it whole), and `linalg.vector_norm`, which torch 2.11's export table keeps whole and 2.15's
/// makes `pow`/`sum`/`pow` (12 stages), `abs` over dims of size 1 (ConvNeXt-V2): the same
/// module as each torch exported it.
#[test]
fn repeat_interleave_and_vector_norm_as_each_torch_decomposes_them() {
    for torch in ["2.11", "2.15"] {
        stages_pass_of(case_of(torch, "construct_repeat_norm"), true);
    }
}

/// `AvgPool1d`, `MaxPool1d` and a channels-last `adaptive_avg_pool1d` (→ the 2-D pools of the input
/// unsqueezed; the last restrided by `as_strided`), `split` into chunks of a size (core:
/// `split_with_sizes`; Inductor keeps `split`), `torch.concat` (a name of `cat`) and a 0-dim
/// `type_as` of an integer matrix: corpus classes of torch 2.11, exported by each torch.
#[test]
fn avg_pool1d_split_concat_and_a_zero_dim_type_as() {
    for torch in ["2.11", "2.15"] {
        stages_pass_of(case_of(torch, "construct_pool_split"), true);
    }
}

/// `meshgrid` with `indexing="xy"` and `"ij"` (each input a `view` along its dim, `expand`ed; xy
/// swaps the first two) and `all(dim)` of a boolean mask (`logical_not`/`any`/`logical_not`),
/// as each torch exports and decomposes them.
#[test]
fn meshgrid_and_all_of_a_mask() {
    for torch in ["2.11", "2.15"] {
        stages_pass_of(case_of(torch, "construct_grid_all"), true);
    }
}

/// Writes into strided slices of `select`s along dim 0: functionalization's `select_scatter`,
/// which export's table makes `arange`/`view`/`eq`/`unsqueeze`/`expand`/`where` (the traces
/// hold `dim = 1` only) and Inductor's keeps.
#[test]
fn a_write_through_a_select_view() {
    for torch in ["2.11", "2.15"] {
        stages_pass_of(case_of(torch, "construct_select_write"), true);
    }
}

/// `masked_fill` with a 0-dim tensor value (CPM-Ant: `where`) and `|` / `^` of boolean masks of
/// different ranks (`bitwise_or` / `bitwise_xor`) and `where(mask, 0.5, x)` (`where.ScalarSelf` →
/// `scalar_tensor` + `where.self`), as each torch decomposes them.
#[test]
fn masked_fill_by_a_tensor_and_mask_bitwise_ops() {
    for torch in ["2.11", "2.15"] {
        stages_pass_of(case_of(torch, "construct_mask_fill"), true);
    }
}

/// `F.interpolate` bicubic (of an NHWC-permuted parameter: a channels-last `clone` at the end),
/// bilinear (by a factor, with aligned corners) and linear 1-D: torch's `_upsample_linear` /
/// `upsample_bicubic2d_default` expansions under both tables, and their outputs (ViTDet, YOLOS,
/// Pixio, SAM, DPT, MobileViT failed core/full on the missing expansion).
#[test]
fn interpolation_expands_as_torchs_decompositions() {
    all_stages_pass("construct_resize");
}

/// `padding="same"` with an even kernel: ATen's `_convolution_mode` pads the input on the right
/// (`constant_pad_nd`) and convolves with the left half (LASR's depthwise Conv1d kept
/// `conv1d.padding` whole in both tables).
#[test]
fn same_padding_with_an_even_kernel_pads_the_input_first() {
    all_stages_pass("construct_conv_same");
}

/// Ops the tables rewrite one for one (`max.other` → `maximum`, `argsort` → `sort`, `rsub` →
/// `sub`, complex `real` → `view_as_real` + `select`, Inductor's `clamp.Tensor` → `clamp_min`),
/// `logsumexp` expanded, `adaptive_avg_pool2d` to 7×7 → `_adaptive_avg_pool2d`: XGLM, ViT-MAE,
/// XLNet, FNet, Phi-MoE, Inkling and CSATv2 kept or refused them; `diff` with `prepend` (Voxtral).
#[test]
fn one_for_one_spellings_logsumexp_and_adaptive_pooling() {
    all_stages_pass("construct_spellings");
}

/// `reshape` with a `-1` of a tensor that is not contiguous resolves the `-1` through ATen's
/// `infer_size`, and torch's graph keeps the SymInt products that computed it though nothing
/// reads them (Bloom, MVP, TrOCR, XGLM: `_operator.mul` 2 against torch's 5); a contiguous
/// tensor's view keeps the `-1`, and a quotient that is a number records nothing.
#[test]
fn reshape_resolves_its_minus_one_as_torch_records_it() {
    all_stages_pass("construct_reshape_infer");
}

/// A batch of rows times a matrix that requires grad is one `mm` in torch's graph, the rows
/// copied first where they do not merge into a view (ATen's `should_fold` avoids the large
/// gradient `bmm` would need; HaloNet's relative positions); times a matrix that requires none,
/// rows that do not merge go through `bmm`.
#[test]
fn matmul_folds_rows_times_a_parameter_as_torch_does() {
    all_stages_pass("construct_matmul_fold");
}

/// Llama 4's rotary embedding in complex numbers (`construct_rotary_complex`): `polar`, a
/// complex `mul` by a slice and `unsqueeze` of it, `view_as_real`, and a complex `add`, `sub`,
/// `div`, `cat`, `transpose` and `contiguous` beside it, run by the interpreter against torch's
/// outputs at both bindings, undecomposed and in lite mode (complex nodes run on the host).
#[test]
fn complex_rotary_embedding_runs_as_torch_computes_it() {
    let c = case("construct_rotary_complex");
    let model = c.load().unwrap();
    check_stage("import", stage_import(&c));
    check_stage("eval none", stage_eval(&c, &model, Mode::None));
    check_stage("eval lite", stage_eval(&c, &model, Mode::Lite));
}

/// `chunk(3)` of a `3*s` dim (ProphetNet's streams, `construct_chunk_dynamic`): torch records the
/// piece size's `_operator.add`/`sub`, then `split` (Inductor) or `split_with_sizes` and one more
/// `sub` per chunk (export). Run against torch's outputs with nothing, lite's marks and Inductor's
/// table decomposed. (The multisets still differ in where `3*s` comes from: torch rebuilds it as
/// `_operator.mul` of the input's size, we read the `cat`'s size and divide it: a size-provenance
/// difference, not the chunk's.)
#[test]
fn chunk_along_a_dynamic_dimension_as_torch_traces_it() {
    let c = case("construct_chunk_dynamic");
    let model = c.load().unwrap();
    check_stage("import", stage_import(&c));
    for mode in [Mode::None, Mode::Lite, Mode::Full] {
        check_stage(&format!("eval {}", mode.name()), stage_eval(&c, &model, mode));
    }
}

/// ConvBERT's `F.unfold` of a `[b, c, s, 1]` sequence (`construct_unfold_span`): `im2col` as
/// torch/_decomp builds it (`arange`s of the block starts and kernel offsets, a whole-dim
/// `slice` per dynamic leading dim, one `index`, `permute`, `reshape`), with the size arithmetic
/// torch traces: `s + 2*pad` even where the kernel brings it back to `s`, and a strided
/// block count `(s - 1) // 2` rebuilt from the expression for the view (core) or read from the
/// `iota`'s length (Inductor).
#[test]
fn unfold_decomposes_with_the_size_arithmetic_torch_traces() {
    all_stages_pass("construct_unfold_span");
}

/// XLNet's relative positions (`construct_float_step_arange`): `arange(klen, -qlen, -1.0)` with an
/// int64 and a float dtype, and `arange(klen, -1, -1.0)`. Inductor's table takes the length as
/// torch/_refs does, `math.ceil((end - start) / step)` on SymFloats: `_operator.sub`,
/// `torch.sym_float`, `_operator.truediv`, `math.ceil`, one node per new expression (the float
/// dtype's repeats the int64's and records none); XLNet's full mode refused it.
#[test]
fn a_float_step_between_dynamic_bounds_traces_symfloat_arithmetic() {
    all_stages_pass("construct_float_step_arange");
}

/// Where a decomposition's `.contiguous()` or `reshape` copies follows the layouts ATen computes
/// (`construct_layout_clones`): `rms_norm` of a transposed tensor keeps it transposed until the
/// `clone` (timm AIMv2); a parameter query expanded over the batch multiplies to a layout whose
/// batch and heads merge, and one query row needs no copy of the flash layout (AIMv2's pooling);
/// heads made by `expand` + `reshape` merge after the scale (GPT-BigCode); `masked_fill` of an
/// expanded tensor is copied (Doge); one key/value head against two query heads is repeated by
/// torch 2.15 and broadcast, without the flash layout, by 2.11 (Falcon). Every stage, against
/// each version's own multisets and outputs.
#[test]
fn clones_follow_the_layouts_aten_computes() {
    stages_pass("construct_layout_clones", true);
    stages_pass_of(case_of("2.11", "construct_layout_clones"), true);
}

/// Composite ops the traced table had no variant for and factories Inductor lays out
/// (`construct_small_rules`): `reshape_as` of a transposed tensor into another rank (LeViT,
/// RoFormer) → `clone` + `view`, `expand_as` (GPT-NeoX-Japanese) → `expand`, `new_empty` with
/// `pin_memory=False` (HY-V4) → `empty`, `zeros_like` in `contiguous_format` (GroupViT), of an
/// expanded tensor (ProphetNet) and `ones_like` of a transposed one → Inductor's `full` (permuted
/// and cloned for the transposed one), `group_norm` of a channels-last input (CPUBone: no copy)
/// and of a transposed one (a `clone`), an int32 `arange` (Bloom, MPT: one `iota`), against
/// torch's multisets in both tables and its outputs.
#[test]
fn small_composites_and_factories_decompose_as_torch_does() {
    all_stages_pass("construct_small_rules");
}

/// matmul and linear on the layouts torch's re-trace sees (`construct_matmul_layouts`): a 2-D
/// parameter times a batch folds through the transposed batch (Mamba); rows that merge but
/// strided columns go through `bmm` (Python's `should_fold`); after the math attention's
/// `[L, N, H, E]` output, its transpose, reshape and gate are not contiguous and the projections
/// are `bmm` + `add`, where Inductor's fused attention keeps them `mm`/`addmm` (Afmoe, BitNet,
/// Data2Vec-Vision); Inductor's CPU `bmm` of row×column and column×row batches is pointwise.
#[test]
fn matmul_and_linear_follow_the_layouts_torch_retraces() {
    all_stages_pass("construct_matmul_layouts");
}

/// FocalNet's patch embedding: a convolution of a token grid with NHWC strides writes a
/// channels-last output on the CPU, so Inductor's LayerNorm after `flatten(2).transpose(1, 2)`
/// copies nothing, where the same on an NCHW input copies once (torch 2.15; 2 clones too many
/// in full mode before the convolution's meta followed its input's layout).
#[test]
fn convolution_keeps_a_channels_last_input_layout() {
    all_stages_pass("construct_conv_nhwc");
}

/// In-place adds into what PyTorch's functionalization sees as views, each read afterwards:
/// Kosmos-2.5's `view(..).detach().to(same dtype) += ..` (the `to` is the tensor itself, and the
/// read is the views taken again from the written base: `alias(view(view(add)))`), and
/// MobileBERT's and Nystromformer's `matmul(..) += ..` (the result is a reshape of the `mm` or
/// `bmm` it decomposes into; torch 2.15). Before, the views taken again were missing (2 and 4
/// views, an alias, too few in core and full mode).
#[test]
fn in_place_writes_into_views_are_read_as_the_views_taken_again() {
    all_stages_pass("construct_inplace_views");
}

/// Phi-3's and MiniMax's `sdpa(..).transpose(1, 2).contiguous()`: a copy under export's table,
/// whose attention math leaves `[B, H, L, E]` contiguous; under Inductor's, CPU flash attention
/// lays its output out as its query (`empty_like`): a copy for a contiguous query, none for a
/// fused projection's `[B, L, H, E]` one (torch 2.15; `contiguous` copied always before, 2
/// clones too many in full mode).
#[test]
fn contiguous_of_a_contiguous_tensor_is_the_tensor() {
    all_stages_pass("construct_attn_contiguous");
}

/// Attention that ATen's CPU backend choice (`use_flash_attention_cpp`) keeps off the flash
/// kernel (`construct_attn_math_gates`): CPUBone's query, key and value are `[B, H, L, E]` views
/// of an `[B, H, E, L]` buffer, whose last-dim stride is not 1, and a value head dim other than
/// the query's; both run the math kernel under both tables, so neither Inductor's fused op nor
/// the flash layout's `permute`, `clone`, `permute` appear (4 clones and 4 permutes too many in
/// CPUBone's core mode before). torch 2.15 and 2.11 agree; each version's multisets and outputs.
#[test]
fn attention_off_the_flash_kernel_runs_the_math_kernel() {
    all_stages_pass("construct_attn_math_gates");
    stages_pass_of(case_of("2.11", "construct_attn_math_gates"), true);
}

/// CoaT's copies under Inductor's table (`construct_softmax_upsample_layouts`, torch 2.15):
/// `_softmax` and `_log_softmax` of a permuted key copy it first (torch/_decomp's
/// `x.contiguous()`), and a bilinear upsampling of the class-token-free token grid, an NCHW view
/// of NHWC memory with a symbolic batch, copies its row-major result back to channels-last
/// (`suggest_memory_format` of the input). 26 and 36 clones too few in CoaT-Tiny's full mode
/// before.
#[test]
fn softmax_and_upsampling_copy_as_their_python_decompositions_do() {
    all_stages_pass("construct_softmax_upsample_layouts");
}

/// `F.linear` where ATen does not fold the bias into `addmm` (`construct_linear_layouts`, torch
/// 2.15): of ConvBERT's `mul` whose transposed first operand lays it out (not contiguous:
/// `matmul` + `add`, where we flattened it into `addmm`, 2 adds and 4 expands too few), of
/// Gradium's 1-D inputs (a one-row `mm`; with a bias a one-row `addmm`, which Inductor's CPU
/// table makes `mul`/`sum`), and `matmul` of vectors (`dot`, `mv`, vector × matrix), which
/// shape inference refused before.
#[test]
fn linear_folds_its_bias_only_where_aten_does() {
    all_stages_pass("construct_linear_layouts");
}

/// `torch.where` between two Python numbers (`where.Scalar`, LongT5's local attention bias):
/// `where.self` of two `scalar_tensor`s in the numbers' promoted dtype, as torch's tables make
/// it (torch 2.15; before, LongT5 kept `where.Scalar`: 2 `scalar_tensor`s too few).
#[test]
fn where_between_two_numbers_is_where_of_scalar_tensors() {
    all_stages_pass("construct_where_numbers");
}
