//! Numerical helpers kept whole by export: integration (`trapz`, `trapezoid`,
//! `cumulative_trapezoid`), finite differences (`gradient`), `linalg_vander`, histograms
//! (`histc`, `histogram`, `histogramdd`, `bincount`), `isin`, `gcd`/`lcm`, `frexp`, and
//! `quantile`/`nanquantile`.
//!
//! The histograms live in `numeric_hist`, re-exported here.

use super::fvec::{around, float_type, need_float, promoted, F};
use super::shape::many;
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;
use crate::ir::DType;

pub use super::numeric_hist::{bincount, histc, histogram, histogram_edges, histogramdd, histogramdd_edges};

/// Per position along `dim` of `y`: the spacing to the next sample (`x` differences, or `dx`).
fn spacings(cx: &OpCx, y: &F, d: usize) -> OpResult<Option<F>> {
    let Some(x) = cx.opt_tensor("x")? else { return Ok(None) };
    let xf = if x.ndim() == 1 {
        // A 1-D `x` runs along `dim`.
        let mut shape = vec![1; y.shape.len()];
        shape[d] = x.numel();
        F::of_broadcast(&x.reshape(&shape).ok_or_else(|| OpError::Shape("x".into()))?, &y.shape)?
    } else {
        F::of_broadcast(x, &y.shape)?
    };
    Ok(Some(xf))
}

/// The trapezoids `dx_i·(y_i + y_{i+1})/2` along `dim`, as `(outer, len - 1, inner)` values.
fn trapezoids(cx: &OpCx) -> OpResult<(F, usize, DType)> {
    let y = cx.tensor("y")?;
    let mut dtype = float_type(&[y])?;
    if let Some(x) = cx.opt_tensor("x")? {
        dtype = float_type(&[y, x])?;
    }
    let yf = F::of(y);
    let d = wrap_dim(cx.int_or("dim", -1)?, yf.shape.len())?;
    let dx = cx.float_or("dx", 1.0)?;
    let xs = spacings(cx, &yf, d)?;
    // Differences and products are taken in the inputs' dtype (uint8 wraps), as PyTorch's
    // `(dx * (y[1:] + y[:-1])).sum(dim) / 2` does; only the halving is in floating point.
    let input = match cx.opt_tensor("x")? {
        Some(x) => promoted(&[y, x])?,
        None => promoted(&[y])?,
    };
    let wrap = super::fvec::round_to(if input.is_floating() { DType::F64 } else { input });
    let (outer, len, inner) = around(&yf.shape, d);
    let m = len.saturating_sub(1);
    let mut v = Vec::with_capacity(outer * m * inner);
    for o in 0..outer {
        for i in 0..m {
            for k in 0..inner {
                let (a, b) = ((o * len + i) * inner + k, (o * len + i + 1) * inner + k);
                let h = xs.as_ref().map_or(dx, |x| wrap(x.v[b] - x.v[a]));
                v.push(wrap(h * wrap(yf.v[a] + yf.v[b])) / 2.0);
            }
        }
    }
    let mut shape = yf.shape.clone();
    shape[d] = m;
    Ok((F::new(shape, v), d, dtype))
}

pub fn trapz(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (t, d, dtype) = trapezoids(cx)?;
    let (outer, len, inner) = around(&t.shape, d);
    let v = (0..outer).flat_map(|o| (0..inner).map(move |k| (o, k))).map(|(o, k)| (0..len).map(|i| t.v[(o * len + i) * inner + k]).sum()).collect();
    let mut shape = t.shape.clone();
    shape.remove(d);
    one(F::new(shape, v).to(dtype)?)
}

pub fn cumulative_trapezoid(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (mut t, d, dtype) = trapezoids(cx)?;
    let (outer, len, inner) = around(&t.shape, d);
    for o in 0..outer {
        for k in 0..inner {
            for i in 1..len {
                t.v[(o * len + i) * inner + k] += t.v[(o * len + i - 1) * inner + k];
            }
        }
    }
    one(t.to(dtype)?)
}

