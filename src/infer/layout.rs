//! The layout (strides) ATen gives the output of an elementwise op: TensorIterator's output
//! allocation, which `torch._prims_common.compute_elementwise_output_strides` mirrors on fake
//! tensors. The output follows the operands' memory order (the first operand that has a
//! preference decides), so `q * c` of a transposed or expanded `q` is not row-major; whether a
//! later `reshape` or `.contiguous()` copies (a `clone` in the graph) depends on it.
//!
//! [`super::infer`] still records elementwise outputs as row-major; decomposition rules that
//! must decide a copy the way ATen does ask here.

use std::cmp::Ordering;

use crate::ir::TensorMeta;
use crate::sym::{Bindings, Expr};

/// Symbol values to compare size expressions at (export's dynamic dims are at least 2), one
/// binding per row, distinct per symbol.
const HINTS: [i64; 7] = [2, 3, 5, 7, 11, 64, 1000];

/// How `a` compares to `b` for every value their symbols can take; where the order depends on
/// the values, the one at the first binding (torch orders by its size hints and guards on it).
fn order(a: &Expr, b: &Expr) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
        return x.cmp(&y);
    }
    let mut symbols = a.free_symbols();
    symbols.extend(b.free_symbols());
    let at = |k: usize| {
        let mut env = Bindings::new();
        for (i, s) in symbols.iter().enumerate() {
            env.set(s, HINTS[(k + 2 * i) % HINTS.len()]);
        }
        match (a.eval_int(&env), b.eval_int(&env)) {
            (Ok(x), Ok(y)) => Some(x.cmp(&y)),
            _ => None,
        }
    };
    // Equal only where equal at every binding; otherwise the order at the first binding that
    // separates them.
    (0..HINTS.len()).filter_map(at).find(|o| *o != Ordering::Equal).unwrap_or(Ordering::Equal)
}

fn is_zero(e: &Expr) -> bool {
    e.as_int() == Some(0)
}

/// Row-major in the sense of `Tensor.is_contiguous()`: size-1 dims' strides do not count.
pub(crate) fn is_contiguous(sizes: &[Expr], strides: &[Expr]) -> bool {
    let want = TensorMeta::contiguous_strides(sizes);
    sizes.iter().zip(strides.iter().zip(&want)).all(|(s, (a, b))| s.as_int() == Some(1) || order(a, b) == Ordering::Equal)
}

/// The strides of `x` expanded to `sizes` (`expand`, and how TensorIterator sees a broadcast
/// operand): leading new dims and size-1 dims that grow take stride 0.
pub(crate) fn expanded_strides(x: &TensorMeta, sizes: &[Expr]) -> Vec<Expr> {
    let lead = sizes.len().saturating_sub(x.sizes.len());
    (0..sizes.len())
        .map(|d| {
            if d < lead {
                return Expr::int(0);
            }
            let (own, stride) = (&x.sizes[d - lead], &x.strides[d - lead]);
            if own.as_int() == Some(1) && sizes[d].as_int() != Some(1) {
                Expr::int(0)
            } else {
                stride.clone()
            }
        })
        .collect()
}

