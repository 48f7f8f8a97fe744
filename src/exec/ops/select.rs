//! PyTorch's CPU selection algorithms step by step, so that among equal values the interpreter
//! returns the index PyTorch returns. Neither selection is stable, and which of two equal
//! elements wins depends on every swap made on the way:
//!
//! - `topk` (ATen `topk_impl_loop`) puts `(value, index)` pairs through libstdc++'s
//!   `std::nth_element` at `k - 1` and then `std::sort` of the first `k - 1` (when `sorted`), or
//!   through `std::partial_sort` when `k * 64 <= n`. The helpers below follow libstdc++'s
//!   `stl_algo.h`/`stl_heap.h` (introselect with median-of-three pivots, unguarded partitions,
//!   insertion sorts, heap select), which PyTorch's Linux builds link.
//! - `kthvalue` (ATen `kthvalue_out_impl_cpu`) runs TH's Sedgewick quickselect
//!   (`quick_select_template`) with a median-of-three pivot.
//!
//! Both order NaN above every number (`gt_or_nan`).

/// A value and its position on the line.
type Pair = (f64, usize);

/// `x > y`, with NaN above every number (ATen's `gt_or_nan`).
fn gt_or_nan(x: f64, y: f64) -> bool {
    (x.is_nan() && !y.is_nan()) || x > y
}

/// The positions of the `k` largest (or smallest) values of `line`, in the order PyTorch's CPU
/// `topk` returns them.
pub(crate) fn topk_order(line: &[f64], k: usize, largest: bool, sorted: bool) -> Vec<usize> {
    let n = line.len();
    let k = k.min(n);
    if k == 0 {
        return vec![];
    }
    let mut q: Vec<Pair> = line.iter().copied().zip(0..).collect();
    let comp = |a: &Pair, b: &Pair| if largest { gt_or_nan(a.0, b.0) } else { gt_or_nan(b.0, a.0) };
    let mut s = Stl { q: &mut q, comp: &comp };
    if k * 64 <= n {
        s.heap_select(0, k, n);
        s.sort_heap(0, k);
    } else {
        s.nth_element(k - 1, n);
        if sorted {
            s.sort(0, k - 1);
        }
    }
    q[..k].iter().map(|p| p.1).collect()
}

/// The position of the `k`-th smallest value of `line` (`k` counts from 1), as PyTorch's CPU
/// `kthvalue` finds it.
pub(crate) fn kth_smallest(line: &[f64], k: usize) -> usize {
    if line.is_empty() {
        return 0;
    }
    let mut v = line.to_vec();
    let mut idx: Vec<usize> = (0..line.len()).collect();
    let target = k.saturating_sub(1);
    let mut swap = |v: &mut [f64], a: usize, b: usize| {
        v.swap(a, b);
        idx.swap(a, b);
    };
    let (mut l, mut r) = (0usize, line.len() - 1);
    loop {
        if r <= l {
            break;
        }
        if r == l + 1 {
            if gt_or_nan(v[l], v[r]) {
                swap(&mut v, l, r);
            }
            break;
        }
        // Median of three: the middle element moves next to the left end first.
        let p = (l + r) >> 1;
        swap(&mut v, p, l + 1);
        if gt_or_nan(v[l + 1], v[r]) {
            swap(&mut v, l + 1, r);
        }
        if gt_or_nan(v[l], v[r]) {
            swap(&mut v, l, r);
        }
        if gt_or_nan(v[l + 1], v[l]) {
            swap(&mut v, l + 1, l);
        }
        let (mut i, mut j) = (l + 1, r);
        let piv = v[l];
        loop {
            i += 1;
            while gt_or_nan(piv, v[i]) {
                i += 1;
            }
            j -= 1;
            while gt_or_nan(v[j], piv) {
                j -= 1;
            }
            if j < i {
                break;
            }
            swap(&mut v, i, j);
        }
        swap(&mut v, l, j);
        if j <= target {
            l = i;
        }
        if j >= target {
            // `j >= 1` here: the pivot never ends left of `l + 1`.
            r = j - 1;
        }
    }
    idx[target.min(line.len() - 1)]
}

/// libstdc++'s algorithms over a slice of pairs with a strict "comes before" comparison.
struct Stl<'a, C: Fn(&Pair, &Pair) -> bool> {
    q: &'a mut [Pair],
    comp: &'a C,
}

