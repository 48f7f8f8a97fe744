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
            return self.split_grouped(op, &quotient, &rest, &n_sym);
        }
        let kept = if op == BinOp::Rem { rest } else { quotient };
        Some(self.sum_of(&kept))
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
            KExpr::Param(i) => self.params.get(i as usize).filter(|p| nonnegative(p)).cloned(),
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
mod tests {
    use rand::{Rng, SeedableRng};

    use super::super::{BinOp, ExprId, KExpr, KernelBuilder, VarId};
    use super::eval_index;
    use crate::sym;

    /// The value of integer expression `e` with variables `vars` and symbol `s` = `s`.
    fn eval(kb: &KernelBuilder, e: ExprId, vars: &[i64], s: i64) -> i64 {
        let mut b = sym::Bindings::new();
        b.set("s", s);
        eval_index(&|x| kb.get(x).clone(), &kb.params, e, &|v| vars[v.0 as usize], &b)
    }

    fn divisions(kb: &KernelBuilder, e: ExprId) -> usize {
        let own = usize::from(matches!(kb.get(e), KExpr::Binary(BinOp::Div | BinOp::Rem, ..)));
        own + match *kb.get(e) {
            KExpr::Binary(_, a, b) => divisions(kb, a) + divisions(kb, b),
            _ => 0,
        }
    }

    /// Attention reading `[B, H, S, E]` query rows out of a `[B, S, 3·H·E]` projection, sizes
    /// symbolic in `s` as the zoo's exports make them: the two views' splits cancel.
    #[test]
    fn a_read_through_two_views_keeps_no_division() {
        let s = sym::Expr::symbol("s");
        let mut kb = KernelBuilder::new(4);
        let ext = [kb.size(&s), kb.i64(2), kb.i64(17), kb.i64(16)];
        kb.set_coord_extents(&ext);
        let [b, h, i, e] = [0, 1, 2, 3].map(|v| kb.var(VarId(v)));
        // Linear index in the [B, H, S, E] view (contiguous: 544, 272, 16, 1).
        let mut l = kb.i64(0);
        for (x, st) in [(b, 544), (h, 272), (i, 16), (e, 1)] {
            let st = kb.i64(st);
            let t = kb.binary(BinOp::Mul, x, st).unwrap();
            l = kb.binary(BinOp::Add, l, t).unwrap();
        }
        // Its coordinates [B·H, S, E] → the projection's [S, B·H·E] layout: (s', c) with
        // c = (b·2 + h)·16 + e, then the projection's row s'·(32·s) + c split by 32·s and 32.
        let (c16, c17, c272) = (kb.i64(16), kb.i64(17), kb.i64(272));
        let row = kb.binary(BinOp::Div, l, c16).unwrap();
        let si = kb.binary(BinOp::Rem, row, c17).unwrap();
        let bh = kb.binary(BinOp::Div, l, c272).unwrap();
        let ei = kb.binary(BinOp::Rem, l, c16).unwrap();
        let width = kb.size(&sym::Expr::mul(sym::Expr::int(32), s.clone()));
        let t1 = kb.binary(BinOp::Mul, si, width).unwrap();
        let t2 = kb.binary(BinOp::Mul, bh, c16).unwrap();
        let flat = kb.binary(BinOp::Add, t1, t2).unwrap();
        let flat = kb.binary(BinOp::Add, flat, ei).unwrap();
        let c32 = kb.i64(32);
        let q = kb.binary(BinOp::Div, flat, width).unwrap();
        let r = kb.binary(BinOp::Rem, flat, c32).unwrap();
        let bb = kb.binary(BinOp::Div, flat, c32).unwrap();
        let sz = ext[0];
        let bb = kb.binary(BinOp::Rem, bb, sz).unwrap();
        for x in [q, r, bb] {
            assert_eq!(divisions(&kb, x), 0, "{:?}", kb.get(x));
        }
        for sv in [1, 3] {
            for vars in (0..sv).flat_map(|b| (0..2).flat_map(move |h| (0..17).flat_map(move |i| (0..16).map(move |e| [b, h, i, e])))) {
                let f = ((vars[0] * 2 + vars[1]) * 16 + vars[3]) + vars[2] * 32 * sv;
                assert_eq!(eval(&kb, q, &vars, sv), f / (32 * sv));
                assert_eq!(eval(&kb, r, &vars, sv), f % 32);
                assert_eq!(eval(&kb, bb, &vars, sv), (f / 32) % sv);
            }
        }
    }

