//! `linear` and `matmul` as torch's re-trace expands them (`Linear.cpp`'s `linear`, and the
//! Python `matmul` of `torch/_decomp/decompositions.py`, which replaces ATen's C++ body there):
//!
//! - `linear`: a 2-D input with a bias is `addmm(b, x, Wᵀ)`; a contiguous input with a bias, of
//!   rank 3 or with a 1-D bias, has its leading dims flattened (`view`, `addmm`, `view` back);
//!   anything else is `matmul(x, Wᵀ)` and the bias added.
//! - `matmul`: 2-D × 2-D is `mm`; a batch times a matrix (either side) is folded into one `mm`
//!   when `should_fold` says so (`folds`); otherwise both operands are `expand`ed to the
//!   broadcast batch shape, reshaped to 3-D, multiplied with `bmm` and viewed back.

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

pub fn linear(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("input")?;
    let w = rw.t("weight")?;
    let b = rw.opt_t("bias")?;
    let rank = rw.rank(x)?;
    if rank == 0 || rw.rank(w)? != 2 {
        return Err(RuleError::Unsupported("linear expects input of rank >= 1 and a 2-D weight".into()));
    }
    let wt = rw.op("aten.permute.default", vec![("self", A::T(w)), ("dims", A::Is(vec![1, 0]))])?;
    match b {
        Some(b) if rank == 2 => Ok(vec![rw.op("aten.addmm.default", vec![("self", A::T(b)), ("mat1", A::T(x)), ("mat2", A::T(wt))])?]),
        // `is_contiguous && (dim == 3 || bias.dim() == 1)`, as Linear.cpp picks `_flatten_nd_linear`.
        Some(b) if super::view::is_contiguous(rw.meta(x)?) && (rank == 3 || rw.rank(b)? == 1) => flatten_nd(rw, x, wt, b, rank),
        _ => {
            // `matmul`'s own rule (this table's) expands it further.
            let y = rw.op("aten.matmul.default", vec![("self", A::T(x)), ("other", A::T(wt))])?;
            match b {
                Some(b) => Ok(vec![rw.op("aten.add.Tensor", vec![("self", A::T(y)), ("other", A::T(b))])?]),
                None => Ok(vec![y]),
            }
        }
    }
}

/// `_flatten_nd_linear`: `[*, K]` viewed as `[prod(*), K]`, `addmm`, viewed back to `[*, N]`.
fn flatten_nd(rw: &mut Rw, x: ValueId, wt: ValueId, b: ValueId, rank: usize) -> Result<Vec<ValueId>, RuleError> {
    let lead: Vec<SymIntArg> = (0..rank - 1).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
    let rows = rw.product(lead.clone())?;
    let k = rw.size(x, rank - 1)?;
    let x2 = rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(vec![rows, k]))])?;
    let y = rw.op("aten.addmm.default", vec![("self", A::T(b)), ("mat1", A::T(x2)), ("mat2", A::T(wt))])?;
    let mut out_size = lead;
    out_size.push(rw.size(y, 1)?);
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(out_size))])?])
}

/// `t` of a 2-D tensor is `permute([1, 0])`; of 0/1-D tensors the identity.
pub fn t(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    if rw.rank(x)? < 2 {
        return Ok(vec![rw.op("aten.alias.default", vec![("self", A::T(x))])?]);
    }
    Ok(vec![rw.op("aten.permute.default", vec![("self", A::T(x)), ("dims", A::Is(vec![1, 0]))])?])
}

/// `matmul`, as `torch._decomp.decompositions.matmul` (the Python body export's and Inductor's
/// re-trace run, `py_impl(CompositeImplicitAutograd)`) traces it. Of 1-D operands: `dot` and
/// `mv` as their decompositions trace (`vector`), a vector times a matrix as a one-row `mm`; a
/// 1-D operand beside one of rank 3 or more stays whole (the interpreter and the kernels run
/// `matmul` itself).
pub fn matmul(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("other")?);
    let grad = (rw.requires_grad(a), rw.requires_grad(b));
    product(rw, a, b, grad)
}

