//! The two 16-bit float formats PyTorch computes in, as storage types: `float16` (IEEE binary16)
//! and `bfloat16` (float32's exponent, 7 mantissa bits). The interpreter computes in `f64` and
//! rounds once to these (round to nearest, ties to even), as PyTorch's CPU kernels compute in
//! float32 and round once; subnormals, infinities and NaN are kept.

/// IEEE binary16, by its bits.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct F16(pub u16);

/// bfloat16, by its bits.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct BF16(pub u16);

/// A binary float format of 16 bits: mantissa bits and exponent bias.
struct Format {
    mant: u32,
    bias: i32,
}

const HALF: Format = Format { mant: 10, bias: 15 };
const BFLOAT: Format = Format { mant: 7, bias: 127 };

impl Format {
    fn exp_all_ones(&self) -> u16 {
        ((2 * self.bias + 1) as u16) << self.mant
    }

    fn encode(&self, v: f64) -> u16 {
        let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
        if v.is_nan() {
            return self.exp_all_ones() | (1 << (self.mant - 1));
        }
        let a = v.abs();
        if a == 0.0 {
            return sign;
        }
        if a.is_infinite() {
            return sign | self.exp_all_ones();
        }
        let emin = 1 - self.bias;
        let e = a.log2().floor() as i32;
        // log2 can be off by one next to a power of two: correct e so that 2^e <= a < 2^(e+1).
        let e = if 2f64.powi(e) > a { e - 1 } else if 2f64.powi(e + 1) <= a { e + 1 } else { e };
        if e < emin {
            // Subnormal: multiples of 2^(emin - mant); a carry into 2^mant is the smallest normal.
            let q = (a * 2f64.powi(self.mant as i32 - emin)).round_ties_even() as u16;
            return sign | q;
        }
        let mut e = e;
        let mut q = ((a / 2f64.powi(e) - 1.0) * 2f64.powi(self.mant as i32)).round_ties_even() as u32;
        if q == 1 << self.mant {
            e += 1;
            q = 0;
        }
        if e > self.bias {
            return sign | self.exp_all_ones();
        }
        sign | (((e + self.bias) as u16) << self.mant) | q as u16
    }

    fn decode(&self, b: u16) -> f64 {
        let sign = if b & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exp = ((b & 0x7fff) >> self.mant) as i32;
        let m = (b & ((1 << self.mant) - 1)) as f64;
        let scale = 2f64.powi(self.mant as i32);
        if exp == 2 * self.bias + 1 {
            return if m == 0.0 { sign * f64::INFINITY } else { f64::NAN };
        }
        if exp == 0 {
            return sign * m / scale * 2f64.powi(1 - self.bias);
        }
        sign * (1.0 + m / scale) * 2f64.powi(exp - self.bias)
    }
}

impl F16 {
    pub fn from_f64(v: f64) -> F16 {
        F16(HALF.encode(v))
    }
    pub fn to_f64(self) -> f64 {
        HALF.decode(self.0)
    }
}

impl BF16 {
    pub fn from_f64(v: f64) -> BF16 {
        BF16(BFLOAT.encode(v))
    }
    pub fn to_f64(self) -> f64 {
        BFLOAT.decode(self.0)
    }
}

impl PartialOrd for F16 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.to_f64().partial_cmp(&other.to_f64())
    }
}

impl PartialOrd for BF16 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.to_f64().partial_cmp(&other.to_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_round_trips_every_finite_bit_pattern() {
        for b in 0..=u16::MAX {
            let h = F16(b);
            let v = h.to_f64();
            if v.is_nan() {
                assert!(F16::from_f64(v).to_f64().is_nan());
                continue;
            }
            assert_eq!(F16::from_f64(v).0, b, "{b:#x} = {v}");
            let bf = BF16(b);
            if !bf.to_f64().is_nan() {
                assert_eq!(BF16::from_f64(bf.to_f64()).0, b, "bf16 {b:#x}");
            }
        }
    }

    #[test]
    fn rounding_is_to_nearest_even_and_overflows_to_infinity() {
        assert_eq!(F16::from_f64(1.0).0, 0x3c00);
        assert_eq!(F16::from_f64(65504.0).0, 0x7bff);
        assert_eq!(F16::from_f64(65520.0).0, 0x7c00, "halfway past the largest finite rounds to inf");
        assert_eq!(F16::from_f64(1.0 + 2f64.powi(-11)).0, 0x3c00, "tie to even");
        assert_eq!(F16::from_f64(2f64.powi(-24)).0, 1, "smallest subnormal");
        assert_eq!(F16::from_f64(-0.0).0, 0x8000);
        assert_eq!(BF16::from_f64(1.0).0, 0x3f80);
        assert_eq!(BF16::from_f64(1.0 / 3.0).to_f64(), 0.333984375);
    }
}
