//! The generator random ops draw from (Philox4x32-10, `ops::rng`), on the device and in the
//! interpreter, its reference in Rust: every sampler on 10⁵ samples or more in both backends —
//! moments within a few standard errors, a Kolmogorov–Smirnov statistic below its 0.1 % critical
//! value for the continuous ones, every value in the support — and the device's determinism:
//! the same seed gives the same bits across launches, work-group sizes and schedules (a random
//! producer recomputed inside a row-scheduled reduction), other seeds and other nodes differ,
//! and a mode-`none` plan draws the interpreter's very words. OpenCL parts skip where no device
//! is present (a failure under `XPU_WORKBENCH_REQUIRE_OPENCL`); the interpreter parts always run.

mod common;

use common::graph_case::{lowered, GraphCase};

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{self, Generator, Tensor};
use xpu_workbench::ir::{Arg, DType, Model, ValueId};
use xpu_workbench::lower::{self, Plan};
use xpu_workbench::runtime::plan::{compile_plan, run_on_device_with};
use xpu_workbench::runtime::{Device, KernelArg};

const N: usize = 100_000;

/// A graph under construction and the tensors fed to its inputs.
struct Case(GraphCase);

impl Case {
    fn new() -> Case {
        Case(GraphCase::new("random_kernels"))
    }

    fn input(&mut self, t: Tensor) -> ValueId {
        self.0.input(t)
    }

    fn node(&mut self, target: &str, args: Vec<(&str, Arg)>, outs: &[(DType, &[usize])]) -> Vec<ValueId> {
        self.0.node(target, args, outs)
    }

    fn one(&mut self, target: &str, args: Vec<(&str, Arg)>, dtype: DType, shape: &[usize]) -> ValueId {
        self.node(target, args, &[(dtype, shape)])[0]
    }
}

fn size(shape: &[usize]) -> Arg {
    Arg::Ints(shape.iter().map(|&s| s as i64).collect())
}

/// A lowered model with its inputs, run in both backends under any generator.
struct Ran {
    model: Model,
    inputs: Vec<Tensor>,
    plan: Plan,
}

impl Ran {
    fn new(case: Case, outs: &[ValueId], mode: Mode) -> Ran {
        let (model, inputs) = case.0.model(outs);
        let (plan, _) = lowered(&model, mode);
        Ran { model, inputs, plan }
    }

    fn interp(&self, gen: Generator) -> Vec<Tensor> {
        exec::run_seeded(&self.model, &self.model.graphs[0], &self.inputs, &gen).expect("interpreter")
    }

    fn device(&self, dev: &mut dyn Device, gen: Generator) -> Vec<Tensor> {
        let modules = compile_plan(&self.plan).expect("compiles");
        let b = exec::infer_bindings(&self.model, &self.plan.graph, &self.inputs).expect("bindings");
        run_on_device_with(dev, &self.plan, &modules, &self.model, &self.inputs, &b, &gen).expect("runs").outputs
    }
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec()
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (m, v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0))
}

/// The sample's mean within 5 standard errors of `mean`, its variance within 5 standard errors
/// of `var` (the variance's own standard error estimated from the sample's fourth moment).
fn assert_moments(what: &str, v: &[f64], mean: f64, var: f64) {
    let n = v.len() as f64;
    let (m, s2) = mean_var(v);
    let m4 = v.iter().map(|x| (x - m).powi(4)).sum::<f64>() / n;
    assert!((m - mean).abs() < 5.0 * (var / n).sqrt(), "{what}: mean {m}, expected {mean}");
    let se_var = ((m4 - s2 * s2) / n).sqrt();
    assert!((s2 - var).abs() < 5.0 * se_var, "{what}: variance {s2}, expected {var} (standard error {se_var})");
}

/// The Kolmogorov–Smirnov statistic of the sample against `cdf`, below its 0.1 % critical
/// value `1.95/√n`.
fn assert_ks(what: &str, v: &[f64], cdf: impl Fn(f64) -> f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len() as f64;
    let d = s.iter().enumerate().fold(0.0f64, |d, (i, &x)| {
        let f = cdf(x);
        d.max((f - i as f64 / n).abs()).max(((i + 1) as f64 / n - f).abs())
    });
    assert!(d < 1.95 / n.sqrt(), "{what}: Kolmogorov–Smirnov statistic {d}, critical {}", 1.95 / n.sqrt());
}

fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
}

/// Frequencies of the integers `0..k` against probabilities `p`, each within 5 standard errors.
fn assert_frequencies(what: &str, v: &[f64], p: &[f64]) {
    let n = v.len() as f64;
    for (k, pk) in p.iter().enumerate() {
        let f = v.iter().filter(|&&x| x == k as f64).count() as f64 / n;
        assert!((f - pk).abs() < 5.0 * (pk * (1.0 - pk) / n).sqrt() + 1e-12, "{what}: frequency of {k} is {f}, expected {pk}");
    }
}

/// Runs `check` on the interpreter's sample and, with a device, on the device's, and checks
/// that the two draw the same words (values equal to float32 rounding of the transforms).
fn both(what: &str, ran: &Ran, dev: &mut Option<impl Device>, tol: f64, check: impl Fn(&str, &[Tensor])) {
    let gen = Generator::seeded(0x5eed);
    let want = ran.interp(gen);
    check(&format!("{what} (interpreter)"), &want);
    let Some(dev) = dev.as_mut() else { return };
    let got = ran.device(dev, gen);
    check(&format!("{what} (OpenCL)"), &got);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!((g.shape(), g.dtype()), (w.shape(), w.dtype()), "{what}");
        let (g, w) = (values(g), values(w));
        let off: Vec<(f64, f64)> = g.iter().zip(&w).filter(|(a, b)| (*a - *b).abs().is_nan() || (*a - *b).abs() > tol * b.abs().max(1.0)).map(|(a, b)| (*a, *b)).collect();
        // Discontinuous transforms (`ceil`, `u < p`) may round across a step on a few elements.
        assert!(off.len() <= g.len() / 10_000, "{what} output {k}: {} of {} elements differ from the interpreter's, e.g. {:?}", off.len(), g.len(), &off[..off.len().min(5)]);
    }
}

#[test]
fn uniform_and_normal_samplers_have_their_distribution() {
    let mut dev = common::opencl_device();
    for dtype in [DType::F32, DType::F64] {
        let mut c = Case::new();
        let u = c.one("aten.rand.default", vec![("size", size(&[N])), ("dtype", Arg::ScalarType(dtype))], dtype, &[N]);
        let n = c.one("aten.randn.default", vec![("size", size(&[400, N / 400])), ("dtype", Arg::ScalarType(dtype))], dtype, &[400, N / 400]);
        let ran = Ran::new(c, &[u, n], Mode::None);
        both(&format!("rand/randn {dtype}"), &ran, &mut dev, 1e-5, |what, out| {
            let (u, n) = (values(&out[0]), values(&out[1]));
            assert!(u.iter().all(|x| (0.0..1.0).contains(x)), "{what}: outside [0, 1)");
            assert_moments(what, &u, 0.5, 1.0 / 12.0);
            assert_ks(what, &u, |x| x.clamp(0.0, 1.0));
            assert_moments(what, &n, 0.0, 1.0);
            assert_ks(what, &n, normal_cdf);
        });
    }
}

