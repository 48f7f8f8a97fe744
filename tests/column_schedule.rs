//! The column schedule (`lower::schedule::Schedule::Columns`): elementwise kernels with a
//! broadcast read run on a two-dimensional grid whose columns are the last output coordinate or
//! the last two, rounded up to whole groups where no group divides them. Checked against the
//! reference interpreter bit for bit (adds and products round the same on both) on
//! transformer-like shapes with a dynamic sequence length (1, 3, 17), a rank-2
//! output whose row operand is broadcast along the columns, a transposed read, and the shapes
//! that must keep the one-dimensional schedule; every module also passes spirv-val.

mod common;

use common::graph_case::{lowered, GraphCase};
use xpu_workbench::decomp::Mode;
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType, ValueId};
use xpu_workbench::lower::schedule::Schedule;
use xpu_workbench::runtime::plan::run_on_device;
use xpu_workbench::sym::Expr;

fn ramp(n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919) % 1009) as f32 * scale - 3.0).collect()
}

fn tensor(shape: &[usize], scale: f32) -> Tensor {
    Tensor::from_vec(shape, ramp(shape.iter().product(), scale)).expect("shape")
}

/// Runs `case` (output `out`) in full mode through the interpreter and OpenCL; asserts they
/// agree bit for bit and returns the schedules of the plan's kernels.
fn agree(case: GraphCase, out: ValueId, what: &str) -> Vec<Schedule> {
    let (model, inputs) = case.model(&[out]);
    let graph = &model.graphs[0];
    let want = exec::run(&model, graph, &inputs).expect("interpreter")[0].to_f64_vec();
    let (plan, modules) = lowered(&model, Mode::Full);
    let schedules = plan.kernels().map(|k| k.schedule).collect();
    if let Some(mut dev) = common::opencl_device() {
        let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
        let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).unwrap_or_else(|e| panic!("{what}: {e}"));
        let got = r.outputs[0].to_f64_vec();
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(g == w, "{what}, element {i}: OpenCL {g}, interpreter {w}");
        }
    }
    schedules
}

/// `(x + bias) * scale` over `[4, s, 768]` with `s` dynamic: a transformer's bias add.
#[test]
fn a_bias_add_over_a_dynamic_sequence_runs_on_columns() {
    for s in [1usize, 3, 17] {
        let mut c = GraphCase::new("columns");
        let x = c.sym_input(tensor(&[4, s, 768], 0.01), vec![Expr::int(4), Expr::symbol("s0"), Expr::int(768)]);
        let bias = c.input(tensor(&[768], 0.5));
        let sizes = vec![Expr::int(4), Expr::symbol("s0"), Expr::int(768)];
        let y = c.sym_node("aten.add.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(bias))], DType::F32, sizes.clone());
        let z = c.sym_node("aten.mul.Tensor", vec![("self", Arg::Tensor(y)), ("other", Arg::Float(0.5))], DType::F32, sizes);
        let schedules = agree(c, z, &format!("s = {s}"));
        assert_eq!(schedules, vec![Schedule::Columns { group: 256, dims: 1 }], "s = {s}");
    }
}

/// `x * m + b` over `[r, 128]` with `m` of shape `[r, 1]` (broadcast along the columns) and `b`
/// of shape `[128]` (along the rows); and a transposed read beside a broadcast one.
#[test]
fn row_and_column_broadcasts_and_a_transposed_read() {
    let mut c = GraphCase::new("columns");
    let x = c.input(tensor(&[5, 128], 0.01));
    let m = c.input(tensor(&[5, 1], 0.3));
    let b = c.input(tensor(&[128], 0.2));
    let xm = c.node("aten.mul.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(m))], &[(DType::F32, &[5, 128])])[0];
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(xm)), ("other", Arg::Tensor(b))], &[(DType::F32, &[5, 128])])[0];
    assert_eq!(agree(c, out, "[5, 128]"), vec![Schedule::Columns { group: 128, dims: 1 }]);

    // y[i, j, k] = x[k, j, i]ᵀ-like read of `t` ([64, 3, 2] permuted to [2, 3, 64]) plus a bias.
    let mut c = GraphCase::new("columns");
    let t = c.input(tensor(&[64, 3, 2], 0.05));
    let bias = c.input(tensor(&[64], 0.7));
    let p = c.node("aten.permute.default", vec![("self", Arg::Tensor(t)), ("dims", Arg::Ints(vec![2, 1, 0]))], &[(DType::F32, &[2, 3, 64])])[0];
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(p)), ("other", Arg::Tensor(bias))], &[(DType::F32, &[2, 3, 64])])[0];
    assert_eq!(agree(c, out, "[2, 3, 64] transposed"), vec![Schedule::Columns { group: 64, dims: 1 }]);
}

