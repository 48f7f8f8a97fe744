//! Memory formats as ATen infers them from strides: which layout a tensor "suggests"
//! (`Tensor::suggest_memory_format`) and the strides of a fresh tensor in a layout. Kernels whose
//! output layout follows their input (CPU convolution) need both, and the layout decides later
//! whether a `reshape` is a view and a `contiguous()` a copy: a wrong guess shows up downstream
//! as a `clone` too many or too few.

use crate::ir::TensorMeta;
use crate::sym::Expr;

/// Sizes every symbol is tried at: export's dynamic dims are at least 2, and a judgement on
/// symbolic strides holds only when it holds at each of these (distinct per symbol).
const VALUES: [i64; 6] = [2, 3, 5, 7, 11, 64];

/// `sizes` and `strides` evaluated at the `k`-th trial binding of their symbols.
fn at(m: &TensorMeta, k: usize) -> Option<(Vec<i64>, Vec<i64>)> {
    let mut symbols = std::collections::BTreeSet::new();
    for e in m.sizes.iter().chain(&m.strides) {
        symbols.extend(e.free_symbols());
    }
    let mut b = crate::sym::Bindings::new();
    for (i, s) in symbols.iter().enumerate() {
        b.set(s, VALUES[(k + 2 * i) % VALUES.len()]);
    }
    let ev = |v: &[Expr]| v.iter().map(|e| e.eval_int(&b).ok()).collect::<Option<Vec<i64>>>();
    Some((ev(&m.sizes)?, ev(&m.strides)?))
}

/// ATen's `is_channels_last_strides_{2d,3d}_s4/s5` on concrete sizes: the dims, walked from the
/// fastest-moving (channels, then the spatial dims from the last, then the batch), have
/// non-decreasing strides, with the ambiguous cases ATen resolves to NCHW (an `N111` tensor,
/// a `1C1W` permutation) left out.
fn channels_last_strides_like(sizes: &[i64], strides: &[i64]) -> bool {
    let order: &[usize] = match sizes.len() {
        4 => &[1, 3, 2, 0],
        5 => &[1, 4, 3, 2, 0],
        _ => return false,
    };
    if strides[1] == 0 {
        return false;
    }
    let mut min = 0;
    for &d in order {
        if sizes[d] == 0 || strides[d] < min {
            return false;
        }
        if d == 0 && min == strides[1] {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min *= sizes[d];
        }
    }
    true
}

/// Whether `m` suggests a channels-last layout (`ChannelsLast` for 4-D, `ChannelsLast3d` for
/// 5-D), for every value its symbols can take; undecidable strides count as contiguous, as
/// torch's guard-free `suggest_memory_format` decides.
pub(crate) fn suggests_channels_last(m: &TensorMeta) -> bool {
    if !matches!(m.sizes.len(), 4 | 5) || m.strides.len() != m.sizes.len() {
        return false;
    }
    (0..VALUES.len()).all(|k| at(m, k).is_some_and(|(s, t)| channels_last_strides_like(&s, &t)))
}

/// Strides of a fresh channels-last tensor of `sizes` (4-D or 5-D): channels fastest, then the
/// spatial dims from the last, then the batch, each stride the product of the sizes moving
/// faster (a size of 1 counted as 1, as ATen's `get_channels_last_strides` does).
pub(crate) fn channels_last_strides(sizes: &[Expr]) -> Option<Vec<Expr>> {
    let order: &[usize] = match sizes.len() {
        4 => &[1, 3, 2, 0],
        5 => &[1, 4, 3, 2, 0],
        _ => return None,
    };
    let mut strides = vec![Expr::int(1); sizes.len()];
    let mut next = Expr::int(1);
    for &d in order {
        strides[d] = next.clone();
        next = match sizes[d].as_int() {
            Some(n) => Expr::mul(next, Expr::int(n.max(1))),
            None => Expr::mul(next, sizes[d].clone()),
        };
    }
    Some(strides)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    fn meta(sizes: Vec<Expr>, strides: Vec<Expr>) -> TensorMeta {
        TensorMeta { strides, ..TensorMeta::contiguous(DType::F32, sizes) }
    }

    fn ints(v: &[i64]) -> Vec<Expr> {
        v.iter().map(|&i| Expr::int(i)).collect()
    }

    #[test]
    fn nhwc_strides_suggest_channels_last_and_nchw_ones_do_not() {
        let s = ints(&[2, 8, 4, 4]);
        let cl = channels_last_strides(&s).unwrap();
        assert_eq!(cl, ints(&[128, 1, 32, 8]));
        assert!(suggests_channels_last(&meta(s.clone(), cl)));
        assert!(!suggests_channels_last(&meta(s.clone(), TensorMeta::contiguous_strides(&s))));
        // 3-D tensors have no channels-last format.
        assert!(!suggests_channels_last(&meta(ints(&[2, 8, 4]), ints(&[32, 1, 8]))));
    }

    #[test]
    fn ambiguous_layouts_count_as_contiguous() {
        assert!(!suggests_channels_last(&meta(ints(&[3, 1, 1, 1]), ints(&[1, 1, 1, 1]))));
        // One pixel, several channels: each layout keeps its own strides (`[8,1,1,1]` against
        // `[8,1,8,8]`), and ATen tells them apart.
        let s = ints(&[3, 8, 1, 1]);
        assert!(!suggests_channels_last(&meta(s.clone(), TensorMeta::contiguous_strides(&s))));
        assert!(suggests_channels_last(&meta(s.clone(), channels_last_strides(&s).unwrap())));
    }

    /// A dynamic batch: FocalNet's patch embeddings, a `transpose(1, 2).reshape(b, -1, h, w)`
    /// of its tokens, viewed as NCHW with NHWC strides.
    #[test]
    fn symbolic_batch_strides_are_judged_for_every_batch() {
        let b = Expr::symbol("s0");
        let s = vec![b, Expr::int(64), Expr::int(8), Expr::int(8)];
        let cl = channels_last_strides(&s).unwrap();
        assert_eq!(cl, ints(&[4096, 1, 512, 64]));
        assert!(suggests_channels_last(&meta(s.clone(), cl)));
        let t = TensorMeta::contiguous_strides(&s);
        assert!(!suggests_channels_last(&meta(s, t)));
    }
}