/// The body of `matmul` for operands `a`, `b` whose `requires_grad` is `grad`: passed along,
/// because a `squeeze` this body makes keeps its operand's (the body runs above autograd).
fn product(rw: &mut Rw, a: ValueId, b: ValueId, grad: (bool, bool)) -> Result<Vec<ValueId>, RuleError> {
    let (ra, rb) = (rw.rank(a)?, rw.rank(b)?);
    if ra == 1 || rb == 1 {
        return vector(rw, a, b, ra, rb);
    }
    if ra < 2 || rb < 2 {
        return Err(RuleError::Declined);
    }
    if ra == 2 && rb == 2 {
        return Ok(vec![rw.op("aten.mm.default", vec![("self", A::T(a)), ("mat2", A::T(b))])?]);
    }
    if folds(rw, a, b, grad)? {
        return folded(rw, a, b);
    }
    // A batch of one times a batch of several, the one requiring grad: torch drops the batch dim
    // and takes the folding path (`should_fold`'s reason, the gradient of a broadcast `bmm`).
    if ra == 3 && rb == 3 {
        let (ba, bb) = (rw.meta(a)?.sizes[0].clone(), rw.meta(b)?.sizes[0].clone());
        // `guard_or_true(ba != bb)`: only sizes known equal skip this.
        if !super::view::same_size(&ba, &bb) {
            let squeeze = |rw: &mut Rw, t: ValueId| rw.op("aten.squeeze.dim", vec![("self", A::T(t)), ("dim", A::I(0))]);
            if ba.as_int() == Some(1) && grad.0 {
                let a0 = squeeze(rw, a)?;
                return product(rw, a0, b, grad);
            }
            if bb.as_int() == Some(1) && grad.1 {
                let b0 = squeeze(rw, b)?;
                return product(rw, a, b0, grad);
            }
        }
    }
    batched(rw, a, b, ra, rb)
}

/// `dot` as torch's decomposition traces it: `sum(a * b)` in the opmath dtype.
pub fn dot(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("tensor")?);
    vector(rw, a, b, 1, 1)
}

/// `mv` as torch's decomposition traces it: `(m * v).sum(1)` in the opmath dtype.
pub fn mv(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (m, v) = (rw.t("self")?, rw.t("vec")?);
    if rw.rank(m)? != 2 || rw.rank(v)? != 1 {
        return Err(RuleError::Unsupported("mv expects a matrix and a vector".into()));
    }
    vector(rw, m, v, 2, 1)
}

/// `matmul` with a 1-D operand (`decompositions.matmul`'s first branches): `dot(a, b)` is
/// `sum(a * b)` and `mv(a, b)` is `(a * b).sum(1)` (their `pw_cast_for_opmath` decompositions),
/// a vector times a matrix `mm(a.unsqueeze(0), b).squeeze(0)` (Gradium's `linear` of a vector).
fn vector(rw: &mut Rw, a: ValueId, b: ValueId, ra: usize, rb: usize) -> Result<Vec<ValueId>, RuleError> {
    match (ra, rb) {
        (1, 1) | (2, 1) => {
            let (xs, dtype) = super::loss::opmath(rw, &[a, b])?;
            let p = rw.op("aten.mul.Tensor", vec![("self", A::T(xs[0])), ("other", A::T(xs[1]))])?;
            let s = if ra == 1 {
                rw.op("aten.sum.default", vec![("self", A::T(p))])?
            } else {
                rw.op("aten.sum.dim_IntList", vec![("self", A::T(p)), ("dim", A::Is(vec![1]))])?
            };
            Ok(vec![super::loss::cast(rw, s, dtype)?])
        }
        (1, 2) => {
            let row = rw.op("aten.unsqueeze.default", vec![("self", A::T(a)), ("dim", A::I(0))])?;
            let y = rw.op("aten.mm.default", vec![("self", A::T(row)), ("mat2", A::T(b))])?;
            Ok(vec![rw.op("aten.squeeze.dim", vec![("self", A::T(y)), ("dim", A::I(0))])?])
        }
        _ => Err(RuleError::Declined),
    }
}