    /// Random sums of multiples of bounded variables, divided and reduced by random sizes:
    /// folded or not, each agrees with plain arithmetic at every point of the ranges.
    #[test]
    fn folded_divisions_agree_with_arithmetic_everywhere() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(14);
        let mut folded = 0;
        for _ in 0..300 {
            let extents: Vec<i64> = (0..3).map(|_| rng.gen_range(1..6)).collect();
            let coefs: Vec<i64> = (0..3).map(|_| [1, 2, 3, 4, 6, 8, 12, 24][rng.gen_range(0..8)]).collect();
            let constant = rng.gen_range(0..30);
            let n = [2, 3, 4, 6, 8, 12, 24, 48][rng.gen_range(0..8)];
            let mut kb = KernelBuilder::new(3);
            let ext: Vec<ExprId> = extents.iter().map(|e| kb.i64(*e)).collect();
            kb.set_coord_extents(&ext);
            let mut x = kb.i64(constant);
            for (v, c) in coefs.iter().enumerate() {
                let var = kb.var(VarId(v as u32));
                let c = kb.i64(*c);
                let t = kb.binary(BinOp::Mul, var, c).unwrap();
                x = kb.binary(BinOp::Add, t, x).unwrap();
            }
            let nn = kb.i64(n);
            let (q, r) = (kb.binary(BinOp::Div, x, nn).unwrap(), kb.binary(BinOp::Rem, x, nn).unwrap());
            folded += usize::from(divisions(&kb, q) == 0) + usize::from(divisions(&kb, r) == 0);
            for a in 0..extents[0] {
                for b in 0..extents[1] {
                    for c in 0..extents[2] {
                        let vars = [a, b, c];
                        let want = constant + a * coefs[0] + b * coefs[1] + c * coefs[2];
                        assert_eq!(eval(&kb, q, &vars, 1), want / n, "{coefs:?} {extents:?} {constant} / {n}");
                        assert_eq!(eval(&kb, r, &vars, 1), want % n, "{coefs:?} {extents:?} {constant} % {n}");
                    }
                }
            }
        }
        assert!(folded > 100, "only {folded} of 600 folded");
    }

    /// Grouped-query attention's key read, `[B, 4, S, 8]` through `expand` + `reshape` of a
    /// `[B, 2, S, 8]` key: the key head `((b·32s + h·8s + 8j + e) / 16s) % 2` is `h / 2`, with
    /// no division by a run-time size left, at every point of the ranges.
    #[test]
    fn a_grouped_head_index_divides_by_constants_only() {
        let s = sym::Expr::symbol("s");
        let times = |c: i64| sym::Expr::mul(sym::Expr::int(c), s.clone());
        let mut kb = KernelBuilder::new(3);
        let ext = [kb.size(&s), kb.i64(4), kb.size(&s)];
        kb.set_coord_extents(&ext);
        let (jv, ev) = (kb.fresh_var().unwrap(), kb.fresh_var().unwrap());
        kb.set_var_extent(jv, s.clone());
        kb.set_var_extent(ev, sym::Expr::int(8));
        let [b, h] = [0, 1].map(|v| kb.var(VarId(v)));
        let (j, e) = (kb.var(jv), kb.var(ev));
        let (w32, w8, w16, c8, c2) = (kb.size(&times(32)), kb.size(&times(8)), kb.size(&times(16)), kb.i64(8), kb.i64(2));
        let mut l = kb.binary(BinOp::Mul, b, w32).unwrap();
        for t in [kb.binary(BinOp::Mul, h, w8).unwrap(), kb.binary(BinOp::Mul, j, c8).unwrap(), e] {
            l = kb.binary(BinOp::Add, l, t).unwrap();
        }
        let q = kb.binary(BinOp::Div, l, w16).unwrap();
        let head = kb.binary(BinOp::Rem, q, c2).unwrap();
        let r = kb.binary(BinOp::Rem, l, w16).unwrap();
        let by_size = |kb: &KernelBuilder, root: ExprId| {
            let mut stack = vec![root];
            let mut n = 0;
            while let Some(x) = stack.pop() {
                if let KExpr::Binary(BinOp::Div | BinOp::Rem, a, d) = *kb.get(x) {
                    n += usize::from(kb.const_i64(d).is_none());
                    stack.extend([a, d]);
                } else if let KExpr::Binary(_, a, d) = *kb.get(x) {
                    stack.extend([a, d]);
                }
            }
            n
        };
        for x in [q, head, r] {
            assert_eq!(by_size(&kb, x), 0, "{:?}", kb.get(x));
        }
        for sv in [1, 2, 5] {
            for (bi, hi, ji, ei) in (0..sv).flat_map(|b| (0..4).flat_map(move |h| (0..sv).flat_map(move |j| (0..8).map(move |e| (b, h, j, e))))) {
                let vars: Vec<i64> = (0..5).map(|v| match v {
                    0 => bi,
                    1 => hi,
                    v if v == jv.0 as usize => ji,
                    v if v == ev.0 as usize => ei,
                    _ => 0,
                }).collect();
                let f = bi * 32 * sv + hi * 8 * sv + 8 * ji + ei;
                assert_eq!(eval(&kb, q, &vars, sv), f / (16 * sv));
                assert_eq!(eval(&kb, head, &vars, sv), (f / (16 * sv)) % 2);
                assert_eq!(eval(&kb, r, &vars, sv), f % (16 * sv));
            }
        }
    }

    #[test]
    fn a_remainder_that_may_reach_the_divisor_stays() {
        // i·16 + e for i < 17, e < 16 reaches 271: not below 256.
        let mut kb = KernelBuilder::new(2);
        let ext = [kb.i64(17), kb.i64(16)];
        kb.set_coord_extents(&ext);
        let (i, e, c16, c256) = (kb.var(VarId(0)), kb.var(VarId(1)), kb.i64(16), kb.i64(256));
        let t = kb.binary(BinOp::Mul, i, c16).unwrap();
        let x = kb.binary(BinOp::Add, t, e).unwrap();
        let q = kb.binary(BinOp::Div, x, c256).unwrap();
        assert!(matches!(kb.get(q), KExpr::Binary(BinOp::Div, ..)));
        // A variable without a known range is never assumed small.
        let mut kb = KernelBuilder::new(1);
        let v = kb.fresh_var().unwrap();
        let (j, c8) = (kb.var(v), kb.i64(8));
        let q = kb.binary(BinOp::Div, j, c8).unwrap();
        assert!(matches!(kb.get(q), KExpr::Binary(BinOp::Div, ..)));
    }

    /// A fold's variable gets its range when the kernel is finished: its body's splits cancel.
    #[test]
    fn finishing_folds_with_the_ranges_of_reductions() {
        let mut kb = KernelBuilder::new(1);
        let ext = [kb.i64(5)];
        kb.set_coord_extents(&ext);
        let a = kb.buffer("a", super::super::Access::Read);
        let out = kb.buffer("out", super::super::Access::Write);
        let r = kb.var(VarId(0));
        let v = kb.fresh_var().unwrap();
        let (j, c8) = (kb.var(v), kb.i64(8));
        let base = kb.binary(BinOp::Mul, r, c8).unwrap();
        let l = kb.binary(BinOp::Add, base, j).unwrap();
        let col = kb.binary(BinOp::Rem, l, c8).unwrap();
        let row = kb.binary(BinOp::Div, l, c8).unwrap();
        let back = kb.binary(BinOp::Mul, row, c8).unwrap();
        let idx = kb.binary(BinOp::Add, back, col).unwrap();
        let x = kb.load(a, idx);
        let s = kb.reduce(super::super::RedOp::Sum, v, c8, x).unwrap();
        let k = kb.finish("k".into(), vec![sym::Expr::int(5)], ext.to_vec(), vec![super::super::Store { buf: out, value: s }]);
        let reachable = {
            let mut stack = vec![k.stores[0].value];
            let mut n = 0;
            while let Some(e) = stack.pop() {
                n += usize::from(matches!(k.expr(e), KExpr::Binary(BinOp::Div | BinOp::Rem, ..)));
                stack.extend(k.children(e));
            }
            n
        };
        assert_eq!(reachable, 0, "the store reads a[r·8 + j]");
    }
}
