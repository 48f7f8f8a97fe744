//! Plan steps that need the host between launches, end to end on the reference device and on
//! OpenCL: a sync step binds the data-dependent size `u0` mid-plan and a later kernel is
//! launched at it; a runtime assertion on `u0` fails, naming its node and the bound value; a
//! host fallback step (an eager-only op run through the interpreter) is labelled and timed as
//! host time in the plan, the run and the profile trace, never as a kernel or device time; and
//! an op with neither a kernel nor `.eager()` still fails to lower (no silent host fallback).
//! Every node reading or producing a complex tensor is a host step; complex values stay on the
//! host between them, and a complex graph output is refused.

mod common;

use xpu_workbench::decomp::{Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::ir::{Arg, DType, Format, Graph, InputKind, Model, NamedArg, NodeMeta, SymIntArg, TensorMeta, ValueId, ValueKind};
use xpu_workbench::lower::{self, LowerError, Plan, Step};
use xpu_workbench::profile::{self, HostSpan, ProfileOptions};
use xpu_workbench::runtime::plan::{compile_plan, run_on_device, PlanRun, RunError};
use xpu_workbench::runtime::reference::run_reference;
use xpu_workbench::runtime::Backend;
use xpu_workbench::sym::Expr;

fn tensor(dtype: DType, sizes: Vec<Expr>) -> ValueKind {
    ValueKind::Tensor(TensorMeta::contiguous(dtype, sizes))
}

fn ints(sizes: &[i64]) -> Vec<Expr> {
    sizes.iter().map(|&s| Expr::int(s)).collect()
}

fn node(g: &mut Graph, name: &str, target: &str, args: Vec<(&str, Arg)>, out: Option<ValueKind>) -> Option<ValueId> {
    let args = args.into_iter().map(|(n, a)| NamedArg { name: n.into(), arg: a, kwarg: false }).collect();
    let outs = out.map(|k| vec![(name.to_string(), k)]).unwrap_or_default();
    let id = g.add_node(name, target, args, outs, NodeMeta::default()).expect("node");
    g.node(id).outputs.first().copied()
}

fn model_of(g: Graph) -> Model {
    let mut model = Model::new(Format::Pt2, "host_steps");
    model.graphs.push(g);
    model
}

/// `x: f32[n]` → `nonzero(x): i64[u0, 1]` → `nz + nz` (a kernel launched at `u0` rows), with
/// `_assert_scalar(u0 <= limit)` on the way, as torch.export writes it.
fn nonzero_model(n: i64, limit: i64) -> Model {
    let mut g = Graph::new("sync");
    let x = g.add_input("x", tensor(DType::F32, ints(&[n])), InputKind::UserInput).expect("input");
    let u0 = Expr::symbol("u0");
    let nz = node(&mut g, "nonzero", "aten.nonzero.default", vec![("self", Arg::Tensor(x))], Some(tensor(DType::I64, vec![u0.clone(), Expr::int(1)]))).unwrap();
    let size = node(&mut g, "sym_size_int", "aten.sym_size.int", vec![("self", Arg::Tensor(nz)), ("dim", Arg::Int(0))], Some(ValueKind::SymInt(u0.clone()))).unwrap();
    let le = node(
        &mut g,
        "le",
        "_operator.le",
        vec![("a", Arg::SymInt(SymIntArg::Value(size))), ("b", Arg::Int(limit))],
        Some(ValueKind::SymBool(Expr::le(u0.clone(), Expr::int(limit)))),
    )
    .unwrap();
    let msg = Arg::String(format!("Runtime assertion failed for expression u0 <= {limit} on node 'le'"));
    node(&mut g, "assert_le", "aten._assert_scalar.default", vec![("self", Arg::SymBool(le)), ("assert_msg", msg)], None);
    let twice = node(&mut g, "add", "aten.add.Tensor", vec![("self", Arg::Tensor(nz)), ("other", Arg::Tensor(nz))], Some(tensor(DType::I64, vec![u0, Expr::int(1)]))).unwrap();
    g.outputs.push(Arg::Tensor(twice));
    model_of(g)
}

/// `a: f64[2, 2]` → `linalg_inv(a)` (eager-only: a host step) → `· 2` (a kernel).
fn inverse_model() -> Model {
    let mut g = Graph::new("host");
    let a = g.add_input("a", tensor(DType::F64, ints(&[2, 2])), InputKind::UserInput).expect("input");
    let inv = node(&mut g, "linalg_inv", "aten.linalg_inv.default", vec![("A", Arg::Tensor(a))], Some(tensor(DType::F64, ints(&[2, 2])))).unwrap();
    let twice = node(&mut g, "mul", "aten.mul.Tensor", vec![("self", Arg::Tensor(inv)), ("other", Arg::Float(2.0))], Some(tensor(DType::F64, ints(&[2, 2])))).unwrap();
    g.outputs.push(Arg::Tensor(twice));
    model_of(g)
}

fn plan_of(model: &Model) -> Plan {
    lower::lower(model, &model.graphs[0], Mode::None, &Marks::default()).expect("lowers")
}

/// The run on the reference device, and on OpenCL where there is one.
fn runs(model: &Model, inputs: &[Tensor]) -> Vec<(&'static str, Result<PlanRun, RunError>)> {
    let plan = plan_of(model);
    let b = exec::infer_bindings(model, &plan.graph, inputs).expect("bindings");
    let mut out = vec![("reference", run_reference(&plan, model, inputs, &b))];
    let modules = compile_plan(&plan).expect("compiles");
    for m in modules.iter().flatten() {
        if let Some(Err(e)) = common::spirv_val(m) {
            panic!("spirv-val rejects `{}`: {e}", m.name);
        }
    }
    if let Some(mut dev) = common::opencl_device() {
        out.push(("opencl", run_on_device(&mut dev, &plan, &modules, model, inputs, &b)));
    }
    out
}

#[test]
fn a_sync_step_binds_the_data_dependent_size_before_later_kernels() {
    let model = nonzero_model(5, 4);
    let plan = plan_of(&model);
    let syncs: Vec<&Step> = plan.steps.iter().filter(|s| matches!(s, Step::Sync { .. })).collect();
    assert_eq!(syncs.len(), 1, "one sync step, for nonzero");
    let Step::Sync { values, kernel, .. } = syncs[0] else { unreachable!() };
    assert_eq!(values.iter().map(|v| v.expr.to_string()).collect::<Vec<_>>(), ["u0"]);
    assert!(kernel.name.starts_with("sync_"), "{}", kernel.name);
    let sync_at = plan.steps.iter().position(|s| matches!(s, Step::Sync { .. })).unwrap();
    let add_at = plan.steps.iter().position(|s| s.kernel().is_some_and(|k| k.name.contains("add"))).unwrap();
    assert!(sync_at < add_at, "the sizes are read back before the kernel they size");
    assert!(plan.kernels().any(|k| k.name.contains("add") && k.params.iter().any(|p| p.to_string() == "u0")), "u0 is a size argument");

    let x = Tensor::from_vec(&[5], vec![0f32, 2.0, 0.0, -1.0, f32::NAN]).unwrap();
    let want = exec::run(&model, &model.graphs[0], std::slice::from_ref(&x)).expect("interpreter");
    assert_eq!(want[0].shape(), [3, 1]);
    assert_eq!(want[0].to_i64_vec(), [2, 6, 8], "NaN is nonzero");
    for (device, r) in runs(&model, std::slice::from_ref(&x)) {
        let r = r.unwrap_or_else(|e| panic!("{device}: {e}"));
        assert_eq!(r.outputs[0].shape(), [3, 1], "{device}");
        assert_eq!(r.outputs[0].to_i64_vec(), want[0].to_i64_vec(), "{device}");
        assert_eq!(r.bindings.get("u0"), Some(3), "{device}: u0 is bound for the rest of the run");
        let sync = r.steps.iter().find(|s| s.kind == "sync").expect("a sync step ran");
        assert_eq!(sync.nodes, ["nonzero"], "{device}");
    }
    // No nonzero element: every later launch is empty, the output has no rows.
    let zeros = Tensor::from_vec(&[5], vec![0f32; 5]).unwrap();
    for (device, r) in runs(&model, &[zeros]) {
        let r = r.unwrap_or_else(|e| panic!("{device}: {e}"));
        assert_eq!((r.outputs[0].shape().to_vec(), r.bindings.get("u0")), (vec![0, 1], Some(0)), "{device}");
    }
}

#[test]
fn a_failed_assertion_on_a_bound_size_names_its_node_and_value() {
    let model = nonzero_model(5, 1);
    let x = Tensor::from_vec(&[5], vec![1f32, 2.0, 0.0, 3.0, 0.0]).unwrap();
    let interp = exec::run(&model, &model.graphs[0], std::slice::from_ref(&x)).unwrap_err().to_string();
    assert!(interp.contains("assert_le"), "{interp}");
    for (device, r) in runs(&model, std::slice::from_ref(&x)) {
        let e = r.expect_err(device).to_string();
        assert!(e.contains("assert_le") && e.contains("u0 <= 1"), "{device}: {e}");
        if device != "reference" {
            assert!(e.contains("u0 = 3"), "{device}: the bound value is shown: {e}");
        }
    }
    // One nonzero element passes the same assertion.
    let one = Tensor::from_vec(&[5], vec![0f32, 0.0, 7.0, 0.0, 0.0]).unwrap();
    for (device, r) in runs(&model, &[one]) {
        assert_eq!(r.unwrap_or_else(|e| panic!("{device}: {e}")).outputs[0].to_i64_vec(), [4], "{device}");
    }
}

#[test]
fn a_host_step_is_labelled_and_timed_as_host_time() {
    let model = inverse_model();
    let plan = plan_of(&model);
    assert_eq!(plan.host_steps(), 1);
    let host = plan.steps.iter().find(|s| matches!(s, Step::Host { .. })).expect("a host step");
    assert!(host.kernel().is_none(), "a host step is no generated kernel");
    assert!(host.describe().contains("host fallback (interpreter)"));
    assert!(plan.kernels().all(|k| !k.name.contains("linalg_inv")), "no kernel computes linalg_inv");

    let a = Tensor::from_vec(&[2, 2], vec![4f64, 7.0, 2.0, 6.0]).unwrap();
    let want = [1.2, -1.4, -0.4, 0.8];
    for (device, r) in runs(&model, std::slice::from_ref(&a)) {
        let r = r.unwrap_or_else(|e| panic!("{device}: {e}"));
        let got = r.outputs[0].to_f64_vec();
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12), "{device}: {got:?}");
        let step = r.steps.iter().find(|s| s.kind == "host").expect("the host step ran");
        assert_eq!((step.nodes.clone(), step.device_ns), (vec!["linalg_inv".to_string()], 0), "{device}: host time only");
        assert!(step.host_ns > 0 && r.total_host_ns >= step.host_ns, "{device}: its time is host time");
        assert!(r.steps.iter().filter(|s| s.kind != "host").all(|s| s.host_ns == 0 || s.kind == "sync"), "{device}");
    }

    let b = exec::infer_bindings(&model, &plan.graph, std::slice::from_ref(&a)).unwrap();
    let options = ProfileOptions { warmup: 1, repeat: 2 };
    let mut backends = vec![Backend::Reference];
    if common::opencl_device().is_some() {
        backends.push(Backend::OpenCl);
    }
    for backend in backends {
        let p = profile::profile_plan(profile::CpuCapture::start(), backend, &plan, &model, std::slice::from_ref(&a), &b, options, &mut |_| {})
            .unwrap_or_else(|e| panic!("{backend:?}: {e}"));
        let t = &p.trace;
        assert_eq!(t.host.len(), 3, "{backend:?}: one host span per repetition");
        assert!(t.host.iter().all(|h| h.kind == HostSpan::HOST_FALLBACK && h.node == "linalg_inv" && h.label().contains("host fallback")));
        assert!(t.kernels.iter().all(|k| k.launch.node != "linalg_inv"), "{backend:?}: never on a device queue");
        assert_eq!(t.host_median_ns().len(), 1);
        let chrome = t.to_chrome_json().to_string();
        assert!(chrome.contains("\"cat\":\"host_fallback\"") && chrome.contains("host time"), "{backend:?}");
    }
}

