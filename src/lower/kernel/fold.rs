//! Folding while building: constants computed at build time, identities of index arithmetic
//! (`x + 0`, `x · 1`, `x / 1`), and mixed-radix digits of an index joined back into the index.
//! The builder's constructors ask here before they intern a node; `index` adds the rewrites
//! that need the loop variables' ranges.

use super::{BinOp, ExprId, KExpr, KernelBuilder, KernelError, Ty};
use crate::sym;

/// Whether `e` is a polynomial with integer coefficients (an exact quotient, not `s/64`).
fn integral(e: &sym::Expr) -> bool {
    match e {
        sym::Expr::Int(_) | sym::Expr::Symbol(_) => true,
        sym::Expr::Add(xs) | sym::Expr::Mul(xs) => xs.iter().all(integral),
        _ => false,
    }
}

/// A run of mixed-radix digits of an index: (index, low size, high size or none).
type Digits = (ExprId, sym::Expr, Option<sym::Expr>);

impl KernelBuilder {
    /// Constant `a` converted to compute type `ty`, when the conversion is exact to do now
    /// (a non-finite float stays a runtime conversion).
    pub(super) fn fold_cast(&mut self, a: ExprId, ty: Ty) -> Option<ExprId> {
        Some(match (self.get(a).clone(), ty) {
            (KExpr::F32(b), Ty::F64) => self.f64(f32::from_bits(b) as f64),
            (KExpr::F64(b), Ty::F32) => self.f32(f64::from_bits(b) as f32),
            (KExpr::F64(b), Ty::I64) if f64::from_bits(b).is_finite() => self.i64(f64::from_bits(b) as i64),
            (KExpr::F64(b), Ty::Bool) => self.bool(f64::from_bits(b) != 0.0),
            (KExpr::I64(v), Ty::F64) => self.f64(v as f64),
            (KExpr::Bool(v), Ty::F64) => self.f64(v as i32 as f64),
            (KExpr::I64(v), Ty::F32) => self.f32(v as f32),
            (KExpr::I64(v), Ty::Bool) => self.bool(v != 0),
            (KExpr::F32(b), Ty::I64) if f32::from_bits(b).is_finite() => self.i64(f32::from_bits(b) as i64),
            (KExpr::F32(b), Ty::Bool) => self.bool(f32::from_bits(b) != 0.0),
            (KExpr::Bool(v), Ty::F32) => self.f32(v as i32 as f32),
            (KExpr::Bool(v), Ty::I64) => self.i64(v as i64),
            (KExpr::U32(v), Ty::I64) => self.i64(i64::from(v)),
            (KExpr::I64(v), Ty::U32) => self.u32(v as u32),
            _ => return None,
        })
    }