/// The folding path: the operand of rank ≥ 3 (`t1`; the right one transposed, `mT`, when it is
/// the larger) `reshape`d to rows, one `mm` with the matrix (the left one transposed, `t()`),
/// `_unsafe_view` (a `view` in the graph) back, and for the transposed case `mT.contiguous()`.
fn folded(rw: &mut Rw, a: ValueId, b: ValueId) -> Result<Vec<ValueId>, RuleError> {
    let (ra, rb) = (rw.rank(a)?, rw.rank(b)?);
    let transpose = rb > ra;
    let swap_last = |r: usize| -> Vec<i64> {
        let mut p: Vec<i64> = (0..r as i64).collect();
        p.swap(r - 2, r - 1);
        p
    };
    let (t1, t2) = if transpose {
        let t1 = rw.op("aten.permute.default", vec![("self", A::T(b)), ("dims", A::Is(swap_last(rb)))])?;
        (t1, rw.op("aten.permute.default", vec![("self", A::T(a)), ("dims", A::Is(vec![1, 0]))])?)
    } else {
        (a, b)
    };
    let r1 = rw.rank(t1)?;
    let lead: Vec<SymIntArg> = (0..r1 - 1).map(|d| rw.size(t1, d)).collect::<Result<_, _>>()?;
    let rows = rw.product(lead.clone())?;
    let k = rw.size(t1, r1 - 1)?;
    // A `reshape`: a copy where the rows do not merge into a view (folded for the gradient).
    let t1f = super::view::view_of(rw, t1, vec![rows, k])?;
    let y = rw.op("aten.mm.default", vec![("self", A::T(t1f)), ("mat2", A::T(t2))])?;
    let mut out = lead;
    out.push(rw.size(t2, 1)?);
    let y = rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(out))])?;
    if !transpose {
        return Ok(vec![y]);
    }
    let yt = rw.op("aten.permute.default", vec![("self", A::T(y)), ("dims", A::Is(swap_last(r1)))])?;
    // `.contiguous()` copies only what is not contiguous already.
    if super::view::is_contiguous(rw.meta(yt)?) {
        return Ok(vec![yt]);
    }
    Ok(vec![super::view::contiguous_clone(rw, yt)?])
}

/// Both operands `expand`ed to the broadcast batch shape, reshaped to 3-D, one `bmm`, viewed back.
fn batched(rw: &mut Rw, a: ValueId, b: ValueId, ra: usize, rb: usize) -> Result<Vec<ValueId>, RuleError> {
    // The batch dims broadcast, aligned from the right; a size-1 dim takes the other's size.
    let nb = ra.max(rb) - 2;
    let mut lead = Vec::with_capacity(nb);
    for i in 0..nb {
        let da = (i + ra).checked_sub(nb + 2);
        let db = (i + rb).checked_sub(nb + 2);
        let one = |t: ValueId, d: usize, rw: &Rw| rw.meta(t).map(|m| m.sizes[d].as_int() == Some(1));
        lead.push(match (da, db) {
            (Some(da), Some(db)) if one(a, da, rw)? => rw.size(b, db)?,
            (Some(da), _) => rw.size(a, da)?,
            (None, Some(db)) => rw.size(b, db)?,
            (None, None) => return Err(RuleError::Declined),
        });
    }
    let batch = rw.product(lead.clone())?;
    let (m, k, n) = (rw.size(a, ra - 2)?, rw.size(a, ra - 1)?, rw.size(b, rb - 1)?);
    let shaped = |last: [SymIntArg; 2]| -> Vec<SymIntArg> { lead.iter().cloned().chain(last).collect() };
    let ae = rw.op("aten.expand.default", vec![("self", A::T(a)), ("size", A::Sizes(shaped([m.clone(), k.clone()])))])?;
    let a3 = super::view::view_of(rw, ae, vec![batch.clone(), m.clone(), k.clone()])?;
    let be = rw.op("aten.expand.default", vec![("self", A::T(b)), ("size", A::Sizes(shaped([k.clone(), n.clone()])))])?;
    let b3 = super::view::view_of(rw, be, vec![batch, k, n.clone()])?;
    let y = rw.op("aten.bmm.default", vec![("self", A::T(a3)), ("mat2", A::T(b3))])?;
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(y)), ("size", A::Sizes(shaped([m, n])))])?])
}

