//! The indexing kernels on the cases OpInfo's samples leave out: duplicate indices (a plain
//! write keeps the last, as PyTorch's CPU loop does), negative indices, `None` entries and split
//! index dims in advanced indexing, NaN in `amax`, floor division in integer `mean`, indices out
//! of range (the kernel reads in bounds), and the same ops fused with their producers in full
//! mode. Expected values are what PyTorch 2.15 computed (the calls are in each test's comment);
//! every case also runs through the reference interpreter, and every module through spirv-val.

mod common;

use common::graph_case::{lowered, GraphCase};

use xpu_workbench::decomp::Mode;
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType, ValueId};
use xpu_workbench::lower::kernel::KExpr;
use xpu_workbench::runtime::plan::run_on_device;
use xpu_workbench::sym::Expr;

/// A graph under construction with the tensors fed to its inputs.
struct Case(GraphCase);

impl Case {
    fn new() -> Case {
        Case(GraphCase::new("index_kernels"))
    }

    fn input(&mut self, t: Tensor) -> ValueId {
        self.0.input(t)
    }

    /// An input whose sizes are `sizes` (symbols bound from the tensor fed to it at run time).
    fn sym_input(&mut self, t: Tensor, sizes: Vec<Expr>) -> ValueId {
        self.0.sym_input(t, sizes)
    }

    fn sym_node(&mut self, target: &str, args: Vec<(&str, Arg)>, dtype: DType, sizes: Vec<Expr>) -> ValueId {
        self.0.sym_node(target, args, dtype, sizes)
    }

    fn f32(&mut self, shape: &[usize], v: &[f32]) -> ValueId {
        self.input(Tensor::from_vec(shape, v.to_vec()).expect("shape"))
    }

    fn i64(&mut self, shape: &[usize], v: &[i64]) -> ValueId {
        self.input(Tensor::from_vec(shape, v.to_vec()).expect("shape"))
    }

    fn node(&mut self, target: &str, args: Vec<(&str, Arg)>, dtype: DType, shape: &[usize]) -> ValueId {
        self.0.node(target, args, &[(dtype, shape)])[0]
    }

    /// Runs the graph with output `out` through the interpreter and through OpenCL in `mode`;
    /// returns both results as f64 (OpenCL `None` where no device is present).
    fn run(self, out: ValueId, mode: Mode) -> (Vec<f64>, Option<Vec<f64>>, usize) {
        let (model, inputs) = self.0.model(&[out]);
        let graph = &model.graphs[0];
        let interp = exec::run(&model, graph, &inputs).expect("interpreter")[0].to_f64_vec();
        let (plan, modules) = lowered(&model, mode);
        let Some(mut dev) = common::opencl_device() else { return (interp, None, plan.kernel_count()) };
        let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
        let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).expect("runs");
        (interp, Some(r.outputs[0].to_f64_vec()), plan.kernel_count())
    }
}

fn same(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(a, b)| a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-6 * b.abs())
}

/// Both backends give `want`.
fn check(case: Case, out: ValueId, mode: Mode, want: &[f64]) -> usize {
    let (interp, opencl, kernels) = case.run(out, mode);
    assert!(same(&interp, want), "interpreter {interp:?}, PyTorch {want:?}");
    if let Some(o) = opencl {
        assert!(same(&o, want), "OpenCL {o:?}, PyTorch {want:?}");
    }
    kernels
}

fn tensors(v: &[ValueId]) -> Arg {
    Arg::Tensors(v.to_vec())
}

fn optional(v: &[Option<ValueId>]) -> Arg {
    Arg::OptionalTensors(v.to_vec())
}

#[test]
fn index_put_keeps_the_last_of_duplicate_indices() {
    // torch.ops.aten.index_put(torch.zeros(5), [tensor([1, 3, 1])], tensor([10., 20., 30.]))
    let mut c = Case::new();
    let x = c.f32(&[5], &[0.0; 5]);
    let i = c.i64(&[3], &[1, 3, 1]);
    let v = c.f32(&[3], &[10.0, 20.0, 30.0]);
    let out = c.node("aten.index_put.default", vec![("self", Arg::Tensor(x)), ("indices", tensors(&[i])), ("values", Arg::Tensor(v))], DType::F32, &[5]);
    check(c, out, Mode::None, &[0.0, 30.0, 0.0, 20.0, 0.0]);
}