#[test]
fn an_op_without_a_kernel_that_is_not_eager_only_still_fails_to_lower() {
    let mut g = Graph::new("missing");
    let x = g.add_input("x", tensor(DType::F32, ints(&[4])), InputKind::UserInput).expect("input");
    // An op the registry does not know is not eager-only either: no host fallback for it.
    let h = node(&mut g, "made_up", "aten.made_up_op.default", vec![("self", Arg::Tensor(x))], Some(tensor(DType::F32, ints(&[4])))).unwrap();
    g.outputs.push(Arg::Tensor(h));
    let model = model_of(g);
    let e = lower::lower(&model, &model.graphs[0], Mode::None, &Marks::default()).unwrap_err();
    assert!(matches!(e, LowerError::NoLowering { .. }), "{e}");
}

/// `x: f32[2, 6]` → `_fft_r2c` (complex64[2, 4]) → `then` (a node reading the complex value, a
/// host step too) → `· 2` (a kernel) when `then` gives a real tensor.
fn spectrum_model(then: &str) -> Model {
    let mut g = Graph::new("spectrum");
    let x = g.add_input("x", tensor(DType::F32, ints(&[2, 6])), InputKind::UserInput).expect("input");
    let r2c_args = vec![("self", Arg::Tensor(x)), ("dim", Arg::Ints(vec![1])), ("normalization", Arg::Int(0)), ("onesided", Arg::Bool(true))];
    let z = node(&mut g, "fft_r2c", "aten._fft_r2c.default", r2c_args, Some(tensor(DType::Complex64, ints(&[2, 4])))).unwrap();
    let (target, args, sizes): (&str, Vec<(&str, Arg)>, &[i64]) = match then {
        "c2r" => (
            "aten._fft_c2r.default",
            vec![("self", Arg::Tensor(z)), ("dim", Arg::Ints(vec![1])), ("normalization", Arg::Int(2)), ("last_dim_size", Arg::Int(6))],
            &[2, 6],
        ),
        "view_as_real" => ("aten.view_as_real.default", vec![("self", Arg::Tensor(z))], &[2, 4, 2]),
        "abs" => ("aten.abs.default", vec![("self", Arg::Tensor(z))], &[2, 4]),
        _ => {
            g.outputs.push(Arg::Tensor(z));
            return model_of(g);
        }
    };
    let real = node(&mut g, then, target, args, Some(tensor(DType::F32, ints(sizes)))).unwrap();
    let twice = node(&mut g, "mul", "aten.mul.Tensor", vec![("self", Arg::Tensor(real)), ("other", Arg::Float(2.0))], Some(tensor(DType::F32, ints(sizes)))).unwrap();
    g.outputs.push(Arg::Tensor(twice));
    model_of(g)
}

