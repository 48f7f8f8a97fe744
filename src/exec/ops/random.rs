//! Random and uninitialised tensors. Their values cannot equal PyTorch's (its Philox/MT19937
//! streams are not reproduced), so the interpreter draws from the run's generator: Philox4x32-10
//! keyed by the seed, one stream per drawing node, one draw per output element as
//! `crate::ops::rng` lays them out, transformed as `crate::ops::sample` defines — the kernels
//! draw the same words. Every value lies in the distribution's support (`randint` in
//! `[low, high)`, `bernoulli` in {0, 1}, `uniform` in `[from, to)` after rounding to the dtype,
//! ...). `empty*` tensors are zero-filled: PyTorch leaves their memory uninitialised, so only
//! their shape, dtype and strides mean anything. `tests/opinfo.rs` checks these cases by rule.

use super::fvec::{need_float, F};
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;
use crate::ops::rng::largest_below;
use crate::ops::sample;

/// The node's draws; `wide` (float64) samplers take 53-bit uniforms, the others 24-bit ones.
struct Draws<'c, 'a> {
    cx: &'c OpCx<'a>,
    wide: bool,
}

impl<'c, 'a> Draws<'c, 'a> {
    fn new(cx: &'c OpCx<'a>, dtype: DType) -> Self {
        Draws { cx, wide: dtype == DType::F64 }
    }

    fn bits(&self, i: usize) -> [u32; 4] {
        self.cx.rng.bits(i as u64)
    }

    fn uniform(&self, i: usize) -> f64 {
        sample::uniform(self.bits(i), self.wide)
    }

    fn normal(&self, i: usize) -> f64 {
        sample::normal(self.bits(i), self.wide)
    }
}

fn sizes(cx: &OpCx, name: &str) -> OpResult<Vec<usize>> {
    let s = cx.ints(name)?;
    if s.iter().any(|&d| d < 0) {
        return shape_err(format!("negative size in {s:?}"));
    }
    Ok(s.iter().map(|&d| d as usize).collect())
}

/// `shape` filled with `f(index)`, rounded into `dtype`.
fn fill(shape: Vec<usize>, dtype: DType, f: impl Fn(usize) -> f64) -> OpResult<Tensor> {
    let n: usize = shape.iter().product();
    F::new(shape, (0..n).map(f).collect()).to(dtype)
}

/// Uniform in `[lo, hi)` of float `dtype`: clamped below `hi` as rounded to the dtype.
fn fill_uniform(cx: &OpCx, shape: Vec<usize>, dtype: DType, lo: f64, hi: f64) -> OpResult<Tensor> {
    if !dtype.is_floating() {
        return Err(OpError::DType(dtype));
    }
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return Err(OpError::Arg { arg: "to".into(), message: format!("expects from <= to, got [{lo}, {hi})") });
    }
    // `from == to` gives `from`, as PyTorch's.
    let (d, top) = (Draws::new(cx, dtype), if lo == hi { lo } else { largest_below(dtype, hi) });
    fill(shape, dtype, |i| (lo + (hi - lo) * d.uniform(i)).min(top))
}

fn fill_normal(cx: &OpCx, shape: Vec<usize>, dtype: DType, mean: f64, std: f64) -> OpResult<Tensor> {
    if !dtype.is_floating() {
        return Err(OpError::DType(dtype));
    }
    check_std(std)?;
    let d = Draws::new(cx, dtype);
    fill(shape, dtype, |i| mean + std * d.normal(i))
}

fn check_std(std: f64) -> OpResult<()> {
    if std >= 0.0 {
        Ok(())
    } else {
        Err(OpError::Arg { arg: "std".into(), message: format!("must be non-negative, got {std}") })
    }
}

fn like(cx: &OpCx) -> OpResult<(Vec<usize>, DType)> {
    let t = cx.tensor("self")?;
    Ok((t.shape().to_vec(), cx.opt_dtype("dtype")?.unwrap_or(t.dtype())))
}

pub fn rand(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(fill_uniform(cx, sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::F32), 0.0, 1.0)?)
}

pub fn randn(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(fill_normal(cx, sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::F32), 0.0, 1.0)?)
}

pub fn rand_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (shape, dtype) = like(cx)?;
    one(fill_uniform(cx, shape, dtype, 0.0, 1.0)?)
}

pub fn randn_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (shape, dtype) = like(cx)?;
    one(fill_normal(cx, shape, dtype, 0.0, 1.0)?)
}

fn bounds(cx: &OpCx) -> OpResult<(i64, i64)> {
    let (lo, hi) = (cx.int_or("low", 0)?, cx.int("high")?);
    if hi <= lo {
        return Err(OpError::Arg { arg: "high".into(), message: format!("empty range [{lo}, {hi})") });
    }
    Ok((lo, hi))
}

