//! Expressions and loops inside the kernel body.
//!
//! The expression DAG is emitted on demand with memoisation per loop scope. A reduction becomes
//! a structured loop whose counter and accumulator are `OpPhi`s (no function-local variables);
//! before entering the loop every sub-expression of its body that does not depend on the loop's
//! variable is emitted in the enclosing block — so the mean inside a variance loop, or the row
//! maximum inside a softmax denominator, is computed once, not once per iteration.

use std::collections::{HashMap, HashSet};

use rspirv::dr::Operand;
use rspirv::spirv::{self, CLOp, LoopControl, Word};

use super::types::LocalType;
use super::writer::Writer;
use super::CodegenError;
use crate::lower::kernel::{BinOp, CmpOp, ExprId, KExpr, RedOp, Ty, UnOp};

impl<'k> Writer<'k> {
    fn lookup(&self, e: ExprId) -> Option<Word> {
        self.scopes.iter().rev().find_map(|s| s.get(&e).copied())
    }

    fn ty_word(&mut self, t: Ty) -> Word {
        let lt = match t {
            Ty::F32 => LocalType::F32,
            Ty::I64 => LocalType::I64,
            Ty::Bool => LocalType::Bool,
        };
        self.types.get(&mut self.b, lt)
    }

    fn cl(&mut self, ty: Word, op: CLOp, args: &[Word]) -> Result<Word, CodegenError> {
        let operands: Vec<Operand> = args.iter().map(|a| Operand::IdRef(*a)).collect();
        Ok(self.b.ext_inst(ty, None, self.cl, op as u32, operands)?)
    }

