//! Adjoints of sliding windows as gathers: `convolution_backward` (direct or transposed,
//! grouped, strided, padded and dilated, 1-3 spatial dims) and `col2im`.
//!
//! A direct convolution reads input position `x = y·s - p + t·d` for output position `y` and
//! kernel tap `t`; its input gradient at `x` gathers the outputs `y = (x + p - t·d) / s` where
//! that division is exact and in range. A transposed convolution is the same relation with
//! input and output swapped, so its input gradient is a direct convolution of the output
//! gradient. Weight gradients fold over the batch and the positions the tap links.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, Elem, ExprId, RedOp, Ty, VarId};
use super::super::LowerError;
use super::conv::{constant, in_range, read_masked, spatial, tap};
use crate::ir::Node;

type R = Result<ExprId, LowerError>;

/// The compute type of output `out` of `node`.
fn ty_of(cx: &Ctx<'_>, node: &Node, out: usize) -> Result<Ty, LowerError> {
    let v = *node.outputs.get(out).ok_or_else(|| cx.err(node, format!("has no output {out}")))?;
    Ok(Elem::from_dtype(cx.meta(v)?.dtype).map_or(Ty::F32, Elem::ty))
}

/// The source coordinate of a gather through a window: `(x + p - t·d) / s` when exact, with
/// whether it is, and lies below `n`.
fn inverse_tap(cx: &mut Ctx<'_>, x: ExprId, t: ExprId, s: i64, p: i64, d: i64, n: ExprId) -> Result<(ExprId, ExprId), LowerError> {
    let (pk, dk, sk, zero) = (cx.kb.i64(p), cx.kb.i64(d), cx.kb.i64(s), cx.kb.i64(0));
    let num = cx.kb.binary(BinOp::Add, x, pk)?;
    let td = cx.kb.binary(BinOp::Mul, t, dk)?;
    let num = cx.kb.binary(BinOp::Sub, num, td)?;
    let ge = cx.kb.cmp(CmpOp::Ge, num, zero)?;
    // Integer division and remainder are only asked of non-negative numerators.
    let safe = cx.kb.binary(BinOp::Max, num, zero)?;
    let rem = cx.kb.binary(BinOp::Rem, safe, sk)?;
    let exact = cx.kb.cmp(CmpOp::Eq, rem, zero)?;
    let y = cx.kb.binary(BinOp::Div, safe, sk)?;
    let lt = cx.kb.cmp(CmpOp::Lt, y, n)?;
    let ok = cx.kb.and(ge, exact)?;
    let ok = cx.kb.and(ok, lt)?;
    Ok((y, ok))
}

fn fold(cx: &mut Ctx<'_>, vars: Vec<(VarId, ExprId)>, body: ExprId) -> R {
    let mut acc = body;
    for (v, e) in vars.into_iter().rev() {
        acc = cx.kb.reduce(RedOp::Sum, v, e, acc)?;
    }
    Ok(acc)
}

/// Which of the three gradients output `out` is: the importer keeps only those `output_mask`
/// asks for, in order.
fn which(cx: &Ctx<'_>, node: &Node, out: usize) -> Result<usize, LowerError> {
    let mask = match node.arg("output_mask") {
        Some(crate::ir::Arg::Bools(b)) if b.len() == 3 => b.clone(),
        other => return Err(cx.err(node, format!("argument `output_mask`: expected 3 bools, got {other:?}"))),
    };
    (0..3).filter(|&i| mask[i]).nth(out).ok_or_else(|| cx.err(node, format!("output {out} is not one `output_mask` asks for")))
}

