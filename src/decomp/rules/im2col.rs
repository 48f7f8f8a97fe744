//! `im2col` (`F.unfold`, ConvBERT's span-based dynamic convolution) as torch/_decomp builds it:
//! per spatial dim the blocks' start indices (`arange` by the stride) plus the kernel's offsets
//! (`arange` by the dilation), one advanced `index` of the padded input, a `permute` and a
//! `reshape`. The size arithmetic is traced as torch traces it: `blocks = in + 2*pad -
//! dil*(ker-1)` left to right, so a dynamic `in` records `in + 2*pad` as a new size even where
//! the subtraction brings it back to `in` (ConvBERT's `_operator.add` with no users).

use super::build::{leading_full_slices, permute, size_arg, unsqueeze};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};

/// A two-element `int[2]` argument (`kernel_size`, `dilation`, `padding`, `stride`) of im2col;
/// `positive` (strict or not) as torch checks it.
fn pair(rw: &Rw, name: &str, strict: bool) -> Result<[i64; 2], RuleError> {
    let v = rw.ints(name)?.ok_or_else(|| RuleError::Arg { name: name.into(), message: "missing".into() })?;
    let ok = v.len() == 2 && v.iter().all(|&p| if strict { p > 0 } else { p >= 0 });
    match v.as_slice() {
        [a, b] if ok => Ok([*a, *b]),
        _ => Err(RuleError::Arg { name: name.into(), message: format!("expected two {} ints, found {v:?}", if strict { "positive" } else { "non-negative" }) }),
    }
}

/// torch/_decomp's `_im2col_col2im_indices_along_dim`: `[kernel, blocks]` indices of the padded
/// input along one spatial dim, `arange(0, blocks, stride)[None] + arange(0, ker*dil, dil)[:, None]`.
fn indices_along_dim(rw: &mut Rw, input_d: SymIntArg, ker: i64, dil: i64, pad: i64, stride: i64, device: &str) -> Result<ValueId, RuleError> {
    let grown = rw.sym_arith("add", input_d, pad * 2)?;
    let blocks = rw.sym_arith("sub", grown, dil * (ker - 1))?;
    let arange = |rw: &mut Rw, end: A, step: i64| {
        let args = vec![
            ("start", A::I(0)),
            ("end", end),
            ("step", A::I(step)),
            ("dtype", A::Raw(Arg::ScalarType(DType::I64))),
            ("device", A::Raw(Arg::Device(device.to_string()))),
            ("pin_memory", A::B(false)),
        ];
        rw.op("aten.arange.start_step", args)
    };
    let starts = arange(rw, size_arg(blocks), stride)?;
    let starts = unsqueeze(rw, starts, 0)?;
    let offsets = arange(rw, A::I(ker * dil), dil)?;
    let offsets = unsqueeze(rw, offsets, -1)?;
    rw.op("aten.add.Tensor", vec![("self", A::T(starts)), ("other", A::T(offsets))])
}

