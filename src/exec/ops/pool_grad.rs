//! Gradients of average pooling (`avg_pool2d_backward`, `_adaptive_avg_pool2d_backward`): each
//! output gradient spread evenly over the input positions its window averaged, with the forward
//! op's windows and divisors (`pool_nd`), so both directions agree on ceil mode, padding and
//! `count_include_pad`.

use super::fvec::{round_to, F};
use super::pool_nd::{adaptive_taps, avg_windows, coords, positions, Planes};
use super::{one, shape_err, OpCx, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;

/// `grad_input[plane, i] = Σ delta(grad_output[plane, o], o)` over the windows `o` holding `i`,
/// accumulated as ATen's CPU kernels do: output by output, each window position in row-major
/// order, every step rounded to the gradient's dtype (half-precision kernels add in half).
fn spread(g: &Tensor, p: &Planes, out_sp: &[usize], wins: &[Vec<usize>], delta: impl Fn(f64, usize) -> f64) -> OpResult<Vec<RtValue>> {
    let want = p.out_shape(out_sp);
    if g.shape() != want.as_slice() {
        return shape_err(format!("grad_output {:?} does not match the pooled shape {want:?}", g.shape()));
    }
    let r = round_to(g.dtype());
    let gv = g.to_f64_vec();
    let m = p.plane_len();
    let mut v = vec![0.0; p.planes() * m];
    for (pi, grads) in gv.chunks(wins.len().max(1)).take(p.planes()).enumerate() {
        for (o, (gr, w)) in grads.iter().zip(wins).enumerate() {
            let d = delta(*gr, o);
            for &i in w {
                v[pi * m + i] = r(v[pi * m + i] + d);
            }
        }
    }
    one(F::new(p.f.shape.clone(), v).to(g.dtype())?)
}

/// `avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)`.
pub fn avg_pool2d_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (g, x) = (cx.tensor("grad_output")?, cx.tensor("self")?);
    let p = Planes::new(x, 2)?;
    let (out_sp, wins) = avg_windows(cx, &p, 2)?;
    let r = round_to(g.dtype());
    let (pos, div): (Vec<Vec<usize>>, Vec<f64>) = wins.into_iter().unzip();
    spread(g, &p, &out_sp, &pos, |gr, o| r(gr / div[o]))
}

/// `_adaptive_avg_pool2d_backward(grad_output, self)`: the output size is grad_output's.
pub fn adaptive_avg_pool2d_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (g, x) = (cx.tensor("grad_output")?, cx.tensor("self")?);
    let p = Planes::new(x, 2)?;
    if g.ndim() != x.ndim() || g.ndim() < 2 {
        return shape_err(format!("grad_output {:?} does not fit input {:?}", g.shape(), x.shape()));
    }
    let out_sp = g.shape()[g.ndim() - 2..].to_vec();
    if out_sp.contains(&0) && p.plane_len() > 0 {
        return shape_err(format!("adaptive pooling of {:?} to {out_sp:?}", p.sp));
    }
    // Per window: its positions and its extent per dim (ATen divides by each in turn).
    let (pos, ext): (Vec<Vec<usize>>, Vec<Vec<usize>>) = coords(&out_sp)
        .iter()
        .map(|c| {
            let win: Vec<Vec<usize>> = c.iter().enumerate().map(|(d, &o)| adaptive_taps(o, p.sp[d], out_sp[d])).collect();
            let ext = win.iter().map(Vec::len).collect();
            (positions(&win, &p.sp), ext)
        })
        .unzip();
    let r = round_to(g.dtype());
    spread(g, &p, &out_sp, &pos, |gr, o| ext[o].iter().fold(gr, |q, &n| r(q / n as f64)))
}