/// `should_fold` (torch/_decomp/decompositions.py, which export's and Inductor's re-trace run,
/// not ATen's C++ one): of the larger operand `t1` (rank ≥ 3) and the matrix `t2`, fold when
/// `t2` requires grad (torch folds, with a copy if need be, rather than have the backward build
/// the large `[batch, k, n]` gradient of `bmm`: HaloNet's relative-position matmuls), never when
/// the matrix is on the left and requires none, else when `t1` is empty or contiguous (size-1
/// dims' strides aside). The C++ check is looser (only the batch dims must merge): a row-major
/// batch of transposed matrices folds in eager, not here.
fn folds(rw: &Rw, a: ValueId, b: ValueId, grad: (bool, bool)) -> Result<bool, RuleError> {
    let (ra, rb) = (rw.rank(a)?, rw.rank(b)?);
    let (t1, r2, g2) = if ra >= rb { (a, rb, grad.1) } else { (b, ra, grad.0) };
    if rw.rank(t1)? < 3 || r2 > 2 {
        return Ok(false);
    }
    if g2 {
        return Ok(true);
    }
    if ra == 2 {
        return Ok(false);
    }
    let m = rw.meta(t1)?;
    Ok(m.sizes.iter().any(|s| s.as_int() == Some(0)) || super::view::is_contiguous(m))
}

/// Inductor's `bmm` (torch/_inductor/decomposition.py), in the opmath dtype: from torch 2.15 a
/// batch of outer products (`[B, M, 1] × [B, 1, N]`, any device) is one broadcast `mul`; on CPU
/// a batch of dot products (`[B, 1, K] × [B, K, 1]`) is `sum(a.squeeze(1) * b.squeeze(-1), 1,
/// keepdim)` unsqueezed (MobileViT's and LeViT's small attention products). Sizes count only
/// where they are numbers (`statically_known_true`); anything else stays one `bmm`.
pub fn bmm_inductor(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("mat2")?);
    let (am, bm) = (rw.meta(a)?.clone(), rw.meta(b)?.clone());
    if am.sizes.len() != 3 || bm.sizes.len() != 3 {
        return Err(RuleError::Declined);
    }
    let one = |e: &crate::sym::Expr| e.as_int() == Some(1);
    // torch 2.11's table has no outer-product case; 2.15's has.
    let outer = !rw.torch_older_than(2, 15) && one(&am.sizes[2]) && one(&bm.sizes[1]);
    let dots = am.device.starts_with("cpu") && one(&am.sizes[1]) && one(&bm.sizes[2]);
    if !outer && !dots {
        return Err(RuleError::Declined);
    }
    let (xs, dtype) = super::loss::opmath(rw, &[a, b])?;
    let y = if outer {
        let y = rw.op("aten.mul.Tensor", vec![("self", A::T(xs[0])), ("other", A::T(xs[1]))])?;
        if super::view::is_contiguous(rw.meta(y)?) { y } else { super::view::contiguous_clone(rw, y)? }
    } else {
        let sa = rw.op("aten.squeeze.dim", vec![("self", A::T(xs[0])), ("dim", A::I(1))])?;
        let sb = rw.op("aten.squeeze.dim", vec![("self", A::T(xs[1])), ("dim", A::I(-1))])?;
        let p = rw.op("aten.mul.Tensor", vec![("self", A::T(sa)), ("other", A::T(sb))])?;
        let s = rw.op("aten.sum.dim_IntList", vec![("self", A::T(p)), ("dim", A::Is(vec![1])), ("keepdim", A::B(true))])?;
        rw.op("aten.unsqueeze.default", vec![("self", A::T(s)), ("dim", A::I(1))])?
    };
    Ok(vec![super::loss::cast(rw, y, dtype)?])
}

