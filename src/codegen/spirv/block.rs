//! Expressions and loops inside the kernel body.
//!
//! The expression DAG is emitted on demand with memoisation per loop scope. A reduction becomes
//! a structured loop whose counter and accumulator are `OpPhi`s (no function-local variables);
//! before entering the loop every sub-expression of its body that does not depend on the loop's
//! variable is emitted in the enclosing block — so the mean inside a variance loop, or the row
//! maximum inside a softmax denominator, is computed once, not once per iteration.

use std::collections::{HashMap, HashSet};

use rspirv::dr::Operand;
use rspirv::spirv::{CLOp, LoopControl, Word};

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{BinOp, CmpOp, ExprId, KExpr, RedOp, Ty, UnOp, VarId};

/// A loop body: gets the counter and the carried values, returns the carried values' next ones.
pub(super) type LoopBody<'f, 'k> = dyn FnMut(&mut Writer<'k>, Word, &[Word]) -> Result<Vec<Word>, CodegenError> + 'f;

impl<'k> Writer<'k> {
    fn lookup(&self, e: ExprId) -> Option<Word> {
        self.scopes.iter().rev().find_map(|s| s.get(&e).copied())
    }

    pub(super) fn ty_word(&mut self, t: Ty) -> Word {
        let lt = match t {
            Ty::F32 => LocalType::F32,
            Ty::F64 => LocalType::F64,
            Ty::I64 => LocalType::I64,
            Ty::Bool => LocalType::Bool,
            Ty::U32 => LocalType::I32,
        };
        self.types.get(&mut self.b, lt)
    }

    pub(super) fn cl(&mut self, ty: Word, op: CLOp, args: &[Word]) -> Result<Word, CodegenError> {
        let operands: Vec<Operand> = args.iter().map(|a| Operand::IdRef(*a)).collect();
        Ok(self.b.ext_inst(ty, None, self.cl, op as u32, operands)?)
    }

    /// The smaller (`max` false) or larger of i64s `x` and `y`, as a compare and a select rather
    /// than OpenCL's `s_min`/`s_max`. Index arithmetic clamps with these (a blocked lane's
    /// coordinate, a tile's row), and the OpenCL CPU runtime's work-group vectorizer treats the
    /// result of the builtin call as varying across work-items even when both operands are the
    /// same for all of them: every load indexed by it became a gather. A product blocked along
    /// a static coordinate of 17 (Bridgetower's MLP, `[17, s, 256]`) ran 4.6× slower than its
    /// twin clamped by a select (docs/PERFORMANCE.md, "Issue 28: hot kernels of the corpus
    /// sample").
    pub(super) fn i64_extreme(&mut self, max: bool, x: Word, y: Word) -> Result<Word, CodegenError> {
        let (i64t, boolt) = (self.types.get(&mut self.b, LocalType::I64), self.types.get(&mut self.b, LocalType::Bool));
        let x_wins = if max { self.b.s_greater_than(boolt, None, x, y)? } else { self.b.s_less_than(boolt, None, x, y)? };
        Ok(self.b.select(i64t, None, x_wins, x, y)?)
    }

    /// The SPIR-V id holding expression `e`, emitting it (and what it needs) if not yet visible.
    pub fn emit(&mut self, e: ExprId) -> Result<Word, CodegenError> {
        if let Some(w) = self.lookup(e) {
            return Ok(w);
        }
        if let Some(w) = self.read_row_cache(e)? {
            return Ok(w);
        }
        if let Some(w) = self.read_stash(e)? {
            return Ok(w);
        }
        self.emit_operands(e)?;
        self.emit_one(e)
    }

    /// `e` read back from the output (and visible from here on) when it is the stashed
    /// summand of the current output (see `stash`).
    fn read_stash(&mut self, e: ExprId) -> Result<Option<Word>, CodegenError> {
        let (Some(st), Some(at)) = (self.stash, self.stash_at) else { return Ok(None) };
        if st.value != e {
            return Ok(None);
        }
        let w = self.load_elem(st.buf, at)?;
        self.scopes.last_mut().expect("the body scope is never popped").insert(e, w);
        Ok(Some(w))
    }

    /// `e` read from the row cache (and visible from here on) when it is a cached row vector
    /// whose array holds the current row.
    fn read_row_cache(&mut self, e: ExprId) -> Result<Option<Word>, CodegenError> {
        let Some(w) = self.cached_row_value(e)? else { return Ok(None) };
        self.scopes.last_mut().expect("the body scope is never popped").insert(e, w);
        Ok(Some(w))
    }

    /// The operands that emitting `e` emits right where `e` goes (not a loop's body, which goes
    /// inside the loop).
    fn operands(&self, e: ExprId) -> Vec<ExprId> {
        match self.k.expr(e) {
            KExpr::Load { .. } | KExpr::Unary(..) | KExpr::Binary(..) | KExpr::Cmp(..) | KExpr::Select(..) | KExpr::ToF32(_) | KExpr::Cast(..) => {
                self.k.children(e)
            }
            KExpr::LoopOut { lp, .. } => vec![*lp],
            _ => vec![],
        }
    }

    /// Emits the not yet visible operands of `e`, bottom-up from an explicit stack, so that
    /// emitting `e` finds them all: recursion stays one level deep however long the DAG's
    /// chains are. (A 3-D grid sampler rounding every step to float16 chains hundreds of
    /// operations, which overflowed a 2 MiB test thread's stack when emitted recursively.)
    fn emit_operands(&mut self, e: ExprId) -> Result<(), CodegenError> {
        // Operands pushed in reverse, so they are emitted in the order the recursion took.
        let mut stack: Vec<(ExprId, bool)> = self.operands(e).into_iter().rev().map(|c| (c, false)).collect();
        while let Some((x, ready)) = stack.pop() {
            if self.lookup(x).is_some() || self.read_row_cache(x)?.is_some() || self.read_stash(x)?.is_some() {
                continue;
            }
            if ready {
                self.emit_one(x)?;
                continue;
            }
            stack.push((x, true));
            stack.extend(self.operands(x).into_iter().rev().map(|c| (c, false)));
        }
        Ok(())
    }

    /// Emits `e` itself; its operands are emitted (or looked up) by [`Self::emit`].
    fn emit_one(&mut self, e: ExprId) -> Result<Word, CodegenError> {
        if let Some(w) = self.lookup(e) {
            return Ok(w);
        }
        let k = self.k;
        let ty = self.ty_word(k.ty(e));
        let w = match k.expr(e).clone() {
            KExpr::F32(bits) => self.types.f32(&mut self.b, f32::from_bits(bits)),
            KExpr::F64(bits) => self.types.f64(&mut self.b, f64::from_bits(bits)),
            KExpr::I64(v) => self.types.i64(&mut self.b, v),
            KExpr::Bool(v) => self.types.bool(&mut self.b, v),
            KExpr::U32(v) => self.types.u32(&mut self.b, v),
            KExpr::Param(i) => self.params[k.buffers.len() + i as usize],
            // The generator's two arguments are the entry point's last parameters.
            KExpr::Rng(arg) => self.params[self.params.len() - 2 + arg as usize],
            KExpr::Var(v) => *self.vars.get(&v).ok_or(CodegenError::UnboundVar(v.0))?,
            KExpr::Load { buf, index, mask: Some(m), other } if self.branch_loads() => {
                let o = self.masked_other(k.ty(e), other);
                self.branch_load(e, buf, (index, m), o)?
            }
            KExpr::Load { buf, index, mask, other } => {
                let mut idx = self.emit(index)?;
                let mask = mask.map(|m| self.emit(m)).transpose()?;
                if let Some(m) = mask {
                    let (i64t, zero) = (self.ty_word(Ty::I64), self.types.i64(&mut self.b, 0));
                    idx = self.b.select(i64t, None, m, idx, zero)?;
                }
                let v = self.load_elem(buf, idx)?;
                match mask {
                    Some(m) => {
                        let o = self.masked_other(k.ty(e), other);
                        self.b.select(ty, None, m, v, o)?
                    }
                    None => v,
                }
            }
            KExpr::Unary(op, a) => {
                let x = self.emit(a)?;
                match (op, k.ty(a)) {
                    (UnOp::Neg, Ty::F32 | Ty::F64) => self.b.f_negate(ty, None, x)?,
                    (UnOp::Neg, _) => self.b.s_negate(ty, None, x)?,
                    (UnOp::Not, _) => self.b.logical_not(ty, None, x)?,
                    (UnOp::Abs, Ty::I64) => self.cl(ty, CLOp::s_abs, &[x])?,
                    (UnOp::Abs, _) => self.cl(ty, CLOp::fabs, &[x])?,
                    (UnOp::Exp, _) => self.cl(ty, CLOp::exp, &[x])?,
                    (UnOp::Log, _) => self.cl(ty, CLOp::log, &[x])?,
                    (UnOp::Sqrt, _) => self.cl(ty, CLOp::sqrt, &[x])?,
                    (UnOp::Rsqrt, _) => self.cl(ty, CLOp::rsqrt, &[x])?,
                    (UnOp::Erf, Ty::F32) => self.erf_f32(x)?,
                    (UnOp::Erf, _) => self.cl(ty, CLOp::erf, &[x])?,
                    (UnOp::Tanh, _) => self.cl(ty, CLOp::tanh, &[x])?,
                    (UnOp::Floor, _) => self.cl(ty, CLOp::floor, &[x])?,
                    (UnOp::Ceil, _) => self.cl(ty, CLOp::ceil, &[x])?,
                    (UnOp::Sin, _) => self.cl(ty, CLOp::sin, &[x])?,
                    (UnOp::Cos, _) => self.cl(ty, CLOp::cos, &[x])?,
                    (UnOp::Tan, _) => self.cl(ty, CLOp::tan, &[x])?,
                    (UnOp::Asin, _) => self.cl(ty, CLOp::asin, &[x])?,
                    (UnOp::Acos, _) => self.cl(ty, CLOp::acos, &[x])?,
                    (UnOp::Atan, _) => self.cl(ty, CLOp::atan, &[x])?,
                    (UnOp::Sinh, _) => self.cl(ty, CLOp::sinh, &[x])?,
                    (UnOp::Cosh, _) => self.cl(ty, CLOp::cosh, &[x])?,
                    (UnOp::Asinh, _) => self.cl(ty, CLOp::asinh, &[x])?,
                    (UnOp::Acosh, _) => self.cl(ty, CLOp::acosh, &[x])?,
                    (UnOp::Atanh, _) => self.cl(ty, CLOp::atanh, &[x])?,
                    (UnOp::Exp2, _) => self.cl(ty, CLOp::exp2, &[x])?,
                    (UnOp::Expm1, _) => self.cl(ty, CLOp::expm1, &[x])?,
                    (UnOp::Log2, _) => self.cl(ty, CLOp::log2, &[x])?,
                    (UnOp::Log10, _) => self.cl(ty, CLOp::log10, &[x])?,
                    (UnOp::Log1p, _) => self.cl(ty, CLOp::log1p, &[x])?,
                    (UnOp::Erfc, _) => self.cl(ty, CLOp::erfc, &[x])?,
                    (UnOp::Lgamma, _) => self.cl(ty, CLOp::lgamma, &[x])?,
                    (UnOp::Trunc, _) => self.cl(ty, CLOp::trunc, &[x])?,
                    (UnOp::Rint, _) => self.cl(ty, CLOp::rint, &[x])?,
                    (UnOp::BitNot, _) => self.b.not(ty, None, x)?,
                    (UnOp::RoundF16, Ty::F32) => self.round_f16(x)?,
                    (UnOp::RoundBF16, Ty::F32) => self.round_bf16(x)?,
                    (UnOp::RoundF16 | UnOp::RoundBF16, t) => {
                        return Err(CodegenError::Unsupported(format!("{op:?} of a {t:?} value (it rounds float32)")))
                    }
                }
            }
            KExpr::Binary(op, a, c) => {
                let (x, y) = (self.emit(a)?, self.emit(c)?);
                match (k.ty(a), op) {
                    (Ty::F32 | Ty::F64, BinOp::Add) => self.b.f_add(ty, None, x, y)?,
                    (Ty::F32 | Ty::F64, BinOp::Sub) => self.b.f_sub(ty, None, x, y)?,
                    (Ty::F32 | Ty::F64, BinOp::Mul) => self.b.f_mul(ty, None, x, y)?,
                    (Ty::F32 | Ty::F64, BinOp::Div) => self.b.f_div(ty, None, x, y)?,
                    (Ty::F32 | Ty::F64, BinOp::Rem) => self.cl(ty, CLOp::fmod, &[x, y])?,
                    (Ty::F32 | Ty::F64, BinOp::Max) => self.cl(ty, CLOp::fmax, &[x, y])?,
                    (Ty::F32 | Ty::F64, BinOp::Min) => self.cl(ty, CLOp::fmin, &[x, y])?,
                    (Ty::F32 | Ty::F64, BinOp::Pow) => self.cl(ty, CLOp::pow, &[x, y])?,
                    (Ty::I64, BinOp::Add) => self.b.i_add(ty, None, x, y)?,
                    (Ty::I64, BinOp::Sub) => self.b.i_sub(ty, None, x, y)?,
                    (Ty::I64, BinOp::Mul) => self.b.i_mul(ty, None, x, y)?,
                    (Ty::I64, BinOp::Div) => self.b.s_div(ty, None, x, y)?,
                    (Ty::I64, BinOp::Rem) => self.b.s_rem(ty, None, x, y)?,
                    (Ty::I64, BinOp::Max) => self.i64_extreme(true, x, y)?,
                    (Ty::I64, BinOp::Min) => self.i64_extreme(false, x, y)?,
                    (Ty::F32 | Ty::F64, BinOp::Atan2) => self.cl(ty, CLOp::atan2, &[x, y])?,
                    (Ty::F32 | Ty::F64, BinOp::Hypot) => self.cl(ty, CLOp::hypot, &[x, y])?,
                    (Ty::F32 | Ty::F64, BinOp::CopySign) => self.cl(ty, CLOp::copysign, &[x, y])?,
                    (Ty::I64, BinOp::BitAnd) => self.b.bitwise_and(ty, None, x, y)?,
                    (Ty::I64, BinOp::BitOr) => self.b.bitwise_or(ty, None, x, y)?,
                    (Ty::I64, BinOp::BitXor) => self.b.bitwise_xor(ty, None, x, y)?,
                    (Ty::I64, BinOp::Shl) => self.b.shift_left_logical(ty, None, x, y)?,
                    (Ty::I64, BinOp::Shr) => self.b.shift_right_arithmetic(ty, None, x, y)?,
                    (Ty::F32 | Ty::F64, BinOp::NextAfter) => self.cl(ty, CLOp::nextafter, &[x, y])?,
                    (Ty::U32, BinOp::Add) => self.b.i_add(ty, None, x, y)?,
                    (Ty::U32, BinOp::Sub) => self.b.i_sub(ty, None, x, y)?,
                    (Ty::U32, BinOp::Mul) => self.b.i_mul(ty, None, x, y)?,
                    (Ty::U32, BinOp::MulHi) => self.cl(ty, CLOp::u_mul_hi, &[x, y])?,
                    (Ty::U32, BinOp::Div) => self.b.u_div(ty, None, x, y)?,
                    (Ty::U32, BinOp::Rem) => self.b.u_mod(ty, None, x, y)?,
                    (Ty::U32, BinOp::Max) => self.cl(ty, CLOp::u_max, &[x, y])?,
                    (Ty::U32, BinOp::Min) => self.cl(ty, CLOp::u_min, &[x, y])?,
                    (Ty::U32, BinOp::BitAnd) => self.b.bitwise_and(ty, None, x, y)?,
                    (Ty::U32, BinOp::BitOr) => self.b.bitwise_or(ty, None, x, y)?,
                    (Ty::U32, BinOp::BitXor) => self.b.bitwise_xor(ty, None, x, y)?,
                    (Ty::U32, BinOp::Shl) => self.b.shift_left_logical(ty, None, x, y)?,
                    (Ty::U32, BinOp::Shr) => self.b.shift_right_logical(ty, None, x, y)?,
                    (Ty::Bool, BinOp::BitAnd) => self.b.logical_and(ty, None, x, y)?,
                    (Ty::Bool, BinOp::BitOr) => self.b.logical_or(ty, None, x, y)?,
                    (Ty::Bool, BinOp::BitXor) => self.b.logical_not_equal(ty, None, x, y)?,
                    (Ty::Bool, BinOp::And) => self.b.logical_and(ty, None, x, y)?,
                    (Ty::Bool, BinOp::Or) => self.b.logical_or(ty, None, x, y)?,
                    (t, op) => return Err(CodegenError::Unsupported(format!("{op:?} on {t:?}"))),
                }
            }
            KExpr::Cmp(op, a, c) => {
                let (x, y) = (self.emit(a)?, self.emit(c)?);
                match (op, k.ty(a)) {
                    (CmpOp::Lt, Ty::F32 | Ty::F64) => self.b.f_ord_less_than(ty, None, x, y)?,
                    (CmpOp::Le, Ty::F32 | Ty::F64) => self.b.f_ord_less_than_equal(ty, None, x, y)?,
                    (CmpOp::Gt, Ty::F32 | Ty::F64) => self.b.f_ord_greater_than(ty, None, x, y)?,
                    (CmpOp::Ge, Ty::F32 | Ty::F64) => self.b.f_ord_greater_than_equal(ty, None, x, y)?,
                    (CmpOp::Eq, Ty::F32 | Ty::F64) => self.b.f_ord_equal(ty, None, x, y)?,
                    (CmpOp::Ne, Ty::F32 | Ty::F64) => self.b.f_unord_not_equal(ty, None, x, y)?,
                    (CmpOp::Lt, Ty::U32) => self.b.u_less_than(ty, None, x, y)?,
                    (CmpOp::Le, Ty::U32) => self.b.u_less_than_equal(ty, None, x, y)?,
                    (CmpOp::Gt, Ty::U32) => self.b.u_greater_than(ty, None, x, y)?,
                    (CmpOp::Ge, Ty::U32) => self.b.u_greater_than_equal(ty, None, x, y)?,
                    (CmpOp::Lt, _) => self.b.s_less_than(ty, None, x, y)?,
                    (CmpOp::Le, _) => self.b.s_less_than_equal(ty, None, x, y)?,
                    (CmpOp::Gt, _) => self.b.s_greater_than(ty, None, x, y)?,
                    (CmpOp::Ge, _) => self.b.s_greater_than_equal(ty, None, x, y)?,
                    (CmpOp::Eq, _) => self.b.i_equal(ty, None, x, y)?,
                    (CmpOp::Ne, _) => self.b.i_not_equal(ty, None, x, y)?,
                }
            }
            KExpr::Select(c, a, d) => {
                let (c, x, y) = (self.emit(c)?, self.emit(a)?, self.emit(d)?);
                self.b.select(ty, None, c, x, y)?
            }
            KExpr::MulAdd(a, b, c) => {
                let (x, y, z) = (self.emit(a)?, self.emit(b)?, self.emit(c)?);
                self.cl(ty, CLOp::fma, &[x, y, z])?
            }
            KExpr::ToF32(a) => {
                let x = self.emit(a)?;
                self.b.convert_s_to_f(ty, None, x)?
            }
            KExpr::Cast(a, to) => {
                let x = self.emit(a)?;
                self.cast(x, k.ty(a), to)?
            }
            KExpr::Bits(a) => {
                let x = self.emit(a)?;
                self.b.bitcast(ty, None, x)?
            }
            KExpr::Reduce { op, var, extent, body } => self.reduce(op, var.0, extent, body)?,
            KExpr::Carried { var, slot } => *self.carried.get(&(var, slot)).ok_or(CodegenError::UnboundVar(var.0))?,
            KExpr::Loop { var, extent, init, next } => {
                let outs = self.state_loop(var, extent, &init, &next)?;
                let first = outs[0];
                self.loop_outs.insert(e, outs);
                first
            }
            KExpr::LoopOut { lp, slot } => {
                self.emit(lp)?;
                *self.loop_outs.get(&lp).and_then(|o| o.get(slot as usize)).ok_or(CodegenError::UnboundVar(slot))?
            }
        };
        self.scopes.last_mut().expect("the body scope is never popped").insert(e, w);
        Ok(w)
    }

    /// Emits every maximal sub-expression of `e` whose free variables are all bound now.
    /// (An explicit stack, like [`Self::emit`]'s, for the same long chains.)
    pub(super) fn hoist(&mut self, e: ExprId, seen: &mut HashSet<ExprId>) -> Result<(), CodegenError> {
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) || self.lookup(x).is_some() {
                continue;
            }
            if self.free[x.0 as usize] & !self.bound == 0 {
                // Constants need no hoisting, and a load with no loop dependence is cheap enough
                // either way; everything else is worth computing once.
                if !matches!(self.k.expr(x), KExpr::F32(_) | KExpr::I64(_) | KExpr::Bool(_) | KExpr::U32(_) | KExpr::Param(_) | KExpr::Rng(_)) {
                    self.emit(x)?;
                }
                continue;
            }
            // Reversed, so children are visited in the order the recursive walk took.
            stack.extend(self.k.children(x).into_iter().rev());
        }
        Ok(())
    }

    fn reduce(&mut self, op: RedOp, var: u32, extent: ExprId, body: ExprId) -> Result<Word, CodegenError> {
        let n = self.emit(extent)?;
        self.hoist(body, &mut HashSet::new())?;
        if self.uniform && self.coop.is_some() {
            return self.coop_reduce(op, var, n, body);
        }
        let (zero, one) = (self.types.i64(&mut self.b, 0), self.types.i64(&mut self.b, 1));
        let uniform = std::mem::replace(&mut self.uniform, false);
        let r = self.fold(op, var, zero, one, n, body);
        self.uniform = uniform;
        r
    }

    /// A `KExpr::Loop`: its slots become the carried values of a counted loop.
    fn state_loop(&mut self, var: VarId, extent: ExprId, init: &[ExprId], next: &[ExprId]) -> Result<Vec<Word>, CodegenError> {
        let n = self.emit(extent)?;
        let mut carried = Vec::with_capacity(init.len());
        for &i in init {
            let w = self.emit(i)?;
            carried.push((self.ty_word(self.k.ty(i)), w));
        }
        let mut seen = HashSet::new();
        for &x in next {
            self.hoist(x, &mut seen)?;
        }
        let (zero, one) = (self.types.i64(&mut self.b, 0), self.types.i64(&mut self.b, 1));
        let uniform = std::mem::replace(&mut self.uniform, false);
        let r = self.counted_loop(zero, n, one, &carried, &mut |w, i, slots| {
            w.vars.insert(var, i);
            for (k, s) in slots.iter().enumerate() {
                w.carried.insert((var, k as u32), *s);
            }
            w.bound |= 1u128 << var.0;
            let r = next.iter().map(|x| w.emit(*x)).collect::<Result<Vec<_>, _>>();
            w.bound &= !(1u128 << var.0);
            r
        });
        self.uniform = uniform;
        r
    }

    /// `op` folded over `body` for `var = start, start + step, … < end`, from `op`'s identity.
    pub(super) fn fold(&mut self, op: RedOp, var: u32, start: Word, step: Word, end: Word, body: ExprId) -> Result<Word, CodegenError> {
        let body_ty = self.k.ty(body);
        let f32t = self.ty_word(body_ty);
        let init = self.identity(op, body_ty);
        let out = self.counted_loop(start, end, step, &[(f32t, init)], &mut |w, i, acc| {
            let v = w.fold_element(var, i, body)?;
            Ok(vec![w.combine_ty(op, acc[0], v, body_ty)?])
        })?;
        Ok(out[0])
    }

    /// The constant `op` folds from, in type `body_ty`.
    pub(super) fn identity(&mut self, op: RedOp, body_ty: Ty) -> Word {
        let init = match op {
            RedOp::Sum | RedOp::Xor => 0.0,
            RedOp::Prod => 1.0,
            RedOp::Max => f64::NEG_INFINITY,
            RedOp::Min => f64::INFINITY,
        };
        match body_ty {
            Ty::F64 => self.types.f64(&mut self.b, init),
            Ty::I64 => {
                let i = match op {
                    RedOp::Max => i64::MIN,
                    RedOp::Min => i64::MAX,
                    _ => init as i64,
                };
                self.types.i64(&mut self.b, i)
            }
            _ => self.types.f32(&mut self.b, init as f32),
        }
    }

    /// A fold's `body` at index `i` of its variable; where the row schedule stashes this fold's
    /// summands (`stash`), the value is also stored to its output element.
    pub(super) fn fold_element(&mut self, var: u32, i: Word, body: ExprId) -> Result<Word, CodegenError> {
        self.vars.insert(VarId(var), i);
        self.bound |= 1u128 << var;
        let v = self.emit(body);
        self.bound &= !(1u128 << var);
        let v = v?;
        if let (Some(st), Some(base)) = (self.stash, self.stash_base) {
            if st.body == body && st.var == VarId(var) {
                let i64t = self.ty_word(Ty::I64);
                let at = self.b.i_add(i64t, None, base, i)?;
                self.store_elem(st.buf, at, v)?;
                self.stash_written = true;
            }
        }
        Ok(v)
    }

    pub(super) fn combine_ty(&mut self, op: RedOp, acc: Word, v: Word, ty: Ty) -> Result<Word, CodegenError> {
        let f32t = self.ty_word(ty);
        Ok(match (op, ty) {
            (RedOp::Sum, Ty::I64) => self.b.i_add(f32t, None, acc, v)?,
            (RedOp::Prod, Ty::I64) => self.b.i_mul(f32t, None, acc, v)?,
            (RedOp::Max, Ty::I64) => self.cl(f32t, CLOp::s_max, &[acc, v])?,
            (RedOp::Min, Ty::I64) => self.cl(f32t, CLOp::s_min, &[acc, v])?,
            (RedOp::Xor, Ty::I64) => self.b.bitwise_xor(f32t, None, acc, v)?,
            (RedOp::Xor, t) => return Err(CodegenError::Unsupported(format!("exclusive or of {t:?}"))),
            (RedOp::Sum, _) => self.b.f_add(f32t, None, acc, v)?,
            (RedOp::Prod, _) => self.b.f_mul(f32t, None, acc, v)?,
            (RedOp::Max, _) => self.cl(f32t, CLOp::fmax, &[acc, v])?,
            (RedOp::Min, _) => self.cl(f32t, CLOp::fmin, &[acc, v])?,
        })
    }

    /// A structured loop `for i = start; i < end; i += step` carrying `carried` values (type,
    /// initial value) through `OpPhi`s; `body` gets the counter and the carried values and
    /// returns their next values. Returns the carried values at exit. The body runs in its own
    /// scope, so nothing it emits is visible after the loop (it would not dominate the exit).
    pub(super) fn counted_loop(
        &mut self,
        start: Word,
        end: Word,
        step: Word,
        carried: &[(Word, Word)],
        body: &mut LoopBody<'_, 'k>,
    ) -> Result<Vec<Word>, CodegenError> {
        let (i64t, boolt) = (self.ty_word(Ty::I64), self.ty_word(Ty::Bool));
        let pre = self.label;
        let (header, body_label, cont, merge) = (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        let i_next = self.b.id();
        let next: Vec<Word> = carried.iter().map(|_| self.b.id()).collect();
        self.b.branch(header)?;

        self.b.begin_block(Some(header))?;
        let i = self.b.phi(i64t, None, [(start, pre), (i_next, cont)])?;
        let mut phis = Vec::with_capacity(carried.len());
        for ((ty, init), n) in carried.iter().zip(&next) {
            phis.push(self.b.phi(*ty, None, [(*init, pre), (*n, cont)])?);
        }
        let more = self.b.s_less_than(boolt, None, i, end)?;
        self.b.loop_merge(merge, cont, LoopControl::NONE, [])?;
        self.b.branch_conditional(more, body_label, merge, [])?;

        self.label = self.b.begin_block(Some(body_label))?;
        self.scopes.push(HashMap::new());
        let values = body(self, i, &phis);
        self.scopes.pop();
        let values = values?;
        self.b.branch(cont)?;

        self.label = self.b.begin_block(Some(cont))?;
        // The phis name their back-edge values up front; copies give the body's results those ids.
        for ((ty, _), (n, v)) in carried.iter().zip(next.iter().zip(values)) {
            self.b.copy_object(*ty, Some(*n), v)?;
        }
        self.b.i_add(i64t, Some(i_next), i, step)?;
        self.b.branch(header)?;

        self.label = self.b.begin_block(Some(merge))?;
        Ok(phis)
    }
}
