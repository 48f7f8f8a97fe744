//! The work-group schedules against a plain f64 oracle, at sizes that are not multiples of the
//! work-group or tile size and at size 1: row reductions (sum, max, two-pass variance, softmax
//! whose outputs span the row) with extents around the group size, and matrix products with
//! random M, N, K in 1..100, a batch dim and a bias epilogue. Every module also passes
//! `spirv-val`; the elementwise schedule of the same kernel must agree too.
//!
//! Without an OpenCL runtime (or SPIRV-Tools) these print why and pass, unless
//! `XPU_WORKBENCH_REQUIRE_OPENCL` is set.

mod common;

use rand::{Rng, SeedableRng};
use xpu_workbench::codegen::spirv::{self, SpirvModule};
use xpu_workbench::lower::kernel::{Access, BinOp, ExprId, KExpr, KernelBuilder, RedOp, Store, UnOp, VarId};
use xpu_workbench::lower::gemm;
use xpu_workbench::lower::schedule::{self, Schedule};
use xpu_workbench::lower::Kernel;
use xpu_workbench::runtime::opencl::OpenClDevice;
use xpu_workbench::runtime::plan::launch_shape_with;
use xpu_workbench::runtime::{Device, KernelArg};
use xpu_workbench::sym::{Bindings, Expr};

use common::{opencl_device, spirv_val};

fn validate(m: &SpirvModule) -> Option<()> {
    if let Err(e) = spirv_val(m)? {
        panic!("`{}` fails spirv-val:\n{e}\n{}", m.name, spirv::disassemble(m));
    }
    Some(())
}

/// Runs `k` on `dev` with `inputs` (one per read buffer, in buffer order) under `b`; returns
/// the first output buffer of `out_len` elements.
fn run(dev: &mut OpenClDevice, k: &Kernel, inputs: &[Vec<f32>], out_len: usize, b: &Bindings) -> Option<Vec<f32>> {
    run_with(dev, k, inputs, out_len, b, None)
}

/// [`run`] with the row schedule's work-items per row forced (0: one work-item per row).
fn run_with(dev: &mut OpenClDevice, k: &Kernel, inputs: &[Vec<f32>], out_len: usize, b: &Bindings, row_group: Option<u32>) -> Option<Vec<f32>> {
    let module = spirv::compile(k).unwrap_or_else(|e| panic!("{e}"));
    validate(&module)?;
    let program = dev.build(&k.name, &module.words).unwrap_or_else(|e| panic!("{e}"));
    let mut args = Vec::new();
    let mut ins = inputs.iter();
    let mut out = None;
    let mut held = Vec::new();
    for buf in &k.buffers {
        let bytes: Vec<u8> = match buf.access {
            Access::Read => ins.next().expect("an input per read buffer").iter().flat_map(|x| x.to_le_bytes()).collect(),
            Access::Write => vec![0xff; out_len.max(1) * 4],
        };
        let id = dev.alloc(bytes.len().max(4)).unwrap();
        dev.write(id, &bytes).unwrap();
        if buf.access == Access::Write {
            out = Some(id);
        }
        held.push(id);
        args.push(KernelArg::Buffer(id));
    }
    for p in &k.params {
        args.push(KernelArg::I64(p.eval_int(b).unwrap()));
    }
    if let Some(shape) = launch_shape_with(k, b, row_group).unwrap() {
        args.extend(shape.schedule_args.iter().map(|a| KernelArg::I64(*a)));
        dev.launch(program, &k.name, &args, shape.global, Some(shape.local)).unwrap_or_else(|e| panic!("{}: {e}", k.name));
    }
    dev.finish().unwrap();
    let mut bytes = vec![0u8; out_len * 4];
    dev.read(out.expect("an output buffer"), &mut bytes).unwrap();
    for id in held {
        dev.free(id).unwrap();
    }
    Some(bytes.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn assert_close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let d = (*g as f64 - w).abs();
        assert!(d <= 1e-4 * scale, "{what}: element {i} is {g}, expected {w}");
    }
}

#[derive(Clone, Copy, Debug)]
enum RowOp {
    Sum,
    Max,
    Var,
    Softmax,
}