#[test]
fn parameterised_continuous_samplers_have_their_distribution() {
    let mut dev = common::opencl_device();
    let mut c = Case::new();
    let x = c.input(Tensor::from_vec(&[N], vec![0.0f32; N]).unwrap());
    let f = DType::F32;
    let uni = c.one("aten.uniform.default", vec![("self", Arg::Tensor(x)), ("from", Arg::Float(-3.0)), ("to", Arg::Float(5.0))], f, &[N]);
    let exp = c.one("aten.exponential.default", vec![("self", Arg::Tensor(x)), ("lambd", Arg::Float(2.0))], f, &[N]);
    let cau = c.one("aten.cauchy.default", vec![("self", Arg::Tensor(x)), ("median", Arg::Float(1.0)), ("sigma", Arg::Float(2.0))], f, &[N]);
    let logn = c.one("aten.log_normal.default", vec![("self", Arg::Tensor(x)), ("mean", Arg::Float(0.5)), ("std", Arg::Float(0.4))], f, &[N]);
    let norm = c.one("aten.normal.default", vec![("self", Arg::Tensor(x)), ("mean", Arg::Float(-2.0)), ("std", Arg::Float(3.0))], f, &[N]);
    let ran = Ran::new(c, &[uni, exp, cau, logn, norm], Mode::None);
    both("uniform/exponential/cauchy/log_normal/normal", &ran, &mut dev, 1e-4, |what, out| {
        let v: Vec<Vec<f64>> = out.iter().map(values).collect();
        assert!(v[0].iter().all(|x| (-3.0..5.0).contains(x)), "{what}: uniform outside [-3, 5)");
        assert_moments(&format!("{what} uniform"), &v[0], 1.0, 64.0 / 12.0);
        assert_ks(&format!("{what} uniform"), &v[0], |x| ((x + 3.0) / 8.0).clamp(0.0, 1.0));
        assert!(v[1].iter().all(|x| *x >= 0.0), "{what}: exponential below 0");
        assert_moments(&format!("{what} exponential"), &v[1], 0.5, 0.25);
        assert_ks(&format!("{what} exponential"), &v[1], |x| 1.0 - (-2.0 * x.max(0.0)).exp());
        assert_ks(&format!("{what} cauchy"), &v[2], |x| 0.5 + ((x - 1.0) / 2.0).atan() / std::f64::consts::PI);
        assert!(v[3].iter().all(|x| *x > 0.0), "{what}: log-normal not positive");
        let logs: Vec<f64> = v[3].iter().map(|x| x.ln()).collect();
        assert_moments(&format!("{what} log_normal"), &logs, 0.5, 0.16);
        assert_ks(&format!("{what} log_normal"), &logs, |x| normal_cdf((x - 0.5) / 0.4));
        assert_moments(&format!("{what} normal"), &v[4], -2.0, 9.0);
        assert_ks(&format!("{what} normal"), &v[4], |x| normal_cdf((x + 2.0) / 3.0));
    });
}

#[test]
fn normal_with_tensor_parameters_broadcasts_them() {
    let mut dev = common::opencl_device();
    let mut c = Case::new();
    let rows = 100;
    let mean = c.input(Tensor::from_vec(&[rows, 1], (0..rows).map(|i| i as f64 - 50.0).collect::<Vec<_>>()).unwrap());
    let std = c.input(Tensor::from_vec(&[N / rows], (0..N / rows).map(|j| 0.5 + (j % 7) as f64).collect::<Vec<_>>()).unwrap());
    let out = c.one("aten.normal.Tensor_Tensor", vec![("mean", Arg::Tensor(mean)), ("std", Arg::Tensor(std))], DType::F64, &[rows, N / rows]);
    let ran = Ran::new(c, &[out], Mode::None);
    both("normal.Tensor_Tensor", &ran, &mut dev, 1e-9, |what, out| {
        let v = values(&out[0]);
        let cols = N / rows;
        let z: Vec<f64> = v.iter().enumerate().map(|(i, x)| (x - ((i / cols) as f64 - 50.0)) / (0.5 + ((i % cols) % 7) as f64)).collect();
        assert_moments(what, &z, 0.0, 1.0);
        assert_ks(what, &z, normal_cdf);
    });
}

#[test]
fn discrete_samplers_have_their_distribution() {
    let mut dev = common::opencl_device();
    let mut c = Case::new();
    let x = c.input(Tensor::from_vec(&[N], vec![0.0f32; N]).unwrap());
    let probs = c.input(Tensor::from_vec(&[N], (0..N).map(|i| (i % 5) as f32 / 4.0).collect::<Vec<_>>()).unwrap());
    let geo = c.one("aten.geometric.default", vec![("self", Arg::Tensor(x)), ("p", Arg::Float(0.3))], DType::F32, &[N]);
    let ber = c.one("aten.bernoulli.p", vec![("self", Arg::Tensor(x)), ("p", Arg::Float(0.3))], DType::F32, &[N]);
    let berp = c.one("aten.bernoulli.default", vec![("self", Arg::Tensor(probs))], DType::F32, &[N]);
    let int = c.one("aten.randint.low", vec![("low", Arg::Int(-3)), ("high", Arg::Int(7)), ("size", size(&[N]))], DType::I64, &[N]);
    let ran = Ran::new(c, &[geo, ber, berp, int], Mode::None);
    both("geometric/bernoulli/randint", &ran, &mut dev, 0.0, |what, out| {
        let v: Vec<Vec<f64>> = out.iter().map(values).collect();
        assert!(v[0].iter().all(|x| *x >= 1.0 && x.fract() == 0.0), "{what}: geometric outside 1, 2, ...");
        assert_moments(&format!("{what} geometric"), &v[0], 1.0 / 0.3, 0.7 / 0.09);
        assert_frequencies(&format!("{what} bernoulli"), &v[1], &[0.7, 0.3]);
        for k in 0..5 {
            let p = k as f64 / 4.0;
            let sub: Vec<f64> = v[2].iter().skip(k).step_by(5).copied().collect();
            assert_frequencies(&format!("{what} bernoulli p={p}"), &sub, &[1.0 - p, p]);
        }
        let shifted: Vec<f64> = v[3].iter().map(|x| x + 3.0).collect();
        assert_frequencies(&format!("{what} randint"), &shifted, &[0.1; 10]);
    });
}

