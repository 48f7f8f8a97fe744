//! Core ops whose natural form scatters or samples, written as gathers so each output element is
//! one work-item: the max-pooling gradient (sum of the output gradients whose argmax is this
//! element) and bilinear/nearest `grid_sampler_2d` with zeros padding.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, RedOp, Ty, UnOp};
use super::super::LowerError;
use crate::ir::Node;

/// `max_pool2d_with_indices_backward`: `grad_input[.., h, w] = Σ grad_output[.., i, j]` over the
/// output positions whose recorded index is `h·W + w`.
pub fn max_pool_backward(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (g, ind, x) = (cx.tensor(node, "grad_output")?, cx.tensor(node, "indices")?, cx.tensor(node, "self")?);
    let (gs, xs) = (cx.ksizes(g)?, cx.ksizes(x)?);
    let r = idx.len();
    if r < 3 || gs.len() != r || xs.len() != r {
        return Err(cx.err(node, "max-pool gradient needs inputs of rank 3 or 4"));
    }
    let here = cx.kb.binary(BinOp::Mul, idx[r - 2], xs[r - 1])?;
    let here = cx.kb.binary(BinOp::Add, here, idx[r - 1])?;
    let (vi, vj) = (cx.kb.fresh_var()?, cx.kb.fresh_var()?);
    let mut at = idx[..r - 2].to_vec();
    at.push(cx.kb.var(vi));
    at.push(cx.kb.var(vj));
    let i = cx.read(ind, &at)?;
    let gv = cx.read(g, &at)?;
    let hit = cx.kb.cmp(CmpOp::Eq, i, here)?;
    let zero = cx.kb.float_like(0.0, gv);
    let body = cx.kb.select(hit, gv, zero)?;
    let acc = cx.kb.reduce(RedOp::Sum, vj, gs[r - 1], body)?;
    Ok(cx.kb.reduce(RedOp::Sum, vi, gs[r - 2], acc)?)
}

