//! Random ops: each element draws Philox words from its node's stream (the launch's offset plus
//! the node's ordinal, `crate::ops::rng`) at the index `crate::ops::rng` assigns it, and
//! transforms them as `crate::ops::sample` defines, in float32 for every dtype but float64. A
//! draw is a pure function of (seed, stream, index), so these ops fuse like any pointwise op:
//! a consumer that recomputes one inline, in any schedule, reads the values the interpreter draws.
//!
//! `multinomial` and `randperm` compare keys along a row, O(n²) per row (O(n) per element for
//! `randperm`, O(C²) per sample for `multinomial` without replacement): meant for the small
//! category counts and permutations models draw, as the sort lowerings are.

use super::super::ctx::Ctx;
use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, RedOp, RngArg, Ty, UnOp};
use super::super::rng::{normal as std_normal, open_uniform, philox, uniform as std_uniform};
use super::super::LowerError;
use super::pointwise::{arg, out_sizes, out_ty};
use crate::ir::{DType, Node};
use crate::ops::rng::largest_below;

type R = Result<ExprId, LowerError>;

/// The Philox stream of `node`, or `None` when it does not draw (`train=False`).
fn stream(cx: &mut Ctx<'_>, node: &Node) -> Result<Option<ExprId>, LowerError> {
    let Some(ordinal) = crate::ops::rng::stream_of(cx.graph, node) else { return Ok(None) };
    let offset = cx.kb.rng(RngArg::Offset);
    let k = cx.kb.i64(ordinal as i64);
    Ok(Some(cx.kb.binary(BinOp::Add, offset, k)?))
}

/// The words of draw `index` of `node`.
pub(super) fn draw(cx: &mut Ctx<'_>, node: &Node, index: ExprId) -> Result<[ExprId; 4], LowerError> {
    let s = stream(cx, node)?.ok_or_else(|| cx.err(node, "is not drawing (an argument turns its randomness off)"))?;
    Ok(philox(&mut cx.kb, index, s)?)
}

/// The row-major index of output element `idx`.
pub(super) fn linear(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> R {
    let sizes = out_sizes(cx, node)?;
    let mut at = cx.kb.i64(0);
    for (i, s) in idx.iter().zip(&sizes) {
        let s = cx.kb.size(s);
        let scaled = cx.kb.binary(BinOp::Mul, at, s)?;
        at = cx.kb.binary(BinOp::Add, scaled, *i)?;
    }
    Ok(at)
}

/// The words of the element at `idx`.
fn element(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId]) -> Result<[ExprId; 4], LowerError> {
    let i = linear(cx, node, idx)?;
    draw(cx, node, i)
}

/// The output's float compute type and dtype; integer and bool outputs are refused.
fn float_out(cx: &Ctx<'_>, node: &Node) -> Result<(Ty, DType), LowerError> {
    let ty = out_ty(cx, node)?;
    let dtype = cx.meta(node.outputs[0])?.dtype;
    if !ty.is_float() {
        return Err(cx.err(node, format!("samples floats, not {dtype}")));
    }
    Ok((ty, dtype))
}

/// The compute type `u`-style transforms of an output of type `ty` run in: f64 for float64,
/// f32 otherwise (integers take float32 draws, as they hold their results exactly).
fn draw_ty(ty: Ty) -> Ty {
    if ty == Ty::F64 {
        Ty::F64
    } else {
        Ty::F32
    }
}

pub(super) fn float(kb: &mut KernelBuilder, v: f64, ty: Ty) -> ExprId {
    if ty == Ty::F64 {
        kb.f64(v)
    } else {
        kb.f32(v as f32)
    }
}