#[test]
fn randint_is_exact_in_every_integer_dtype_and_range() {
    let mut dev = common::opencl_device();
    let n = 4096;
    let ranges: [(i64, i64); 6] = [(0, 2), (-128, 128), (5, 6), (0, 1 << 40), (i64::MIN, i64::MAX), (i64::MIN / 2, i64::MAX)];
    let mut c = Case::new();
    let mut outs = Vec::new();
    for dtype in [DType::I64, DType::I32, DType::I16, DType::I8, DType::U8, DType::Bool, DType::F32, DType::F16] {
        let (lo, hi) = match dtype {
            DType::Bool => (0, 2),
            DType::U8 => (0, 256),
            DType::I8 | DType::I16 => (-100, 100),
            DType::F16 => (-1000, 1000),
            _ => (-1_000_000, 1_000_000),
        };
        outs.push((lo, hi, c.one("aten.randint.low", vec![("low", Arg::Int(lo)), ("high", Arg::Int(hi)), ("size", size(&[n])), ("dtype", Arg::ScalarType(dtype))], dtype, &[n])));
    }
    for (lo, hi) in ranges {
        outs.push((lo, hi, c.one("aten.randint.low", vec![("low", Arg::Int(lo)), ("high", Arg::Int(hi)), ("size", size(&[n]))], DType::I64, &[n])));
    }
    let ran = Ran::new(c, &outs.iter().map(|o| o.2).collect::<Vec<_>>(), Mode::None);
    let gen = Generator::seeded(17);
    let want = ran.interp(gen);
    let check = |what: &str, out: &[Tensor]| {
        for ((lo, hi, _), t) in outs.iter().zip(out) {
            let v: Vec<i128> = match t.dtype() {
                DType::I64 => t.to_i64_vec().iter().map(|x| i128::from(*x)).collect(),
                _ => values(t).iter().map(|x| *x as i128).collect(),
            };
            assert!(v.iter().all(|x| *x >= i128::from(*lo) && *x < i128::from(*hi)), "{what} {}: outside [{lo}, {hi})", t.dtype());
            // The range's two halves are both drawn.
            let mid = (i128::from(*lo) + i128::from(*hi) + 1) / 2;
            let halves = v.iter().any(|x| *x < mid) && v.iter().any(|x| *x >= mid);
            assert!(halves || hi - lo == 1, "{what} {}: [{lo}, {hi}) half empty", t.dtype());
        }
    };
    check("interpreter", &want);
    let Some(dev) = dev.as_mut() else { return };
    let got = ran.device(dev, gen);
    check("OpenCL", &got);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_i64_vec(), w.to_i64_vec(), "{}: the device draws the interpreter's integers", g.dtype());
    }
}