#[test]
fn index_put_accumulates_duplicates_and_wraps_negative_indices() {
    // torch.ops.aten.index_put(torch.zeros(5), [tensor([-1, 0, -1])], tensor([1., 2., 3.]), True)
    let mut c = Case::new();
    let x = c.f32(&[5], &[0.0; 5]);
    let i = c.i64(&[3], &[-1, 0, -1]);
    let v = c.f32(&[3], &[1.0, 2.0, 3.0]);
    let args = vec![("self", Arg::Tensor(x)), ("indices", tensors(&[i])), ("values", Arg::Tensor(v)), ("accumulate", Arg::Bool(true))];
    let out = c.node("aten.index_put.default", args, DType::F32, &[5]);
    check(c, out, Mode::None, &[2.0, 0.0, 0.0, 0.0, 4.0]);
}

#[test]
fn index_put_with_a_none_entry_writes_whole_rows() {
    // a = torch.arange(24.).reshape(2, 3, 4)
    // torch.ops.aten.index_put(a, [None, tensor([2, 0])], tensor([100., 200., 300., 400.]))
    let mut c = Case::new();
    let a: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let x = c.f32(&[2, 3, 4], &a);
    let i = c.i64(&[2], &[2, 0]);
    let v = c.f32(&[4], &[100.0, 200.0, 300.0, 400.0]);
    let args = vec![("self", Arg::Tensor(x)), ("indices", optional(&[None, Some(i)])), ("values", Arg::Tensor(v))];
    let out = c.node("aten.index_put.default", args, DType::F32, &[2, 3, 4]);
    let want = [
        100.0, 200.0, 300.0, 400.0, 4.0, 5.0, 6.0, 7.0, 100.0, 200.0, 300.0, 400.0, 100.0, 200.0, 300.0, 400.0, 16.0, 17.0, 18.0, 19.0,
        100.0, 200.0, 300.0, 400.0,
    ];
    check(c, out, Mode::None, &want);
}

#[test]
fn advanced_indexing_places_broadcast_indices_as_pytorch_does() {
    let a: Vec<f32> = (0..24).map(|i| i as f32).collect();
    // Consecutive indexed dims stay in place: a[:, tensor([[2], [0]]), tensor([1, 3])] is 2x2x2.
    let mut c = Case::new();
    let x = c.f32(&[2, 3, 4], &a);
    let i = c.i64(&[2, 1], &[2, 0]);
    let j = c.i64(&[2], &[1, 3]);
    let out = c.node("aten.index.Tensor", vec![("self", Arg::Tensor(x)), ("indices", optional(&[None, Some(i), Some(j)]))], DType::F32, &[2, 2, 2]);
    check(c, out, Mode::None, &[9.0, 11.0, 1.0, 3.0, 21.0, 23.0, 13.0, 15.0]);
    // Split indexed dims go first: a[tensor([1, 0, -1]), :, tensor([3])] is 3x3.
    let mut c = Case::new();
    let x = c.f32(&[2, 3, 4], &a);
    let i = c.i64(&[3], &[1, 0, -1]);
    let j = c.i64(&[1], &[3]);
    let out = c.node("aten.index.Tensor", vec![("self", Arg::Tensor(x)), ("indices", optional(&[Some(i), None, Some(j)]))], DType::F32, &[3, 3]);
    check(c, out, Mode::None, &[15.0, 19.0, 23.0, 3.0, 7.0, 11.0, 15.0, 19.0, 23.0]);
}

#[test]
fn scatter_amax_propagates_nan_and_integer_mean_floors() {
    // torch.scatter_reduce(tensor([1., 2., 3., 4.]), 0, tensor([0, 0, 2]), tensor([5., nan, -1.]),
    //                      'amax', include_self=False)
    let mut c = Case::new();
    let x = c.f32(&[4], &[1.0, 2.0, 3.0, 4.0]);
    let i = c.i64(&[3], &[0, 0, 2]);
    let s = c.f32(&[3], &[5.0, f32::NAN, -1.0]);
    let args = vec![
        ("self", Arg::Tensor(x)),
        ("dim", Arg::Int(0)),
        ("index", Arg::Tensor(i)),
        ("src", Arg::Tensor(s)),
        ("reduce", Arg::String("amax".into())),
        ("include_self", Arg::Bool(false)),
    ];
    let out = c.node("aten.scatter_reduce.two", args, DType::F32, &[4]);
    check(c, out, Mode::None, &[f64::NAN, 2.0, -1.0, 4.0]);
    // torch.scatter_reduce(tensor([0, 0]), 0, tensor([0, 0, 1]), tensor([-3, -4, 5]), 'mean')
    let mut c = Case::new();
    let x = c.i64(&[2], &[0, 0]);
    let i = c.i64(&[3], &[0, 0, 1]);
    let s = c.i64(&[3], &[-3, -4, 5]);
    let args = vec![
        ("self", Arg::Tensor(x)),
        ("dim", Arg::Int(0)),
        ("index", Arg::Tensor(i)),
        ("src", Arg::Tensor(s)),
        ("reduce", Arg::String("mean".into())),
    ];
    let out = c.node("aten.scatter_reduce.two", args, DType::I64, &[2]);
    check(c, out, Mode::None, &[-3.0, 2.0]);
}

