//! `_upsample_bilinear2d_aa`: ATen's separable antialiased bilinear resize (see
//! `exec::ops::antialias`, which holds the weight formulas and the per-axis constants). Each
//! output element runs the width pass for every input row its height taps need, then the height
//! pass over those values: O(taps_h · taps_w) per element, the taps growing with the
//! downsampling factor.
//!
//! The weights are computed per output position in the kernel with the interpreter's arithmetic:
//! in float64, rounded to float32 wherever ATen's float32 kernel rounds, so the float32 path gets
//! its weights bit for bit. Sums run in the tensor's type; uint8 images use int16 fixed-point
//! weights (the precision per axis is a compile-time constant: the spatial sizes must be static)
//! and round and saturate each pass.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, UnOp};
use super::super::LowerError;
use crate::exec::ops::antialias::{int16_precision, Axis};
use crate::ir::{Arg, DType, Node, ValueId};

type R = Result<ExprId, LowerError>;

/// One resampled axis: its constants, and the uint8 fixed-point precision.
struct AxisK {
    axis: Axis,
    precision: Option<u32>,
}

/// What the passes share: the input and the type its sums run in.
struct Image {
    x: ValueId,
    /// float32 for float32 images, float64 for float64 (uint8 sums in integers).
    ty: Ty,
}

impl AxisK {
    /// `v` rounded to float32 where ATen computes this axis in float32.
    fn f(&self, cx: &mut Ctx<'_>, v: ExprId) -> ExprId {
        if !self.axis.narrow {
            return v;
        }
        let n = cx.kb.cast(v, Ty::F32);
        cx.kb.cast(n, Ty::F64)
    }

    /// The first input position and the tap count of output position `i`.
    fn window(&self, cx: &mut Ctx<'_>, i: ExprId) -> Result<(ExprId, ExprId, ExprId), LowerError> {
        let a = &self.axis;
        let (half, scale, support) = (cx.kb.f64(0.5), cx.kb.f64(a.scale), cx.kb.f64(a.support));
        let fi = cx.kb.cast(i, Ty::F64);
        let c = cx.kb.binary(BinOp::Add, fi, half)?;
        let c = cx.kb.binary(BinOp::Mul, scale, c)?;
        let center = self.f(cx, c);
        let lo = cx.kb.binary(BinOp::Sub, center, support)?;
        let lo = self.f(cx, lo);
        let lo = cx.kb.binary(BinOp::Add, lo, half)?;
        let hi = cx.kb.binary(BinOp::Add, center, support)?;
        let hi = self.f(cx, hi);
        let hi = cx.kb.binary(BinOp::Add, hi, half)?;
        let (zero, input, most) = (cx.kb.i64(0), cx.kb.i64(a.input as i64), cx.kb.i64(a.max_taps as i64));
        let xmin = cx.kb.cast(lo, Ty::I64);
        let xmin = cx.kb.binary(BinOp::Max, xmin, zero)?;
        let xmax = cx.kb.cast(hi, Ty::I64);
        let xmax = cx.kb.binary(BinOp::Min, xmax, input)?;
        let size = cx.kb.binary(BinOp::Sub, xmax, xmin)?;
        let size = cx.kb.binary(BinOp::Max, size, zero)?;
        let size = cx.kb.binary(BinOp::Min, size, most)?;
        Ok((xmin, size, center))
    }

    /// The unnormalized weight of tap `j` (the triangle filter at its distance from the
    /// centre), in the axis's float type.
    fn weight(&self, cx: &mut Ctx<'_>, xmin: ExprId, center: ExprId, j: ExprId, ty: Ty) -> R {
        let k = cx.kb.binary(BinOp::Add, j, xmin)?;
        let k = cx.kb.cast(k, Ty::F64);
        let d = cx.kb.binary(BinOp::Sub, k, center)?;
        let d = self.f(cx, d);
        let (half, inv, one) = (cx.kb.f64(0.5), cx.kb.f64(self.axis.invscale), cx.kb.f64(1.0));
        let d = cx.kb.binary(BinOp::Add, d, half)?;
        let d = cx.kb.binary(BinOp::Mul, d, inv)?;
        let d = self.f(cx, d);
        let d = cx.kb.unary(UnOp::Abs, d);
        let w = cx.kb.binary(BinOp::Sub, one, d)?;
        let w = self.f(cx, w);
        let zero = cx.kb.f64(0.0);
        let inside = cx.kb.cmp(CmpOp::Lt, d, one)?;
        let w = cx.kb.select(inside, w, zero)?;
        Ok(cx.kb.cast(w, ty))
    }