#[test]
fn multinomial_and_randperm_sample_as_specified() {
    let mut dev = common::opencl_device();
    let rows = N / 4;
    let w = [1.0f32, 2.0, 3.0, 4.0, 0.0];
    let mut c = Case::new();
    let weights = c.input(Tensor::from_vec(&[rows, 5], (0..rows * 5).map(|i| w[i % 5]).collect::<Vec<_>>()).unwrap());
    let with = c.one("aten.multinomial.default", vec![("self", Arg::Tensor(weights)), ("num_samples", Arg::Int(4)), ("replacement", Arg::Bool(true))], DType::I64, &[rows, 4]);
    let without = c.one("aten.multinomial.default", vec![("self", Arg::Tensor(weights)), ("num_samples", Arg::Int(4)), ("replacement", Arg::Bool(false))], DType::I64, &[rows, 4]);
    let perm = c.one("aten.randperm.default", vec![("n", Arg::Int(1000))], DType::I64, &[1000]);
    let ran = Ran::new(c, &[with, without, perm], Mode::None);
    both("multinomial/randperm", &ran, &mut dev, 0.0, |what, out| {
        let p: Vec<f64> = w.iter().map(|x| f64::from(*x) / 10.0).collect();
        assert_frequencies(&format!("{what} with replacement"), &values(&out[0]), &p);
        let v = values(&out[1]);
        assert!(v.chunks(4).all(|r| { let mut s = r.to_vec(); s.sort_by(f64::total_cmp); s == [0.0, 1.0, 2.0, 3.0] }), "{what}: without replacement repeats or draws a zero weight");
        let first: Vec<f64> = v.iter().step_by(4).copied().collect();
        assert_frequencies(&format!("{what} first draw"), &first, &p);
        let mut perm = values(&out[2]);
        perm.sort_by(f64::total_cmp);
        assert!(perm.iter().enumerate().all(|(i, x)| *x == i as f64), "{what}: randperm is not a permutation");
    });
}

#[test]
fn randperm_is_uniform_over_seeds() {
    let mut dev = common::opencl_device();
    let n = 1000;
    let mut c = Case::new();
    let perm = c.one("aten.randperm.default", vec![("n", Arg::Int(n as i64))], DType::I64, &[n]);
    let ran = Ran::new(c, &[perm], Mode::None);
    let (mut early, mut late) = (Vec::new(), Vec::new());
    for seed in 0..100u64 {
        let gen = Generator::seeded(seed);
        let v = values(&ran.interp(gen)[0]);
        if let Some(d) = dev.as_mut() {
            assert_eq!(values(&ran.device(d, gen)[0]), v, "seed {seed}: the device permutes as the interpreter");
        }
        early.extend(v[..n / 2].iter().map(|x| (x + 0.5) / n as f64));
        late.extend(v[n / 2..].iter().map(|x| (x + 0.5) / n as f64));
    }
    // Where the first and second half of the positions send their elements: uniform both.
    assert_ks("randperm early positions", &early, |x| x.clamp(0.0, 1.0));
    assert_ks("randperm late positions", &late, |x| x.clamp(0.0, 1.0));
}

#[test]
fn training_dropout_and_rrelu_draw_masks_and_slopes() {
    let mut dev = common::opencl_device();
    let mut c = Case::new();
    let x = c.input(Tensor::from_vec(&[N], (0..N).map(|i| if i % 2 == 0 { 1.5f32 } else { -2.0 }).collect::<Vec<_>>()).unwrap());
    let drop = c.node("aten.native_dropout.default", vec![("input", Arg::Tensor(x)), ("p", Arg::Float(0.2)), ("train", Arg::Bool(true))], &[(DType::F32, &[N]), (DType::Bool, &[N])]);
    let rr = c.one("aten.rrelu.default", vec![("self", Arg::Tensor(x)), ("lower", Arg::Float(0.1)), ("upper", Arg::Float(0.3)), ("training", Arg::Bool(true))], DType::F32, &[N]);
    let ran = Ran::new(c, &[drop[0], drop[1], rr], Mode::None);
    both("native_dropout/rrelu", &ran, &mut dev, 1e-6, |what, out| {
        let (o, m, r) = (values(&out[0]), values(&out[1]), values(&out[2]));
        assert_frequencies(&format!("{what} mask"), &m, &[0.2, 0.8]);
        let x = |i: usize| if i.is_multiple_of(2) { 1.5 } else { -2.0 };
        assert!(o.iter().zip(&m).enumerate().all(|(i, (o, m))| (o - x(i) * m / 0.8).abs() < 1e-5), "{what}: output is not input·mask/(1 − p)");
        assert!(r.iter().step_by(2).all(|v| *v == 1.5), "{what}: rrelu changed a positive input");
        let slopes: Vec<f64> = r.iter().skip(1).step_by(2).map(|v| v / -2.0).collect();
        assert!(slopes.iter().all(|s| (0.1..0.3).contains(s) || (s - 0.3).abs() < 1e-6), "{what}: slope outside [0.1, 0.3)");
        assert_ks(&format!("{what} slopes"), &slopes, |s| ((s - 0.1) / 0.2).clamp(0.0, 1.0));
    });
}

