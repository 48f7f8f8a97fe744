//! The kernel IR: an output domain whose elements each evaluate a small expression DAG (loads,
//! arithmetic, reductions) and store into contiguous outputs. How elements and reductions map
//! to work-items is the kernel's [`Schedule`]: one work-item per element with serial loops by
//! default, or one of the work-group schedules of `lower::schedule`.
//!
//! Sizes and strides that depend on dynamic dimensions are *kernel arguments* (`Param`, i64),
//! evaluated from their symbolic expressions at launch, so the same binary serves every binding
//! of the symbols; static sizes are folded in as constants. Expressions are hash-consed in an
//! arena, which turns re-reading the same fused producer into sharing rather than recomputation.
//!
//! This file holds the IR itself; `builder` the typed constructors ([`KernelBuilder`]), `fold`
//! the constant folding and digit joins they apply, `index` the rewrites that need loop ranges,
//! and `linear`, `lanes`, `split`, `compact` the passes from one finished kernel to another.

use serde::Serialize;

use super::schedule::Schedule;
use crate::sym;

mod builder;
mod compact;
mod fold;
mod index;
mod lanes;
mod linear;
mod packed;
pub mod split;
mod unroll;
mod validate;

pub use builder::KernelBuilder;
pub use validate::{InvalidKernel, Problem, Site};

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

impl BinOp {
    /// Whether `self` is defined on operands of type `ty`: words take integer arithmetic only,
    /// and `MulHi` is defined on words only. The builder refuses the rest, `validate` finds them.
    pub fn takes(self, ty: Ty) -> bool {
        match (ty, self) {
            (Ty::U32, o) => !matches!(o, BinOp::Pow | BinOp::And | BinOp::Or | BinOp::Atan2 | BinOp::Hypot | BinOp::CopySign | BinOp::NextAfter),
            (_, BinOp::MulHi) => false,
            _ => true,
        }
    }
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

/// One buffer argument: elements of `elem`, contiguous in its tensor's logical shape, or in
/// the order `layout` says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferParam {
    /// The graph value it holds.
    pub value: String,
    pub access: Access,
    pub elem: Elem,
    #[serde(skip_serializing_if = "Layout::is_plain")]
    pub layout: Layout,
}

/// How a buffer argument orders its value's elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Layout {
    /// Row-major in the value's logical shape.
    #[default]
    Plain,
    /// A 2-D weight `[R, C]` stored transposed, element `(r, c)` at `c · R + r`: a resident
    /// weight the runtime transposes once at upload (`lower::gemm`), for a matrix product that
    /// reads it down its columns. A 3-D `[G, R, C]` one (experts' weights,
    /// `lower::ops::grouped_columns`) is transposed per leading index: `(g, r, c)` at
    /// `g · C · R + c · R + r`. Only the storage differs; the graph value is the same.
    Transposed,
    /// A weight of two or more dims `[R, …]` stored as the transpose of the matrix `[R, C]` of
    /// its first dim by the rest (`C` their product): element `(r, rest)` at `c · R + r`, `c`
    /// the row-major index of `rest` — a convolution's `[Cout, Cin, kh, kw]` with neighbouring
    /// output channels neighbouring elements (`lower::tiny_map`). For a 2-D weight the same
    /// storage as [`Layout::Transposed`]; a layout of its own so that a 3-D weight read both
    /// ways keeps two copies under two keys.
    LeadingLast,
}

impl Layout {
    pub fn is_plain(&self) -> bool {
        *self == Layout::Plain
    }
}

impl BufferParam {
    /// The name a run keys this argument's device buffer by: the value's name, with a suffix
    /// for a layout other than the plain one (no graph value name contains `@`).
    pub fn key(&self) -> String {
        match self.layout {
            Layout::Plain => self.value.clone(),
            Layout::Transposed => format!("{}@T", self.value),
            Layout::LeadingLast => format!("{}@L", self.value),
        }
    }
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