/// `convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
/// transposed, output_padding, groups, output_mask)`.
pub fn convolution_backward(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (g, x, w) = (cx.tensor(node, "grad_output")?, cx.tensor(node, "input")?, cx.tensor(node, "weight")?);
    let (gs, xs, ws) = (cx.ksizes(g)?, cx.ksizes(x)?, cx.ksizes(w)?);
    let sd = match ws.len().checked_sub(2) {
        Some(sd @ 1..=3) if xs.len() == sd + 2 && gs.len() == sd + 2 => sd,
        _ => return Err(cx.err(node, "convolution_backward needs batched 1-, 2- or 3-D operands")),
    };
    let stride = spatial(cx, node, "stride", 1, sd)?;
    let pad = spatial(cx, node, "padding", 0, sd)?;
    let dil = spatial(cx, node, "dilation", 1, sd)?;
    let groups = cx.int_or(node, "groups", 1)?;
    if groups <= 0 || stride.iter().chain(&dil).any(|&v| v <= 0) {
        return Err(cx.err(node, "groups, stride and dilation must be positive"));
    }
    let transposed = cx.bool_or(node, "transposed", false)?;
    let which = which(cx, node, out)?;
    let ty = ty_of(cx, node, out)?;
    let gk = cx.kb.i64(groups);
    // Channels per group on each side: direct weight [Cout, Cin/g, k...], transposed [Cin, Cout/g, k...].
    let (cin_g, cout_g) = if transposed { (cx.kb.binary(BinOp::Div, ws[0], gk)?, ws[1]) } else { (ws[1], cx.kb.binary(BinOp::Div, ws[0], gk)?) };
    let zero = constant(cx, 0.0, ty);
    match which {
        // Input gradient at [b, c, x...].
        0 => {
            let c = idx[1];
            let grp = cx.kb.binary(BinOp::Div, c, cin_g)?;
            let vo = cx.kb.fresh_var()?;
            let oc = cx.kb.var(vo);
            let base = cx.kb.binary(BinOp::Mul, grp, cout_g)?;
            let o = cx.kb.binary(BinOp::Add, base, oc)?;
            let mut vars = vec![(vo, cout_g)];
            let mut mask = cx.kb.bool(true);
            let mut g_at = vec![idx[0], o];
            let mut w_at = if transposed {
                vec![c, oc]
            } else {
                let cb = cx.kb.binary(BinOp::Mul, grp, cin_g)?;
                vec![o, cx.kb.binary(BinOp::Sub, c, cb)?]
            };
            for d in 0..sd {
                let v = cx.kb.fresh_var()?;
                let t = cx.kb.var(v);
                let (y, ok) = if transposed {
                    let y = tap(cx, idx[2 + d], t, stride[d], pad[d], dil[d])?;
                    (y, in_range(cx, y, gs[2 + d])?)
                } else {
                    inverse_tap(cx, idx[2 + d], t, stride[d], pad[d], dil[d], gs[2 + d])?
                };
                mask = cx.kb.and(mask, ok)?;
                g_at.push(y);
                w_at.push(t);
                vars.push((v, ws[2 + d]));
            }
            let gv = read_masked(cx, g, &g_at, mask, zero)?;
            let wv = cx.read(w, &w_at)?;
            let wv = cx.kb.cast(wv, ty);
            let body = cx.kb.binary(BinOp::Mul, gv, wv)?;
            fold(cx, vars, body)
        }
        // Weight gradient at [w0, w1, t...]: direct [o, c within group], transposed [c, o within group].
        1 => {
            let (c, o) = if transposed {
                let grp = cx.kb.binary(BinOp::Div, idx[0], cin_g)?;
                let base = cx.kb.binary(BinOp::Mul, grp, cout_g)?;
                (idx[0], cx.kb.binary(BinOp::Add, base, idx[1])?)
            } else {
                let grp = cx.kb.binary(BinOp::Div, idx[0], cout_g)?;
                let base = cx.kb.binary(BinOp::Mul, grp, cin_g)?;
                (cx.kb.binary(BinOp::Add, base, idx[1])?, idx[0])
            };
            let vb = cx.kb.fresh_var()?;
            let b = cx.kb.var(vb);
            let mut vars = vec![(vb, xs[0])];
            let mut mask = cx.kb.bool(true);
            let (mut x_at, mut g_at) = (vec![b, c], vec![b, o]);
            for d in 0..sd {
                let v = cx.kb.fresh_var()?;
                let pos = cx.kb.var(v);
                let t = idx[2 + d];
                // Direct: loop over output positions, read the input at the tap; transposed:
                // loop over input positions, read the output gradient at the tap.
                let (loop_size, other_size) = if transposed { (xs[2 + d], gs[2 + d]) } else { (gs[2 + d], xs[2 + d]) };
                let at = tap(cx, pos, t, stride[d], pad[d], dil[d])?;
                let ok = in_range(cx, at, other_size)?;
                mask = cx.kb.and(mask, ok)?;
                if transposed {
                    x_at.push(pos);
                    g_at.push(at);
                } else {
                    x_at.push(at);
                    g_at.push(pos);
                }
                vars.push((v, loop_size));
            }
            let (masked_v, masked_at, plain_v, plain_at) = if transposed { (g, g_at, x, x_at) } else { (x, x_at, g, g_at) };
            let a = read_masked(cx, masked_v, &masked_at, mask, zero)?;
            let bv = cx.read(plain_v, &plain_at)?;
            let bv = cx.kb.cast(bv, ty);
            let body = cx.kb.binary(BinOp::Mul, a, bv)?;
            fold(cx, vars, body)
        }
        // Bias gradient at [o]: the output gradient summed over the batch and positions.
        _ => {
            let sizes = cx.sizes(g)?;
            let dims: Vec<usize> = (0..sizes.len()).filter(|&d| d != 1).collect();
            let z = cx.kb.i64(0);
            let mut base = vec![z; sizes.len()];
            base[1] = idx[0];
            cx.reduce_dims(RedOp::Sum, &sizes, &dims, &base, &mut |cx, i| {
                let v = cx.read(g, i)?;
                Ok(cx.kb.cast(v, ty))
            })
        }
    }
}

