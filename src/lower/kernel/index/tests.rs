//! Index folding against plain arithmetic, on the reads real kernels make.

use rand::{Rng, SeedableRng};

use super::super::{BinOp, ExprId, KExpr, KernelBuilder, VarId};
use super::eval_index;
use crate::sym;

/// The value of integer expression `e` with variables `vars` and symbol `s` = `s`.
fn eval(kb: &KernelBuilder, e: ExprId, vars: &[i64], s: i64) -> i64 {
    let mut b = sym::Bindings::new();
    b.set("s", s);
    eval_index(&|x| kb.get(x).clone(), &kb.params, e, &|v| vars[v.0 as usize], &b)
}

fn divisions(kb: &KernelBuilder, e: ExprId) -> usize {
    let own = usize::from(matches!(kb.get(e), KExpr::Binary(BinOp::Div | BinOp::Rem, ..)));
    own + match *kb.get(e) {
        KExpr::Binary(_, a, b) => divisions(kb, a) + divisions(kb, b),
        _ => 0,
    }
}

/// Attention reading `[B, H, S, E]` query rows out of a `[B, S, 3·H·E]` projection, sizes
/// symbolic in `s` as the zoo's exports make them: the two views' splits cancel.
#[test]
fn a_read_through_two_views_keeps_no_division() {
    let s = sym::Expr::symbol("s");
    let mut kb = KernelBuilder::new(4);
    let ext = [kb.size(&s), kb.i64(2), kb.i64(17), kb.i64(16)];
    kb.set_coord_extents(&ext);
    let [b, h, i, e] = [0, 1, 2, 3].map(|v| kb.var(VarId(v)));
    // Linear index in the [B, H, S, E] view (contiguous: 544, 272, 16, 1).
    let mut l = kb.i64(0);
    for (x, st) in [(b, 544), (h, 272), (i, 16), (e, 1)] {
        let st = kb.i64(st);
        let t = kb.binary(BinOp::Mul, x, st).unwrap();
        l = kb.binary(BinOp::Add, l, t).unwrap();
    }
    // Its coordinates [B·H, S, E] → the projection's [S, B·H·E] layout: (s', c) with
    // c = (b·2 + h)·16 + e, then the projection's row s'·(32·s) + c split by 32·s and 32.
    let (c16, c17, c272) = (kb.i64(16), kb.i64(17), kb.i64(272));
    let row = kb.binary(BinOp::Div, l, c16).unwrap();
    let si = kb.binary(BinOp::Rem, row, c17).unwrap();
    let bh = kb.binary(BinOp::Div, l, c272).unwrap();
    let ei = kb.binary(BinOp::Rem, l, c16).unwrap();
    let width = kb.size(&sym::Expr::mul(sym::Expr::int(32), s.clone()));
    let t1 = kb.binary(BinOp::Mul, si, width).unwrap();
    let t2 = kb.binary(BinOp::Mul, bh, c16).unwrap();
    let flat = kb.binary(BinOp::Add, t1, t2).unwrap();
    let flat = kb.binary(BinOp::Add, flat, ei).unwrap();
    let c32 = kb.i64(32);
    let q = kb.binary(BinOp::Div, flat, width).unwrap();
    let r = kb.binary(BinOp::Rem, flat, c32).unwrap();
    let bb = kb.binary(BinOp::Div, flat, c32).unwrap();
    let sz = ext[0];
    let bb = kb.binary(BinOp::Rem, bb, sz).unwrap();
    for x in [q, r, bb] {
        assert_eq!(divisions(&kb, x), 0, "{:?}", kb.get(x));
    }
    for sv in [1, 3] {
        for vars in (0..sv).flat_map(|b| (0..2).flat_map(move |h| (0..17).flat_map(move |i| (0..16).map(move |e| [b, h, i, e])))) {
            let f = ((vars[0] * 2 + vars[1]) * 16 + vars[3]) + vars[2] * 32 * sv;
            assert_eq!(eval(&kb, q, &vars, sv), f / (32 * sv));
            assert_eq!(eval(&kb, r, &vars, sv), f % 32);
            assert_eq!(eval(&kb, bb, &vars, sv), (f / 32) % sv);
        }
    }
}

