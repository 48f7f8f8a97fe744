//! libstdc++'s `std::sort` step for step (introsort: median-of-three quicksort down to runs of
//! 16, heapsort past twice log2(n) levels, then one insertion sort), on `(value, index)` pairs
//! compared by value only. The sort is not stable, so where ATen takes an index from it
//! (`mode` on CPU returns the index at the end of the longest run after `std::sort`), only the
//! same sequence of comparisons and swaps gives PyTorch's index among equal values. PyTorch's
//! Linux wheels are built with GCC and libstdc++.

type Pair = (f64, usize);

/// Below this many elements a partition is left to the final insertion sort (`_S_threshold`).
const THRESHOLD: usize = 16;

fn less(a: &Pair, b: &Pair) -> bool {
    a.0 < b.0
}

/// `std::sort(v.begin(), v.end(), [](a, b) { return a.first < b.first; })`.
pub(crate) fn std_sort(v: &mut [Pair]) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, depth);
    final_insertion_sort(v, n);
}

fn introsort_loop(v: &mut [Pair], first: usize, mut last: usize, mut depth: usize) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last]);
            return;
        }
        depth -= 1;
        let cut = unguarded_partition_pivot(v, first, last);
        introsort_loop(v, cut, last, depth);
        last = cut;
    }
}

fn unguarded_partition_pivot(v: &mut [Pair], first: usize, last: usize) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1);
    unguarded_partition(v, first + 1, last, first)
}

fn move_median_to_first(v: &mut [Pair], result: usize, a: usize, b: usize, c: usize) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

/// Hoare partition around `v[pivot]` (which lies before `first`): the median of three on
/// either side acts as a sentinel, so the scans need no bounds checks in C++; here they stop
/// at the slice's ends as well, which a well-formed input never reaches.
fn unguarded_partition(v: &mut [Pair], mut first: usize, mut last: usize, pivot: usize) -> usize {
    loop {
        while first < v.len() && less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while last > pivot && less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort(v: &mut [Pair], n: usize) {
    if n > THRESHOLD {
        insertion_sort(v, 0, THRESHOLD);
        for i in THRESHOLD..n {
            unguarded_linear_insert(v, i);
        }
    } else {
        insertion_sort(v, 0, n);
    }
}

fn insertion_sort(v: &mut [Pair], first: usize, last: usize) {
    for i in first + 1..last {
        if less(&v[i], &v[first]) {
            let val = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = val;
        } else {
            unguarded_linear_insert(v, i);
        }
    }
}

fn unguarded_linear_insert(v: &mut [Pair], mut last: usize) {
    let val = v[last];
    while last > 0 && less(&val, &v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = val;
}

/// `std::partial_sort(first, last, last)`: make_heap, then sort_heap.
fn heap_sort(v: &mut [Pair]) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let value = v[parent];
        adjust_heap(v, parent, len, value);
        if parent == 0 {
            break;
        }
        parent -= 1;
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, value);
    }
}

fn adjust_heap(v: &mut [Pair], mut hole: usize, len: usize, value: Pair) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // __push_heap
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[parent], &value) {
            break;
        }
        v[hole] = v[parent];
        hole = parent;
    }
    v[hole] = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(values: &[f64]) -> Vec<Pair> {
        let mut v: Vec<Pair> = values.iter().copied().zip(0..).collect();
        std_sort(&mut v);
        v
    }

    #[test]
    fn sorts_by_value_at_every_size_and_in_the_heapsort_fallback() {
        let mut seed = 7u64;
        for n in [0, 1, 2, 15, 16, 17, 100, 3000] {
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    ((seed >> 33) % 50) as f64
                })
                .collect();
            let v = sorted(&values);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0), "n = {n}");
            let mut idx: Vec<usize> = v.iter().map(|p| p.1).collect();
            idx.sort_unstable();
            assert_eq!(idx, (0..n).collect::<Vec<_>>(), "a permutation, n = {n}");
        }
        let mut v: Vec<Pair> = (0..40).rev().map(|i| (i as f64, i)).collect();
        heap_sort(&mut v);
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn short_runs_keep_equal_values_in_input_order() {
        // 16 elements or fewer: insertion sort only, stable.
        let v = sorted(&[2., 1., 2., 1., 2.]);
        assert_eq!(v.iter().map(|p| p.1).collect::<Vec<_>>(), vec![1, 3, 0, 2, 4]);
    }
}
