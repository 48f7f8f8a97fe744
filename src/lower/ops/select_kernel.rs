//! `kthvalue` and `topk` on short lines, run in the kernel as the very algorithms PyTorch's CPU
//! kernels run (`exec::ops::select` is the reference these follow step for step), so that among
//! equal values the kernel returns the position PyTorch returns. Each is a [`machine`] program:
//!
//! - `kthvalue`: TH's Sedgewick quickselect, median-of-three pivot;
//! - `topk`: libstdc++'s `nth_element` (introselect: median-of-three partitions, heap select
//!   when the depth budget runs out, a final insertion sort) then `sort` of the first `k - 1`,
//!   which for at most 16 elements is an insertion sort.
//!
//! Lines longer than [`MAX_LINE`] keep the stable-rank lowering of `sort.rs`, which agrees with
//! PyTorch except for which of several equal values it picks.

use super::super::kernel::{BinOp, CmpOp, ExprId, KernelBuilder, KernelError, Ty};
use super::machine::{gt_or_nan, run, State};

/// The longest line these programs run on; longer ones cost too much per output element.
pub(super) const MAX_LINE: usize = 16;

type K = Result<ExprId, KernelError>;

fn i(kb: &mut KernelBuilder, v: i64) -> ExprId {
    kb.i64(v)
}

fn add(kb: &mut KernelBuilder, a: ExprId, v: i64) -> K {
    let c = kb.i64(v);
    kb.binary(BinOp::Add, a, c)
}

fn is(kb: &mut KernelBuilder, reg: ExprId, v: i64) -> K {
    let c = kb.i64(v);
    kb.cmp(CmpOp::Eq, reg, c)
}

/// Each program step picks the state of the phase the machine is in.
fn dispatch(kb: &mut KernelBuilder, phase: ExprId, s: &State, phases: Vec<(i64, State)>) -> Result<State, KernelError> {
    let mut out = s.clone();
    for (p, st) in phases.into_iter().rev() {
        let here = is(kb, phase, p)?;
        out = State::choose(kb, here, &st, &out)?;
    }
    Ok(out)
}

/// The initial state over `vals` (positions 0..n) with registers `regs`.
fn start(kb: &mut KernelBuilder, vals: &[ExprId], regs: Vec<ExprId>) -> State {
    State { regs, vals: vals.to_vec(), pos: (0..vals.len()).map(|p| kb.i64(p as i64)).collect() }
}

// ---- kthvalue: Sedgewick's quickselect ----

const Q_TOP: i64 = 0;
const Q_SCAN_I: i64 = 1;
const Q_SCAN_J: i64 = 2;
const Q_SWAP: i64 = 3;
const Q_DONE: i64 = 4;
// Registers: phase, L, R, i, j, pivot.
const QR: [Ty; 5] = [Ty::I64; 5];