/// `col2im(self, output_size, kernel_size, dilation, padding, stride)`: `[N, C·kh·kw, L]`
/// columns summed back into `[N, C, H, W]`; the image element at `(h, w)` gathers the column
/// entries of the blocks whose tap lands on it.
pub fn col2im(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let lead = match (xs.len(), idx.len()) {
        (3, 4) => 1,
        (2, 3) => 0,
        _ => return Err(cx.err(node, "col2im takes [N, C·kh·kw, L] or [C·kh·kw, L] columns")),
    };
    let k = spatial(cx, node, "kernel_size", 1, 2)?;
    let dil = spatial(cx, node, "dilation", 1, 2)?;
    let pad = spatial(cx, node, "padding", 0, 2)?;
    let st = spatial(cx, node, "stride", 1, 2)?;
    if k.iter().chain(&dil).chain(&st).any(|&v| v <= 0) {
        return Err(cx.err(node, "kernel_size, dilation and stride must be positive"));
    }
    let size = cx.sym_ints(node, "output_size")?;
    if size.len() != 2 {
        return Err(cx.err(node, "output_size must hold 2 sizes"));
    }
    let ty = super::pointwise::out_ty(cx, node)?;
    // Blocks per dim: (size + 2p - d(k-1) - 1) / s + 1.
    let mut blocks = Vec::with_capacity(2);
    for d in 0..2 {
        let n = cx.kb.size(&size[d]);
        let span = cx.kb.i64(2 * pad[d] - dil[d] * (k[d] - 1) - 1);
        let a = cx.kb.binary(BinOp::Add, n, span)?;
        let zero = cx.kb.i64(0);
        let a = cx.kb.binary(BinOp::Max, a, zero)?;
        let sk = cx.kb.i64(st[d]);
        let a = cx.kb.binary(BinOp::Div, a, sk)?;
        let one = cx.kb.i64(1);
        blocks.push(cx.kb.binary(BinOp::Add, a, one)?);
    }
    let c = idx[lead];
    let mut vars = Vec::new();
    let mut mask = cx.kb.bool(true);
    let mut taps = Vec::new();
    let mut pos = Vec::new();
    for d in 0..2 {
        let v = cx.kb.fresh_var()?;
        let t = cx.kb.var(v);
        let (b, ok) = inverse_tap(cx, idx[lead + 1 + d], t, st[d], pad[d], dil[d], blocks[d])?;
        mask = cx.kb.and(mask, ok)?;
        taps.push(t);
        pos.push(b);
        vars.push((v, cx.kb.i64(k[d])));
    }
    let (kh, kw) = (cx.kb.i64(k[0]), cx.kb.i64(k[1]));
    let row = cx.kb.binary(BinOp::Mul, c, kh)?;
    let row = cx.kb.binary(BinOp::Add, row, taps[0])?;
    let row = cx.kb.binary(BinOp::Mul, row, kw)?;
    let row = cx.kb.binary(BinOp::Add, row, taps[1])?;
    let col = cx.kb.binary(BinOp::Mul, pos[0], blocks[1])?;
    let col = cx.kb.binary(BinOp::Add, col, pos[1])?;
    let mut at = idx[..lead].to_vec();
    at.extend([row, col]);
    let zero = constant(cx, 0.0, ty);
    let v = read_masked(cx, x, &at, mask, zero)?;
    fold(cx, vars, v)
}
