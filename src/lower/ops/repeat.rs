//! `repeat_interleave(self, repeats: Tensor, dim)`: element `i` along `dim` (of the flattened
//! tensor when `dim` is None) repeated `repeats[i]` times. Without `output_size` the length is
//! the sum of `repeats`, known only from data: the size step sums it, and output position `j`
//! finds its source by walking the running sum (O(n) per element, like `compact`'s searches).

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty};
use super::super::{LowerError, Size};
use super::compact::{unravel, Flat};
use crate::ir::{Arg, Node};

type R = Result<ExprId, LowerError>;

/// The repeated dim of `self` (`None`: the flattened tensor) and the number of elements along it.
fn along(cx: &mut Ctx<'_>, node: &Node) -> Result<(Option<usize>, Flat, ExprId), LowerError> {
    let x = Flat::of(cx, cx.tensor(node, "self")?)?;
    let d = match node.arg("dim") {
        None | Some(Arg::None) => None,
        Some(Arg::Int(d)) => Some(wrap_dims(&[*d], x.sizes.len()).map_err(|m| cx.err(node, format!("argument `dim`: {m}")))?[0]),
        Some(other) => return Err(cx.err(node, format!("argument `dim`: expected an int, got {other:?}"))),
    };
    let n = match d {
        Some(d) => x.sizes[d],
        None => x.n,
    };
    Ok((d, x, n))
}

/// `repeats[k]` as i64; a one-element `repeats` applies to every `k`.
fn repeat_at(cx: &mut Ctx<'_>, reps: &Flat, k: ExprId) -> R {
    let one = cx.kb.i64(1);
    let single = cx.kb.cmp(CmpOp::Eq, reps.n, one)?;
    let zero = cx.kb.i64(0);
    let p = cx.kb.select(single, zero, k)?;
    let r = reps.at(cx, p)?;
    Ok(cx.kb.cast(r, Ty::I64))
}

/// The output length along the repeated dim: the sum of the repeats.
pub fn repeat_interleave_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let (d, _, n) = along(cx, node)?;
    let reps = Flat::of(cx, cx.tensor(node, "repeats")?)?;
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let r = repeat_at(cx, &reps, k)?;
    let value = cx.kb.reduce(RedOp::Sum, var, n, r)?;
    let out = *node.outputs.first().ok_or_else(|| cx.err(node, "has no outputs"))?;
    let expr = cx.sizes(out)?.get(d.unwrap_or(0)).cloned().ok_or_else(|| cx.err(node, "output rank"))?;
    Ok(vec![Size { expr, value, what: "repeated elements" }])
}

pub fn repeat_interleave(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (d, x, n) = along(cx, node)?;
    let reps = Flat::of(cx, cx.tensor(node, "repeats")?)?;
    let j = *idx.get(d.unwrap_or(0)).ok_or_else(|| cx.err(node, "output rank"))?;
    // Source `i` = how many elements' running sums of repeats end at or before `j`.
    let var = cx.kb.fresh_var()?;
    let k = cx.kb.var(var);
    let (sum, count) = (cx.kb.carried(var, 0, Ty::I64), cx.kb.carried(var, 1, Ty::I64));
    let r = repeat_at(cx, &reps, k)?;
    let next_sum = cx.kb.binary(BinOp::Add, sum, r)?;
    let done = cx.kb.cmp(CmpOp::Le, next_sum, j)?;
    let step = cx.kb.cast(done, Ty::I64);
    let next_count = cx.kb.binary(BinOp::Add, count, step)?;
    let zero = cx.kb.i64(0);
    let i = cx.kb.iterate(var, n, vec![zero, zero], vec![next_sum, next_count])?[1];
    match d {
        Some(d) => {
            let mut at = idx.to_vec();
            at[d] = i;
            cx.read(x.v, &at)
        }
        None => {
            let at = unravel(cx, &x.sizes, i)?;
            cx.read(x.v, &at)
        }
    }
}
