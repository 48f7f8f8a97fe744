//! The unique family, whose output sizes depend on data: `_unique2` (the sorted distinct
//! elements, with inverse and counts), `unique_dim` (the sorted distinct slices along a dim)
//! and `unique_consecutive` (runs of equal neighbours, of elements or of slices). The size
//! functions give the sync step the number of distinct units (elements or slices); the
//! lowerings compute the outputs at that size.
//!
//! Units compare as the interpreter compares them: elements in the total order of
//! `f64::total_cmp` on their value (NaN above +∞, -0.0 below +0.0), integers by value, slices
//! lexicographically. Every output element is its own search: the `j`-th distinct unit is found
//! by stepping from the smallest unit to the next larger one `j` times (O(j·n) comparisons),
//! an element's inverse counts the distinct units below it (O(n²)), the distinct count an
//! element-by-element check for an equal earlier unit (O(n²)). Exact; fit for the small
//! tensors unique usually sees, not for millions of elements.

use super::super::ctx::{wrap_dims, Ctx};
use super::super::kernel::{BinOp, CmpOp, ExprId, Ty, UnOp};
use super::super::{LowerError, Size};
use super::compact::{count_where, nth_where, unravel};
use crate::ir::{Node, ValueId};
use crate::sym;

type R = Result<ExprId, LowerError>;

/// An i64 whose signed order is the total order of the element's value (`f64::total_cmp` for
/// floats, which flips the magnitude bits of negative values).
fn key(cx: &mut Ctx<'_>, x: ExprId) -> R {
    Ok(match cx.kb.ty(x) {
        Ty::F32 | Ty::F64 => {
            let wide = cx.kb.cast(x, Ty::F64);
            let bits = cx.kb.bits(wide)?;
            let sixty_three = cx.kb.i64(63);
            let sign = cx.kb.binary(BinOp::Shr, bits, sixty_three)?;
            let magnitude = cx.kb.i64(i64::MAX);
            let flip = cx.kb.binary(BinOp::BitAnd, sign, magnitude)?;
            cx.kb.binary(BinOp::BitXor, bits, flip)?
        }
        Ty::Bool | Ty::I64 | Ty::U32 => cx.kb.cast(x, Ty::I64),
    })
}

/// What unique compares: the elements of the flattened input (`dim` none), or its slices
/// along `dim`, each read row-major over the other dims.
struct Units {
    x: ValueId,
    sizes: Vec<ExprId>,
    dim: Option<usize>,
    /// How many units there are.
    count: ExprId,
    /// Elements per unit (1 for elements).
    len: ExprId,
}

impl Units {
    fn of(cx: &mut Ctx<'_>, node: &Node, dim: Option<i64>) -> Result<Units, LowerError> {
        let x = cx.tensor(node, "self")?;
        let sizes = cx.ksizes(x)?;
        let mut all = cx.kb.i64(1);
        for s in &sizes {
            all = cx.kb.binary(BinOp::Mul, all, *s)?;
        }
        let dim = match dim {
            None => None,
            Some(_) if sizes.is_empty() => return Err(cx.err(node, "unique along a dim of a 0-dim tensor")),
            Some(d) => Some(wrap_dims(&[d], sizes.len()).map_err(|m| cx.err(node, m))?[0]),
        };
        let (count, len) = match dim {
            None => (all, cx.kb.i64(1)),
            Some(d) => {
                let mut len = cx.kb.i64(1);
                for (k, s) in sizes.iter().enumerate() {
                    if k != d {
                        len = cx.kb.binary(BinOp::Mul, len, *s)?;
                    }
                }
                (sizes[d], len)
            }
        };
        Ok(Units { x, sizes, dim, count, len })
    }

    /// The coordinates of element `e` of unit `a`.
    fn coords(&self, cx: &mut Ctx<'_>, a: ExprId, e: ExprId) -> Result<Vec<ExprId>, LowerError> {
        match self.dim {
            None => unravel(cx, &self.sizes, a),
            Some(d) => {
                let others: Vec<ExprId> = self.sizes.iter().enumerate().filter(|(k, _)| *k != d).map(|(_, s)| *s).collect();
                let mut at = unravel(cx, &others, e)?;
                at.insert(d, a);
                Ok(at)
            }
        }
    }

