//! The kernel IR: an output domain whose elements each evaluate a small expression DAG (loads,
//! arithmetic, reductions) and store into contiguous outputs. How elements and reductions map
//! to work-items is the kernel's [`Schedule`]: one work-item per element with serial loops by
//! default, or one of the work-group schedules of `lower::schedule`.
//!
//! Sizes and strides that depend on dynamic dimensions are *kernel arguments* (`Param`, i64),
//! evaluated from their symbolic expressions at launch, so the same binary serves every binding
//! of the symbols; static sizes are folded in as constants. Expressions are hash-consed in an
//! arena, which turns re-reading the same fused producer into sharing rather than recomputation.

use std::collections::HashMap;

use serde::Serialize;

use super::schedule::Schedule;
use crate::sym;

mod compact;
mod index;
mod linear;
pub mod split;

/// Handle of an expression in a kernel's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct ExprId(pub u32);

/// Handle of a loop variable: `Var(0..rank)` are the output coordinates, later ones are
/// introduced by reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct VarId(pub u32);

/// The scalar types kernel expressions compute in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Ty {
    F32,
    /// float64 tensors compute in f64 (`Float64`, which OpenCL CPU and most GPU devices have).
    F64,
    I64,
    Bool,
    /// 32-bit unsigned words of a counter-based generator (Philox, `lower::rng`): wrapping
    /// arithmetic, unsigned division and comparison, logical shifts, [`BinOp::MulHi`].
    U32,
}

impl Ty {
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum UnOp {
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Erf,
    Tanh,
    Floor,
    Ceil,
    Not,
    /// The rest of OpenCL's float math built-ins, one each.
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Asinh,
    Acosh,
    Atanh,
    Exp2,
    Expm1,
    Log2,
    Log10,
    Log1p,
    Erfc,
    Lgamma,
    Trunc,
    /// Round half to even (`rint`), as `torch.round`.
    Rint,
    /// Bitwise complement of an integer.
    BitNot,
    /// An f32 rounded to the nearest float16 (ties to even, overflowing to ±inf) and widened
    /// back: PyTorch stores some intermediates of 16-bit float ops in the tensor's dtype, and
    /// a kernel that computes in f32 must round where it does.
    RoundF16,
    /// The same to bfloat16.
    RoundBF16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// True division on floats; truncating division on (non-negative) integers.
    Div,
    Rem,
    Max,
    Min,
    Pow,
    And,
    Or,
    /// `atan2`, `hypot`, `copysign`: OpenCL built-ins on floats.
    Atan2,
    Hypot,
    CopySign,
    /// Bitwise ops on integers.
    BitAnd,
    BitOr,
    BitXor,
    /// Shifts of integers (right shifts are arithmetic on i64, logical on u32); counts must
    /// lie below the width.
    Shl,
    Shr,
    /// The high 32 bits of the 64-bit product of two u32 words (Philox's `mulhi`).
    MulHi,
    /// The next float after the first operand towards the second (OpenCL `nextafter`).
    NextAfter,
}

/// The two values of the generator a drawing kernel is launched with (`crate::ops::rng`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum RngArg {
    /// Philox's key.
    Seed,
    /// The first stream of the run: a node's stream is this plus its ordinal.
    Offset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum RedOp {
    Sum,
    Max,
    Min,
    /// Product (cumprod); serial schedules only.
    Prod,
    /// Bitwise exclusive or of integers (`hash_tensor`); serial schedules only.
    Xor,
}

/// One node of a kernel's expression DAG.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum KExpr {
    /// f32 bit pattern (so the enum stays `Eq + Hash`).
    F32(u32),
    /// f64 bit pattern.
    F64(u64),
    I64(i64),
    Bool(bool),
    U32(u32),
    /// The i64 kernel argument of that index (after the buffers).
    Param(u32),
    /// The generator's seed or offset, i64 arguments after the sizes and the schedule's
    /// (see [`Kernel::draws`]).
    Rng(RngArg),
    Var(VarId),
    /// `buffer[index]`; with a mask, `mask ? buffer[index] : other` without touching memory
    /// when the mask is false (the index is clamped to 0 first).
    Load { buf: u32, index: ExprId, mask: Option<ExprId>, other: u32 },
    Unary(UnOp, ExprId),
    Binary(BinOp, ExprId, ExprId),
    Cmp(CmpOp, ExprId, ExprId),
    Select(ExprId, ExprId, ExprId),
    /// `a · b + c` rounded once (OpenCL `fma`): where PyTorch's CPU build contracts a float
    /// expression into a fused multiply-add, a kernel must too to round as it does.
    MulAdd(ExprId, ExprId, ExprId),
    /// i64 → f32.
    ToF32(ExprId),
    /// A conversion between compute types: float → int truncates, anything → bool is `!= 0`,
    /// bool → number is 0 or 1.
    Cast(ExprId, Ty),
    /// The IEEE-754 bit pattern of an f64 as an i64: a reinterpretation, not a conversion
    /// (`hash_tensor` folds the bits of each float element).
    Bits(ExprId),
    /// Serial loop `var in 0..extent`, folding `body` with `op` (f32).
    Reduce { op: RedOp, var: VarId, extent: ExprId, body: ExprId },
    /// Serial loop `var in 0..extent` carrying state: slot `k` starts as `init[k]` and becomes
    /// `next[k]` after each step; `next` reads the current slots through [`KExpr::Carried`].
    /// What a fold of one value cannot say: (value, index) pairs with PyTorch's tie and NaN
    /// rules, recurrences of orthogonal polynomials, binary searches. Read through `LoopOut`.
    Loop { var: VarId, extent: ExprId, init: Vec<ExprId>, next: Vec<ExprId> },
    /// The current value of slot `slot` of the `Loop` over `var` (only inside its `next`).
    Carried { var: VarId, slot: u32 },
    /// The value of slot `slot` of a `Loop` after its last step.
    LoopOut { lp: ExprId, slot: u32 },
}