    /// The SPIR-V id holding expression `e`, emitting it (and what it needs) if not yet visible.
    pub fn emit(&mut self, e: ExprId) -> Result<Word, CodegenError> {
        if let Some(w) = self.lookup(e) {
            return Ok(w);
        }
        let k = self.k;
        let ty = self.ty_word(k.ty(e));
        let w = match k.expr(e).clone() {
            KExpr::F32(bits) => self.types.f32(&mut self.b, f32::from_bits(bits)),
            KExpr::I64(v) => self.types.i64(&mut self.b, v),
            KExpr::Bool(v) => self.types.bool(&mut self.b, v),
            KExpr::Param(i) => self.params[k.buffers.len() + i as usize],
            KExpr::Var(v) => *self.vars.get(&v).ok_or(CodegenError::UnboundVar(v.0))?,
            KExpr::Load { buf, index, mask, other } => {
                let mut idx = self.emit(index)?;
                let mask = mask.map(|m| self.emit(m)).transpose()?;
                if let Some(m) = mask {
                    let (i64t, zero) = (self.ty_word(Ty::I64), self.types.i64(&mut self.b, 0));
                    idx = self.b.select(i64t, None, m, idx, zero)?;
                }
                let gptr = self.types.get(&mut self.b, LocalType::GlobalF32);
                let ptr = self.b.in_bounds_ptr_access_chain(gptr, None, self.params[buf as usize], idx, [])?;
                let v = self.b.load(ty, None, ptr, Some(spirv::MemoryAccess::ALIGNED), [Operand::LiteralBit32(4)])?;
                match mask {
                    Some(m) => {
                        let o = self.types.f32(&mut self.b, f32::from_bits(other));
                        self.b.select(ty, None, m, v, o)?
                    }
                    None => v,
                }
            }
            KExpr::Unary(op, a) => {
                let x = self.emit(a)?;
                match (op, k.ty(a)) {
                    (UnOp::Neg, Ty::F32) => self.b.f_negate(ty, None, x)?,
                    (UnOp::Neg, _) => self.b.s_negate(ty, None, x)?,
                    (UnOp::Not, _) => self.b.logical_not(ty, None, x)?,
                    (UnOp::Abs, Ty::I64) => self.cl(ty, CLOp::s_abs, &[x])?,
                    (UnOp::Abs, _) => self.cl(ty, CLOp::fabs, &[x])?,
                    (UnOp::Exp, _) => self.cl(ty, CLOp::exp, &[x])?,
                    (UnOp::Log, _) => self.cl(ty, CLOp::log, &[x])?,
                    (UnOp::Sqrt, _) => self.cl(ty, CLOp::sqrt, &[x])?,
                    (UnOp::Rsqrt, _) => self.cl(ty, CLOp::rsqrt, &[x])?,
                    (UnOp::Erf, _) => self.cl(ty, CLOp::erf, &[x])?,
                    (UnOp::Tanh, _) => self.cl(ty, CLOp::tanh, &[x])?,
                    (UnOp::Floor, _) => self.cl(ty, CLOp::floor, &[x])?,
                    (UnOp::Ceil, _) => self.cl(ty, CLOp::ceil, &[x])?,
                }
            }
            KExpr::Binary(op, a, c) => {
                let (x, y) = (self.emit(a)?, self.emit(c)?);
                match (k.ty(a), op) {
                    (Ty::F32, BinOp::Add) => self.b.f_add(ty, None, x, y)?,
                    (Ty::F32, BinOp::Sub) => self.b.f_sub(ty, None, x, y)?,
                    (Ty::F32, BinOp::Mul) => self.b.f_mul(ty, None, x, y)?,
                    (Ty::F32, BinOp::Div) => self.b.f_div(ty, None, x, y)?,
                    (Ty::F32, BinOp::Rem) => self.cl(ty, CLOp::fmod, &[x, y])?,
                    (Ty::F32, BinOp::Max) => self.cl(ty, CLOp::fmax, &[x, y])?,
                    (Ty::F32, BinOp::Min) => self.cl(ty, CLOp::fmin, &[x, y])?,
                    (Ty::F32, BinOp::Pow) => self.cl(ty, CLOp::pow, &[x, y])?,
                    (Ty::I64, BinOp::Add) => self.b.i_add(ty, None, x, y)?,
                    (Ty::I64, BinOp::Sub) => self.b.i_sub(ty, None, x, y)?,
                    (Ty::I64, BinOp::Mul) => self.b.i_mul(ty, None, x, y)?,
                    (Ty::I64, BinOp::Div) => self.b.s_div(ty, None, x, y)?,
                    (Ty::I64, BinOp::Rem) => self.b.s_rem(ty, None, x, y)?,
                    (Ty::I64, BinOp::Max) => self.cl(ty, CLOp::s_max, &[x, y])?,
                    (Ty::I64, BinOp::Min) => self.cl(ty, CLOp::s_min, &[x, y])?,
                    (Ty::Bool, BinOp::And) => self.b.logical_and(ty, None, x, y)?,
                    (Ty::Bool, BinOp::Or) => self.b.logical_or(ty, None, x, y)?,
                    (t, op) => return Err(CodegenError::Unsupported(format!("{op:?} on {t:?}"))),
                }
            }
            KExpr::Cmp(op, a, c) => {
                let (x, y) = (self.emit(a)?, self.emit(c)?);
                let f = k.ty(a) == Ty::F32;
                match (op, f) {
                    (CmpOp::Lt, true) => self.b.f_ord_less_than(ty, None, x, y)?,
                    (CmpOp::Le, true) => self.b.f_ord_less_than_equal(ty, None, x, y)?,
                    (CmpOp::Gt, true) => self.b.f_ord_greater_than(ty, None, x, y)?,
                    (CmpOp::Ge, true) => self.b.f_ord_greater_than_equal(ty, None, x, y)?,
                    (CmpOp::Eq, true) => self.b.f_ord_equal(ty, None, x, y)?,
                    (CmpOp::Ne, true) => self.b.f_unord_not_equal(ty, None, x, y)?,
                    (CmpOp::Lt, false) => self.b.s_less_than(ty, None, x, y)?,
                    (CmpOp::Le, false) => self.b.s_less_than_equal(ty, None, x, y)?,
                    (CmpOp::Gt, false) => self.b.s_greater_than(ty, None, x, y)?,
                    (CmpOp::Ge, false) => self.b.s_greater_than_equal(ty, None, x, y)?,
                    (CmpOp::Eq, false) => self.b.i_equal(ty, None, x, y)?,
                    (CmpOp::Ne, false) => self.b.i_not_equal(ty, None, x, y)?,
                }
            }
            KExpr::Select(c, a, d) => {
                let (c, x, y) = (self.emit(c)?, self.emit(a)?, self.emit(d)?);
                self.b.select(ty, None, c, x, y)?
            }
            KExpr::ToF32(a) => {
                let x = self.emit(a)?;
                self.b.convert_s_to_f(ty, None, x)?
            }
            KExpr::Reduce { op, var, extent, body } => self.reduce(op, var.0, extent, body)?,
        };
        self.scopes.last_mut().expect("the body scope is never popped").insert(e, w);
        Ok(w)
    }

