//! Pooling over the last 1, 2 or 3 dims in one implementation: max (with indices), average,
//! adaptive average and max, fractional max, unpooling, and the max-pool gradient. Output sizes
//! follow PyTorch's `pooling_output_shape` (with `ceil_mode`'s rule that the last window starts
//! inside the input or its left padding); indices are flat positions in the input's spatial plane.

use super::fvec::{strides, F};
use super::shape::many;
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// A per-spatial-dim argument: one value stands for all `k` dims, an empty list for `default`.
fn per_dim(cx: &OpCx, name: &str, k: usize, default: &[usize]) -> OpResult<Vec<usize>> {
    let v = cx.ints_or(name, &[])?;
    let v: Vec<i64> = match v.len() {
        0 => return Ok(default.to_vec()),
        1 => vec![v[0]; k],
        _ => v,
    };
    if v.len() != k || v.iter().any(|&x| x < 0) {
        return Err(OpError::Arg { arg: name.into(), message: format!("expected {k} non-negative values, got {v:?}") });
    }
    Ok(v.iter().map(|&x| x as usize).collect())
}

/// Input viewed as `[planes, spatial...]` over its last `k` dims.
pub(super) struct Planes {
    pub f: F,
    pub lead: Vec<usize>,
    pub sp: Vec<usize>,
}

impl Planes {
    pub fn new(x: &Tensor, k: usize) -> OpResult<Planes> {
        if x.dtype() == DType::Bool {
            return Err(OpError::DType(x.dtype()));
        }
        if x.ndim() != k + 1 && x.ndim() != k + 2 {
            return shape_err(format!("{k}-D pooling takes a {}-D or {}-D input, got {:?}", k + 1, k + 2, x.shape()));
        }
        let s = x.shape();
        Ok(Planes { f: F::of(x), lead: s[..s.len() - k].to_vec(), sp: s[s.len() - k..].to_vec() })
    }

    pub fn planes(&self) -> usize {
        self.lead.iter().product()
    }

    pub fn plane_len(&self) -> usize {
        self.sp.iter().product()
    }

    pub fn out_shape(&self, out_sp: &[usize]) -> Vec<usize> {
        self.lead.iter().chain(out_sp).copied().collect()
    }
}

/// Every output coordinate of `out_sp` in row-major order.
pub(super) fn coords(out_sp: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = out_sp.iter().product();
    (0..n)
        .map(|mut i| {
            let mut c = vec![0; out_sp.len()];
            for d in (0..out_sp.len()).rev() {
                c[d] = i % out_sp[d];
                i /= out_sp[d];
            }
            c
        })
        .collect()
}

/// For one output coordinate: the in-range input offsets of each dim's window taps.
type Window = Vec<Vec<usize>>;

/// Flat plane positions of the window (the cartesian product of the per-dim taps).
pub(super) fn positions(win: &Window, sp: &[usize]) -> Vec<usize> {
    let st = strides(sp);
    let mut out = vec![0usize];
    for (d, taps) in win.iter().enumerate() {
        let sd = st[d];
        out = out.iter().flat_map(|&b| taps.iter().map(move |&t| b + t * sd)).collect();
    }
    out
}

/// Sliding-window geometry of `*_pool*d`.
struct Sliding {
    k: Vec<usize>,
    stride: Vec<usize>,
    pad: Vec<usize>,
    dil: Vec<usize>,
    ceil: bool,
}

impl Sliding {
    fn from(cx: &OpCx, k: usize) -> OpResult<Sliding> {
        let ks = per_dim(cx, "kernel_size", k, &[])?;
        if ks.len() != k || ks.contains(&0) {
            return Err(OpError::Arg { arg: "kernel_size".into(), message: format!("expected {k} positive values, got {ks:?}") });
        }
        let stride = per_dim(cx, "stride", k, &ks)?;
        if stride.contains(&0) {
            return Err(OpError::Arg { arg: "stride".into(), message: "must be positive".into() });
        }
        let pad = per_dim(cx, "padding", k, &vec![0; k])?;
        let dil = per_dim(cx, "dilation", k, &vec![1; k])?;
        Ok(Sliding { k: ks, stride, pad, dil, ceil: cx.bool_or("ceil_mode", false)? })
    }

    fn out_len(&self, d: usize, len: usize) -> OpResult<usize> {
        let (k, s, p, dl) = (self.k[d], self.stride[d], self.pad[d], self.dil[d]);
        let span = dl * (k - 1) + 1;
        let Some(avail) = (len + 2 * p).checked_sub(span) else {
            return shape_err(format!("window {span} is larger than the padded input {}", len + 2 * p));
        };
        let mut n = if self.ceil { avail.div_ceil(s) } else { avail / s } + 1;
        if self.ceil && (n - 1) * s >= len + p {
            n -= 1;
        }
        Ok(n)
    }

