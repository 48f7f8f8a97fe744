//! The picks of a sorted `topk` of a short line whose values are all distinct, by rank: the
//! element with `t` others before it is pick `t`. When no two values compare equal and none is
//! NaN the order is fully decided by the values, so every algorithm — PyTorch's introselect then
//! sort included — returns these positions; only ties and NaN need the replay of PyTorch's
//! exact swaps (`select_kernel`).
//!
//! Why: the replay is a state loop of `2n² + 8n + 16` steps whatever the data, each step every
//! branch of the program computed and selected: a mixture-of-experts router's `topk(k=2)` over 4
//! experts took 0.1 ms of device time for 36 tokens, the costliest kernel of the forward
//! (docs/PERFORMANCE.md, "Issue 28: mixture of experts"). With the rank picks the replay's loop
//! runs zero steps on lines of distinct values (its extent is data), the n² compares of the
//! ranks being all that is left; router logits are distinct floats but for freak ties.

use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError};
use super::machine::gt_or_nan;

/// Rank picks of one line: whether they hold (the values are distinct and not NaN), and the
/// first `k` picks `(value, position)` in order (meaningless where they do not hold).
pub(super) struct RankPicks {
    pub distinct: ExprId,
    pub picks: Vec<(ExprId, ExprId)>,
}

/// The first `k` of `vals` (positions `0..n`) in descending order when `largest`, else
/// ascending, by rank; see the module.
pub(super) fn rank_picks(kb: &mut KernelBuilder, vals: &[ExprId], k: usize, largest: bool) -> Result<RankPicks, KernelError> {
    let n = vals.len();
    let mut distinct = kb.bool(true);
    for (i, &x) in vals.iter().enumerate() {
        // NaN compares unequal to itself: a NaN line goes to the replay.
        let number = kb.cmp(CmpOp::Eq, x, x)?;
        distinct = kb.and(distinct, number)?;
        for &y in &vals[i + 1..] {
            let differ = kb.cmp(CmpOp::Ne, x, y)?;
            distinct = kb.and(distinct, differ)?;
        }
    }
    let (zero, one) = (kb.i64(0), kb.i64(1));
    let mut ranks = Vec::with_capacity(n);
    for (i, &x) in vals.iter().enumerate() {
        let mut rank = zero;
        for (j, &y) in vals.iter().enumerate() {
            if i == j {
                continue;
            }
            let before = if largest { gt_or_nan(kb, y, x)? } else { gt_or_nan(kb, x, y)? };
            let add = kb.select(before, one, zero)?;
            rank = kb.binary(BinOp::Add, rank, add)?;
        }
        ranks.push(rank);
    }
    let mut picks = Vec::with_capacity(k);
    for t in 0..k.min(n) {
        let tt = kb.i64(t as i64);
        let (mut v, mut p) = (vals[n - 1], kb.i64(n as i64 - 1));
        for i in (0..n - 1).rev() {
            let here = kb.cmp(CmpOp::Eq, ranks[i], tt)?;
            let at = kb.i64(i as i64);
            v = kb.select(here, vals[i], v)?;
            p = kb.select(here, at, p)?;
        }
        picks.push((v, p));
    }
    Ok(RankPicks { distinct, picks })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::KExpr;

    /// Whether the picks hold, and their positions, for a line of integer constants (which the
    /// builder folds: every compare, select and sum of constants is computed while building).
    fn positions(line: &[i64], k: usize, largest: bool) -> (bool, Vec<i64>) {
        let mut kb = KernelBuilder::new(1);
        let vals: Vec<ExprId> = line.iter().map(|v| kb.i64(*v)).collect();
        let r = rank_picks(&mut kb, &vals, k, largest).expect("builds");
        let distinct = match kb.get(r.distinct) {
            KExpr::Bool(b) => *b,
            e => panic!("distinct did not fold: {e:?}"),
        };
        (distinct, r.picks.iter().map(|(_, p)| kb.const_i64(*p).expect("a folded position")).collect())
    }

    #[test]
    fn distinct_values_pick_by_rank_and_ties_defer_to_the_replay() {
        assert_eq!(positions(&[5, -1, 30, 20], 2, true), (true, vec![2, 3]));
        assert_eq!(positions(&[5, -1, 30, 20], 3, false), (true, vec![1, 0, 3]));
        assert_eq!(positions(&[7], 1, true), (true, vec![0]));
        assert!(!positions(&[1, 2, 1], 1, true).0, "a tie");
    }
}
