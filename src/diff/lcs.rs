//! In-order alignment of two token sequences: a longest common subsequence by Myers' O((N+M)·D)
//! algorithm, so near-equal sequences (the usual case) cost about their length. Where the
//! difference is so large that Myers' trace would grow past a budget, the k-th occurrence of a
//! token in `a` is paired with the k-th in `b` instead: still linear, still deterministic.

use std::collections::HashMap;
use std::hash::Hash;

/// Cells of Myers' trace (D × (N+M)) allowed before falling back to occurrence pairing.
const TRACE_BUDGET: usize = 4_000_000;

/// Index pairs `(i, j)` with `a[i] == b[j]`, increasing in both.
pub fn align<T: Eq + Hash>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    // A common prefix and suffix cost nothing to pair and shrink what Myers walks.
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..].iter().rev().zip(b[pre..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (ma, mb) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<(usize, usize)> = (0..pre).map(|i| (i, i)).collect();
    let middle = myers(ma, mb).unwrap_or_else(|| by_occurrence(ma, mb));
    out.extend(middle.into_iter().map(|(i, j)| (i + pre, j + pre)));
    out.extend((0..suf).map(|k| (a.len() - suf + k, b.len() - suf + k)));
    out
}

fn myers<T: Eq>(a: &[T], b: &[T]) -> Option<Vec<(usize, usize)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    if max == 0 {
        return Some(Vec::new());
    }
    let width = 2 * max + 1;
    let off = max as isize;
    let mut v = vec![0isize; width];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut done = false;
    for d in 0..=max as isize {
        if trace.len().saturating_mul(width) > TRACE_BUDGET {
            return None;
        }
        trace.push(v.clone());
        let mut k = -d;
        while k <= d {
            let down = k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]);
            let mut x = if down { v[(off + k + 1) as usize] } else { v[(off + k - 1) as usize] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(off + k) as usize] = x;
            if x >= n && y >= m {
                done = true;
                break;
            }
            k += 2;
        }
        if done {
            break;
        }
    }
    // Walk the trace back from (n, m), collecting the diagonal (equal) steps.
    let mut pairs = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..trace.len() as isize).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let down = k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]);
        let prev_k = if down { k + 1 } else { k - 1 };
        let prev_x = if d == 0 { 0 } else { v[(off + prev_k) as usize] };
        let prev_y = prev_x - prev_k;
        let (sx, sy) = if d == 0 { (0, 0) } else if down { (prev_x, prev_y + 1) } else { (prev_x + 1, prev_y) };
        while x > sx && y > sy {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        x = prev_x;
        y = prev_y;
        if d == 0 {
            break;
        }
    }
    pairs.reverse();
    Some(pairs)
}

/// The k-th occurrence of each token in `a` with its k-th occurrence in `b`, kept only while
/// both indices increase.
fn by_occurrence<T: Eq + Hash>(a: &[T], b: &[T]) -> Vec<(usize, usize)> {
    let mut positions: HashMap<&T, std::collections::VecDeque<usize>> = HashMap::new();
    for (j, t) in b.iter().enumerate() {
        positions.entry(t).or_default().push_back(j);
    }
    let mut out = Vec::new();
    let mut last: Option<usize> = None;
    for (i, t) in a.iter().enumerate() {
        let Some(q) = positions.get_mut(t) else { continue };
        while let Some(&j) = q.front() {
            q.pop_front();
            if last.is_none_or(|l| j > l) {
                out.push((i, j));
                last = Some(j);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcs_len(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut t = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                t[i][j] = if a[i] == b[j] { t[i + 1][j + 1] + 1 } else { t[i + 1][j].max(t[i][j + 1]) };
            }
        }
        t[0][0]
    }

    fn check(a: &str, b: &str) {
        let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let pairs = align(&ca, &cb);
        for w in pairs.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1, "{a} {b}: not increasing: {pairs:?}");
        }
        for &(i, j) in &pairs {
            assert_eq!(ca[i], cb[j], "{a} {b}: {pairs:?}");
        }
        assert_eq!(pairs.len(), lcs_len(a, b), "{a} {b}: not a longest common subsequence: {pairs:?}");
    }

    #[test]
    fn finds_a_longest_common_subsequence() {
        for (a, b) in [
            ("", ""),
            ("abc", ""),
            ("", "abc"),
            ("abcabba", "cbabac"),
            ("abcdef", "abcdef"),
            ("xabcdefy", "zabcdefw"),
            ("aaaa", "aa"),
            ("abab", "baba"),
            ("permute addmm neg exp add div", "t addmm silu"),
        ] {
            check(a, b);
        }
    }

    #[test]
    fn random_sequences_against_the_quadratic_table() {
        let mut s = 0x2545f4914f6cdd1du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..300 {
            let la = (next() % 12) as usize;
            let lb = (next() % 12) as usize;
            let a: String = (0..la).map(|_| (b'a' + (next() % 3) as u8) as char).collect();
            let b: String = (0..lb).map(|_| (b'a' + (next() % 3) as u8) as char).collect();
            check(&a, &b);
        }
    }

    #[test]
    fn occurrence_pairing_stays_increasing() {
        let a: Vec<u8> = b"abcabc".to_vec();
        let b: Vec<u8> = b"cab".to_vec();
        let pairs = by_occurrence(&a, &b);
        assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1), "{pairs:?}");
        assert!(pairs.iter().all(|&(i, j)| a[i] == b[j]));
    }
}