#[test]
fn masked_scatter_takes_source_elements_in_order() {
    // torch.zeros(2, 3).masked_scatter(tensor([[1, 0, 1], [0, 1, 1]]).bool(), torch.arange(1., 7.).reshape(2, 3))
    let mut c = Case::new();
    let x = c.f32(&[2, 3], &[0.0; 6]);
    let m = c.input(Tensor::from_vec(&[2, 3], vec![true, false, true, false, true, true]).expect("shape"));
    let s = c.f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let args = vec![("self", Arg::Tensor(x)), ("mask", Arg::Tensor(m)), ("source", Arg::Tensor(s))];
    let out = c.node("aten.masked_scatter.default", args, DType::F32, &[2, 3]);
    check(c, out, Mode::None, &[1.0, 0.0, 2.0, 0.0, 3.0, 4.0]);
}

#[test]
fn out_of_range_indices_stay_in_bounds() {
    // PyTorch raises; the interpreter reports it, and the kernel clamps the gather's index (it
    // reads the last element) and lets the scatter's land nowhere, without touching memory
    // outside its buffers.
    let mut c = Case::new();
    let x = c.f32(&[3], &[1.0, 2.0, 3.0]);
    let i = c.i64(&[2], &[100, -100]);
    let out = c.node("aten.take.default", vec![("self", Arg::Tensor(x)), ("index", Arg::Tensor(i))], DType::F32, &[2]);
    let (model, inputs) = c.0.model(&[out]);
    let graph = &model.graphs[0];
    assert!(exec::run(&model, graph, &inputs).is_err(), "the interpreter must reject an out-of-range index");
    let (plan, modules) = lowered(&model, Mode::None);
    let Some(mut dev) = common::opencl_device() else { return };
    let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
    let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).expect("runs");
    assert_eq!(r.outputs[0].to_f64_vec(), vec![3.0, 1.0]);

    let mut c = Case::new();
    let x = c.f32(&[3], &[1.0, 2.0, 3.0]);
    let i = c.i64(&[2], &[7, 1]);
    let s = c.f32(&[2], &[10.0, 20.0]);
    let args = vec![("self", Arg::Tensor(x)), ("dim", Arg::Int(0)), ("index", Arg::Tensor(i)), ("src", Arg::Tensor(s))];
    let out = c.node("aten.scatter_add.default", args, DType::F32, &[3]);
    let (model, inputs) = c.0.model(&[out]);
    let (plan, modules) = lowered(&model, Mode::None);
    let b = exec::infer_bindings(&model, &plan.graph, &inputs).expect("bindings");
    let r = run_on_device(&mut dev, &plan, &modules, &model, &inputs, &b).expect("runs");
    assert_eq!(r.outputs[0].to_f64_vec(), vec![1.0, 22.0, 3.0]);
}