/// `grid_sampler_2d` for bilinear (mode 0) and nearest (mode 1) sampling with zeros padding.
pub fn grid_sampler_2d(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> Result<ExprId, LowerError> {
    let (mode, pad, align) = (cx.int_or(node, "interpolation_mode", 0)?, cx.int_or(node, "padding_mode", 0)?, cx.bool_or(node, "align_corners", false)?);
    if mode > 1 || pad != 0 {
        return Err(cx.err(node, format!("grid sampling mode {mode} with padding mode {pad} is not supported (bilinear/nearest with zeros padding are)")));
    }
    let (x, grid) = (cx.tensor(node, "input")?, cx.tensor(node, "grid")?);
    let xs = cx.ksizes(x)?;
    if idx.len() != 4 || xs.len() != 4 {
        return Err(cx.err(node, "grid_sampler_2d needs a 4-D input"));
    }
    let (n, c, oy, ox) = (idx[0], idx[1], idx[2], idx[3]);
    // PyTorch's CPU kernel computes in the tensor's dtype: for float16/bfloat16 every step
    // below is rounded to it, as the interpreter's `grid_sampler` does.
    let store = Elem::from_dtype(cx.meta(x)?.dtype);
    let r = move |cx: &mut Ctx<'_>, e: ExprId| store.map_or(e, |s| cx.kb.round_to(e, s));
    // Pixel position of grid coordinate g over `size` pixels.
    let unnorm = |cx: &mut Ctx<'_>, coord: i64, size: ExprId| -> Result<ExprId, LowerError> {
        let k = cx.kb.i64(coord);
        let gv = cx.read(grid, &[n, oy, ox, k])?;
        let ty = cx.kb.ty(gv);
        let one = cx.kb.float_like(1.0, gv);
        let half = cx.kb.float_like(0.5, gv);
        let sf = cx.kb.cast(size, ty);
        let p1 = cx.kb.binary(BinOp::Add, gv, one)?;
        let p1 = r(cx, p1);
        if align {
            let s1 = cx.kb.binary(BinOp::Sub, sf, one)?;
            let a = cx.kb.binary(BinOp::Mul, p1, half)?;
            let a = r(cx, a);
            let a = cx.kb.binary(BinOp::Mul, a, s1)?;
            Ok(r(cx, a))
        } else {
            let a = cx.kb.binary(BinOp::Mul, p1, sf)?;
            let a = r(cx, a);
            let a = cx.kb.binary(BinOp::Sub, a, one)?;
            let a = r(cx, a);
            let a = cx.kb.binary(BinOp::Mul, a, half)?;
            Ok(r(cx, a))
        }
    };
    let (w, h) = (xs[3], xs[2]);
    let ix = unnorm(cx, 0, w)?;
    let iy = unnorm(cx, 1, h)?;
    // The grid's compute type (f32, or f64 for float64 tensors).
    let ty = cx.kb.ty(ix);
    // The value at integer pixel (px, py), zero outside the image.
    let value = |cx: &mut Ctx<'_>, px: ExprId, py: ExprId| -> Result<ExprId, LowerError> {
        let zero = cx.kb.i64(0);
        let c1 = cx.kb.cmp(CmpOp::Ge, px, zero)?;
        let c2 = cx.kb.cmp(CmpOp::Lt, px, w)?;
        let c3 = cx.kb.cmp(CmpOp::Ge, py, zero)?;
        let c4 = cx.kb.cmp(CmpOp::Lt, py, h)?;
        let m = cx.kb.and(c1, c2)?;
        let m = cx.kb.and(m, c3)?;
        let m = cx.kb.and(m, c4)?;
        let sx = cx.kb.select(m, px, zero)?;
        let sy = cx.kb.select(m, py, zero)?;
        let v = cx.read(x, &[n, c, sy, sx])?;
        let v = cx.kb.cast(v, ty);
        let z = cx.kb.float_like(0.0, v);
        Ok(cx.kb.select(m, v, z)?)
    };
    if mode == 1 {
        // nearbyint: round half to even, as `rint`.
        let rx = cx.kb.unary(UnOp::Rint, ix);
        let ry = cx.kb.unary(UnOp::Rint, iy);
        let (px, py) = (cx.kb.cast(rx, Ty::I64), cx.kb.cast(ry, Ty::I64));
        return value(cx, px, py);
    }
    let (fx, fy) = (cx.kb.unary(UnOp::Floor, ix), cx.kb.unary(UnOp::Floor, iy));
    let (tx, ty) = (cx.kb.binary(BinOp::Sub, ix, fx)?, cx.kb.binary(BinOp::Sub, iy, fy)?);
    let (tx, ty) = (r(cx, tx), r(cx, ty));
    let one = cx.kb.float_like(1.0, ix);
    let (ux, uy) = (cx.kb.binary(BinOp::Sub, one, tx)?, cx.kb.binary(BinOp::Sub, one, ty)?);
    let (ux, uy) = (r(cx, ux), r(cx, uy));
    let (x0, y0) = (cx.kb.cast(fx, Ty::I64), cx.kb.cast(fy, Ty::I64));
    let i1 = cx.kb.i64(1);
    let (x1, y1) = (cx.kb.binary(BinOp::Add, x0, i1)?, cx.kb.binary(BinOp::Add, y0, i1)?);
    let mut acc = cx.kb.float_like(0.0, ix);
    for (px, py, wx, wy) in [(x0, y0, ux, uy), (x1, y0, tx, uy), (x0, y1, ux, ty), (x1, y1, tx, ty)] {
        let v = value(cx, px, py)?;
        let wgt = cx.kb.binary(BinOp::Mul, wx, wy)?;
        let wgt = r(cx, wgt);
        let p = cx.kb.binary(BinOp::Mul, wgt, v)?;
        let p = r(cx, p);
        acc = cx.kb.binary(BinOp::Add, acc, p)?;
        acc = r(cx, acc);
    }
    Ok(acc)
}