    /// Σ over the taps of output position `i` of (normalized weight) · `value(input position)`,
    /// as one pass of ATen's resampler computes it.
    fn pass(&self, cx: &mut Ctx<'_>, img: &Image, i: ExprId, value: &mut dyn FnMut(&mut Ctx<'_>, ExprId) -> R) -> R {
        let wty = if self.axis.narrow { Ty::F32 } else { Ty::F64 };
        let (xmin, size, center) = self.window(cx, i)?;
        let tv = cx.kb.fresh_var()?;
        let t = cx.kb.var(tv);
        let wt = self.weight(cx, xmin, center, t, wty)?;
        let total = cx.kb.reduce(RedOp::Sum, tv, size, wt)?;
        let jv = cx.kb.fresh_var()?;
        let j = cx.kb.var(jv);
        let w = self.weight(cx, xmin, center, j, wty)?;
        let zero_w = cx.kb.float_like(0.0, w);
        let some = cx.kb.cmp(CmpOp::Ne, total, zero_w)?;
        let normalized = cx.kb.binary(BinOp::Div, w, total)?;
        let w = cx.kb.select(some, normalized, w)?;
        let pos = cx.kb.binary(BinOp::Add, xmin, j)?;
        let v = value(cx, pos)?;
        match self.precision {
            None => {
                let v = cx.kb.cast(v, img.ty);
                let term = cx.kb.binary(BinOp::Mul, v, w)?;
                Ok(cx.kb.reduce(RedOp::Sum, jv, size, term)?)
            }
            Some(p) => {
                // int16 weight: w · 2^p rounded half away from zero; then round and saturate.
                let kb = &mut cx.kb;
                let wd = kb.cast(w, Ty::F64);
                let scale = kb.f64((1u64 << p) as f64);
                let s = kb.binary(BinOp::Mul, wd, scale)?;
                let half = kb.f64(0.5);
                let zero = kb.f64(0.0);
                let neg = kb.cmp(CmpOp::Lt, s, zero)?;
                let down = kb.binary(BinOp::Sub, s, half)?;
                let up = kb.binary(BinOp::Add, s, half)?;
                let r = kb.select(neg, down, up)?;
                let k = kb.cast(r, Ty::I64);
                let v = kb.cast(v, Ty::I64);
                let term = kb.binary(BinOp::Mul, v, k)?;
                let sum = kb.reduce(RedOp::Sum, jv, size, term)?;
                let bias = kb.i64(1 << (p.max(1) - 1));
                let sum = kb.binary(BinOp::Add, sum, bias)?;
                let shift = kb.i64(i64::from(p));
                let q = kb.binary(BinOp::Shr, sum, shift)?;
                let (lo, hi) = (kb.i64(0), kb.i64(255));
                let q = kb.binary(BinOp::Max, q, lo)?;
                Ok(kb.binary(BinOp::Min, q, hi)?)
            }
        }
    }
}

/// `_upsample_bilinear2d_aa.vec(input, output_size, align_corners, scale_factors)` and
/// `.default(self, output_size, align_corners, scales_h, scales_w)`.
pub fn bilinear_aa(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, if node.arg("input").is_some() { "input" } else { "self" })?;
    let dtype = cx.meta(x)?.dtype;
    let ty = match dtype {
        DType::F32 => Ty::F32,
        DType::F64 => Ty::F64,
        DType::U8 => Ty::I64,
        d => return Err(cx.err(node, format!("antialiased resizing of {} (ATen's CPU kernel takes float32, float64, uint8)", d.name()))),
    };
    let [n, c, oy, ox] = idx[..] else { return Err(cx.err(node, "antialiased bilinear resizing takes [N, C, H, W]")) };
    let (ins, outs) = (cx.sizes(x)?, super::pointwise::out_sizes(cx, node)?);
    let stat = |v: &crate::sym::Expr| v.as_int().filter(|&s| s > 0).map(|s| s as usize);
    let (Some(h), Some(w), Some(oh), Some(ow)) = (stat(&ins[2]), stat(&ins[3]), stat(&outs[2]), stat(&outs[3])) else {
        return Err(cx.err(node, "antialiased resizing needs static spatial sizes"));
    };
    let align = cx.bool_or(node, "align_corners", false)?;
    let scale = |name: &str| match node.arg(name) {
        Some(Arg::Float(f)) => Some(*f),
        _ => None,
    };
    let scales: Option<Vec<f64>> = match (node.arg("scale_factors"), scale("scales_h"), scale("scales_w")) {
        (Some(Arg::Floats(v)), _, _) if v.len() == 2 => Some(v.clone()),
        (_, Some(h), Some(w)) => Some(vec![h, w]),
        _ => None,
    };
    let narrow = dtype == DType::F32;
    let axis = |input: usize, output: usize, d: usize| -> Option<AxisK> {
        (input != output).then(|| {
            let axis = Axis::new(input, output, align, scales.as_ref().map(|s| s[d]), narrow);
            AxisK { precision: (dtype == DType::U8).then(|| int16_precision(&axis)), axis }
        })
    };
    let (ay, ax) = (axis(h, oh, 0), axis(w, ow, 1));
    let img = Image { x, ty };
    // The width pass at input row `y` (or the input itself when the width does not change).
    let mut row = |cx: &mut Ctx<'_>, y: ExprId| -> R {
        match &ax {
            Some(a) => a.pass(cx, &img, ox, &mut |cx, xpos| read(cx, &img, n, c, y, xpos, h, w)),
            None => read(cx, &img, n, c, y, ox, h, w),
        }
    };
    let v = match &ay {
        Some(a) => a.pass(cx, &img, oy, &mut row)?,
        None => row(cx, oy)?,
    };
    Ok(v)
}

/// The input at `(n, c, y, x)`, masked inside the image (taps always are; the mask keeps an
/// inconsistent size from reading out of bounds).
#[allow(clippy::too_many_arguments)]
fn read(cx: &mut Ctx<'_>, img: &Image, n: ExprId, c: ExprId, y: ExprId, x: ExprId, h: usize, w: usize) -> R {
    let (hh, ww) = (cx.kb.i64(h as i64), cx.kb.i64(w as i64));
    let iy = super::conv::in_range(cx, y, hh)?;
    let ix = super::conv::in_range(cx, x, ww)?;
    let m = cx.kb.and(iy, ix)?;
    let zero = super::conv::constant(cx, 0.0, img.ty);
    super::conv::read_masked(cx, img.x, &[n, c, y, x], m, zero)
}
