//! Split reductions: few long rows folded by many work-groups, in two kernels.
//!
//! Why: the row schedule gives a row one work-group. A full `sum()` (one row) then runs on one
//! group — one core of a CPU, one of hundreds of execution units of an Intel GPU — whatever
//! the size of its input. Split, each row is cut into `S` chunks: the first kernel (the
//! *partials*) folds every chunk of every row on a group of its own and writes one partial per
//! chunk to a scratch buffer `[rows, S]`; the second (the *finish*) is the original kernel
//! with each split statistic read back as the fold of its row's `S` partials, so its epilogue
//! (a mean's division, a norm's square root) runs once per row as before. Inductor splits
//! reductions the same way.
//!
//! `S` is a size expression, evaluated at each launch from the actual sizes: enough chunks for
//! about [`SPLIT_GROUPS`] groups in all, each folding at least [`MIN_CHUNK`] elements, and 1 —
//! the whole row in one chunk — when the row is short or the rows alone fill the device.
//!
//! Split only: kernels with one output per row (a row's statistics are its outputs' only
//! inputs besides the row coordinates), whose statistics are float32 sums, maxima or minima
//! over one extent and independent of each other (a variance's second fold reads the first's
//! mean and is not split), on rows that are not statically short or statically many.

use super::{Access, BinOp, Elem, ExprId, KExpr, Kernel, KernelBuilder, RedOp, Store, Ty, VarId};
use crate::lower::schedule::{self, Schedule};
use crate::sym::Expr;

/// Work-groups a split launch aims for, rows times chunks: every hardware thread of a CPU and
/// every execution unit of a mid-size Intel GPU get one.
pub const SPLIT_GROUPS: i64 = 256;
/// Fewest elements a chunk folds: 16 lanes × 256 elements each, so a group's start-up and
/// its partial's round trip stay small against its fold.
pub const MIN_CHUNK: i64 = 4096;

/// The two kernels of a split reduction and the scratch buffers between them.
#[derive(Debug)]
pub struct Split {
    pub partials: Kernel,
    pub finish: Kernel,
    /// Name and sizes (float32, contiguous) of each scratch buffer: `[row sizes…, S]`.
    pub scratch: Vec<(String, Vec<Expr>)>,
}

/// `k` as a split reduction, or `None` when it is not split. `name(i)` names the scratch buffer
/// of statistic `i` (called once per statistic, only when `k` is split).
pub fn split(k: &Kernel, mut name: impl FnMut(usize) -> String) -> Option<Split> {
    let c = Candidate::of(k)?;
    let names: Vec<String> = (0..c.tops.len()).map(&mut name).collect();
    let partials = partials_kernel(k, &c, &names)?;
    let finish = finish_kernel(k, &c, &names)?;
    let mut sizes = k.domain_sizes.clone();
    sizes.push(c.chunks.clone());
    let scratch = names.into_iter().map(|n| (n, sizes.clone())).collect();
    Some(Split { partials, finish, scratch })
}

/// A kernel that qualifies, with its statistics and the chunk count and size.
struct Candidate {
    /// The row statistics, in arena order.
    tops: Vec<ExprId>,
    /// Per statistic, its fold and the folds nested directly in its body with the same
    /// operation (a `sum()` over several dims folds one loop per dim): one flat range of `n`
    /// elements, split as one.
    chains: Vec<Vec<ExprId>>,
    /// The loop extents of every chain, outermost first (the same for all).
    extents: Vec<Expr>,
    /// `n`, the product of `extents`.
    n: Expr,
    /// `S`, chunks per row.
    chunks: Expr,
    /// `C = ⌈n / S⌉`, elements per chunk.
    chunk: Expr,
}