/// Row statistics of `x[r, e]` over `e`, rows and extent symbolic (`r`, `e`).
fn row_kernel(op: RowOp) -> Kernel {
    let (rs, es) = (Expr::symbol("r"), Expr::symbol("e"));
    let softmax = matches!(op, RowOp::Softmax);
    let mut kb = KernelBuilder::new(if softmax { 2 } else { 1 });
    let ok = "well-typed";
    let (x, out) = (kb.buffer("x", Access::Read), kb.buffer("out", Access::Write));
    let (r, e) = (kb.size(&rs), kb.size(&es));
    let row = kb.var(VarId(0));
    let base = kb.binary(BinOp::Mul, row, e).expect(ok);
    let at = |kb: &mut KernelBuilder, op: RedOp, f: &dyn Fn(&mut KernelBuilder, ExprId) -> ExprId| {
        let v = kb.fresh_var().expect(ok);
        let j = kb.var(v);
        let i = kb.binary(BinOp::Add, base, j).expect(ok);
        let xv = kb.load(x, i);
        let body = f(kb, xv);
        kb.reduce(op, v, e, body).expect(ok)
    };
    let (value, domain, sizes) = match op {
        RowOp::Sum => (at(&mut kb, RedOp::Sum, &|_, v| v), vec![r], vec![rs]),
        RowOp::Max => (at(&mut kb, RedOp::Max, &|_, v| v), vec![r], vec![rs]),
        RowOp::Var => {
            let n = kb.to_f32(e);
            let s = at(&mut kb, RedOp::Sum, &|_, v| v);
            let mean = kb.binary(BinOp::Div, s, n).expect(ok);
            let ss = at(&mut kb, RedOp::Sum, &|kb, v| {
                let d = kb.binary(BinOp::Sub, v, mean).expect(ok);
                kb.binary(BinOp::Mul, d, d).expect(ok)
            });
            (kb.binary(BinOp::Div, ss, n).expect(ok), vec![r], vec![rs])
        }
        RowOp::Softmax => {
            let m = at(&mut kb, RedOp::Max, &|_, v| v);
            let s = at(&mut kb, RedOp::Sum, &|kb, v| {
                let d = kb.binary(BinOp::Sub, v, m).expect(ok);
                kb.unary(UnOp::Exp, d)
            });
            let col = kb.var(VarId(1));
            let i = kb.binary(BinOp::Add, base, col).expect(ok);
            let xv = kb.load(x, i);
            let d = kb.binary(BinOp::Sub, xv, m).expect(ok);
            let p = kb.unary(UnOp::Exp, d);
            (kb.binary(BinOp::Div, p, s).expect(ok), vec![r, e], vec![rs, es])
        }
    };
    kb.finish(format!("rows_{op:?}").to_lowercase(), sizes, domain, vec![Store { buf: out, value }])
}

fn row_oracle(op: RowOp, x: &[f32], rows: usize, e: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for r in 0..rows {
        let row: Vec<f64> = x[r * e..(r + 1) * e].iter().map(|v| *v as f64).collect();
        let sum: f64 = row.iter().sum();
        let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        match op {
            RowOp::Sum => out.push(sum),
            RowOp::Max => out.push(max),
            RowOp::Var => {
                let mean = sum / e as f64;
                out.push(row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / e as f64);
            }
            RowOp::Softmax => {
                let z: f64 = row.iter().map(|v| (v - max).exp()).sum();
                out.extend(row.iter().map(|v| (v - max).exp() / z));
            }
        }
    }
    out
}