/// `lo + (hi − lo)·u`, clamped to the largest `dtype` value below `hi` (`from == to` gives
/// `from`, as PyTorch's).
fn uniform_between(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], lo: f64, hi: f64) -> R {
    let (ty, dtype) = float_out(cx, node)?;
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return Err(cx.err(node, format!("expects from <= to, got [{lo}, {hi})")));
    }
    if lo == hi {
        return Ok(float(&mut cx.kb, lo, ty));
    }
    let b = element(cx, node, idx)?;
    let u = std_uniform(&mut cx.kb, &b, ty)?;
    let width = float(&mut cx.kb, hi - lo, ty);
    let scaled = cx.kb.binary(BinOp::Mul, u, width)?;
    let from = float(&mut cx.kb, lo, ty);
    let v = cx.kb.binary(BinOp::Add, from, scaled)?;
    let top = float(&mut cx.kb, largest_below(dtype, hi), ty);
    Ok(cx.kb.binary(BinOp::Min, v, top)?)
}

/// `rand(size)` and `rand_like(self)`: uniform in `[0, 1)`.
pub fn rand(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    uniform_between(cx, node, idx, 0.0, 1.0)
}

/// `uniform(self, from, to)`.
pub fn uniform(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (lo, hi) = (cx.float_or(node, "from", 0.0)?, cx.float_or(node, "to", 1.0)?);
    uniform_between(cx, node, idx, lo, hi)
}

/// A standard normal at `idx`, in the output's type.
fn standard_normal(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], ty: Ty) -> R {
    let b = element(cx, node, idx)?;
    Ok(std_normal(&mut cx.kb, &b, ty)?)
}

/// `randn(size)` and `randn_like(self)`.
pub fn randn(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    standard_normal(cx, node, idx, ty)
}

/// A mean or standard deviation: a tensor broadcast to the output, or a number (`default`).
fn param(cx: &mut Ctx<'_>, node: &Node, name: &str, default: f64, idx: &[ExprId], ty: Ty) -> R {
    if cx.opt_tensor(node, name).is_some() {
        return arg(cx, node, name, idx);
    }
    let v = cx.float_or(node, name, default)?;
    if name == "std" && (v.is_nan() || v < 0.0) {
        return Err(cx.err(node, format!("std must be non-negative, got {v}")));
    }
    Ok(float(&mut cx.kb, v, ty))
}

/// `normal(self, mean, std)` (the functional `normal_`) and `normal.Tensor_Tensor`,
/// `.Tensor_float`, `.float_Tensor`, `.float_float`: `mean + std·N(0, 1)`.
pub fn normal(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    let mean = param(cx, node, "mean", 0.0, idx, ty)?;
    let std = param(cx, node, "std", 1.0, idx, ty)?;
    let n = standard_normal(cx, node, idx, ty)?;
    let s = cx.kb.binary(BinOp::Mul, std, n)?;
    Ok(cx.kb.binary(BinOp::Add, mean, s)?)
}

/// `log_normal(self, mean, std)`: `exp(mean + std·N(0, 1))`.
pub fn log_normal(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    let mean = param(cx, node, "mean", 1.0, idx, ty)?;
    let std = param(cx, node, "std", 2.0, idx, ty)?;
    let n = standard_normal(cx, node, idx, ty)?;
    let s = cx.kb.binary(BinOp::Mul, std, n)?;
    let x = cx.kb.binary(BinOp::Add, mean, s)?;
    Ok(cx.kb.unary(UnOp::Exp, x))
}

/// `log1p(−u)` at `idx` in `ty`: the logarithm of `1 − u` in (0, 1], never −∞.
fn log_one_minus_u(cx: &mut Ctx<'_>, node: &Node, idx: &[ExprId], ty: Ty) -> R {
    let b = element(cx, node, idx)?;
    let u = std_uniform(&mut cx.kb, &b, ty)?;
    let neg = cx.kb.unary(UnOp::Neg, u);
    Ok(cx.kb.unary(UnOp::Log1p, neg))
}

/// `exponential(self, lambd)`: `−log1p(−u)/λ`.
pub fn exponential(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    let lambd = cx.float_or(node, "lambd", 1.0)?;
    if lambd.is_nan() || lambd <= 0.0 {
        return Err(cx.err(node, format!("lambd must be positive, got {lambd}")));
    }
    let l = log_one_minus_u(cx, node, idx, ty)?;
    let scale = float(&mut cx.kb, -1.0 / lambd, ty);
    Ok(cx.kb.binary(BinOp::Mul, l, scale)?)
}

