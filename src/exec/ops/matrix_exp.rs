//! `matrix_exp` as PyTorch computes it (ATen `mexp`, after Bader, Blanes and Casas 2019): a
//! Taylor approximant of degree 1, 2, 4, 8, 12 or 18 chosen by the matrix's 1-norm, the last one
//! with scaling and squaring — in the tensor's own arithmetic, every tensor op rounded to its
//! dtype, so that float32 results agree with PyTorch's to its tolerance.
//!
//! float16/bfloat16 go through the float64 branch (float64 thresholds), whose coefficient tables
//! ATen hands to `from_blob` with the *tensor's* dtype: the bytes of the f64 constants are read
//! as 16-bit floats. PyTorch's results there are those of the garbage coefficients (NaN for the
//! OpInfo samples), and so are these: [`coefficients`] decodes the tables the same way.

use super::fvec::round_to;
use super::lapack::Mat;
use crate::ir::DType;

/// The 1-norm bounds of the approximants of degree 1, 2, 4, 8 and 12, then the scaling target.
const THETAS_F32: [f64; 6] = [1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02, 5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00];
const THETAS_F64: [f64; 6] = [2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04, 4.991228871115323e-02, 2.996_158_913_811_58e-1, 1.090863719290036e+00];

#[rustfmt::skip]
const T12: [f64; 16] = [
    9.0198e-16, 0.469_321_175_954_182_4, -0.200_994_249_270_472_85, -0.046_239_461_340_630_72,
    5.315_978_957_598_713, 1.199_267_904_171_322_3, 0.011_792_962_409_929_97, 0.011_088_445_285_191_68,
    0.181_888_699_821_704_36, 0.055_027_984_399_253_99, 0.093_515_907_705_354_15, 0.006_107_005_288_980_582,
    -2.0861320e-13, -0.131_810_610_138_301_84, -0.020_278_555_405_892_59, -0.006_759_518_468_630_863,
];

#[rustfmt::skip]
const T18: [f64; 25] = [
    0., -1.003_655_810_301_446_2e-1, -8.029_246_482_411_57e-3, -8.921_384_980_457_3e-4, 0.,
    0., 3.978_497_494_996_451e-1, 1.367_837_784_604_117_2, 4.982_896_225_253_826_7e-1, -6.378_981_945_947_233e-4,
    -1.096_763_960_529_620_6e1, 1.680_158_138_789_062, 5.717_798_464_788_655e-2, -6.982_101_224_880_520_6e-3, 3.349_750_170_860_705e-5,
    -9.043_168_323_908_106e-2, -6.764_045_190_713_819e-2, 6.759_613_017_704_597e-2, 2.955_525_704_293_155_2e-2, -1.391_802_575_160_607e-5,
    0., 0., -9.233_646_193_671_186e-2, -1.693_649_390_020_817_2e-2, -1.400_867_981_820_361e-5,
];

/// The first `n` coefficients as the kernel reads the table `vals`: for float32 and float64
/// the values (rounded to float32 for it); for the 16-bit floats, the table's f64 bytes taken
/// two at a time as elements of that dtype.
pub(crate) fn coefficients(vals: &[f64], n: usize, dtype: DType) -> Vec<f64> {
    use crate::exec::tensor::{BF16, F16};
    match dtype {
        DType::F16 | DType::BF16 => {
            let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            bytes
                .chunks_exact(2)
                .take(n)
                .map(|b| {
                    let bits = u16::from_le_bytes([b[0], b[1]]);
                    if dtype == DType::F16 {
                        F16(bits).to_f64()
                    } else {
                        BF16(bits).to_f64()
                    }
                })
                .collect()
        }
        _ => vals.iter().take(n).map(|&v| round_to(dtype)(v)).collect(),
    }
}

/// Matrix arithmetic rounded as ATen's ops on tensors of `dtype` round.
struct Arith {
    dtype: DType,
    n: usize,
}

type M = Vec<f64>;

impl Arith {
    fn r(&self, x: f64) -> f64 {
        round_to(self.dtype)(x)
    }

    fn eye(&self) -> M {
        (0..self.n * self.n).map(|k| if k / self.n == k % self.n { 1.0 } else { 0.0 }).collect()
    }

    /// A matrix product as ATen computes these small ones: per element a sequential sum of
    /// products in the accumulation type (float32 for the 16-bit floats), rounded to the dtype.
    /// (Matched against PyTorch's recorded float32 results: no fused multiply-adds here.)
    fn mm(&self, a: &M, b: &M) -> M {
        let n = self.n;
        let wide = self.dtype == DType::F64;
        (0..n * n)
            .map(|k| {
                let (row, col) = (k / n, k % n);
                let dot = if wide {
                    (0..n).fold(0.0, |acc, l| acc + a[row * n + l] * b[l * n + col])
                } else {
                    f64::from((0..n).fold(0.0f32, |acc, l| acc + a[row * n + l] as f32 * b[l * n + col] as f32))
                };
                self.r(dot)
            })
            .collect()
    }

