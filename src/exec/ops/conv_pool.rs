//! 2-D pooling as direct loops in `f64` (convolution of every rank lives in `conv_nd`, pooling
//! of other ranks in `pool_nd`). Output sizes follow PyTorch's formulas, including `ceil_mode`'s
//! rule that the last window must start inside the input or its left padding.

use super::{dtype_ok, one, shape_err, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;
use crate::ir::DType;

/// A per-spatial-dim argument (`int[2]`): one value stands for all dims.
fn pair(cx: &OpCx, name: &str, default: &[i64], dims: usize) -> OpResult<Vec<usize>> {
    let v = cx.ints_or(name, default)?;
    let v = if v.len() == 1 { vec![v[0]; dims] } else { v };
    if v.len() != dims || v.iter().any(|&x| x < 0) {
        return Err(OpError::Arg { arg: name.into(), message: format!("expected {dims} non-negative values, got {v:?}") });
    }
    Ok(v.iter().map(|&x| x as usize).collect())
}

/// Output length of a sliding window, or `None` when the window does not fit.
fn out_len(len: usize, k: usize, s: usize, p: usize, d: usize, ceil: bool) -> Option<usize> {
    let span = d * (k - 1) + 1;
    let avail = (len + 2 * p).checked_sub(span)?;
    let mut n = if ceil { avail.div_ceil(s) } else { avail / s } + 1;
    if ceil && (n - 1) * s >= len + p {
        n -= 1;
    }
    Some(n)
}

/// Pooling geometry over the last two dims; every leading dim is a separate plane.
struct Pool {
    planes: usize,
    lead: Vec<usize>,
    h: usize,
    w: usize,
    k: Vec<usize>,
    s: Vec<usize>,
    p: Vec<usize>,
    d: Vec<usize>,
    oh: usize,
    ow: usize,
}

fn pool_geometry(cx: &OpCx, t: &Tensor, dilation: bool) -> OpResult<Pool> {
    if t.ndim() != 3 && t.ndim() != 4 {
        return shape_err(format!("2-D pooling expects a 3-D or 4-D input, got {:?}", t.shape()));
    }
    let k = pair(cx, "kernel_size", &[], 2)?;
    let s = match cx.ints_or("stride", &[])? {
        v if v.is_empty() => k.clone(),
        _ => pair(cx, "stride", &[], 2)?,
    };
    let p = pair(cx, "padding", &[0], 2)?;
    let d = if dilation { pair(cx, "dilation", &[1], 2)? } else { vec![1, 1] };
    if k.contains(&0) || s.contains(&0) || d.contains(&0) {
        return shape_err("kernel_size, stride and dilation must be positive");
    }
    if p[0] * 2 > k[0] || p[1] * 2 > k[1] {
        return shape_err(format!("padding {p:?} must be at most half of kernel_size {k:?}"));
    }
    let ceil = cx.bool_or("ceil_mode", false)?;
    let nd = t.ndim();
    let (h, w) = (t.shape()[nd - 2], t.shape()[nd - 1]);
    let (oh, ow) = match (out_len(h, k[0], s[0], p[0], d[0], ceil), out_len(w, k[1], s[1], p[1], d[1], ceil)) {
        (Some(a), Some(b)) if a > 0 && b > 0 => (a, b),
        _ => return shape_err(format!("pooling window {k:?} does not fit input {:?}", t.shape())),
    };
    let lead = t.shape()[..nd - 2].to_vec();
    Ok(Pool { planes: lead.iter().product(), lead, h, w, k, s, p, d, oh, ow })
}

impl Pool {
    fn out_shape(&self) -> Vec<usize> {
        let mut s = self.lead.clone();
        s.extend([self.oh, self.ow]);
        s
    }
}

fn float_tensor(v: Vec<f64>, shape: &[usize], dtype: DType) -> OpResult<Tensor> {
    let t = Tensor::from_vec(shape, v).ok_or_else(|| OpError::Shape("pooling result".into()))?;
    dtype_ok(t.cast(dtype))
}

/// Max pooling: values and the flat `h * W + w` index of each maximum within its plane.
/// Max pooling: the values, each maximum's flat index in its input plane, and its offset
/// `a·kw + b` inside its window (what Inductor's low-memory max-pool keeps instead).
fn max_pool(cx: &OpCx) -> OpResult<(Tensor, Tensor, Tensor)> {
    let t = cx.tensor("self")?;
    let g = pool_geometry(cx, t, true)?;
    let x = t.to_f64_vec();
    let (mut vals, mut idx, mut offsets) = (Vec::new(), Vec::new(), Vec::new());
    for pl in 0..g.planes {
        let plane = &x[pl * g.h * g.w..(pl + 1) * g.h * g.w];
        for y in 0..g.oh {
            for z in 0..g.ow {
                let (mut best, mut at, mut off) = (f64::NEG_INFINITY, -1i64, 0i64);
                for a in 0..g.k[0] {
                    let hy = (y * g.s[0] + a * g.d[0]) as isize - g.p[0] as isize;
                    if hy < 0 || hy >= g.h as isize {
                        continue;
                    }
                    for b in 0..g.k[1] {
                        let wz = (z * g.s[1] + b * g.d[1]) as isize - g.p[1] as isize;
                        if wz < 0 || wz >= g.w as isize {
                            continue;
                        }
                        let i = hy as usize * g.w + wz as usize;
                        let v = plane[i];
                        // NaN wins, as in PyTorch's kernel.
                        if at < 0 || v > best || v.is_nan() && !best.is_nan() {
                            best = v;
                            at = i as i64;
                            off = (a * g.k[1] + b) as i64;
                        }
                    }
                }
                vals.push(best);
                idx.push(at);
                offsets.push(off);
            }
        }
    }
    let shape = g.out_shape();
    let values = float_tensor(vals, &shape, t.dtype())?;
    let indices = Tensor::from_vec(&shape, idx).ok_or_else(|| OpError::Shape("pooling indices".into()))?;
    let offsets = Tensor::from_vec(&shape, offsets).ok_or_else(|| OpError::Shape("pooling offsets".into()))?;
    Ok((values, indices, offsets))
}

pub fn max_pool2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(max_pool(cx)?.0)
}

