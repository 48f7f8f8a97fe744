//! [`KernelBuilder`]: the kernel's hash-consing arena, its argument tables and the typed
//! constructors every lowering builds expressions with. Each constructor checks its operands'
//! types and asks `fold` for a simpler equivalent before interning a new node.

use std::collections::HashMap;

use crate::lower::schedule::Schedule;
use super::{Access, BinOp, BufferParam, CmpOp, Elem, ExprId, KExpr, Kernel, KernelError, RedOp, RngArg, Store, Ty, UnOp, VarId};
use crate::sym;

/// Builds a [`Kernel`]: hash-consing arena, argument tables, constant folding of trivial cases.
pub struct KernelBuilder {
    pub(super) exprs: Vec<KExpr>,
    pub(super) types: Vec<Ty>,
    pub(super) dedup: HashMap<KExpr, ExprId>,
    pub(super) params: Vec<sym::Expr>,
    param_ids: HashMap<sym::Expr, u32>,
    pub(super) buffers: Vec<BufferParam>,
    buffer_ids: HashMap<(String, bool), u32>,
    pub(super) vars: u32,
    /// Extents of the loop variables known so far (the output coordinates when the caller gave
    /// them; every fold's when the kernel is finished): `(m + r) / n` folds to `m / n` when `m`
    /// is a multiple of `n` and `r` is known to run below `n` (see `index`).
    pub(super) var_extents: HashMap<VarId, sym::Expr>,
    /// The linear output index whose digits are the coordinates ([`Kernel::linearize`]).
    pub(super) linear: Option<VarId>,
}

impl KernelBuilder {
    /// A builder whose first `rank` variables are the output coordinates.
    pub fn new(rank: usize) -> KernelBuilder {
        KernelBuilder {
            exprs: Vec::new(),
            types: Vec::new(),
            dedup: HashMap::new(),
            params: Vec::new(),
            param_ids: HashMap::new(),
            buffers: Vec::new(),
            buffer_ids: HashMap::new(),
            vars: rank as u32,
            var_extents: HashMap::new(),
            linear: None,
        }
    }

    /// A builder holding `k`'s arena, arguments and variables, with the output coordinates'
    /// extents known: to rebuild `k` into another kernel ([`Self::rebuild_with`]).
    pub fn reopen(k: &Kernel) -> KernelBuilder {
        let mut kb = KernelBuilder::new(0);
        kb.exprs = k.exprs.clone();
        kb.types = k.types.clone();
        // Interned again, so a node built anew that `k` already has is the same id.
        kb.dedup = k.exprs.iter().enumerate().map(|(i, e)| (e.clone(), ExprId(i as u32))).collect();
        kb.param_ids = k.params.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
        kb.params = k.params.clone();
        kb.buffer_ids = k.buffers.iter().enumerate().map(|(i, b)| ((b.value.clone(), b.access == Access::Write), i as u32)).collect();
        kb.buffers = k.buffers.clone();
        kb.vars = k.vars;
        kb.linear = k.linear;
        for (d, s) in k.domain_sizes.iter().enumerate() {
            kb.set_var_extent(VarId(d as u32), s.clone());
        }
        kb
    }

    /// Declares the extents of the output coordinates (the kernel's domain), so index
    /// arithmetic can use that `Var(i) < extent[i]`.
    pub fn set_coord_extents(&mut self, extents: &[ExprId]) {
        for (i, e) in extents.iter().enumerate() {
            if let Some(s) = self.sym_size(*e) {
                self.set_var_extent(VarId(i as u32), s);
            }
        }
    }

    pub fn ty(&self, id: ExprId) -> Ty {
        self.types[id.0 as usize]
    }

    pub fn get(&self, id: ExprId) -> &KExpr {
        &self.exprs[id.0 as usize]
    }

    pub(super) fn intern(&mut self, e: KExpr, ty: Ty) -> ExprId {
        if let Some(id) = self.dedup.get(&e) {
            return *id;
        }
        let id = ExprId(self.exprs.len() as u32);
        self.exprs.push(e.clone());
        self.types.push(ty);
        self.dedup.insert(e, id);
        id
    }