    fn key(&self, cx: &mut Ctx<'_>, a: ExprId, e: ExprId) -> R {
        let at = self.coords(cx, a, e)?;
        let x = cx.read(self.x, &at)?;
        key(cx, x)
    }

    /// `(a < b, a == b)` as bools: by key for elements, lexicographically for slices.
    fn compare(&self, cx: &mut Ctx<'_>, a: ExprId, b: ExprId) -> Result<(ExprId, ExprId), LowerError> {
        if self.dim.is_none() {
            let zero = cx.kb.i64(0);
            let (ka, kb) = (self.key(cx, a, zero)?, self.key(cx, b, zero)?);
            return Ok((cx.kb.cmp(CmpOp::Lt, ka, kb)?, cx.kb.cmp(CmpOp::Eq, ka, kb)?));
        }
        // The first differing element decides; slots: decided (0/1), less (0/1).
        let var = cx.kb.fresh_var()?;
        let e = cx.kb.var(var);
        let (ka, kb) = (self.key(cx, a, e)?, self.key(cx, b, e)?);
        let (decided, less) = (cx.kb.carried(var, 0, Ty::I64), cx.kb.carried(var, 1, Ty::I64));
        let zero = cx.kb.i64(0);
        let differ = cx.kb.cmp(CmpOp::Ne, ka, kb)?;
        let open = cx.kb.cmp(CmpOp::Eq, decided, zero)?;
        let first = cx.kb.and(open, differ)?;
        let lt = cx.kb.cmp(CmpOp::Lt, ka, kb)?;
        let lt = cx.kb.cast(lt, Ty::I64);
        let next_less = cx.kb.select(first, lt, less)?;
        let d = cx.kb.cast(differ, Ty::I64);
        let next_decided = cx.kb.binary(BinOp::Max, decided, d)?;
        let out = cx.kb.iterate(var, self.len, vec![zero, zero], vec![next_decided, next_less])?;
        let less = cx.kb.cmp(CmpOp::Ne, out[1], zero)?;
        let equal = cx.kb.cmp(CmpOp::Eq, out[0], zero)?;
        Ok((less, equal))
    }

    fn less(&self, cx: &mut Ctx<'_>, a: ExprId, b: ExprId) -> R {
        Ok(self.compare(cx, a, b)?.0)
    }

    fn equal(&self, cx: &mut Ctx<'_>, a: ExprId, b: ExprId) -> R {
        Ok(self.compare(cx, a, b)?.1)
    }

    /// Whether unit `a` is the first of its value (no earlier unit equals it).
    fn first(&self, cx: &mut Ctx<'_>, a: ExprId) -> R {
        let n = count_where(cx, a, &mut |cx, b| self.equal(cx, a, b))?;
        let zero = cx.kb.i64(0);
        Ok(cx.kb.cmp(CmpOp::Eq, n, zero)?)
    }

    /// Whether unit `a` starts a run (differs from the unit before it).
    fn run_start(&self, cx: &mut Ctx<'_>, a: ExprId) -> R {
        let (zero, one) = (cx.kb.i64(0), cx.kb.i64(1));
        let before = cx.kb.binary(BinOp::Sub, a, one)?;
        let before = cx.kb.binary(BinOp::Max, before, zero)?;
        let eq = self.equal(cx, a, before)?;
        let differs = cx.kb.unary(UnOp::Not, eq);
        let at_start = cx.kb.cmp(CmpOp::Eq, a, zero)?;
        Ok(cx.kb.binary(BinOp::Or, at_start, differs)?)
    }

    /// Slices of no elements: PyTorch returns the input unchanged, every slice its own value.
    fn empty_slices(&self, cx: &mut Ctx<'_>) -> R {
        let zero = cx.kb.i64(0);
        Ok(cx.kb.cmp(CmpOp::Eq, self.len, zero)?)
    }