/// Central differences inside, one-sided (first or second order) at the edges, with uniform
/// spacing per dim.
fn gradient_along(f: &F, d: usize, h: f64, edge_order: i64) -> OpResult<F> {
    let (outer, len, inner) = around(&f.shape, d);
    if len < edge_order as usize + 1 {
        return shape_err(format!("gradient needs at least {} samples along dim {d}, got {len}", edge_order + 1));
    }
    let mut v = vec![0.0; f.v.len()];
    for o in 0..outer {
        for k in 0..inner {
            let at = |i: usize| (o * len + i) * inner + k;
            let y = |i: usize| f.v[at(i)];
            for i in 1..len - 1 {
                v[at(i)] = (y(i + 1) - y(i - 1)) / (2.0 * h);
            }
            let n = len - 1;
            if edge_order == 1 {
                v[at(0)] = (y(1) - y(0)) / h;
                v[at(n)] = (y(n) - y(n - 1)) / h;
            } else {
                v[at(0)] = (-1.5 * y(0) + 2.0 * y(1) - 0.5 * y(2)) / h;
                v[at(n)] = (0.5 * y(n - 2) - 2.0 * y(n - 1) + 1.5 * y(n)) / h;
            }
        }
    }
    Ok(F::new(f.shape.clone(), v))
}

/// Second-order differences on samples at coordinates `c` along `d`: inside, the weights of
/// the neighbours follow from the spacings before and after each sample; at the edges first-
/// or second-order one-sided differences. The steps are ATen's `gradient_helper`'s, each
/// rounded by `r` as its tensor op stores it (half-precision spacings cancel).
fn gradient_along_coords(f: &F, d: usize, c: &[f64], edge_order: i64, r: &dyn Fn(f64) -> f64) -> OpResult<F> {
    let (outer, len, inner) = around(&f.shape, d);
    if len < edge_order as usize + 1 {
        return shape_err(format!("gradient needs at least {} samples along dim {d}, got {len}", edge_order + 1));
    }
    if c.len() != len {
        return shape_err(format!("{} coordinates for {len} samples along dim {d}", c.len()));
    }
    let h: Vec<f64> = c.windows(2).map(|w| r(w[1] - w[0])).collect();
    // `a * y0 + b * y1 + c * y2`, each product and sum rounded.
    let combine = |w: (f64, f64, f64), y: (f64, f64, f64)| r(r(r(w.0 * y.0) + r(w.1 * y.1)) + r(w.2 * y.2));
    let inside: Vec<(f64, f64, f64)> = (1..len - 1)
        .map(|i| {
            let (d1, d2) = (h[i - 1], h[i]);
            let s = r(d1 + d2);
            (r(-d2 / r(d1 * s)), r(r(d2 - d1) / r(d1 * d2)), r(d1 / r(d2 * s)))
        })
        .collect();
    let n = len - 1;
    let edges = (edge_order == 2).then(|| {
        let (h0, h1) = (h[0], h[1]);
        let s = r(h0 + h1);
        let first = (r(-r(2.0 * h0 + h1) / r(h0 * s)), r(s / r(h0 * h1)), r(-h0 / r(h1 * s)));
        let (hl, hm) = (h[n - 1], h[n - 2]);
        let s = r(hl + hm);
        let last = (r(hl / r(hm * s)), r(-s / r(hl * hm)), r(r(2.0 * hl + hm) / r(hl * s)));
        (first, last)
    });
    let mut v = vec![0.0; f.v.len()];
    for o in 0..outer {
        for k in 0..inner {
            let at = |i: usize| (o * len + i) * inner + k;
            let y = |i: usize| f.v[at(i)];
            for (i, w) in (1..).zip(&inside) {
                v[at(i)] = combine(*w, (y(i - 1), y(i), y(i + 1)));
            }
            match edges {
                None => {
                    v[at(0)] = r(r(y(1) - y(0)) / h[0]);
                    v[at(n)] = r(r(y(n) - y(n - 1)) / h[n - 1]);
                }
                Some((first, last)) => {
                    v[at(0)] = combine(first, (y(0), y(1), y(2)));
                    v[at(n)] = combine(last, (y(n - 2), y(n - 1), y(n)));
                }
            }
        }
    }
    Ok(F::new(f.shape.clone(), v))
}