/// `cauchy(self, median, sigma)`: `median + σ·tan(π(u − ½))` of an open uniform, as
/// `−1/tan(πu)` below ½ and `1/tan(π(1 − u))` above (`ops::sample::cauchy`).
pub fn cauchy(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    let (median, sigma) = (cx.float_or(node, "median", 0.0)?, cx.float_or(node, "sigma", 1.0)?);
    let b = element(cx, node, idx)?;
    let kb = &mut cx.kb;
    let u = open_uniform(kb, &b, ty)?;
    let (half, one, pi) = (float(kb, 0.5, ty), float(kb, 1.0, ty), float(kb, std::f64::consts::PI, ty));
    let low = kb.cmp(CmpOp::Lt, u, half)?;
    let rest = kb.binary(BinOp::Sub, one, u)?;
    let v = kb.select(low, u, rest)?;
    let a = kb.binary(BinOp::Mul, pi, v)?;
    let t = kb.unary(UnOp::Tan, a);
    let minus_one = float(kb, -1.0, ty);
    let sign = kb.select(low, minus_one, one)?;
    let cot = kb.binary(BinOp::Div, sign, t)?;
    let s = float(kb, sigma, ty);
    let st = kb.binary(BinOp::Mul, s, cot)?;
    let m = float(kb, median, ty);
    Ok(kb.binary(BinOp::Add, m, st)?)
}

/// `geometric(self, p)`: `max(1, ⌈log1p(−u)/log1p(−p)⌉)`, in any dtype but bool.
pub fn geometric(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = out_ty(cx, node)?;
    if cx.meta(node.outputs[0])?.dtype == DType::Bool {
        return Err(cx.err(node, "samples numbers, not bool"));
    }
    let p = cx.float_or(node, "p", 0.5)?;
    if !(p > 0.0 && p <= 1.0) {
        return Err(cx.err(node, format!("p must lie in (0, 1], got {p}")));
    }
    let dt = draw_ty(ty);
    if p >= 1.0 {
        let one = float(&mut cx.kb, 1.0, dt);
        return Ok(cx.kb.cast(one, ty));
    }
    let l = log_one_minus_u(cx, node, idx, dt)?;
    let q = float(&mut cx.kb, (-p).ln_1p(), dt);
    let ratio = cx.kb.binary(BinOp::Div, l, q)?;
    let up = cx.kb.unary(UnOp::Ceil, ratio);
    let one = float(&mut cx.kb, 1.0, dt);
    let v = cx.kb.binary(BinOp::Max, up, one)?;
    Ok(cx.kb.cast(v, ty))
}

/// `bernoulli(self)` (probabilities `self`), `.p` (one probability), `.Tensor` (probabilities
/// `p` broadcast to `self`): 1 where `u < p`, `u` as wide as the probabilities' dtype.
pub fn bernoulli(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = out_ty(cx, node)?;
    let x = cx.tensor(node, "self")?;
    let (p, pdtype) = match cx.opt_tensor(node, "p") {
        Some(pv) => {
            let sizes = out_sizes(cx, node)?;
            let p = cx.read_broadcast(pv, idx, &sizes)?;
            (p, cx.meta(pv)?.dtype)
        }
        None => {
            let dtype = cx.meta(x)?.dtype;
            match node.arg("p") {
                Some(crate::ir::Arg::Float(_) | crate::ir::Arg::Int(_)) => {
                    let pv = cx.float_or(node, "p", 0.5)?;
                    (float(&mut cx.kb, pv, draw_ty(ty)), dtype)
                }
                _ => (cx.read(x, idx)?, dtype),
            }
        }
    };
    let dt = if pdtype == DType::F64 { Ty::F64 } else { Ty::F32 };
    let p = cx.kb.cast(p, dt);
    let b = element(cx, node, idx)?;
    let u = std_uniform(&mut cx.kb, &b, dt)?;
    let hit = cx.kb.cmp(CmpOp::Lt, u, p)?;
    Ok(cx.kb.cast(hit, ty))
}