/// The dropout family in training: the kernels draw the interpreter's noise (per element, or
/// per (batch, channel) plane for the feature variants) and give its values; `p = 1` zeroes.
#[test]
fn training_dropout_family_draws_the_interpreters_noise() {
    let mut dev = common::opencl_device();
    let shape = [8usize, 50, 25];
    let n: usize = shape.iter().product();
    let mut c = Case::new();
    let x = c.input(Tensor::from_vec(&shape, (0..n).map(|i| 1.0 + (i % 25) as f32).collect::<Vec<_>>()).unwrap());
    let mut outs = Vec::new();
    for (target, p) in [("aten.dropout.default", 0.3), ("aten.feature_dropout.default", 0.5), ("aten.alpha_dropout.default", 0.2), ("aten.feature_alpha_dropout.default", 0.4), ("aten.dropout.default", 1.0)] {
        outs.push(c.one(target, vec![("input", Arg::Tensor(x)), ("p", Arg::Float(p)), ("train", Arg::Bool(true))], DType::F32, &shape));
    }
    let ran = Ran::new(c, &outs, Mode::None);
    both("dropout family", &ran, &mut dev, 1e-5, |what, out| {
        let x = |i: usize| 1.0 + (i % 25) as f64;
        let d = values(&out[0]);
        assert!(d.iter().enumerate().all(|(i, v)| *v == 0.0 || (v - x(i) / 0.7).abs() < 1e-5 * v.abs()), "{what}: dropout is not 0 or x/(1 - p)");
        assert_frequencies(&format!("{what} dropout kept"), &d.iter().map(|v| f64::from(u8::from(*v != 0.0))).collect::<Vec<_>>(), &[0.3, 0.7]);
        let f = values(&out[1]);
        assert!(f.chunks(25).all(|c| c.iter().all(|v| *v == 0.0) || c.iter().all(|v| *v != 0.0)), "{what}: feature dropout splits a plane");
        // Alpha dropout: x·a + α·a·p where it keeps, α·a·(p − 1) where it drops.
        let selu = |p: f64| {
            let a = 1.0 / ((1.758_099_340_847_376_6f64.powi(2) * p + 1.0) * (1.0 - p)).sqrt();
            move |x: f64, v: f64| (v - (x * a + 1.758_099_340_847_376_6 * a * p)).abs() < 1e-4 * v.abs().max(1.0) || (v - 1.758_099_340_847_376_6 * a * (p - 1.0)).abs() < 1e-5
        };
        let (a, on) = (values(&out[2]), selu(0.2));
        assert!(a.iter().enumerate().all(|(i, v)| on(x(i), *v)), "{what}: alpha dropout values");
        let (fa, on) = (values(&out[3]), selu(0.4));
        assert!(fa.iter().enumerate().all(|(i, v)| on(x(i), *v)), "{what}: feature alpha dropout values");
        assert!(values(&out[4]).iter().all(|v| *v == 0.0), "{what}: p = 1 does not zero");
    });
}

#[test]
fn the_device_draws_the_same_bits_for_a_seed_and_others_for_other_seeds_and_nodes() {
    let Some(mut dev) = common::opencl_device() else { return };
    let mut c = Case::new();
    let a = c.one("aten.rand.default", vec![("size", size(&[4096]))], DType::F32, &[4096]);
    let b = c.one("aten.rand.default", vec![("size", size(&[4096]))], DType::F32, &[4096]);
    let ran = Ran::new(c, &[a, b], Mode::None);
    let gen = Generator::seeded(42);
    let first = ran.device(&mut dev, gen);
    let again = ran.device(&mut dev, gen);
    assert_eq!(values(&first[0]), values(&again[0]), "a second launch with the same seed");
    assert_ne!(values(&first[0]), values(&first[1]), "two random nodes of one plan share a stream");
    let other = ran.device(&mut dev, Generator::seeded(43));
    assert_ne!(values(&first[0]), values(&other[0]), "another seed draws the same values");
    // The offset moves every node's stream: node 0 at offset 1 draws node 1's values.
    let shifted = ran.device(&mut dev, Generator { seed: 42, offset: 1 });
    assert_eq!(values(&shifted[0]), values(&first[1]));
    // The interpreter draws the same words (uniform24 is exact in float32).
    assert_eq!(values(&ran.interp(gen)[0]), values(&first[0]));
}