pub fn max_pool2d_with_indices(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (v, i, _) = max_pool(cx)?;
    Ok(vec![RtValue::Tensor(v), RtValue::Tensor(i)])
}

/// `prims._low_memory_max_pool_with_offsets`: the values, and the int8 offset of each maximum
/// inside its window.
pub fn max_pool_with_offsets(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (v, _, o) = max_pool(cx)?;
    Ok(vec![RtValue::Tensor(v), RtValue::Tensor(dtype_ok(o.cast(DType::I8))?)])
}

/// `prims._low_memory_max_pool_offsets_to_indices`: window offsets back to flat indices into
/// each `input_size` plane: `(oh·s - p + ⌊off/kw⌋·d) · W + (ow·s - p + (off mod kw)·d)`.
pub fn max_pool_offsets_to_indices(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (k, size) = (pair(cx, "kernel_size", &[], 2)?, pair(cx, "input_size", &[], 2)?);
    let (s, p, d) = (pair(cx, "stride", &[], 2)?, pair(cx, "padding", &[0], 2)?, pair(cx, "dilation", &[1], 2)?);
    let nd = t.ndim();
    if nd < 2 || k.contains(&0) {
        return shape_err(format!("pooling offsets of rank {nd} with kernel_size {k:?}"));
    }
    let (oh, ow) = (t.shape()[nd - 2], t.shape()[nd - 1]);
    let offsets = t.to_i64_vec();
    let (kw, w) = (k[1] as i64, size[1] as i64);
    let idx: Vec<i64> = offsets
        .iter()
        .enumerate()
        .map(|(i, &off)| {
            let (y, z) = (((i / ow) % oh) as i64, (i % ow) as i64);
            let h = y * s[0] as i64 - p[0] as i64 + (off / kw) * d[0] as i64;
            let x = z * s[1] as i64 - p[1] as i64 + (off % kw) * d[1] as i64;
            h * w + x
        })
        .collect();
    one(Tensor::from_vec(t.shape(), idx).ok_or_else(|| OpError::Shape("pooling indices".into()))?)
}

pub fn avg_pool2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let g = pool_geometry(cx, t, false)?;
    let include_pad = cx.bool_or("count_include_pad", true)?;
    let divisor = cx.opt_int("divisor_override")?;
    if divisor == Some(0) {
        return shape_err("divisor_override must be non-zero");
    }
    let x = t.to_f64_vec();
    let mut out = Vec::with_capacity(g.planes * g.oh * g.ow);
    for pl in 0..g.planes {
        let plane = &x[pl * g.h * g.w..(pl + 1) * g.h * g.w];
        for y in 0..g.oh {
            for z in 0..g.ow {
                // Window in padded coordinates, clipped to the padded input, then to the input.
                let h0 = (y * g.s[0]) as isize - g.p[0] as isize;
                let w0 = (z * g.s[1]) as isize - g.p[1] as isize;
                let h1 = (h0 + g.k[0] as isize).min((g.h + g.p[0]) as isize);
                let w1 = (w0 + g.k[1] as isize).min((g.w + g.p[1]) as isize);
                let padded = (h1 - h0) * (w1 - w0);
                let (h0, w0, h1, w1) = (h0.max(0), w0.max(0), h1.min(g.h as isize), w1.min(g.w as isize));
                let mut sum = 0.0;
                for a in h0..h1 {
                    for b in w0..w1 {
                        sum += plane[a as usize * g.w + b as usize];
                    }
                }
                let div = match divisor {
                    Some(d) => d as f64,
                    None if include_pad => padded as f64,
                    None => ((h1 - h0) * (w1 - w0)) as f64,
                };
                out.push(sum / div);
            }
        }
    }
    one(float_tensor(out, &g.out_shape(), t.dtype())?)
}

pub fn adaptive_avg_pool2d(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let nd = t.ndim();
    if nd != 3 && nd != 4 {
        return shape_err(format!("adaptive_avg_pool2d expects a 3-D or 4-D input, got {:?}", t.shape()));
    }
    let os = pair(cx, "output_size", &[], 2)?;
    let (h, w) = (t.shape()[nd - 2], t.shape()[nd - 1]);
    let (oh, ow) = (os[0], os[1]);
    if (h == 0 || w == 0) && oh * ow > 0 {
        return shape_err(format!("adaptive_avg_pool2d of an empty plane {:?}", t.shape()));
    }
    let planes: usize = t.shape()[..nd - 2].iter().product();
    let x = t.to_f64_vec();
    let mut out = Vec::with_capacity(planes * oh * ow);
    for pl in 0..planes {
        let plane = &x[pl * h * w..(pl + 1) * h * w];
        for y in 0..oh {
            let (a0, a1) = (y * h / oh, ((y + 1) * h).div_ceil(oh));
            for z in 0..ow {
                let (b0, b1) = (z * w / ow, ((z + 1) * w).div_ceil(ow));
                let mut sum = 0.0;
                for a in a0..a1 {
                    for b in b0..b1 {
                        sum += plane[a * w + b];
                    }
                }
                out.push(sum / ((a1 - a0) * (b1 - b0)) as f64);
            }
        }
    }
    let mut shape = t.shape()[..nd - 2].to_vec();
    shape.extend([oh, ow]);
    one(float_tensor(out, &shape, t.dtype())?)
}