/// The strides of an elementwise op's output of shape `sizes` computed from `operands` (the
/// tensor operands, in argument order, before broadcasting; 0-dim ones included):
/// `compute_elementwise_output_logical_to_physical_perm`, then row-major strides in that order.
pub(crate) fn elementwise_strides(operands: &[&TensorMeta], sizes: &[Expr]) -> Vec<Expr> {
    let rank = sizes.len();
    let strides: Vec<Vec<Expr>> = operands.iter().filter(|m| m.sizes.len() <= rank).map(|m| expanded_strides(m, sizes)).collect();
    if rank <= 1 || strides.iter().all(|s| is_contiguous(sizes, s)) {
        return TensorMeta::contiguous_strides(sizes);
    }
    // 1: `a` goes inside `b` (swap), -1: keep, 0: no operand has a preference.
    let should_swap = |a: usize, b: usize| -> i32 {
        for s in &strides {
            let (sa, sb) = (&s[a], &s[b]);
            if is_zero(sa) || is_zero(sb) {
                continue;
            }
            match order(sa, sb) {
                Ordering::Less => return -1,
                Ordering::Greater => return 1,
                Ordering::Equal => {
                    if order(&sizes[a], &sizes[b]) == Ordering::Greater {
                        return 1;
                    }
                }
            }
        }
        0
    };
    // torch's insertion sort, innermost dim first, which tolerates ambiguous pairs.
    let mut perm: Vec<usize> = (0..rank).rev().collect();
    for i in 1..rank {
        let mut dim1 = i;
        for dim0 in (0..i).rev() {
            match should_swap(perm[dim0], perm[dim1]) {
                c if c > 0 => {
                    perm.swap(dim0, dim1);
                    dim1 = dim0;
                }
                c if c < 0 => break,
                _ => {}
            }
        }
    }
    perm.reverse();
    let physical: Vec<Expr> = perm.iter().map(|&d| sizes[d].clone()).collect();
    let dense = TensorMeta::contiguous_strides(&physical);
    let mut out = vec![Expr::int(1); rank];
    for (p, &d) in perm.iter().enumerate() {
        out[d] = dense[p].clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    fn meta(sizes: &[Expr], strides: &[Expr]) -> TensorMeta {
        let mut m = TensorMeta::contiguous(DType::F32, sizes.to_vec());
        m.strides = strides.to_vec();
        m
    }

    fn ints(v: &[i64]) -> Vec<Expr> {
        v.iter().map(|&i| Expr::int(i)).collect()
    }

    #[test]
    fn a_transposed_operand_keeps_its_order() {
        // rms_norm's `x * rstd` of a transposed [B, 16, 64] (torch: strides (1024, 1, 16)).
        let x = meta(&ints(&[2, 16, 64]), &ints(&[1024, 1, 16]));
        let rstd = meta(&ints(&[2, 16, 1]), &ints(&[16, 1, 1]));
        assert_eq!(elementwise_strides(&[&x, &rstd], &ints(&[2, 16, 64])), ints(&[1024, 1, 16]));
        assert!(!is_contiguous(&x.sizes, &x.strides));
    }

    #[test]
    fn broadcast_dims_do_not_vote_and_size_one_dims_count() {
        // AIMv2's pooling query `[B, 4, 1, 16]` expanded from a batch of one, strides
        // (0, 16, 64, 1): torch gives `q * c` strides (64, 16, 64, 1), which merge B and heads.
        let b = Expr::symbol("s0");
        let q = meta(&[b.clone(), Expr::int(4), Expr::int(1), Expr::int(16)], &ints(&[0, 16, 64, 1]));
        let sizes = q.sizes.clone();
        assert_eq!(elementwise_strides(&[&q], &sizes), ints(&[64, 16, 64, 1]));
    }

    #[test]
    fn where_of_an_expanded_input_is_not_row_major() {
        // Doge's `masked_fill(expand([B, 2, 1, L] -> [B, 2, L, L]), ne(mask))`, strides as torch
        // recorded them; the output is (2L², 1, 2, 2L) before masked_fill's `.contiguous()`.
        let (b, l) = (Expr::symbol("s72"), Expr::symbol("s53"));
        let two_l = Expr::mul(Expr::int(2), l.clone());
        let sizes = vec![b.clone(), Expr::int(2), l.clone(), l.clone()];
        let x = meta(&sizes, &[two_l.clone(), Expr::int(1), Expr::int(0), Expr::int(2)]);
        let ll = Expr::mul(l.clone(), l.clone());
        let mask = meta(&[b, Expr::int(1), l.clone(), l.clone()], &[ll.clone(), ll, l.clone(), Expr::int(1)]);
        let value = meta(&[], &[]);
        let out = elementwise_strides(&[&mask, &value, &x], &sizes);
        assert!(!is_contiguous(&sizes, &out));
        assert_eq!(out[1], Expr::int(1));
        assert_eq!(out[2], Expr::int(2));
    }

    #[test]
    fn contiguous_operands_give_row_major() {
        let x = meta(&ints(&[2, 3, 4]), &ints(&[12, 4, 1]));
        let bias = meta(&ints(&[4]), &ints(&[1]));
        assert_eq!(elementwise_strides(&[&x, &bias], &ints(&[2, 3, 4])), ints(&[12, 4, 1]));
    }

    /// DaViT's attention query: a head of a fused `qkv` (`[B, H, L, E]` with strides of `[B, L,
    /// 3, H, E]`), not dense; `empty_like` (CPU flash attention's output) lays it out
    /// `[B, L, H, E]` densely, and a permuted dense tensor keeps its strides.
    #[test]
    fn empty_like_of_a_slice_is_dense_in_the_slices_order() {
        let q = meta(&ints(&[2, 3, 49, 32]), &ints(&[14112, 32, 288, 1]));
        assert_eq!(elementwise_strides(&[&q], &q.sizes), ints(&[4704, 32, 96, 1]));
        let d = meta(&ints(&[2, 3, 4]), &ints(&[12, 1, 3]));
        assert_eq!(elementwise_strides(&[&d], &d.sizes), ints(&[12, 1, 3]));
    }

    /// Afmoe's `view(attn.transpose(1, 2)) * sigmoid(gate)`: the first operand's `[L, N, E]`
    /// storage order wins over the contiguous gate, as torch's re-trace records (strides
    /// `(64, 64*s72, 1)` for sizes `(s72, s53, 64)`).
    #[test]
    fn the_first_operand_that_orders_two_dims_decides() {
        let (n, l) = (Expr::symbol("s72"), Expr::symbol("s53"));
        let sizes = vec![n.clone(), l.clone(), Expr::int(64)];
        let attn = meta(&sizes, &[Expr::int(64), Expr::mul(Expr::int(64), n.clone()), Expr::int(1)]);
        let gate = meta(&sizes, &TensorMeta::contiguous_strides(&sizes));
        let s = elementwise_strides(&[&attn, &gate], &sizes);
        assert_eq!(s, attn.strides);
        // The other way round, the contiguous operand decides.
        assert_eq!(elementwise_strides(&[&gate, &attn], &sizes), gate.strides);
    }

    #[test]
    fn broadcast_operands_and_contiguous_ones_give_row_major() {
        let sizes = ints(&[2, 3, 4]);
        let a = meta(&sizes, &ints(&[12, 4, 1]));
        let bias = meta(&ints(&[4]), &ints(&[1]));
        assert_eq!(elementwise_strides(&[&a, &bias], &sizes), ints(&[12, 4, 1]));
        // A transposed operand with a broadcast row vector: the transposed order.
        let t = meta(&sizes, &ints(&[12, 1, 3]));
        assert_eq!(elementwise_strides(&[&bias, &t], &sizes), ints(&[12, 1, 3]));
    }
}
