//! Convolution in 1, 2 or 3 spatial dims, direct or transposed, grouped and dilated, with
//! `padding="same"`/`"valid"`; and `im2col`/`col2im` (unfold/fold). One loop nest over flat
//! coordinates in `f64`, shaped by PyTorch's output-size formulas.

use super::fvec::{strides, F};
use super::{one, shape_err, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;
use crate::ir::Arg;

fn per_dim(cx: &OpCx, name: &str, k: usize, default: usize) -> OpResult<Vec<usize>> {
    let v = cx.ints_or(name, &[])?;
    let v: Vec<i64> = match v.len() {
        0 => vec![default as i64; k],
        1 => vec![v[0]; k],
        _ => v,
    };
    if v.len() != k || v.iter().any(|&x| x < 0) {
        return Err(OpError::Arg { arg: name.into(), message: format!("expected {k} non-negative values, got {v:?}") });
    }
    Ok(v.iter().map(|&x| x as usize).collect())
}

pub(super) fn unflat(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for d in (0..dims.len()).rev() {
        c[d] = i % dims[d].max(1);
        i /= dims[d].max(1);
    }
    c
}

pub(super) struct Conv {
    pub stride: Vec<usize>,
    /// Padding before and after each spatial dim (`same` may pad one more after).
    pub pad: Vec<(usize, usize)>,
    pub dil: Vec<usize>,
    pub out_pad: Vec<usize>,
    pub groups: usize,
}

impl Conv {
    /// The flat index (row-major `strides` over `sizes`) that kernel tap `tap` of the window at
    /// `coord` touches — `coord·stride + tap·dilation - pad` per dim — or `None` in the padding.
    /// A convolution's window reads the input there; a transposed one writes its output there.
    pub fn tap_at(&self, coord: &[usize], tap: &[usize], sizes: &[usize], strides: &[usize]) -> Option<usize> {
        let mut at = 0usize;
        for d in 0..sizes.len() {
            let p = (coord[d] * self.stride[d] + tap[d] * self.dil[d]) as i64 - self.pad[d].0 as i64;
            if p < 0 || p >= sizes[d] as i64 {
                return None;
            }
            at += p as usize * strides[d];
        }
        Some(at)
    }

    /// The output's spatial sizes for input sizes `isp` and kernel sizes `ksp`, `None` where
    /// the kernel does not fit.
    pub fn out_sizes(&self, isp: &[usize], ksp: &[usize], transposed: bool) -> Option<Vec<usize>> {
        (0..isp.len())
            .map(|d| {
                let span = self.dil[d] * ksp[d].checked_sub(1)? + 1;
                if transposed {
                    ((isp[d].checked_sub(1)?) * self.stride[d] + span + self.out_pad[d]).checked_sub(self.pad[d].0 + self.pad[d].1)
                } else {
                    (isp[d] + self.pad[d].0 + self.pad[d].1).checked_sub(span).map(|a| a / self.stride[d] + 1)
                }
            })
            .collect()
    }

    pub fn from(cx: &OpCx, k: usize, ksizes: &[usize]) -> OpResult<Conv> {
        let stride = per_dim(cx, "stride", k, 1)?;
        let dil = per_dim(cx, "dilation", k, 1)?;
        if stride.contains(&0) || dil.contains(&0) {
            return shape_err("stride and dilation must be positive");
        }
        let pad = match cx.arg("padding") {
            Some(Arg::String(s)) if s == "valid" => vec![(0, 0); k],
            Some(Arg::String(s)) if s == "same" => {
                if stride.iter().any(|&s| s != 1) {
                    return shape_err("padding='same' needs stride 1");
                }
                (0..k).map(|d| (dil[d] * (ksizes[d] - 1) / 2, dil[d] * (ksizes[d] - 1) - dil[d] * (ksizes[d] - 1) / 2)).collect()
            }
            Some(Arg::String(s)) => return Err(OpError::Arg { arg: "padding".into(), message: format!("unknown mode `{s}`") }),
            _ => per_dim(cx, "padding", k, 0)?.into_iter().map(|p| (p, p)).collect(),
        };
        let out_pad = per_dim(cx, "output_padding", k, 0)?;
        let groups = cx.int_or("groups", 1)?;
        if groups <= 0 {
            return shape_err(format!("groups must be positive, got {groups}"));
        }
        Ok(Conv { stride, pad, dil, out_pad, groups: groups as usize })
    }
}

fn run(cx: &OpCx, transposed: bool) -> OpResult<Vec<RtValue>> {
    let (x, w) = (cx.tensor("input")?, cx.tensor("weight")?);
    if x.dtype() == crate::ir::DType::Bool {
        return Err(OpError::DType(x.dtype()));
    }
    let k = w.ndim().checked_sub(2).filter(|k| (1..=3).contains(k)).ok_or_else(|| OpError::Shape(format!("weight {:?} is not 3-, 4- or 5-D", w.shape())))?;
    let batched = match x.ndim() {
        n if n == k + 2 => true,
        n if n == k + 1 => false,
        _ => return shape_err(format!("input {:?} does not fit a {k}-D convolution", x.shape())),
    };
    let ws = w.shape().to_vec();
    let g = Conv::from(cx, k, &ws[2..])?;
    let mut xs = x.shape().to_vec();
    if !batched {
        xs.insert(0, 1);
    }
    let (n, c, isp) = (xs[0], xs[1], xs[2..].to_vec());
    let ksp = ws[2..].to_vec();
    // Direct: weight [Cout, Cin/g, k...]; transposed: weight [Cin, Cout/g, k...].
    let (cout, cin_g, cout_g) = if transposed { (ws[1] * g.groups, ws[0] / g.groups, ws[1]) } else { (ws[0], ws[1], ws[0] / g.groups) };
    let fits = if transposed { ws[0] == c && c % g.groups == 0 } else { ws[1] * g.groups == c && ws[0] % g.groups == 0 };
    if !fits {
        return shape_err(format!("weight {ws:?} with groups {} does not fit input {:?}", g.groups, x.shape()));
    }
    let osp = g.out_sizes(&isp, &ksp, transposed).ok_or_else(|| OpError::Shape(format!("kernel {ksp:?} does not fit input {:?}", x.shape())))?;
    let (xv, wv) = (x.to_f64_vec(), w.to_f64_vec());
    let (ilen, olen, klen): (usize, usize, usize) = (isp.iter().product(), osp.iter().product(), ksp.iter().product());
    let (ist, ost) = (strides(&isp), strides(&osp));
    // Coordinates are unflattened once, not per multiply-add.
    let taps: Vec<Vec<usize>> = (0..klen).map(|t| unflat(t, &ksp)).collect();
    let icoords: Vec<Vec<usize>> = if transposed { (0..ilen).map(|i| unflat(i, &isp)).collect() } else { Vec::new() };
    let ocoords: Vec<Vec<usize>> = if transposed { Vec::new() } else { (0..olen).map(|i| unflat(i, &osp)).collect() };
    let mut out = vec![0.0; n * cout * olen];
    for b in 0..n {
        for ci in 0..c {
            let grp = ci / cin_g.max(1);
            let plane = &xv[(b * c + ci) * ilen..(b * c + ci + 1) * ilen];
            for (ii, &xval) in plane.iter().enumerate().filter(|_| transposed) {
                let ic = &icoords[ii];
                for oc in 0..cout_g {
                    let o = grp * cout_g + oc;
                    for (t, tap) in taps.iter().enumerate() {
                        if let Some(at) = g.tap_at(ic, tap, &osp, &ost) {
                            out[(b * cout + o) * olen + at] += xval * wv[(ci * cout_g + oc) * klen + t];
                        }
                    }
                }
            }
            if transposed {
                continue;
            }
            for oc in 0..cout_g {
                let o = grp * cout_g + oc;
                let wrow = &wv[(o * cin_g + ci % cin_g) * klen..(o * cin_g + ci % cin_g + 1) * klen];
                for oi in 0..olen {
                    let ocd = &ocoords[oi];
                    let mut acc = 0.0;
                    for (t, tap) in taps.iter().enumerate() {
                        if let Some(at) = g.tap_at(ocd, tap, &isp, &ist) {
                            acc += plane[at] * wrow[t];
                        }
                    }
                    out[(b * cout + o) * olen + oi] += acc;
                }
            }
        }
    }
    if let Some(bias) = cx.opt_tensor("bias")? {
        let bv = bias.to_f64_vec();
        if bv.len() != cout {
            return shape_err(format!("bias {:?} does not have {cout} elements", bias.shape()));
        }
        out.iter_mut().enumerate().for_each(|(i, v)| *v += bv[(i / olen.max(1)) % cout]);
    }
    let mut shape = vec![n, cout];
    shape.extend(&osp);
    if !batched {
        shape.remove(0);
    }
    one(F::new(shape, out).to(x.dtype())?)
}

/// `conv3d`, `conv{1,2,3}d.padding` and direct `convolution` of any rank.
pub fn conv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, false)
}