/// Random sums of multiples of bounded variables, divided and reduced by random sizes:
/// folded or not, each agrees with plain arithmetic at every point of the ranges.
#[test]
fn folded_divisions_agree_with_arithmetic_everywhere() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(14);
    let mut folded = 0;
    for _ in 0..300 {
        let extents: Vec<i64> = (0..3).map(|_| rng.gen_range(1..6)).collect();
        let coefs: Vec<i64> = (0..3).map(|_| [1, 2, 3, 4, 6, 8, 12, 24][rng.gen_range(0..8)]).collect();
        let constant = rng.gen_range(0..30);
        let n = [2, 3, 4, 6, 8, 12, 24, 48][rng.gen_range(0..8)];
        let mut kb = KernelBuilder::new(3);
        let ext: Vec<ExprId> = extents.iter().map(|e| kb.i64(*e)).collect();
        kb.set_coord_extents(&ext);
        let mut x = kb.i64(constant);
        for (v, c) in coefs.iter().enumerate() {
            let var = kb.var(VarId(v as u32));
            let c = kb.i64(*c);
            let t = kb.binary(BinOp::Mul, var, c).unwrap();
            x = kb.binary(BinOp::Add, t, x).unwrap();
        }
        let nn = kb.i64(n);
        let (q, r) = (kb.binary(BinOp::Div, x, nn).unwrap(), kb.binary(BinOp::Rem, x, nn).unwrap());
        folded += usize::from(divisions(&kb, q) == 0) + usize::from(divisions(&kb, r) == 0);
        for a in 0..extents[0] {
            for b in 0..extents[1] {
                for c in 0..extents[2] {
                    let vars = [a, b, c];
                    let want = constant + a * coefs[0] + b * coefs[1] + c * coefs[2];
                    assert_eq!(eval(&kb, q, &vars, 1), want / n, "{coefs:?} {extents:?} {constant} / {n}");
                    assert_eq!(eval(&kb, r, &vars, 1), want % n, "{coefs:?} {extents:?} {constant} % {n}");
                }
            }
        }
    }
    assert!(folded > 100, "only {folded} of 600 folded");
}

/// Whether some division or remainder by a non-constant in `root` has a numerator that
/// uses variable `v` (it would run in `v`'s loop).
fn divides_by_size_in(kb: &KernelBuilder, root: ExprId, v: VarId) -> bool {
    fn uses(kb: &KernelBuilder, e: ExprId, v: VarId) -> bool {
        match *kb.get(e) {
            KExpr::Var(w) => w == v,
            KExpr::Binary(_, a, b) => uses(kb, a, v) || uses(kb, b, v),
            _ => false,
        }
    }
    let mut stack = vec![root];
    while let Some(x) = stack.pop() {
        if let KExpr::Binary(op, a, d) = *kb.get(x) {
            if matches!(op, BinOp::Div | BinOp::Rem) && kb.const_i64(d).is_none() && uses(kb, a, v) {
                return true;
            }
            stack.extend([a, d]);
        }
    }
    false
}