    fn add(&self, a: &M, b: &M) -> M {
        a.iter().zip(b).map(|(x, y)| self.r(x + y)).collect()
    }

    /// `Σ_j c[j] · m[j]` as `_compute_linear_combination` accumulates it: `out += in · c`, the
    /// product and the sum each rounded to the dtype.
    fn combine(&self, ms: &[&M], c: &[f64]) -> M {
        let mut out = vec![0.0; self.n * self.n];
        for (m, &c) in ms.iter().zip(c) {
            for (o, x) in out.iter_mut().zip(m.iter()) {
                *o = self.r(*o + self.r(x * c));
            }
        }
        out
    }

    /// `Σ_k ms[k]` (ATen's `sum(0)`: accumulated wide, rounded once).
    fn sum(&self, ms: &[&M]) -> M {
        (0..self.n * self.n).map(|k| self.r(ms.iter().map(|m| m[k]).sum())).collect()
    }

    /// `I + A`.
    fn t1(&self, a: &M) -> M {
        self.sum(&[&self.eye(), a])
    }

    /// `I + A + A²/2`.
    fn t2(&self, a: &M) -> M {
        let a2: M = self.mm(a, a).iter().map(|x| self.r(x / 2.0)).collect();
        self.sum(&[&self.eye(), a, &a2])
    }

    /// `I + A + A²·(I/2 + A/6 + A²/24)`.
    fn t4(&self, a: &M) -> M {
        let (i, a2) = (self.eye(), self.mm(a, a));
        let inner = self.combine(&[&i, a, &a2], &coefficients(&[1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0], 3, self.dtype));
        let a3 = self.mm(&a2, &inner);
        self.combine(&[&i, a, &a2, &a3], &coefficients(&[1.0, 1.0, 0.0, 1.0], 4, self.dtype))
    }

    fn t8(&self, a: &M) -> M {
        let sqrt_177 = 1.330_413_469_565_007e1;
        let x3 = 2. / 3.;
        let x1 = x3 * ((1. + sqrt_177) / 88.);
        let x2 = x3 * ((1. + sqrt_177) / 352.);
        let x4 = (-271. + 29. * sqrt_177) / (315. * x3);
        let x5 = (-11. + 11. * sqrt_177) / (1260. * x3);
        let x6 = (-99. + 11. * sqrt_177) / (5040. * x3);
        let x7 = (89. - sqrt_177) / (5040. * x3);
        let y2 = (857. - 58. * sqrt_177) / 630.;
        let (i, a2) = (self.eye(), self.mm(a, a));
        let a4 = self.mm(&a2, &self.combine(&[a, &a2], &coefficients(&[x1, x2], 2, self.dtype)));
        let left = self.combine(&[&a2, &a4], &coefficients(&[x3, 1.0], 2, self.dtype));
        let right = self.combine(&[&i, a, &a2, &a4], &coefficients(&[x4, x5, x6, x7], 4, self.dtype));
        let a8 = self.mm(&left, &right);
        self.combine(&[&i, a, &a2, &a4, &a8], &coefficients(&[1.0, 1.0, y2, 0.0, 1.0], 5, self.dtype))
    }

    fn t12(&self, a: &M) -> M {
        let (i, a2) = (self.eye(), self.mm(a, a));
        let a3 = self.mm(a, &a2);
        let b = coefficients(&T12, 16, self.dtype);
        let powers = [&i, a, &a2, &a3];
        let bs: Vec<M> = b.chunks(4).map(|row| self.combine(&powers, row)).collect();
        let a6 = self.add(&bs[2], &self.mm(&bs[3], &bs[3]));
        let left = self.add(&bs[1], &a6);
        self.add(&bs[0], &self.mm(&left, &a6))
    }

    fn t18(&self, a: &M) -> M {
        let (i, a2) = (self.eye(), self.mm(a, a));
        let a3 = self.mm(a, &a2);
        let a6 = self.mm(&a3, &a3);
        let b = coefficients(&T18, 25, self.dtype);
        let powers = [&i, a, &a2, &a3, &a6];
        let bs: Vec<M> = b.chunks(5).map(|row| self.combine(&powers, row)).collect();
        let a9 = self.add(&bs[3], &self.mm(&bs[0], &bs[4]));
        let left = self.add(&bs[2], &a9);
        self.add(&bs[1], &self.mm(&left, &a9))
    }
}

