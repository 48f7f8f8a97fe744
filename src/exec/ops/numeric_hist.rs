//! Histograms: `histc`, `histogram`, `histogramdd` (with bin counts or given edges) and
//! `bincount`. Apart from `numeric` because they share the binning helpers and nothing else;
//! re-exported from `numeric`.

use super::fvec::{need_float, round_to, F};
use super::shape::many;
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// Index of the bin of `x` among `bins` equal bins over `[lo, hi]`; `hi` falls in the last.
pub(super) fn bin_of(x: f64, lo: f64, hi: f64, bins: usize) -> Option<usize> {
    if !(x >= lo && x <= hi) {
        return None;
    }
    let b = ((x - lo) * bins as f64 / (hi - lo)) as usize;
    Some(b.min(bins - 1))
}

pub fn histc(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    need_float(x)?;
    let bins = cx.int_or("bins", 100)?.max(1) as usize;
    let (mut lo, mut hi) = (cx.float_or("min", 0.0)?, cx.float_or("max", 0.0)?);
    let xv = x.to_f64_vec();
    if lo == hi && !xv.is_empty() {
        lo = xv.iter().copied().fold(f64::INFINITY, f64::min);
        hi = xv.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }
    if lo == hi {
        lo -= 1.0;
        hi += 1.0;
    }
    // ATen's bins are `linspace(lo, hi)` in the input's dtype, and it places a value by
    // `(x - lo) * bins / (hi - lo)` in that dtype (through float32 for the half types), so a
    // half-precision value near a bin edge lands where the rounded arithmetic puts it.
    let dt = x.dtype();
    let r = |v: f64| match dt {
        DType::F16 | DType::BF16 => round_to(dt)(v as f32 as f64),
        _ => round_to(dt)(v),
    };
    let (lo, hi) = (r(lo), r(hi));
    let mut h = vec![0.0; bins];
    for &v in &xv {
        if v >= lo && v <= hi {
            let pos = r(r(r(v - lo) * r(bins as f64)) / r(hi - lo));
            h[(pos as usize).min(bins - 1)] += 1.0;
        }
    }
    one(F::new(vec![bins], h).to(dt)?)
}

/// The outer edges of each of `d` coordinates: `range` pairs, or the data's extent, widened by
/// ±0.5 when empty, as `aten/src/ATen/native/Histogram.cpp` does.
fn outer_edges(cx: &OpCx, pts: &[f64], d: usize) -> OpResult<Vec<(f64, f64)>> {
    let range = match cx.arg("range") {
        Some(crate::ir::Arg::Floats(r)) => Some(r.clone()),
        _ => None,
    };
    (0..d)
        .map(|k| {
            let (mut lo, mut hi) = match &range {
                Some(r) if r.len() == 2 * d => (r[2 * k], r[2 * k + 1]),
                Some(r) => return shape_err(format!("range of {} values for {d} dims", r.len())),
                None if pts.is_empty() => (0.0, 1.0),
                None => pts.iter().skip(k).step_by(d).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x))),
            };
            if lo == hi {
                lo -= 0.5;
                hi += 0.5;
            }
            Ok((lo, hi))
        })
        .collect()
}

/// `(hist, edges)` of points `[n, d]` over `bins[k]` equal bins per coordinate.
fn histogram_nd(cx: &OpCx, x: &Tensor, bins: &[usize]) -> OpResult<(F, Vec<F>)> {
    need_float(x)?;
    let d = bins.len();
    let pts = x.to_f64_vec();
    let edges = outer_edges(cx, &pts, d)?;
    let w = cx.opt_tensor("weight")?.map(|w| w.to_f64_vec());
    let mut h = vec![0.0; bins.iter().product()];
    for (p, row) in pts.chunks(d.max(1)).enumerate() {
        let mut flat = 0;
        let mut inside = true;
        for k in 0..d {
            match bin_of(row[k], edges[k].0, edges[k].1, bins[k]) {
                Some(b) => flat = flat * bins[k] + b,
                None => inside = false,
            }
        }
        if inside {
            h[flat] += w.as_ref().map_or(1.0, |w| w[p]);
        }
    }
    let edge_f: Vec<F> = (0..d)
        .map(|k| {
            let (lo, hi) = edges[k];
            let v = (0..=bins[k]).map(|i| lo + (hi - lo) * i as f64 / bins[k] as f64).collect();
            F::new(vec![bins[k] + 1], v)
        })
        .collect();
    if cx.bool_or("density", false)? {
        let total: f64 = h.iter().sum();
        let widths: Vec<f64> = (0..d).map(|k| (edges[k].1 - edges[k].0) / bins[k] as f64).collect();
        let vol: f64 = widths.iter().product();
        h.iter_mut().for_each(|x| *x /= total * vol);
    }
    Ok((F::new(bins.to_vec(), h), edge_f))
}

/// `std::upper_bound` as libstdc++ writes it: the same probes, so edges that are not sorted
/// (PyTorch does not check them) land points in the bins ATen's binary search picks.
fn upper_bound(a: &[f64], v: f64) -> usize {
    let (mut first, mut len) = (0, a.len());
    while len > 0 {
        let half = len >> 1;
        if v < a[first + half] {
            len = half;
        } else {
            first += half + 1;
            len -= half + 1;
        }
    }
    first
}