/// A product's row operand read through views, as a decoder's kernels read it: the
/// attention output `[B, H, S, E]` (`H` = 4, `E` = 16) transposed to `[B, S, H, E]` and seen
/// as `[B·S, 64]` (the output projection), and a `[B, S, 64]` norm seen as `[B·S, 64]`
/// (the language-model head), `S` dynamic. Row `r`, contraction `k < 64`: the splits by
/// `64·S` and by 16 leave no division by a run-time size in `k`'s loop, and agree with
/// plain arithmetic everywhere.
#[test]
fn a_row_read_through_a_view_divides_only_the_row() {
    let s = sym::Expr::symbol("s");
    let mut kb = KernelBuilder::new(1);
    let ext = [kb.size(&sym::Expr::mul(sym::Expr::int(3), s.clone()))];
    kb.set_coord_extents(&ext);
    let kv = kb.fresh_var().unwrap();
    kb.set_var_extent(kv, sym::Expr::int(64));
    let (r, k) = (kb.var(VarId(0)), kb.var(kv));
    let (c64, c16, c4) = (kb.i64(64), kb.i64(16), kb.i64(4));
    let (sz, w64, w16) = (kb.size(&s), kb.size(&sym::Expr::mul(sym::Expr::int(64), s.clone())), kb.size(&sym::Expr::mul(sym::Expr::int(16), s.clone())));
    let t = kb.binary(BinOp::Mul, r, c64).unwrap();
    let f = kb.binary(BinOp::Add, t, k).unwrap();
    let b = kb.binary(BinOp::Div, f, w64).unwrap();
    let row = kb.binary(BinOp::Div, f, c64).unwrap();
    let si = kb.binary(BinOp::Rem, row, sz).unwrap();
    let hq = kb.binary(BinOp::Div, f, c16).unwrap();
    let h = kb.binary(BinOp::Rem, hq, c4).unwrap();
    let e = kb.binary(BinOp::Rem, f, c16).unwrap();
    // [B, H, S, E] contiguous: b·64S + h·16S + si·16 + e.
    let mut attn = kb.binary(BinOp::Mul, b, w64).unwrap();
    for (x, st) in [(h, w16), (si, c16)] {
        let t = kb.binary(BinOp::Mul, x, st).unwrap();
        attn = kb.binary(BinOp::Add, attn, t).unwrap();
    }
    let attn = kb.binary(BinOp::Add, attn, e).unwrap();
    // [B, S, 64] contiguous: b·64S + si·64 + (f % 64).
    let low = kb.binary(BinOp::Rem, f, c64).unwrap();
    let t1 = kb.binary(BinOp::Mul, b, w64).unwrap();
    let t2 = kb.binary(BinOp::Mul, si, c64).unwrap();
    let norm = kb.binary(BinOp::Add, t1, t2).unwrap();
    let norm = kb.binary(BinOp::Add, norm, low).unwrap();
    for x in [b, h, e, attn, norm] {
        assert!(!divides_by_size_in(&kb, x, kv), "{:?}", kb.get(x));
    }
    for sv in [1, 2, 5] {
        for (ri, ki) in (0..3 * sv).flat_map(|r| (0..64).map(move |k| (r, k))) {
            let vars: Vec<i64> = (0..=kv.0 as usize).map(|v| if v == 0 { ri } else if v == kv.0 as usize { ki } else { 0 }).collect();
            let fl = ri * 64 + ki;
            let (bb, ss, hh, ee) = (fl / (64 * sv), (fl / 64) % sv, (fl / 16) % 4, fl % 16);
            assert_eq!(eval(&kb, attn, &vars, sv), bb * 64 * sv + hh * 16 * sv + ss * 16 + ee);
            assert_eq!(eval(&kb, norm, &vars, sv), bb * 64 * sv + ss * 64 + fl % 64);
        }
    }
}