/// `randint(low, high, size)`, `randint_like(self, low, high)`: exact integers in
/// `[low, high)` (`ops::sample::randint`), converted to the output dtype.
pub fn randint(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = out_ty(cx, node)?;
    let (lo, hi) = (cx.int_or(node, "low", 0)?, cx.int_or(node, "high", 0)?);
    if hi <= lo {
        return Err(cx.err(node, format!("empty range [{lo}, {hi})")));
    }
    let range = (i128::from(hi) - i128::from(lo)) as u128;
    let b = element(cx, node, idx)?;
    let kb = &mut cx.kb;
    let r = if range <= 1 << 32 {
        let w = if range == 1 << 32 {
            b[0]
        } else {
            let n = kb.u32(range as u32);
            kb.binary(BinOp::Rem, b[0], n)?
        };
        kb.cast(w, Ty::I64)
    } else {
        let (hi_w, lo_w) = (kb.cast(b[0], Ty::I64), kb.cast(b[1], Ty::I64));
        let thirty_two = kb.i64(32);
        let shifted = kb.binary(BinOp::Shl, hi_w, thirty_two)?;
        let v = kb.binary(BinOp::BitOr, shifted, lo_w)?;
        if range <= 1 << 63 {
            let mask = kb.i64(i64::MAX);
            let v63 = kb.binary(BinOp::BitAnd, v, mask)?;
            let n = kb.i64(range as i64);
            kb.binary(BinOp::Rem, v63, n)?
        } else {
            // All 64 bits as unsigned, one subtraction of the range (> 2⁶³): compare unsigned
            // by flipping the sign bits.
            let n = kb.i64(range as u64 as i64);
            let flip = kb.i64(i64::MIN);
            let (fv, fn_) = (kb.binary(BinOp::BitXor, v, flip)?, kb.binary(BinOp::BitXor, n, flip)?);
            let over = kb.cmp(CmpOp::Ge, fv, fn_)?;
            let less = kb.binary(BinOp::Sub, v, n)?;
            kb.select(over, less, v)?
        }
    };
    let low = kb.i64(lo);
    let v = kb.binary(BinOp::Add, low, r)?;
    Ok(kb.cast(v, ty))
}

/// `sample::key63` of draw `index`: word 0 and the top 31 bits of word 1.
fn key63(cx: &mut Ctx<'_>, node: &Node, index: ExprId) -> R {
    let b = draw(cx, node, index)?;
    let kb = &mut cx.kb;
    let one = kb.u32(1);
    let low = kb.binary(BinOp::Shr, b[1], one)?;
    let (hi_w, lo_w) = (kb.cast(b[0], Ty::I64), kb.cast(low, Ty::I64));
    let thirty_one = kb.i64(31);
    let shifted = kb.binary(BinOp::Shl, hi_w, thirty_one)?;
    Ok(kb.binary(BinOp::BitOr, shifted, lo_w)?)
}

/// Whether `(a, ia)` orders before `(b, ib)`: a smaller key (larger with `descending`), ties to
/// the lower index.
fn before(kb: &mut KernelBuilder, a: ExprId, ia: ExprId, b: ExprId, ib: ExprId, descending: bool) -> R {
    let strict = if descending { kb.cmp(CmpOp::Gt, a, b)? } else { kb.cmp(CmpOp::Lt, a, b)? };
    let tie = kb.cmp(CmpOp::Eq, a, b)?;
    let first = kb.cmp(CmpOp::Lt, ia, ib)?;
    let tie_first = kb.and(tie, first)?;
    Ok(kb.binary(BinOp::Or, strict, tie_first)?)
}

/// `randperm(n)`: output `j` is the stable rank of key `j` among the `n` keys.
pub fn randperm(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let ty = out_ty(cx, node)?;
    let [j] = idx else { return Err(cx.err(node, "a permutation has one dimension")) };
    let n = out_sizes(cx, node)?;
    let n = cx.kb.size(&n[0]);
    let kj = key63(cx, node, *j)?;
    let var = cx.kb.fresh_var()?;
    let c = cx.kb.var(var);
    let kc = key63(cx, node, c)?;
    let b = before(&mut cx.kb, kc, c, kj, *j, false)?;
    let b = cx.kb.cast(b, Ty::I64);
    let rank = cx.kb.reduce(RedOp::Sum, var, n, b)?;
    Ok(cx.kb.cast(rank, ty))
}