/// Exact integers in `[lo, hi)` (built from i64, not through f64: int64 ranges beyond 2⁵³).
fn fill_int(cx: &OpCx, shape: Vec<usize>, dtype: DType) -> OpResult<Tensor> {
    let (lo, hi) = bounds(cx)?;
    let n: usize = shape.iter().product();
    let v: Vec<i64> = (0..n).map(|i| sample::randint(cx.rng.bits(i as u64), lo, hi)).collect();
    let t = Tensor::from_vec(&shape, v).ok_or_else(|| OpError::Shape(format!("{n} values for shape {shape:?}")))?;
    t.cast(dtype).map_err(OpError::DType)
}

pub fn randint(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(fill_int(cx, sizes(cx, "size")?, cx.opt_dtype("dtype")?.unwrap_or(DType::I64))?)
}

pub fn randint_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (shape, dtype) = like(cx)?;
    one(fill_int(cx, shape, dtype)?)
}

/// Output `j` is the stable rank of key `j` (`sample::key63`): the inverse of the permutation
/// that sorts the keys, uniformly random as that one is.
pub fn randperm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let n = cx.int("n")?;
    if n < 0 {
        return shape_err(format!("randperm of a negative count {n}"));
    }
    let keys: Vec<i64> = (0..n as u64).map(|j| sample::key63(cx.rng.bits(j))).collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&j| (keys[j], j));
    let mut rank = vec![0i64; keys.len()];
    for (r, &j) in order.iter().enumerate() {
        rank[j] = r as i64;
    }
    let t = Tensor::from_vec(&[rank.len()], rank).ok_or_else(|| OpError::Shape("randperm".into()))?;
    one(t.cast(cx.opt_dtype("dtype")?.unwrap_or(DType::I64)).map_err(OpError::DType)?)
}

/// `bernoulli(self)` draws with probabilities `self`; `.p` with one probability; `.Tensor`
/// with probabilities `p` broadcast to `self`. One is drawn where `u < p`, `u` as wide as the
/// probabilities' dtype (`self`'s for a number).
pub fn bernoulli(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let (probs, pdtype): (Vec<f64>, DType) = match (cx.opt_float("p")?, cx.arg("p")) {
        (_, Some(crate::ir::Arg::Tensor(_))) => {
            let p = cx.tensor("p")?;
            (F::of_broadcast(p, x.shape())?.v, p.dtype())
        }
        (Some(p), _) => (vec![p; x.numel()], x.dtype()),
        (None, _) => (x.to_f64_vec(), x.dtype()),
    };
    if probs.iter().any(|p| !(0.0..=1.0).contains(p)) {
        return Err(OpError::Arg { arg: "p".into(), message: "probabilities must lie in [0, 1]".into() });
    }
    let d = Draws::new(cx, pdtype);
    one(fill(x.shape().to_vec(), x.dtype(), |i| f64::from(u8::from(d.uniform(i) < probs[i])))?)
}

/// The functional samplers of `uniform_`, `normal_`, ... return a fresh tensor shaped as `self`.
fn in_place(cx: &OpCx, f: impl Fn(&Draws, usize) -> f64) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let d = Draws::new(cx, x.dtype());
    one(fill(x.shape().to_vec(), x.dtype(), |i| f(&d, i))?)
}

pub fn uniform_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.float_or("from", 0.0)?, cx.float_or("to", 1.0)?);
    let x = cx.tensor("self")?;
    one(fill_uniform(cx, x.shape().to_vec(), x.dtype(), a, b)?)
}

pub fn normal_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (m, sd) = (cx.float_or("mean", 0.0)?, cx.float_or("std", 1.0)?);
    let x = cx.tensor("self")?;
    one(fill_normal(cx, x.shape().to_vec(), x.dtype(), m, sd)?)
}

pub fn exponential_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let l = cx.float_or("lambd", 1.0)?;
    if l.is_nan() || l <= 0.0 {
        return Err(OpError::Arg { arg: "lambd".into(), message: format!("must be positive, got {l}") });
    }
    need_float(cx.tensor("self")?)?;
    in_place(cx, |d, i| sample::exponential(d.uniform(i), l))
}

pub fn cauchy_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (m, sg) = (cx.float_or("median", 0.0)?, cx.float_or("sigma", 1.0)?);
    need_float(cx.tensor("self")?)?;
    in_place(cx, |d, i| sample::cauchy(sample::open_uniform(d.bits(i), d.wide), m, sg))
}

