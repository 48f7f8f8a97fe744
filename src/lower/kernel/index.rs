//! Index arithmetic with known ranges: `(m + r) / n → m / n` and `(m + r) % n → r` when `m` is
//! an exact multiple of `n` and `0 ≤ r < n`.
//!
//! Reads through views split a linear index into coordinates (`/` and `%` by the view's sizes)
//! and join them again with another layout's strides; a read through two views (a
//! `[B, S, 3·H·E]` projection seen as `[B, H, S, E]` query, key and value) nests the
//! splits. Left alone, each load of an attention kernel's inner loop did a dozen 64-bit
//! divisions, which a CPU cannot vectorize (138 of them in one kernel of the zoo's ViT). With
//! every loop variable's extent known, and each summand's largest value bounded symbolically
//! (`b·2·E + h·E + e ≤ 2·E·s − 1` for `b < s`, `h < 2`, `e < E`), the splits cancel into the
//! multiply-adds of the layout the buffer actually has.
//!
//! Ranges come from the output coordinates ([`KernelBuilder::set_coord_extents`]) and, when the
//! kernel is finished, from every fold and loop: the finished arena is rebuilt once with all of
//! them known (a fold's body is built before its extent is attached to its variable).

use std::collections::HashMap;

use super::{BinOp, ExprId, KExpr, KernelBuilder, VarId};
use crate::sym;

/// A sum as constant-coefficient terms: `(coefficient, atom)`, `None` for the constant term.
type Terms = Vec<(i64, Option<ExprId>)>;

impl KernelBuilder {
    /// `a / n` (`op` Div) or `a % n` (Rem) with the multiples of `n` among the summands of `a`
    /// divided out, when the other summands are known to lie in `0..n`.
    pub(super) fn split_below(&mut self, op: BinOp, a: ExprId, n: ExprId) -> Option<ExprId> {
        let n_sym = self.sym_size(n)?;
        let terms = self.terms(a)?;
        let (mut quotient, mut rest): (Terms, Terms) = (Vec::new(), Vec::new());
        for (c, atom) in terms {
            match self.term_over(c, atom, n) {
                Some(q) => quotient.push(q),
                None => rest.push((c, atom)),
            }
        }
        // Nothing to divide out and nothing bounded: the division stays as written.
        let top = self.bound(&rest)?;
        let slack = sym::Expr::sub(sym::Expr::sub(n_sym.clone(), sym::Expr::int(1)), top).simplify();
        if !nonnegative(&slack) {
            return self
                .split_grouped(op, &quotient, &rest, &n_sym)
                .or_else(|| self.split_scaled(op, &quotient, &rest, &n_sym))
                .or_else(|| self.split_partial(op, &quotient, &rest, n));
        }
        let kept = if op == BinOp::Rem { rest } else { quotient };
        Some(self.sum_of(&kept))
    }

    /// [`Self::split_below`] where the summands left over reach `n` but the multiples of `n`
    /// among them can still be taken out: `(Q·n + r) / n = Q + r / n` and
    /// `(Q·n + r) % n = r % n` for `Q, r ≥ 0`. The division left is of the smaller sum, often a
    /// loop variable by a constant (a head's column `k / 16` of a `[B, S, H·E]` read of
    /// attention's `[B, H, S, E]` output), where the kernel otherwise divided the whole row
    /// index in the product's contraction loop.
    fn split_partial(&mut self, op: BinOp, quotient: &Terms, rest: &Terms, n: ExprId) -> Option<ExprId> {
        if quotient.is_empty() || self.bound(quotient).is_none() {
            return None;
        }
        let r = self.sum_of(rest);
        let part = self.binary(op, r, n).ok()?;
        if op == BinOp::Rem {
            return Some(part);
        }
        let q = self.sum_of(quotient);
        self.binary(BinOp::Add, q, part).ok()
    }

