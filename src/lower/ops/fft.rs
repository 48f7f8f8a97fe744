//! Real-output FFTs of real inputs (`fft_irfft`, `irfft2`, `irfftn` and the Hermitian
//! `fft_hfft*`) as a direct DFT per output element, the composition the interpreter
//! (`exec::ops::fft`) evaluates step by step folded into one sum.
//!
//! PyTorch resizes the input (zero-padding or truncating each transformed dim to its length
//! `n_d`, the real dim to `n/2 + 1`), runs a complex transform over the other dims, then a
//! complex-to-real one over the real dim that reads the Hermitian half spectrum. For a real input
//! that is, at output coordinates `f_d` (other dims) and `t` (real dim),
//!
//! ```text
//! y = scale · Σ_k w_k Σ_j x[j.., k] · cos(2π (Σ_d f_d·j_d / n_d + k·t / n))
//! ```
//!
//! with `k` over the half spectrum, `w_k = 1` for the zero and Nyquist bins and 2 for the others
//! (bin `k` stands for `n - k` too), and the same sum for `hfft` (its forward transform and
//! conjugation cancel for real inputs) with another scale. The phase is reduced exactly, in
//! integers, to `R / P` with `P = Π n` and `0 <= R < P`, so the cosine's argument stays small
//! and precise in float32 too.
//!
//! Cost: every output element sums `min(m, n/2+1) · Π_d min(m_d, n_d)` terms (`m` the input's
//! lengths), so a transform of `N` points over all dims costs O(N²): right for the small
//! transforms graphs carry, not a fast Fourier transform.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, RedOp, Ty, UnOp, VarId};
use super::super::LowerError;
use super::pointwise::{out_sizes, out_ty};
use crate::exec::ops::fft::{rank_of, transform_dims};
use crate::ir::{Arg, Node};

type R = Result<ExprId, LowerError>;