impl KExpr {
    /// This node with every operand `x` replaced by `f(x)`, visited in evaluation order: the one
    /// list of which variants have operands, shared by [`Kernel::children`] and every rebuild of
    /// an arena (a new variant with operands is added here, or rebuilds keep stale ids).
    pub fn map_operands(&self, f: &mut dyn FnMut(ExprId) -> ExprId) -> KExpr {
        match self {
            leaf @ (KExpr::F32(_)
            | KExpr::F64(_)
            | KExpr::I64(_)
            | KExpr::Bool(_)
            | KExpr::U32(_)
            | KExpr::Param(_)
            | KExpr::Rng(_)
            | KExpr::Var(_)
            | KExpr::Carried { .. }) => leaf.clone(),
            KExpr::Load { buf, index, mask, other } => {
                let index = f(*index);
                KExpr::Load { buf: *buf, index, mask: mask.map(&mut *f), other: *other }
            }
            KExpr::Unary(op, a) => KExpr::Unary(*op, f(*a)),
            KExpr::ToF32(a) => KExpr::ToF32(f(*a)),
            KExpr::Cast(a, t) => KExpr::Cast(f(*a), *t),
            KExpr::Bits(a) => KExpr::Bits(f(*a)),
            KExpr::Binary(op, a, b) => {
                let a = f(*a);
                KExpr::Binary(*op, a, f(*b))
            }
            KExpr::Cmp(op, a, b) => {
                let a = f(*a);
                KExpr::Cmp(*op, a, f(*b))
            }
            KExpr::Select(c, a, b) => {
                let (c, a) = (f(*c), f(*a));
                KExpr::Select(c, a, f(*b))
            }
            KExpr::MulAdd(a, b, c) => {
                let (a, b) = (f(*a), f(*b));
                KExpr::MulAdd(a, b, f(*c))
            }
            KExpr::Reduce { op, var, extent, body } => {
                let extent = f(*extent);
                KExpr::Reduce { op: *op, var: *var, extent, body: f(*body) }
            }
            KExpr::Loop { var, extent, init, next } => {
                let extent = f(*extent);
                let init = init.iter().map(|x| f(*x)).collect();
                KExpr::Loop { var: *var, extent, init, next: next.iter().map(|x| f(*x)).collect() }
            }
            KExpr::LoopOut { lp, slot } => KExpr::LoopOut { lp: f(*lp), slot: *slot },
        }
    }
}