    /// [`Self::split_below`] with a constant factor `g` of the divisor `n = g·m` taken out of
    /// the summands first: `(Q·g + r) / (g·m) = Q / m` and `(Q·g + r) % (g·m) = (Q % m)·g + r`
    /// for `Q ≥ 0`, `0 ≤ r < g` (`m` one of the kernel's size arguments). A product reading
    /// a `[B, S, E]` tensor through the view of its rows as `[B·S, E]` divides `64·row + k` by
    /// `64·S` (`E` = 64) to find the batch: that is `row / S`, a row constant, where the
    /// kernel otherwise did a 64-bit division by a run-time size per element of the
    /// contraction and row of its block (a language-model head through a view: 5× the time of
    /// the same product read contiguously).
    fn split_scaled(&mut self, op: BinOp, quotient: &Terms, rest: &Terms, n_sym: &sym::Expr) -> Option<ExprId> {
        // Terms already divided by `n` would have to be scaled back; a constant `n` is
        // `split_grouped`'s case.
        if !quotient.is_empty() || n_sym.simplify().as_int().is_some() {
            return None;
        }
        let candidates: Vec<(sym::Expr, i64)> = self
            .params
            .iter()
            .filter_map(|p| sym::Expr::truediv(n_sym.clone(), p.clone()).simplify().as_int().filter(|g| *g >= 2).map(|g| (p.clone(), g)))
            .collect();
        for (m_sym, g) in candidates {
            let (over, small): (Terms, Terms) = rest.iter().partition(|(c, _)| c % g == 0);
            let over: Terms = over.into_iter().map(|(c, atom)| (c / g, atom)).collect();
            if over.is_empty() || self.bound(&over).is_none() {
                continue;
            }
            let Some(top) = self.bound(&small) else { continue };
            let slack = sym::Expr::sub(sym::Expr::int(g - 1), top).simplify();
            if !nonnegative(&slack) {
                continue;
            }
            let m = self.size(&m_sym);
            let q = self.sum_of(&over);
            return if op == BinOp::Rem {
                let digit = self.binary(BinOp::Rem, q, m).ok()?;
                let gi = self.i64(g);
                let high = self.binary(BinOp::Mul, digit, gi).ok()?;
                let low = self.sum_of(&small);
                self.binary(BinOp::Add, high, low).ok()
            } else {
                self.binary(BinOp::Div, q, m).ok()
            };
        }
        None
    }

    /// The largest value of `Σ c · atom` over `terms`, when every coefficient is non-negative
    /// and every atom bounded ([`Self::upper`]).
    fn bound(&self, terms: &Terms) -> Option<sym::Expr> {
        let mut top = sym::Expr::int(0);
        for (c, atom) in terms {
            if *c < 0 {
                return None;
            }
            let u = match atom {
                Some(x) => self.upper(*x)?,
                None => sym::Expr::int(1),
            };
            top = sym::Expr::add(top, sym::Expr::mul(sym::Expr::int(*c), u));
        }
        Some(top)
    }

    /// [`Self::split_below`] where the summands left over reach `n`, but split again below a
    /// divisor `m = n / c` of it (`c` a constant): `Q·m + r` with `0 ≤ r < m` gives
    /// `(Q·m + r) / n = Q / c` and `(Q·m + r) % n = (Q % c)·m + r`. Grouped-query attention
    /// reads a key head through `expand` + `reshape` as `(h·8s + 8j + e) / 16s` (two query
    /// heads per key head, `j < s`, `e < 8`): this is `h / 2`, a row constant, where the kernel
    /// otherwise did a 64-bit division by a run-time size per key element (Llama's attention,
    /// 4–6× BERT's at the same sizes). Candidates for `m` are the kernel's own size arguments
    /// (no new argument is made for a failed try) and, for a constant `n`, its divisors other than
    /// 1 (`m = 1` would rebuild the division it was asked for).
    fn split_grouped(&mut self, op: BinOp, quotient: &Terms, rest: &Terms, n_sym: &sym::Expr) -> Option<ExprId> {
        let candidates: Vec<(sym::Expr, i64)> = match n_sym.simplify().as_int() {
            Some(d) => (2..d.min(4096)).filter(|c| d % c == 0).map(|c| (sym::Expr::int(d / c), c)).collect(),
            None => self
                .params
                .iter()
                .filter_map(|p| sym::Expr::truediv(n_sym.clone(), p.clone()).simplify().as_int().filter(|c| *c >= 2).map(|c| (p.clone(), c)))
                .collect(),
        };
        for (m_sym, c) in candidates {
            let m = self.size(&m_sym);
            let (mut over, mut small): (Terms, Terms) = (Vec::new(), Vec::new());
            for &(k, atom) in rest {
                match self.term_over(k, atom, m) {
                    Some(q) => over.push(q),
                    None => small.push((k, atom)),
                }
            }
            // `Q ≥ 0` (truncation agrees with the floor) and `0 ≤ r < m`.
            if over.is_empty() || self.bound(&over).is_none() {
                continue;
            }
            let Some(top) = self.bound(&small) else { continue };
            let slack = sym::Expr::sub(sym::Expr::sub(m_sym.clone(), sym::Expr::int(1)), top).simplify();
            if !nonnegative(&slack) {
                continue;
            }
            let q = self.sum_of(&over);
            let c = self.i64(c);
            return Some(if op == BinOp::Rem {
                let digit = self.binary(BinOp::Rem, q, c).ok()?;
                let high = self.binary(BinOp::Mul, digit, m).ok()?;
                let low = self.sum_of(&small);
                self.binary(BinOp::Add, high, low).ok()?
            } else {
                let high = self.binary(BinOp::Div, q, c).ok()?;
                let low = self.sum_of(quotient);
                self.binary(BinOp::Add, low, high).ok()?
            });
        }
        None
    }

