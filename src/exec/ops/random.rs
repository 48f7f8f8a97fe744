//! Random and uninitialised tensors. Their values cannot equal PyTorch's (its Philox/MT19937
//! streams are not reproduced), so the interpreter draws from its own SplitMix64 stream seeded by
//! the node's name: a run is reproducible, and every value lies in the distribution's support
//! (`randint` in `[low, high)`, `bernoulli` in {0, 1}, `uniform_` in `[from, to)`, ...).
//! `empty*` tensors are zero-filled: PyTorch leaves their memory uninitialised, so only their
//! shape, dtype and strides mean anything. `tests/opinfo.rs` checks these cases by that rule.

use super::fvec::{need_float, F};
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// SplitMix64 seeded from the node name (FNV-1a), so equal graphs draw equal values.
struct Stream(u64);

impl Stream {
    fn of(cx: &OpCx) -> Stream {
        Stream(cx.node.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal by Box–Muller.
    fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * self.uniform()).cos()
    }

    /// Uniform integer in `[lo, hi)`.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo).max(1) as u64) as i64
    }
}

fn sizes(cx: &OpCx, name: &str) -> OpResult<Vec<usize>> {
    let s = cx.ints(name)?;
    if s.iter().any(|&d| d < 0) {
        return shape_err(format!("negative size in {s:?}"));
    }
    Ok(s.iter().map(|&d| d as usize).collect())
}

/// Fills `shape` with `draw` and rounds into `dtype`; floats that round up to the open end of a
/// half-open support (`1 - 2^-53` in float16) are nudged below it, as PyTorch's generators never
/// produce the end value.
fn fill(shape: Vec<usize>, dtype: DType, mut draw: impl FnMut() -> f64, hi: Option<f64>) -> OpResult<Tensor> {
    let n: usize = shape.iter().product();
    let round = super::fvec::round_to(dtype);
    let v = (0..n)
        .map(|_| {
            let x = draw();
            match hi {
                Some(h) if dtype.is_floating() && round(x) >= h => h - (h.abs().max(1.0) * dtype.finfo_eps().unwrap_or(f64::EPSILON)),
                _ => x,
            }
        })
        .collect();
    F::new(shape, v).to(dtype)
}

fn like(cx: &OpCx) -> OpResult<(Vec<usize>, DType)> {
    let t = cx.tensor("self")?;
    Ok((t.shape().to_vec(), cx.opt_dtype("dtype")?.unwrap_or(t.dtype())))
}

pub fn rand(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let mut s = Stream::of(cx);
    one(fill(sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::F32), || s.uniform(), Some(1.0))?)
}

pub fn randn(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let mut s = Stream::of(cx);
    one(fill(sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::F32), || s.normal(), None)?)
}

pub fn rand_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (shape, dtype) = like(cx)?;
    let mut s = Stream::of(cx);
    one(fill(shape, dtype, || s.uniform(), Some(1.0))?)
}

pub fn randn_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (shape, dtype) = like(cx)?;
    let mut s = Stream::of(cx);
    one(fill(shape, dtype, || s.normal(), None)?)
}

fn bounds(cx: &OpCx) -> OpResult<(i64, i64)> {
    let (lo, hi) = (cx.int_or("low", 0)?, cx.int("high")?);
    if hi <= lo {
        return Err(OpError::Arg { arg: "high".into(), message: format!("empty range [{lo}, {hi})") });
    }
    Ok((lo, hi))
}

pub fn randint(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (lo, hi) = bounds(cx)?;
    let mut s = Stream::of(cx);
    one(fill(sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::I64), || s.int(lo, hi) as f64, None)?)
}

pub fn randint_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (lo, hi) = bounds(cx)?;
    let (shape, dtype) = like(cx)?;
    let mut s = Stream::of(cx);
    one(fill(shape, dtype, || s.int(lo, hi) as f64, None)?)
}

pub fn randperm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let n = cx.int("n")?.max(0) as usize;
    let mut s = Stream::of(cx);
    let mut p: Vec<f64> = (0..n).map(|i| i as f64).collect();
    for i in (1..n).rev() {
        p.swap(i, s.int(0, i as i64 + 1) as usize);
    }
    one(F::new(vec![n], p).to(cx.opt_dtype("dtype")?.unwrap_or(DType::I64))?)
}

/// `bernoulli(self)` draws with probabilities `self`; `.p` with one probability.
pub fn bernoulli(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let probs: Vec<f64> = match (cx.opt_float("p")?, cx.arg("p")) {
        (_, Some(crate::ir::Arg::Tensor(_))) => F::of_broadcast(cx.tensor("p")?, x.shape())?.v,
        (Some(p), _) => vec![p; x.numel()],
        (None, _) => x.to_f64_vec(),
    };
    if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
        return Err(OpError::Arg { arg: "p".into(), message: "probabilities must lie in [0, 1]".into() });
    }
    let mut s = Stream::of(cx);
    let mut i = 0;
    one(fill(x.shape().to_vec(), x.dtype(), || {
        i += 1;
        f64::from(u8::from(s.uniform() < probs[i - 1]))
    }, None)?)
}

/// The in-place samplers (`uniform_`, `normal_`, ...) return a fresh tensor shaped as `self`.
fn in_place(cx: &OpCx, draw: impl FnMut(&mut Stream) -> f64, hi: Option<f64>) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let mut s = Stream::of(cx);
    let mut draw = draw;
    one(fill(x.shape().to_vec(), x.dtype(), || draw(&mut s), hi)?)
}

