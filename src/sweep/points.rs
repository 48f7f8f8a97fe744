//! Which values of the swept dimension to measure, and where the model's guards change truth value
//! over its range (where Inductor would recompile).

use serde::Serialize;

use crate::ir::Model;
use crate::sym::Bindings;

/// How the measured values are chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// About this many values spread log-uniformly over the range, plus the ends and both sides
    /// of every guard flip.
    Count(usize),
    /// Exactly these values (checked against the range), sorted and deduplicated.
    Values(Vec<i64>),
}

/// A guard that changes truth value at `value`: it is `from` at `value - 1` and `to` at `value`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Flip {
    pub value: i64,
    pub guard: String,
    pub from: bool,
    pub to: bool,
}

/// How the flips were found, for the report: a user reading "no flips" should know how hard we
/// looked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum FlipSearch {
    /// The model has no guards: nothing can flip.
    NoGuards,
    /// Every value of the range evaluated: exact.
    Exact { values: u64 },
    /// The guards evaluated at `samples` log-spaced values and bisected between neighbours that
    /// disagree: exact when each guard flips at most once between neighbouring samples.
    Bisection { samples: usize },
}

/// Ranges up to this many values are scanned value by value (a guard is a few hundred
/// nanoseconds to evaluate, so this is milliseconds); wider ones are bisected.
pub const EXACT_SCAN_MAX: i64 = 1 << 16;
const BISECTION_SAMPLES: usize = 513;

/// The values to measure and the flips between `lo` and `hi`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Points {
    pub values: Vec<i64>,
    pub flips: Vec<Flip>,
    pub search: FlipSearch,
}

/// `n` values from `lo` to `hi` (both included), log-uniform: equal ratios between neighbours
/// (measured from `lo - 1` when `lo < 1`, where a ratio means nothing). Rounding may merge
/// neighbours at the low end, so fewer than `n` may come back.
pub fn log_spaced(lo: i64, hi: i64, n: usize) -> Vec<i64> {
    if hi <= lo || n <= 1 {
        return if n == 0 { Vec::new() } else { vec![lo] };
    }
    let shift = if lo >= 1 { 0.0 } else { (1 - lo) as f64 };
    let (a, b) = ((lo as f64 + shift).ln(), (hi as f64 + shift).ln());
    let mut out: Vec<i64> = (0..n)
        .map(|i| {
            let t = i as f64 / (n - 1) as f64;
            ((a + t * (b - a)).exp() - shift).round() as i64
        })
        .map(|v| v.clamp(lo, hi))
        .collect();
    out[0] = lo;
    out[n - 1] = hi;
    out.dedup();
    out
}

/// Each guard of `model` under `b` (`None` where it cannot be evaluated, e.g. it names a symbol
/// the model does not declare).
pub fn guard_values(model: &Model, b: &Bindings) -> Vec<Option<bool>> {
    model.guards.iter().map(|g| g.expr.eval_bool(b).ok()).collect()
}

/// Every value in `lo..=hi` where a guard of `model` changes truth value as `dim` varies with the
/// other symbols at `fixed`, in order.
pub fn find_flips(model: &Model, dim: &str, lo: i64, hi: i64, fixed: &Bindings) -> (Vec<Flip>, FlipSearch) {
    let mut b = fixed.clone();
    let mut at = |v: i64| {
        b.set(dim, v);
        guard_values(model, &b)
    };
    let mut flips = Vec::new();
    let mut push = |v: i64, before: &[Option<bool>], after: &[Option<bool>]| {
        for (i, (x, y)) in before.iter().zip(after).enumerate() {
            if let (Some(x), Some(y)) = (x, y) {
                if x != y {
                    flips.push(Flip { value: v, guard: model.guards[i].source.clone(), from: *x, to: *y });
                }
            }
        }
    };
    if model.guards.is_empty() {
        return (flips, FlipSearch::NoGuards);
    }
    if hi - lo <= EXACT_SCAN_MAX {
        let mut prev = at(lo);
        for v in lo + 1..=hi {
            let now = at(v);
            push(v, &prev, &now);
            prev = now;
        }
        return (flips, FlipSearch::Exact { values: (hi - lo + 1) as u64 });
    }
    let samples = log_spaced(lo, hi, BISECTION_SAMPLES);
    for w in samples.windows(2) {
        let (a, z) = (w[0], w[1]);
        let (va, vz) = (at(a), at(z));
        for i in 0..model.guards.len() {
            let (Some(x), Some(y)) = (va[i], vz[i]) else { continue };
            if x == y {
                continue;
            }
            // Invariant: guard i is `x` at `l` and `y` at `r`.
            let (mut l, mut r) = (a, z);
            while r - l > 1 {
                let m = l + (r - l) / 2;
                if at(m)[i] == Some(x) {
                    l = m;
                } else {
                    r = m;
                }
            }
            let mut before = vec![None; model.guards.len()];
            let mut after = before.clone();
            before[i] = Some(x);
            after[i] = Some(y);
            push(r, &before, &after);
        }
    }
    flips.sort_by_key(|f| f.value);
    (flips, FlipSearch::Bisection { samples: samples.len() })
}