/// Inductor's CPU `addmm` (torch/_inductor/decomposition.py, 2.11 and 2.15 alike) of one row
/// (`mat1` of static size `[1, k]`): against a column, `sum(mat1.squeeze(0) * mat2.squeeze(-1),
/// 0, keepdim).unsqueeze(0)`; against a matrix of static sizes at most 16 × 16, `(mat1.T *
/// mat2).sum(0, keepdim)` (a linear of a vector, flattened to one row); either as `alpha * out
/// + beta * self`, a `mul` by each Python number. Anything else stays one `addmm`.
pub fn addmm_inductor(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (c, a, b) = (rw.t("self")?, rw.t("mat1")?, rw.t("mat2")?);
    let (am, bm) = (rw.meta(a)?.clone(), rw.meta(b)?.clone());
    if !rw.meta(c)?.device.starts_with("cpu") || am.sizes.len() != 2 || bm.sizes.len() != 2 || am.sizes[0].as_int() != Some(1) {
        return Err(RuleError::Declined);
    }
    let column = bm.sizes[1].as_int() == Some(1);
    // `guard_or_false(size <= 16)`: a dynamic size is not known to be small.
    let small = bm.sizes.iter().all(|d| d.as_int().is_some_and(|n| n <= 16));
    if !column && !small {
        return Err(RuleError::Declined);
    }
    let (alpha, beta) = (rw.scalar("alpha").unwrap_or(A::I(1)), rw.scalar("beta").unwrap_or(A::I(1)));
    let (xs, dtype) = super::loss::opmath(rw, &[c, a, b])?;
    let out = if column {
        let sa = rw.op("aten.squeeze.dim", vec![("self", A::T(xs[1])), ("dim", A::I(0))])?;
        let sb = rw.op("aten.squeeze.dim", vec![("self", A::T(xs[2])), ("dim", A::I(-1))])?;
        let p = rw.op("aten.mul.Tensor", vec![("self", A::T(sa)), ("other", A::T(sb))])?;
        let s = rw.op("aten.sum.dim_IntList", vec![("self", A::T(p)), ("dim", A::Is(vec![0])), ("keepdim", A::B(true))])?;
        rw.op("aten.unsqueeze.default", vec![("self", A::T(s)), ("dim", A::I(0))])?
    } else {
        let at = rw.op("aten.permute.default", vec![("self", A::T(xs[1])), ("dims", A::Is(vec![1, 0]))])?;
        let p = rw.op("aten.mul.Tensor", vec![("self", A::T(at)), ("other", A::T(xs[2]))])?;
        rw.op("aten.sum.dim_IntList", vec![("self", A::T(p)), ("dim", A::Is(vec![0])), ("keepdim", A::B(true))])?
    };
    let scaled = rw.op("aten.mul.Tensor", vec![("self", A::T(out)), ("other", alpha)])?;
    let bias = rw.op("aten.mul.Tensor", vec![("self", A::T(xs[0])), ("other", beta)])?;
    let y = rw.op("aten.add.Tensor", vec![("self", A::T(scaled)), ("other", A::T(bias))])?;
    Ok(vec![super::loss::cast(rw, y, dtype)?])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, TensorMeta, ValueKind};
    use crate::sym::Expr;

    fn sizes(v: &[i64]) -> Vec<Expr> {
        v.iter().map(|&i| if i < 0 { Expr::symbol(&format!("s{}", -i)) } else { Expr::int(i) }).collect()
    }

    /// A graph of inputs (sizes: negative numbers are symbols `s1`, `s2`, ...; `param`: a
    /// parameter, which requires grad) and `target(self=inputs[0], second=inputs[1])` as its
    /// output, after `prep` (`x[..., ::2]` of the first input with `sliced`); decomposed under
    /// `mode`, its op histogram.
    fn product(mode: Mode, version: &str, target: &str, second: &str, inputs: &[(&[i64], bool)], sliced: bool) -> BTreeMap<String, usize> {
        let mut g = Graph::new("g");
        g.torch_version = Some(version.into());
        let mut vs = Vec::new();
        for (i, (s, param)) in inputs.iter().enumerate() {
            let kind = if *param { InputKind::Parameter { fqn: format!("p{i}") } } else { InputKind::UserInput };
            vs.push(g.add_input(&format!("in{i}"), ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes(s))), kind).unwrap());
        }
        if sliced {
            let last = inputs[0].0.len() as i64 - 1;
            let args = vec![arg("self", Arg::Tensor(vs[0])), arg("dim", Arg::Int(last)), arg("start", Arg::Int(0)), arg("end", Arg::Int(16)), arg("step", Arg::Int(2))];
            vs[0] = node(&mut g, "slice_1", "aten.slice.Tensor", args);
        }
        let y = node(&mut g, "y", target, vec![arg("self", Arg::Tensor(vs[0])), arg(second, Arg::Tensor(vs[1]))]);
        g.outputs.push(Arg::Tensor(y));
        decompose(&g, mode, &Marks::default()).unwrap().graph.op_histogram()
    }

    fn count(ops: &BTreeMap<String, usize>, op: &str) -> usize {
        ops.get(&format!("aten.{op}")).copied().unwrap_or(0)
    }

    /// Mamba's `A @ x` of a 2-D parameter and a batch: torch folds through the transposed batch
    /// (`x.mT` reshaped, one `mm` with `A.t()`, `mT.contiguous()` of the result): three
    /// `permute`s and no `bmm`; the same matrix as an input that requires no grad is a `bmm`.
    #[test]
    fn a_parameter_on_the_left_folds_through_the_transposed_batch() {
        let ops = product(Mode::Core, "2.15.0", "aten.matmul.default", "other", &[(&[6, 8], true), (&[-1, 8, -2], false)], false);
        assert_eq!((count(&ops, "mm.default"), count(&ops, "bmm.default"), count(&ops, "permute.default")), (1, 0, 3), "{ops:?}");
        let ops = product(Mode::Core, "2.15.0", "aten.matmul.default", "other", &[(&[6, 8], false), (&[-1, 8, -2], false)], false);
        assert_eq!((count(&ops, "mm.default"), count(&ops, "bmm.default"), count(&ops, "expand.default")), (0, 1, 2), "{ops:?}");
    }

    /// Python's `should_fold` wants the batch contiguous, not only its rows mergeable as ATen's
    /// C++ does: `x[..., ::2] @ w` (rows that merge, strided columns) is a `bmm` in torch's
    /// re-trace, and a contiguous batch with a leading dim of 1 folds whatever that dim's stride.
    #[test]
    fn only_a_contiguous_batch_folds_into_rows() {
        let ops = product(Mode::Core, "2.15.0", "aten.matmul.default", "other", &[(&[-1, -2, 16], false), (&[8, 4], false)], true);
        assert_eq!((count(&ops, "mm.default"), count(&ops, "bmm.default")), (0, 1), "{ops:?}");
        let ops = product(Mode::Core, "2.15.0", "aten.matmul.default", "other", &[(&[-1, -2, 8], false), (&[8, 4], false)], false);
        assert_eq!((count(&ops, "mm.default"), count(&ops, "bmm.default")), (1, 0), "{ops:?}");
    }

    /// A batch of one that requires grad times a batch: `squeeze(0)`, then the folding path.
    #[test]
    fn a_batch_of_one_parameter_is_squeezed_and_folded() {
        let ops = product(Mode::Core, "2.15.0", "aten.matmul.default", "other", &[(&[-1, -2, 8], false), (&[1, 8, 4], true)], false);
        assert_eq!((count(&ops, "mm.default"), count(&ops, "bmm.default"), count(&ops, "squeeze.dim") + count(&ops, "squeeze.dims")), (1, 0, 1), "{ops:?}");
    }

    /// Inductor's CPU `bmm` of row times column batches is `mul` + `sum`; of column times row
    /// batches (outer products) one `mul` from torch 2.15 on, a `bmm` for 2.11's table.
    #[test]
    fn inductor_turns_batched_dots_and_outer_products_into_pointwise_ops() {
        let dots = product(Mode::Full, "2.15.0", "aten.bmm.default", "mat2", &[(&[-1, 1, 8], false), (&[-1, 8, 1], false)], false);
        assert_eq!((count(&dots, "bmm.default"), count(&dots, "mul.Tensor"), count(&dots, "sum.dim_IntList"), count(&dots, "squeeze.dim")), (0, 1, 1, 2), "{dots:?}");
        let outer = product(Mode::Full, "2.15.0", "aten.bmm.default", "mat2", &[(&[-1, 8, 1], false), (&[-1, 1, 6], false)], false);
        assert_eq!((count(&outer, "bmm.default"), count(&outer, "mul.Tensor")), (0, 1), "{outer:?}");
        let old = product(Mode::Full, "2.11.0", "aten.bmm.default", "mat2", &[(&[-1, 8, 1], false), (&[-1, 1, 6], false)], false);
        assert_eq!((count(&old, "bmm.default"), count(&old, "mul.Tensor")), (1, 0), "{old:?}");
        // Core keeps `bmm` whole.
        let core = product(Mode::Core, "2.15.0", "aten.bmm.default", "mat2", &[(&[-1, 1, 8], false), (&[-1, 8, 1], false)], false);
        assert_eq!(count(&core, "bmm.default"), 1, "{core:?}");
    }

    /// A graph of inputs (sizes as in [`product`]; `param`: a parameter) and `ops` applied in
    /// order, each `(target, args)` naming earlier values by index (inputs first); decomposed under
    /// `mode` for torch 2.15, its op histogram and the output's sizes.
    fn chain(mode: Mode, inputs: &[(&[i64], bool)], ops: &[(&str, Vec<(&str, Result<usize, Arg>)>)]) -> (BTreeMap<String, usize>, Vec<Expr>) {
        let mut g = Graph::new("g");
        g.torch_version = Some("2.15.0".into());
        let mut vs = Vec::new();
        for (i, (s, param)) in inputs.iter().enumerate() {
            let kind = if *param { InputKind::Parameter { fqn: format!("p{i}") } } else { InputKind::UserInput };
            vs.push(g.add_input(&format!("in{i}"), ValueKind::Tensor(TensorMeta::contiguous(DType::F32, sizes(s))), kind).unwrap());
        }
        for (k, (target, args)) in ops.iter().enumerate() {
            let args = args.iter().map(|(n, a)| arg(n, a.clone().map(|i| Arg::Tensor(vs[i])).unwrap_or_else(|a| a))).collect();
            vs.push(node(&mut g, &format!("n{k}"), target, args));
        }
        let y = *vs.last().unwrap();
        g.outputs.push(Arg::Tensor(y));
        let out = decompose(&g, mode, &Marks::default()).unwrap().graph;
        let sizes = match &out.outputs[0] {
            Arg::Tensor(v) => out.value(*v).tensor().unwrap().sizes.clone(),
            _ => panic!("a tensor output"),
        };
        (out.op_histogram(), sizes)
    }

    /// `matmul` of 1-D operands as torch's Python `matmul` traces it: `dot` (`mul`, a full `sum`),
    /// `mv` (`mul`, `sum` over dim 1), a vector times a matrix (`unsqueeze`, `mm`, `squeeze`).
    #[test]
    fn matmul_of_vectors_is_dot_mv_or_a_one_row_mm() {
        let mm = |a: &[i64], b: &[i64]| chain(Mode::Core, &[(a, false), (b, false)], &[("aten.matmul.default", vec![("self", Ok(0)), ("other", Ok(1))])]);
        let (dot, s) = mm(&[8], &[8]);
        assert_eq!((count(&dot, "mul.Tensor"), count(&dot, "sum.dim_IntList"), count(&dot, "matmul.default"), s.len()), (1, 1, 0, 0), "{dot:?}");
        let (mv, s) = mm(&[6, 8], &[8]);
        assert_eq!((count(&mv, "mul.Tensor"), count(&mv, "sum.dim_IntList"), s), (1, 1, sizes(&[6])), "{mv:?}");
        let (vm, s) = mm(&[8], &[8, 6]);
        assert_eq!((count(&vm, "unsqueeze.default"), count(&vm, "mm.default"), s), (1, 1, sizes(&[6])), "{vm:?}");
        // Beside a batch, a vector stays one `matmul`, shaped as ATen shapes it.
        let (nd, s) = mm(&[-1, 4, 8], &[8]);
        assert_eq!((count(&nd, "matmul.default"), s), (1, sizes(&[-1, 4])), "{nd:?}");
    }

    /// Gradium's `linear` of a vector: without a bias a one-row `mm`; with one, flattened to a
    /// row and `addmm`, which Inductor's CPU table turns into `(x.T * W.T).sum(0)` for a weight
    /// of at most 16 × 16 (`mul` by `alpha` and `beta`, `add`).
    #[test]
    fn linear_of_a_vector_is_a_one_row_product() {
        let linear = |mode: Mode, bias: bool| {
            let mut args = vec![("input", Ok(0)), ("weight", Ok(1))];
            if bias {
                args.push(("bias", Ok(2)));
            }
            chain(mode, &[(&[8], false), (&[6, 8], true), (&[6], true)], &[("aten.linear.default", args)])
        };
        let (plain, s) = linear(Mode::Core, false);
        assert_eq!((count(&plain, "mm.default"), count(&plain, "squeeze.dims") + count(&plain, "squeeze.dim"), s), (1, 1, sizes(&[6])), "{plain:?}");
        let (core, _) = linear(Mode::Core, true);
        assert_eq!((count(&core, "addmm.default"), count(&core, "view.default")), (1, 2), "{core:?}");
        let (full, s) = linear(Mode::Full, true);
        assert_eq!((count(&full, "addmm.default"), count(&full, "mul.Tensor"), count(&full, "add.Tensor"), s), (0, 3, 1, sizes(&[6])), "{full:?}");
    }

    /// ConvBERT's `linear(key_conv(x).transpose(1, 2) * q)`: `multiply` becomes `mul`, laid out
    /// as its transposed first operand (TensorIterator), so the input is not contiguous and
    /// `linear` is `matmul` (a `bmm` of the weight expanded) + `add`, not a flattened `addmm`.
    #[test]
    fn linear_of_a_product_laid_out_as_a_transposed_operand_adds_its_bias() {
        let t = ("aten.transpose.int", vec![("self", Ok(0)), ("dim0", Err(Arg::Int(1))), ("dim1", Err(Arg::Int(2)))]);
        let m = ("aten.multiply.Tensor", vec![("self", Ok(4)), ("other", Ok(1))]);
        let l = ("aten.linear.default", vec![("input", Ok(5)), ("weight", Ok(2)), ("bias", Ok(3))]);
        let inputs: &[(&[i64], bool)] = &[(&[-1, 8, -2], false), (&[-1, -2, 8], false), (&[6, 8], true), (&[6], true)];
        let (ops, _) = chain(Mode::Core, inputs, &[t.clone(), m, l.clone()]);
        assert_eq!((count(&ops, "addmm.default"), count(&ops, "bmm.default"), count(&ops, "add.Tensor")), (0, 1, 1), "{ops:?}");
        // The other operand first: contiguous, one `addmm`.
        let m = ("aten.multiply.Tensor", vec![("self", Ok(1)), ("other", Ok(4))]);
        let (ops, _) = chain(Mode::Core, inputs, &[t, m, l]);
        assert_eq!((count(&ops, "addmm.default"), count(&ops, "bmm.default")), (1, 0), "{ops:?}");
    }
}