pub fn log_normal_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (m, sd) = (cx.float_or("mean", 1.0)?, cx.float_or("std", 2.0)?);
    need_float(cx.tensor("self")?)?;
    check_std(sd)?;
    in_place(cx, |d, i| (m + sd * d.normal(i)).exp())
}

/// Trials until the first success: integers from 1, in any dtype but bool.
pub fn geometric_(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let p = cx.float_or("p", 0.5)?;
    if !(p > 0.0 && p <= 1.0) {
        return Err(OpError::Arg { arg: "p".into(), message: format!("must lie in (0, 1], got {p}") });
    }
    if cx.tensor("self")?.dtype() == DType::Bool {
        return Err(OpError::DType(DType::Bool));
    }
    in_place(cx, |d, i| sample::geometric(d.uniform(i), p))
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
    if !dtype.is_floating() {
        return Err(OpError::DType(dtype));
    }
    let n: usize = shape.iter().product();
    let mv = match mean {
        Some(m) => F::of_broadcast(m, &shape)?.v,
        None => vec![cx.float_or("mean", 0.0)?; n],
    };
    let sv = match std {
        Some(s) => F::of_broadcast(s, &shape)?.v,
        None => vec![cx.float_or("std", 1.0)?; n],
    };
    if let Some(s) = sv.iter().find(|s| s.is_nan() || **s < 0.0) {
        check_std(*s)?;
    }
    let d = Draws::new(cx, dtype);
    one(fill(shape, dtype, |i| mv[i] + sv[i] * d.normal(i))?)
}

/// Category indices drawn with weights `self` (`[C]` or `[N, C]`). With replacement, sample `j`
/// of row `r` inverts the row's cumulative weights at `u · total` (draw `r·k + j`: the first
/// category whose running sum exceeds it); without, the categories by descending race key
/// (`sample::race_key`, draw `r·C + c`), ties to the lower index.
pub fn multinomial(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let k = cx.int("num_samples")?;
    let repl = cx.bool_or("replacement", false)?;
    let (rows, c) = match x.shape() {
        [c] => (1, *c),
        [n, c] => (*n, *c),
        s => return shape_err(format!("multinomial takes a 1-D or 2-D input, got {s:?}")),
    };
    if k <= 0 {
        return Err(OpError::Arg { arg: "num_samples".into(), message: format!("must be positive, got {k}") });
    }
    let k = k as usize;
    let w = x.to_f64_vec();
    let d = Draws::new(cx, x.dtype());
    let mut out = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let ws = &w[r * c..(r + 1) * c];
        if ws.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(OpError::Arg { arg: "self".into(), message: "weights must be finite and non-negative".into() });
        }
        let nonzero = ws.iter().filter(|&&v| v > 0.0).count();
        if nonzero == 0 || (!repl && k > nonzero) {
            return Err(OpError::Arg { arg: "num_samples".into(), message: format!("cannot draw {k} samples from {nonzero} non-zero weights{}", if repl { "" } else { " without replacement" }) });
        }
        if repl {
            let total: f64 = ws.iter().sum();
            // Rounding can leave `u · total` at the total: the last non-zero weight then.
            let last = ws.iter().rposition(|&v| v > 0.0).unwrap_or(0);
            for j in 0..k {
                let t = d.uniform(r * k + j) * total;
                let mut acc = 0.0;
                let pick = ws.iter().position(|&v| {
                    acc += v;
                    acc > t
                });
                out.push(pick.unwrap_or(last) as i64);
            }
        } else {
            let keys: Vec<f64> = (0..c).map(|i| sample::race_key(d.bits(r * c + i), ws[i], d.wide)).collect();
            let mut order: Vec<usize> = (0..c).collect();
            order.sort_by(|&a, &b| keys[b].total_cmp(&keys[a]).then(a.cmp(&b)));
            out.extend(order[..k].iter().map(|&i| i as i64));
        }
    }
    let shape = if x.ndim() == 1 { vec![k] } else { vec![rows, k] };
    one(Tensor::from_vec(&shape, out).ok_or_else(|| OpError::Shape("multinomial".into()))?)
}

/// Training-mode `rrelu`: each negative input scaled by a slope drawn from `[lower, upper)`.
pub fn rrelu_train(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let (lo, hi) = (cx.float_or("lower", 0.125)?, cx.float_or("upper", 1.0 / 3.0)?);
    let v = x.to_f64_vec();
    let d = Draws::new(cx, x.dtype());
    one(fill(x.shape().to_vec(), x.dtype(), |i| if v[i] >= 0.0 { v[i] } else { v[i] * (lo + (hi - lo) * d.uniform(i)) })?)
}