#[test]
fn nodes_on_complex_values_run_as_host_steps_and_keep_them_on_the_host() {
    let x = Tensor::from_vec(&[2, 6], vec![1f32, -2.0, 3.5, 0.0, 4.0, -1.0, 0.25, 8.0, -3.0, 2.0, 1.0, 5.0]).unwrap();
    let rows: Vec<f32> = x.to_f64_vec().chunks(6).map(|r| r.iter().sum::<f64>() as f32).collect();
    for then in ["c2r", "view_as_real", "abs"] {
        let model = spectrum_model(then);
        let plan = plan_of(&model);
        assert_eq!(plan.host_steps(), 2, "{then}: the transform and its complex-reading consumer are host steps");
        assert!(plan.kernels().all(|k| !k.name.contains("fft") && !k.name.contains(then)), "{then}: no kernel reads a complex value");
        assert!(plan.kernels().any(|k| k.name.contains("mul")), "{then}: the real result goes on to a kernel");
        let want = exec::run(&model, &model.graphs[0], std::slice::from_ref(&x)).expect("interpreter");
        let want = want[0].to_f64_vec();
        match then {
            // The round trip gives `x` back (normalized by n on the way back).
            "c2r" => assert!(want.iter().zip(x.to_f64_vec()).all(|(w, x)| (w - 2.0 * x).abs() < 1e-5), "{want:?}"),
            // Bin 0 of each row is its sum, a real number.
            "view_as_real" => assert!(rows.iter().enumerate().all(|(r, s)| (want[r * 8] - 2.0 * *s as f64).abs() < 1e-4 && want[r * 8 + 1] == 0.0), "{want:?}"),
            _ => assert!(rows.iter().enumerate().all(|(r, s)| (want[r * 4] - 2.0 * s.abs() as f64).abs() < 1e-4), "{want:?}"),
        }
        for (device, r) in runs(&model, std::slice::from_ref(&x)) {
            let r = r.unwrap_or_else(|e| panic!("{then} on {device}: {e}"));
            let got = r.outputs[0].to_f64_vec();
            assert!(got.len() == want.len() && got.iter().zip(&want).all(|(g, w)| (g - w).abs() < 1e-5), "{then} on {device}: {got:?} vs {want:?}");
            let host: Vec<&str> = r.steps.iter().filter(|s| s.kind == "host").map(|s| s.name.as_str()).collect();
            assert_eq!(host, ["fft_r2c", then], "{then} on {device}");
        }
    }
}