    /// Emits every maximal sub-expression of `e` whose free variables are all bound now.
    fn hoist(&mut self, e: ExprId, seen: &mut HashSet<ExprId>) -> Result<(), CodegenError> {
        if !seen.insert(e) || self.lookup(e).is_some() {
            return Ok(());
        }
        if self.free[e.0 as usize] & !self.bound == 0 {
            // Constants need no hoisting, and a load with no loop dependence is cheap enough
            // either way; everything else is worth computing once.
            if !matches!(self.k.expr(e), KExpr::F32(_) | KExpr::I64(_) | KExpr::Bool(_) | KExpr::Param(_)) {
                self.emit(e)?;
            }
            return Ok(());
        }
        for c in self.k.children(e) {
            self.hoist(c, seen)?;
        }
        Ok(())
    }

    fn reduce(&mut self, op: RedOp, var: u32, extent: ExprId, body: ExprId) -> Result<Word, CodegenError> {
        let n = self.emit(extent)?;
        self.hoist(body, &mut HashSet::new())?;
        let (i64t, f32t, boolt) = (self.ty_word(Ty::I64), self.ty_word(Ty::F32), self.ty_word(Ty::Bool));
        let init = match op {
            RedOp::Sum => 0.0,
            RedOp::Max => f32::NEG_INFINITY,
            RedOp::Min => f32::INFINITY,
        };
        let init = self.types.f32(&mut self.b, init);
        let zero = self.types.i64(&mut self.b, 0);
        let one = self.types.i64(&mut self.b, 1);
        let pre = self.label;
        let (header, body_label, cont, merge) = (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        let (i_next, acc_next) = (self.b.id(), self.b.id());
        self.b.branch(header)?;

        self.b.begin_block(Some(header))?;
        let i = self.b.phi(i64t, None, [(zero, pre), (i_next, cont)])?;
        let acc = self.b.phi(f32t, None, [(init, pre), (acc_next, cont)])?;
        let more = self.b.s_less_than(boolt, None, i, n)?;
        self.b.loop_merge(merge, cont, LoopControl::NONE, [])?;
        self.b.branch_conditional(more, body_label, merge, [])?;

        self.label = self.b.begin_block(Some(body_label))?;
        self.scopes.push(HashMap::new());
        self.vars.insert(crate::lower::kernel::VarId(var), i);
        self.bound |= 1u128 << var;
        let v = self.emit(body)?;
        match op {
            RedOp::Sum => self.b.f_add(f32t, Some(acc_next), acc, v)?,
            RedOp::Max => self.b.ext_inst(f32t, Some(acc_next), self.cl, CLOp::fmax as u32, [Operand::IdRef(acc), Operand::IdRef(v)])?,
            RedOp::Min => self.b.ext_inst(f32t, Some(acc_next), self.cl, CLOp::fmin as u32, [Operand::IdRef(acc), Operand::IdRef(v)])?,
        };
        self.b.branch(cont)?;
        self.scopes.pop();
        self.bound &= !(1u128 << var);

        self.b.begin_block(Some(cont))?;
        self.b.i_add(i64t, Some(i_next), i, one)?;
        self.b.branch(header)?;

        self.label = self.b.begin_block(Some(merge))?;
        Ok(acc)
    }
}