    pub fn f32(&mut self, v: f32) -> ExprId {
        self.intern(KExpr::F32(v.to_bits()), Ty::F32)
    }

    pub fn f64(&mut self, v: f64) -> ExprId {
        self.intern(KExpr::F64(v.to_bits()), Ty::F64)
    }

    /// A float constant of the type of `like` (f32 unless `like` is f64).
    pub fn float_like(&mut self, v: f64, like: ExprId) -> ExprId {
        if self.ty(like) == Ty::F64 {
            self.f64(v)
        } else {
            self.f32(v as f32)
        }
    }

    /// Lowerings build float constants as f32; next to an f64 operand they widen to f64.
    pub(super) fn unify(&mut self, a: ExprId, b: ExprId) -> (ExprId, ExprId) {
        match (self.ty(a), self.ty(b)) {
            (Ty::F64, Ty::F32) => (a, self.cast(b, Ty::F64)),
            (Ty::F32, Ty::F64) => (self.cast(a, Ty::F64), b),
            _ => (a, b),
        }
    }

    pub fn i64(&mut self, v: i64) -> ExprId {
        self.intern(KExpr::I64(v), Ty::I64)
    }

    pub fn bool(&mut self, v: bool) -> ExprId {
        self.intern(KExpr::Bool(v), Ty::Bool)
    }

    pub fn u32(&mut self, v: u32) -> ExprId {
        self.intern(KExpr::U32(v), Ty::U32)
    }

    /// The generator's seed or offset (an i64 kernel argument).
    pub fn rng(&mut self, arg: RngArg) -> ExprId {
        self.intern(KExpr::Rng(arg), Ty::I64)
    }

    pub fn var(&mut self, v: VarId) -> ExprId {
        self.intern(KExpr::Var(v), Ty::I64)
    }

    /// A fresh reduction variable.
    pub fn fresh_var(&mut self) -> Result<VarId, KernelError> {
        if self.vars >= 128 {
            return Err(KernelError::TooManyVars);
        }
        self.vars += 1;
        Ok(VarId(self.vars - 1))
    }

    /// A symbolic integer: a constant when it has no symbols, else an i64 kernel argument.
    pub fn size(&mut self, e: &sym::Expr) -> ExprId {
        let e = e.simplify();
        if let Some(i) = e.as_int() {
            return self.i64(i);
        }
        let next = self.params.len() as u32;
        let idx = *self.param_ids.entry(e.clone()).or_insert(next);
        if idx == next {
            self.params.push(e);
        }
        self.intern(KExpr::Param(idx), Ty::I64)
    }

    /// The float32 buffer argument holding graph value `value` (one per value and access).
    pub fn buffer(&mut self, value: &str, access: Access) -> u32 {
        self.buffer_of(value, access, Elem::F32)
    }

    /// The buffer argument holding graph value `value`, stored as `elem`.
    pub fn buffer_of(&mut self, value: &str, access: Access, elem: Elem) -> u32 {
        let key = (value.to_string(), access == Access::Write);
        let next = self.buffers.len() as u32;
        let idx = *self.buffer_ids.entry(key).or_insert(next);
        if idx == next {
            self.buffers.push(BufferParam { value: value.to_string(), access, elem, layout: Default::default() });
        }
        idx
    }

    fn load_ty(&self, buf: u32) -> Ty {
        self.buffers.get(buf as usize).map_or(Ty::F32, |b| b.elem.ty())
    }

    pub fn load(&mut self, buf: u32, index: ExprId) -> ExprId {
        let ty = self.load_ty(buf);
        self.intern(KExpr::Load { buf, index, mask: None, other: 0 }, ty)
    }

    /// `other` is given as a float; integer and bool loads take it converted.
    pub fn load_masked(&mut self, buf: u32, index: ExprId, mask: ExprId, other: f32) -> ExprId {
        if let KExpr::Bool(true) = self.get(mask) {
            return self.load(buf, index);
        }
        let ty = self.load_ty(buf);
        self.intern(KExpr::Load { buf, index, mask: Some(mask), other: other.to_bits() }, ty)
    }