/// `gradient.scalarint`, `.scalararray`, `.scalarrayint`, `.scalarrayarray`, `.array` (uniform
/// spacings) and `.tensorarrayint`, `.tensorarray` (coordinates): one tensor per
/// differentiated dim.
pub fn gradient(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let f = F::of(x);
    let edge = cx.int_or("edge_order", 1)?;
    if !(1..=2).contains(&edge) {
        return Err(OpError::Arg { arg: "edge_order".into(), message: format!("must be 1 or 2, got {edge}") });
    }
    let dims: Vec<usize> = match cx.opt_ints("dim")? {
        Some(ds) => ds.iter().map(|&d| wrap_dim(d, f.shape.len())).collect::<OpResult<_>>()?,
        None => (0..f.shape.len()).collect(),
    };
    if let Some(crate::ir::Arg::Tensors(_)) = cx.arg("spacing") {
        let coords = cx.tensors("spacing")?;
        if coords.len() != dims.len() {
            return shape_err(format!("{} coordinate tensors for {} dims", coords.len(), dims.len()));
        }
        let mut all = vec![x];
        all.extend(coords.iter().copied());
        let dtype = float_type(&all)?;
        // Float samples compute in their dtype step by step; integer ones as they are.
        let exact = |v: f64| v;
        let rounded = super::fvec::round_to(dtype);
        let round: &dyn Fn(f64) -> f64 = if all.iter().all(|t| t.dtype().is_floating()) { &rounded } else { &exact };
        let out = dims
            .iter()
            .zip(&coords)
            .map(|(&d, c)| gradient_along_coords(&f, d, &c.to_f64_vec(), edge, &round)?.to(dtype))
            .collect::<OpResult<Vec<_>>>()?;
        return many(out);
    }
    let dtype = float_type(&[x])?;
    let spacing: Vec<f64> = match cx.arg("spacing") {
        None => vec![1.0; dims.len()],
        Some(crate::ir::Arg::Floats(v)) => v.clone(),
        Some(crate::ir::Arg::Ints(v)) => v.iter().map(|&i| i as f64).collect(),
        Some(_) => vec![cx.float_or("spacing", 1.0)?; dims.len()],
    };
    if spacing.len() != dims.len() {
        return shape_err(format!("{} spacings for {} dims", spacing.len(), dims.len()));
    }
    let out = dims.iter().zip(&spacing).map(|(&d, &h)| gradient_along(&f, d, h, edge)?.to(dtype)).collect::<OpResult<Vec<_>>>()?;
    many(out)
}

/// `[..., n] → [..., n, N]` with columns `x^0 … x^(N-1)`; integers compute in int64.
pub fn linalg_vander(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("x")?;
    let f = F::of(x);
    let mut shape = if f.shape.is_empty() { vec![1] } else { f.shape.clone() };
    let n = cx.opt_int("N")?.map_or(*shape.last().unwrap_or(&1), |n| n.max(0) as usize);
    let v: Vec<f64> = f.v.iter().flat_map(|&x| (0..n).map(move |k| x.powi(k as i32))).collect();
    shape.push(n);
    let dtype = if x.dtype().is_floating() { x.dtype() } else { DType::I64 };
    one(F::new(shape, v).to(dtype)?)
}

pub fn isin(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let invert = cx.bool_or("invert", false)?;
    let elems = match cx.opt_tensor("elements")? {
        Some(t) => F::of(t),
        None => F::new(vec![], vec![cx.float_or("element", 0.0)?]),
    };
    let tests: Vec<f64> = match cx.opt_tensor("test_elements")? {
        Some(t) => t.to_f64_vec(),
        None => vec![cx.float_or("test_element", 0.0)?],
    };
    let v = elems.v.iter().map(|x| f64::from(u8::from(tests.contains(x) != invert))).collect();
    one(F::new(elems.shape.clone(), v).to(DType::Bool)?)
}

fn gcd_i(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

fn integer_pair(cx: &OpCx, f: fn(i64, i64) -> i64) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let dtype = promoted(&[a, b])?;
    if dtype.is_floating() || dtype == DType::Bool {
        return Err(OpError::DType(dtype));
    }
    let fs = super::fvec::broadcast_all(&[a, b])?;
    let v = fs[0].v.iter().zip(&fs[1].v).map(|(&x, &y)| f(x as i64, y as i64) as f64).collect();
    one(F::new(fs[0].shape.clone(), v).to(dtype)?)
}

pub fn gcd(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    integer_pair(cx, gcd_i)
}

pub fn lcm(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    integer_pair(cx, |a, b| {
        let g = gcd_i(a, b);
        if g == 0 {
            0
        } else {
            (a / g).wrapping_mul(b).wrapping_abs()
        }
    })
}

/// `x = m·2^e` with `0.5 <= |m| < 1`, read off the float64 bits (a subnormal is scaled into the
/// normal range first); zero, infinities and NaN keep `m = x`, `e = 0`.
fn frexp_f64(v: f64) -> (f64, i32) {
    if v == 0.0 || !v.is_finite() {
        return (v, 0);
    }
    let (v, shift) = if v.abs() < f64::MIN_POSITIVE { (v * 2f64.powi(64), -64) } else { (v, 0) };
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, biased - 1022 + shift)
}

pub fn frexp(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let f = F::of(x);
    let (m, e): (Vec<f64>, Vec<f64>) = f.v.iter().map(|&v| frexp_f64(v)).map(|(m, e)| (m, f64::from(e))).unzip();
    many(vec![F::new(f.shape.clone(), m).to(x.dtype())?, F::new(f.shape.clone(), e).to(DType::I32)?])
}