/// Grouped-query attention's key read, `[B, 4, S, 8]` through `expand` + `reshape` of a
/// `[B, 2, S, 8]` key: the key head `((b·32s + h·8s + 8j + e) / 16s) % 2` is `h / 2`, with
/// no division by a run-time size left, at every point of the ranges.
#[test]
fn a_grouped_head_index_divides_by_constants_only() {
    let s = sym::Expr::symbol("s");
    let times = |c: i64| sym::Expr::mul(sym::Expr::int(c), s.clone());
    let mut kb = KernelBuilder::new(3);
    let ext = [kb.size(&s), kb.i64(4), kb.size(&s)];
    kb.set_coord_extents(&ext);
    let (jv, ev) = (kb.fresh_var().unwrap(), kb.fresh_var().unwrap());
    kb.set_var_extent(jv, s.clone());
    kb.set_var_extent(ev, sym::Expr::int(8));
    let [b, h] = [0, 1].map(|v| kb.var(VarId(v)));
    let (j, e) = (kb.var(jv), kb.var(ev));
    let (w32, w8, w16, c8, c2) = (kb.size(&times(32)), kb.size(&times(8)), kb.size(&times(16)), kb.i64(8), kb.i64(2));
    let mut l = kb.binary(BinOp::Mul, b, w32).unwrap();
    for t in [kb.binary(BinOp::Mul, h, w8).unwrap(), kb.binary(BinOp::Mul, j, c8).unwrap(), e] {
        l = kb.binary(BinOp::Add, l, t).unwrap();
    }
    let q = kb.binary(BinOp::Div, l, w16).unwrap();
    let head = kb.binary(BinOp::Rem, q, c2).unwrap();
    let r = kb.binary(BinOp::Rem, l, w16).unwrap();
    let by_size = |kb: &KernelBuilder, root: ExprId| {
        let mut stack = vec![root];
        let mut n = 0;
        while let Some(x) = stack.pop() {
            if let KExpr::Binary(BinOp::Div | BinOp::Rem, a, d) = *kb.get(x) {
                n += usize::from(kb.const_i64(d).is_none());
                stack.extend([a, d]);
            } else if let KExpr::Binary(_, a, d) = *kb.get(x) {
                stack.extend([a, d]);
            }
        }
        n
    };
    for x in [q, head, r] {
        assert_eq!(by_size(&kb, x), 0, "{:?}", kb.get(x));
    }
    for sv in [1, 2, 5] {
        for (bi, hi, ji, ei) in (0..sv).flat_map(|b| (0..4).flat_map(move |h| (0..sv).flat_map(move |j| (0..8).map(move |e| (b, h, j, e))))) {
            let vars: Vec<i64> = (0..5).map(|v| match v {
                0 => bi,
                1 => hi,
                v if v == jv.0 as usize => ji,
                v if v == ev.0 as usize => ei,
                _ => 0,
            }).collect();
            let f = bi * 32 * sv + hi * 8 * sv + 8 * ji + ei;
            assert_eq!(eval(&kb, q, &vars, sv), f / (16 * sv));
            assert_eq!(eval(&kb, head, &vars, sv), (f / (16 * sv)) % 2);
            assert_eq!(eval(&kb, r, &vars, sv), f % (16 * sv));
        }
    }
}

#[test]
fn a_remainder_that_may_reach_the_divisor_stays() {
    // i·16 + e for i < 17, e < 16 reaches 271: not below 256.
    let mut kb = KernelBuilder::new(2);
    let ext = [kb.i64(17), kb.i64(16)];
    kb.set_coord_extents(&ext);
    let (i, e, c16, c256) = (kb.var(VarId(0)), kb.var(VarId(1)), kb.i64(16), kb.i64(256));
    let t = kb.binary(BinOp::Mul, i, c16).unwrap();
    let x = kb.binary(BinOp::Add, t, e).unwrap();
    let q = kb.binary(BinOp::Div, x, c256).unwrap();
    assert!(matches!(kb.get(q), KExpr::Binary(BinOp::Div, ..)));
    // A variable without a known range is never assumed small.
    let mut kb = KernelBuilder::new(1);
    let v = kb.fresh_var().unwrap();
    let (j, c8) = (kb.var(v), kb.i64(8));
    let q = kb.binary(BinOp::Div, j, c8).unwrap();
    assert!(matches!(kb.get(q), KExpr::Binary(BinOp::Div, ..)));
}

