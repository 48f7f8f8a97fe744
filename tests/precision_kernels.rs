//! The kernels' roundings and tie rules on inputs OpInfo's samples leave out, against the
//! reference interpreter (whose rules `src/exec/ops` checks against PyTorch's recorded
//! outputs): float16/bfloat16 running sums rounded at every step (ties to even, subnormals,
//! overflow to infinity), `topk`/`kthvalue` on lines full of equal values in every mode, and
//! uint8 resampling at several sizes. Every module also goes through spirv-val.

mod common;

use common::graph_case::{lowered, GraphCase};
use xpu_workbench::decomp::Mode;
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType, ValueId};
use xpu_workbench::runtime::plan::run_on_device;

/// A graph of one node over its inputs.
struct Case(GraphCase);

impl Case {
    fn new() -> Case {
        Case(GraphCase::new("precision_kernels"))
    }

    fn input(&mut self, t: Tensor) -> ValueId {
        self.0.input(t)
    }

    fn typed(&mut self, shape: &[usize], v: &[f64], dtype: DType) -> ValueId {
        self.input(Tensor::from_vec(shape, v.to_vec()).expect("shape").cast(dtype).expect("cast"))
    }

    /// A node with outputs of `outs` (dtype, shape).
    fn node(&mut self, target: &str, args: Vec<(&str, Arg)>, outs: &[(DType, &[usize])]) -> Vec<ValueId> {
        self.0.node(target, args, outs)
    }

    /// The outputs through the interpreter and (with a device) through OpenCL kernels.
    fn run(self, outs: &[ValueId]) -> (Vec<Vec<f64>>, Option<Vec<Vec<f64>>>) {
        let (model, inputs) = self.0.model(outs);
        let graph = &model.graphs[0];
        let interp: Vec<Vec<f64>> = exec::run(&model, graph, &inputs).expect("interpreter").iter().map(Tensor::to_f64_vec).collect();
        let (plan, modules) = lowered(&model, Mode::None);
        let Some(mut dev) = common::opencl_device() else { return (interp, None) };
        let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
        let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).expect("runs");
        (interp, Some(r.outputs.iter().map(Tensor::to_f64_vec).collect()))
    }
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
}

/// Both backends give `want` bit for bit.
fn expect(case: Case, outs: &[ValueId], want: &[&[f64]]) {
    let (interp, opencl) = case.run(outs);
    for (i, w) in want.iter().enumerate() {
        assert!(same(&interp[i], w), "output {i}: interpreter {:?}, expected {w:?}", interp[i]);
        if let Some(o) = &opencl {
            assert!(same(&o[i], w), "output {i}: OpenCL {:?}, expected {w:?}", o[i]);
        }
    }
}

/// OpenCL agrees with the interpreter bit for bit.
fn agree(case: Case, outs: &[ValueId], what: &str) {
    let (interp, opencl) = case.run(outs);
    if let Some(o) = opencl {
        for (i, (a, b)) in interp.iter().zip(&o).enumerate() {
            assert!(same(a, b), "{what}, output {i}: interpreter {a:?}, OpenCL {b:?}");
        }
    }
}

/// `addbmm(self, b1, b2)` of 1×1 matrices: `self` plus each batch's product, in `dtype`. With
/// exact products, the only roundings are the per-batch stores of the running sum.
fn addbmm(dtype: DType, s: f64, b1: &[f64], b2: &[f64], want: f64) {
    let mut c = Case::new();
    let n = b1.len();
    let x = c.typed(&[1, 1], &[s], dtype);
    let a = c.typed(&[n, 1, 1], b1, dtype);
    let b = c.typed(&[n, 1, 1], b2, dtype);
    let out = c.node("aten.addbmm.default", vec![("self", Arg::Tensor(x)), ("batch1", Arg::Tensor(a)), ("batch2", Arg::Tensor(b))], &[(dtype, &[1, 1])]);
    expect(c, &out, &[&[want]]);
}

