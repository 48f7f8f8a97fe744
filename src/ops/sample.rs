//! The samplers' transforms from one Philox draw (four 32-bit words, `super::philox`) to each
//! distribution, evaluated in f64 for the reference interpreter; `lower::ops::random` builds the
//! same formulas as kernel expressions (in float32 for every dtype but float64, as the words
//! they start from: 24-bit uniforms for float32, float16 and bfloat16, 53-bit ones for float64).
//!
//! - uniform `[0, 1)`: [`uniform`]; `[from, to)` is `from + (to - from)·u`, clamped to the
//!   largest value of the dtype below `to` (`super::rng::largest_below`);
//! - normal: Box–Muller, `√(−2 ln(1 − u₁)) · cos(2π u₂)` ([`normal`]);
//! - exponential `−log1p(−u)/λ`, Cauchy `median + σ·tan(π(u − ½))` (of an open uniform, away
//!   from the tangent's pole: [`cauchy`]), log-normal `exp(normal)`, geometric
//!   `max(1, ⌈log1p(−u)/log1p(−p)⌉)` (inverse CDFs);
//! - integers in `[low, high)`: [`randint`], exact for every range an int64 holds.

/// Uniform in `[0, 1)`: 24 bits of word 0, or 53 bits of words 0 and 1 when `wide` (float64).
pub fn uniform(b: [u32; 4], wide: bool) -> f64 {
    if wide {
        super::philox::uniform53(b[0], b[1])
    } else {
        super::philox::uniform24(b[0])
    }
}

/// A standard normal by Box–Muller from two uniforms (words 0, 1; or 0–1 and 2–3 when `wide`).
pub fn normal(b: [u32; 4], wide: bool) -> f64 {
    let (u1, u2) = if wide {
        (super::philox::uniform53(b[0], b[1]), super::philox::uniform53(b[2], b[3]))
    } else {
        (super::philox::uniform24(b[0]), super::philox::uniform24(b[1]))
    };
    // 1 − u₁ lies in (0, 1]: the logarithm is finite.
    (-2.0 * (1.0 - u1).ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// Uniform in the open interval `(0, 1)`: 23 bits of word 0, or 52 bits of words 0 and 1 when
/// `wide`, exact in the compute type (`super::philox::open23`, `open52`).
pub fn open_uniform(b: [u32; 4], wide: bool) -> f64 {
    if wide {
        super::philox::open52(b[0], b[1])
    } else {
        super::philox::open23(b[0])
    }
}

/// `−log1p(−u)/λ`.
pub fn exponential(u: f64, lambd: f64) -> f64 {
    -(-u).ln_1p() / lambd
}

/// `median + σ·tan(π(u − ½))` for an open uniform `u`, evaluated as `−1/tan(πu)` below ½ and
/// `1/tan(π(1 − u))` above (the same function): the tangent's argument stays away from its pole,
/// so float32 keeps its relative precision in the tails, and no end is drawn.
pub fn cauchy(u: f64, median: f64, sigma: f64) -> f64 {
    use std::f64::consts::PI;
    let t = if u < 0.5 { -1.0 / (PI * u).tan() } else { 1.0 / (PI * (1.0 - u)).tan() };
    median + sigma * t
}

/// Trials until the first success of probability `p` in (0, 1]: `⌈log1p(−u)/log1p(−p)⌉`, at
/// least 1.
pub fn geometric(u: f64, p: f64) -> f64 {
    if p >= 1.0 {
        return 1.0;
    }
    ((-u).ln_1p() / (-p).ln_1p()).ceil().max(1.0)
}

/// An integer in `[low, high)` (`high > low`): a range up to 2³² takes word 0 modulo the range;
/// a wider one takes words 0 and 1 as 64 bits, modulo the range (63 of them up to a range of
/// 2⁶³, all 64 with one conditional subtraction above). The modulo favours small residues by
/// at most range / 2³² (range / 2⁶³ in the wide form), as PyTorch's `random_from_to` does.
pub fn randint(b: [u32; 4], low: i64, high: i64) -> i64 {
    let range = (i128::from(high) - i128::from(low)) as u128;
    let r = if range <= 1 << 32 {
        (u128::from(b[0]) % range) as u64
    } else {
        let v = (u64::from(b[0]) << 32) | u64::from(b[1]);
        if range <= 1 << 63 {
            (v & (i64::MAX as u64)) % range as u64
        } else if u128::from(v) >= range {
            v.wrapping_sub(range as u64)
        } else {
            v
        }
    };
    low.wrapping_add(r as i64)
}

/// A 63-bit key (word 0 and the top 31 bits of word 1): `randperm` ranks them.
pub fn key63(b: [u32; 4]) -> i64 {
    ((u64::from(b[0]) << 31) | u64::from(b[1] >> 1)) as i64
}

/// The key of a category of weight `w` in an exponential race (`w / E`, `E = −ln u ~ Exp(1)`
/// for an open uniform `u`): sampling without replacement takes categories by descending key,
/// which draws each next one with probability proportional to its weight among those left.
/// Zero weights key 0 and come last.
pub fn race_key(b: [u32; 4], w: f64, wide: bool) -> f64 {
    w / -open_uniform(b, wide).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn randint_stays_in_every_range() {
        let words = [[0u32; 4], [u32::MAX; 4], [0x8000_0000, 0, 0, 0], [u32::MAX, 0, 0, 0], [0x1234_5678, 0x9abc_def0, 0, 0]];
        let ranges = [(0, 1), (0, 10), (-5, 5), (0, 1 << 32), (0, (1 << 32) + 1), (i64::MIN, 0), (i64::MIN, i64::MAX), (-1, i64::MAX), (i64::MAX - 1, i64::MAX)];
        for b in words {
            for (lo, hi) in ranges {
                let v = randint(b, lo, hi);
                assert!(v >= lo && v < hi, "{v} outside [{lo}, {hi}) for {b:08x?}");
            }
        }
        // Ranges up to 2³² use word 0 only.
        assert_eq!(randint([7, 1, 2, 3], 0, 5), 2);
        assert_eq!(randint([u32::MAX, 9, 9, 9], 0, 1 << 32), u32::MAX as i64);
    }

    #[test]
    fn transforms_stay_in_their_support() {
        for b in [[0u32; 4], [u32::MAX; 4], [1, 2, 3, 4]] {
            for wide in [false, true] {
                let u = uniform(b, wide);
                assert!((0.0..1.0).contains(&u));
                assert!(normal(b, wide).is_finite());
                assert!(exponential(u, 2.0) >= 0.0);
                assert!(geometric(u, 0.3) >= 1.0);
            }
            for wide in [false, true] {
                let (u, k) = (open_uniform(b, wide), race_key(b, 1.0, wide));
                assert!(u > 0.0 && u < 1.0 && k > 0.0 && k.is_finite());
                assert!(cauchy(u, 0.0, 1.0).is_finite());
            }
            assert!(key63(b) >= 0);
        }
        assert_eq!(geometric(0.9, 1.0), 1.0);
        assert_eq!(race_key([5, 0, 0, 0], 0.0, false), 0.0);
        // The two branches of the Cauchy transform are one function: tan(π(u − ½)).
        for u in [0.01, 0.3, 0.5, 0.77, 0.999] {
            let direct = (std::f64::consts::PI * (u - 0.5)).tan();
            assert!((cauchy(u, 0.0, 1.0) - direct).abs() < 1e-9 * direct.abs().max(1.0), "u = {u}");
        }
    }
}