#[test]
fn work_group_sizes_do_not_change_the_draws() {
    let Some(mut dev) = common::opencl_device() else { return };
    let n = 1000;
    let mut c = Case::new();
    let a = c.one("aten.randn.default", vec![("size", size(&[n]))], DType::F32, &[n]);
    let ran = Ran::new(c, &[a], Mode::None);
    let gen = Generator::seeded(9);
    let want = values(&ran.interp(gen)[0]);
    let kernel = ran.plan.kernels().next().expect("one kernel").clone();
    let module = xpu_workbench::codegen::spirv::compile(&kernel).expect("compiles");
    let program = dev.build(&module.name, &module.words).expect("builds");
    for local in [1usize, 7, 64, 128] {
        let out = dev.alloc(n * 4).expect("alloc");
        let mut args = vec![KernelArg::Buffer(out)];
        args.extend(xpu_workbench::runtime::plan::rng_args(&kernel, &gen).into_iter().map(KernelArg::I64));
        dev.launch(program, &kernel.name, &args, [n.div_ceil(local) * local, 1, 1], Some([local, 1, 1])).expect("launch");
        dev.finish().expect("finish");
        let mut bytes = vec![0u8; n * 4];
        dev.read(out, &mut bytes).expect("read");
        let got: Vec<f64> = bytes.chunks(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64).collect();
        assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-5 * w.abs().max(1.0)), "work-groups of {local}");
        dev.free(out).expect("free");
    }
}

#[test]
fn a_random_producer_fused_into_a_row_reduction_draws_what_it_draws_alone() {
    let Some(mut dev) = common::opencl_device() else { return };
    let mut c = Case::new();
    let r = c.one("aten.rand.default", vec![("size", size(&[64, 300]))], DType::F32, &[64, 300]);
    let s = c.one("aten.sum.dim_IntList", vec![("self", Arg::Tensor(r)), ("dim", Arg::Ints(vec![1]))], DType::F32, &[64]);
    let e = c.one("aten.exp.default", vec![("self", Arg::Tensor(r))], DType::F32, &[64, 300]);
    let (model, inputs) = c.0.model(&[s, e]);
    let gen = Generator::seeded(3);
    let mut run = |mode: Mode| {
        let plan = lower::lower(&model, &model.graphs[0], mode, &Marks::default()).expect("lowers");
        let modules = compile_plan(&plan).expect("compiles");
        let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
        let out = run_on_device_with(&mut dev, &plan, &modules, &model, &inputs, &b, &gen).expect("runs").outputs;
        (plan, out)
    };
    let (alone, want) = run(Mode::None);
    let (fused, got) = run(Mode::Full);
    assert!(fused.kernel_count() < alone.kernel_count(), "full mode fuses the random producer");
    assert!(fused.kernels().any(|k| matches!(k.schedule, xpu_workbench::lower::schedule::Schedule::Rows { .. }) && k.draws()), "the reduction draws on the row schedule");
    for (g, w) in got.iter().zip(&want) {
        let (g, w) = (values(g), values(w));
        assert!(g.iter().zip(&w).all(|(a, b)| (a - b).abs() <= 1e-4 * b.abs().max(1.0)), "fused and separate kernels draw differently");
    }
}

/// Case `k`'s graph of PyTorch's OpInfo archive for `op`, written to a file of its own.
fn opinfo_pt2(op: &str, k: usize, dir: &std::path::Path) -> std::path::PathBuf {
    use std::io::Read;
    let gz = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/opinfo/{op}.zip.gz"))).expect("archive");
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut raw).expect("gzip");
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(raw)).expect("zip");
    let mut pt2 = Vec::new();
    z.by_name(&format!("{k}.pt2")).expect("case").read_to_end(&mut pt2).expect("read");
    let path = dir.join(format!("{op}_{k}.pt2"));
    std::fs::write(&path, pt2).expect("write");
    path
}