pub fn conv_transpose(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, true)
}

pub fn convolution(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    run(cx, cx.bool_or("transposed", false)?)
}

/// `[N, C, H, W] → [N, C·kh·kw, L]`: every window's elements as a column (zeros in padding).
pub fn im2col(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let (ks, dil, pad, st) = (per_dim(cx, "kernel_size", 2, 1)?, per_dim(cx, "dilation", 2, 1)?, per_dim(cx, "padding", 2, 0)?, per_dim(cx, "stride", 2, 1)?);
    let batched = x.ndim() == 4;
    if !batched && x.ndim() != 3 || st.contains(&0) || dil.contains(&0) {
        return shape_err(format!("im2col of {:?}", x.shape()));
    }
    let s = x.shape();
    let (n, c, h, w) = if batched { (s[0], s[1], s[2], s[3]) } else { (1, s[0], s[1], s[2]) };
    let oh = (h + 2 * pad[0]).checked_sub(dil[0] * (ks[0] - 1) + 1).map(|a| a / st[0] + 1);
    let ow = (w + 2 * pad[1]).checked_sub(dil[1] * (ks[1] - 1) + 1).map(|a| a / st[1] + 1);
    let (Some(oh), Some(ow)) = (oh, ow) else { return shape_err(format!("kernel {ks:?} does not fit {:?}", s)) };
    let xv = x.to_f64_vec();
    let rows = c * ks[0] * ks[1];
    let mut v = vec![0.0; n * rows * oh * ow];
    for b in 0..n {
        for r in 0..rows {
            let (ch, i, j) = (r / (ks[0] * ks[1]), (r / ks[1]) % ks[0], r % ks[1]);
            for y in 0..oh {
                for z in 0..ow {
                    let (py, pz) = ((y * st[0] + i * dil[0]) as i64 - pad[0] as i64, (z * st[1] + j * dil[1]) as i64 - pad[1] as i64);
                    if py >= 0 && pz >= 0 && (py as usize) < h && (pz as usize) < w {
                        v[((b * rows + r) * oh + y) * ow + z] = xv[((b * c + ch) * h + py as usize) * w + pz as usize];
                    }
                }
            }
        }
    }
    let shape = if batched { vec![n, rows, oh * ow] } else { vec![rows, oh * ow] };
    one(F::new(shape, v).to(x.dtype())?)
}