#[test]
fn float16_running_sums_round_every_step_to_nearest_even() {
    // 2048 + 1 is a tie between 2048 and 2050, and even 2048 wins each of three times (one
    // rounding at the end would give 2052).
    addbmm(DType::F16, 2048.0, &[1.0; 3], &[1.0; 3], 2048.0);
    // 2048 + 3 is a tie between 2050 and 2052: even 2052.
    addbmm(DType::F16, 2048.0, &[1.0], &[3.0], 2052.0);
    // Past the largest float16 (65504), halfway to 65536 and beyond: infinity.
    addbmm(DType::F16, 65504.0, &[4.0], &[4.0], f64::INFINITY);
    addbmm(DType::F16, -65504.0, &[-4.0], &[4.0], f64::NEG_INFINITY);
    // Subnormals: 2^-14 · 2^-10 is the smallest, 2^-24; 2^-15 · 2^-10 = 2^-25 ties to 0, and
    // 3 · 2^-25 rounds up to 2^-23.
    let (e10, e14, e15) = (2f64.powi(-10), 2f64.powi(-14), 2f64.powi(-15));
    addbmm(DType::F16, 0.0, &[e14], &[e10], 2f64.powi(-24));
    addbmm(DType::F16, 0.0, &[e15], &[e10], 0.0);
    addbmm(DType::F16, 2f64.powi(-24), &[e15], &[e10], 2f64.powi(-23));
}

#[test]
fn bfloat16_running_sums_round_every_step_to_nearest_even() {
    // bfloat16 keeps 8 significant bits: 256 + 1 ties to 256, 256 + 3 to 260.
    addbmm(DType::BF16, 256.0, &[1.0; 4], &[1.0; 4], 256.0);
    addbmm(DType::BF16, 256.0, &[1.0], &[3.0], 260.0);
    addbmm(DType::BF16, -256.0, &[-1.0], &[1.0], -256.0);
}

/// A pseudo-random line of small integers (many ties).
fn line(n: usize, seed: u64, range: i64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) as i64 % range) as f64
        })
        .collect()
}

/// `rows` lines of length `n`: two of values in {0, 1}, two in 0..3, two in 0..100.
fn lines(rows: usize, n: usize, seed: u64) -> Vec<f64> {
    (0..rows).flat_map(|r| line(n, seed + r as u64, [2, 3, 100][r % 3])).collect()
}

#[test]
fn topk_picks_equal_values_as_pytorch_on_short_lines() {
    for n in [2usize, 5, 9, 16] {
        let vals = lines(6, n, n as u64);
        for k in [1, n.div_ceil(2), n] {
            for (largest, sorted) in [(true, true), (false, true), (true, false)] {
                let mut c = Case::new();
                let x = c.typed(&[6, n], &vals, DType::I64);
                let args = vec![("self", Arg::Tensor(x)), ("k", Arg::Int(k as i64)), ("dim", Arg::Int(1)), ("largest", Arg::Bool(largest)), ("sorted", Arg::Bool(sorted))];
                let outs = c.node("aten.topk.default", args, &[(DType::I64, &[6, k]), (DType::I64, &[6, k])]);
                agree(c, &outs, &format!("topk n={n} k={k} largest={largest} sorted={sorted} of {vals:?}"));
            }
        }
    }
}

#[test]
fn topk_along_a_leading_dim_and_on_floats_with_nan() {
    let mut c = Case::new();
    let vals = [1.0, f64::NAN, 2.0, 2.0, 0.5, 2.0, f64::NAN, 1.0, 2.0, 0.5, 0.5, 3.0];
    let x = c.typed(&[6, 2], &vals, DType::F32);
    let args = vec![("self", Arg::Tensor(x)), ("k", Arg::Int(4)), ("dim", Arg::Int(0))];
    let outs = c.node("aten.topk.default", args, &[(DType::F32, &[4, 2]), (DType::I64, &[4, 2])]);
    agree(c, &outs, "topk over dim 0 with NaN");
    // A line longer than the kernel's selection program keeps the rank lowering: distinct
    // values, the same answer.
    let mut c = Case::new();
    let vals: Vec<f64> = (0..40).map(|i| ((i * 17) % 41) as f64).collect();
    let x = c.typed(&[40], &vals, DType::F32);
    let outs = c.node("aten.topk.default", vec![("self", Arg::Tensor(x)), ("k", Arg::Int(5))], &[(DType::F32, &[5]), (DType::I64, &[5])]);
    expect(c, &outs, &[&[40.0, 39.0, 38.0, 37.0, 36.0], &[12.0, 24.0, 36.0, 7.0, 19.0]]);
}

