//! `convolution_backward`: the gradients of a direct or transposed, grouped, strided, padded and
//! dilated convolution in 1, 2 or 3 spatial dims with respect to its input, weight and bias.
//!
//! Both kinds are one relation `y[b, o, ypos] += x[b, c, xpos] · W(c, o, tap)` over the pairs
//! (xpos, ypos) a kernel tap links (a direct convolution's window reads the input at
//! `tap_at(ypos)`; a transposed one writes its output at `tap_at(xpos)`), so one loop gives
//! `∂x[b, c, xpos] += ∂y[b, o, ypos] · W` and `∂W += ∂y[b, o, ypos] · x[b, c, xpos]`.
//! Computed in `f64` and rounded once to each operand's dtype.

use super::conv_nd::{unflat, Conv};
use super::fvec::{strides, F};
use super::{masked, shape_err, OpCx, OpError, OpResult};
use crate::exec::value::RtValue;

/// One kernel tap linking input position `x` to output position `y`.
struct Pair {
    x: usize,
    y: usize,
    tap: usize,
}

pub fn convolution_backward(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (gy, x, w) = (cx.tensor("grad_output")?, cx.tensor("input")?, cx.tensor("weight")?);
    let mask = cx.output_mask()?;
    let transposed = cx.bool_or("transposed", false)?;
    for t in [gy, x, w] {
        if !t.dtype().is_floating() {
            return Err(OpError::DType(t.dtype()));
        }
    }
    let ws = w.shape().to_vec();
    let k = ws.len().checked_sub(2).filter(|k| (1..=3).contains(k)).ok_or_else(|| OpError::Shape(format!("weight {ws:?} is not 3-, 4- or 5-D")))?;
    if x.ndim() != k + 2 || gy.ndim() != k + 2 {
        return shape_err(format!("input {:?} and grad_output {:?} must be batched {k}-D convolution operands", x.shape(), gy.shape()));
    }
    let ksp = ws[2..].to_vec();
    let g = Conv::from(cx, k, &ksp)?;
    let xs = x.shape();
    let (n, c, isp) = (xs[0], xs[1], xs[2..].to_vec());
    let groups = g.groups;
    // Direct: weight [Cout, Cin/g, k...]; transposed: weight [Cin, Cout/g, k...].
    let (cout, cin_g, cout_g) = if transposed { (ws[1] * groups, ws[0] / groups, ws[1]) } else { (ws[0], ws[1], ws[0] / groups) };
    let fits = if transposed { ws[0] == c && c % groups == 0 } else { ws[1] * groups == c && ws[0] % groups == 0 };
    if !fits {
        return shape_err(format!("weight {ws:?} with groups {groups} does not fit input {xs:?}"));
    }
    let osp = g.out_sizes(&isp, &ksp, transposed).ok_or_else(|| OpError::Shape(format!("kernel {ksp:?} does not fit input {xs:?}")))?;
    let mut yshape = vec![n, cout];
    yshape.extend(&osp);
    if gy.shape() != yshape.as_slice() {
        return shape_err(format!("grad_output {:?} is not the convolution's output shape {yshape:?}", gy.shape()));
    }
    let (ilen, olen, klen): (usize, usize, usize) = (isp.iter().product(), osp.iter().product(), ksp.iter().product());
    let taps: Vec<Vec<usize>> = (0..klen).map(|t| unflat(t, &ksp)).collect();
    let mut pairs = Vec::new();
    if transposed {
        let ost = strides(&osp);
        for xi in 0..ilen {
            let xc = unflat(xi, &isp);
            for (t, tap) in taps.iter().enumerate() {
                if let Some(y) = g.tap_at(&xc, tap, &osp, &ost) {
                    pairs.push(Pair { x: xi, y, tap: t });
                }
            }
        }
    } else {
        let ist = strides(&isp);
        for yi in 0..olen {
            let yc = unflat(yi, &osp);
            for (t, tap) in taps.iter().enumerate() {
                if let Some(xp) = g.tap_at(&yc, tap, &isp, &ist) {
                    pairs.push(Pair { x: xp, y: yi, tap: t });
                }
            }
        }
    }
    // Where W(c, o, tap) lies in the weight.
    let w_at = |ci: usize, o: usize, t: usize| {
        if transposed {
            (ci * cout_g + o % cout_g) * klen + t
        } else {
            (o * cin_g + ci % cin_g) * klen + t
        }
    };
    let (gv, xv, wv) = (gy.to_f64_vec(), x.to_f64_vec(), w.to_f64_vec());
    let mut gx = vec![0.0; if mask[0] { x.numel() } else { 0 }];
    let mut gw = vec![0.0; if mask[1] { w.numel() } else { 0 }];
    for b in 0..n {
        for ci in 0..c {
            let grp = ci / cin_g.max(1);
            let xrow = (b * c + ci) * ilen;
            for o in grp * cout_g..(grp + 1) * cout_g {
                let yrow = (b * cout + o) * olen;
                for p in &pairs {
                    let dy = gv[yrow + p.y];
                    let wi = w_at(ci, o, p.tap);
                    if mask[0] {
                        gx[xrow + p.x] += dy * wv[wi];
                    }
                    if mask[1] {
                        gw[wi] += dy * xv[xrow + p.x];
                    }
                }
            }
        }
    }
    let gb = mask[2].then(|| {
        let mut s = vec![0.0; cout];
        for (i, v) in gv.iter().enumerate() {
            s[(i / olen.max(1)) % cout] += v;
        }
        s
    });
    let grads = [
        if mask[0] { Some(F::new(xs.to_vec(), gx).to(x.dtype())?) } else { None },
        if mask[1] { Some(F::new(ws.clone(), gw).to(w.dtype())?) } else { None },
        match gb {
            Some(s) => Some(F::new(vec![cout], s).to(gy.dtype())?),
            None => None,
        },
    ];
    masked(mask, grads)
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, call1, t64, A};
    use crate::exec::value::RtValue;
    use crate::ir::Arg;

    fn seq(n: usize, k: f64) -> Vec<f64> {
        (0..n).map(|i| ((i as f64 * k).sin() * 10.0).round() / 4.0).collect()
    }

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// The gradients are the adjoints of the forward op: `<conv(x, w), g> = <x, ∂x> = <w, ∂w>`
    /// for a grouped, strided, padded, dilated convolution, direct and transposed.
    #[test]
    fn gradients_are_the_forward_convolutions_adjoints() {
        for (transposed, xs, ws) in [(false, [2, 4, 7, 6], [6, 2, 3, 2]), (true, [2, 4, 5, 4], [4, 3, 3, 2])] {
            let (xv, wv) = (seq(xs.iter().product(), 0.7), seq(ws.iter().product(), 1.3));
            let geo = |a: &mut Vec<(&'static str, A)>| {
                a.extend([
                    ("stride", A::L(Arg::Ints(vec![2, 1]))),
                    ("padding", A::L(Arg::Ints(vec![1, 0]))),
                    ("dilation", A::L(Arg::Ints(vec![1, 2]))),
                    ("transposed", A::L(Arg::Bool(transposed))),
                    ("output_padding", A::L(Arg::Ints(vec![if transposed { 1 } else { 0 }, 0]))),
                    ("groups", A::L(Arg::Int(2))),
                ])
            };
            let mut fwd = vec![("input", t64(&xs, &xv)), ("weight", t64(&ws, &wv))];
            geo(&mut fwd);
            let y = call1("aten.convolution.default", fwd);
            let gv = seq(y.numel(), 0.3);
            let mut bwd = vec![("grad_output", t64(y.shape(), &gv)), ("input", t64(&xs, &xv)), ("weight", t64(&ws, &wv))];
            geo(&mut bwd);
            bwd.push(("output_mask", A::L(Arg::Bools(vec![true, true, true]))));
            let r = call("aten.convolution_backward.default", bwd).unwrap();
            let [RtValue::Tensor(gx), RtValue::Tensor(gw), RtValue::Tensor(gb)] = &r[..] else { panic!("{r:?}") };
            let lhs = dot(&y.to_f64_vec(), &gv);
            assert!((lhs - dot(&xv, &gx.to_f64_vec())).abs() < 1e-9 * lhs.abs().max(1.0), "input gradient, transposed {transposed}");
            assert!((lhs - dot(&wv, &gw.to_f64_vec())).abs() < 1e-9 * lhs.abs().max(1.0), "weight gradient, transposed {transposed}");
            assert_eq!(gb.shape(), &[y.shape()[1]]);
            assert!((gb.to_f64_vec().iter().sum::<f64>() - gv.iter().sum::<f64>()).abs() < 1e-9);
        }
    }

    #[test]
    fn only_the_masked_gradients_come_back_and_bad_shapes_are_errors() {
        let args = |g: &[usize], mask: Vec<bool>| {
            vec![
                ("grad_output", t64(g, &vec![1.0; g.iter().product()])),
                ("input", t64(&[1, 2, 4], &[1.0; 8])),
                ("weight", t64(&[3, 2, 2], &[1.0; 12])),
                ("output_mask", A::L(Arg::Bools(mask))),
            ]
        };
        assert_eq!(call("aten.convolution_backward.default", args(&[1, 3, 3], vec![false, true, false])).unwrap().len(), 1);
        assert!(call("aten.convolution_backward.default", args(&[1, 3, 4], vec![true, true, true])).is_err());
    }
}