#[test]
fn full_mode_fuses_producers_into_gathers_and_realizes_them_for_scatters() {
    // (x * 2)[:, tensor([2, 0])] is one kernel: the product is computed at the gathered
    // positions only.
    let mut c = Case::new();
    let x = c.f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let i = c.i64(&[2], &[2, 0]);
    let y = c.node("aten.mul.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Float(2.0))], DType::F32, &[2, 3]);
    let out = c.node("aten.index.Tensor", vec![("self", Arg::Tensor(y)), ("indices", optional(&[None, Some(i)]))], DType::F32, &[2, 2]);
    assert_eq!(check(c, out, Mode::Full, &[6.0, 2.0, 12.0, 8.0]), 1);
    // torch.zeros(3).scatter_add(0, tensor([2, 2, 0]), tensor([1., 2., 3.]) + 1)
    let mut c = Case::new();
    let x = c.f32(&[3], &[0.0; 3]);
    let i = c.i64(&[3], &[2, 2, 0]);
    let s = c.f32(&[3], &[1.0, 2.0, 3.0]);
    let s1 = c.node("aten.add.Tensor", vec![("self", Arg::Tensor(s)), ("other", Arg::Float(1.0))], DType::F32, &[3]);
    let args = vec![("self", Arg::Tensor(x)), ("dim", Arg::Int(0)), ("index", Arg::Tensor(i)), ("src", Arg::Tensor(s1))];
    let out = c.node("aten.scatter_add.default", args, DType::F32, &[3]);
    // A scatter is a heavy kernel whose loop reads every source element once per output element:
    // its pointwise producer is realized in a kernel of its own (as Inductor realizes the inputs
    // of extern and template kernels) rather than recomputed inside that loop.
    assert_eq!(check(c, out, Mode::Full, &[4.0, 0.0, 5.0]), 2);
}

#[test]
fn index_put_with_a_boolean_mask_writes_where_it_holds() {
    // torch.ops.aten.index_put(torch.ones(2, 3), [tensor([[1, 0, 1], [0, 1, 0]]).bool()], tensor([1., 2., 3.]))
    let mut c = Case::new();
    let x = c.f32(&[2, 3], &[1.0; 6]);
    let m = c.input(Tensor::from_vec(&[2, 3], vec![true, false, true, false, true, false]).expect("shape"));
    let v = c.f32(&[3], &[1.0, 2.0, 3.0]);
    let out = c.node("aten.index_put.default", vec![("self", Arg::Tensor(x)), ("indices", tensors(&[m])), ("values", Arg::Tensor(v))], DType::F32, &[2, 3]);
    check(c, out, Mode::None, &[1.0, 1.0, 2.0, 1.0, 3.0, 1.0]);
    // torch.ops.aten.index_put(torch.ones(2, 3), [None, tensor([1, 0, 1]).bool()], tensor([[1., 2.], [3., 4.]]), True)
    let mut c = Case::new();
    let x = c.f32(&[2, 3], &[1.0; 6]);
    let m = c.input(Tensor::from_vec(&[3], vec![true, false, true]).expect("shape"));
    let v = c.f32(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let args = vec![("self", Arg::Tensor(x)), ("indices", optional(&[None, Some(m)])), ("values", Arg::Tensor(v)), ("accumulate", Arg::Bool(true))];
    let out = c.node("aten.index_put.default", args, DType::F32, &[2, 3]);
    check(c, out, Mode::None, &[2.0, 1.0, 3.0, 4.0, 1.0, 5.0]);
}

#[test]
fn a_scatter_along_a_dim_loops_over_that_dim_of_the_index_only() {
    // scatter_add(self [4, 6], 1, index [3, 5], src [3, 5]): each output element folds the 5
    // positions of its index row, not all 15, and reads the index under a mask (rows 3.. of
    // the output have no index row).
    let mut c = Case::new();
    let x = c.f32(&[4, 6], &[0.0; 24]);
    let i = c.i64(&[3, 5], &[0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2]);
    let s = c.f32(&[3, 5], &[1.0; 15]);
    let args = vec![("self", Arg::Tensor(x)), ("dim", Arg::Int(1)), ("index", Arg::Tensor(i)), ("src", Arg::Tensor(s))];
    let out = c.node("aten.scatter_add.default", args, DType::F32, &[4, 6]);
    let (model, _) = c.0.model(&[out]);
    let (plan, _) = lowered(&model, Mode::None);
    let k = plan.kernels().next().expect("one kernel");
    let extents: Vec<Option<i64>> = k
        .exprs
        .iter()
        .filter_map(|e| match e {
            KExpr::Reduce { extent, .. } => Some(match k.expr(*extent) {
                KExpr::I64(n) => Some(*n),
                _ => None,
            }),
            _ => None,
        })
        .collect();
    assert_eq!(extents, vec![Some(5)], "one loop of index.size(1)");
    assert!(k.exprs.iter().any(|e| matches!(e, KExpr::Load { mask: Some(_), .. })), "the index is read under a mask");
}

#[test]
fn dynamic_sizes_reach_the_kernels_as_arguments() {
    // x: [s0, 4] fed a 3x4 tensor; x[:, tensor([3, 0, -1])] then index_put(accumulate) of those
    // columns back into zeros [s0, 4] at rows tensor([2, 2, 0]) of length s1 = 3.
    let (s0, s1) = (Expr::symbol("s0"), Expr::symbol("s1"));
    let mut c = Case::new();
    let a: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let x = c.sym_input(Tensor::from_vec(&[3, 4], a).expect("shape"), vec![s0.clone(), Expr::int(4)]);
    let cols = c.i64(&[3], &[3, 0, -1]);
    let g = c.sym_node("aten.index.Tensor", vec![("self", Arg::Tensor(x)), ("indices", optional(&[None, Some(cols)]))], DType::F32, vec![s0.clone(), Expr::int(3)]);
    let rows = c.sym_input(Tensor::from_vec(&[3], vec![2i64, 2, 0]).expect("shape"), vec![s1.clone()]);
    let z = c.sym_input(Tensor::from_vec(&[3, 4], vec![0f32; 12]).expect("shape"), vec![s0.clone(), Expr::int(4)]);
    // values: g's first column as [s0, 1] (s0 = s1 = 3 here), broadcast over self[rows, :].
    let vals = c.sym_node("aten.slice.Tensor", vec![("self", Arg::Tensor(g)), ("dim", Arg::Int(1)), ("start", Arg::Int(0)), ("end", Arg::Int(1))], DType::F32, vec![s0.clone(), Expr::int(1)]);
    let v1 = c.sym_node("aten.view.default", vec![("self", Arg::Tensor(vals)), ("size", Arg::Ints(vec![-1, 1]))], DType::F32, vec![s0.clone(), Expr::int(1)]);
    let args = vec![
        ("self", Arg::Tensor(z)),
        ("indices", optional(&[Some(rows), None])),
        ("values", Arg::Tensor(v1)),
        ("accumulate", Arg::Bool(true)),
    ];
    let out = c.sym_node("aten.index_put.default", args, DType::F32, vec![s0, Expr::int(4)]);
    // x = torch.arange(12.).reshape(3, 4); v = x[:, tensor([3, 0, -1])][:, 0:1].reshape(-1, 1)
    // torch.ops.aten.index_put(torch.zeros(3, 4), [tensor([2, 2, 0]), None], v, True)
    let want = [11.0, 11.0, 11.0, 11.0, 0.0, 0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 10.0];
    check(c, out, Mode::None, &want);
}

#[test]
fn flattened_overloads_run_as_kernels() {
    // torch.roll(x, 1) with no dims: the flattened tensor shifted, the shape kept.
    let mut c = Case::new();
    let x = c.f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = c.node("aten.roll.default", vec![("self", Arg::Tensor(x)), ("shifts", Arg::Ints(vec![1])), ("dims", Arg::Ints(vec![]))], DType::F32, &[2, 3]);
    check(c, out, Mode::None, &[6.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // torch.take_along_dim(x, idx) with no dim: x.view(-1).gather(0, idx.view(-1)).
    let mut c = Case::new();
    let x = c.f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let i = c.i64(&[2, 2], &[5, 0, 3, 3]);
    let out = c.node("aten.take_along_dim.default", vec![("self", Arg::Tensor(x)), ("indices", Arg::Tensor(i))], DType::F32, &[4]);
    check(c, out, Mode::None, &[6.0, 1.0, 4.0, 4.0]);
}

#[test]
fn repeat_interleave_with_counts_sizes_its_output_from_the_data() {
    // torch.repeat_interleave(x, tensor([2, 0, 1]), dim=0): the output's row count u0 = 3 is
    // the counts' sum, computed by a size step before the kernel.
    let mut c = Case::new();
    let x = c.f32(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let r = c.i64(&[3], &[2, 0, 1]);
    let args = vec![("self", Arg::Tensor(x)), ("repeats", Arg::Tensor(r)), ("dim", Arg::Int(0))];
    let out = c.sym_node("aten.repeat_interleave.self_Tensor", args, DType::F32, vec![Expr::symbol("u0"), Expr::int(2)]);
    check(c, out, Mode::None, &[1.0, 2.0, 1.0, 2.0, 5.0, 6.0]);
}

#[test]
fn a_boolean_mask_index_sizes_its_output_from_the_mask() {
    // x = arange(12.).reshape(2, 3, 2); x[tensor([[True, False, True], [False, False, True]])]
    // == rows (0, 0), (0, 2), (1, 2): [[0, 1], [4, 5], [10, 11]], u0 = 3 from a size step.
    let mut c = Case::new();
    let x = c.f32(&[2, 3, 2], &(0..12).map(|i| i as f32).collect::<Vec<_>>());
    let mask = Tensor::from_vec(&[2, 3], vec![1i64, 0, 1, 0, 0, 1]).expect("mask").cast(DType::Bool).expect("bool");
    let m = c.input(mask);
    let out = c.sym_node("aten.index.Tensor", vec![("self", Arg::Tensor(x)), ("indices", optional(&[Some(m)]))], DType::F32, vec![Expr::symbol("u0"), Expr::int(2)]);
    check(c, out, Mode::None, &[0.0, 1.0, 4.0, 5.0, 10.0, 11.0]);
}