#[test]
fn a_complex_graph_output_is_refused_by_dtype() {
    let model = spectrum_model("none");
    let e = lower::lower(&model, &model.graphs[0], Mode::None, &Marks::default()).unwrap_err();
    assert!(matches!(&e, LowerError::DType { value, dtype } if value == "fft_r2c" && dtype == "complex64"), "{e}");
}

/// `linalg_matrix_norm(a, ord)` on `a: f32[3, 4]`.
fn matrix_norm_model(ord: &str) -> Model {
    let mut g = Graph::new("norm");
    let a = g.add_input("a", tensor(DType::F32, ints(&[3, 4])), InputKind::UserInput).expect("input");
    let args = vec![("self", Arg::Tensor(a)), ("ord", Arg::String(ord.into())), ("dim", Arg::Ints(vec![-2, -1])), ("keepdim", Arg::Bool(false))];
    let n = node(&mut g, "norm", "aten.linalg_matrix_norm.str_ord", args, Some(tensor(DType::F32, vec![]))).unwrap();
    g.outputs.push(Arg::Tensor(n));
    model_of(g)
}

/// An op whose kernel covers some arguments only: the Frobenius norm is a kernel, the nuclear
/// norm (singular values) a host step, and both give the interpreter's answer.
#[test]
fn a_node_its_kernel_does_not_cover_runs_as_a_host_step() {
    let a = Tensor::from_vec(&[3, 4], (0..12).map(|i| (i as f32 - 5.0) / 3.0).collect()).expect("tensor");
    for (ord, host) in [("fro", 0), ("nuc", 1)] {
        let model = matrix_norm_model(ord);
        let plan = plan_of(&model);
        assert_eq!(plan.host_steps(), host, "{ord}");
        let want = exec::run(&model, &model.graphs[0], std::slice::from_ref(&a)).expect("interpreter")[0].to_f64_vec()[0];
        for (backend, run) in runs(&model, std::slice::from_ref(&a)) {
            let got = run.unwrap_or_else(|e| panic!("{ord} on {backend}: {e}")).outputs[0].to_f64_vec()[0];
            assert!((got - want).abs() <= 1e-5 * want.abs(), "{ord} on {backend}: {got}, interpreter {want}");
        }
    }
}

