//! Small sequential programs over a short line, run inside a kernel as a state loop: the loop's
//! carried slots hold some scalar registers and the line itself (values and their positions),
//! and each step of the loop performs one step of the program — every branch of it computed,
//! selects keeping the one the program takes. A read at a data-dependent position is a chain
//! of selects over the line, a write a select per slot, so a step costs O(n) and the whole
//! program O(n · steps): fit for the short lines (a few dozen elements) of selections whose
//! tie-breaking depends on the exact sequence of swaps PyTorch's CPU code makes
//! (`select_kernel`).

use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError, Ty, VarId};

type K = Result<ExprId, KernelError>;

/// The machine's state at one step: registers, then the line's values and positions.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct State {
    pub regs: Vec<ExprId>,
    pub vals: Vec<ExprId>,
    pub pos: Vec<ExprId>,
}

impl State {
    fn slots(&self) -> Vec<ExprId> {
        self.regs.iter().chain(&self.vals).chain(&self.pos).copied().collect()
    }

    /// `vals[at]` and `pos[at]` for a data-dependent `at` (the last element past the end).
    pub fn get(&self, kb: &mut KernelBuilder, at: ExprId) -> Result<(ExprId, ExprId), KernelError> {
        let n = self.vals.len();
        let (mut v, mut p) = (self.vals[n - 1], self.pos[n - 1]);
        for k in (0..n - 1).rev() {
            let kk = kb.i64(k as i64);
            let here = kb.cmp(CmpOp::Eq, at, kk)?;
            v = kb.select(here, self.vals[k], v)?;
            p = kb.select(here, self.pos[k], p)?;
        }
        Ok((v, p))
    }

    pub fn val(&self, kb: &mut KernelBuilder, at: ExprId) -> K {
        Ok(self.get(kb, at)?.0)
    }

    /// Writes `(v, p)` at `at` where `when` holds.
    pub fn set(&mut self, kb: &mut KernelBuilder, at: ExprId, (v, p): (ExprId, ExprId), when: ExprId) -> Result<(), KernelError> {
        for k in 0..self.vals.len() {
            let kk = kb.i64(k as i64);
            let here = kb.cmp(CmpOp::Eq, at, kk)?;
            let here = kb.and(here, when)?;
            self.vals[k] = kb.select(here, v, self.vals[k])?;
            self.pos[k] = kb.select(here, p, self.pos[k])?;
        }
        Ok(())
    }

    /// Swaps the elements at `a` and `b` where `when` holds.
    pub fn swap(&mut self, kb: &mut KernelBuilder, a: ExprId, b: ExprId, when: ExprId) -> Result<(), KernelError> {
        let (ea, eb) = (self.get(kb, a)?, self.get(kb, b)?);
        let old = self.clone();
        for k in 0..self.vals.len() {
            let kk = kb.i64(k as i64);
            let at_a = kb.cmp(CmpOp::Eq, a, kk)?;
            let at_b = kb.cmp(CmpOp::Eq, b, kk)?;
            let v = kb.select(at_b, ea.0, old.vals[k])?;
            let v = kb.select(at_a, eb.0, v)?;
            let p = kb.select(at_b, ea.1, old.pos[k])?;
            let p = kb.select(at_a, eb.1, p)?;
            self.vals[k] = kb.select(when, v, old.vals[k])?;
            self.pos[k] = kb.select(when, p, old.pos[k])?;
        }
        Ok(())
    }

    /// `when ? a : b`, slot by slot.
    pub fn choose(kb: &mut KernelBuilder, when: ExprId, a: &State, b: &State) -> Result<State, KernelError> {
        let pick = |kb: &mut KernelBuilder, x: &[ExprId], y: &[ExprId]| -> Result<Vec<ExprId>, KernelError> {
            x.iter().zip(y).map(|(&p, &q)| kb.select(when, p, q)).collect()
        };
        Ok(State { regs: pick(kb, &a.regs, &b.regs)?, vals: pick(kb, &a.vals, &b.vals)?, pos: pick(kb, &a.pos, &b.pos)? })
    }
}

/// `x` strictly greater than `y`, NaN above every number (ATen's `gt_or_nan`).
pub(super) fn gt_or_nan(kb: &mut KernelBuilder, x: ExprId, y: ExprId) -> K {
    let gt = kb.cmp(CmpOp::Gt, x, y)?;
    if !kb.ty(x).is_float() {
        return Ok(gt);
    }
    let (nx, ny) = (kb.cmp(CmpOp::Ne, x, x)?, kb.cmp(CmpOp::Ne, y, y)?);
    let not_ny = kb.unary(super::super::kernel::UnOp::Not, ny);
    let nan_first = kb.and(nx, not_ny)?;
    kb.binary(BinOp::Or, nan_first, gt)
}

/// Runs `step` `steps` times from `init` in a state loop (registers of types `reg_tys`, the
/// line of value type `ty`), or not at all where `skip` holds (a line another way decides:
/// the loop's extent is data); returns the final state.
pub(super) fn run(
    kb: &mut KernelBuilder,
    init: State,
    reg_tys: &[Ty],
    ty: Ty,
    (steps, skip): (i64, Option<ExprId>),
    step: &mut dyn FnMut(&mut KernelBuilder, &State) -> Result<State, KernelError>,
) -> Result<State, KernelError> {
    let var: VarId = kb.fresh_var()?;
    let (r, n) = (init.regs.len(), init.vals.len());
    let cur = State {
        regs: (0..r).map(|k| kb.carried(var, k as u32, reg_tys[k])).collect(),
        vals: (0..n).map(|k| kb.carried(var, (r + k) as u32, ty)).collect(),
        pos: (0..n).map(|k| kb.carried(var, (r + n + k) as u32, Ty::I64)).collect(),
    };
    let next = step(kb, &cur)?;
    let mut extent = kb.i64(steps);
    if let Some(skip) = skip {
        let none = kb.i64(0);
        extent = kb.select(skip, none, extent)?;
    }
    let out = kb.iterate(var, extent, init.slots(), next.slots())?;
    Ok(State { regs: out[..r].to_vec(), vals: out[r..r + n].to_vec(), pos: out[r + n..].to_vec() })
}
