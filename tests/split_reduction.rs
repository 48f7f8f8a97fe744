//! Split reductions (`lower::kernel::split`): few long rows are folded by many work-groups in
//! two kernels. Checked here on OpenCL against float64 folds of the same float32 inputs, at
//! row lengths around the chunk size (1, 7, one chunk, one past it, a length that is no
//! multiple of anything, two million) for a dynamic length, and for static shapes; and that
//! the plan splits exactly the kernels it should: not short rows, not many rows, not a
//! variance (its second fold reads the first's mean).

mod common;

use common::graph_case::{lowered, GraphCase};
use rand::{Rng, SeedableRng};
use xpu_workbench::decomp::Mode;
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType, ValueId};
use xpu_workbench::lower::kernel::split::MIN_CHUNK;
use xpu_workbench::lower::Plan;
use xpu_workbench::runtime::plan::run_on_device;
use xpu_workbench::sym::Expr;

fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(-4.0f32..4.0)).collect()
}

/// Kernel names of the plan's steps.
fn kernel_names(plan: &Plan) -> Vec<String> {
    plan.kernels().map(|k| k.name.clone()).collect()
}

/// The plan of `case` (outputs `outs`) and its outputs on OpenCL, or `None` without a device.
fn run(case: GraphCase, outs: &[ValueId]) -> (Plan, Option<Vec<Vec<f64>>>) {
    let (model, inputs) = case.model(outs);
    let (plan, modules) = lowered(&model, Mode::Full);
    let Some(mut dev) = common::opencl_device() else { return (plan, None) };
    let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
    let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).unwrap_or_else(|e| panic!("runs: {e}"));
    let outs = r.outputs.iter().map(Tensor::to_f64_vec).collect();
    (plan, Some(outs))
}

/// `|got − want| ≤ 1e-5 · Σ|x|` per row: float32 chunked sums stay far inside it.
fn close_sum(got: &[f64], want: &[f64], scale: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: output length");
    for (i, ((g, w), s)) in got.iter().zip(want).zip(scale).enumerate() {
        assert!((g - w).abs() <= 1e-5 * s.max(1.0), "{what}, row {i}: got {g}, want {w} (Σ|x| = {s})");
    }
}

/// `got` against the float64 sums of `x`'s rows of `n` (within [`close_sum`]'s bound).
fn close_row_sums(got: &[f64], x: &[f32], n: usize, what: &str) {
    let want: Vec<f64> = x.chunks(n).map(|r| r.iter().map(|v| *v as f64).sum()).collect();
    let scale: Vec<f64> = x.chunks(n).map(|r| r.iter().map(|v| v.abs() as f64).sum()).collect();
    close_sum(got, &want, &scale, what);
}

/// `rows × n` values of a dynamic `n`: row sums, row maxima and row means.
fn rows_of_dynamic_length(rows: usize, n: usize) {
    let x = values(rows * n, n as u64);
    let mut c = GraphCase::new("split_rows");
    let s = Expr::symbol("s0");
    let t = Tensor::from_vec(&[rows, n], x.iter().map(|v| *v as f64).collect()).expect("shape").cast(DType::F32).expect("cast");
    let xin = c.sym_input(t, vec![Expr::int(rows as i64), s]);
    let dim = ("dim", Arg::Ints(vec![1]));
    let sum = c.sym_node("aten.sum.dim_IntList", vec![("self", Arg::Tensor(xin)), dim.clone()], DType::F32, vec![Expr::int(rows as i64)]);
    let max = c.sym_node("aten.amax.default", vec![("self", Arg::Tensor(xin)), dim.clone()], DType::F32, vec![Expr::int(rows as i64)]);
    let mean = c.sym_node("aten.mean.dim", vec![("self", Arg::Tensor(xin)), dim], DType::F32, vec![Expr::int(rows as i64)]);
    let (plan, got) = run(c, &[sum, max, mean]);
    let names = kernel_names(&plan);
    // Length is dynamic: every statistic is split, its chunk count chosen at launch.
    assert_eq!(names.iter().filter(|n| n.ends_with("_partials")).count(), 3, "{names:?}");
    let Some(got) = got else { return };
    let row = |r: usize| &x[r * n..(r + 1) * n];
    let want_sum: Vec<f64> = (0..rows).map(|r| row(r).iter().map(|v| *v as f64).sum()).collect();
    let scale: Vec<f64> = (0..rows).map(|r| row(r).iter().map(|v| v.abs() as f64).sum()).collect();
    let want_max: Vec<f64> = (0..rows).map(|r| row(r).iter().fold(f64::NEG_INFINITY, |m, v| m.max(*v as f64))).collect();
    let what = format!("{rows} rows of {n}");
    close_sum(&got[0], &want_sum, &scale, &format!("sum, {what}"));
    assert_eq!(got[1], want_max, "amax, {what}");
    let want_mean: Vec<f64> = want_sum.iter().map(|s| s / n as f64).collect();
    let mean_scale: Vec<f64> = scale.iter().map(|s| s / n as f64).collect();
    close_sum(&got[2], &want_mean, &mean_scale, &format!("mean, {what}"));
}

#[test]
fn one_dynamic_row_at_lengths_around_the_chunk() {
    let chunk = MIN_CHUNK as usize;
    for n in [1, 7, chunk - 1, chunk, chunk + 1, 2 * chunk + 1, 100_003, 2_000_000] {
        rows_of_dynamic_length(1, n);
    }
}

#[test]
fn few_dynamic_rows() {
    for n in [3, 9_000, 250_001] {
        rows_of_dynamic_length(3, n);
    }
}