    /// `a` converted to compute type `ty` (constants fold).
    pub fn cast(&mut self, a: ExprId, ty: Ty) -> ExprId {
        let from = self.ty(a);
        if from == ty {
            return a;
        }
        if let Some(folded) = self.fold_cast(a, ty) {
            return folded;
        }
        if from == Ty::I64 && ty == Ty::F32 {
            return self.to_f32(a);
        }
        self.intern(KExpr::Cast(a, ty), ty)
    }

    /// The bit pattern of f64 `a` as an i64.
    pub fn bits(&mut self, a: ExprId) -> Result<ExprId, KernelError> {
        match (self.get(a).clone(), self.ty(a)) {
            (KExpr::F64(b), _) => Ok(self.i64(b as i64)),
            (_, Ty::F64) => Ok(self.intern(KExpr::Bits(a), Ty::I64)),
            (_, t) => Err(KernelError::Type(format!("bit pattern of {t:?}: only f64 is reinterpreted"))),
        }
    }

    pub fn unary(&mut self, op: UnOp, a: ExprId) -> ExprId {
        let ty = self.ty(a);
        self.intern(KExpr::Unary(op, a), ty)
    }

    /// `a` rounded to what a buffer of `elem` stores, widened back to f32: the 16-bit floats
    /// round (constants fold); every other storage holds an f32 value as it is.
    pub fn round_to(&mut self, a: ExprId, elem: Elem) -> ExprId {
        use crate::exec::tensor::{BF16, F16};
        if self.ty(a) != Ty::F32 {
            return a;
        }
        let (op, fold): (UnOp, fn(f64) -> f64) = match elem {
            Elem::F16 => (UnOp::RoundF16, |v| F16::from_f64(v).to_f64()),
            Elem::BF16 => (UnOp::RoundBF16, |v| BF16::from_f64(v).to_f64()),
            _ => return a,
        };
        if let KExpr::F32(b) = self.get(a) {
            let v = fold(f32::from_bits(*b) as f64);
            return self.f32(v as f32);
        }
        self.unary(op, a)
    }