    /// The number of distinct units (`consecutive`: of runs).
    fn distinct(&self, cx: &mut Ctx<'_>, consecutive: bool) -> R {
        let n = if consecutive {
            count_where(cx, self.count, &mut |cx, a| self.run_start(cx, a))?
        } else {
            count_where(cx, self.count, &mut |cx, a| self.first(cx, a))?
        };
        let empty = self.empty_slices(cx)?;
        Ok(cx.kb.select(empty, self.count, n)?)
    }

    /// The unit holding the `j`-th distinct value (`consecutive`: starting the `j`-th run).
    fn nth(&self, cx: &mut Ctx<'_>, j: ExprId, consecutive: bool) -> R {
        if consecutive {
            let start = nth_where(cx, self.count, j, &mut |cx, a| self.run_start(cx, a))?;
            let empty = self.empty_slices(cx)?;
            return Ok(cx.kb.select(empty, j, start)?);
        }
        // The smallest unit, then `j` steps to the next larger one; ties keep the earliest.
        let var = cx.kb.fresh_var()?;
        let a = cx.kb.var(var);
        let best = cx.kb.carried(var, 0, Ty::I64);
        let better = self.less(cx, a, best)?;
        let next = cx.kb.select(better, a, best)?;
        let zero = cx.kb.i64(0);
        let smallest = cx.kb.iterate(var, self.count, vec![zero], vec![next])?[0];
        let steps = cx.kb.fresh_var()?;
        let cur = cx.kb.carried(steps, 0, Ty::I64);
        let next = self.next_larger(cx, cur)?;
        Ok(cx.kb.iterate(steps, j, vec![smallest], vec![next])?[0])
    }

    /// The earliest of the smallest units above unit `cur`.
    fn next_larger(&self, cx: &mut Ctx<'_>, cur: ExprId) -> R {
        let var = cx.kb.fresh_var()?;
        let a = cx.kb.var(var);
        let (best, found) = (cx.kb.carried(var, 0, Ty::I64), cx.kb.carried(var, 1, Ty::I64));
        let above = self.less(cx, cur, a)?;
        let zero = cx.kb.i64(0);
        let none_yet = cx.kb.cmp(CmpOp::Eq, found, zero)?;
        let below_best = self.less(cx, a, best)?;
        let better = cx.kb.binary(BinOp::Or, none_yet, below_best)?;
        let take = cx.kb.and(above, better)?;
        let next_best = cx.kb.select(take, a, best)?;
        let t = cx.kb.cast(take, Ty::I64);
        let next_found = cx.kb.binary(BinOp::Max, found, t)?;
        let out = cx.kb.iterate(var, self.count, vec![cur, zero], vec![next_best, next_found])?;
        Ok(out[0])
    }

    /// The inverse of unit `a`: the index of its value among the distinct ones (`consecutive`:
    /// of its run).
    fn inverse(&self, cx: &mut Ctx<'_>, a: ExprId, consecutive: bool) -> R {
        let one = cx.kb.i64(1);
        let n = if consecutive {
            let upto = cx.kb.binary(BinOp::Add, a, one)?;
            let starts = count_where(cx, upto, &mut |cx, b| self.run_start(cx, b))?;
            cx.kb.binary(BinOp::Sub, starts, one)?
        } else {
            count_where(cx, self.count, &mut |cx, b| {
                let below = self.less(cx, b, a)?;
                let first = self.first(cx, b)?;
                Ok(cx.kb.and(below, first)?)
            })?
        };
        let empty = self.empty_slices(cx)?;
        Ok(cx.kb.select(empty, a, n)?)
    }

    /// How many units hold the `j`-th distinct value (`consecutive`: the `j`-th run's length).
    fn count_of(&self, cx: &mut Ctx<'_>, j: ExprId, consecutive: bool) -> R {
        let one = cx.kb.i64(1);
        let n = if consecutive {
            let start = self.nth(cx, j, true)?;
            let next = cx.kb.binary(BinOp::Add, j, one)?;
            let runs = self.distinct(cx, true)?;
            let more = cx.kb.cmp(CmpOp::Lt, next, runs)?;
            let next_start = self.nth(cx, next, true)?;
            let end = cx.kb.select(more, next_start, self.count)?;
            cx.kb.binary(BinOp::Sub, end, start)?
        } else {
            let u = self.nth(cx, j, false)?;
            count_where(cx, self.count, &mut |cx, a| self.equal(cx, a, u))?
        };
        let empty = self.empty_slices(cx)?;
        Ok(cx.kb.select(empty, one, n)?)
    }
}