/// A histogram of `d`-coordinate points over given bin edges per coordinate (`bins_tensor`,
/// `TensorList_bins`), as ATen's binary-search kernel bins them: a point between the first and
/// the last edge (inclusive) falls in bin `upper_bound(e, v) - 1`, the last edge closing the last
/// bin; points outside are left out. Densities divide by the total and each bin's own volume.
fn histogram_given(cx: &OpCx, x: &Tensor, edges: &[&Tensor]) -> OpResult<(F, Vec<F>)> {
    need_float(x)?;
    let d = edges.len();
    let e: Vec<Vec<f64>> = edges.iter().map(|t| t.to_f64_vec()).collect();
    if let Some(k) = e.iter().position(|v| v.len() < 2) {
        return shape_err(format!("bin edges of coordinate {k} must hold at least 2 values"));
    }
    let bins: Vec<usize> = e.iter().map(|v| v.len() - 1).collect();
    let pts = x.to_f64_vec();
    let w = cx.opt_tensor("weight")?.map(|w| w.to_f64_vec());
    let mut h = vec![0.0; bins.iter().product()];
    for (p, row) in pts.chunks(d.max(1)).enumerate() {
        let mut flat = Some(0);
        for k in 0..d {
            let (v, ek) = (row[k], &e[k]);
            let b = if v >= ek[0] && v <= ek[bins[k]] { Some(upper_bound(ek, v).saturating_sub(1).min(bins[k] - 1)) } else { None };
            flat = flat.zip(b).map(|(f, b)| f * bins[k] + b);
        }
        if let Some(f) = flat {
            h[f] += w.as_ref().map_or(1.0, |w| w[p]);
        }
    }
    if cx.bool_or("density", false)? {
        let total: f64 = h.iter().sum();
        for (i, x) in h.iter_mut().enumerate() {
            let (mut rest, mut vol) = (i, 1.0);
            for k in (0..d).rev() {
                let b = rest % bins[k];
                rest /= bins[k];
                vol *= e[k][b + 1] - e[k][b];
            }
            *x /= total * vol;
        }
    }
    Ok((F::new(bins.clone(), h), e.into_iter().map(|v| F::new(vec![v.len()], v)).collect()))
}

/// `histogram.bins_tensor(self, bins, weight, density)`: a 1-D histogram over given edges.
pub fn histogram_edges(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let flat = x.reshape(&[x.numel(), 1]).ok_or_else(|| OpError::Shape("histogram input".into()))?;
    let (h, e) = histogram_given(cx, &flat, &[cx.tensor("bins")?])?;
    many(vec![h.to(x.dtype())?, e[0].to(x.dtype())?])
}

/// `histogramdd.TensorList_bins(self, bins, range, weight, density)`: edges per coordinate.
pub fn histogramdd_edges(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let edges = cx.tensors("bins")?;
    let d = edges.len();
    if x.shape().last() != Some(&d) {
        return shape_err(format!("{d} edge tensors for points of shape {:?}", x.shape()));
    }
    let pts = x.reshape(&[x.numel() / d.max(1), d]).ok_or_else(|| OpError::Shape("histogramdd input".into()))?;
    let (h, e) = histogram_given(cx, &pts, &edges)?;
    dd_outputs(x.dtype(), h, e)
}

/// `histogramdd`'s outputs in the input's dtype: the counts, then the edge list, which the
/// interpreter stores as the values following the counts.
fn dd_outputs(dtype: DType, h: F, edges: Vec<F>) -> OpResult<Vec<RtValue>> {
    std::iter::once(h).chain(edges).map(|f| Ok(RtValue::Tensor(f.to(dtype)?))).collect()
}

pub fn histogram(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let bins = cx.int_or("bins", 100)?.max(1) as usize;
    let flat = x.reshape(&[x.numel(), 1]).ok_or_else(|| OpError::Shape("histogram input".into()))?;
    let (h, e) = histogram_nd(cx, &flat, &[bins])?;
    many(vec![h.to(x.dtype())?, e[0].to(x.dtype())?])
}

pub fn histogramdd(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let d = *x.shape().last().ok_or_else(|| OpError::Shape("histogramdd of a scalar".into()))?;
    let bins: Vec<usize> = match cx.ints("bins")?.as_slice() {
        [b] if d != 1 => vec![(*b).max(1) as usize; d],
        bs => bs.iter().map(|&b| b.max(1) as usize).collect(),
    };
    if bins.len() != d {
        return shape_err(format!("{} bin counts for points of {d} coordinates", bins.len()));
    }
    let pts = x.reshape(&[x.numel() / d.max(1), d]).ok_or_else(|| OpError::Shape("histogramdd input".into()))?;
    let (h, e) = histogram_nd(cx, &pts, &bins)?;
    dd_outputs(x.dtype(), h, e)
}

pub fn bincount(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    if x.dtype().is_floating() || x.ndim() != 1 {
        return shape_err(format!("bincount takes a 1-D integer tensor, got {} {:?}", x.dtype(), x.shape()));
    }
    let xv = x.to_i64_vec();
    if xv.iter().any(|&i| i < 0) {
        return Err(OpError::Arg { arg: "self".into(), message: "bincount of negative values".into() });
    }
    let n = (xv.iter().max().map_or(0, |&m| m + 1)).max(cx.int_or("minlength", 0)?) as usize;
    let w = cx.opt_tensor("weights")?;
    let wv = w.map(|w| w.to_f64_vec());
    let mut h = vec![0.0; n];
    xv.iter().enumerate().for_each(|(i, &b)| h[b as usize] += wv.as_ref().map_or(1.0, |w| w[i]));
    let dtype = match w {
        Some(w) if w.dtype() == DType::F32 || w.dtype() == DType::F64 => w.dtype(),
        Some(_) => DType::F64,
        None => DType::I64,
    };
    one(F::new(vec![n], h).to(dtype)?)
}
