//! `gradient`, every overload, as ATen's `gradient_helper_float` / `gradient_helper`
//! (aten/src/ATen/native/ReduceOps.cpp): per differentiated dim, central differences on the
//! interior and one-sided first- or second-order differences at the two edges, joined by `cat`.
//! Uniform spacings are numbers; coordinate spacings are 1-D tensors, whose differences weigh
//! the neighbours of each interior sample.

use super::build::{binary, cat, slice};
use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, DType, SymIntArg, ValueId};

const END: i64 = i64::MAX;

fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: name.into(), message: message.into() }
}

/// A number as C++ spells it: `2` is an int scalar, `0.5` a double (their promotions differ).
#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

impl Num {
    fn arg(self) -> A {
        match self {
            Num::I(i) => A::I(i),
            Num::F(f) => A::F(f),
        }
    }
}

/// The spacing of one dim: a number (as given) or coordinates.
#[derive(Clone, Copy)]
enum Spacing {
    Uniform(Num),
    Coordinates(ValueId),
}

/// The differentiated dims: `dim` as a list, one int, or every dim.
fn dims(rw: &Rw, rank: usize) -> Result<Vec<usize>, RuleError> {
    match rw.passthrough("dim")? {
        None | Some(Arg::None) => Ok((0..rank).collect()),
        Some(Arg::Int(d)) => Ok(vec![dim(d, rank, "dim")?]),
        Some(Arg::Ints(ds)) => {
            let out = ds.iter().map(|&d| dim(d, rank, "dim")).collect::<Result<Vec<_>, _>>()?;
            if (1..out.len()).any(|i| out[..i].contains(&out[i])) {
                return Err(arg_err("dim", "a dim is repeated"));
            }
            Ok(out)
        }
        Some(a) => Err(arg_err("dim", format!("expected an int or int list, found {a:?}"))),
    }
}

/// One spacing per dim: absent (1.0 each), one number for every dim, a list of numbers, or a
/// list of coordinate tensors.
fn spacings(rw: &Rw, n: usize) -> Result<Vec<Spacing>, RuleError> {
    let list: Vec<Spacing> = match rw.passthrough("spacing")? {
        None | Some(Arg::None) => return Ok(vec![Spacing::Uniform(Num::F(1.0)); n]),
        Some(Arg::Float(f)) => return Ok(vec![Spacing::Uniform(Num::F(f)); n]),
        Some(Arg::Int(i)) => return Ok(vec![Spacing::Uniform(Num::I(i)); n]),
        Some(Arg::Floats(v)) => v.into_iter().map(|f| Spacing::Uniform(Num::F(f))).collect(),
        Some(Arg::Ints(v)) => v.into_iter().map(|i| Spacing::Uniform(Num::I(i))).collect(),
        Some(Arg::Tensors(v)) => v.into_iter().map(Spacing::Coordinates).collect(),
        Some(a) => return Err(arg_err("spacing", format!("expected numbers or tensors, found {a:?}"))),
    };
    if list.len() != n {
        return Err(arg_err("spacing", format!("{} spacings for {n} dims", list.len())));
    }
    Ok(list)
}

pub fn gradient(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let m = rw.meta(x)?;
    if m.dtype == DType::U8 {
        return Err(arg_err("self", "torch.gradient does not support uint8 input"));
    }
    let rank = m.sizes.len();
    let edge = rw.int("edge_order", Some(1))?;
    if edge != 1 && edge != 2 {
        return Err(arg_err("edge_order", "torch.gradient only supports edge_order=1 and edge_order=2"));
    }
    let ds = dims(rw, rank)?;
    for &d in &ds {
        if rw.meta(x)?.sizes[d].as_int().is_some_and(|n| n < edge + 1) {
            return Err(arg_err("self", "torch.gradient expected each dimension size to be at least edge_order+1"));
        }
    }
    let sp = spacings(rw, ds.len())?;
    let mut out = Vec::with_capacity(ds.len());
    for (&d, s) in ds.iter().zip(sp) {
        out.push(match s {
            Spacing::Uniform(h) => uniform(rw, x, d, h, edge)?,
            Spacing::Coordinates(c) => coordinates(rw, x, d, c, edge)?,
        });
    }
    Ok(out)
}