/// `⌊log2 n⌋` (`std::__lg`), for `n >= 1`.
fn lg(n: usize) -> usize {
    (usize::BITS - 1 - n.leading_zeros()) as usize
}

/// libstdc++'s `_S_threshold`: ranges this short are left to the final insertion sort.
const THRESHOLD: usize = 16;

impl<C: Fn(&Pair, &Pair) -> bool> Stl<'_, C> {
    fn before(&self, a: usize, b: usize) -> bool {
        (self.comp)(&self.q[a], &self.q[b])
    }

    /// `std::nth_element(begin, begin + nth, begin + last)`.
    fn nth_element(&mut self, nth: usize, last: usize) {
        if last == 0 || nth == last {
            return;
        }
        let (mut first, mut last) = (0, last);
        let mut depth = lg(last) * 2;
        while last - first > 3 {
            if depth == 0 {
                self.heap_select(first, nth + 1, last);
                self.q.swap(first, nth);
                return;
            }
            depth -= 1;
            let cut = self.partition_pivot(first, last);
            if cut <= nth {
                first = cut;
            } else {
                last = cut;
            }
        }
        self.insertion_sort(first, last);
    }

    /// `std::sort(begin + first, begin + last)`: introsort, then one insertion sort.
    fn sort(&mut self, first: usize, last: usize) {
        if first == last {
            return;
        }
        self.introsort_loop(first, last, lg(last - first) * 2);
        if last - first > THRESHOLD {
            self.insertion_sort(first, first + THRESHOLD);
            for i in first + THRESHOLD..last {
                self.linear_insert(i);
            }
        } else {
            self.insertion_sort(first, last);
        }
    }

    fn introsort_loop(&mut self, first: usize, mut last: usize, mut depth: usize) {
        while last - first > THRESHOLD {
            if depth == 0 {
                self.heap_select(first, last, last);
                self.sort_heap(first, last);
                return;
            }
            depth -= 1;
            let cut = self.partition_pivot(first, last);
            self.introsort_loop(cut, last, depth);
            last = cut;
        }
    }

    /// `__unguarded_partition_pivot`: the median of `first + 1`, the middle and `last - 1`
    /// moves to `first`, then the rest is partitioned around it.
    fn partition_pivot(&mut self, first: usize, last: usize) -> usize {
        let mid = first + (last - first) / 2;
        self.median_to_first(first, first + 1, mid, last - 1);
        let (mut lo, mut hi) = (first + 1, last);
        loop {
            while self.before(lo, first) {
                lo += 1;
            }
            hi -= 1;
            while self.before(first, hi) {
                hi -= 1;
            }
            if lo >= hi {
                return lo;
            }
            self.q.swap(lo, hi);
            lo += 1;
        }
    }

    fn median_to_first(&mut self, result: usize, a: usize, b: usize, c: usize) {
        let pick = if self.before(a, b) {
            if self.before(b, c) {
                b
            } else if self.before(a, c) {
                c
            } else {
                a
            }
        } else if self.before(a, c) {
            a
        } else if self.before(b, c) {
            c
        } else {
            b
        };
        self.q.swap(result, pick);
    }

    fn insertion_sort(&mut self, first: usize, last: usize) {
        for i in first + 1..last.max(first + 1) {
            if self.before(i, first) {
                let v = self.q[i];
                self.q.copy_within(first..i, first + 1);
                self.q[first] = v;
            } else {
                self.linear_insert(i);
            }
        }
    }

    /// `__unguarded_linear_insert`: moves `q[last]` left past the elements it comes before.
    fn linear_insert(&mut self, mut last: usize) {
        let v = self.q[last];
        while (self.comp)(&v, &self.q[last - 1]) {
            self.q[last] = self.q[last - 1];
            last -= 1;
        }
        self.q[last] = v;
    }

    /// `__heap_select`: the heap `[first, middle)` ends up holding the `middle - first` elements
    /// of `[first, last)` that come first, the one that comes last at its top.
    fn heap_select(&mut self, first: usize, middle: usize, last: usize) {
        self.make_heap(first, middle);
        for i in middle..last {
            if self.before(i, first) {
                self.pop_heap(first, middle, i);
            }
        }
    }

    fn sort_heap(&mut self, first: usize, mut last: usize) {
        while last - first > 1 {
            last -= 1;
            self.pop_heap(first, last, last);
        }
    }

    fn make_heap(&mut self, first: usize, last: usize) {
        let len = last - first;
        if len < 2 {
            return;
        }
        let mut parent = (len - 2) / 2;
        loop {
            let v = self.q[first + parent];
            self.adjust_heap(first, parent, len, v);
            if parent == 0 {
                return;
            }
            parent -= 1;
        }
    }

    /// `__pop_heap`: the top moves to `result`, whose value sinks into the heap `[first, last)`.
    fn pop_heap(&mut self, first: usize, last: usize, result: usize) {
        let v = self.q[result];
        self.q[result] = self.q[first];
        self.adjust_heap(first, 0, last - first, v);
    }

    /// `__adjust_heap`: the hole at `hole` sinks to a leaf along the larger children, then `v`
    /// rises from there (`__push_heap`).
    fn adjust_heap(&mut self, first: usize, mut hole: usize, len: usize, v: Pair) {
        let top = hole;
        let mut child = hole;
        while child < len.saturating_sub(1) / 2 {
            child = 2 * (child + 1);
            if self.before(first + child, first + child - 1) {
                child -= 1;
            }
            self.q[first + hole] = self.q[first + child];
            hole = child;
        }
        if len.is_multiple_of(2) && len >= 2 && child == (len - 2) / 2 {
            child = 2 * (child + 1);
            self.q[first + hole] = self.q[first + child - 1];
            hole = child - 1;
        }
        while hole > top {
            let parent = (hole - 1) / 2;
            if !(self.comp)(&self.q[first + parent], &v) {
                break;
            }
            self.q[first + hole] = self.q[first + parent];
            hole = parent;
        }
        self.q[first + hole] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Rows and answers from PyTorch 2.15's recorded OpInfo outputs (tests/data/opinfo).

    #[test]
    fn topk_breaks_ties_as_nth_element_leaves_them() {
        // topk int64 case 5, k = 3 over the last dim: the first tied 0 wins in one row, the
        // last tied -2 in another.
        assert_eq!(topk_order(&[-8.0, 6.0, 9.0, 0.0, 0.0], 3, true, true), vec![2, 1, 3]);
        assert_eq!(topk_order(&[9.0, 2.0, -5.0, -2.0, -2.0], 3, true, true), vec![0, 1, 4]);
        // topk uint8 case 8, first row: the later 6 comes second, the first 5 third.
        assert_eq!(topk_order(&[5.0, 1.0, 6.0, 5.0, 6.0], 3, true, true), vec![2, 4, 0]);
    }

    #[test]
    fn kthvalue_breaks_ties_as_quickselect_leaves_them() {
        // kthvalue int64 case 5 and uint8 case 8, k = 2 over the last dim.
        assert_eq!(kth_smallest(&[-8.0, 6.0, 9.0, 0.0, 0.0], 2), 3);
        assert_eq!(kth_smallest(&[5.0, 5.0, 7.0, 6.0, 5.0], 2), 0);
        assert_eq!(kth_smallest(&[5.0, 1.0, 6.0, 5.0, 6.0], 2), 3);
    }

    #[test]
    fn selections_agree_with_a_sort_on_distinct_values() {
        let line: Vec<f64> = (0..200).map(|i| ((i * 7919) % 211) as f64 - 100.0).collect();
        let mut order: Vec<usize> = (0..line.len()).collect();
        order.sort_by(|&a, &b| line[b].total_cmp(&line[a]));
        // Both code paths: nth_element + sort (k = 150) and partial_sort (k = 3 <= 200 / 64).
        assert_eq!(topk_order(&line, 150, true, true), order[..150].to_vec());
        assert_eq!(topk_order(&line, 3, true, true), order[..3].to_vec());
        let smallest: Vec<usize> = order.iter().rev().copied().collect();
        assert_eq!(topk_order(&line, 40, false, true), smallest[..40].to_vec());
        for k in [1, 2, 100, 200] {
            assert_eq!(kth_smallest(&line, k), smallest[k - 1]);
        }
    }

    #[test]
    fn nan_counts_as_the_largest_and_short_lines_work() {
        assert_eq!(topk_order(&[1.0, f64::NAN, 3.0], 1, true, true), vec![1]);
        assert_eq!(topk_order(&[1.0, f64::NAN, 3.0], 1, false, true), vec![0]);
        assert_eq!(kth_smallest(&[f64::NAN, 2.0], 2), 0);
        assert_eq!(kth_smallest(&[4.0], 1), 0);
        assert!(topk_order(&[], 0, true, true).is_empty());
        assert_eq!(topk_order(&[7.0], 1, true, false), vec![0]);
    }
}