/// How a buffer stores its elements. Kernels compute in three types ([`Ty`]): float storages
/// (float32, and float16/bfloat16 converted on load and rounded to nearest-even on store) in
/// `F32`; float64 in `F64`; integer storages in `I64`, with real integer arithmetic, narrowed
/// (wrapping) on store; bool in `Bool`, stored as one byte. uint64 (`hash_tensor`'s output)
/// computes as its bit pattern in `I64`: exact for copies, stores and bitwise ops, which is all
/// its producers need (values of 2^63 and up read as negative in arithmetic).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Elem {
    F32,
    F64,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U8,
    U64,
    Bool,
}

impl Elem {
    pub fn from_dtype(d: crate::ir::DType) -> Option<Elem> {
        use crate::ir::DType;
        Some(match d {
            DType::F32 => Elem::F32,
            DType::F64 => Elem::F64,
            DType::F16 => Elem::F16,
            DType::BF16 => Elem::BF16,
            DType::I64 => Elem::I64,
            DType::I32 => Elem::I32,
            DType::I16 => Elem::I16,
            DType::I8 => Elem::I8,
            DType::U8 => Elem::U8,
            DType::U64 => Elem::U64,
            DType::Bool => Elem::Bool,
            _ => return None,
        })
    }

    /// The type kernel expressions compute this storage in.
    pub fn ty(self) -> Ty {
        match self {
            Elem::F32 | Elem::F16 | Elem::BF16 => Ty::F32,
            Elem::F64 => Ty::F64,
            Elem::Bool => Ty::Bool,
            _ => Ty::I64,
        }
    }

    pub fn bytes(self) -> u32 {
        match self {
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
            Elem::F32 | Elem::I32 => 4,
            Elem::F16 | Elem::BF16 | Elem::I16 => 2,
            Elem::I8 | Elem::U8 | Elem::Bool => 1,
        }
    }
}

/// Whether the kernel reads or writes a buffer argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Access {
    Read,
    Write,
}

/// One buffer argument: elements of `elem`, contiguous in its tensor's logical shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferParam {
    /// The graph value it holds.
    pub value: String,
    pub access: Access,
    pub elem: Elem,
}

/// One output of the kernel: the element at the work-item's linear index gets `value`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Store {
    pub buf: u32,
    pub value: ExprId,
}

/// A kernel ready for code generation.
#[derive(Clone, Debug, Serialize)]
pub struct Kernel {
    /// The entry point name (a valid identifier, unique within a plan).
    pub name: String,
    pub buffers: Vec<BufferParam>,
    /// Symbolic value of each i64 argument, in argument order after the buffers.
    #[serde(serialize_with = "ser_exprs")]
    pub params: Vec<sym::Expr>,
    /// Extent of each output coordinate `Var(i)`.
    pub domain: Vec<ExprId>,
    /// The same extents symbolically, for the launch grid.
    #[serde(serialize_with = "ser_exprs")]
    pub domain_sizes: Vec<sym::Expr>,
    pub stores: Vec<Store>,
    pub exprs: Vec<KExpr>,
    pub types: Vec<Ty>,
    pub vars: u32,
    /// How the work is spread over work-items; codegen and the launch both follow it.
    pub schedule: Schedule,
    /// The variable holding the linear (row-major) output index, when the output coordinates
    /// were rewritten as its digits ([`Kernel::linearize`]); codegen binds it to the work-item.
    pub linear: Option<VarId>,
}

fn ser_exprs<S: serde::Serializer>(v: &[sym::Expr], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter().map(|e| e.to_string()))
}

impl Kernel {
    pub fn expr(&self, id: ExprId) -> &KExpr {
        &self.exprs[id.0 as usize]
    }

    pub fn ty(&self, id: ExprId) -> Ty {
        self.types[id.0 as usize]
    }

    /// Children of an expression, in evaluation order.
    pub fn children(&self, id: ExprId) -> Vec<ExprId> {
        let mut out = Vec::new();
        self.expr(id).map_operands(&mut |x| {
            out.push(x);
            x
        });
        out
    }