/// `c₀·x[a₀:b₀] ± c₁·x[a₁:b₁] ± c₂·x[a₂:b₂]` along `d`, each `c·t` recorded as `mul(t, c)`
/// (what C++ `c * t` records) and the signs as `add` / `sub`.
fn combination(rw: &mut Rw, x: ValueId, d: usize, first: (Num, i64, i64), rest: [(bool, Num, i64, i64); 2]) -> Result<ValueId, RuleError> {
    let s = slice(rw, x, d, first.1, first.2)?;
    let mut acc = binary(rw, "aten.mul.Tensor", s, first.0.arg())?;
    for (plus, c, a, b) in rest {
        let s = slice(rw, x, d, a, b)?;
        let t = binary(rw, "aten.mul.Tensor", s, c.arg())?;
        acc = binary(rw, if plus { "aten.add.Tensor" } else { "aten.sub.Tensor" }, acc, A::T(t))?;
    }
    Ok(acc)
}

/// `x[a:b] - x[c:e]` along `d`.
fn difference(rw: &mut Rw, x: ValueId, d: usize, hi: (i64, i64), lo: (i64, i64)) -> Result<ValueId, RuleError> {
    let a = slice(rw, x, d, hi.0, hi.1)?;
    let b = slice(rw, x, d, lo.0, lo.1)?;
    binary(rw, "aten.sub.Tensor", a, A::T(b))
}

/// Uniform spacing `h`: `(x[2:] - x[:-2]) / h / 2` inside; the edges by first or second order.
fn uniform(rw: &mut Rw, x: ValueId, d: usize, h: Num, edge: i64) -> Result<ValueId, RuleError> {
    let diff = difference(rw, x, d, (2, END), (0, -2))?;
    let center = binary(rw, "aten.div.Tensor", diff, h.arg())?;
    let (pre, app) = if edge == 1 {
        (difference(rw, x, d, (1, 2), (0, 1))?, difference(rw, x, d, (-1, END), (-2, -1))?)
    } else {
        (
            combination(rw, x, d, (Num::F(-1.5), 0, 1), [(true, Num::I(2), 1, 2), (false, Num::F(0.5), 2, 3)])?,
            combination(rw, x, d, (Num::F(0.5), -3, -2), [(false, Num::I(2), -2, -1), (true, Num::F(1.5), -1, END)])?,
        )
    };
    let prepend = binary(rw, "aten.div.Tensor", pre, h.arg())?;
    let append = binary(rw, "aten.div.Tensor", app, h.arg())?;
    let half = binary(rw, "aten.div.Tensor", center, A::I(2))?;
    cat(rw, vec![prepend, half, append], d as i64)
}

