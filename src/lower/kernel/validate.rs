//! [`Kernel::validate`]: the invariants code generation and every kernel pass rely on, checked
//! between the lowering's passes in debug builds and tests (as naga's `valid/` and tinygrad's
//! `spec.py` check each stage), so a pass that breaks one fails right after it, naming the kernel
//! and the node, instead of emitting SPIR-V that `spirv-val` or the device rejects, or panicking
//! in a later pass that indexes by the broken id.
//!
//! The builder's constructors guarantee most of these as they build; they are checked again
//! because the passes after it write arenas directly: `rebuild_with` and `linearize` remap every
//! operand through [`KExpr::map_operands`], `compact` renumbers nodes and buffers, `split`
//! shifts variables. An operand a rebuild forgot to remap keeps an id of the old arena: it then
//! points past the node that reads it, or at a node of another type, and both are found here.

use std::fmt;

use super::{Access, ExprId, KExpr, Kernel, RedOp, Ty, VarId};
use crate::lower::schedule::Schedule;

/// Why a kernel is not well formed: which kernel, and what is wrong where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("kernel `{kernel}`: {problem}")]
pub struct InvalidKernel {
    pub kernel: String,
    pub problem: Problem,
}

/// Where in a kernel a broken reference sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    Expr(ExprId),
    /// The store of that index.
    Store(usize),
    /// The extent of output coordinate of that index.
    Domain(usize),
    /// The schedule's field of that name.
    Schedule(&'static str),
    /// [`Kernel::linear`].
    Linear,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Site::Expr(e) => write!(f, "expression {}", e.0),
            Site::Store(i) => write!(f, "store {i}"),
            Site::Domain(d) => write!(f, "domain extent {d}"),
            Site::Schedule(field) => write!(f, "the schedule's `{field}`"),
            Site::Linear => write!(f, "the linear index"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("{exprs} expressions but {types} types")]
    ArenaLengths { exprs: usize, types: usize },
    #[error("{domain} domain extents but {sizes} symbolic sizes")]
    DomainLengths { domain: usize, sizes: usize },
    #[error("{vars} loop variables; free-variable sets hold 128")]
    TooManyVars { vars: u32 },
    /// Operands come before the nodes that read them (the arena is in construction order).
    #[error("{at} reads expression {}, which is not defined before it (an id a rebuild left stale?)", operand.0)]
    OperandNotBefore { at: Site, operand: ExprId },
    #[error("{at} is expression {}, past the arena's {len}", id.0)]
    OutOfArena { at: Site, id: ExprId, len: usize },
    #[error("{at}: expected {expected}, found {found}")]
    Type { at: Site, expected: String, found: String },
    #[error("{at} names buffer {buf}, but the kernel has {buffers}")]
    BufferOutOfRange { at: Site, buf: u32, buffers: usize },
    #[error("{at} {uses} buffer {buf} (`{value}`), which is declared {declared:?}")]
    Access { at: Site, uses: &'static str, buf: u32, value: String, declared: Access },
    #[error("{at} reads size argument {param}, but the kernel has {params}")]
    ParamOutOfRange { at: Site, param: u32, params: usize },
    #[error("{at} names loop variable {var}, but the kernel has {vars}")]
    VarOutOfRange { at: Site, var: u32, vars: u32 },
    #[error("{at}: {what}")]
    Loop { at: Site, what: String },
}

impl Kernel {
    /// Checks that every operand is defined before it is read, each node's type agrees with its
    /// operands' and with the buffer it loads, every buffer, size argument and loop variable a
    /// node names exists, loads read `Read` buffers and stores write `Write` ones, state loops are
    /// well shaped, and the stores, domain and schedule name nodes of the arena.
    pub fn validate(&self) -> Result<(), InvalidKernel> {
        self.check().map_err(|problem| InvalidKernel { kernel: self.name.clone(), problem })
    }

    fn check(&self) -> Result<(), Problem> {
        let len = self.exprs.len();
        if self.types.len() != len {
            return Err(Problem::ArenaLengths { exprs: len, types: self.types.len() });
        }
        if self.domain.len() != self.domain_sizes.len() {
            return Err(Problem::DomainLengths { domain: self.domain.len(), sizes: self.domain_sizes.len() });
        }
        if self.vars > 128 {
            return Err(Problem::TooManyVars { vars: self.vars });
        }
        for i in 0..len {
            self.check_expr(ExprId(i as u32))?;
        }
        for (d, &e) in self.domain.iter().enumerate() {
            self.expect_ty(Site::Domain(d), self.root(Site::Domain(d), e)?, Ty::I64, "an i64 extent")?;
        }
        for (i, s) in self.stores.iter().enumerate() {
            let at = Site::Store(i);
            let ty = self.root(at, s.value)?;
            let b = self.buffer(at, s.buf, Access::Write, "writes")?;
            self.expect_ty(at, ty, b.elem.ty(), &format!("the compute type of {:?}", b.elem))?;
        }
        if let Some(v) = self.linear {
            self.var_in_range(Site::Linear, v)?;
        }
        self.check_schedule()
    }

    /// The type of root `e` (a store's value, an extent, a schedule's node) when it is in the arena.
    fn root(&self, at: Site, e: ExprId) -> Result<Ty, Problem> {
        self.types.get(e.0 as usize).copied().ok_or(Problem::OutOfArena { at, id: e, len: self.exprs.len() })
    }

    fn expect_ty(&self, at: Site, found: Ty, want: Ty, expected: &str) -> Result<(), Problem> {
        if found == want {
            return Ok(());
        }
        Err(Problem::Type { at, expected: expected.to_string(), found: format!("{found:?}") })
    }

    fn buffer(&self, at: Site, buf: u32, access: Access, uses: &'static str) -> Result<&super::BufferParam, Problem> {
        let b = self.buffers.get(buf as usize).ok_or(Problem::BufferOutOfRange { at, buf, buffers: self.buffers.len() })?;
        if b.access != access {
            return Err(Problem::Access { at, uses, buf, value: b.value.clone(), declared: b.access });
        }
        Ok(b)
    }

    fn var_in_range(&self, at: Site, v: VarId) -> Result<(), Problem> {
        if v.0 >= self.vars {
            return Err(Problem::VarOutOfRange { at, var: v.0, vars: self.vars });
        }
        Ok(())
    }

    /// The `init` of the loop `lp` names, when `lp` is a loop.
    fn loop_init(&self, lp: ExprId) -> Option<&[ExprId]> {
        match self.expr(lp) {
            KExpr::Loop { init, .. } => Some(init),
            _ => None,
        }
    }

    fn check_expr(&self, id: ExprId) -> Result<(), Problem> {
        let at = Site::Expr(id);
        for c in self.children(id) {
            if c >= id {
                return Err(Problem::OperandNotBefore { at, operand: c });
            }
        }
        let ty = self.ty(id);
        let t = |e: &ExprId| self.ty(*e);
        let want = |found: Ty, want: Ty, what: &str| self.expect_ty(at, found, want, what);
        match self.expr(id) {
            KExpr::F32(_) => want(ty, Ty::F32, "f32 for an f32 constant"),
            KExpr::F64(_) => want(ty, Ty::F64, "f64 for an f64 constant"),
            KExpr::I64(_) | KExpr::Rng(_) => want(ty, Ty::I64, "i64 for an i64 constant or generator argument"),
            KExpr::Bool(_) => want(ty, Ty::Bool, "bool for a bool constant"),
            KExpr::U32(_) => want(ty, Ty::U32, "u32 for a word constant"),
            KExpr::Param(p) => {
                if *p as usize >= self.params.len() {
                    return Err(Problem::ParamOutOfRange { at, param: *p, params: self.params.len() });
                }
                want(ty, Ty::I64, "i64 for a size argument")
            }
            KExpr::Var(v) => {
                self.var_in_range(at, *v)?;
                want(ty, Ty::I64, "i64 for a loop variable")
            }
            KExpr::Load { buf, index, mask, .. } => {
                let b = self.buffer(at, *buf, Access::Read, "loads")?;
                want(t(index), Ty::I64, "an i64 index")?;
                if let Some(m) = mask {
                    want(t(m), Ty::Bool, "a bool mask")?;
                }
                want(ty, b.elem.ty(), &format!("the compute type of {:?}", b.elem))
            }
            KExpr::Unary(_, a) => want(ty, t(a), "the operand's type"),
            KExpr::Binary(op, a, b) => {
                want(t(b), t(a), "operands of one type")?;
                want(ty, t(a), "the operands' type")?;
                if !op.takes(ty) {
                    return Err(Problem::Type { at, expected: format!("operands {op:?} is defined on"), found: format!("{ty:?}") });
                }
                Ok(())
            }
            KExpr::Cmp(_, a, b) => {
                want(t(b), t(a), "operands of one type")?;
                if t(a) == Ty::Bool {
                    return Err(Problem::Type { at, expected: "numbers to compare".into(), found: "Bool".into() });
                }
                want(ty, Ty::Bool, "bool for a comparison")
            }
            KExpr::Select(c, a, b) => {
                want(t(c), Ty::Bool, "a bool condition")?;
                want(t(b), t(a), "branches of one type")?;
                want(ty, t(a), "the branches' type")
            }
            KExpr::MulAdd(a, b, c) => {
                if !ty.is_float() {
                    return Err(Problem::Type { at, expected: "a float multiply-add".into(), found: format!("{ty:?}") });
                }
                for x in [a, b, c] {
                    want(t(x), ty, "operands of the result's type")?;
                }
                Ok(())
            }
            KExpr::ToF32(a) => {
                want(t(a), Ty::I64, "an i64 operand (a signed conversion)")?;
                want(ty, Ty::F32, "f32 for a conversion to f32")
            }
            KExpr::Cast(_, to) => want(ty, *to, "the cast's target type"),
            KExpr::Bits(a) => {
                want(t(a), Ty::F64, "an f64 to reinterpret")?;
                want(ty, Ty::I64, "i64 for a bit pattern")
            }
            KExpr::Reduce { op, var, extent, body } => {
                self.var_in_range(at, *var)?;
                want(t(extent), Ty::I64, "an i64 extent")?;
                want(ty, t(body), "the body's type")?;
                if matches!(ty, Ty::Bool | Ty::U32) || (*op == RedOp::Xor && ty != Ty::I64) {
                    return Err(Problem::Type { at, expected: format!("a body {op:?} folds"), found: format!("{ty:?}") });
                }
                Ok(())
            }
            KExpr::Loop { var, extent, init, next } => {
                self.var_in_range(at, *var)?;
                want(t(extent), Ty::I64, "an i64 extent")?;
                if init.is_empty() || init.len() != next.len() {
                    return Err(Problem::Loop { at, what: format!("{} initial values, {} next values", init.len(), next.len()) });
                }
                for (k, (i, n)) in init.iter().zip(next).enumerate() {
                    want(t(n), t(i), &format!("slot {k} stepping to its initial value's type"))?;
                }
                want(ty, t(&init[0]), "the first slot's type")
            }
            KExpr::Carried { var, slot } => {
                self.var_in_range(at, *var)?;
                // The loop is built after the slots its steps read: look for it among all nodes.
                // (Its operands are not checked yet: their types are read only where they exist.)
                let init = self.exprs.iter().find_map(|e| match e {
                    KExpr::Loop { var: v, init, .. } if v == var => init.get(*slot as usize),
                    _ => None,
                });
                let Some(init) = init else {
                    return Err(Problem::Loop { at, what: format!("slot {slot} of variable {}'s loop, which has no such slot or no loop", var.0) });
                };
                match self.types.get(init.0 as usize) {
                    Some(st) => want(ty, *st, "the slot's type"),
                    None => Ok(()),
                }
            }
            KExpr::LoopOut { lp, slot } => {
                let init = self.loop_init(*lp).ok_or_else(|| Problem::Loop { at, what: format!("reads a slot of expression {}, not a loop", lp.0) })?;
                let i = init.get(*slot as usize).ok_or_else(|| Problem::Loop { at, what: format!("slot {slot} of a loop of {}", init.len()) })?;
                want(ty, t(i), "the slot's type")
            }
        }
    }

    fn check_schedule(&self) -> Result<(), Problem> {
        match self.schedule {
            Schedule::Elementwise | Schedule::Columns { .. } | Schedule::Depthwise { .. } => Ok(()),
            Schedule::Channels { dims, coord, block, .. } => {
                let rows = self.domain.len().saturating_sub(dims as usize);
                if coord as usize >= rows || block == 0 || self.stores.len() % block as usize != 0 {
                    return Err(Problem::Type {
                        at: Site::Schedule("coord"),
                        expected: format!("a row coordinate (below {rows}) and {block} lane stores per output"),
                        found: format!("coordinate {coord}, {} stores", self.stores.len()),
                    });
                }
                Ok(())
            }
            Schedule::Spread { coord, lanes, outer, .. } => {
                let static_rest = self.domain.iter().enumerate().skip(outer as usize).all(|(d, e)| d == coord as usize || matches!(self.expr(*e), KExpr::I64(_)));
                if coord as usize >= self.domain.len() || outer > coord || lanes == 0 || self.stores.len() % lanes as usize != 0 || !static_rest {
                    return Err(Problem::Type {
                        at: Site::Schedule("coord"),
                        expected: format!("an output coordinate (below {}), the others static, and {lanes} lane stores per output", self.domain.len()),
                        found: format!("coordinate {coord}, {} stores", self.stores.len()),
                    });
                }
                Ok(())
            }
            Schedule::Rows { extent, .. } => {
                let at = Site::Schedule("extent");
                self.expect_ty(at, self.root(at, extent)?, Ty::I64, "an i64 row extent")
            }
            Schedule::Tiled { reduce, a, b, .. } => {
                for (field, e) in [("reduce", reduce), ("a", a), ("b", b)] {
                    self.root(Site::Schedule(field), e)?;
                }
                if !matches!(self.expr(reduce), KExpr::Reduce { .. }) {
                    return Err(Problem::Type { at: Site::Schedule("reduce"), expected: "a reduction".into(), found: format!("{:?}", self.expr(reduce)) });
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::kernel::{BinOp, BufferParam, Elem, KernelBuilder, Store};
    use crate::sym;

    /// `out[i] = in[i] + 1` over `n` elements, well formed: the kernel each test breaks.
    fn good() -> Kernel {
        let mut kb = KernelBuilder::new(1);
        let n = kb.size(&sym::Expr::symbol("n"));
        kb.set_coord_extents(&[n]);
        let i = kb.var(VarId(0));
        let input = kb.buffer("x", Access::Read);
        let x = kb.load(input, i);
        let one = kb.f32(1.0);
        let v = kb.binary(BinOp::Add, x, one).unwrap();
        let out = kb.buffer("y", Access::Write);
        kb.finish("k".into(), vec![sym::Expr::symbol("n")], vec![n], vec![Store { buf: out, value: v }])
    }

    fn problem(k: &Kernel) -> Problem {
        let err = k.validate().expect_err("the broken kernel is found");
        assert_eq!(err.kernel, "k");
        err.problem
    }

    /// The node of `k` matching `pred`.
    fn find(k: &Kernel, pred: impl Fn(&KExpr) -> bool) -> usize {
        k.exprs.iter().position(pred).expect("the node is in the kernel")
    }

    #[test]
    fn built_kernels_are_valid() {
        good().validate().unwrap();
        good().linearize().validate().unwrap();
    }

    #[test]
    fn an_operand_defined_after_its_reader_is_found() {
        let mut k = good();
        let add = find(&k, |e| matches!(e, KExpr::Binary(..)));
        // The add reads itself: what an id a rebuild did not remap looks like.
        let KExpr::Binary(op, a, _) = k.exprs[add].clone() else { unreachable!() };
        k.exprs[add] = KExpr::Binary(op, a, ExprId(add as u32));
        assert_eq!(problem(&k), Problem::OperandNotBefore { at: Site::Expr(ExprId(add as u32)), operand: ExprId(add as u32) });
        // One past the arena.
        let past = ExprId(k.exprs.len() as u32 + 3);
        k.exprs[add] = KExpr::Binary(op, a, past);
        assert!(matches!(problem(&k), Problem::OperandNotBefore { operand, .. } if operand == past));
    }

    #[test]
    fn a_stale_id_of_another_type_is_found() {
        // An operand left pointing at the index (i64) where the f32 constant was: types disagree.
        let mut k = good();
        let add = find(&k, |e| matches!(e, KExpr::Binary(..)));
        let var = find(&k, |e| matches!(e, KExpr::Var(_)));
        let KExpr::Binary(op, a, _) = k.exprs[add].clone() else { unreachable!() };
        k.exprs[add] = KExpr::Binary(op, a, ExprId(var as u32));
        assert!(matches!(problem(&k), Problem::Type { at: Site::Expr(e), .. } if e.0 as usize == add));
    }

    #[test]
    fn inconsistent_types_are_found() {
        let mut k = good();
        let add = find(&k, |e| matches!(e, KExpr::Binary(..)));
        k.types[add] = Ty::I64;
        assert!(matches!(problem(&k), Problem::Type { .. }));
        // Words have no power.
        let mut kb = KernelBuilder::new(0);
        let w = kb.u32(3);
        let mut k = kb.finish("k".into(), vec![], vec![], vec![]);
        k.exprs.push(KExpr::Binary(BinOp::Pow, w, w));
        k.types.push(Ty::U32);
        assert!(matches!(problem(&k), Problem::Type { expected, .. } if expected.contains("Pow")));
        // A load's type is its buffer's compute type.
        let mut k = good();
        k.buffers[0].elem = Elem::I64;
        assert!(matches!(problem(&k), Problem::Type { expected, .. } if expected.contains("I64")));
    }

    #[test]
    fn buffers_params_and_vars_out_of_range_are_found() {
        let mut k = good();
        let load = find(&k, |e| matches!(e, KExpr::Load { .. }));
        let KExpr::Load { index, mask, other, .. } = k.exprs[load].clone() else { unreachable!() };
        k.exprs[load] = KExpr::Load { buf: 9, index, mask, other };
        assert!(matches!(problem(&k), Problem::BufferOutOfRange { buf: 9, buffers: 2, .. }));

        let mut k = good();
        k.stores[0].buf = 5;
        assert!(matches!(problem(&k), Problem::BufferOutOfRange { at: Site::Store(0), buf: 5, .. }));

        let mut k = good();
        k.params.clear();
        assert!(matches!(problem(&k), Problem::ParamOutOfRange { param: 0, params: 0, .. }));

        let mut k = good();
        k.vars = 0;
        assert!(matches!(problem(&k), Problem::VarOutOfRange { var: 0, vars: 0, .. }));
    }

    #[test]
    fn loads_of_outputs_and_stores_to_inputs_are_found() {
        let mut k = good();
        k.buffers.push(BufferParam { value: "z".into(), access: Access::Read, elem: Elem::F32, layout: Default::default() });
        k.stores[0].buf = 2;
        assert!(matches!(problem(&k), Problem::Access { at: Site::Store(0), uses: "writes", declared: Access::Read, .. }));
        let mut k = good();
        k.buffers[0].access = Access::Write;
        assert!(matches!(problem(&k), Problem::Access { uses: "loads", declared: Access::Write, .. }));
    }

    #[test]
    fn roots_past_the_arena_and_mismatched_tables_are_found() {
        let mut k = good();
        let len = k.exprs.len();
        k.stores[0].value = ExprId(len as u32);
        assert_eq!(problem(&k), Problem::OutOfArena { at: Site::Store(0), id: ExprId(len as u32), len });

        let mut k = good();
        k.domain_sizes.push(sym::Expr::int(2));
        assert_eq!(problem(&k), Problem::DomainLengths { domain: 1, sizes: 2 });

        let mut k = good();
        k.types.pop();
        assert!(matches!(problem(&k), Problem::ArenaLengths { .. }));

        let mut k = good();
        k.schedule = Schedule::Tiled { tile: 16, reduce: ExprId(0), a: ExprId(0), b: ExprId(99) };
        assert!(matches!(problem(&k), Problem::OutOfArena { at: Site::Schedule("b"), .. }));
        k.schedule = Schedule::Tiled { tile: 16, reduce: ExprId(0), a: ExprId(0), b: ExprId(0) };
        assert!(matches!(problem(&k), Problem::Type { at: Site::Schedule("reduce"), .. }));

        let mut k = good();
        k.linear = Some(VarId(7));
        assert!(matches!(problem(&k), Problem::VarOutOfRange { at: Site::Linear, var: 7, .. }));
    }

    #[test]
    fn misshapen_state_loops_are_found() {
        let mut kb = KernelBuilder::new(0);
        let var = kb.fresh_var().unwrap();
        let (acc, i) = (kb.carried(var, 0, Ty::I64), kb.var(var));
        let next = kb.binary(BinOp::Add, acc, i).unwrap();
        let (n, zero) = (kb.i64(4), kb.i64(0));
        kb.iterate(var, n, vec![zero], vec![next]).unwrap();
        let k = kb.finish("k".into(), vec![], vec![], vec![]);
        k.validate().unwrap();
        // Ids as the finished (refolded) arena has them.
        let id = |pred: &dyn Fn(&KExpr) -> bool| ExprId(find(&k, pred) as u32);
        let (acc, out) = (id(&|e| matches!(e, KExpr::Carried { .. })), id(&|e| matches!(e, KExpr::LoopOut { .. })));
        let (n, zero) = (id(&|e| *e == KExpr::I64(4)), id(&|e| *e == KExpr::I64(0)));

        let lp = find(&k, |e| matches!(e, KExpr::Loop { .. }));
        let mut bad = k.clone();
        bad.exprs[lp] = KExpr::Loop { var, extent: n, init: vec![zero], next: vec![] };
        assert!(matches!(problem(&bad), Problem::Loop { .. }));

        // A slot read of something that is not a loop.
        let mut bad = k.clone();
        bad.exprs[out.0 as usize] = KExpr::LoopOut { lp: n, slot: 0 };
        assert!(matches!(problem(&bad), Problem::Loop { at: Site::Expr(e), .. } if e == out));

        // A carried slot the loop does not have.
        let mut bad = k.clone();
        bad.exprs[acc.0 as usize] = KExpr::Carried { var, slot: 3 };
        assert!(matches!(problem(&bad), Problem::Loop { at: Site::Expr(e), .. } if e == acc));
    }
}