    /// Records that variable `v` runs over `0..extent` (a symbolic size).
    pub(super) fn set_var_extent(&mut self, v: VarId, extent: sym::Expr) {
        self.var_extents.insert(v, extent);
    }

    /// `e` as a sum of constant multiples of atoms, constants distributed over sums
    /// (`(b·2 + h)·16 = 32·b + 16·h`).
    fn terms(&self, e: ExprId) -> Option<Terms> {
        Some(match *self.get(e) {
            KExpr::I64(v) => vec![(v, None)],
            KExpr::Binary(BinOp::Add, a, b) => {
                let mut t = self.terms(a)?;
                t.extend(self.terms(b)?);
                t
            }
            KExpr::Binary(BinOp::Mul, a, b) => {
                let (x, c) = match (self.const_i64(a), self.const_i64(b)) {
                    (_, Some(c)) => (a, c),
                    (Some(c), _) => (b, c),
                    _ => return Some(vec![(1, Some(e))]),
                };
                self.terms(x)?.into_iter().map(|(k, atom)| k.checked_mul(c).map(|k| (k, atom))).collect::<Option<_>>()?
            }
            _ => vec![(1, Some(e))],
        })
    }

    /// `c · atom / n` when it is exact.
    fn term_over(&mut self, c: i64, atom: Option<ExprId>, n: ExprId) -> Option<(i64, Option<ExprId>)> {
        if c == 0 {
            return Some((0, None));
        }
        if let Some(d) = self.const_i64(n) {
            if d > 0 && c % d == 0 {
                return Some((c / d, atom));
            }
        }
        let q = self.exact_div(atom?, n)?;
        Some((c, Some(q)))
    }

    fn sum_of(&mut self, terms: &Terms) -> ExprId {
        let mut acc = self.i64(0);
        for (c, atom) in terms {
            let k = self.i64(*c);
            let t = match atom {
                Some(x) => self.binary(BinOp::Mul, *x, k).unwrap_or(*x),
                None => k,
            };
            acc = self.binary(BinOp::Add, acc, t).unwrap_or(acc);
        }
        acc
    }