/// The dim a unique op compares slices along (`None`: elements).
fn dim_arg(cx: &Ctx<'_>, node: &Node) -> Result<Option<i64>, LowerError> {
    Ok(match node.target.as_str() {
        "aten._unique2.default" => None,
        "aten.unique_dim.default" => Some(cx.int_or(node, "dim", 0)?),
        _ => match node.arg("dim") {
            None | Some(crate::ir::Arg::None) => None,
            Some(_) => Some(cx.int_or(node, "dim", 0)?),
        },
    })
}

/// Size of `_unique2`, `unique_dim` and `unique_consecutive`: the distinct units (or runs).
pub fn unique_sizes(cx: &mut Ctx<'_>, node: &Node) -> Result<Vec<Size>, LowerError> {
    let consecutive = node.target.contains("consecutive");
    let units = Units::of(cx, node, dim_arg(cx, node)?)?;
    let value = units.distinct(cx, consecutive)?;
    let values = *node.outputs.first().ok_or_else(|| cx.err(node, "has no output"))?;
    let d = units.dim.unwrap_or(0);
    let expr = cx.sizes(values)?.get(d).cloned().ok_or_else(|| cx.err(node, "its values output has too few dims"))?;
    Ok(vec![Size { expr, value, what: if consecutive { "runs of equal neighbours" } else { "distinct values" } }])
}

/// Outputs `(values, inverse, counts)` of `_unique2`, `unique_dim` and `unique_consecutive`.
pub fn unique(cx: &mut Ctx<'_>, node: &Node, out: usize, idx: &[ExprId]) -> R {
    let consecutive = node.target.contains("consecutive");
    let units = Units::of(cx, node, dim_arg(cx, node)?)?;
    let o = *node.outputs.get(out).ok_or_else(|| cx.err(node, format!("has no output {out}")))?;
    // An output not asked for (`return_inverse=False`) is empty: nothing to compute.
    let numel = cx.sizes(o)?.iter().fold(sym::Expr::int(1), |a, s| sym::Expr::mul(a, s.clone()));
    if numel.simplify().as_int() == Some(0) {
        return Ok(cx.kb.i64(0));
    }
    match out {
        0 => {
            let d = units.dim.unwrap_or(0);
            let j = *idx.get(d).ok_or_else(|| cx.err(node, "values read with too few coordinates"))?;
            let u = units.nth(cx, j, consecutive)?;
            let at = match units.dim {
                None => unravel(cx, &units.sizes, u)?,
                Some(d) => {
                    let mut at = idx.to_vec();
                    at[d] = u;
                    at
                }
            };
            cx.read(units.x, &at)
        }
        1 => {
            // Inverse: the input's shape for elements, one per slice along the dim.
            let a = match units.dim {
                None => {
                    let strides = crate::ir::TensorMeta::contiguous_strides(&cx.sizes(units.x)?);
                    if strides.len() != idx.len() {
                        return Err(cx.err(node, "inverse read with the wrong number of coordinates"));
                    }
                    let mut lin = cx.kb.i64(0);
                    for (i, s) in idx.iter().zip(&strides) {
                        let s = cx.kb.size(s);
                        let t = cx.kb.binary(BinOp::Mul, *i, s)?;
                        lin = cx.kb.binary(BinOp::Add, lin, t)?;
                    }
                    lin
                }
                Some(_) => *idx.first().ok_or_else(|| cx.err(node, "inverse read with no coordinate"))?,
            };
            units.inverse(cx, a, consecutive)
        }
        2 => {
            let j = *idx.first().ok_or_else(|| cx.err(node, "counts read with no coordinate"))?;
            units.count_of(cx, j, consecutive)
        }
        _ => Err(cx.err(node, format!("has no output {out}"))),
    }
}