/// One quantile of sorted, NaN-free `s` by `interpolation`.
fn quantile_of(s: &[f64], q: f64, how: &str) -> OpResult<f64> {
    if s.is_empty() {
        return Ok(f64::NAN);
    }
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let frac = pos - lo as f64;
    Ok(match how {
        "linear" => s[lo] + (s[hi] - s[lo]) * frac,
        "lower" => s[lo],
        "higher" => s[hi],
        "midpoint" => (s[lo] + s[hi]) / 2.0,
        "nearest" => s[pos.round_ties_even() as usize],
        o => return Err(OpError::Arg { arg: "interpolation".into(), message: format!("unknown mode `{o}`") }),
    })
}

fn quantile_impl(cx: &OpCx, ignore_nan: bool) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let how = cx.str_or("interpolation", "linear")?;
    let (qs, q_shape): (Vec<f64>, Vec<usize>) = match cx.arg("q") {
        Some(crate::ir::Arg::Tensor(_)) => {
            let q = cx.tensor("q")?;
            (q.to_f64_vec(), q.shape().to_vec())
        }
        _ => (vec![cx.float_or("q", 0.5)?], vec![]),
    };
    if qs.iter().any(|q| !(0.0..=1.0).contains(q)) {
        return Err(OpError::Arg { arg: "q".into(), message: format!("quantiles must lie in [0, 1], got {qs:?}") });
    }
    let keepdim = cx.bool_or("keepdim", false)?;
    let f = F::of(x);
    let (rows, row_len, rest_shape): (Vec<Vec<f64>>, usize, Vec<usize>) = match cx.opt_int("dim")? {
        None => (vec![f.v.clone()], f.v.len(), if keepdim { vec![1; f.shape.len()] } else { vec![] }),
        Some(d) => {
            let d = wrap_dim(d, f.shape.len())?;
            let (outer, len, inner) = if f.shape.is_empty() { (1, 1, 1) } else { around(&f.shape, d) };
            let rows = (0..outer).flat_map(|o| (0..inner).map(move |k| (o, k))).map(|(o, k)| (0..len).map(|i| f.v[(o * len + i) * inner + k]).collect()).collect();
            let mut s = f.shape.clone();
            if !s.is_empty() {
                if keepdim {
                    s[d] = 1;
                } else {
                    s.remove(d);
                }
            }
            (rows, len, s)
        }
    };
    let _ = row_len;
    let mut out = vec![0.0; qs.len() * rows.len()];
    for (r, row) in rows.iter().enumerate() {
        let has_nan = row.iter().any(|v| v.is_nan());
        let mut s: Vec<f64> = row.iter().copied().filter(|v| !v.is_nan()).collect();
        s.sort_by(f64::total_cmp);
        for (qi, &q) in qs.iter().enumerate() {
            out[qi * rows.len() + r] = if has_nan && !ignore_nan { f64::NAN } else { quantile_of(&s, q, how)? };
        }
    }
    let mut shape = q_shape;
    shape.extend(rest_shape);
    one(F::new(shape, out).to(x.dtype())?)
}

pub fn quantile(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    quantile_impl(cx, false)
}

pub fn nanquantile(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    quantile_impl(cx, true)
}

#[cfg(test)]
mod tests {
    use super::super::numeric_hist::bin_of;
    use super::*;

    #[test]
    fn gcd_and_quantiles() {
        assert_eq!(gcd_i(-12, 18), 6);
        assert_eq!(gcd_i(0, 0), 0);
        let s = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_of(&s, 0.5, "linear").unwrap(), 2.5);
        assert_eq!(quantile_of(&s, 0.5, "nearest").unwrap(), 3.0, "ties go to the even rank");
        assert_eq!(bin_of(4.0, 2.0, 4.0, 4), Some(3));
        assert_eq!(bin_of(3.0, 2.0, 4.0, 4), Some(2));
    }

    #[test]
    fn frexp_reads_mantissa_and_exponent_of_every_magnitude() {
        assert_eq!(frexp_f64(1.0), (0.5, 1));
        assert_eq!(frexp_f64(-3.0), (-0.75, 2));
        assert_eq!(frexp_f64(0.375), (0.75, -1));
        assert_eq!(frexp_f64(f64::from_bits(1)), (0.5, -1073), "the smallest subnormal");
        assert_eq!(frexp_f64(f64::MAX).1, 1024);
        assert_eq!(frexp_f64(-0.0), (-0.0, 0));
        assert!(frexp_f64(f64::NAN).0.is_nan());
    }
}