/// The values to measure: the selection, plus (for [`Selection::Count`]) the range ends and both
/// sides of every flip, so each plotted step has a point on each side.
pub fn choose(model: &Model, dim: &str, lo: i64, hi: i64, fixed: &Bindings, selection: &Selection) -> Points {
    let (flips, search) = find_flips(model, dim, lo, hi, fixed);
    let mut values = match selection {
        Selection::Count(n) => {
            let mut v = log_spaced(lo, hi, (*n).max(2));
            for f in &flips {
                v.extend([f.value - 1, f.value].into_iter().filter(|x| (lo..=hi).contains(x)));
            }
            v
        }
        Selection::Values(v) => v.clone(),
    };
    values.sort_unstable();
    values.dedup();
    Points { values, flips, search }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Format, Guard, Model, SymbolInfo};
    use crate::sym::{parse_infix, Range};

    fn model(guards: &[&str]) -> Model {
        let mut m = Model::new(Format::Pt2, "test");
        m.symbols.push(SymbolInfo { name: "s0".into(), range: Range { min: 1, max: Some(1 << 40) }, hint: Some(8) });
        m.symbols.push(SymbolInfo { name: "s1".into(), range: Range { min: 1, max: Some(64) }, hint: Some(4) });
        for g in guards {
            m.guards.push(Guard { expr: parse_infix(g).unwrap(), source: g.to_string() });
        }
        m
    }

    fn fixed() -> Bindings {
        [("s1".to_string(), 4)].into_iter().collect()
    }

    #[test]
    fn log_spacing_keeps_the_ends_and_equal_ratios() {
        assert_eq!(log_spaced(1, 1024, 11), vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
        assert_eq!(log_spaced(2, 512, 2), vec![2, 512]);
        assert_eq!(log_spaced(5, 5, 16), vec![5]);
        // A range starting at 0 is spread from 0 too.
        let z = log_spaced(0, 1000, 8);
        assert_eq!((z[0], *z.last().unwrap()), (0, 1000));
        assert!(z.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn exact_scan_finds_each_flip_where_the_guard_says() {
        let m = model(&["s0 <= 64", "s0*s1 > 100"]);
        let (flips, search) = find_flips(&m, "s0", 1, 1000, &fixed());
        assert_eq!(search, FlipSearch::Exact { values: 1000 });
        let got: Vec<(i64, &str, bool)> = flips.iter().map(|f| (f.value, f.guard.as_str(), f.to)).collect();
        // s0*4 > 100 first holds at 26; s0 <= 64 stops holding at 65.
        assert_eq!(got, vec![(26, "s0*s1 > 100", true), (65, "s0 <= 64", false)]);
    }

    #[test]
    fn bisection_over_a_huge_range_finds_the_same_flips() {
        let m = model(&["s0 <= 64", "s0 < 3000000000", "s1 == 4"]);
        let (flips, search) = find_flips(&m, "s0", 1, 1 << 40, &fixed());
        assert!(matches!(search, FlipSearch::Bisection { .. }));
        let got: Vec<(i64, bool)> = flips.iter().map(|f| (f.value, f.to)).collect();
        assert_eq!(got, vec![(65, false), (3_000_000_000, false)]);
    }

    #[test]
    fn chosen_points_hold_both_sides_of_each_flip_and_the_ends() {
        let m = model(&["s0 <= 64"]);
        let p = choose(&m, "s0", 1, 1024, &fixed(), &Selection::Count(4));
        assert_eq!(p.values, vec![1, 10, 64, 65, 102, 1024]);
        let exact = choose(&m, "s0", 1, 1024, &fixed(), &Selection::Values(vec![300, 3, 3]));
        assert_eq!(exact.values, vec![3, 300]);
        assert_eq!(exact.flips.len(), 1);
    }
}