/// `x: f32[3]` → `_assert_async.msg(any(x), msg)` (a data-dependent check: a host step reading
/// the one element back) → `x · 2`.
fn assert_async_model() -> Model {
    let mut g = Graph::new("assert_async");
    let x = g.add_input("x", tensor(DType::F32, ints(&[3])), InputKind::UserInput).expect("input");
    let any = node(&mut g, "any", "aten.any.default", vec![("self", Arg::Tensor(x))], Some(tensor(DType::Bool, vec![]))).unwrap();
    let msg = Arg::String("x has no nonzero element".into());
    node(&mut g, "assert_any", "aten._assert_async.msg", vec![("self", Arg::Tensor(any)), ("assert_msg", msg)], None);
    let twice = node(&mut g, "mul", "aten.mul.Tensor", vec![("self", Arg::Tensor(x)), ("other", Arg::Float(2.0))], Some(tensor(DType::F32, ints(&[3])))).unwrap();
    g.outputs.push(Arg::Tensor(twice));
    model_of(g)
}

#[test]
fn an_async_assertion_reads_its_tensor_and_fails_on_zero() {
    let model = assert_async_model();
    let plan = plan_of(&model);
    assert!(plan.steps.iter().any(|s| matches!(s, Step::Host { node } if plan.graph.node(*node).name == "assert_any")), "the check is a host step");
    let ok = Tensor::from_vec(&[3], vec![0f32, 0.5, 0.0]).unwrap();
    for (device, r) in runs(&model, std::slice::from_ref(&ok)) {
        let r = r.unwrap_or_else(|e| panic!("{device}: {e}"));
        assert_eq!(r.outputs[0].to_f64_vec(), [0.0, 1.0, 0.0], "{device}");
    }
    let zeros = Tensor::from_vec(&[3], vec![0f32; 3]).unwrap();
    let interp = exec::run(&model, &model.graphs[0], std::slice::from_ref(&zeros)).unwrap_err().to_string();
    assert!(interp.contains("assert_any") && interp.contains("x has no nonzero element"), "{interp}");
    for (device, r) in runs(&model, &[zeros]) {
        let e = r.expect_err(device).to_string();
        assert!(e.contains("assert_any") && e.contains("x has no nonzero element"), "{device}: {e}");
    }
}