/// `exp(m)` for one square matrix, as PyTorch's `mexp` computes it for a tensor of `dtype`.
pub(crate) fn mexp(m: &Mat, dtype: DType) -> Mat {
    let n = m.rows;
    let ar = Arith { dtype, n };
    let a: M = m.a.iter().map(|&x| ar.r(x)).collect();
    let thetas = if dtype == DType::F32 { THETAS_F32 } else { THETAS_F64 };
    // The 1-norm (largest column sum of magnitudes), in the tensor's dtype.
    let norm = (0..n).map(|c| ar.r((0..n).map(|r| a[r * n + c].abs()).sum())).fold(f64::NAN, f64::max);
    let out = if norm <= thetas[0] {
        ar.t1(&a)
    } else if norm <= thetas[1] {
        ar.t2(&a)
    } else if norm <= thetas[2] {
        ar.t4(&a)
    } else if norm <= thetas[3] {
        ar.t8(&a)
    } else if norm <= thetas[4] {
        ar.t12(&a)
    } else if norm > thetas[4] {
        // Scale by 2^-s so the norm is at most theta, then square s times.
        let s = ar.r(ar.r(norm / thetas[5]).log2()).ceil().max(0.0);
        let scale = 2f64.powi(-(s as i32));
        let scaled: M = a.iter().map(|x| ar.r(x * scale)).collect();
        (0..s as usize).fold(ar.t18(&scaled), |e, _| ar.mm(&e, &e))
    } else {
        // A NaN norm: PyTorch leaves the result as it fills it, NaN.
        vec![f64::NAN; n * n]
    };
    Mat { rows: n, cols: n, a: out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coefficient_tables_decode_as_the_dtype_reads_their_bytes() {
        // 1/2 as an f64 is 0x3FE0_0000_0000_0000: its first three 16-bit halves are zero.
        assert_eq!(coefficients(&[0.5, 1.0 / 6.0], 3, DType::F16), vec![0.0, 0.0, 0.0]);
        assert_eq!(coefficients(&[0.5], 1, DType::F64), vec![0.5]);
        assert_eq!(coefficients(&[1.0 / 3.0], 1, DType::F32), vec![f64::from(1.0f32 / 3.0)]);
        // The top half of 1.0 (0x3FF0) read as bfloat16 is 1.875.
        assert_eq!(coefficients(&[1.0], 4, DType::BF16)[3], 1.875);
    }

    #[test]
    fn small_and_large_norms_match_the_series() {
        let m = Mat { rows: 2, cols: 2, a: vec![0.0, 1e-3, 0.0, 0.0] };
        assert_eq!(mexp(&m, DType::F64).a, vec![1.0, 1e-3, 0.0, 1.0], "nilpotent: I + A");
        let d = Mat { rows: 2, cols: 2, a: vec![3.0, 0.0, 0.0, -2.0] };
        let e = mexp(&d, DType::F64).a;
        assert!((e[0] - 3f64.exp()).abs() < 1e-12 * 3f64.exp() && (e[3] - (-2f64).exp()).abs() < 1e-15);
        assert_eq!((e[1], e[2]), (0.0, 0.0));
    }

    // Matrices of PyTorch 2.15's OpInfo samples and its recorded `matrix_exp` of them.

    #[test]
    fn float32_is_pytorchs_to_the_bit() {
        #[rustfmt::skip]
        let x = [4.319086074829102, -0.8690775632858276, -0.43684494495391846, 5.1154985427856445, -6.255067825317383,
            2.992039680480957, -2.982185125350952, 5.20722770690918, -3.2104849815368652, 0.44502782821655273,
            3.039132595062256, 6.185064315795898, -1.3228504657745361, 8.210625648498535, -7.614414691925049,
            -1.605404019355774, -8.97458267211914, 0.7455596923828125, 2.5540218353271484, -3.6432604789733887,
            3.7379093170166016, -1.4589811563491821, -7.820890426635742, 6.909596920013428, 5.549069881439209];
        #[rustfmt::skip]
        let want = [2990.9521484375, 17922.1015625, 26853.34765625, -5395.5830078125, -32814.6328125,
            2017.92626953125, 12084.078125, 18081.734375, -3640.173095703125, -22076.01171875,
            3971.8486328125, 23865.48828125, 35747.1015625, -7187.01025390625, -43667.390625,
            -455.2796630859375, -2714.2109375, -4028.3291015625, 826.4298095703125, 4896.435546875,
            -4325.49609375, -26178.3515625, -39178.984375, 7913.38818359375, 47836.171875];
        // Bit for bit: the matrix exact in f64 differs from PyTorch's beyond float32's
        // tolerance here (at [0, 3]: -5395.592 against -5395.583).
        assert_eq!(mexp(&Mat { rows: 5, cols: 5, a: x.to_vec() }, DType::F32).a, want.to_vec());
    }

    #[test]
    fn float16_reads_garbage_coefficients_into_nan() {
        #[rustfmt::skip]
        let x = [-8.4765625, -1.765625, -4.32421875, -2.400390625, -7.94921875, 3.611328125, -8.0703125,
            -0.57373046875, 3.12890625, -3.033203125, 5.10546875, 1.134765625, 4.94921875, 5.7734375,
            -3.97265625, 3.271484375, -3.89453125, 2.8203125, -4.703125, 4.1640625, 1.822265625,
            -3.521484375, -4.4140625, 2.328125, 8.3984375];
        assert!(mexp(&Mat { rows: 5, cols: 5, a: x.to_vec() }, DType::F16).a.iter().all(|x| x.is_nan()));
    }
}