impl Candidate {
    fn of(k: &Kernel) -> Option<Candidate> {
        let rank = k.domain.len();
        // Matrix products keep their tiles; state loops (sorts, scans) do not split; coordinates
        // already rewritten as digits of a linear index are no row coordinates any more.
        if k.linear.is_some() || matches!(k.schedule, Schedule::Tiled { .. } | Schedule::Columns { .. } | Schedule::Depthwise { .. }) || k.exprs.iter().any(|e| matches!(e, KExpr::Loop { .. })) {
            return None;
        }
        let free = k.free_vars();
        let tops = schedule::top_reduces(k, &free);
        // One output per row: every statistic depends on all output coordinates.
        let coords = schedule::coord_mask(k);
        let per_output = |r: &ExprId| (128 - (free[r.0 as usize] & coords).leading_zeros()) as usize == rank;
        let splittable = |r: &ExprId| matches!(k.expr(*r), KExpr::Reduce { op: RedOp::Sum | RedOp::Max | RedOp::Min, .. }) && k.ty(*r) == Ty::F32;
        if tops.is_empty() || !tops.iter().all(|r| splittable(r) && per_output(r)) || tops.iter().any(|r| reaches_any(k, *r, &tops)) {
            return None;
        }
        let chains: Vec<Vec<ExprId>> = tops.iter().map(|r| chain(k, *r)).collect();
        let extent_ids = |c: &Vec<ExprId>| c.iter().map(|r| if let KExpr::Reduce { extent, .. } = k.expr(*r) { *extent } else { *r }).collect::<Vec<_>>();
        let ids = extent_ids(&chains[0]);
        if chains.iter().any(|c| extent_ids(c) != ids) {
            return None;
        }
        let kb = KernelBuilder::reopen(k);
        let extents: Vec<Expr> = ids.iter().map(|e| kb.sym_size(*e)).collect::<Option<_>>()?;
        let n = extents.iter().fold(Expr::int(1), |a, e| Expr::mul(a, e.clone())).simplify();
        let rows = k.domain_sizes.iter().fold(Expr::int(1), |a, s| Expr::mul(a, s.clone())).simplify();
        if n.as_int().is_some_and(|n| n < 2 * MIN_CHUNK) || rows.as_int().is_some_and(|r| r >= SPLIT_GROUPS) {
            return None;
        }
        // With a dynamic row count, only kernels the row schedule already folds by groups: a
        // convolution's strided channel loop (one work-item per output) is left as it is. A
        // static few rows are split whatever their schedule (a `sum()` over several dims is
        // one work-item's serial loop otherwise); the partials kernel must then read its
        // chunks contiguously ([`partials_kernel`]).
        if rows.as_int().is_none() && !matches!(k.schedule, Schedule::Rows { coop: true, .. }) {
            return None;
        }
        // S = max(1, min(n / MIN_CHUNK, ⌈SPLIT_GROUPS / rows⌉))
        let by_len = Expr::floordiv(n.clone(), Expr::int(MIN_CHUNK));
        // (An empty batch has no rows: the divisor stays positive so the sizes still evaluate.)
        let by_rows = Expr::floordiv(Expr::add(Expr::int(SPLIT_GROUPS - 1), rows.clone()), Expr::max(rows, Expr::int(1)));
        let chunks = Expr::max(Expr::int(1), Expr::min(by_len, by_rows)).simplify();
        if chunks.as_int() == Some(1) {
            return None;
        }
        let chunk = Expr::floordiv(Expr::add(n.clone(), Expr::sub(chunks.clone(), Expr::int(1))), chunks.clone()).simplify();
        Some(Candidate { tops, chains, extents, n, chunks, chunk })
    }

    /// Depth of fold `r` in a chain (0 for a statistic), if it is in one.
    fn depth(&self, r: ExprId) -> Option<usize> {
        self.chains.iter().find_map(|c| c.iter().position(|x| *x == r))
    }
}

/// Fold `r` and the folds of the same operation nested directly in its body.
fn chain(k: &Kernel, r: ExprId) -> Vec<ExprId> {
    let mut out = vec![r];
    let KExpr::Reduce { op, .. } = *k.expr(r) else { return out };
    while let KExpr::Reduce { body, .. } = *k.expr(*out.last().expect("not empty")) {
        match *k.expr(body) {
            KExpr::Reduce { op: inner, .. } if inner == op && k.ty(body) == Ty::F32 => out.push(body),
            _ => break,
        }
    }
    out
}

/// Whether another of `tops` is inside the body of `r` (the statistics depend on each other).
fn reaches_any(k: &Kernel, r: ExprId, tops: &[ExprId]) -> bool {
    let mut stack = k.children(r);
    let mut seen = vec![false; k.exprs.len()];
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.0 as usize], true) {
            continue;
        }
        if tops.contains(&e) {
            return true;
        }
        stack.extend(k.children(e));
    }
    false
}