    fn out_sp(&self, sp: &[usize]) -> OpResult<Vec<usize>> {
        sp.iter().enumerate().map(|(d, &l)| self.out_len(d, l)).collect()
    }

    /// In-range taps of output `o` along dim `d` (dilated).
    fn taps(&self, d: usize, o: usize, len: usize) -> Vec<usize> {
        let start = (o * self.stride[d]) as i64 - self.pad[d] as i64;
        (0..self.k[d]).map(|t| start + (t * self.dil[d]) as i64).filter(|&i| i >= 0 && i < len as i64).map(|i| i as usize).collect()
    }
}

/// Max and its plane index over `pos` (NaN wins, the first maximum otherwise).
fn argmax(plane: &[f64], pos: &[usize]) -> (f64, usize) {
    let mut best = (f64::NEG_INFINITY, pos.first().copied().unwrap_or(0));
    for &p in pos {
        let v = plane[p];
        if v > best.0 || v.is_nan() {
            best = (v, p);
        }
    }
    best
}

/// Max pooling over `windows(out_coord)`: values and plane indices.
fn max_over(p: &Planes, out_sp: &[usize], windows: impl Fn(&[usize]) -> Window) -> (F, F) {
    let cs = coords(out_sp);
    let wins: Vec<Vec<usize>> = cs.iter().map(|c| positions(&windows(c), &p.sp)).collect();
    let (mut vals, mut idx) = (Vec::new(), Vec::new());
    for plane in p.f.v.chunks(p.plane_len().max(1)).take(p.planes()) {
        for w in &wins {
            let (v, i) = argmax(plane, w);
            vals.push(v);
            idx.push(i as f64);
        }
    }
    let shape = p.out_shape(out_sp);
    (F::new(shape.clone(), vals), F::new(shape, idx))
}

fn max_pool(cx: &OpCx, k: usize) -> OpResult<(F, F, DType)> {
    let x = cx.tensor("self")?;
    let p = Planes::new(x, k)?;
    let g = Sliding::from(cx, k)?;
    let out_sp = g.out_sp(&p.sp)?;
    let (v, i) = max_over(&p, &out_sp, |c| c.iter().enumerate().map(|(d, &o)| g.taps(d, o, p.sp[d])).collect());
    Ok((v, i, x.dtype()))
}

fn with_indices(r: (F, F, DType)) -> OpResult<Vec<RtValue>> {
    many(vec![r.0.to(r.2)?, r.1.to(DType::I64)?])
}

pub fn max_pool1d_with_indices(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    with_indices(max_pool(cx, 1)?)
}

pub fn max_pool3d_with_indices(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    with_indices(max_pool(cx, 3)?)
}

pub fn max_pool1d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (v, _, d) = max_pool(cx, 1)?;
    one(v.to(d)?)
}

pub fn max_pool3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (v, _, d) = max_pool(cx, 3)?;
    one(v.to(d)?)
}

/// Each output position's window (plane positions) and divisor: PyTorch's divisor is the
/// window clipped to the padded input (`count_include_pad`) or to the input, unless
/// `divisor_override` gives one.
/// An average-pooling window: its plane positions and its divisor.
pub(super) type AvgWindow = (Vec<usize>, f64);

pub(super) fn avg_windows(cx: &OpCx, p: &Planes, k: usize) -> OpResult<(Vec<usize>, Vec<AvgWindow>)> {
    let g = Sliding::from(cx, k)?;
    let include_pad = cx.bool_or("count_include_pad", true)?;
    let divisor = cx.opt_int("divisor_override")?;
    if divisor == Some(0) {
        return Err(OpError::Arg { arg: "divisor_override".into(), message: "must not be zero".into() });
    }
    let out_sp = g.out_sp(&p.sp)?;
    let cs = coords(&out_sp);
    let mut wins = Vec::with_capacity(cs.len());
    for c in &cs {
        let mut count = 1usize;
        let mut win = Vec::with_capacity(k);
        for (d, &o) in c.iter().enumerate() {
            let start = (o * g.stride[d]) as i64 - g.pad[d] as i64;
            let end = (start + g.k[d] as i64).min((p.sp[d] + g.pad[d]) as i64);
            let (cs_, ce) = (start.max(0), end.min(p.sp[d] as i64));
            count *= if include_pad { (end - start) as usize } else { (ce - cs_).max(0) as usize };
            win.push((cs_..ce).map(|i| i as usize).collect::<Vec<_>>());
        }
        let div = divisor.map_or(count as f64, |d| d as f64);
        wins.push((positions(&win, &p.sp), div));
    }
    Ok((out_sp, wins))
}