    /// The largest value of an index expression, symbolically, when it is known and the
    /// expression cannot be negative (built from sizes, loop variables, non-negative constants,
    /// products, sums and remainders by sizes).
    fn upper(&self, e: ExprId) -> Option<sym::Expr> {
        match *self.get(e) {
            KExpr::I64(v) if v >= 0 => Some(sym::Expr::int(v)),
            KExpr::Var(v) => Some(sym::Expr::sub(self.var_extents.get(&v)?.clone(), sym::Expr::int(1))),
            KExpr::Param(i) => {
                let p = self.params.get(i as usize)?;
                least_constant_of_min(p).or_else(|| nonnegative(p).then(|| p.clone()))
            }
            KExpr::Binary(BinOp::Add, a, b) => Some(sym::Expr::add(self.upper(a)?, self.upper(b)?)),
            KExpr::Binary(BinOp::Mul, a, b) => Some(sym::Expr::mul(self.upper(a)?, self.upper(b)?)),
            KExpr::Binary(BinOp::Rem, a, n) => {
                self.upper(a)?;
                Some(sym::Expr::sub(self.sym_size(n)?, sym::Expr::int(1)))
            }
            KExpr::Binary(BinOp::Div, a, n) => match (self.upper(a)?.simplify().as_int(), self.const_i64(n)) {
                (Some(u), Some(d)) if d > 0 => Some(sym::Expr::int(u / d)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether a simplified polynomial over sizes (symbols ≥ 0) is ≥ 0: a constant ≥ 0, or sums and
/// products of such and of symbols.
fn nonnegative(e: &sym::Expr) -> bool {
    match e {
        sym::Expr::Int(v) => *v >= 0,
        sym::Expr::Symbol(_) => true,
        sym::Expr::Add(xs) | sym::Expr::Mul(xs) => xs.iter().all(nonnegative),
        sym::Expr::Pow(p) => nonnegative(&p.0) && matches!(p.1, sym::Expr::Int(k) if k >= 0),
        _ => false,
    }
}

/// The bound of a size argument `Min(c, x, …)` whose arguments are all non-negative (sizes,
/// as [`nonnegative`] takes them) and one of them a constant `c`: at most `c`. transformers'
/// `[:, -logits_to_keep:]` and its key/value slices leave `Min(0, s)` starts in the exports, so
/// a key read `(Min(0, s) + j) % s` is `Min(0, s) + j`, not a remainder by a run-time size per
/// key element (hf_diffllama's attention kept three such divisions per key and output column).
fn least_constant_of_min(p: &sym::Expr) -> Option<sym::Expr> {
    let sym::Expr::Call(sym::Func::Min, xs) = p else { return None };
    if !xs.iter().all(nonnegative) {
        return None;
    }
    xs.iter().filter_map(|x| x.as_int()).min().map(sym::Expr::int)
}

/// Each fold's and state loop's variable with its extent, symbolically where the extent is a
/// size.
pub(super) fn loop_extents(kb: &KernelBuilder) -> HashMap<VarId, sym::Expr> {
    let mut out = HashMap::new();
    for e in &kb.exprs {
        if let KExpr::Reduce { var, extent, .. } | KExpr::Loop { var, extent, .. } = e {
            if let Some(s) = kb.sym_size(*extent) {
                out.insert(*var, s);
            }
        }
    }
    out
}

impl KernelBuilder {
    /// The arena rebuilt in order through the folding constructors, now that every loop
    /// variable's range is known; returns the new id of every old one.
    pub(super) fn refold(&mut self) -> Vec<ExprId> {
        self.refold_with(&mut |_, _| None)
    }

    /// [`Self::refold`], with each variable `v` for which `subst` builds an expression (in the
    /// new arena, when the rebuild reaches it) replaced by that expression.
    pub(super) fn refold_with(&mut self, subst: &mut dyn FnMut(&mut KernelBuilder, VarId) -> Option<ExprId>) -> Vec<ExprId> {
        self.rebuild_with(&mut |kb, _, e| match e {
            KExpr::Var(v) => subst(kb, *v),
            _ => None,
        })
    }

    /// [`Self::refold`], with any node for which `hook` builds a replacement of the same type
    /// replaced by it. The hook gets the old id and the node with its operands already mapped
    /// into the new arena.
    pub(crate) fn rebuild_with(&mut self, hook: &mut dyn FnMut(&mut KernelBuilder, ExprId, &KExpr) -> Option<ExprId>) -> Vec<ExprId> {
        for (v, s) in loop_extents(self) {
            self.var_extents.entry(v).or_insert(s);
        }
        let exprs = std::mem::take(&mut self.exprs);
        let types = std::mem::take(&mut self.types);
        self.dedup.clear();
        let mut map: Vec<ExprId> = Vec::with_capacity(exprs.len());
        for (old, (e, ty)) in exprs.into_iter().zip(types).enumerate() {
            let e = e.map_operands(&mut |x| map[x.0 as usize]);
            let new = hook(self, ExprId(old as u32), &e).or_else(|| match e {
                KExpr::Binary(op, a, b) => self.binary(op, a, b).ok(),
                KExpr::Cmp(op, a, b) => self.cmp(op, a, b).ok(),
                KExpr::Select(c, a, b) => self.select(c, a, b).ok(),
                KExpr::Cast(a, t) => Some(self.cast(a, t)),
                KExpr::ToF32(a) => Some(self.to_f32(a)),
                _ => None,
            });
            let id = new.filter(|n| self.ty(*n) == ty).unwrap_or_else(|| self.intern(e, ty));
            map.push(id);
        }
        map
    }
}

/// Test helper: the value of index expression `e` (sums, differences, products, truncating
/// quotients and remainders of constants, size arguments and variables), reading the arena
/// through `expr`, with variables from `var` and the symbols of the size arguments from `b`.
#[cfg(test)]
pub(super) fn eval_index(expr: &dyn Fn(ExprId) -> KExpr, params: &[sym::Expr], e: ExprId, var: &dyn Fn(VarId) -> i64, b: &sym::Bindings) -> i64 {
    let go = |x| eval_index(expr, params, x, var, b);
    match expr(e) {
        KExpr::I64(v) => v,
        KExpr::Var(v) => var(v),
        KExpr::Param(i) => params[i as usize].eval_int(b).expect("the test binds every symbol of its sizes"),
        KExpr::Binary(op, x, y) => {
            let (x, y) = (go(x), go(y));
            match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Rem => x % y,
                _ => unreachable!("index arithmetic only"),
            }
        }
        other => unreachable!("not index arithmetic: {other:?}"),
    }
}

#[cfg(test)]
mod tests;