/// A fold's variable gets its range when the kernel is finished: its body's splits cancel.
#[test]
fn finishing_folds_with_the_ranges_of_reductions() {
    let mut kb = KernelBuilder::new(1);
    let ext = [kb.i64(5)];
    kb.set_coord_extents(&ext);
    let a = kb.buffer("a", super::super::Access::Read);
    let out = kb.buffer("out", super::super::Access::Write);
    let r = kb.var(VarId(0));
    let v = kb.fresh_var().unwrap();
    let (j, c8) = (kb.var(v), kb.i64(8));
    let base = kb.binary(BinOp::Mul, r, c8).unwrap();
    let l = kb.binary(BinOp::Add, base, j).unwrap();
    let col = kb.binary(BinOp::Rem, l, c8).unwrap();
    let row = kb.binary(BinOp::Div, l, c8).unwrap();
    let back = kb.binary(BinOp::Mul, row, c8).unwrap();
    let idx = kb.binary(BinOp::Add, back, col).unwrap();
    let x = kb.load(a, idx);
    let s = kb.reduce(super::super::RedOp::Sum, v, c8, x).unwrap();
    let k = kb.finish("k".into(), vec![sym::Expr::int(5)], ext.to_vec(), vec![super::super::Store { buf: out, value: s }]);
    let reachable = {
        let mut stack = vec![k.stores[0].value];
        let mut n = 0;
        while let Some(e) = stack.pop() {
            n += usize::from(matches!(k.expr(e), KExpr::Binary(BinOp::Div | BinOp::Rem, ..)));
            stack.extend(k.children(e));
        }
        n
    };
    assert_eq!(reachable, 0, "the store reads a[r·8 + j]");
}

/// A key read behind transformers' whole-range slice `[:, Min(0, s):]`: `(Min(0, s) + j) % s`
/// for a key `j < s` is no remainder at all, and `(b·32s + (Min(0, s) + j)·32 + e) / 32s` is the
/// batch `b`, at every point of the ranges.
#[test]
fn a_slice_start_of_min_zero_is_bounded_by_zero() {
    let s = sym::Expr::symbol("s");
    let start = sym::Expr::call(sym::Func::Min, vec![sym::Expr::int(0), s.clone()]);
    let mut kb = KernelBuilder::new(1);
    let ext = [kb.i64(3)];
    kb.set_coord_extents(&ext);
    let (jv, ev) = (kb.fresh_var().unwrap(), kb.fresh_var().unwrap());
    kb.set_var_extent(jv, s.clone());
    kb.set_var_extent(ev, sym::Expr::int(32));
    let (b, j, e) = (kb.var(VarId(0)), kb.var(jv), kb.var(ev));
    let (st, sz, w32, c32) = (kb.size(&start), kb.size(&s), kb.size(&sym::Expr::mul(sym::Expr::int(32), s.clone())), kb.i64(32));
    let key = kb.binary(BinOp::Add, st, j).unwrap();
    let r = kb.binary(BinOp::Rem, key, sz).unwrap();
    assert_eq!(divisions(&kb, r), 0, "{:?}", kb.get(r));
    let t1 = kb.binary(BinOp::Mul, b, w32).unwrap();
    let t2 = kb.binary(BinOp::Mul, r, c32).unwrap();
    let flat = kb.binary(BinOp::Add, t1, t2).unwrap();
    let flat = kb.binary(BinOp::Add, flat, e).unwrap();
    let q = kb.binary(BinOp::Div, flat, w32).unwrap();
    assert_eq!(divisions(&kb, q), 0, "{:?}", kb.get(q));
    for sv in [1, 2, 5] {
        for (bi, ji, ei) in (0..3).flat_map(|b| (0..sv).flat_map(move |j| (0..32).map(move |e| (b, j, e)))) {
            let vars: Vec<i64> = (0..=ev.0.max(jv.0) as usize).map(|v| if v == 0 { bi } else if v == jv.0 as usize { ji } else if v == ev.0 as usize { ei } else { 0 }).collect();
            assert_eq!(eval(&kb, r, &vars, sv), ji % sv);
            assert_eq!(eval(&kb, q, &vars, sv), (bi * 32 * sv + ji * 32 + ei) / (32 * sv));
        }
    }
}