/// Coordinates `c` (1-D, one per sample along `d`): with `dx₁`, `dx₂` the spacings before and
/// after each interior sample, `a·x[:-2] + b·x[1:-1] + c·x[2:]` inside and one-sided formulas
/// at the edges.
fn coordinates(rw: &mut Rw, x: ValueId, d: usize, coord: ValueId, edge: i64) -> Result<ValueId, RuleError> {
    if rw.rank(coord)? != 1 {
        return Err(arg_err("spacing", "each coordinate tensor must have one dimension"));
    }
    let rank = rw.rank(x)?;
    let ax = rw.op("aten.diff.default", vec![("self", A::T(coord)), ("n", A::I(1)), ("dim", A::I(0))])?;
    let dx1 = slice(rw, ax, 0, 0, -1)?;
    let dx2 = slice(rw, ax, 0, 1, END)?;
    let mut shape = vec![SymIntArg::Int(1); rank];
    shape[d] = SymIntArg::Int(-1);
    let mul = |rw: &mut Rw, a: ValueId, b: ValueId| binary(rw, "aten.mul.Tensor", a, A::T(b));
    let add = |rw: &mut Rw, a: ValueId, b: ValueId| binary(rw, "aten.add.Tensor", a, A::T(b));
    let sub = |rw: &mut Rw, a: ValueId, b: ValueId| binary(rw, "aten.sub.Tensor", a, A::T(b));
    let div = |rw: &mut Rw, a: ValueId, b: ValueId| binary(rw, "aten.div.Tensor", a, A::T(b));
    let neg = |rw: &mut Rw, a: ValueId| rw.op("aten.neg.default", vec![("self", A::T(a))]);
    let sum12 = add(rw, dx1, dx2)?;
    let n2 = neg(rw, dx2)?;
    let den = mul(rw, dx1, sum12)?;
    let a = div(rw, n2, den)?;
    let num = sub(rw, dx2, dx1)?;
    let den = mul(rw, dx1, dx2)?;
    let b = div(rw, num, den)?;
    let den = mul(rw, dx2, sum12)?;
    let c = div(rw, dx1, den)?;
    let [a, b, c] = [a, b, c].map(|t| super::view::view_of(rw, t, shape.clone()));
    let (a, b, c) = (a?, b?, c?);
    let s0 = slice(rw, x, d, 0, -2)?;
    let s1 = slice(rw, x, d, 1, -1)?;
    let s2 = slice(rw, x, d, 2, END)?;
    let t0 = mul(rw, a, s0)?;
    let t1 = mul(rw, b, s1)?;
    let t2 = mul(rw, c, s2)?;
    let center = add(rw, t0, t1)?;
    let center = add(rw, center, t2)?;
    let at = |rw: &mut Rw, i: i64| super::build::select(rw, ax, 0, i);
    let (prepend, append) = if edge == 1 {
        let first = at(rw, 0)?;
        let last = at(rw, -1)?;
        let p = difference(rw, x, d, (1, 2), (0, 1))?;
        let q = difference(rw, x, d, (-1, END), (-2, -1))?;
        (div(rw, p, first)?, div(rw, q, last)?)
    } else {
        let (h0, h1) = (at(rw, 0)?, at(rw, 1)?);
        let h01 = add(rw, h0, h1)?;
        let two_h0 = binary(rw, "aten.mul.Tensor", h0, A::F(2.0))?;
        let num = add(rw, two_h0, h1)?;
        let num = neg(rw, num)?;
        let den = mul(rw, h0, h01)?;
        let a = div(rw, num, den)?;
        let den = mul(rw, h0, h1)?;
        let b = div(rw, h01, den)?;
        let num = neg(rw, h0)?;
        let den = mul(rw, h1, h01)?;
        let c = div(rw, num, den)?;
        let pre = weighted(rw, x, d, [(a, 0, 1), (b, 1, 2), (c, 2, 3)])?;
        let (hl, hm) = (at(rw, -1)?, at(rw, -2)?);
        let hlm = add(rw, hl, hm)?;
        let den = mul(rw, hm, hlm)?;
        let a = div(rw, hl, den)?;
        let num = neg(rw, hlm)?;
        let den = mul(rw, hl, hm)?;
        let b = div(rw, num, den)?;
        let two_hl = binary(rw, "aten.mul.Tensor", hl, A::I(2))?;
        let num = add(rw, two_hl, hm)?;
        let den = mul(rw, hl, hlm)?;
        let c = div(rw, num, den)?;
        let app = weighted(rw, x, d, [(a, -3, -2), (b, -2, -1), (c, -1, END)])?;
        (pre, app)
    };
    cat(rw, vec![prepend, center, append], d as i64)
}

/// `w₀·x[a₀:b₀] + w₁·x[a₁:b₁] + w₂·x[a₂:b₂]` along `d`, the weights zero-dim tensors.
fn weighted(rw: &mut Rw, x: ValueId, d: usize, terms: [(ValueId, i64, i64); 3]) -> Result<ValueId, RuleError> {
    let mut acc: Option<ValueId> = None;
    for (w, a, b) in terms {
        let s = slice(rw, x, d, a, b)?;
        let t = binary(rw, "aten.mul.Tensor", w, A::T(s))?;
        acc = Some(match acc {
            None => t,
            Some(acc) => binary(rw, "aten.add.Tensor", acc, A::T(t))?,
        });
    }
    acc.ok_or_else(|| RuleError::Unsupported("no terms".into()))
}