/// The `(value, position)` of the `k`-th smallest (from 1) of `vals`, as ATen's `kthvalue`
/// finds it; NaN counts as the largest value.
pub(super) fn kth_smallest(kb: &mut KernelBuilder, vals: &[ExprId], k: i64) -> Result<(ExprId, ExprId), KernelError> {
    let n = vals.len() as i64;
    let ty = kb.ty(vals[0]);
    let target = k - 1;
    let regs = vec![i(kb, Q_TOP), i(kb, 0), i(kb, n - 1), i(kb, 0), i(kb, 0), vals[0]];
    let init = start(kb, vals, regs);
    let mut reg_tys = QR.to_vec();
    reg_tys.push(ty);
    let mut step = |kb: &mut KernelBuilder, s: &State| -> Result<State, KernelError> {
        let (phase, l, r, ii, j, piv) = (s.regs[0], s.regs[1], s.regs[2], s.regs[3], s.regs[4], s.regs[5]);
        let set = |st: &mut State, reg: usize, v: ExprId| st.regs[reg] = v;
        // Top of the loop: done, two elements, or a median-of-three partition set up.
        let mut done = s.clone();
        set(&mut done, 0, i(kb, Q_DONE));
        let mut two = s.clone();
        let (vl, vr) = (two.val(kb, l)?, two.val(kb, r)?);
        let c = gt_or_nan(kb, vl, vr)?;
        two.swap(kb, l, r, c)?;
        set(&mut two, 0, i(kb, Q_DONE));
        let mut g = s.clone();
        let sum = kb.binary(BinOp::Add, l, r)?;
        let two_i = i(kb, 2);
        let p = kb.binary(BinOp::Div, sum, two_i)?;
        let l1 = add(kb, l, 1)?;
        let yes = kb.bool(true);
        g.swap(kb, p, l1, yes)?;
        for (a, b) in [(l1, r), (l, r), (l1, l)] {
            let (va, vb) = (g.val(kb, a)?, g.val(kb, b)?);
            let c = gt_or_nan(kb, va, vb)?;
            g.swap(kb, a, b, c)?;
        }
        set(&mut g, 3, l1);
        set(&mut g, 4, r);
        let pv = g.val(kb, l)?;
        set(&mut g, 5, pv);
        set(&mut g, 0, i(kb, Q_SCAN_I));
        let le = kb.cmp(CmpOp::Le, r, l)?;
        let is_two = kb.cmp(CmpOp::Eq, r, l1)?;
        let top = State::choose(kb, is_two, &two, &g)?;
        let top = State::choose(kb, le, &done, &top)?;
        // `do i++ while (piv > v[i])`, one increment per step.
        let mut si = s.clone();
        let i1 = add(kb, ii, 1)?;
        let vi = si.val(kb, i1)?;
        let more = gt_or_nan(kb, piv, vi)?;
        set(&mut si, 3, i1);
        let (stay, next) = (i(kb, Q_SCAN_I), i(kb, Q_SCAN_J));
        let ph = kb.select(more, stay, next)?;
        set(&mut si, 0, ph);
        // `do j-- while (v[j] > piv)`.
        let mut sj = s.clone();
        let j1 = add(kb, j, -1)?;
        let vj = sj.val(kb, j1)?;
        let more = gt_or_nan(kb, vj, piv)?;
        set(&mut sj, 4, j1);
        let (stay, next) = (i(kb, Q_SCAN_J), i(kb, Q_SWAP));
        let ph = kb.select(more, stay, next)?;
        set(&mut sj, 0, ph);
        // Crossed: the pivot goes to j and the active part shrinks; else swap and scan on.
        let mut crossed = s.clone();
        crossed.swap(kb, l, j, yes)?;
        let t = i(kb, target);
        let (at_or_before, at_or_after) = (kb.cmp(CmpOp::Le, j, t)?, kb.cmp(CmpOp::Ge, j, t)?);
        let nl = kb.select(at_or_before, ii, l)?;
        let jm = add(kb, j, -1)?;
        let nr = kb.select(at_or_after, jm, r)?;
        set(&mut crossed, 1, nl);
        set(&mut crossed, 2, nr);
        set(&mut crossed, 0, i(kb, Q_TOP));
        let mut swapped = s.clone();
        swapped.swap(kb, ii, j, yes)?;
        set(&mut swapped, 0, i(kb, Q_SCAN_I));
        let is_crossed = kb.cmp(CmpOp::Lt, j, ii)?;
        let sw = State::choose(kb, is_crossed, &crossed, &swapped)?;
        dispatch(kb, phase, s, vec![(Q_TOP, top), (Q_SCAN_I, si), (Q_SCAN_J, sj), (Q_SWAP, sw)])
    };
    // Each partition round takes at most (R - L) + 4 steps and removes at least one element.
    let steps = n * n + 4 * n + 8;
    let end = run(kb, init, &reg_tys, ty, (steps, None), &mut step)?;
    let t = target.clamp(0, n - 1) as usize;
    Ok((end.vals[t], end.pos[t]))
}

// ---- topk: libstdc++'s nth_element, then an insertion sort of the first k - 1 ----

const T_TOP: i64 = 0;
const T_LO: i64 = 1;
const T_HI: i64 = 2;
const T_INS_START: i64 = 3;
const T_INS_OUTER: i64 = 4;
const T_INS_INNER: i64 = 5;
const T_HS_MAKE: i64 = 6;
const T_HS_MAKE_NEXT: i64 = 7;
const T_HS_SCAN: i64 = 8;
const T_HS_SCAN_NEXT: i64 = 9;
const T_ADJ_DOWN: i64 = 10;
const T_ADJ_UP: i64 = 11;
const T_AFTER_NTH: i64 = 12;
const T_DONE: i64 = 13;