/// `k` with every variable from `from` on renumbered one up, freeing `VarId(from)` for a new
/// output coordinate.
fn shift_vars(k: &Kernel, from: u32) -> Kernel {
    let up = |v: VarId| if v.0 >= from { VarId(v.0 + 1) } else { v };
    let mut k = k.clone();
    for e in &mut k.exprs {
        match e {
            KExpr::Var(v) | KExpr::Reduce { var: v, .. } | KExpr::Loop { var: v, .. } | KExpr::Carried { var: v, .. } => *v = up(*v),
            _ => {}
        }
    }
    k.linear = k.linear.map(up);
    k.vars += 1;
    k
}

/// The first kernel: over `[row coordinates…, s]`, chunk `s` of every statistic of the row
/// (`j = s·C + t` for `t` below `min(C, n − s·C)`), stored to its scratch buffer.
fn partials_kernel(k: &Kernel, c: &Candidate, names: &[String]) -> Option<Kernel> {
    let rank = k.domain.len() as u32;
    let shifted = shift_vars(k, rank);
    let mut kb = KernelBuilder::reopen(&shifted);
    let s = VarId(rank);
    let t = kb.fresh_var().ok()?;
    kb.set_var_extent(s, c.chunks.clone());
    kb.set_var_extent(t, c.chunk.clone());
    // The variable of the fold at depth `d` of a chain, for every chain.
    let chain_vars: Vec<(VarId, usize)> = c
        .chains
        .iter()
        .flat_map(|ch| ch.iter().enumerate())
        .filter_map(|(d, r)| match shifted.expr(*r) {
            KExpr::Reduce { var, .. } => Some((*var, d)),
            _ => None,
        })
        .collect();
    // Nodes built during the rebuild live in the new arena: sizes are interned there afresh.
    let chunk_start = |kb: &mut KernelBuilder| {
        let (sv, chunk) = (kb.var(s), kb.size(&c.chunk));
        kb.binary(BinOp::Mul, sv, chunk).ok()
    };
    // The chain's variables become digits of one flat index `f` (row-major over the chain's
    // extents), first as a variable of its own: the index folds see `(f / P)·P + f % P` and
    // join it back into `f`. Only then is `f` replaced by `s·C + t`, which a divisor of `C`
    // would otherwise split into pieces the folds do not join again.
    let f = kb.fresh_var().ok()?;
    kb.set_var_extent(f, c.n.clone());
    let digit = |kb: &mut KernelBuilder, d: usize| {
        let mut q = kb.var(f);
        for e in c.extents[d + 1..].iter().rev() {
            let e = kb.size(e);
            q = kb.binary(BinOp::Div, q, e).ok()?;
        }
        if d == 0 {
            return Some(q);
        }
        let e = kb.size(&c.extents[d]);
        kb.binary(BinOp::Rem, q, e).ok()
    };
    let flat = kb.rebuild_with(&mut |kb, old, e| match e {
        KExpr::Var(v) => chain_vars.iter().find(|(w, _)| w == v).and_then(|(_, d)| digit(kb, *d)),
        KExpr::Reduce { op, body, .. } => match c.depth(old)? {
            // An inner fold of a chain is gone: its variable is a digit of `f`.
            d if d > 0 => Some(*body),
            _ => {
                // Chunk `s` holds min(C, n − s·C) elements, none once `s·C` passes the end.
                let start = chunk_start(kb)?;
                let n = kb.size(&c.n);
                let left = kb.binary(BinOp::Sub, n, start).ok()?;
                let chunk = kb.size(&c.chunk);
                let len = kb.binary(BinOp::Min, chunk, left).ok()?;
                let zero = kb.i64(0);
                let len = kb.binary(BinOp::Max, len, zero).ok()?;
                kb.reduce(*op, t, len, *body).ok()
            }
        },
        _ => None,
    });
    let placed = kb.rebuild_with(&mut |kb, _, e| match e {
        KExpr::Var(v) if *v == f => {
            let start = chunk_start(kb)?;
            let tv = kb.var(t);
            kb.binary(BinOp::Add, start, tv).ok()
        }
        _ => None,
    });
    let map: Vec<ExprId> = flat.iter().map(|x| placed[x.0 as usize]).collect();
    let stores = c
        .tops
        .iter()
        .zip(names)
        .map(|(r, name)| Store { buf: kb.buffer_of(name, Access::Write, Elem::F32), value: map[r.0 as usize] })
        .collect();
    let mut domain: Vec<ExprId> = shifted.domain.iter().map(|d| map[d.0 as usize]).collect();
    domain.push(kb.size(&c.chunks));
    let chunk = kb.size(&c.chunk);
    let mut sizes = k.domain_sizes.clone();
    sizes.push(c.chunks.clone());
    let built = kb.into_kernel(format!("{}_partials", k.name), sizes, domain, stores);
    let (mut out, ids) = built.compact();
    // One group per (row, chunk); the launch sizes the group from `C`, not from the chunk's
    // own length (which depends on `s`).
    let Some(Schedule::Rows { outer, coop: true, .. }) = schedule::rows(&out, schedule::ROW_GROUP) else { return None };
    let extent = ids.get(chunk.0 as usize).copied().flatten()?;
    out.schedule = Schedule::Rows { outer, group: schedule::ROW_GROUP, coop: true, extent };
    Some(out)
}