/// A whole-tensor `sum` of a static `[rows, n]` input (one row of `rows·n`), and its row
/// sums: split only where the row is long and the rows few.
fn static_sums(rows: usize, n: usize) -> (Vec<String>, Option<Vec<Vec<f64>>>, Vec<f32>) {
    let x = values(rows * n, 7);
    let mut c = GraphCase::new("split_static");
    let xin = c.input(Tensor::from_vec(&[rows, n], x.iter().map(|v| *v as f64).collect()).expect("shape").cast(DType::F32).expect("cast"));
    let total = c.node("aten.sum.default", vec![("self", Arg::Tensor(xin))], &[(DType::F32, &[])])[0];
    let per_row = c.node("aten.sum.dim_IntList", vec![("self", Arg::Tensor(xin)), ("dim", Arg::Ints(vec![1]))], &[(DType::F32, &[rows])])[0];
    let (plan, got) = run(c, &[total, per_row]);
    (kernel_names(&plan), got, x)
}

#[test]
fn static_shapes_split_only_few_long_rows() {
    // 4 rows of 50,000: both the total and the row sums are split.
    let (names, got, x) = static_sums(4, 50_000);
    assert_eq!(names.iter().filter(|n| n.ends_with("_partials")).count(), 2, "{names:?}");
    if let Some(got) = got {
        let total: f64 = x.iter().map(|v| *v as f64).sum();
        let scale: f64 = x.iter().map(|v| v.abs() as f64).sum();
        close_sum(&got[0], &[total], &[scale], "total of 4 × 50,000");
        close_row_sums(&got[1], &x, 50_000, "row sums of 4 × 50,000");
    }
    // 1,024 rows of 64: the total (65,536 elements) is split, the short rows are not.
    let (names, got, x) = static_sums(1024, 64);
    assert_eq!(names.iter().filter(|n| n.ends_with("_partials")).count(), 1, "{names:?}");
    if let Some(got) = got {
        close_row_sums(&got[1], &x, 64, "row sums of 1,024 × 64");
    }
    // A short tensor: nothing to split.
    let (names, _, _) = static_sums(2, 100);
    assert!(!names.iter().any(|n| n.ends_with("_partials")), "{names:?}");
}

#[test]
fn a_variance_is_not_split() {
    let n = 50_000;
    let x = values(n, 3);
    let mut c = GraphCase::new("split_var");
    let xin = c.input(Tensor::from_vec(&[n], x.iter().map(|v| *v as f64).collect()).expect("shape").cast(DType::F32).expect("cast"));
    let var = c.node("aten.var.correction", vec![("self", Arg::Tensor(xin)), ("dim", Arg::Ints(vec![0]))], &[(DType::F32, &[])])[0];
    let (plan, got) = run(c, &[var]);
    let names = kernel_names(&plan);
    assert!(!names.iter().any(|n| n.ends_with("_partials")), "{names:?}");
    if let Some(got) = got {
        let mean = x.iter().map(|v| *v as f64).sum::<f64>() / n as f64;
        let want = x.iter().map(|v| (*v as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        assert!((got[0][0] - want).abs() <= 1e-4 * want, "var: got {}, want {want}", got[0][0]);
    }
}

/// Row sums over the last two dims of `[2, 3, 100, 100]`: six outputs of 10,000 elements each,
/// a rank-2 output whose folds stride through memory (one work-item per output unsplit). The
/// split sees the row coordinates before the elementwise schedule rewrites them.
#[test]
fn sums_over_trailing_dims_of_a_rank_four_input() {
    let (rows, n) = (6usize, 10_000usize);
    let x = values(rows * n, 11);
    let mut c = GraphCase::new("split_trailing");
    let xin = c.input(Tensor::from_vec(&[2, 3, 100, 100], x.iter().map(|v| *v as f64).collect()).expect("shape").cast(DType::F32).expect("cast"));
    let sum = c.node("aten.sum.dim_IntList", vec![("self", Arg::Tensor(xin)), ("dim", Arg::Ints(vec![2, 3]))], &[(DType::F32, &[2, 3])])[0];
    let (plan, got) = run(c, &[sum]);
    let names = kernel_names(&plan);
    assert_eq!(names.iter().filter(|n| n.ends_with("_partials")).count(), 1, "{names:?}");
    if let Some(got) = got {
        close_row_sums(&got[0], &x, n, "sums over dims [2, 3]");
    }
}

/// Row sums of `[s0, 50,000]` with the row count dynamic, at 0 rows (an empty batch: nothing
/// to launch, and the chunk count must still evaluate) and at 2.
#[test]
fn a_dynamic_row_count_including_none() {
    let n = 50_000usize;
    for rows in [0usize, 2] {
        let x = values(rows * n, 5);
        let mut c = GraphCase::new("split_dynamic_rows");
        let t = Tensor::from_vec(&[rows, n], x.iter().map(|v| *v as f64).collect()).expect("shape").cast(DType::F32).expect("cast");
        let xin = c.sym_input(t, vec![Expr::symbol("s0"), Expr::int(n as i64)]);
        let sum = c.sym_node("aten.sum.dim_IntList", vec![("self", Arg::Tensor(xin)), ("dim", Arg::Ints(vec![1]))], DType::F32, vec![Expr::symbol("s0")]);
        let (plan, got) = run(c, &[sum]);
        let names = kernel_names(&plan);
        assert_eq!(names.iter().filter(|n| n.ends_with("_partials")).count(), 1, "{names:?}");
        if let Some(got) = got {
            close_row_sums(&got[0], &x, n, &format!("{rows} rows"));
        }
    }
}