/// `im2col(self, kernel_size, dilation, padding, stride)`: `[N, C, H, W]` (or `[C, H, W]`) →
/// `[N, C·kh·kw, L]`, L the number of blocks.
pub fn im2col(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let mut x = rw.t("self")?;
    let [kh, kw] = pair(rw, "kernel_size", true)?;
    let [dh, dw] = pair(rw, "dilation", true)?;
    let [ph, pw] = pair(rw, "padding", false)?;
    let [sh, sw] = pair(rw, "stride", true)?;
    let rank = rw.rank(x)?;
    if rank != 3 && rank != 4 {
        return Err(RuleError::Arg { name: "self".into(), message: format!("expected a 3-D or 4-D tensor, found rank {rank}") });
    }
    let batched = rank == 4;
    if !batched {
        x = unsqueeze(rw, x, 0)?;
    }
    let device = rw.meta(x)?.device.clone();
    let (n, c, h, w) = (rw.size(x, 0)?, rw.size(x, 1)?, rw.size(x, 2)?, rw.size(x, 3)?);
    let rows = indices_along_dim(rw, h, kh, dh, ph, sh, &device)?;
    let cols = indices_along_dim(rw, w, kw, dw, pw, sw, &device)?;
    let padded = rw.op("aten.constant_pad_nd.default", vec![("self", A::T(x)), ("pad", A::Is(vec![pw, pw, ph, ph])), ("value", A::F(0.0))])?;
    let rows = unsqueeze(rw, rows, -1)?;
    let rows = unsqueeze(rw, rows, -1)?;
    let all = leading_full_slices(rw, padded, 2)?;
    let picked = rw.op("aten.index.Tensor", vec![("self", A::T(all)), ("indices", A::Raw(Arg::OptionalTensors(vec![None, None, Some(rows), Some(cols)])))])?;
    let out = permute(rw, picked, &[0, 1, 2, 4, 3, 5])?;
    let (nbr, nbc) = (rw.size(rows, 1)?, rw.size(cols, 1)?);
    let channels = rw.product(vec![c, SymIntArg::Int(kh), SymIntArg::Int(kw)])?;
    let blocks = rw.product(vec![nbr, nbc])?;
    let out = rw.op("aten.reshape.default", vec![("self", A::T(out)), ("shape", A::Sizes(vec![n, channels, blocks]))])?;
    if batched {
        return Ok(vec![out]);
    }
    Ok(vec![rw.op("aten.squeeze.dim", vec![("self", A::T(out)), ("dim", A::I(0))])?])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use crate::infer::infer;
    use crate::ir::{Arg, DType, Graph, InputKind, NamedArg, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// `im2col` of `x: [s0, 4, s1, 1]` (ConvBERT's sequence as an image) by a kernel `[k, 1]`,
    /// decomposed under `mode`.
    fn unfolded(mode: Mode, kernel: i64, dilation: i64, padding: i64, stride: i64) -> BTreeMap<String, usize> {
        let mut g = Graph::new("g");
        let meta = TensorMeta::contiguous(DType::F32, vec![Expr::symbol("s0"), Expr::int(4), Expr::symbol("s1"), Expr::int(1)]);
        let x = g.add_input("x", ValueKind::Tensor(meta), InputKind::UserInput).unwrap();
        let arg = |name: &str, arg: Arg| NamedArg { name: name.into(), arg, kwarg: false };
        let args = vec![
            arg("self", Arg::Tensor(x)),
            arg("kernel_size", Arg::Ints(vec![kernel, 1])),
            arg("dilation", Arg::Ints(vec![dilation, 1])),
            arg("padding", Arg::Ints(vec![padding, 0])),
            arg("stride", Arg::Ints(vec![stride, 1])),
        ];
        let kinds = infer("aten.im2col.default", &args, &g).unwrap();
        let outs = kinds.into_iter().map(|k| ("im2col".to_string(), k)).collect();
        let id = g.add_node("im2col", "aten.im2col.default", args, outs, NodeMeta::default()).unwrap();
        g.outputs.push(Arg::Tensor(g.node(id).outputs[0]));
        decompose(&g, mode, &Marks::default()).unwrap().graph.op_histogram()
    }

    /// A kernel of 3 padded by 1 keeps the length `s1`, but torch computes `s1 + 2` first and
    /// the graph keeps it; the block starts and kernel offsets are two `arange`s per dim.
    #[test]
    fn a_length_keeping_kernel_still_records_the_padded_size() {
        let ops = unfolded(Mode::Core, 3, 1, 1, 1);
        assert_eq!(ops.get("_operator.add"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("aten.arange.start_step"), Some(&4), "{ops:?}");
        assert_eq!(ops.get("aten.unsqueeze.default"), Some(&6), "{ops:?}");
        assert_eq!(ops.get("aten.index.Tensor"), Some(&1), "{ops:?}");
        // Only the dynamic batch dim's `:` is a traced slice.
        assert_eq!(ops.get("aten.slice.Tensor"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("aten.im2col.default"), None, "{ops:?}");
        let ops = unfolded(Mode::Full, 3, 1, 1, 1);
        assert_eq!(ops.get("prims.iota.default"), Some(&4), "{ops:?}");
        assert_eq!(ops.get("aten.arange.start_step"), None, "{ops:?}");
    }

    /// Stride 2 and dilation 2 without padding: `s1 - 2` blocks' starts, and the view's block
    /// count `(s1 - 1) // 2`, which core rebuilds from its expression (`-1 + s1`, then `// 2`)
    /// and Inductor reads off the `iota`'s traced length.
    #[test]
    fn a_strided_block_count_is_rebuilt_from_its_expression() {
        let ops = unfolded(Mode::Core, 2, 2, 0, 2);
        assert_eq!(ops.get("_operator.sub"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("_operator.add"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("_operator.floordiv"), Some(&1), "{ops:?}");
        let ops = unfolded(Mode::Full, 2, 2, 0, 2);
        assert_eq!(ops.get("_operator.sub"), Some(&2), "{ops:?}");
        assert_eq!(ops.get("_operator.floordiv"), Some(&1), "{ops:?}");
        assert_eq!(ops.get("_operator.add"), None, "{ops:?}");
    }
}