#[test]
fn row_reductions_match_the_oracle_at_awkward_extents() {
    let Some(mut dev) = opencl_device() else { return };
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for op in [RowOp::Sum, RowOp::Max, RowOp::Var, RowOp::Softmax] {
        let k = row_kernel(op);
        let rows_k = Kernel { schedule: schedule::rows(&k, schedule::ROW_GROUP).expect("dynamic rows get the row schedule"), ..k.clone() };
        if matches!(op, RowOp::Softmax) {
            // The denominator's fold writes each `exp(x − max)` to its output, the output loop
            // reads it back instead of a second `exp`: one `exp` in the work-item-per-row arm's
            // fold, five in the group arm's (four accumulators unrolled, one in the remainder
            // loop), none in either output loop.
            let text = spirv::disassemble(&spirv::compile(&rows_k).unwrap_or_else(|e| panic!("{e}")));
            assert_eq!(text.matches(" exp ").count(), 1 + 5, "exp only in the folds, none in the output loops:\n{text}");
        }
        for e in [1usize, 63, 64, 65, 1000, 4097] {
            // More rows than a launch starts groups for (each group then folds several rows).
            let rows = match e {
                63 => 300,
                64 => schedule::MAX_ROW_GROUPS * 2 + 3,
                _ => rng.gen_range(1..6),
            };
            let x: Vec<f32> = (0..rows * e).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let mut b = Bindings::new();
            b.set("r", rows as i64);
            b.set("e", e as i64);
            let want = row_oracle(op, &x, rows, e);
            // Elementwise; rows as the launch picks; a work-item per row; work-groups of 1, 8
            // and 64 per row.
            for (kernel, group) in [(&k, None), (&rows_k, None), (&rows_k, Some(0)), (&rows_k, Some(1)), (&rows_k, Some(8)), (&rows_k, Some(64))] {
                let Some(got) = run_with(&mut dev, kernel, std::slice::from_ref(&x), want.len(), &b, group) else { return };
                assert_close(&got, &want, &format!("{op:?} {:?} group {group:?} rows={rows} extent={e}", kernel.schedule));
            }
        }
    }
}

/// Attention over `s` keys: `out[r, c] = Σ_j p(r, j) · v[j, c]` with `p` the softmax over `j`
/// of `score(r, j) = Σ_k q[r, k] · key[j, k]`, every size symbolic. `score` is a row vector:
/// the cooperative row schedule computes it once per row into local memory (for `s` up to the
/// cache's length) instead of once per output column.
fn attention_kernel() -> Kernel {
    let [rs, ds, ss] = ["r", "d", "s"].map(Expr::symbol);
    let mut kb = KernelBuilder::new(2);
    let ok = "well-typed";
    let (q, key, v, out) = (kb.buffer("q", Access::Read), kb.buffer("key", Access::Read), kb.buffer("v", Access::Read), kb.buffer("out", Access::Write));
    let [r, d, s] = [&rs, &ds, &ss].map(|x| kb.size(x));
    let (row, col) = (kb.var(VarId(0)), kb.var(VarId(1)));
    let qbase = kb.binary(BinOp::Mul, row, d).expect(ok);
    let score = |kb: &mut KernelBuilder, j: ExprId| {
        let kv = kb.fresh_var().expect(ok);
        let kx = kb.var(kv);
        let qi = kb.binary(BinOp::Add, qbase, kx).expect(ok);
        let ki = kb.binary(BinOp::Mul, j, d).expect(ok);
        let ki = kb.binary(BinOp::Add, ki, kx).expect(ok);
        let (a, b) = (kb.load(q, qi), kb.load(key, ki));
        let p = kb.binary(BinOp::Mul, a, b).expect(ok);
        kb.reduce(RedOp::Sum, kv, d, p).expect(ok)
    };
    let fold = |kb: &mut KernelBuilder, op: RedOp, f: &dyn Fn(&mut KernelBuilder, ExprId) -> ExprId| {
        let jv = kb.fresh_var().expect(ok);
        let j = kb.var(jv);
        let body = f(kb, j);
        kb.reduce(op, jv, s, body).expect(ok)
    };
    let m = fold(&mut kb, RedOp::Max, &|kb, j| score(kb, j));
    let weight = |kb: &mut KernelBuilder, j: ExprId| {
        let x = score(kb, j);
        let x = kb.binary(BinOp::Sub, x, m).expect(ok);
        kb.unary(UnOp::Exp, x)
    };
    let z = fold(&mut kb, RedOp::Sum, &|kb, j| weight(kb, j));
    let num = fold(&mut kb, RedOp::Sum, &|kb, j| {
        let p = weight(kb, j);
        let vi = kb.binary(BinOp::Mul, j, d).expect(ok);
        let vi = kb.binary(BinOp::Add, vi, col).expect(ok);
        let vv = kb.load(v, vi);
        kb.binary(BinOp::Mul, p, vv).expect(ok)
    });
    let value = kb.binary(BinOp::Div, num, z).expect(ok);
    kb.finish("attention".into(), vec![rs, ds], vec![r, d], vec![Store { buf: out, value }])
}