/// `multinomial(self, num_samples, replacement)` over weights `[C]` or `[N, C]`, as the
/// interpreter samples (`exec::ops::random::multinomial`): with replacement, the first category
/// whose running sum exceeds `u · total` (the last positive weight when rounding leaves none);
/// without, the category of descending race-key rank `j`.
pub fn multinomial(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let w = cx.tensor(node, "self")?;
    let ws = cx.sizes(w)?;
    if ws.len() != idx.len() || !(1..=2).contains(&ws.len()) {
        return Err(cx.err(node, "multinomial takes a 1-D or 2-D input"));
    }
    let wdtype = cx.meta(w)?.dtype;
    if !wdtype.is_floating() {
        return Err(cx.err(node, format!("weights must be floats, not {wdtype}")));
    }
    let ty = if wdtype == DType::F64 { Ty::F64 } else { Ty::F32 };
    let out = out_ty(cx, node)?;
    let row: Vec<ExprId> = idx[..idx.len() - 1].to_vec();
    let j = idx[idx.len() - 1];
    let c_n = cx.kb.size(&ws[ws.len() - 1]);
    let weight = |cx: &mut Ctx<'_>, c: ExprId| -> R {
        let mut at = row.clone();
        at.push(c);
        let v = cx.read(w, &at)?;
        Ok(cx.kb.cast(v, ty))
    };
    let pick = if cx.bool_or(node, "replacement", false)? {
        let u_index = linear(cx, node, idx)?;
        let b = draw(cx, node, u_index)?;
        let u = std_uniform(&mut cx.kb, &b, ty)?;
        let tv = cx.kb.fresh_var()?;
        let tc = cx.kb.var(tv);
        let wt = weight(cx, tc)?;
        let total = cx.kb.reduce(RedOp::Sum, tv, c_n, wt)?;
        let target = cx.kb.binary(BinOp::Mul, u, total)?;
        // The running sum and the pick so far (-1: none yet).
        let var = cx.kb.fresh_var()?;
        let c = cx.kb.var(var);
        let wc = weight(cx, c)?;
        let (acc, picked) = (cx.kb.carried(var, 0, ty), cx.kb.carried(var, 1, Ty::I64));
        let acc2 = cx.kb.binary(BinOp::Add, acc, wc)?;
        let zero = cx.kb.i64(0);
        let none = cx.kb.i64(-1);
        let open = cx.kb.cmp(CmpOp::Lt, picked, zero)?;
        let past = cx.kb.cmp(CmpOp::Gt, acc2, target)?;
        let take = cx.kb.and(open, past)?;
        let picked2 = cx.kb.select(take, c, picked)?;
        let init = float(&mut cx.kb, 0.0, ty);
        let outs = cx.kb.iterate(var, c_n, vec![init, none], vec![acc2, picked2])?;
        let lv = cx.kb.fresh_var()?;
        let lc = cx.kb.var(lv);
        let wl = weight(cx, lc)?;
        let fz = float(&mut cx.kb, 0.0, ty);
        let positive = cx.kb.cmp(CmpOp::Gt, wl, fz)?;
        let cand = cx.kb.select(positive, lc, none)?;
        let last = cx.kb.reduce(RedOp::Max, lv, c_n, cand)?;
        let last = cx.kb.binary(BinOp::Max, last, zero)?;
        let found = cx.kb.cmp(CmpOp::Ge, outs[1], zero)?;
        cx.kb.select(found, outs[1], last)?
    } else {
        // Race key of category `c`: draw `row · C + c`.
        let base = match row.first() {
            Some(r) => cx.kb.binary(BinOp::Mul, *r, c_n)?,
            None => cx.kb.i64(0),
        };
        let key = |cx: &mut Ctx<'_>, c: ExprId| -> R {
            let i = cx.kb.binary(BinOp::Add, base, c)?;
            let b = draw(cx, node, i)?;
            let u = open_uniform(&mut cx.kb, &b, ty)?;
            let l = cx.kb.unary(UnOp::Log, u);
            let e = cx.kb.unary(UnOp::Neg, l);
            let wc = weight(cx, c)?;
            Ok(cx.kb.binary(BinOp::Div, wc, e)?)
        };
        let outer = cx.kb.fresh_var()?;
        let c = cx.kb.var(outer);
        let kc = key(cx, c)?;
        let inner = cx.kb.fresh_var()?;
        let d = cx.kb.var(inner);
        let kd = key(cx, d)?;
        let b = before(&mut cx.kb, kd, d, kc, c, true)?;
        let b = cx.kb.cast(b, Ty::I64);
        let rank = cx.kb.reduce(RedOp::Sum, inner, c_n, b)?;
        let hit = cx.kb.cmp(CmpOp::Eq, rank, j)?;
        let zero = cx.kb.i64(0);
        let slot = cx.kb.carried(outer, 0, Ty::I64);
        let next = cx.kb.select(hit, c, slot)?;
        cx.kb.iterate(outer, c_n, vec![zero], vec![next])?[0]
    };
    Ok(cx.kb.cast(pick, out))
}

