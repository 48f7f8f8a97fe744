//! Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11), the
//! counter-based generator PyTorch's CUDA and XPU generators and Inductor's `philox` use: a
//! pure function of a 128-bit counter and a 64-bit key, so every element's random bits come
//! from its own index and any schedule or work-group size draws the same values. The constants
//! and the word layout are kept here once; the reference interpreter calls [`philox4x32_10`]
//! and the kernel lowering (`lower::rng`) builds the same rounds as kernel expressions.
//!
//! Layout (both backends): the key is the seed's low and high words; the counter is the draw's
//! index (low, high word) then its stream (low, high word) — see `super::rng` for which stream
//! and index each op draws.

/// The round multipliers.
pub const M: [u32; 2] = [0xD251_1F53, 0xCD9E_8D57];
/// The key schedule's Weyl increments (the golden ratio and √3 − 1 in 32-bit fixed point).
pub const W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
/// Rounds: 10 is the Random123 default, the crush-resistant choice PyTorch uses.
pub const ROUNDS: usize = 10;

/// The high and low words of the 64-bit product `a · b`.
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

/// Philox4x32-10 of `ctr` under `key`.
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for round in 0..ROUNDS {
        if round > 0 {
            k = [k[0].wrapping_add(W[0]), k[1].wrapping_add(W[1])];
        }
        let (hi0, lo0) = mulhilo(M[0], c[0]);
        let (hi1, lo1) = mulhilo(M[1], c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The key of a seed: its low and high words.
pub fn key(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// The counter of draw `index` of stream `stream`.
pub fn counter(index: u64, stream: u64) -> [u32; 4] {
    [index as u32, (index >> 32) as u32, stream as u32, (stream >> 32) as u32]
}

/// Uniform in `[0, 1)` from the top 24 bits of `x`: a multiple of 2⁻²⁴, exact in float32 (what
/// float32, float16 and bfloat16 samplers draw, as PyTorch's do).
pub fn uniform24(x: u32) -> f64 {
    f64::from(x >> 8) * (1.0 / (1u64 << 24) as f64)
}

/// Uniform in `[0, 1)` from 53 bits (`hi`'s 32 and `lo`'s top 21): a multiple of 2⁻⁵³, exact
/// in float64.
pub fn uniform53(hi: u32, lo: u32) -> f64 {
    (f64::from(hi) * (1u64 << 21) as f64 + f64::from(lo >> 11)) * (1.0 / (1u64 << 53) as f64)
}

/// Uniform in the open interval `(0, 1)` from the top 23 bits of `x`: an odd multiple of 2⁻²⁴
/// (the midpoint of a 2⁻²³ bucket), exact in float32, so neither end is drawn even after
/// rounding (`-log(u)` is finite and positive).
pub fn open23(x: u32) -> f64 {
    f64::from(2 * (x >> 9) + 1) * (1.0 / (1u64 << 24) as f64)
}

/// Uniform in `(0, 1)` from 52 bits (`hi`'s 32 and `lo`'s top 20): an odd multiple of 2⁻⁵³,
/// exact in float64.
pub fn open52(hi: u32, lo: u32) -> f64 {
    let k = (u64::from(hi) << 20) | u64::from(lo >> 12);
    (2 * k + 1) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's `kat_vectors` for philox4x32 with 10 rounds: counter, key, expected output.
    #[test]
    fn philox_matches_random123_known_answers() {
        let kat: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            ([0, 0, 0, 0], [0, 0], [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]),
            ([u32::MAX; 4], [u32::MAX; 2], [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]),
            (
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0],
                [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
            ),
        ];
        for (ctr, key, want) in kat {
            assert_eq!(philox4x32_10(ctr, key), want, "counter {ctr:08x?} key {key:08x?}");
        }
    }

    #[test]
    fn words_split_low_first() {
        assert_eq!(key(0x0123_4567_89ab_cdef), [0x89ab_cdef, 0x0123_4567]);
        assert_eq!(counter(0x1_0000_0002, 0x3_0000_0004), [2, 1, 4, 3]);
    }

    #[test]
    fn uniforms_cover_their_interval_and_stay_inside() {
        assert_eq!(uniform24(0), 0.0);
        assert_eq!(uniform24(u32::MAX), 1.0 - 2f64.powi(-24));
        assert_eq!(uniform24(u32::MAX) as f32 as f64, uniform24(u32::MAX), "exact in float32");
        assert_eq!(uniform53(0, 0), 0.0);
        assert_eq!(uniform53(u32::MAX, u32::MAX), 1.0 - 2f64.powi(-53));
        assert_eq!((open23(0), open23(u32::MAX)), (2f64.powi(-24), 1.0 - 2f64.powi(-24)));
        assert_eq!(open23(u32::MAX) as f32 as f64, open23(u32::MAX), "exact in float32");
        assert_eq!((open52(0, 0), open52(u32::MAX, u32::MAX)), (2f64.powi(-53), 1.0 - 2f64.powi(-53)));
    }
}