#[test]
fn kthvalue_picks_equal_values_as_pytorch_on_short_lines() {
    for n in [1usize, 3, 8, 16] {
        let vals = lines(6, n, 100 + n as u64);
        for k in [1, n.div_ceil(2), n] {
            let mut c = Case::new();
            let x = c.typed(&[6, n], &vals, DType::I32);
            let args = vec![("self", Arg::Tensor(x)), ("k", Arg::Int(k as i64)), ("dim", Arg::Int(-1)), ("keepdim", Arg::Bool(true))];
            let outs = c.node("aten.kthvalue.default", args, &[(DType::I32, &[6, 1]), (DType::I64, &[6, 1])]);
            agree(c, &outs, &format!("kthvalue n={n} k={k} of {vals:?}"));
        }
    }
}

#[test]
fn uint8_resampling_matches_the_interpreter_at_several_sizes() {
    let img: Vec<f64> = (0..2 * 3 * 7 * 6).map(|i| ((i * 37 + 11) % 256) as f64).collect();
    for target in ["aten.upsample_bilinear2d.vec", "aten.upsample_bicubic2d.vec"] {
        for (oh, ow) in [(3usize, 4usize), (11, 13), (14, 6), (1, 1)] {
            for align in [false, true] {
                let mut c = Case::new();
                let x = c.typed(&[2, 3, 7, 6], &img, DType::U8);
                let args = vec![
                    ("input", Arg::Tensor(x)),
                    ("output_size", Arg::Ints(vec![oh as i64, ow as i64])),
                    ("align_corners", Arg::Bool(align)),
                    ("scale_factors", Arg::None),
                ];
                let outs = c.node(target, args, &[(DType::U8, &[2, 3, oh, ow])]);
                agree(c, &outs, &format!("{target} to {oh}×{ow}, align_corners {align}"));
            }
        }
    }
}

/// Distance of `got` from the exact `want` in units in the last place of float32 at `want`.
fn ulps(got: f64, want: f64) -> f64 {
    let w = want as f32;
    let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()).max(f32::from_bits(1)) as f64;
    (got - want).abs() / ulp
}

/// The kernels' float32 `erf` is polynomials of its own (`codegen::spirv::erf`), not the
/// runtime's: within 2 ulp of float64 `erf` on a dense sweep of float32 (every 251st bit
/// pattern of [0, 4.5], both signs), exact at the specials and at the pieces' borders.
#[test]
fn float32_erf_stays_within_two_ulp_of_float64() {
    let top = 4.5f32.to_bits();
    let mut xs: Vec<f64> = (0..top).step_by(251).flat_map(|b| [f32::from_bits(b) as f64, -(f32::from_bits(b) as f64)]).collect();
    let borders = [1.0f32, 3.92, 2.5, 1e-30, f32::MIN_POSITIVE, f32::from_bits(1), 10.0, f32::MAX];
    for b in borders {
        for x in [f32::from_bits(b.to_bits() - 1), b, f32::from_bits(b.to_bits() + 1)] {
            xs.extend([x as f64, -(x as f64)]);
        }
    }
    xs.extend([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN]);
    let mut c = Case::new();
    let x = c.typed(&[xs.len()], &xs, DType::F32);
    let out = c.node("aten.erf.default", vec![("self", Arg::Tensor(x))], &[(DType::F32, &[xs.len()])]);
    let (_, opencl) = c.run(&out);
    let Some(opencl) = opencl else { return };
    let mut worst = (0.0f64, 0.0f64);
    for (&x, &y) in xs.iter().zip(&opencl[0]) {
        let want = libm::erf(x);
        if want.is_nan() {
            assert!(y.is_nan(), "erf(NaN) = {y}");
            continue;
        }
        assert_eq!(y.is_sign_negative(), want.is_sign_negative(), "erf({x:e}) = {y:e}: wrong sign");
        let e = ulps(y, want);
        if e > worst.0 {
            worst = (e, x);
        }
    }
    assert!(worst.0 <= 2.0, "erf({:e}) is {:.2} ulp from float64 erf", worst.1, worst.0);
}
