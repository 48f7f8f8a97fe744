//! Sampling written as a gather so each output element is one work-item: bilinear/nearest
//! `grid_sampler_2d` with zeros padding (the pooling gradients are in `pool_grad`).

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty, UnOp};
use super::super::LowerError;
use crate::ir::Node;

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
    // Pixel position of grid coordinate g over `size` pixels.
    let unnorm = |cx: &mut Ctx<'_>, coord: i64, size: ExprId| -> Result<ExprId, LowerError> {
        let k = cx.kb.i64(coord);
        let gv = cx.read(grid, &[n, oy, ox, k])?;
        let ty = cx.kb.ty(gv);
        let one = cx.kb.float_like(1.0, gv);
        let half = cx.kb.float_like(0.5, gv);
        let sf = cx.kb.cast(size, ty);
        let p1 = cx.kb.binary(BinOp::Add, gv, one)?;
        if align {
            let s1 = cx.kb.binary(BinOp::Sub, sf, one)?;
            let a = cx.kb.binary(BinOp::Mul, p1, half)?;
            Ok(cx.kb.binary(BinOp::Mul, a, s1)?)
        } else {
            let a = cx.kb.binary(BinOp::Mul, p1, sf)?;
            let a = cx.kb.binary(BinOp::Sub, a, one)?;
            Ok(cx.kb.binary(BinOp::Mul, a, half)?)
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
    let one = cx.kb.float_like(1.0, ix);
    let (ux, uy) = (cx.kb.binary(BinOp::Sub, one, tx)?, cx.kb.binary(BinOp::Sub, one, ty)?);
    let (x0, y0) = (cx.kb.cast(fx, Ty::I64), cx.kb.cast(fy, Ty::I64));
    let i1 = cx.kb.i64(1);
    let (x1, y1) = (cx.kb.binary(BinOp::Add, x0, i1)?, cx.kb.binary(BinOp::Add, y0, i1)?);
    let mut acc = cx.kb.float_like(0.0, ix);
    for (px, py, wx, wy) in [(x0, y0, ux, uy), (x1, y0, tx, uy), (x0, y1, ux, ty), (x1, y1, tx, ty)] {
        let v = value(cx, px, py)?;
        let wgt = cx.kb.binary(BinOp::Mul, wx, wy)?;
        let p = cx.kb.binary(BinOp::Mul, v, wgt)?;
        acc = cx.kb.binary(BinOp::Add, acc, p)?;
    }
    Ok(acc)
}