/// `rrelu(self, lower, upper, training)`: in training each negative input is scaled by a slope
/// drawn from `[lower, upper)`; outside it by their mean.
pub fn rrelu(cx: &mut Ctx<'_>, node: &Node, _: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    let (lo, hi) = (cx.float_or(node, "lower", 0.125)?, cx.float_or(node, "upper", 1.0 / 3.0)?);
    let x = arg(cx, node, "self", idx)?;
    let slope = match stream(cx, node)? {
        Some(s) => {
            let i = linear(cx, node, idx)?;
            let b = philox(&mut cx.kb, i, s)?;
            let u = std_uniform(&mut cx.kb, &b, ty)?;
            let width = float(&mut cx.kb, hi - lo, ty);
            let scaled = cx.kb.binary(BinOp::Mul, u, width)?;
            let l = float(&mut cx.kb, lo, ty);
            cx.kb.binary(BinOp::Add, l, scaled)?
        }
        None => float(&mut cx.kb, (lo + hi) / 2.0, ty),
    };
    let zero = float(&mut cx.kb, 0.0, ty);
    let keep = cx.kb.cmp(CmpOp::Ge, x, zero)?;
    let scaled = cx.kb.binary(BinOp::Mul, x, slope)?;
    Ok(cx.kb.select(keep, x, scaled)?)
}

/// `native_dropout(input, p, train)`: output 0 `input · mask · 1/(1 − p)` (0 when `p` is 1),
/// output 1 the mask, true where `u < 1 − p`; outside training the input and an all-true mask.
pub fn native_dropout(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let (ty, _) = float_out(cx, node)?;
    let x = arg(cx, node, "input", idx)?;
    let Some(s) = stream(cx, node)? else {
        return Ok(if out == 0 { x } else { cx.kb.bool(true) });
    };
    let p = cx.float_or(node, "p", 0.5)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(cx.err(node, format!("p must lie in [0, 1], got {p}")));
    }
    let i = linear(cx, node, idx)?;
    let b = philox(&mut cx.kb, i, s)?;
    let u = std_uniform(&mut cx.kb, &b, ty)?;
    let keep = float(&mut cx.kb, 1.0 - p, ty);
    let mask = cx.kb.cmp(CmpOp::Lt, u, keep)?;
    if out == 1 {
        return Ok(mask);
    }
    let m = cx.kb.cast(mask, ty);
    let kept = cx.kb.binary(BinOp::Mul, x, m)?;
    let scale = float(&mut cx.kb, if p >= 1.0 { 0.0 } else { 1.0 / (1.0 - p) }, ty);
    Ok(cx.kb.binary(BinOp::Mul, kept, scale)?)
}