    pub fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
        let (a, b) = self.unify(a, b);
        let (ta, tb) = (self.ty(a), self.ty(b));
        if ta != tb {
            return Err(KernelError::Type(format!("{op:?} of {ta:?} and {tb:?}")));
        }
        if !op.takes(ta) {
            return Err(KernelError::Type(format!("{op:?} of {ta:?}")));
        }
        if ta == Ty::I64 {
            if let Some(folded) = self.fold_i64(op, a, b)? {
                return Ok(folded);
            }
        }
        Ok(self.intern(KExpr::Binary(op, a, b), ta))
    }

    pub fn cmp(&mut self, op: CmpOp, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
        let (a, b) = self.unify(a, b);
        let (ta, tb) = (self.ty(a), self.ty(b));
        if ta != tb || ta == Ty::Bool {
            return Err(KernelError::Type(format!("{op:?} of {ta:?} and {tb:?}")));
        }
        if let (Some(x), Some(y)) = (self.const_i64(a), self.const_i64(b)) {
            let v = match op {
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
            };
            return Ok(self.bool(v));
        }
        Ok(self.intern(KExpr::Cmp(op, a, b), Ty::Bool))
    }

    pub fn select(&mut self, c: ExprId, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
        let (a, b) = self.unify(a, b);
        if self.ty(c) != Ty::Bool || self.ty(a) != self.ty(b) {
            return Err(KernelError::Type("select needs a bool condition and equal branch types".into()));
        }
        match self.get(c) {
            KExpr::Bool(true) => return Ok(a),
            KExpr::Bool(false) => return Ok(b),
            _ => {}
        }
        let ty = self.ty(a);
        Ok(self.intern(KExpr::Select(c, a, b), ty))
    }

    /// `a · b + c` with one rounding, on floats of one type.
    pub fn mul_add(&mut self, a: ExprId, b: ExprId, c: ExprId) -> Result<ExprId, KernelError> {
        let (a, b) = self.unify(a, b);
        let (a, c) = self.unify(a, c);
        let (a, b) = self.unify(a, b);
        let ty = self.ty(a);
        if !ty.is_float() || self.ty(b) != ty || self.ty(c) != ty {
            return Err(KernelError::Type(format!("fused multiply-add of {ty:?}, {:?} and {:?}", self.ty(b), self.ty(c))));
        }
        Ok(self.intern(KExpr::MulAdd(a, b, c), ty))
    }

    pub fn and(&mut self, a: ExprId, b: ExprId) -> Result<ExprId, KernelError> {
        match (self.get(a), self.get(b)) {
            (KExpr::Bool(true), _) => Ok(b),
            (_, KExpr::Bool(true)) => Ok(a),
            _ => self.binary(BinOp::And, a, b),
        }
    }

    pub fn to_f32(&mut self, a: ExprId) -> ExprId {
        if let Some(v) = self.const_i64(a) {
            return self.f32(v as f32);
        }
        self.intern(KExpr::ToF32(a), Ty::F32)
    }

    pub fn reduce(&mut self, op: RedOp, var: VarId, extent: ExprId, body: ExprId) -> Result<ExprId, KernelError> {
        let ty = self.ty(body);
        if matches!(ty, Ty::Bool | Ty::U32) || self.ty(extent) != Ty::I64 {
            return Err(KernelError::Type("reductions fold float or integer bodies over i64 extents".into()));
        }
        if op == RedOp::Xor && ty != Ty::I64 {
            return Err(KernelError::Type(format!("exclusive or of {ty:?}: only integers fold bitwise")));
        }
        Ok(self.intern(KExpr::Reduce { op, var, extent, body }, ty))
    }

    /// The sum of `body` over `var in 0..extent`, accumulated as a buffer of `elem` holds it:
    /// for float16/bfloat16 each partial sum is rounded to `elem`, as ATen's CPU kernels that
    /// add into a half-precision tensor do; otherwise a plain `Sum` fold.
    pub fn sum_in(&mut self, var: VarId, extent: ExprId, body: ExprId, elem: Elem) -> Result<ExprId, KernelError> {
        if self.ty(body) != Ty::F32 || !matches!(elem, Elem::F16 | Elem::BF16) {
            return self.reduce(RedOp::Sum, var, extent, body);
        }
        let acc = self.carried(var, 0, Ty::F32);
        let sum = self.binary(BinOp::Add, acc, body)?;
        let next = self.round_to(sum, elem);
        let zero = self.f32(0.0);
        Ok(self.iterate(var, extent, vec![zero], vec![next])?[0])
    }

    /// Slot `slot` (of type `ty`) of the loop over `var`, as its `next` expressions read it.
    pub fn carried(&mut self, var: VarId, slot: u32, ty: Ty) -> ExprId {
        self.intern(KExpr::Carried { var, slot }, ty)
    }

    /// A loop over `var in 0..extent` carrying `init.len()` slots (see [`KExpr::Loop`]);
    /// returns each slot's final value. Float slots take their `next` widened or narrowed to
    /// the type of their `init`.
    pub fn iterate(&mut self, var: VarId, extent: ExprId, init: Vec<ExprId>, next: Vec<ExprId>) -> Result<Vec<ExprId>, KernelError> {
        if init.is_empty() || init.len() != next.len() || self.ty(extent) != Ty::I64 {
            return Err(KernelError::Loop(format!("{} initial values, {} next values", init.len(), next.len())));
        }
        let mut fixed = Vec::with_capacity(next.len());
        for (k, (&i, &n)) in init.iter().zip(&next).enumerate() {
            let (ti, tn) = (self.ty(i), self.ty(n));
            let n = if ti.is_float() && tn.is_float() { self.cast(n, ti) } else { n };
            if self.ty(n) != ti {
                return Err(KernelError::Loop(format!("slot {k} starts as {ti:?} but steps to {tn:?}")));
            }
            fixed.push(n);
        }
        let ty = self.ty(init[0]);
        let lp = self.intern(KExpr::Loop { var, extent, init: init.clone(), next: fixed }, ty);
        Ok(init.iter().enumerate().map(|(k, i)| (k, self.ty(*i))).collect::<Vec<_>>().into_iter().map(|(k, t)| self.intern(KExpr::LoopOut { lp, slot: k as u32 }, t)).collect())
    }

    pub fn const_i64(&self, id: ExprId) -> Option<i64> {
        match self.get(id) {
            KExpr::I64(v) => Some(*v),
            _ => None,
        }
    }


    /// Finishes the kernel, its index arithmetic folded again with every loop's range known.
    pub fn finish(mut self, name: String, domain_sizes: Vec<sym::Expr>, domain: Vec<ExprId>, stores: Vec<Store>) -> Kernel {
        let map = self.refold();
        let domain = domain.into_iter().map(|d| map[d.0 as usize]).collect();
        let stores = stores.into_iter().map(|s| Store { buf: s.buf, value: map[s.value.0 as usize] }).collect();
        self.into_kernel(name, domain_sizes, domain, stores)
    }

    /// The kernel as built, its ids as they are (no refold), on the elementwise schedule.
    pub(super) fn into_kernel(self, name: String, domain_sizes: Vec<sym::Expr>, domain: Vec<ExprId>, stores: Vec<Store>) -> Kernel {
        Kernel {
            name,
            buffers: self.buffers,
            params: self.params,
            domain,
            domain_sizes,
            stores,
            exprs: self.exprs,
            types: self.types,
            vars: self.vars,
            schedule: Schedule::Elementwise,
            linear: self.linear,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half-precision sums round every partial sum (a state loop stepping through `RoundF16`);
    /// float32 storages keep the plain fold.
    #[test]
    fn sum_in_rounds_partial_sums_only_for_half_storages() {
        let mut kb = KernelBuilder::new(1);
        let var = kb.fresh_var().unwrap();
        let (n, i) = (kb.i64(4), kb.var(var));
        let body = kb.cast(i, Ty::F32);
        let plain = kb.sum_in(var, n, body, Elem::F32).unwrap();
        assert!(matches!(kb.get(plain), KExpr::Reduce { op: RedOp::Sum, .. }));
        let half = kb.sum_in(var, n, body, Elem::F16).unwrap();
        let KExpr::LoopOut { lp, .. } = kb.get(half).clone() else { panic!("a state loop") };
        let KExpr::Loop { next, .. } = kb.get(lp).clone() else { panic!("a state loop") };
        assert!(matches!(kb.get(next[0]), KExpr::Unary(UnOp::RoundF16, _)));
    }

    /// A state loop's slots depend on its variable only inside the loop: its results are free
    /// of it (so codegen may hoist them), its `next` values are not.
    #[test]
    fn state_loop_results_are_free_of_the_loop_variable() {
        let mut kb = KernelBuilder::new(1);
        let var = kb.fresh_var().unwrap();
        let (acc, i) = (kb.carried(var, 0, Ty::I64), kb.var(var));
        let next = kb.binary(BinOp::Add, acc, i).unwrap();
        let coord = kb.var(VarId(0));
        let zero = kb.i64(0);
        let out = kb.iterate(var, coord, vec![zero], vec![next]).unwrap();
        let k = kb.finish("k".into(), vec![], vec![], vec![]);
        let free = k.free_vars();
        assert_eq!(free[next.0 as usize], 1 << var.0);
        assert_eq!(free[out[0].0 as usize], 1 << 0, "only the output coordinate (the extent) remains");
    }

    #[test]
    fn state_loop_slots_keep_their_type() {
        let mut kb = KernelBuilder::new(0);
        let var = kb.fresh_var().unwrap();
        let n = kb.i64(4);
        let (f, b) = (kb.f32(1.0), kb.bool(true));
        assert!(matches!(kb.iterate(var, n, vec![f], vec![b]), Err(KernelError::Loop(_))));
        assert!(matches!(kb.iterate(var, n, vec![f], vec![]), Err(KernelError::Loop(_))));
        // A float slot takes an f64 step narrowed to its own type.
        let d = kb.f64(2.0);
        let out = kb.iterate(var, n, vec![f], vec![d]).unwrap();
        assert_eq!(kb.ty(out[0]), Ty::F32);
    }
}