/// The adjoint of `im2col`: columns summed back into an `[N, C, H, W]` image.
pub fn col2im(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let x = cx.tensor("self")?;
    let (ks, dil, pad, st) = (per_dim(cx, "kernel_size", 2, 1)?, per_dim(cx, "dilation", 2, 1)?, per_dim(cx, "padding", 2, 0)?, per_dim(cx, "stride", 2, 1)?);
    let os = per_dim(cx, "output_size", 2, 1)?;
    let batched = x.ndim() == 3;
    let s = x.shape();
    let (n, rows, l) = if batched { (s[0], s[1], s[2]) } else { (1, s[0], s[1]) };
    let (h, w) = (os[0], os[1]);
    let oh = (h + 2 * pad[0]).checked_sub(dil[0] * (ks[0] - 1) + 1).map(|a| a / st[0] + 1).unwrap_or(0);
    let ow = (w + 2 * pad[1]).checked_sub(dil[1] * (ks[1] - 1) + 1).map(|a| a / st[1] + 1).unwrap_or(0);
    if st.contains(&0) || rows % (ks[0] * ks[1]) != 0 || oh * ow != l {
        return shape_err(format!("col2im of {s:?} to {os:?} with kernel {ks:?}"));
    }
    let c = rows / (ks[0] * ks[1]);
    let xv = x.to_f64_vec();
    // Summed column by column and rounded to the dtype at each step, as ATen's CPU col2im does.
    let rd = super::fvec::round_to(x.dtype());
    let mut v = vec![0.0; n * c * h * w];
    for b in 0..n {
        for r in 0..rows {
            let (ch, i, j) = (r / (ks[0] * ks[1]), (r / ks[1]) % ks[0], r % ks[1]);
            for y in 0..oh {
                for z in 0..ow {
                    let (py, pz) = ((y * st[0] + i * dil[0]) as i64 - pad[0] as i64, (z * st[1] + j * dil[1]) as i64 - pad[1] as i64);
                    if py >= 0 && pz >= 0 && (py as usize) < h && (pz as usize) < w {
                        let at = ((b * c + ch) * h + py as usize) * w + pz as usize;
                        v[at] = rd(v[at] + xv[((b * rows + r) * oh + y) * ow + z]);
                    }
                }
            }
        }
    }
    let shape = if batched { vec![n, c, h, w] } else { vec![c, h, w] };
    one(F::new(shape, v).to(x.dtype())?)
}