fn avg_pool(cx: &OpCx, k: usize) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let p = Planes::new(x, k)?;
    let (out_sp, wins) = avg_windows(cx, &p, k)?;
    let mut v = Vec::with_capacity(p.planes() * wins.len());
    // Integer inputs divide as C integers do (truncating).
    let int = !x.dtype().is_floating();
    for plane in p.f.v.chunks(p.plane_len().max(1)).take(p.planes()) {
        for (w, div) in &wins {
            let q = w.iter().map(|&i| plane[i]).sum::<f64>() / div;
            v.push(if int { q.trunc() } else { q });
        }
    }
    one(F::new(p.out_shape(&out_sp), v).to(x.dtype())?)
}

pub fn avg_pool1d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    avg_pool(cx, 1)
}

pub fn avg_pool3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    avg_pool(cx, 3)
}

/// Adaptive window of output `o` of `out` over `len`: `[⌊o·len/out⌋, ⌈(o+1)·len/out⌉)`.
pub(super) fn adaptive_taps(o: usize, len: usize, out: usize) -> Vec<usize> {
    (o * len / out..((o + 1) * len).div_ceil(out)).collect()
}

fn adaptive_out(cx: &OpCx, p: &Planes, k: usize) -> OpResult<Vec<usize>> {
    let os = cx.ints("output_size")?;
    if os.len() != k || os.iter().any(|&o| o <= 0) {
        return Err(OpError::Arg { arg: "output_size".into(), message: format!("expected {k} positive sizes, got {os:?}") });
    }
    Ok(os.iter().zip(&p.sp).map(|(&o, _)| o as usize).collect())
}

fn adaptive_avg(cx: &OpCx, k: usize) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let p = Planes::new(x, k)?;
    let out_sp = adaptive_out(cx, &p, k)?;
    let wins: Vec<Vec<usize>> =
        coords(&out_sp).iter().map(|c| positions(&c.iter().enumerate().map(|(d, &o)| adaptive_taps(o, p.sp[d], out_sp[d])).collect(), &p.sp)).collect();
    let mut v = Vec::with_capacity(p.planes() * wins.len());
    for plane in p.f.v.chunks(p.plane_len().max(1)).take(p.planes()) {
        for w in &wins {
            v.push(w.iter().map(|&i| plane[i]).sum::<f64>() / w.len() as f64);
        }
    }
    one(F::new(p.out_shape(&out_sp), v).to(x.dtype())?)
}

pub fn adaptive_avg_pool1d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    adaptive_avg(cx, 1)
}

pub fn adaptive_avg_pool3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    adaptive_avg(cx, 3)
}

fn adaptive_max(cx: &OpCx, k: usize) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let p = Planes::new(x, k)?;
    let out_sp = adaptive_out(cx, &p, k)?;
    let (v, i) = max_over(&p, &out_sp, |c| c.iter().enumerate().map(|(d, &o)| adaptive_taps(o, p.sp[d], out_sp[d])).collect());
    with_indices((v, i, x.dtype()))
}

pub fn adaptive_max_pool1d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    adaptive_max(cx, 1)
}

pub fn adaptive_max_pool2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    adaptive_max(cx, 2)
}

pub fn adaptive_max_pool3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    adaptive_max(cx, 3)
}

/// PyTorch's `generate_intervals`: window starts from one uniform sample, computed in the
/// input's dtype (`alpha` and the products round as the C++ `scalar_t` arithmetic does).
fn fractional_starts(sample: f64, len: usize, out: usize, pool: usize, dtype: DType) -> Vec<usize> {
    let r = super::fvec::round_to(dtype);
    let mut seq = vec![0usize; out];
    if out > 1 {
        let alpha = r((len - pool) as f64 / (out - 1) as f64);
        for (i, s) in seq.iter_mut().enumerate().take(out - 1) {
            *s = (r(r(i as f64 + sample) * alpha) as i64 - r(sample * alpha) as i64).max(0) as usize;
        }
    }
    seq[out - 1] = len - pool;
    seq
}