// Registers (i64 but the last, which holds a value of the line's type).
const PHASE: usize = 0;
const FIRST: usize = 1;
const LAST: usize = 2;
const DEPTH: usize = 3;
const LO: usize = 4;
const HI: usize = 5;
const INS_FIRST: usize = 6;
const INS_LAST: usize = 7;
const INS_I: usize = 8;
const HOLE: usize = 9;
const RET: usize = 10;
const HS_PARENT: usize = 11;
const HS_I: usize = 12;
const ADJ_TOP: usize = 13;
const ADJ_CHILD: usize = 14;
const ADJ_LEN: usize = 15;
const ADJ_RET: usize = 16;
const VAL_POS: usize = 17;
const VAL: usize = 18;

impl State {
    /// Moves the element at `to` to `from` and shifts `[from, to)` up by one, where `when` holds
    /// (the front insertion of libstdc++'s insertion sort).
    fn rotate_right(&mut self, kb: &mut KernelBuilder, from: ExprId, to: ExprId, when: ExprId) -> Result<(), KernelError> {
        let moved = self.get(kb, to)?;
        let old = self.clone();
        for q in 0..self.vals.len() {
            let qq = kb.i64(q as i64);
            let at_front = kb.cmp(CmpOp::Eq, qq, from)?;
            let (mut v, mut p) = (old.vals[q], old.pos[q]);
            if q > 0 {
                let after = kb.cmp(CmpOp::Gt, qq, from)?;
                let upto = kb.cmp(CmpOp::Le, qq, to)?;
                let shifted = kb.and(after, upto)?;
                v = kb.select(shifted, old.vals[q - 1], v)?;
                p = kb.select(shifted, old.pos[q - 1], p)?;
            }
            v = kb.select(at_front, moved.0, v)?;
            p = kb.select(at_front, moved.1, p)?;
            self.vals[q] = kb.select(when, v, old.vals[q])?;
            self.pos[q] = kb.select(when, p, old.pos[q])?;
        }
        Ok(())
    }
}