/// The second kernel, under `k`'s name: `k` with each statistic replaced by the fold of its
/// row's `S` partials.
fn finish_kernel(k: &Kernel, c: &Candidate, names: &[String]) -> Option<Kernel> {
    let rank = k.domain.len();
    let mut kb = KernelBuilder::reopen(k);
    let u = kb.fresh_var().ok()?;
    kb.set_var_extent(u, c.chunks.clone());
    let bufs: Vec<u32> = names.iter().map(|n| kb.buffer_of(n, Access::Read, Elem::F32)).collect();
    let map = kb.rebuild_with(&mut |kb, old, e| {
        let i = c.tops.iter().position(|r| *r == old)?;
        let KExpr::Reduce { op, .. } = e else { return None };
        // The row's linear index, then its partials `row·S + u`.
        let mut row = kb.i64(0);
        for d in 0..rank {
            let ext = kb.size(&k.domain_sizes[d]);
            let scaled = kb.binary(BinOp::Mul, row, ext).ok()?;
            let cv = kb.var(VarId(d as u32));
            row = kb.binary(BinOp::Add, scaled, cv).ok()?;
        }
        let chunks = kb.size(&c.chunks);
        let base = kb.binary(BinOp::Mul, row, chunks).ok()?;
        let uv = kb.var(u);
        let at = kb.binary(BinOp::Add, base, uv).ok()?;
        let x = kb.load(bufs[i], at);
        kb.reduce(*op, u, chunks, x).ok()
    });
    let stores = k.stores.iter().map(|s| Store { buf: s.buf, value: map[s.value.0 as usize] }).collect();
    let domain = k.domain.iter().map(|d| map[d.0 as usize]).collect();
    let built = kb.into_kernel(k.name.clone(), k.domain_sizes.clone(), domain, stores);
    let (mut out, _) = built.compact();
    // Its folds are over `S` partials: on the row schedule when it has rows, else (a rank-0
    // total) the one work-item, finished like any other kernel.
    out.schedule = schedule::rows(&out, schedule::ROW_GROUP).unwrap_or_default();
    Some(schedule::finish(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Σ_i Σ_j x[i·m + j]` over a static `[rows, m]` input: a whole-tensor `sum()`, a rank-0
    /// kernel with two nested folds.
    fn total(rows: i64, m: i64) -> Kernel {
        let mut kb = KernelBuilder::new(0);
        let (x, out) = (kb.buffer("x", Access::Read), kb.buffer("out", Access::Write));
        let (i, j) = (kb.fresh_var().unwrap(), kb.fresh_var().unwrap());
        let (iv, jv, mm) = (kb.var(i), kb.var(j), kb.i64(m));
        let at = kb.binary(BinOp::Mul, iv, mm).unwrap();
        let at = kb.binary(BinOp::Add, at, jv).unwrap();
        let v = kb.load(x, at);
        let inner = kb.reduce(RedOp::Sum, j, mm, v).unwrap();
        let r = kb.i64(rows);
        let s = kb.reduce(RedOp::Sum, i, r, inner).unwrap();
        let mut k = kb.finish("total".into(), vec![], vec![], vec![Store { buf: out, value: s }]);
        k.schedule = schedule::choose(&k, false);
        k
    }

    fn divisions(k: &Kernel) -> usize {
        k.exprs.iter().filter(|e| matches!(e, KExpr::Binary(BinOp::Div | BinOp::Rem, ..))).count()
    }

    /// The nested folds become one flat range; its digits fold back into `s·C + t`, so each
    /// chunk is read contiguously by a work-group; the finish folds the `S` partials.
    #[test]
    fn a_whole_tensor_sum_is_one_flat_range_read_contiguously() {
        let k = total(4, 50_000);
        assert_eq!(k.schedule, Schedule::Elementwise, "unsplit, one work-item folds it all");
        let sp = split(&k, |_| "p".into()).expect("split");
        // S = min(200,000 / 4,096, 256) = 48 chunks of ⌈200,000 / 48⌉ = 4,167.
        assert_eq!(sp.scratch, vec![("p".to_string(), vec![Expr::int(48)])]);
        assert!(matches!(sp.partials.schedule, Schedule::Rows { outer: 1, coop: true, .. }), "{:?}", sp.partials.schedule);
        assert_eq!(divisions(&sp.partials), 0, "the digits of s·C + t fold away");
        assert_eq!(sp.partials.counts(), (1, 1), "one fold, one load");
        assert_eq!(sp.partials.buffers.iter().map(|b| b.value.as_str()).collect::<Vec<_>>(), ["x", "p"]);
        assert_eq!(sp.finish.name, "total");
        assert_eq!(sp.finish.buffers.iter().map(|b| (b.value.as_str(), b.access)).collect::<Vec<_>>(), [("out", Access::Write), ("p", Access::Read)]);
        assert!(matches!(sp.finish.schedule, Schedule::Rows { outer: 0, .. }));
        sp.partials.validate().unwrap();
        sp.finish.validate().unwrap();
    }

    /// Row sums of `[rows, 50,000]`, or with `dependent` the rows' `Σ (x − Σx)²`: a second
    /// statistic that reads the first.
    fn row_stats(rows: i64, dependent: bool) -> Kernel {
        let mut kb = KernelBuilder::new(1);
        let (x, out) = (kb.buffer("x", Access::Read), kb.buffer("out", Access::Write));
        let (r, m) = (kb.i64(rows), kb.i64(50_000));
        kb.set_coord_extents(&[r]);
        let row = kb.var(VarId(0));
        let element = |kb: &mut KernelBuilder| {
            let j = kb.fresh_var().unwrap();
            let jv = kb.var(j);
            let at = kb.binary(BinOp::Mul, row, m).unwrap();
            let at = kb.binary(BinOp::Add, at, jv).unwrap();
            (j, kb.load(x, at))
        };
        let (j, v) = element(&mut kb);
        let mut stat = kb.reduce(RedOp::Sum, j, m, v).unwrap();
        if dependent {
            let (j2, v2) = element(&mut kb);
            let d = kb.binary(BinOp::Sub, v2, stat).unwrap();
            let sq = kb.binary(BinOp::Mul, d, d).unwrap();
            stat = kb.reduce(RedOp::Sum, j2, m, sq).unwrap();
        }
        let mut k = kb.finish("rows".into(), vec![Expr::int(rows)], vec![r], vec![Store { buf: out, value: stat }]);
        k.schedule = schedule::choose(&k, false);
        k
    }

    /// Short rows, many rows and statistics that read each other are left alone.
    #[test]
    fn short_or_many_rows_and_dependent_statistics_are_not_split() {
        let statistics = |k: &Kernel| split(k, |i| format!("p{i}")).map(|s| s.scratch.len());
        assert_eq!(statistics(&total(2, 4_000)), None, "8,000 elements: one chunk");
        assert_eq!(statistics(&row_stats(4, false)), Some(1), "4 rows of 50,000");
        assert_eq!(statistics(&row_stats(256, false)), None, "the rows alone fill the groups");
        assert_eq!(statistics(&row_stats(4, true)), None, "the second fold reads the first");
    }
}