fn fractional(cx: &OpCx, k: usize) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let p = Planes::new(x, k)?;
    let ks = per_dim(cx, "kernel_size", k, &[])?;
    let out_sp = adaptive_out(cx, &p, k)?;
    if ks.len() != k || ks.iter().zip(&p.sp).any(|(&kk, &s)| kk == 0 || kk > s) || out_sp.iter().zip(&p.sp).zip(&ks).any(|((&o, &s), &kk)| o + kk - 1 > s) {
        return shape_err(format!("fractional pooling of {:?} with kernel {ks:?} to {out_sp:?}", p.sp));
    }
    let samples = cx.tensor("random_samples")?.to_f64_vec();
    if samples.len() != p.planes() * k {
        return shape_err(format!("{} random samples for {} planes of {k} dims", samples.len(), p.planes()));
    }
    let (mut vals, mut idx) = (Vec::new(), Vec::new());
    let cs = coords(&out_sp);
    for (pi, plane) in p.f.v.chunks(p.plane_len().max(1)).take(p.planes()).enumerate() {
        // 2-D planes take (w, h) from the samples; 3-D take (t, h, w).
        let sample = |d: usize| if k == 2 { samples[pi * 2 + (1 - d)] } else { samples[pi * k + d] };
        let starts: Vec<Vec<usize>> = (0..k).map(|d| fractional_starts(sample(d), p.sp[d], out_sp[d], ks[d], x.dtype())).collect();
        for c in &cs {
            let win: Window = c.iter().enumerate().map(|(d, &o)| (starts[d][o]..starts[d][o] + ks[d]).collect()).collect();
            let (v, i) = argmax(plane, &positions(&win, &p.sp));
            vals.push(v);
            idx.push(i as f64);
        }
    }
    let shape = p.out_shape(&out_sp);
    with_indices((F::new(shape.clone(), vals), F::new(shape, idx), x.dtype()))
}

pub fn fractional_max_pool2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    fractional(cx, 2)
}

pub fn fractional_max_pool3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    fractional(cx, 3)
}

/// Scatters each value to its plane index in a zero output of spatial size `output_size`.
fn unpool(cx: &OpCx, k: usize) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let p = Planes::new(x, k)?;
    let idx = cx.tensor("indices")?.to_i64_vec();
    let out_sp = adaptive_out(cx, &p, k)?;
    let n: usize = out_sp.iter().product();
    if idx.len() != p.f.v.len() {
        return shape_err(format!("indices of {} elements for an input of {}", idx.len(), p.f.v.len()));
    }
    let mut v = vec![0.0; p.planes() * n];
    let m = p.plane_len().max(1);
    for (j, (&val, &i)) in p.f.v.iter().zip(&idx).enumerate() {
        let i = usize::try_from(i).ok().filter(|&i| i < n).ok_or_else(|| OpError::Arg {
            arg: "indices".into(),
            message: format!("index {i} out of range for an output plane of {n} elements"),
        })?;
        v[(j / m) * n + i] = val;
    }
    one(F::new(p.out_shape(&out_sp), v).to(x.dtype())?)
}

pub fn max_unpool2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unpool(cx, 2)
}

pub fn max_unpool3d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    unpool(cx, 3)
}

/// The gradient of max pooling: each output gradient added at its argmax.
pub fn max_pool_with_indices_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (g, x, idx) = (cx.tensor("grad_output")?, cx.tensor("self")?, cx.tensor("indices")?);
    let k = cx.ints("kernel_size")?.len().max(1);
    let p = Planes::new(x, k)?;
    let (gv, iv) = (g.to_f64_vec(), idx.to_i64_vec());
    let m = p.plane_len();
    let per = gv.len() / p.planes().max(1);
    let mut v = vec![0.0; p.f.v.len()];
    // Added output by output and rounded to the dtype at each step, as ATen's CPU kernel does.
    let r = super::fvec::round_to(g.dtype());
    for (j, (&gr, &i)) in gv.iter().zip(&iv).enumerate() {
        let at = (j / per.max(1)) * m + usize::try_from(i).ok().filter(|&i| i < m).ok_or_else(|| OpError::Arg {
            arg: "indices".into(),
            message: format!("index {i} out of range for a plane of {m} elements"),
        })?;
        v[at] = r(v[at] + gr);
    }
    one(F::new(p.f.shape.clone(), v).to(g.dtype())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_windows_overlap_like_pytorch() {
        assert_eq!(adaptive_taps(0, 5, 3), vec![0, 1]);
        assert_eq!(adaptive_taps(1, 5, 3), vec![1, 2, 3]);
        assert_eq!(adaptive_taps(2, 5, 3), vec![3, 4]);
    }

    #[test]
    fn fractional_intervals_end_at_the_last_window() {
        let s = fractional_starts(0.5, 10, 4, 3, DType::F64);
        assert_eq!(s.len(), 4);
        assert_eq!(*s.last().unwrap(), 7);
        assert!(s.windows(2).all(|w| w[0] <= w[1]));
    }
}