#[test]
fn attention_rows_agree_with_and_without_the_row_cache() {
    let Some(mut dev) = opencl_device() else { return };
    let k = attention_kernel();
    let rows_k = Kernel { schedule: schedule::rows(&k, schedule::ROW_GROUP).expect("attention has row statistics"), ..k.clone() };
    assert!(matches!(rows_k.schedule, Schedule::Rows { outer: 1, coop: true, .. }), "{:?}", rows_k.schedule);
    let text = spirv::disassemble(&spirv::compile(&rows_k).unwrap_or_else(|e| panic!("{e}")));
    assert!(text.contains("row_cache"), "the scores are cached per row:\n{text}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    // Keys within the cache, at its length, and one past it (the uncached branch); more rows
    // than a launch starts groups for (a group refills the cache for each of its rows).
    for (rows, d, s) in [(3usize, 5usize, 1usize), (4, 8, 77), (2, 3, 4096), (2, 3, 4097), (schedule::MAX_ROW_GROUPS + 5, 2, 9)] {
        let q: Vec<f32> = (0..rows * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let key: Vec<f32> = (0..s * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let v: Vec<f32> = (0..s * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let mut want = vec![0f64; rows * d];
        for i in 0..rows {
            let sc: Vec<f64> = (0..s).map(|j| (0..d).map(|x| q[i * d + x] as f64 * key[j * d + x] as f64).sum()).collect();
            let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = sc.iter().map(|x| (x - m).exp()).sum();
            for c in 0..d {
                want[i * d + c] = (0..s).map(|j| (sc[j] - m).exp() * v[j * d + c] as f64).sum::<f64>() / z;
            }
        }
        let mut b = Bindings::new();
        for (n, x) in [("r", rows), ("d", d), ("s", s)] {
            b.set(n, x as i64);
        }
        for (kernel, group) in [(&k, None), (&rows_k, None), (&rows_k, Some(0)), (&rows_k, Some(1)), (&rows_k, Some(8)), (&rows_k, Some(64))] {
            let Some(got) = run_with(&mut dev, kernel, &[q.clone(), key.clone(), v.clone()], want.len(), &b, group) else { return };
            assert_close(&got, &want, &format!("{:?} group {group:?} rows={rows} d={d} s={s}", kernel.schedule));
        }
    }
}

/// `out[b, i, j] = Σ_k a[b, i, k] · w[k, j] + bias[j]`, every size symbolic.
fn matmul_kernel() -> Kernel {
    let [bs, ms, ns, ks] = ["b", "m", "n", "k"].map(Expr::symbol);
    let mut kb = KernelBuilder::new(3);
    let ok = "well-typed";
    let (a, w, bias, out) =
        (kb.buffer("a", Access::Read), kb.buffer("w", Access::Read), kb.buffer("bias", Access::Read), kb.buffer("out", Access::Write));
    let [bb, m, n, kk] = [&bs, &ms, &ns, &ks].map(|s| kb.size(s));
    let (bi, i, j) = (kb.var(VarId(0)), kb.var(VarId(1)), kb.var(VarId(2)));
    let v = kb.fresh_var().expect(ok);
    let kv = kb.var(v);
    let row = kb.binary(BinOp::Mul, bi, m).expect(ok);
    let row = kb.binary(BinOp::Add, row, i).expect(ok);
    let row = kb.binary(BinOp::Mul, row, kk).expect(ok);
    let ai = kb.binary(BinOp::Add, row, kv).expect(ok);
    let wi = kb.binary(BinOp::Mul, kv, n).expect(ok);
    let wi = kb.binary(BinOp::Add, wi, j).expect(ok);
    let (x, y) = (kb.load(a, ai), kb.load(w, wi));
    let p = kb.binary(BinOp::Mul, x, y).expect(ok);
    let dot = kb.reduce(RedOp::Sum, v, kk, p).expect(ok);
    let bv = kb.load(bias, j);
    let value = kb.binary(BinOp::Add, dot, bv).expect(ok);
    kb.finish("tiled_matmul".into(), vec![bs, ms, ns], vec![bb, m, n], vec![Store { buf: out, value }])
}

#[test]
fn tiled_matmul_matches_the_oracle_at_random_sizes() {
    let Some(mut dev) = opencl_device() else { return };
    let k = matmul_kernel();
    let tiled = Kernel { schedule: schedule::tiled(&k, schedule::TILE).expect("a dot product with a bias epilogue tiles"), ..k.clone() };
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut shapes: Vec<[usize; 4]> = vec![[1, 1, 1, 1], [1, 16, 16, 16], [2, 17, 15, 33]];
    shapes.extend((0..12).map(|_| [rng.gen_range(1..4), rng.gen_range(1..100), rng.gen_range(1..100), rng.gen_range(1..100)]));
    for [nb, m, n, kk] in shapes {
        let a: Vec<f32> = (0..nb * m * kk).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let w: Vec<f32> = (0..kk * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let bias: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let mut want = vec![0f64; nb * m * n];
        for b in 0..nb {
            for i in 0..m {
                for j in 0..n {
                    let dot: f64 = (0..kk).map(|p| a[(b * m + i) * kk + p] as f64 * w[p * n + j] as f64).sum();
                    want[(b * m + i) * n + j] = dot + bias[j] as f64;
                }
            }
        }
        let mut bind = Bindings::new();
        for (s, v) in [("b", nb), ("m", m), ("n", n), ("k", kk)] {
            bind.set(s, v as i64);
        }
        for kernel in [&k, &tiled] {
            let Some(got) = run(&mut dev, kernel, &[a.clone(), w.clone(), bias.clone()], want.len(), &bind) else { return };
            assert_close(&got, &want, &format!("{:?} b={nb} m={m} n={n} k={kk}", kernel.schedule));
        }
    }
}

#[test]
fn kernels_with_row_statistics_get_the_row_schedule() {
    let static_sum = |extent: i64| {
        let mut kb = KernelBuilder::new(1);
        let (x, out) = (kb.buffer("x", Access::Read), kb.buffer("out", Access::Write));
        let v = kb.fresh_var().unwrap();
        let (row, j, e) = (kb.var(VarId(0)), kb.var(v), kb.i64(extent));
        let base = kb.binary(BinOp::Mul, row, e).unwrap();
        let i = kb.binary(BinOp::Add, base, j).unwrap();
        let xv = kb.load(x, i);
        let s = kb.reduce(RedOp::Sum, v, e, xv).unwrap();
        let rows = kb.i64(4);
        kb.finish("sum".into(), vec![Expr::int(4)], vec![rows], vec![Store { buf: out, value: s }])
    };
    let rows_of = |k: &Kernel| match schedule::choose(k, false) {
        Schedule::Rows { outer, coop, .. } => Some((outer, coop)),
        _ => None,
    };
    // Every kernel with row statistics gets the row schedule; rows statically too short to
    // split never get a work-group (the launch gives them a work-item each), others may.
    assert_eq!(rows_of(&static_sum(4)), None, "one short row per output is the elementwise schedule");
    assert_eq!(rows_of(&static_sum(4097)), Some((1, true)));
    assert!(matches!(schedule::choose(&matmul_kernel(), true), Schedule::Tiled { .. }));
    // An untiled dot product is a statistic of every output; the weight's column stride makes
    // splitting it across a group a gather, so it stays one work-item per output.
    assert_eq!(rows_of(&matmul_kernel()), None);
}

#[test]
fn the_launch_gives_a_work_group_to_each_row_long_enough_to_split() {
    use schedule::{row_group, ROW_GROUP};
    // A work-group per row, sized to the row, at most ROW_GROUP.
    assert_eq!(row_group(1 << 17, 64, ROW_GROUP, true), ROW_GROUP);
    assert_eq!(row_group(4, 1 << 20, ROW_GROUP, true), ROW_GROUP);
    assert_eq!(row_group(4, 9, 64, true), 16);
    assert_eq!(row_group(4, 40, 64, true), 64);
    // Too short to split, or no work-group reduction for the kernel's statistics.
    assert_eq!(row_group(1, 7, ROW_GROUP, true), 0);
    assert_eq!(row_group(1, 1 << 20, ROW_GROUP, false), 0);
}

/// `out[i, j] = Σ_p a[i, p] · w[p, j]` with `n` columns and depth `depth`; `m` rows, or a
/// symbolic row count.
fn product_kernel(m: Option<i64>, n: i64, depth: i64) -> Kernel {
    let mut kb = KernelBuilder::new(2);
    let (a, w, out) = (kb.buffer("a", Access::Read), kb.buffer("w", Access::Read), kb.buffer("out", Access::Write));
    let rows_size = m.map_or_else(|| Expr::symbol("m"), Expr::int);
    let rows = kb.size(&rows_size);
    let (cols, kk) = (kb.i64(n), kb.i64(depth));
    let (i, j) = (kb.var(VarId(0)), kb.var(VarId(1)));
    let v = kb.fresh_var().unwrap();
    let p = kb.var(v);
    let ai = kb.binary(BinOp::Mul, i, kk).unwrap();
    let ai = kb.binary(BinOp::Add, ai, p).unwrap();
    let wi = kb.binary(BinOp::Mul, p, cols).unwrap();
    let wi = kb.binary(BinOp::Add, wi, j).unwrap();
    let (x, y) = (kb.load(a, ai), kb.load(w, wi));
    let xy = kb.binary(BinOp::Mul, x, y).unwrap();
    let dot = kb.reduce(RedOp::Sum, v, kk, xy).unwrap();
    kb.finish("product".into(), vec![rows_size, Expr::int(n)], vec![rows, cols], vec![Store { buf: out, value: dot }])
}

#[test]
fn small_products_leave_the_tiles() {
    // The transformer_block sample's up-projection, and a product of exactly SMALL_PRODUCT.
    assert_eq!(schedule::choose(&product_kernel(Some(14), 128, 32), true), Schedule::Elementwise);
    assert_eq!(schedule::choose(&product_kernel(Some(64), 128, 128), true), Schedule::Elementwise);
    // One more row is a large product (`gemm::large_product`): off the tiles as well.
    assert_eq!(schedule::choose(&product_kernel(Some(65), 128, 128), true), Schedule::Elementwise);
    // A dynamic row count leaves them when its row is short (static K · N at most
    // SMALL_DYNAMIC_ROW), its rows blocked; so does a longer (large) one.
    assert_eq!(schedule::choose(&product_kernel(None, 32, 32), true), Schedule::Elementwise);
    assert_eq!(schedule::choose(&product_kernel(None, 128, 128), true), Schedule::Elementwise);
    assert_eq!(schedule::choose(&product_kernel(None, 160, 128), true), Schedule::Elementwise);
    // Rows of at most SMALL_ROW (AltCLIP's 64 → 768 projection, 1024 → 1024) leave them by
    // the small-product rule too, static or dynamic.
    assert_eq!(schedule::choose(&product_kernel(Some(4096), 1024, 1024), true), Schedule::Elementwise);
    assert_eq!(schedule::choose(&product_kernel(None, 768, 64), true), Schedule::Elementwise);
    assert_eq!(schedule::choose(&product_kernel(None, 1024, 1024), true), Schedule::Elementwise);
    let k = schedule::apply(product_kernel(None, 32, 32), true);
    assert_eq!(k.schedule, Schedule::Channels { group: 32, dims: 1, coord: 0, block: schedule::CHANNEL_BLOCK });
    assert!(schedule::product_once(&Kernel { schedule: Schedule::Elementwise, ..product_kernel(None, 32, 32) }));
    // Lanes 1..8 read row `i + b < m ? i + b : m - 1`: the run-time extent bounds the last
    // block's reads.
    let is_last = |e: &ExprId| matches!(k.expr(*e), KExpr::Binary(BinOp::Sub, ..));
    let clamps = k.exprs.iter().filter(|e| matches!(e, KExpr::Select(_, _, last) if is_last(last)));
    assert_eq!(clamps.count(), schedule::CHANNEL_BLOCK as usize - 1);
    // On columns with rows blocked, and the product counted as computed once per output.
    let k = schedule::apply(product_kernel(Some(14), 128, 32), true);
    assert_eq!(k.schedule, Schedule::Channels { group: 128, dims: 1, coord: 0, block: schedule::CHANNEL_BLOCK });
    assert!(schedule::product_once(&Kernel { schedule: Schedule::Elementwise, ..product_kernel(Some(14), 128, 32) }));
    assert!(schedule::product_once(&Kernel { schedule: Schedule::Elementwise, ..product_kernel(Some(128), 128, 128) }));
}

/// [`product_kernel`] with a symbolic contraction `k` or column count `n` (where `None`).
fn product_kernel_sym(m: i64, n: Option<i64>, depth: Option<i64>) -> Kernel {
    let mut kb = KernelBuilder::new(2);
    let (a, w, out) = (kb.buffer("a", Access::Read), kb.buffer("w", Access::Read), kb.buffer("out", Access::Write));
    let size = |v: Option<i64>, s: &str| v.map_or_else(|| Expr::symbol(s), Expr::int);
    let (n_size, k_size) = (size(n, "n"), size(depth, "k"));
    let (rows, cols, kk) = (kb.i64(m), kb.size(&n_size), kb.size(&k_size));
    let (i, j) = (kb.var(VarId(0)), kb.var(VarId(1)));
    let v = kb.fresh_var().unwrap();
    let p = kb.var(v);
    let ai = kb.binary(BinOp::Mul, i, kk).unwrap();
    let ai = kb.binary(BinOp::Add, ai, p).unwrap();
    let wi = kb.binary(BinOp::Mul, p, cols).unwrap();
    let wi = kb.binary(BinOp::Add, wi, j).unwrap();
    let (x, y) = (kb.load(a, ai), kb.load(w, wi));
    let xy = kb.binary(BinOp::Mul, x, y).unwrap();
    let dot = kb.reduce(RedOp::Sum, v, kk, xy).unwrap();
    kb.finish("product".into(), vec![Expr::int(m), n_size], vec![rows, cols], vec![Store { buf: out, value: dot }])
}

#[test]
fn large_products_leave_the_tiles() {
    // deit_tiny's MLP up-projection (394 · 192 · 768 multiply-adds), static and with a
    // dynamic row count: columns across the work-items in groups of 256, rows in blocks of 8,
    // the ragged last block's lanes clamped by a select (never `s_min`).
    for m in [Some(394), None] {
        let k = product_kernel(m, 768, 192);
        let Some(Schedule::Tiled { reduce, .. }) = schedule::tiled(&k, schedule::TILE) else { panic!("a product") };
        // Its row (192 · 768 multiply-adds) is at most SMALL_ROW: small by its row.
        assert!(schedule::small_product(&k, reduce) && !gemm::large_product(&k, reduce), "{m:?}");
        let k = schedule::apply(k, true);
        assert_eq!(k.schedule, Schedule::Channels { group: 256, dims: 1, coord: 0, block: schedule::CHANNEL_BLOCK }, "{m:?}");
        let selects = k.exprs.iter().filter(|e| matches!(e, KExpr::Select(..))).count();
        let mins = k.exprs.iter().filter(|e| matches!(e, KExpr::Binary(BinOp::Min, ..))).count();
        assert_eq!((selects, mins), (schedule::CHANNEL_BLOCK as usize - 1, 0), "{m:?}");
    }
    // A row longer than SMALL_ROW (1024 · 2048) is a large product: blocked the same way.
    for m in [Some(64), None] {
        let k = product_kernel(m, 2048, 1024);
        let Some(Schedule::Tiled { reduce, .. }) = schedule::tiled(&k, schedule::TILE) else { panic!("a product") };
        assert!(gemm::large_product(&k, reduce) && !schedule::small_product(&k, reduce), "{m:?}");
        let k = schedule::apply(k, true);
        assert!(matches!(k.schedule, Schedule::Channels { dims: 1, coord: 0, block: schedule::CHANNEL_BLOCK, .. }), "{m:?}: {:?}", k.schedule);
    }
    // A dynamic contraction or column count keeps the tiles: the rule needs both static.
    for (n, depth) in [(Some(768), None), (None, Some(192))] {
        let k = product_kernel_sym(394, n, depth);
        assert!(matches!(schedule::choose(&k, true), Schedule::Tiled { .. }), "n {n:?}, k {depth:?}");
    }
    // Small products are not large ones: they keep their own rule.
    let k = product_kernel(Some(14), 128, 32);
    let Some(Schedule::Tiled { reduce, .. }) = schedule::tiled(&k, schedule::TILE) else { panic!("a product") };
    assert!(!gemm::large_product(&k, reduce));
}

#[test]
fn tiny_row_launches_take_few_groups() {
    // 14 rows of 32: one group folds them all.
    assert_eq!(schedule::row_groups(14, 32), 1);
    // A group per row once each row is long enough, capped by MAX_ROW_GROUPS.
    assert_eq!(schedule::row_groups(14, 4096), 14);
    assert_eq!(schedule::row_groups(1 << 17, 64), schedule::MAX_ROW_GROUPS as u64);
    // Rows of 32 in blocks of 64 per group.
    assert_eq!(schedule::row_groups(1000, 32), 16);
    assert_eq!(schedule::row_groups(0, 32), 0);
}