/// Training-mode `native_dropout(input, p)`: the mask keeps an element where `u < 1 − p`, the
/// output is `input · mask · 1/(1 − p)` (0 when `p` is 1), as PyTorch multiplies (NaN stays NaN).
pub fn native_dropout_train(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("input")?;
    need_float(x)?;
    let p = cx.float_or("p", 0.5)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(OpError::Arg { arg: "p".into(), message: format!("must lie in [0, 1], got {p}") });
    }
    let keep = 1.0 - p;
    let scale = if keep == 0.0 { 0.0 } else { 1.0 / keep };
    let d = Draws::new(cx, x.dtype());
    let mask: Vec<f64> = (0..x.numel()).map(|i| f64::from(u8::from(d.uniform(i) < keep))).collect();
    let v = x.to_f64_vec();
    let out = fill(x.shape().to_vec(), x.dtype(), |i| v[i] * mask[i] * scale)?;
    let mask = F::new(x.shape().to_vec(), mask).to(DType::Bool)?;
    Ok(vec![RtValue::Tensor(out), RtValue::Tensor(mask)])
}

/// `empty_permuted`, `new_empty_strided`: uninitialised memory, zero-filled here.
pub fn empty_sized(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let dtype = match cx.opt_dtype("dtype")? {
        Some(d) => d,
        None => cx.opt_tensor("self")?.map_or(DType::F32, |t| t.dtype()),
    };
    one(F::new(sizes(cx, "size")?, vec![0.0; sizes(cx, "size")?.iter().product()]).to(dtype)?)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call_drawing, float, ints, t32, A};
    use crate::ir::Arg;
    use crate::ops::rng::NodeStream;

    fn draw(target: &str, args: Vec<(&str, A)>, seed: u64, stream: u64) -> Vec<f64> {
        let r = call_drawing(target, args, NodeStream { seed, stream }).unwrap_or_else(|e| panic!("{target}: {e:?}"));
        r[0].as_tensor().expect("a tensor").to_f64_vec()
    }

    #[test]
    fn a_seed_and_stream_give_the_same_values_and_others_differ() {
        let rand = |seed, stream| draw("aten.rand.default", vec![("size", ints(&[64]))], seed, stream);
        assert_eq!(rand(5, 2), rand(5, 2));
        assert_ne!(rand(5, 2), rand(6, 2));
        assert_ne!(rand(5, 2), rand(5, 3));
    }

    #[test]
    fn elementwise_samplers_draw_their_element_s_philox_words() {
        let s = NodeStream { seed: 11, stream: 4 };
        let u = draw("aten.rand.default", vec![("size", ints(&[3]))], 11, 4);
        let want: Vec<f64> = (0..3).map(|i| crate::ops::philox::uniform24(s.bits(i)[0]) as f32 as f64).collect();
        assert_eq!(u, want);
        let r = draw("aten.randint.low", vec![("low", A::L(Arg::Int(-4))), ("high", A::L(Arg::Int(9))), ("size", ints(&[3]))], 11, 4);
        let want: Vec<f64> = (0..3).map(|i| crate::ops::sample::randint(s.bits(i), -4, 9) as f64).collect();
        assert_eq!(r, want);
    }

    #[test]
    fn uniform_never_reaches_its_end_after_rounding() {
        // 1 − 2⁻²⁴ rounds to 1 in float16: clamped to the float16 below 1.
        let t = crate::exec::tensor::Tensor::from_vec(&[4096], vec![0.0f32; 4096]).unwrap().cast(crate::ir::DType::F16).unwrap();
        let v = draw("aten.uniform.default", vec![("self", A::T(t)), ("from", float(1.0)), ("to", float(2.0))], 1, 0);
        assert!(v.iter().all(|x| (1.0..2.0).contains(x)));
        assert!(v.iter().any(|x| *x > 1.99), "the top of the range is drawn");
    }

    #[test]
    fn training_dropout_masks_and_scales() {
        let x = t32(&[1000], &[2.0; 1000]);
        let r = call_drawing("aten.native_dropout.default", vec![("input", x), ("p", float(0.25)), ("train", A::L(Arg::Bool(true)))], NodeStream { seed: 3, stream: 0 }).unwrap();
        let (out, mask) = (r[0].as_tensor().unwrap().to_f64_vec(), r[1].as_tensor().unwrap().to_f64_vec());
        assert!(out.iter().zip(&mask).all(|(o, m)| (*m == 1.0 && (o - 2.0 / 0.75).abs() < 1e-6) || (*m == 0.0 && *o == 0.0)));
        let kept = mask.iter().sum::<f64>() / 1000.0;
        assert!((kept - 0.75).abs() < 0.06, "kept {kept}");
    }
}