/// The positions of the `k` largest (smallest unless `largest`) of `vals`, in the order ATen's
/// CPU `topk` returns them (`exec::ops::select::topk_order`), for `k * 64 > n` (always so on
/// lines of at most [`MAX_LINE`], where `std::sort` of `k - 1` elements is an insertion sort).
pub(super) fn topk_positions(kb: &mut KernelBuilder, vals: &[ExprId], k: i64, largest: bool, sorted: bool) -> Result<Vec<(ExprId, ExprId)>, KernelError> {
    let n = vals.len() as i64;
    let ty = kb.ty(vals[0]);
    let nth = k - 1;
    // `std::__lg(n)`: the depth budget of introselect is twice it.
    let lg = 63 - i64::from((n.max(1) as u64).leading_zeros());
    let mut regs: Vec<ExprId> = [T_TOP, 0, n, 2 * lg].iter().map(|&v| kb.i64(v)).collect();
    regs.extend((4..VAL).map(|_| kb.i64(0)));
    regs.push(vals[0]);
    let init = start(kb, vals, regs);
    let mut reg_tys = vec![Ty::I64; VAL];
    reg_tys.push(ty);
    let comp = move |kb: &mut KernelBuilder, a: ExprId, b: ExprId| if largest { gt_or_nan(kb, a, b) } else { gt_or_nan(kb, b, a) };
    let mut step = |kb: &mut KernelBuilder, s: &State| -> Result<State, KernelError> {
        let r = |x: usize| s.regs[x];
        let f = r(FIRST);
        let yes = kb.bool(true);
        let goto = |st: &mut State, kb: &mut KernelBuilder, p: i64| st.regs[PHASE] = kb.i64(p);
        let mut phases = Vec::new();

        // T_TOP: partition while more than 3 remain (heap select once the depth is spent),
        // then the final insertion sort of the range.
        {
            let size = kb.binary(BinOp::Sub, r(LAST), f)?;
            let three = kb.i64(3);
            let big = kb.cmp(CmpOp::Gt, size, three)?;
            let spent = is(kb, r(DEPTH), 0)?;
            // Heap select over [first, nth + 1).
            let mut heap = s.clone();
            let nth1 = kb.i64(nth + 1);
            let len = kb.binary(BinOp::Sub, nth1, f)?;
            let two = kb.i64(2);
            let tiny = kb.cmp(CmpOp::Lt, len, two)?;
            let lm2 = add(kb, len, -2)?;
            let parent = kb.binary(BinOp::Div, lm2, two)?;
            heap.regs[HS_PARENT] = parent;
            heap.regs[HS_I] = nth1;
            let (scan, make) = (kb.i64(T_HS_SCAN), kb.i64(T_HS_MAKE));
            heap.regs[PHASE] = kb.select(tiny, scan, make)?;
            // One median-of-three partition set up.
            let mut part = s.clone();
            part.regs[DEPTH] = add(kb, r(DEPTH), -1)?;
            let a = add(kb, f, 1)?;
            let half = kb.binary(BinOp::Div, size, two)?;
            let b = kb.binary(BinOp::Add, f, half)?;
            let c = add(kb, r(LAST), -1)?;
            let (va, vb, vc) = (s.val(kb, a)?, s.val(kb, b)?, s.val(kb, c)?);
            let (ab, bc, ac) = (comp(kb, va, vb)?, comp(kb, vb, vc)?, comp(kb, va, vc)?);
            let if_ab = kb.select(ac, c, a)?;
            let if_ab = kb.select(bc, b, if_ab)?;
            let if_not = kb.select(bc, c, b)?;
            let if_not = kb.select(ac, a, if_not)?;
            let pick = kb.select(ab, if_ab, if_not)?;
            part.swap(kb, f, pick, yes)?;
            part.regs[LO] = a;
            part.regs[HI] = r(LAST);
            goto(&mut part, kb, T_LO);
            // The final insertion sort, returning to T_AFTER_NTH.
            let mut fin = s.clone();
            fin.regs[INS_FIRST] = f;
            fin.regs[INS_LAST] = r(LAST);
            fin.regs[RET] = kb.i64(T_AFTER_NTH);
            goto(&mut fin, kb, T_INS_START);
            let work = State::choose(kb, spent, &heap, &part)?;
            phases.push((T_TOP, State::choose(kb, big, &work, &fin)?));
        }
        // T_LO: `while (comp(*lo, pivot)) ++lo; --hi;`
        {
            let mut st = s.clone();
            let (vlo, piv) = (s.val(kb, r(LO))?, s.val(kb, f)?);
            let before = comp(kb, vlo, piv)?;
            let lo1 = add(kb, r(LO), 1)?;
            let hi1 = add(kb, r(HI), -1)?;
            st.regs[LO] = kb.select(before, lo1, r(LO))?;
            st.regs[HI] = kb.select(before, r(HI), hi1)?;
            let (stay, next) = (kb.i64(T_LO), kb.i64(T_HI));
            st.regs[PHASE] = kb.select(before, stay, next)?;
            phases.push((T_LO, st));
        }
        // T_HI: `while (comp(pivot, *hi)) --hi;` then the cut, or a swap and on.
        {
            let (vhi, piv) = (s.val(kb, r(HI))?, s.val(kb, f)?);
            let after = comp(kb, piv, vhi)?;
            let mut down = s.clone();
            down.regs[HI] = add(kb, r(HI), -1)?;
            let crossed = kb.cmp(CmpOp::Ge, r(LO), r(HI))?;
            let mut cut = s.clone();
            let nth_k = kb.i64(nth);
            let left = kb.cmp(CmpOp::Le, r(LO), nth_k)?;
            cut.regs[FIRST] = kb.select(left, r(LO), f)?;
            cut.regs[LAST] = kb.select(left, r(LAST), r(LO))?;
            goto(&mut cut, kb, T_TOP);
            let mut swap = s.clone();
            swap.swap(kb, r(LO), r(HI), yes)?;
            swap.regs[LO] = add(kb, r(LO), 1)?;
            goto(&mut swap, kb, T_LO);
            let stop = State::choose(kb, crossed, &cut, &swap)?;
            phases.push((T_HI, State::choose(kb, after, &down, &stop)?));
        }
        // Insertion sort of [INS_FIRST, INS_LAST), then back to RET.
        {
            let mut st = s.clone();
            st.regs[INS_I] = add(kb, r(INS_FIRST), 1)?;
            goto(&mut st, kb, T_INS_OUTER);
            phases.push((T_INS_START, st));
        }
        {
            let (ii, fi) = (r(INS_I), r(INS_FIRST));
            let end = kb.cmp(CmpOp::Ge, ii, r(INS_LAST))?;
            let mut ret = s.clone();
            ret.regs[PHASE] = r(RET);
            let (vi, pi) = s.get(kb, ii)?;
            let vf = s.val(kb, fi)?;
            let front = comp(kb, vi, vf)?;
            let mut rot = s.clone();
            rot.rotate_right(kb, fi, ii, yes)?;
            rot.regs[INS_I] = add(kb, ii, 1)?;
            let mut ins = s.clone();
            ins.regs[VAL] = vi;
            ins.regs[VAL_POS] = pi;
            ins.regs[HOLE] = ii;
            goto(&mut ins, kb, T_INS_INNER);
            let go = State::choose(kb, front, &rot, &ins)?;
            phases.push((T_INS_OUTER, State::choose(kb, end, &ret, &go)?));
        }
        {
            let h = r(HOLE);
            let h1 = add(kb, h, -1)?;
            let prev = s.get(kb, h1)?;
            let shift = comp(kb, r(VAL), prev.0)?;
            let mut mv = s.clone();
            mv.set(kb, h, prev, yes)?;
            mv.regs[HOLE] = h1;
            let mut put = s.clone();
            put.set(kb, h, (r(VAL), r(VAL_POS)), yes)?;
            put.regs[INS_I] = add(kb, r(INS_I), 1)?;
            goto(&mut put, kb, T_INS_OUTER);
            phases.push((T_INS_INNER, State::choose(kb, shift, &mv, &put)?));
        }
        // Heap select: make_heap over [first, nth + 1), then a pass over the rest.
        let heap_len = {
            let nth1 = kb.i64(nth + 1);
            kb.binary(BinOp::Sub, nth1, f)?
        };
        {
            let mut st = s.clone();
            let at = kb.binary(BinOp::Add, f, r(HS_PARENT))?;
            let (v, p) = s.get(kb, at)?;
            st.regs[VAL] = v;
            st.regs[VAL_POS] = p;
            st.regs[ADJ_TOP] = r(HS_PARENT);
            st.regs[HOLE] = r(HS_PARENT);
            st.regs[ADJ_CHILD] = r(HS_PARENT);
            st.regs[ADJ_LEN] = heap_len;
            st.regs[ADJ_RET] = kb.i64(T_HS_MAKE_NEXT);
            goto(&mut st, kb, T_ADJ_DOWN);
            phases.push((T_HS_MAKE, st));
        }
        {
            let last_parent = is(kb, r(HS_PARENT), 0)?;
            let mut scan = s.clone();
            scan.regs[HS_I] = kb.i64(nth + 1);
            goto(&mut scan, kb, T_HS_SCAN);
            let mut more = s.clone();
            more.regs[HS_PARENT] = add(kb, r(HS_PARENT), -1)?;
            goto(&mut more, kb, T_HS_MAKE);
            phases.push((T_HS_MAKE_NEXT, State::choose(kb, last_parent, &scan, &more)?));
        }
        {
            let hi = r(HS_I);
            let end = kb.cmp(CmpOp::Ge, hi, r(LAST))?;
            let mut fin = s.clone();
            let nth_k = kb.i64(nth);
            fin.swap(kb, f, nth_k, yes)?;
            goto(&mut fin, kb, T_AFTER_NTH);
            let (vi, pi) = s.get(kb, hi)?;
            let top = s.get(kb, f)?;
            let enters = comp(kb, vi, top.0)?;
            let mut pop = s.clone();
            pop.set(kb, hi, top, yes)?;
            pop.regs[VAL] = vi;
            pop.regs[VAL_POS] = pi;
            let zero = kb.i64(0);
            pop.regs[ADJ_TOP] = zero;
            pop.regs[HOLE] = zero;
            pop.regs[ADJ_CHILD] = zero;
            pop.regs[ADJ_LEN] = heap_len;
            pop.regs[ADJ_RET] = kb.i64(T_HS_SCAN_NEXT);
            goto(&mut pop, kb, T_ADJ_DOWN);
            let mut skip = s.clone();
            skip.regs[HS_I] = add(kb, hi, 1)?;
            let go = State::choose(kb, enters, &pop, &skip)?;
            phases.push((T_HS_SCAN, State::choose(kb, end, &fin, &go)?));
        }
        {
            let mut st = s.clone();
            st.regs[HS_I] = add(kb, r(HS_I), 1)?;
            goto(&mut st, kb, T_HS_SCAN);
            phases.push((T_HS_SCAN_NEXT, st));
        }
        // adjust_heap: the hole sinks along the children that come first...
        {
            let (len, child, hole) = (r(ADJ_LEN), r(ADJ_CHILD), r(HOLE));
            let two = kb.i64(2);
            let lm1 = add(kb, len, -1)?;
            let bound = kb.binary(BinOp::Div, lm1, two)?;
            let sinking = kb.cmp(CmpOp::Lt, child, bound)?;
            let c1 = add(kb, child, 1)?;
            let right = kb.binary(BinOp::Mul, two, c1)?;
            let left = add(kb, right, -1)?;
            let (ar, al) = (kb.binary(BinOp::Add, f, right)?, kb.binary(BinOp::Add, f, left)?);
            let (vr, vl) = (s.val(kb, ar)?, s.val(kb, al)?);
            let take_left = comp(kb, vr, vl)?;
            let ch = kb.select(take_left, left, right)?;
            let at_ch = kb.binary(BinOp::Add, f, ch)?;
            let at_hole = kb.binary(BinOp::Add, f, hole)?;
            let mut sink = s.clone();
            let moved = s.get(kb, at_ch)?;
            sink.set(kb, at_hole, moved, yes)?;
            sink.regs[HOLE] = ch;
            sink.regs[ADJ_CHILD] = ch;
            // ...then, for an even length, the last lone child.
            let rem = kb.binary(BinOp::Rem, len, two)?;
            let even = is(kb, rem, 0)?;
            let lm2 = add(kb, len, -2)?;
            let lone_at = kb.binary(BinOp::Div, lm2, two)?;
            let is_lone = kb.cmp(CmpOp::Eq, child, lone_at)?;
            let lone = kb.and(even, is_lone)?;
            let mut end = s.clone();
            let at_left = kb.binary(BinOp::Add, f, left)?;
            let last_child = s.get(kb, at_left)?;
            end.set(kb, at_hole, last_child, lone)?;
            end.regs[HOLE] = kb.select(lone, left, hole)?;
            end.regs[ADJ_CHILD] = kb.select(lone, right, child)?;
            goto(&mut end, kb, T_ADJ_UP);
            phases.push((T_ADJ_DOWN, State::choose(kb, sinking, &sink, &end)?));
        }
        // ...and the value rises back up from the hole (`__push_heap`).
        {
            let hole = r(HOLE);
            let two = kb.i64(2);
            let hm1 = add(kb, hole, -1)?;
            let parent = kb.binary(BinOp::Div, hm1, two)?;
            let above = kb.cmp(CmpOp::Gt, hole, r(ADJ_TOP))?;
            let at_parent = kb.binary(BinOp::Add, f, parent)?;
            let pv = s.get(kb, at_parent)?;
            let smaller = comp(kb, pv.0, r(VAL))?;
            let rise = kb.and(above, smaller)?;
            let at_hole = kb.binary(BinOp::Add, f, hole)?;
            let mut up = s.clone();
            up.set(kb, at_hole, pv, yes)?;
            up.regs[HOLE] = parent;
            let mut put = s.clone();
            put.set(kb, at_hole, (r(VAL), r(VAL_POS)), yes)?;
            put.regs[PHASE] = r(ADJ_RET);
            phases.push((T_ADJ_UP, State::choose(kb, rise, &up, &put)?));
        }
        // After nth_element: `std::sort` of the first k - 1 (an insertion sort here).
        {
            let mut st = s.clone();
            if sorted && nth > 0 {
                st.regs[INS_FIRST] = kb.i64(0);
                st.regs[INS_LAST] = kb.i64(nth);
                st.regs[RET] = kb.i64(T_DONE);
                goto(&mut st, kb, T_INS_START);
            } else {
                goto(&mut st, kb, T_DONE);
            }
            phases.push((T_AFTER_NTH, st));
        }
        dispatch(kb, r(PHASE), s, phases)
    };
    let steps = 2 * n * n + 8 * n + 16;
    // Sorted picks of distinct values are decided by rank; the replay runs for ties and NaN.
    let by_rank = if sorted { Some(super::rank_pick::rank_picks(kb, vals, k.clamp(0, n) as usize, largest)?) } else { None };
    let end = run(kb, init, &reg_tys, ty, (steps, by_rank.as_ref().map(|r| r.distinct)), &mut step)?;
    (0..k.clamp(0, n) as usize)
        .map(|t| match &by_rank {
            Some(r) => Ok((kb.select(r.distinct, r.picks[t].0, end.vals[t])?, kb.select(r.distinct, r.picks[t].1, end.pos[t])?)),
            None => Ok((end.vals[t], end.pos[t])),
        })
        .collect()
}