    /// Free loop variables of every expression, as bit sets (variables are < 128).
    pub fn free_vars(&self) -> Vec<u128> {
        let mut free = vec![0u128; self.exprs.len()];
        // The arena is in construction order, so children always come before their parents.
        for i in 0..self.exprs.len() {
            let id = ExprId(i as u32);
            free[i] = match self.expr(id) {
                KExpr::Var(v) => 1u128 << v.0,
                KExpr::Reduce { var, extent, body, .. } => {
                    free[extent.0 as usize] | (free[body.0 as usize] & !(1u128 << var.0))
                }
                // A carried slot changes every step: it depends on its loop's variable.
                KExpr::Carried { var, .. } => 1u128 << var.0,
                KExpr::Loop { var, extent, init, next } => {
                    let inner = next.iter().fold(0, |m, c| m | free[c.0 as usize]) & !(1u128 << var.0);
                    init.iter().fold(free[extent.0 as usize] | inner, |m, c| m | free[c.0 as usize])
                }
                _ => self.children(id).iter().fold(0, |m, c| m | free[c.0 as usize]),
            };
        }
        free
    }

    /// The value of integer expression `e` given the values of the i64 arguments, when it is
    /// built from constants, arguments and arithmetic (extents are); `None` otherwise.
    pub fn eval_i64(&self, e: ExprId, params: &[i64]) -> Option<i64> {
        Some(match self.expr(e) {
            KExpr::I64(v) => *v,
            KExpr::Param(i) => *params.get(*i as usize)?,
            KExpr::Binary(op, a, b) => {
                let (x, y) = (self.eval_i64(*a, params)?, self.eval_i64(*b, params)?);
                match op {
                    BinOp::Add => x.checked_add(y)?,
                    BinOp::Sub => x.checked_sub(y)?,
                    BinOp::Mul => x.checked_mul(y)?,
                    BinOp::Div => x.checked_div(y)?,
                    BinOp::Rem => x.checked_rem(y)?,
                    BinOp::Max => x.max(y),
                    BinOp::Min => x.min(y),
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    /// Whether the kernel draws random numbers: it then takes the generator's seed and offset
    /// as its last two i64 arguments, after the sizes and the schedule's own.
    pub fn draws(&self) -> bool {
        self.exprs.iter().any(|e| matches!(e, KExpr::Rng(_)))
    }

    /// Number of `Reduce` nodes and loads, for plan summaries.
    pub fn counts(&self) -> (usize, usize) {
        let reduces = self.exprs.iter().filter(|e| matches!(e, KExpr::Reduce { .. })).count();
        let loads = self.exprs.iter().filter(|e| matches!(e, KExpr::Load { .. })).count();
        (reduces, loads)
    }
}

/// Why a kernel expression could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    #[error("type mismatch in kernel expression: {0}")]
    Type(String),
    #[error("kernel needs more than 128 loop variables")]
    TooManyVars,
    #[error("loop state: {0}")]
    Loop(String),
}

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

/// Builds a [`Kernel`]: hash-consing arena, argument tables, constant folding of trivial cases.
pub struct KernelBuilder {
    exprs: Vec<KExpr>,
    types: Vec<Ty>,
    dedup: HashMap<KExpr, ExprId>,
    params: Vec<sym::Expr>,
    param_ids: HashMap<sym::Expr, u32>,
    buffers: Vec<BufferParam>,
    buffer_ids: HashMap<(String, bool), u32>,
    vars: u32,
    /// Extents of the loop variables known so far (the output coordinates when the caller gave
    /// them; every fold's when the kernel is finished): `(m + r) / n` folds to `m / n` when `m`
    /// is a multiple of `n` and `r` is known to run below `n` (see `index`).
    var_extents: HashMap<VarId, sym::Expr>,
    /// The linear output index whose digits are the coordinates ([`Kernel::linearize`]).
    linear: Option<VarId>,
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

    fn intern(&mut self, e: KExpr, ty: Ty) -> ExprId {
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
    fn unify(&mut self, a: ExprId, b: ExprId) -> (ExprId, ExprId) {
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
            self.buffers.push(BufferParam { value: value.to_string(), access, elem });
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
        match (self.get(a).clone(), ty) {
            (KExpr::F32(b), Ty::F64) => return self.f64(f32::from_bits(b) as f64),
            (KExpr::F64(b), Ty::F32) => return self.f32(f64::from_bits(b) as f32),
            (KExpr::F64(b), Ty::I64) if f64::from_bits(b).is_finite() => return self.i64(f64::from_bits(b) as i64),
            (KExpr::F64(b), Ty::Bool) => return self.bool(f64::from_bits(b) != 0.0),
            (KExpr::I64(v), Ty::F64) => return self.f64(v as f64),
            (KExpr::Bool(v), Ty::F64) => return self.f64(v as i32 as f64),
            (KExpr::I64(v), Ty::F32) => return self.f32(v as f32),
            (KExpr::I64(v), Ty::Bool) => return self.bool(v != 0),
            (KExpr::F32(b), Ty::I64) if f32::from_bits(b).is_finite() => return self.i64(f32::from_bits(b) as i64),
            (KExpr::F32(b), Ty::Bool) => return self.bool(f32::from_bits(b) != 0.0),
            (KExpr::Bool(v), Ty::F32) => return self.f32(v as i32 as f32),
            (KExpr::Bool(v), Ty::I64) => return self.i64(v as i64),
            (KExpr::U32(v), Ty::I64) => return self.i64(i64::from(v)),
            (KExpr::I64(v), Ty::U32) => return self.u32(v as u32),
            _ => {}
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
        // Words take integer arithmetic only; `MulHi` is defined on words only.
        let fits = match (ta, op) {
            (Ty::U32, o) => !matches!(o, BinOp::Pow | BinOp::And | BinOp::Or | BinOp::Atan2 | BinOp::Hypot | BinOp::CopySign | BinOp::NextAfter),
            (_, BinOp::MulHi) => false,
            _ => true,
        };
        if !fits {
            return Err(KernelError::Type(format!("{op:?} of {ta:?}")));
        }
        // Index arithmetic is built generically (strides of 1, offsets of 0); fold those away so
        // the generated code reads like hand-written indexing.
        if ta == Ty::I64 {
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
                        return Ok(self.i64(v));
                    }
                }
                (BinOp::Add, Some(0), _) | (BinOp::Mul, Some(1), _) => return Ok(b),
                (BinOp::Add | BinOp::Sub, _, Some(0)) | (BinOp::Mul | BinOp::Div, _, Some(1)) => return Ok(a),
                (BinOp::Mul, Some(0), _) | (BinOp::Mul, _, Some(0)) => return Ok(self.i64(0)),
                (BinOp::Rem, _, Some(1)) => return Ok(self.i64(0)),
                _ => {}
            }
        }
        if ta == Ty::I64 && op == BinOp::Add {
            if let Some(folded) = self.fold_digits(a, b) {
                return Ok(folded);
            }
            // `(x + hi) + lo`, the digits after an offset (a row's base before a flattened
            // range's digits): join `hi + lo` and add `x` to the join.
            if let KExpr::Binary(BinOp::Add, x, hi) = *self.get(a) {
                if let Some(joined) = self.fold_digits(hi, b) {
                    return self.binary(BinOp::Add, x, joined);
                }
            }
        }
        if ta == Ty::I64 && matches!(op, BinOp::Div | BinOp::Rem) {
            if let Some(folded) = self.split_below(op, a, b) {
                return Ok(folded);
            }
        }
        Ok(self.intern(KExpr::Binary(op, a, b), ta))
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
    fn exact_div(&mut self, e: ExprId, n: ExprId) -> Option<ExprId> {
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
    fn into_kernel(self, name: String, domain_sizes: Vec<sym::Expr>, domain: Vec<ExprId>, stores: Vec<Store>) -> Kernel {
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
        // Split by a divisor of n: the row part divides exactly, the column does not run below.
        let sixty_four = kb.i64(64);
        let q = kb.binary(BinOp::Div, lin, sixty_four).unwrap();
        assert!(matches!(kb.get(q), KExpr::Binary(BinOp::Div, ..)));
        // Coordinate 0 runs to 7: below 8, not below 6.
        let eight = kb.i64(8);
        let six = kb.i64(6);
        let r8 = kb.binary(BinOp::Mul, j, eight).unwrap();
        let x = kb.binary(BinOp::Add, r8, r).unwrap();
        assert_eq!(kb.binary(BinOp::Div, x, eight).unwrap(), j);
        let r6 = kb.binary(BinOp::Mul, j, six).unwrap();
        let y = kb.binary(BinOp::Add, r6, r).unwrap();
        let d = kb.binary(BinOp::Div, y, six).unwrap();
        assert!(matches!(kb.get(d), KExpr::Binary(BinOp::Div, ..)));
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
