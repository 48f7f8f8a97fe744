//! Full mode computes a convolution inside its pointwise epilogue's kernel where every
//! convolution element is computed once there (`relu(conv(x))` is one kernel), and keeps it a
//! kernel of its own where the epilogue would compute an element more than once: broadcast
//! over a larger map (squeeze-excite), a second reader through a view (at other coordinates),
//! or a `cat` (whose select evaluates every input). Readers at the convolution's own
//! coordinates share one expression, however many. Each plan is checked against the interpreter on OpenCL.

mod common;

use common::graph_case::{lowered, GraphCase};
use xpu_workbench::decomp::Mode;
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType, ValueId};
use xpu_workbench::runtime::plan::run_on_device;

fn noise(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed.wrapping_mul(40_503)) % 1000) as f32 / 500.0 - 1.0).collect()
}

/// `convolution(x, w, b)` with stride 1, padding 1: [1, 2, 5, 5] → [1, 3, 5, 5] (or a 1×1 input).
fn conv(c: &mut GraphCase, side: usize, seed: u32) -> ValueId {
    let x = c.input(Tensor::from_vec(&[1, 2, side, side], noise(2 * side * side, seed)).expect("x"));
    let w = c.input(Tensor::from_vec(&[3, 2, 3, 3], noise(54, seed + 1)).expect("w"));
    let b = c.input(Tensor::from_vec(&[3], noise(3, seed + 2)).expect("b"));
    let args = vec![
        ("input", Arg::Tensor(x)),
        ("weight", Arg::Tensor(w)),
        ("bias", Arg::Tensor(b)),
        ("stride", Arg::Ints(vec![1, 1])),
        ("padding", Arg::Ints(vec![1, 1])),
        ("dilation", Arg::Ints(vec![1, 1])),
        ("transposed", Arg::Bool(false)),
        ("output_padding", Arg::Ints(vec![0, 0])),
        ("groups", Arg::Int(1)),
    ];
    c.node("aten.convolution.default", args, &[(DType::F32, &[1, 3, side, side])])[0]
}

fn unary(c: &mut GraphCase, target: &str, x: ValueId, shape: &[usize]) -> ValueId {
    c.node(target, vec![("self", Arg::Tensor(x))], &[(DType::F32, shape)])[0]
}

/// Kernels in the full plan; the plan's outputs equal the interpreter's on OpenCL.
fn full_plan_kernels(c: GraphCase, outs: &[ValueId]) -> usize {
    let (model, inputs) = c.model(outs);
    let (plan, modules) = lowered(&model, Mode::Full);
    let want = exec::run(&model, &model.graphs[0], &inputs).expect("interpreter");
    if let Some(mut dev) = common::opencl_device() {
        let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
        let got = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).expect("runs").outputs;
        for (g, w) in got.iter().zip(&want) {
            for (a, b) in g.to_f64_vec().iter().zip(w.to_f64_vec()) {
                assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "OpenCL {a}, interpreter {b}");
            }
        }
    }
    plan.kernel_count()
}

#[test]
fn a_convolution_and_its_activation_are_one_kernel() {
    let mut c = GraphCase::new("conv_relu");
    let y = conv(&mut c, 5, 1);
    let r = unary(&mut c, "aten.relu.default", y, &[1, 3, 5, 5]);
    assert_eq!(full_plan_kernels(c, &[r]), 1);
}

#[test]
fn a_convolution_broadcast_over_a_larger_map_keeps_its_kernel() {
    // Squeeze-excite: sigmoid(conv(pooled)) [1, 3, 1, 1] scales a [1, 3, 4, 4] map.
    let mut c = GraphCase::new("squeeze_excite");
    let y = conv(&mut c, 1, 2);
    let s = unary(&mut c, "aten.sigmoid.default", y, &[1, 3, 1, 1]);
    let m = c.input(Tensor::from_vec(&[1, 3, 4, 4], noise(48, 3)).expect("map"));
    let out = c.node("aten.mul.Tensor", vec![("self", Arg::Tensor(m)), ("other", Arg::Tensor(s))], &[(DType::F32, &[1, 3, 4, 4])])[0];
    assert_eq!(full_plan_kernels(c, &[out]), 2);
}

#[test]
fn a_convolution_read_twice_at_its_own_coordinates_is_one_kernel() {
    // relu(y) + sigmoid(y): two pointwise readers at the convolution's coordinates are one
    // expression of the kernel, one convolution per element (a batch norm + GELU reads its
    // input twice the same way).
    let mut c = GraphCase::new("two_readers");
    let y = conv(&mut c, 5, 4);
    let r = unary(&mut c, "aten.relu.default", y, &[1, 3, 5, 5]);
    let s = unary(&mut c, "aten.sigmoid.default", y, &[1, 3, 5, 5]);
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(r)), ("other", Arg::Tensor(s))], &[(DType::F32, &[1, 3, 5, 5])])[0];
    assert_eq!(full_plan_kernels(c, &[out]), 1);
}

#[test]
fn a_convolution_read_through_a_view_as_well_or_concatenated_keeps_its_kernel() {
    // y + flip(y): the view reads y at other coordinates, a second convolution per element.
    let mut c = GraphCase::new("flipped_reader");
    let y = conv(&mut c, 5, 7);
    let f = c.node("aten.flip.default", vec![("self", Arg::Tensor(y)), ("dims", Arg::Ints(vec![3]))], &[(DType::F32, &[1, 3, 5, 5])])[0];
    let out = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(y)), ("other", Arg::Tensor(f))], &[(DType::F32, &[1, 3, 5, 5])])[0];
    assert_eq!(full_plan_kernels(c, &[out]), 2);
    // cat([relu(conv a), relu(conv b)], 1): both convolutions stay kernels, the relus fuse into the cat.
    let mut c = GraphCase::new("cat");
    let a = conv(&mut c, 5, 5);
    let b = conv(&mut c, 5, 6);
    let ra = unary(&mut c, "aten.relu.default", a, &[1, 3, 5, 5]);
    let rb = unary(&mut c, "aten.relu.default", b, &[1, 3, 5, 5]);
    let out = c.node("aten.cat.default", vec![("tensors", Arg::Tensors(vec![ra, rb])), ("dim", Arg::Int(1))], &[(DType::F32, &[1, 6, 5, 5])])[0];
    assert_eq!(full_plan_kernels(c, &[out]), 3);
}