/// A batch norm's per-channel scale and shift over `[n, 3, 8, 16]` images: the last extent (16)
/// takes no column group, the last two (128 pixels) do, so the column is the pixel and the
/// channel's scale is one value per row. Also for a batch of 1 and a dynamic batch.
#[test]
fn per_channel_operands_of_images_run_on_pixel_columns() {
    for n in [1usize, 2, 5] {
        let mut c = GraphCase::new("columns");
        let sizes = vec![Expr::symbol("s0"), Expr::int(3), Expr::int(8), Expr::int(16)];
        let x = c.sym_input(tensor(&[n, 3, 8, 16], 0.01), sizes.clone());
        let scale = c.input(tensor(&[3, 1, 1], 0.3));
        let shift = c.input(tensor(&[3, 1, 1], 0.2));
        let y = c.sym_node("aten.mul.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(scale))], DType::F32, sizes.clone());
        let z = c.sym_node("aten.add.Tensor", vec![("self", Arg::Tensor(y)), ("other", Arg::Tensor(shift))], DType::F32, sizes);
        assert_eq!(agree(c, z, &format!("n = {n}")), vec![Schedule::Columns { group: 128, dims: 2 }], "n = {n}");
    }
}

/// Columns no group divides: rounded up to whole groups when at most a quarter of the work-items
/// idle (a 7×7 feature map in groups of 64, 96 columns in a group of 128), the work-items past
/// the end storing nothing.
#[test]
fn columns_no_group_divides_are_padded() {
    let mut c = GraphCase::new("columns");
    let x = c.input(tensor(&[6, 96], 0.01));
    let b = c.input(tensor(&[96], 0.2));
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(b))], &[(DType::F32, &[6, 96])])[0];
    assert_eq!(agree(c, out, "[6, 96]"), vec![Schedule::Columns { group: 128, dims: 1 }]);

    let mut c = GraphCase::new("columns");
    let x = c.input(tensor(&[2, 5, 7, 7], 0.01));
    let scale = c.input(tensor(&[5, 1, 1], 0.3));
    let out = c.node("aten.mul.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(scale))], &[(DType::F32, &[2, 5, 7, 7])])[0];
    assert_eq!(agree(c, out, "[2, 5, 7, 7]"), vec![Schedule::Columns { group: 64, dims: 2 }]);
}

/// A column that would leave more than a quarter of its group idle, and a kernel whose reads
/// all follow the output, keep the one-dimensional schedule.
#[test]
fn other_shapes_keep_the_linear_schedule() {
    let mut c = GraphCase::new("columns");
    let x = c.input(tensor(&[6, 40], 0.01));
    let b = c.input(tensor(&[40], 0.2));
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(b))], &[(DType::F32, &[6, 40])])[0];
    assert_eq!(agree(c, out, "[6, 40]"), vec![Schedule::Elementwise]);

    let mut c = GraphCase::new("columns");
    let x = c.input(tensor(&[6, 256], 0.01));
    let y = c.input(tensor(&[6, 256], 0.02));
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Tensor(y))], &[(DType::F32, &[6, 256])])[0];
    assert_eq!(agree(c, out, "[6, 256] same layout"), vec![Schedule::Elementwise]);
}