/// `fft_irfft*` and `fft_hfft*`.
pub fn c2r(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let x = cx.tensor(node, "self")?;
    let xs = cx.ksizes(x)?;
    let nd = xs.len();
    let rank = rank_of(&node.target);
    let hermitian = node.target.starts_with("aten.fft_hfft");
    let dim: Option<Vec<i64>> = match node.arg("dim") {
        Some(Arg::Int(d)) => Some(vec![*d]),
        Some(Arg::Ints(d)) => Some(d.clone()),
        _ => None,
    };
    let lengths: Option<Vec<i64>> = if rank == 1 {
        match node.arg("n") {
            None | Some(Arg::None) => None,
            _ => Some(vec![cx.int_or(node, "n", 0)?]),
        }
    } else {
        match node.arg("s") {
            None | Some(Arg::None) => None,
            _ => Some(cx.ints_or(node, "s", &[])?),
        }
    };
    let dims = transform_dims(rank, nd, dim.as_deref(), lengths.as_deref()).map_err(|e| cx.err(node, format!("{e:?}")))?;
    let ty = match out_ty(cx, node)? {
        Ty::F64 => Ty::F64,
        _ => Ty::F32,
    };
    if idx.len() != nd {
        return Err(cx.err(node, "the output rank differs from the input's"));
    }
    // The transformed lengths are the output's sizes along the transformed dims.
    let outs = out_sizes(cx, node)?;
    let n: Vec<ExprId> = dims.iter().map(|&d| cx.kb.size(&outs[d])).collect();
    let (last, n_last) = (dims.len() - 1, n[dims.len() - 1]);
    // P = Π n, and the factor P / n_d that puts dim d's residue over the common denominator.
    let mut p = cx.kb.i64(1);
    for &nd in &n {
        p = cx.kb.binary(BinOp::Mul, p, nd)?;
    }
    let mut at = idx.to_vec();
    let mut loops: Vec<(VarId, ExprId)> = Vec::with_capacity(dims.len());
    let mut phase = cx.kb.i64(0);
    let zero = cx.kb.i64(0);
    for (i, &d) in dims.iter().enumerate() {
        let var = cx.kb.fresh_var()?;
        let j = cx.kb.var(var);
        // Input positions past the input's length are zero padding: the loop stops there.
        let extent = if i == last {
            let two = cx.kb.i64(2);
            let one = cx.kb.i64(1);
            let h = cx.kb.binary(BinOp::Div, n_last, two)?;
            let h = cx.kb.binary(BinOp::Add, h, one)?;
            cx.kb.binary(BinOp::Min, h, xs[d])?
        } else {
            cx.kb.binary(BinOp::Min, n[i], xs[d])?
        };
        let prod = cx.kb.binary(BinOp::Mul, idx[d], j)?;
        let residue = cx.kb.binary(BinOp::Rem, prod, n[i])?;
        let over = cx.kb.binary(BinOp::Div, p, n[i])?;
        let term = cx.kb.binary(BinOp::Mul, residue, over)?;
        phase = cx.kb.binary(BinOp::Add, phase, term)?;
        at[d] = j;
        loops.push((var, extent));
    }
    let kb = &mut cx.kb;
    let r = kb.binary(BinOp::Rem, phase, p)?;
    // Centre the residue on 0 (|angle| <= π) before the float division.
    let twice = kb.i64(2);
    let r2 = kb.binary(BinOp::Mul, r, twice)?;
    let upper = kb.cmp(CmpOp::Gt, r2, p)?;
    let wrapped = kb.binary(BinOp::Sub, r, p)?;
    let r = kb.select(upper, wrapped, r)?;
    let (rf, pf) = (kb.cast(r, ty), kb.cast(p, ty));
    let frac = kb.binary(BinOp::Div, rf, pf)?;
    let tau = float(kb, std::f64::consts::TAU, ty);
    let angle = kb.binary(BinOp::Mul, frac, tau)?;
    let c = kb.unary(UnOp::Cos, angle);
    // Bin k of the half spectrum also stands for bin n - k, except the zero and Nyquist bins.
    let k = at[dims[last]];
    let k2 = kb.binary(BinOp::Mul, k, twice)?;
    let is_zero = kb.cmp(CmpOp::Eq, k, zero)?;
    let nyquist = kb.cmp(CmpOp::Eq, k2, n_last)?;
    let single = kb.binary(BinOp::Or, is_zero, nyquist)?;
    let (one_f, two_f) = (float(kb, 1.0, ty), float(kb, 2.0, ty));
    let w = kb.select(single, one_f, two_f)?;
    let xv = cx.read(x, &at)?;
    let xv = cx.kb.cast(xv, ty);
    let kb = &mut cx.kb;
    let term = kb.binary(BinOp::Mul, xv, c)?;
    let mut acc = kb.binary(BinOp::Mul, term, w)?;
    for &(var, extent) in loops.iter().rev() {
        acc = kb.reduce(RedOp::Sum, var, extent, acc)?;
    }
    let norm = cx.str_or(node, "norm", "backward")?;
    // Unscaled, 1/N, or 1/√N: inverse transforms (irfft) divide under "backward", forward ones
    // (hfft) under "forward".
    let kb = &mut cx.kb;
    let pf = kb.cast(p, ty);
    let scale = match (norm, hermitian) {
        ("backward", true) | ("forward", false) => None,
        ("backward", false) | ("forward", true) => Some(pf),
        ("ortho", _) => Some(kb.unary(UnOp::Sqrt, pf)),
        (o, _) => return Err(cx.err(node, format!("unknown normalisation `{o}`"))),
    };
    Ok(match scale {
        Some(s) => cx.kb.binary(BinOp::Div, acc, s)?,
        None => acc,
    })
}

fn float(kb: &mut super::super::kernel::KernelBuilder, v: f64, ty: Ty) -> ExprId {
    if ty == Ty::F64 {
        kb.f64(v)
    } else {
        kb.f32(v as f32)
    }
}