    /// `a op b` on i64 operands folded, or `Ok(None)` to build it as written. Index arithmetic
    /// is built generically (strides of 1, offsets of 0); folding those away makes the generated
    /// code read like hand-written indexing.
    pub(super) fn fold_i64(&mut self, op: BinOp, a: ExprId, b: ExprId) -> Result<Option<ExprId>, KernelError> {
        let (ca, cb) = (self.const_i64(a), self.const_i64(b));
        match (op, ca, cb) {
            (_, Some(x), Some(y)) => {
                let v = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div if y != 0 => Some(x / y),
                    BinOp::Rem if y != 0 => Some(x % y),
                    BinOp::Max => Some(x.max(y)),
                    BinOp::Min => Some(x.min(y)),
                    _ => None,
                };
                if let Some(v) = v {
                    return Ok(Some(self.i64(v)));
                }
            }
            (BinOp::Add, Some(0), _) | (BinOp::Mul, Some(1), _) => return Ok(Some(b)),
            (BinOp::Add | BinOp::Sub, _, Some(0)) | (BinOp::Mul | BinOp::Div, _, Some(1)) => return Ok(Some(a)),
            (BinOp::Mul, Some(0), _) | (BinOp::Mul, _, Some(0)) => return Ok(Some(self.i64(0))),
            (BinOp::Rem, _, Some(1)) => return Ok(Some(self.i64(0))),
            _ => {}
        }
        if op == BinOp::Add {
            if let Some(folded) = self.fold_digits(a, b) {
                return Ok(Some(folded));
            }
            // `(x + hi) + lo`, the digits after an offset (a row's base before a flattened
            // range's digits): join `hi + lo` and add `x` to the join.
            if let KExpr::Binary(BinOp::Add, x, hi) = *self.get(a) {
                if let Some(joined) = self.fold_digits(hi, b) {
                    return self.binary(BinOp::Add, x, joined).map(Some);
                }
            }
        }
        if matches!(op, BinOp::Div | BinOp::Rem) {
            if let Some(folded) = self.split_below(op, a, b) {
                return Ok(Some(folded));
            }
        }
        Ok(None)
    }

    /// Index arithmetic through reshapes re-linearizes what it just split: reading a contiguous
    /// buffer through `view` computes `Σ_d ((l / st_d) % sz_d) · st_d`, which is `l` again (or
    /// `l % m` for a partial sum). Recognised here, so the kernel does one multiply-add per
    /// dimension instead of a 64-bit division and remainder per dimension per element (a
    /// dozen of them per load in an attention kernel's inner loop).
    fn fold_digits(&mut self, a: ExprId, b: ExprId) -> Option<ExprId> {
        let (l, lo, hi) = self.digits_of_sum(a, b)?;
        if lo.as_int() != Some(1) {
            return None;
        }
        Some(match hi {
            None => l,
            // The linear index's digits are all computed for the coordinates: re-joining some of
            // them is a multiply-add each, a remainder by a kernel argument a division per element.
            Some(m) if m.simplify().as_int().is_none() && self.linear.is_some_and(|v| *self.get(l) == KExpr::Var(v)) => return None,
            Some(m) => {
                let m = self.size(&m);
                self.intern(KExpr::Binary(BinOp::Rem, l, m), Ty::I64)
            }
        })
    }

    /// `e / n` when `e` is built as an exact multiple of `n` (a product with `n` as a factor,
    /// a constant multiple of a constant, or a sum of such).
    pub(super) fn exact_div(&mut self, e: ExprId, n: ExprId) -> Option<ExprId> {
        if e == n {
            return Some(self.i64(1));
        }
        match *self.get(e) {
            KExpr::I64(v) => match *self.get(n) {
                KExpr::I64(c) if c > 0 && v % c == 0 => Some(self.i64(v / c)),
                _ => None,
            },
            KExpr::Binary(BinOp::Mul, x, y) => {
                if let Some(q) = self.exact_div(x, n) {
                    return self.binary(BinOp::Mul, q, y).ok();
                }
                let q = self.exact_div(y, n)?;
                self.binary(BinOp::Mul, x, q).ok()
            }
            KExpr::Binary(BinOp::Add, x, y) => {
                let (qx, qy) = (self.exact_div(x, n)?, self.exact_div(y, n)?);
                self.binary(BinOp::Add, qx, qy).ok()
            }
            // A size argument such as `64*s27` over 64: divide symbolically, keep it if exact.
            KExpr::Param(_) => {
                let (es, ns) = (self.sym_size(e)?.simplify(), self.sym_size(n)?);
                let q = sym::Expr::truediv(es, ns).simplify();
                integral(&q).then(|| self.size(&q))
            }
            _ => None,
        }
    }

    fn digits_of_sum(&self, a: ExprId, b: ExprId) -> Option<Digits> {
        let (x, y) = (self.digits(a)?, self.digits(b)?);
        if x.0 != y.0 {
            return None;
        }
        // Adjacent runs: one's low end is the other's high end.
        let meets = |hi: &Option<sym::Expr>, lo: &sym::Expr| hi.as_ref().is_some_and(|h| h.simplify() == lo.simplify());
        if meets(&y.2, &x.1) {
            Some((x.0, y.1, x.2))
        } else if meets(&x.2, &y.1) {
            Some((x.0, x.1, y.2))
        } else {
            None
        }
    }

    /// `e` as a run of mixed-radix digits of an index `l`: `e = l % hi - l % lo` (`hi` `None`:
    /// no upper end), with `lo` and `hi` as symbolic sizes. Holds for truncating division by
    /// positive sizes, whatever the sign of `l`.
    fn digits(&self, e: ExprId) -> Option<Digits> {
        match *self.get(e) {
            KExpr::Binary(BinOp::Add, a, b) => self.digits_of_sum(a, b),
            // l % z = l % z - l % 1
            KExpr::Binary(BinOp::Rem, l, z) => Some((l, sym::Expr::int(1), Some(self.sym_size(z)?))),
            KExpr::Binary(BinOp::Mul, x, y) => [(x, y), (y, x)].into_iter().find_map(|(q, s)| match *self.get(q) {
                // (l / s) · s = l - l % s
                KExpr::Binary(BinOp::Div, ..) => {
                    let l = self.quotient_by(q, s)?;
                    Some((l, self.sym_size(s)?, None))
                }
                // ((l / s) % z) · s = l % (s·z) - l % s
                KExpr::Binary(BinOp::Rem, d, z) => {
                    let l = self.quotient_by(d, s)?;
                    let st = self.sym_size(s)?;
                    Some((l, st.clone(), Some(sym::Expr::mul(st, self.sym_size(z)?))))
                }
                _ => None,
            }),
            _ => None,
        }
    }

    /// `l` when `q` is the truncating quotient `l / s`, directly or as nested quotients whose
    /// divisors multiply to `s` (`(l / 8) / n` is `l / (8·n)`: truncation toward zero by
    /// positive sizes composes). Digits of a linear index are built as such a chain
    /// (`Kernel::linearize`), so that each step divides by one extent, a constant where the
    /// extent is one, instead of by a product that a dynamic extent makes a kernel argument.
    fn quotient_by(&self, q: ExprId, s: ExprId) -> Option<ExprId> {
        let KExpr::Binary(BinOp::Div, a, d) = *self.get(q) else { return None };
        if d == s {
            return Some(a);
        }
        // Nested: peel the divisors off the outermost quotient until they make up `s`.
        let (mut l, mut p) = (a, self.sym_size(d)?);
        let target = self.sym_size(s)?.simplify();
        while let KExpr::Binary(BinOp::Div, inner, d2) = *self.get(l) {
            p = sym::Expr::mul(p, self.sym_size(d2)?);
            l = inner;
            if p.simplify() == target {
                return Some(l);
            }
        }
        None
    }

    /// A positive size as a symbolic expression: a constant, a size argument or their product.
    pub(crate) fn sym_size(&self, e: ExprId) -> Option<sym::Expr> {
        match *self.get(e) {
            KExpr::I64(v) if v > 0 => Some(sym::Expr::int(v)),
            KExpr::Param(i) => self.params.get(i as usize).cloned(),
            KExpr::Binary(BinOp::Mul, a, b) => Some(sym::Expr::mul(self.sym_size(a)?, self.sym_size(b)?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::VarId;
    use super::*;

    /// `Σ_d ((l / st_d) % sz_d) · st_d` over the contiguous strides of `sizes`, as a reshape
    /// followed by a contiguous read builds it.
    fn relinearize(kb: &mut KernelBuilder, l: ExprId, sizes: &[sym::Expr]) -> ExprId {
        let strides = crate::ir::TensorMeta::contiguous_strides(sizes);
        let mut index = kb.i64(0);
        for (d, (size, stride)) in sizes.iter().zip(&strides).enumerate() {
            let st = kb.size(stride);
            let q = kb.binary(BinOp::Div, l, st).unwrap();
            let digit = if d == 0 {
                q
            } else {
                let sz = kb.size(size);
                kb.binary(BinOp::Rem, q, sz).unwrap()
            };
            let term = kb.binary(BinOp::Mul, digit, st).unwrap();
            index = kb.binary(BinOp::Add, index, term).unwrap();
        }
        index
    }

    #[test]
    fn splitting_an_index_and_joining_it_again_folds_to_the_index() {
        let s = sym::Expr::symbol("s");
        for sizes in [
            vec![sym::Expr::int(3), sym::Expr::int(5), sym::Expr::int(7)],
            vec![s.clone(), sym::Expr::int(4), s.clone()],
            vec![sym::Expr::int(2), s.clone()],
        ] {
            let mut kb = KernelBuilder::new(1);
            let l = kb.var(VarId(0));
            assert_eq!(relinearize(&mut kb, l, &sizes), l, "{sizes:?}");
        }
    }

    #[test]
    fn digits_after_an_offset_join_into_the_index() {
        // (x + (l / 6) · 6) + l % 6 is x + l: the join looks past the offset.
        let mut kb = KernelBuilder::new(2);
        let (x, l) = (kb.var(VarId(0)), kb.var(VarId(1)));
        let six = kb.i64(6);
        let q = kb.binary(BinOp::Div, l, six).unwrap();
        let hi = kb.binary(BinOp::Mul, q, six).unwrap();
        let lo = kb.binary(BinOp::Rem, l, six).unwrap();
        let head = kb.binary(BinOp::Add, x, hi).unwrap();
        let sum = kb.binary(BinOp::Add, head, lo).unwrap();
        assert_eq!(*kb.get(sum), KExpr::Binary(BinOp::Add, x, l));
    }

    #[test]
    fn digits_that_do_not_meet_are_left_alone() {
        // (l / 6) · 6 + l % 4 is not l.
        let mut kb = KernelBuilder::new(1);
        let l = kb.var(VarId(0));
        let (six, four) = (kb.i64(6), kb.i64(4));
        let q = kb.binary(BinOp::Div, l, six).unwrap();
        let hi = kb.binary(BinOp::Mul, q, six).unwrap();
        let lo = kb.binary(BinOp::Rem, l, four).unwrap();
        let sum = kb.binary(BinOp::Add, hi, lo).unwrap();
        assert_ne!(sum, l);
        // Every value of l agrees with the arithmetic it stands for.
        let k = kb.finish("t".into(), vec![], vec![], vec![]);
        assert!(matches!(k.expr(sum), KExpr::Binary(BinOp::Add, ..)));
    }

    #[test]
    fn a_row_split_from_a_column_below_its_extent_loses_the_column() {
        // (r·n + j) / n = r and (r·n + j) % n = j for a coordinate j < n, n symbolic.
        let n = sym::Expr::mul(sym::Expr::int(64), sym::Expr::symbol("s"));
        let mut kb = KernelBuilder::new(2);
        let ext = [kb.i64(7), kb.size(&n)];
        kb.set_coord_extents(&ext);
        let (r, j, nn) = (kb.var(VarId(0)), kb.var(VarId(1)), ext[1]);
        let rn = kb.binary(BinOp::Mul, r, nn).unwrap();
        let lin = kb.binary(BinOp::Add, rn, j).unwrap();
        assert_eq!(kb.binary(BinOp::Div, lin, nn).unwrap(), r);
        assert_eq!(kb.binary(BinOp::Rem, lin, nn).unwrap(), j);
        // r runs below 8, but 5·j is no multiple of 8: (5·j + r) % 8 and / 8 stay.
        let (five, eight) = (kb.i64(5), kb.i64(8));
        let j5 = kb.binary(BinOp::Mul, j, five).unwrap();
        let z = kb.binary(BinOp::Add, j5, r).unwrap();
        for op in [BinOp::Rem, BinOp::Div] {
            let e = kb.binary(op, z, eight).unwrap();
            assert!(matches!(kb.get(e), KExpr::Binary(o, ..) if *o == op));
        }
        // Split by a divisor of n: the row part divides exactly (r·s), the column does not run
        // below 64, so its division stays, of the column alone.
        let sixty_four = kb.i64(64);
        let q = kb.binary(BinOp::Div, lin, sixty_four).unwrap();
        let j64 = kb.binary(BinOp::Div, j, sixty_four).unwrap();
        assert!(matches!(kb.get(j64), KExpr::Binary(BinOp::Div, ..)));
        assert!(matches!(*kb.get(q), KExpr::Binary(BinOp::Add, a, b) if a == j64 || b == j64), "{:?}", kb.get(q));
        // Coordinate 0 runs to 7: below 8, not below 6.
        let eight = kb.i64(8);
        let six = kb.i64(6);
        let r8 = kb.binary(BinOp::Mul, j, eight).unwrap();
        let x = kb.binary(BinOp::Add, r8, r).unwrap();
        assert_eq!(kb.binary(BinOp::Div, x, eight).unwrap(), j);
        let r6 = kb.binary(BinOp::Mul, j, six).unwrap();
        let y = kb.binary(BinOp::Add, r6, r).unwrap();
        let d = kb.binary(BinOp::Div, y, six).unwrap();
        // j comes out whole; r / 6 stays, of r alone.
        let r_six = kb.binary(BinOp::Div, r, six).unwrap();
        assert!(matches!(kb.get(r_six), KExpr::Binary(BinOp::Div, ..)));
        assert!(matches!(*kb.get(d), KExpr::Binary(BinOp::Add, a, b) if a == r_six || b == r_six), "{:?}", kb.get(d));
    }

    #[test]
    fn the_digit_identity_holds_for_every_sign() {
        // ((l / s) % z) · s = l % (s·z) - l % s with truncating division, as `digits` assumes.
        for l in -200i64..200 {
            for (s, z) in [(1, 3), (4, 5), (7, 2)] {
                assert_eq!(((l / s) % z) * s, l % (s * z) - l % s, "l={l} s={s} z={z}");
                assert_eq!((l / s) * s, l - l % s);
            }
        }
    }
}