/// PyTorch's own `uniform_` graph (an OpInfo sample: 125 values in [1, 2)) through the CLI as
/// users call it: `run --check` compares its random output by rule and says so, and `--seed`
/// fixes the draws on every device.
#[test]
fn run_checks_random_outputs_by_rule_and_seeds_them() {
    let dir = std::env::temp_dir().join(format!("xpu-random-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = opinfo_pt2("uniform", 1, &dir);
    let mut devices = vec!["reference"];
    if common::opencl_device().is_some() {
        devices.push("opencl");
    }
    for device in devices {
        let outputs = |seed: &str| {
            let save = dir.join(format!("{device}-{seed}"));
            let (code, out, err) = common::run_cli(&[
                "run", file.to_str().unwrap(), "--mode", "none", "--device", device, "--check", "--json", "--seed", seed, "--save-outputs", save.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{device}: {err}");
            let v: serde_json::Value = serde_json::from_str(&out).expect("json");
            assert_eq!(v["check"]["ok"], true, "{device}: {v}");
            assert_eq!(v["check"]["by_rule"], serde_json::json!([{"output": 0, "ok": true, "why": null}]), "{device}");
            let bytes = std::fs::read(save.join("out0.npy")).expect("out0.npy");
            let t = xpu_workbench::npy::parse("out0.npy", &bytes).expect("npy");
            let v = Tensor::from_le_bytes(t.dtype, &t.shape, &t.data).expect("tensor").to_f64_vec();
            assert!(v.len() == 125 && v.iter().all(|x| (1.0..2.0).contains(x)), "{device}: outside [1, 2)");
            v
        };
        assert_eq!(outputs("3"), outputs("3"), "{device}: one seed, one draw");
        assert_ne!(outputs("3"), outputs("4"), "{device}: another seed, the same draw");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Fractional max pooling's windows come from its samples (`rand` draws them in PyTorch's
/// graphs): given the samples, values and indices are deterministic, and the kernel's equal the
/// interpreter's exactly, in 2-D (samples (w, h)) and 3-D (samples (t, h, w)), batched or not.
#[test]
fn fractional_max_pool_windows_follow_the_samples() {
    /// Target, input shape, kernel size, output size.
    type PoolCase = (&'static str, Vec<usize>, Vec<i64>, Vec<usize>);
    let Some(mut dev) = common::opencl_device() else { return };
    let cases: [PoolCase; 3] = [
        ("aten.fractional_max_pool2d.default", vec![2, 3, 11, 9], vec![3, 2], vec![4, 5]),
        ("aten.fractional_max_pool2d.default", vec![3, 10, 10], vec![2, 2], vec![7, 1]),
        ("aten.fractional_max_pool3d.default", vec![2, 2, 7, 6, 9], vec![2, 3, 2], vec![3, 2, 5]),
    ];
    for (target, shape, kernel, out) in cases {
        let sd = kernel.len();
        let lead = &shape[..shape.len() - sd];
        let (batch, planes) = if lead.len() == 2 { (lead[0], lead[1]) } else { (1, lead[0]) };
        let mut c = Case::new();
        let n: usize = shape.iter().product();
        let x = c.input(Tensor::from_vec(&shape, (0..n).map(|i| ((i * 7919) % 1009) as f32 / 100.0).collect::<Vec<_>>()).unwrap());
        let samples = c.input(Tensor::from_vec(&[batch, planes, sd], (0..batch * planes * sd).map(|i| ((i * 37) % 100) as f32 / 100.0).collect::<Vec<_>>()).unwrap());
        let mut oshape = lead.to_vec();
        oshape.extend(&out);
        let outs = c.node(
            target,
            vec![
                ("self", Arg::Tensor(x)),
                ("kernel_size", Arg::Ints(kernel.clone())),
                ("output_size", Arg::Ints(out.iter().map(|&o| o as i64).collect())),
                ("random_samples", Arg::Tensor(samples)),
            ],
            &[(DType::F32, &oshape), (DType::I64, &oshape)],
        );
        let ran = Ran::new(c, &outs, Mode::None);
        let want = ran.interp(Generator::default());
        let got = ran.device(&mut dev, Generator::default());
        assert_eq!(values(&got[0]), values(&want[0]), "{target} {shape:?}: values");
        assert_eq!(got[1].to_i64_vec(), want[1].to_i64_vec(), "{target} {shape:?}: indices");
    }
}