pub fn uniform_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.float_or("from", 0.0)?, cx.float_or("to", 1.0)?);
    need_float(cx.tensor("self")?)?;
    in_place(cx, |s| a + (b - a) * s.uniform(), Some(b))
}

pub fn normal_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (m, sd) = (cx.float_or("mean", 0.0)?, cx.float_or("std", 1.0)?);
    in_place(cx, |s| m + sd * s.normal(), None)
}

pub fn exponential_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let l = cx.float_or("lambd", 1.0)?;
    in_place(cx, |s| -(1.0 - s.uniform()).ln() / l, None)
}

pub fn cauchy_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (m, sg) = (cx.float_or("median", 0.0)?, cx.float_or("sigma", 1.0)?);
    in_place(cx, |s| m + sg * (std::f64::consts::PI * (s.uniform() - 0.5)).tan(), None)
}

pub fn log_normal_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (m, sd) = (cx.float_or("mean", 1.0)?, cx.float_or("std", 2.0)?);
    in_place(cx, |s| (m + sd * s.normal()).exp(), None)
}

/// Trials until the first success: integers from 1.
pub fn geometric_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let p = cx.float_or("p", 0.5)?;
    if !(p > 0.0 && p <= 1.0) {
        return Err(OpError::Arg { arg: "p".into(), message: format!("must lie in (0, 1], got {p}") });
    }
    in_place(cx, |s| if p == 1.0 { 1.0 } else { ((1.0 - s.uniform()).ln() / (1.0 - p).ln()).ceil().max(1.0) }, None)
}

/// `normal.Tensor_Tensor`, `.Tensor_float`, `.float_Tensor`, `.float_float`.
pub fn normal(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let mean = cx.opt_tensor("mean").ok().flatten();
    let std = cx.opt_tensor("std").ok().flatten();
    let (shape, dtype) = match (mean, std) {
        (Some(m), Some(s)) => (super::pointwise::broadcast_shapes(&[m.shape(), s.shape()])?, super::fvec::promoted(&[m, s])?),
        (Some(m), None) => (m.shape().to_vec(), m.dtype()),
        (None, Some(s)) => (s.shape().to_vec(), s.dtype()),
        (None, None) => (sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::F32)),
    };
    let n: usize = shape.iter().product();
    let mv = match mean {
        Some(m) => F::of_broadcast(m, &shape)?.v,
        None => vec![cx.float_or("mean", 0.0)?; n],
    };
    let sv = match std {
        Some(s) => F::of_broadcast(s, &shape)?.v,
        None => vec![cx.float_or("std", 1.0)?; n],
    };
    let mut s = Stream::of(cx);
    let mut i = 0;
    one(fill(shape, dtype, || {
        i += 1;
        mv[i - 1] + sv[i - 1] * s.normal()
    }, None)?)
}

/// Category indices drawn with weights `self` (`[C]` or `[N, C]`), without replacement unless
/// `replacement`.
pub fn multinomial(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let k = cx.int("num_samples")?.max(0) as usize;
    let repl = cx.bool_or("replacement", false)?;
    let (rows, c) = match x.shape() {
        [c] => (1, *c),
        [n, c] => (*n, *c),
        s => return shape_err(format!("multinomial takes a 1-D or 2-D input, got {s:?}")),
    };
    let w = x.to_f64_vec();
    let mut s = Stream::of(cx);
    let mut out = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let mut ws: Vec<f64> = w[r * c..(r + 1) * c].to_vec();
        if !repl && k > ws.iter().filter(|&&v| v > 0.0).count() {
            return shape_err(format!("cannot draw {k} samples without replacement from {} non-zero weights", ws.iter().filter(|&&v| v > 0.0).count()));
        }
        for _ in 0..k {
            let total: f64 = ws.iter().sum();
            let mut u = s.uniform() * total;
            let mut pick = ws.iter().rposition(|&v| v > 0.0).unwrap_or(0);
            for (i, &v) in ws.iter().enumerate() {
                if u < v {
                    pick = i;
                    break;
                }
                u -= v;
            }
            out.push(pick as f64);
            if !repl {
                ws[pick] = 0.0;
            }
        }
    }
    let shape = if x.ndim() == 1 { vec![k] } else { vec![rows, k] };
    one(F::new(shape, out).to(DType::I64)?)
}

/// Training-mode `rrelu`: each negative input scaled by a slope drawn from `[lower, upper]`.
pub fn rrelu_train(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let (lo, hi) = (cx.float_or("lower", 0.125)?, cx.float_or("upper", 1.0 / 3.0)?);
    let v = x.to_f64_vec();
    let mut s = Stream::of(cx);
    let mut i = 0;
    one(fill(x.shape().to_vec(), x.dtype(), || {
        i += 1;
        let a = v[i - 1];
        if a >= 0.0 {
            a
        } else {
            a * (lo + (hi - lo) * s.uniform())
        }
    }, None)?)
}

/// `empty_permuted`, `new_empty_strided`: uninitialised memory, zero-filled here.
pub fn empty_sized(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let dtype = match cx.opt_dtype("dtype")? {
        Some(d) => d,
        None => cx.opt_tensor("self")?.map_or(DType::F32, |t| t.dtype()),
    };
    one(F::new(sizes(cx, "size")?, vec![0.0; sizes(cx, "size")?.iter().product()]).to(dtype)?)
}
