//! Every decomposition rule, checked against the reference interpreter: a one-op graph with
//! symbolic input shapes is decomposed under the rule's table, and both graphs run on random
//! inputs at random legal values of the symbols (always including 1). Tolerance for float32:
//! max |decomposed − original| ≤ 1e-5 · max(1, max |original|).

use std::collections::BTreeMap;

use rand::{rngs::StdRng, Rng, SeedableRng};
use xpu_workbench::decomp::rules::{find, Build, Table};
use xpu_workbench::decomp::{decompose, Marks, Mode};
use xpu_workbench::exec::{self, Tensor};
use xpu_workbench::infer::infer;
use xpu_workbench::ir::{Arg, DType, Format, Graph, InputKind, Model, NamedArg, NodeMeta, SymIntArg, SymbolInfo, TensorMeta, ValueKind};
use xpu_workbench::sym::{Expr, Range};

/// A dimension of a test input: the symbol `s0` (range [1, 9]) or a static size.
#[derive(Clone, Copy)]
enum D {
    S,
    N(i64),
}

enum P {
    In(&'static str),
    /// A list of inputs (`cat`'s `tensors`).
    Ins(&'static [&'static str]),
    I(i64),
    Is(&'static [i64]),
    F(f64),
    /// A list of floats (`Scalar[]` spacings).
    Fs(&'static [f64]),
    B(bool),
    Str(&'static str),
    None,
    /// A `sym_size` of input dim, emitted before the op (a symbolic int argument).
    SizeOf(&'static str, i64),
    Dtype(DType),
}

struct Case {
    target: &'static str,
    table: Table,
    inputs: &'static [(&'static str, &'static [D])],
    args: Vec<(&'static str, P)>,
    /// Inputs that must stay positive (variances).
    positive: &'static [&'static str],
    /// Integer index inputs (int64 in `0..bound`) and boolean masks, instead of float32.
    indices: &'static [(&'static str, i64)],
    masks: &'static [&'static str],
    /// Inputs in (0, 1) (probabilities, quantiles).
    unit: &'static [&'static str],
}

fn case(target: &'static str, table: Table, inputs: &'static [(&'static str, &'static [D])], args: Vec<(&'static str, P)>) -> Case {
    Case { target, table, inputs, args, positive: &[], indices: &[], masks: &[], unit: &[] }
}

impl Case {
    fn dtype(&self, input: &str) -> DType {
        if self.indices.iter().any(|(n, _)| *n == input) {
            DType::I64
        } else if self.masks.contains(&input) {
            DType::Bool
        } else {
            DType::F32
        }
    }
}

use D::{N, S};
use Table::{Core as C, Inductor as I};

fn cases() -> Vec<Case> {
    let x = |name| (name, P::In("x"));
    vec![
        case("aten.linear.default", C, &[("x", &[S, N(5)]), ("w", &[N(3), N(5)]), ("b", &[N(3)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::In("b"))]),
        case("aten.conv2d.padding", C, &[("x", &[S, N(2), N(6), N(5)]), ("w", &[N(3), N(2), N(3), N(3)]), ("b", &[N(3)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::In("b")), ("stride", P::Is(&[2, 1]))]),
        case("aten.conv1d.padding", C, &[("x", &[S, N(2), N(7)]), ("w", &[N(4), N(2), N(3)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::None), ("stride", P::Is(&[1])), ("padding", P::Str("same")), ("dilation", P::Is(&[2]))]),
        case("aten.linear.default", C, &[("x", &[S, N(2), N(5)]), ("w", &[N(3), N(5)])], vec![("input", P::In("x")), ("weight", P::In("w"))]),
        case("aten.t.default", C, &[("x", &[S, N(4)])], vec![x("self")]),
        // `matmul` folded into one `mm` (a batch of rows times a matrix), and broadcast batches of two ranks.
        case("aten.matmul.default", C, &[("a", &[S, N(3), N(4)]), ("b", &[N(4), N(5)])], vec![("self", P::In("a")), ("other", P::In("b"))]),
        case("aten.matmul.default", C, &[("a", &[N(3), N(4)]), ("b", &[S, N(4), N(5)])], vec![("self", P::In("a")), ("other", P::In("b"))]),
        case("aten.stack.default", C, &[("a", &[S, N(3)]), ("b", &[S, N(3)])], vec![("tensors", P::Ins(&["a", "b"])), ("dim", P::I(1))]),
        case("aten.stack.default", I, &[("a", &[S, N(3)]), ("b", &[S, N(3)])], vec![("tensors", P::Ins(&["a", "b"])), ("dim", P::I(-1))]),
        case("aten.unbind.int", C, &[("x", &[S, N(3), N(4)])], vec![x("self"), ("dim", P::I(1))]),
        case("aten.matmul.default", C, &[("a", &[S, N(2), N(3), N(4)]), ("b", &[N(1), N(2), N(4), N(5)])], vec![("self", P::In("a")), ("other", P::In("b"))]),
        // Inductor's CPU `bmm` of a row by a column (squeeze, mul, sum) and of a column by a row
        // (one `mul`: torch 2.15's table), MobileViT's and LeViT's batched dots.
        case("aten.bmm.default", I, &[("a", &[S, N(1), N(4)]), ("b", &[S, N(4), N(1)])], vec![("self", P::In("a")), ("mat2", P::In("b"))]),
        case("aten.bmm.default", I, &[("a", &[S, N(3), N(1)]), ("b", &[S, N(1), N(5)])], vec![("self", P::In("a")), ("mat2", P::In("b"))]),
        // Vectors: `dot`, `mv` (`mul` + `sum`), a vector times a matrix (a one-row `mm`), and
        // Inductor's CPU `addmm` of one row (against a small matrix, and against a column).
        case("aten.matmul.default", C, &[("a", &[N(4)]), ("b", &[N(4), S])], vec![("self", P::In("a")), ("other", P::In("b"))]),
        case("aten.dot.default", C, &[("a", &[N(5)]), ("b", &[N(5)])], vec![("self", P::In("a")), ("tensor", P::In("b"))]),
        case("aten.mv.default", C, &[("a", &[S, N(5)]), ("b", &[N(5)])], vec![("self", P::In("a")), ("vec", P::In("b"))]),
        case("aten.addmm.default", I, &[("c", &[N(3)]), ("a", &[N(1), N(5)]), ("b", &[N(5), N(3)])], vec![("self", P::In("c")), ("mat1", P::In("a")), ("mat2", P::In("b")), ("beta", P::F(0.5)), ("alpha", P::I(2))]),
        case("aten.addmm.default", I, &[("c", &[N(1), N(1)]), ("a", &[N(1), N(7)]), ("b", &[N(7), N(1)])], vec![("self", P::In("c")), ("mat1", P::In("a")), ("mat2", P::In("b"))]),
        case("aten.layer_norm.default", I, &[("x", &[S, N(3), N(6)]), ("w", &[N(6)]), ("b", &[N(6)])], vec![("input", P::In("x")), ("normalized_shape", P::Is(&[6])), ("weight", P::In("w")), ("bias", P::In("b")), ("eps", P::F(1e-5))]),
        case("aten.layer_norm.default", C, &[("x", &[S, N(3), N(6)])], vec![("input", P::In("x")), ("normalized_shape", P::Is(&[3, 6]))]),
        case("aten.native_layer_norm.default", I, &[("x", &[S, N(6)]), ("w", &[N(6)]), ("b", &[N(6)])], vec![("input", P::In("x")), ("normalized_shape", P::Is(&[6])), ("weight", P::In("w")), ("bias", P::In("b")), ("eps", P::F(1e-5))]),
        case("aten.rms_norm.default", C, &[("x", &[S, N(3), N(6)]), ("w", &[N(6)])], vec![("input", P::In("x")), ("normalized_shape", P::Is(&[6])), ("weight", P::In("w")), ("eps", P::F(1e-6))]),
        case("aten._fused_rms_norm.default", C, &[("x", &[S, N(3), N(6)])], vec![("input", P::In("x")), ("normalized_shape", P::Is(&[3, 6])), ("weight", P::None), ("eps", P::None)]),
        case("aten._fused_rms_norm.default", I, &[("x", &[N(2), S, N(5)]), ("w", &[N(5)])], vec![("input", P::In("x")), ("normalized_shape", P::Is(&[5])), ("weight", P::In("w")), ("eps", P::F(1e-5))]),
        Case {
            positive: &["v"],
            ..case("aten.batch_norm.default", I, &[("x", &[S, N(3), N(4), N(2)]), ("w", &[N(3)]), ("b", &[N(3)]), ("m", &[N(3)]), ("v", &[N(3)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::In("b")), ("running_mean", P::In("m")), ("running_var", P::In("v")), ("training", P::B(false)), ("momentum", P::F(0.1)), ("eps", P::F(1e-5)), ("cudnn_enabled", P::B(false))])
        },
        // Training mode without running statistics (timm NF-Nets' weight standardisation).
        case("aten.batch_norm.default", C, &[("x", &[N(1), N(3), S]), ("w", &[N(3)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::None), ("running_mean", P::None), ("running_var", P::None), ("training", P::B(true)), ("momentum", P::F(0.0)), ("eps", P::F(1e-6)), ("cudnn_enabled", P::B(false))]),
        case("aten._native_batch_norm_legit.no_stats", I, &[("x", &[S, N(3), N(4), N(2)]), ("w", &[N(3)]), ("b", &[N(3)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::In("b")), ("training", P::B(true)), ("momentum", P::F(0.1)), ("eps", P::F(1e-5))]),
        Case {
            positive: &["v"],
            ..case("aten._native_batch_norm_legit_no_training.default", I, &[("x", &[S, N(3), N(5)]), ("m", &[N(3)]), ("v", &[N(3)])], vec![("input", P::In("x")), ("weight", P::None), ("bias", P::None), ("running_mean", P::In("m")), ("running_var", P::In("v")), ("momentum", P::F(0.1)), ("eps", P::F(1e-5))])
        },
        case("aten.softmax.int", I, &[("x", &[S, N(7)])], vec![x("self"), ("dim", P::I(-1))]),
        case("aten.softmax.int", C, &[("x", &[N(4), S])], vec![x("self"), ("dim", P::I(0))]),
        case("aten.log_softmax.int", I, &[("x", &[S, N(7)])], vec![x("self"), ("dim", P::I(1))]),
        case("aten._softmax.default", I, &[("x", &[N(2), S, N(5)])], vec![x("self"), ("dim", P::I(1)), ("half_to_float", P::B(false))]),
        case("aten._log_softmax.default", I, &[("x", &[S, N(5)])], vec![x("self"), ("dim", P::I(-1)), ("half_to_float", P::B(false))]),
        case("aten.gelu.default", I, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.gelu.default", I, &[("x", &[S, N(6)])], vec![x("self"), ("approximate", P::Str("tanh"))]),
        case("aten.silu.default", C, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.silu.default", I, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.hardswish.default", C, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.hardswish.default", I, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.hardsigmoid.default", C, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.hardsigmoid.default", I, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.relu6.default", I, &[("x", &[S, N(6)])], vec![x("self")]),
        case("aten.hardtanh.default", I, &[("x", &[S, N(6)])], vec![x("self"), ("min_val", P::F(-0.5)), ("max_val", P::F(0.75))]),
        case("aten.clamp.default", I, &[("x", &[S, N(6)])], vec![x("self"), ("min", P::F(-0.5)), ("max", P::F(0.5))]),
        case("aten.clamp.default", I, &[("x", &[S, N(6)])], vec![x("self"), ("min", P::I(0))]),
        case("aten.dropout.default", C, &[("x", &[S, N(6)])], vec![("input", P::In("x")), ("p", P::F(0.1)), ("train", P::B(false))]),
        case("aten.addcmul.default", C, &[("x", &[S, N(4)]), ("a", &[S, N(4)]), ("c", &[N(4)])], vec![x("self"), ("tensor1", P::In("a")), ("tensor2", P::In("c")), ("value", P::F(0.5))]),
        case("aten.var.dim", C, &[("x", &[S, N(6)])], vec![x("self"), ("dim", P::Is(&[-1])), ("unbiased", P::B(true)), ("keepdim", P::B(true))]),
        case("aten.std.dim", C, &[("x", &[N(3), S, N(6)])], vec![x("self"), ("dim", P::Is(&[2])), ("unbiased", P::B(false)), ("keepdim", P::B(false))]),
        case("aten.transpose.int", C, &[("x", &[S, N(3), N(4)])], vec![x("self"), ("dim0", P::I(0)), ("dim1", P::I(-1))]),
        case("aten.reshape.default", C, &[("x", &[N(2), N(3), N(4)])], vec![x("self"), ("shape", P::Is(&[6, 4]))]),
        case("aten.reshape_as.default", C, &[("x", &[S, N(3), N(4)]), ("o", &[S, N(12)])], vec![x("self"), ("other", P::In("o"))]),
        case("aten.view_as.default", C, &[("x", &[S, N(3), N(4)]), ("o", &[S, N(2), N(6)])], vec![x("self"), ("other", P::In("o"))]),
        case("aten.expand_as.default", C, &[("x", &[S, N(1), N(4)]), ("o", &[S, N(3), N(4)])], vec![x("self"), ("other", P::In("o"))]),
        case("aten.new_empty.default", C, &[("x", &[S, N(3)])], vec![x("self"), ("size", P::Is(&[2, 5])), ("pin_memory", P::B(false))]),
        case("aten.flatten.using_ints", C, &[("x", &[S, N(3), N(4)])], vec![x("self"), ("start_dim", P::I(1))]),
        case("aten.unflatten.int", C, &[("x", &[S, N(12)])], vec![x("self"), ("dim", P::I(-1)), ("sizes", P::Is(&[3, 4]))]),
        case("aten.contiguous.default", C, &[("x", &[S, N(3)])], vec![x("self")]),
        case("aten.chunk.default", C, &[("x", &[S, N(7)])], vec![x("self"), ("chunks", P::I(3)), ("dim", P::I(-1))]),
        case("aten.chunk.default", I, &[("x", &[S, N(9)])], vec![x("self"), ("chunks", P::I(3)), ("dim", P::I(1))]),
        case("aten.conv2d.default", C, &[("x", &[S, N(2), N(6), N(5)]), ("w", &[N(4), N(2), N(3), N(3)]), ("b", &[N(4)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::In("b")), ("stride", P::Is(&[2, 1])), ("padding", P::Is(&[1, 1]))]),
        case("aten.max_pool2d.default", C, &[("x", &[S, N(2), N(6), N(5)])], vec![x("self"), ("kernel_size", P::Is(&[2, 2]))]),
        case("aten.adaptive_avg_pool2d.default", C, &[("x", &[S, N(3), N(4), N(5)])], vec![x("self"), ("output_size", P::Is(&[1, 1]))]),
        case("aten.adaptive_avg_pool2d.default", C, &[("x", &[S, N(2), N(3), N(2)])], vec![x("self"), ("output_size", P::Is(&[7, 7]))]),
        case("aten.upsample_linear1d.vec", C, &[("x", &[S, N(2), N(4)])], vec![x("input"), ("output_size", P::Is(&[7])), ("align_corners", P::B(false)), ("scale_factors", P::None)]),
        case("aten.upsample_bilinear2d.vec", I, &[("x", &[S, N(2), N(4), N(3)])], vec![x("input"), ("output_size", P::None), ("align_corners", P::B(true)), ("scale_factors", P::Fs(&[1.5, 2.0]))]),
        case("aten.upsample_trilinear3d.vec", I, &[("x", &[S, N(2), N(3), N(2), N(3)])], vec![x("input"), ("output_size", P::Is(&[4, 3, 2])), ("align_corners", P::B(false)), ("scale_factors", P::None)]),
        case("aten.upsample_bicubic2d.vec", C, &[("x", &[S, N(2), N(4), N(4)])], vec![x("input"), ("output_size", P::Is(&[5, 7])), ("align_corners", P::B(false)), ("scale_factors", P::None)]),
        case("aten.upsample_bicubic2d.vec", I, &[("x", &[S, N(2), N(3), N(4)])], vec![x("input"), ("output_size", P::None), ("align_corners", P::B(true)), ("scale_factors", P::Fs(&[2.0, 0.75]))]),
        Case { indices: &[("i", 5), ("j", 4)], ..case("aten._unsafe_index.Tensor", C, &[("x", &[N(5), N(4), S]), ("i", &[N(3), N(1)]), ("j", &[N(2)])], vec![x("self"), ("indices", P::Ins(&["i", "j"]))]) },
        case("aten.ones_like.default", C, &[("x", &[S, N(4)])], vec![x("self")]),
        Case { masks: &["m"], ..case("aten.ones_like.default", I, &[("m", &[S, N(3)])], vec![("self", P::In("m"))]) },
        Case { masks: &["m"], ..case("aten.zeros_like.default", I, &[("m", &[N(2), S])], vec![("self", P::In("m"))]) },
        case("aten.diff.default", C, &[("x", &[S, N(5)]), ("p", &[S, N(1)])], vec![x("self"), ("n", P::I(2)), ("dim", P::I(-1)), ("prepend", P::In("p")), ("append", P::None)]),
        case("aten.diff.default", I, &[("x", &[S, N(3)]), ("a", &[S, N(2)])], vec![x("self"), ("n", P::I(1)), ("dim", P::I(1)), ("prepend", P::None), ("append", P::In("a"))]),
        case("aten.max.other", C, &[("x", &[S, N(4)]), ("y", &[N(4)])], vec![x("self"), ("other", P::In("y"))]),
        case("aten.argsort.default", C, &[("x", &[S, N(5)])], vec![x("self"), ("dim", P::I(0)), ("descending", P::B(true))]),
        case("aten.rsub.Scalar", C, &[("x", &[S, N(4)])], vec![x("self"), ("other", P::F(1.5)), ("alpha", P::I(2))]),
        case("aten.real.default", C, &[("x", &[S, N(4)])], vec![x("self")]),
        case("aten.clamp.Tensor", I, &[("x", &[S, N(4)]), ("lo", &[N(4)]), ("hi", &[S, N(1)])], vec![x("self"), ("min", P::In("lo")), ("max", P::In("hi"))]),
        case("aten.clamp.Tensor", I, &[("x", &[S, N(4)]), ("lo", &[N(4)])], vec![x("self"), ("min", P::In("lo"))]),
        case("aten.logsumexp.default", C, &[("x", &[S, N(4)])], vec![x("self"), ("dim", P::Is(&[-1])), ("keepdim", P::B(false))]),
        case("aten.logsumexp.default", I, &[("x", &[N(3), S, N(2)])], vec![x("self"), ("dim", P::Is(&[0, 2])), ("keepdim", P::B(true))]),
        case("aten.conv1d.padding", C, &[("x", &[S, N(2), N(7)]), ("w", &[N(2), N(1), N(4)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::None), ("stride", P::Is(&[1])), ("padding", P::Str("same")), ("dilation", P::Is(&[1])), ("groups", P::I(2))]),
        case("aten.arange.default", C, &[("x", &[S])], vec![("end", P::SizeOf("x", 0))]),
        case("aten._to_copy.default", I, &[("x", &[S, N(3)])], vec![x("self"), ("dtype", P::Dtype(DType::F64))]),
        case("aten.arange.default", I, &[("x", &[S, N(2)])], vec![("end", P::SizeOf("x", 0)), ("dtype", P::Dtype(DType::F32))]),
        case("aten.arange.start_step", I, &[("x", &[S])], vec![("start", P::I(3)), ("end", P::I(20)), ("step", P::I(4))]),
        case("aten.arange.start_step", I, &[("x", &[S])], vec![("start", P::SizeOf("x", 0)), ("end", P::I(-12)), ("step", P::I(-3))]),
        case("aten.arange.start_step", I, &[("x", &[S])], vec![("start", P::I(1)), ("end", P::I(12)), ("step", P::F(2.5)), ("dtype", P::Dtype(DType::I64))]),
        case("aten.arange.start_step", I, &[("x", &[S])], vec![("start", P::F(0.5)), ("end", P::I(6)), ("step", P::F(1.5)), ("dtype", P::Dtype(DType::F32))]),
        case("aten.arange.start", C, &[("x", &[S])], vec![("start", P::I(-3)), ("end", P::SizeOf("x", 0))]),
        case("aten.scaled_dot_product_attention.default", I, &[("q", &[S, N(2), N(5), N(4)]), ("k", &[S, N(2), N(3), N(4)]), ("v", &[S, N(2), N(3), N(6)])], vec![("query", P::In("q")), ("key", P::In("k")), ("value", P::In("v"))]),
        // Factories and fills (functionalized in-place fills), Inductor's full_like, cat and
        // low-memory max-pool (both outputs: the indices through the offsets).
        case("aten.new_zeros.default", C, &[("x", &[S, N(3)])], vec![x("self"), ("size", P::Is(&[2, 5]))]),
        case("aten.fill.Scalar", C, &[("x", &[S, N(4)])], vec![x("self"), ("value", P::F(2.5))]),
        case("aten.fill.Tensor", C, &[("x", &[S, N(4)]), ("v", &[])], vec![x("self"), ("value", P::In("v"))]),
        case("aten.lift_fresh_copy.default", C, &[("x", &[S, N(4)])], vec![x("self")]),
        case("aten.full_like.default", I, &[("x", &[N(3), S])], vec![x("self"), ("fill_value", P::F(-1.5))]),
        case("aten.cat.default", I, &[("x", &[S, N(2), N(3)])], vec![("tensors", P::Ins(&["x", "x"])), ("dim", P::I(-1))]),
        case("aten.cat.default", I, &[("x", &[S, N(2), N(3)])], vec![("tensors", P::Ins(&["x", "x", "x"])), ("dim", P::I(1))]),
        case("aten.cat.default", I, &[("x", &[S, N(4)]), ("e", &[S, N(0)])], vec![("tensors", P::Ins(&["x", "e"])), ("dim", P::I(1))]),
        case("aten.max_pool2d_with_indices.default", I, &[("x", &[S, N(2), N(6), N(5)])], vec![x("self"), ("kernel_size", P::Is(&[2, 2]))]),
        case("aten.max_pool2d_with_indices.default", I, &[("x", &[S, N(3), N(7), N(7)])], vec![x("self"), ("kernel_size", P::Is(&[3, 3])), ("stride", P::Is(&[2, 2])), ("padding", P::Is(&[1, 1])), ("dilation", P::Is(&[1, 1])), ("ceil_mode", P::B(true))]),
        case("aten.max_pool2d_with_indices.default", I, &[("x", &[S, N(1), N(8), N(9)])], vec![x("self"), ("kernel_size", P::Is(&[2, 3])), ("stride", P::Is(&[1, 2])), ("padding", P::Is(&[0, 1])), ("dilation", P::Is(&[2, 1]))]),
        // Factories torch's tables respell (`zeros` → `full`, `empty_like` → `empty_permuted` →
        // `empty`), `detach` → `alias`, and `floor_divide` → `div(rounding_mode="floor")`.
        case("aten.zeros.default", C, &[("x", &[S])], vec![("size", P::Is(&[2, 3]))]),
        case("aten.zeros_like.default", C, &[("x", &[S, N(3)])], vec![x("self")]),
        case("aten.empty_like.default", C, &[("x", &[S, N(3)])], vec![x("self")]),
        case("aten.empty_permuted.default", I, &[("x", &[S])], vec![("size", P::Is(&[2, 3])), ("physical_layout", P::Is(&[0, 1]))]),
        case("aten.detach.default", C, &[("x", &[S, N(3)])], vec![x("self")]),
        case("aten.floor_divide.default", C, &[("a", &[S, N(4)]), ("b", &[N(4)])], vec![("self", P::In("a")), ("other", P::In("b"))]),
        Case { indices: &[("a", 50)], ..case("aten.floor_divide.default", C, &[("a", &[S, N(4)])], vec![("self", P::In("a")), ("other", P::I(3))]) },
        // Vector norms, weight and group normalisation (the wav2vec2 family).
        case("aten.linalg_vector_norm.default", C, &[("x", &[S, N(3), N(4)])], vec![x("self"), ("ord", P::I(2)), ("dim", P::Is(&[1, 2])), ("keepdim", P::B(true))]),
        case("aten.linalg_vector_norm.default", C, &[("x", &[S, N(5)])], vec![x("self"), ("ord", P::F(3.0))]),
        case("aten.linalg_norm.default", C, &[("x", &[S, N(3), N(4)])], vec![x("self"), ("ord", P::I(2)), ("dim", P::Is(&[-1])), ("keepdim", P::B(true))]),
        case("aten.linalg_norm.default", C, &[("x", &[S, N(4)])], vec![x("self")]),
        case("aten._weight_norm.default", C, &[("v", &[N(4), N(3), S]), ("g", &[N(1), N(1), S])], vec![("v", P::In("v")), ("g", P::In("g")), ("dim", P::I(2))]),
        case("aten._weight_norm_interface.default", C, &[("v", &[S, N(3)]), ("g", &[S, N(1)])], vec![("v", P::In("v")), ("g", P::In("g")), ("dim", P::I(0))]),
        case("aten.group_norm.default", C, &[("x", &[S, N(4), N(3)]), ("w", &[N(4)]), ("b", &[N(4)])], vec![("input", P::In("x")), ("num_groups", P::I(2)), ("weight", P::In("w")), ("bias", P::In("b")), ("eps", P::F(1e-5))]),
        case("aten.native_group_norm.default", I, &[("x", &[S, N(4), N(2), N(3)]), ("w", &[N(4)]), ("b", &[N(4)])], vec![("input", P::In("x")), ("weight", P::In("w")), ("bias", P::In("b")), ("N", P::SizeOf("x", 0)), ("C", P::I(4)), ("HxW", P::I(6)), ("group", P::I(2)), ("eps", P::F(1e-5))]),
        case("aten.native_group_norm.default", I, &[("x", &[S, N(6), N(5)])], vec![("input", P::In("x")), ("weight", P::None), ("bias", P::None), ("N", P::SizeOf("x", 0)), ("C", P::I(6)), ("HxW", P::I(5)), ("group", P::I(3)), ("eps", P::F(1e-5))]),
        // Picking and placing elements; the channels-last global pool restrides its mean.
        case("aten.pad.default", C, &[("x", &[S, N(3), N(4)])], vec![x("self"), ("pad", P::Is(&[1, 2, 0, 1])), ("value", P::F(0.5))]),
        case("aten.pad.default", C, &[("x", &[S, N(3)])], vec![x("self"), ("pad", P::Is(&[0, 0]))]),
        Case { masks: &["a", "b"], ..case("aten.__and__.Tensor", C, &[("a", &[S, N(4)]), ("b", &[N(4)])], vec![("self", P::In("a")), ("other", P::In("b"))]) },
        Case { masks: &["m"], ..case("aten.masked_fill.Scalar", C, &[("x", &[S, N(4)]), ("m", &[S, N(4)])], vec![x("self"), ("mask", P::In("m")), ("value", P::F(-100.0))]) },
        case("aten.roll.default", C, &[("x", &[S, N(5), N(4)])], vec![x("self"), ("shifts", P::Is(&[2, -1])), ("dims", P::Is(&[1, 2]))]),
        case("aten.roll.default", I, &[("x", &[S, N(6)])], vec![x("self"), ("shifts", P::Is(&[-8])), ("dims", P::Is(&[-1]))]),
        Case { indices: &[("i", 5)], ..case("aten.index_select.default", I, &[("x", &[S, N(5), N(2)]), ("i", &[N(7)])], vec![x("self"), ("dim", P::I(1)), ("index", P::In("i"))]) },
        case("aten.scaled_dot_product_attention.default", C, &[("q", &[S, N(5), N(4)]), ("k", &[S, N(3), N(4)]), ("v", &[S, N(3), N(4)]), ("m", &[N(5), N(3)])], vec![("query", P::In("q")), ("key", P::In("k")), ("value", P::In("v")), ("attn_mask", P::In("m")), ("scale", P::F(0.3))]),
        // Losses, distances and gates (ATen's composite bodies and PyTorch's decompositions).
        case("aten.mse_loss.default", C, &[("x", &[S, N(4)]), ("y", &[S, N(4)])], vec![x("self"), ("target", P::In("y")), ("reduction", P::I(1))]),
        case("aten.l1_loss.default", C, &[("x", &[S, N(4)]), ("y", &[S, N(4)])], vec![x("self"), ("target", P::In("y")), ("reduction", P::I(2))]),
        case("aten.smooth_l1_loss.default", C, &[("x", &[S, N(4)]), ("y", &[S, N(4)])], vec![x("self"), ("target", P::In("y")), ("reduction", P::I(0)), ("beta", P::F(0.5))]),
        case("aten.huber_loss.default", C, &[("x", &[S, N(4)]), ("y", &[S, N(4)])], vec![x("self"), ("target", P::In("y")), ("reduction", P::I(1)), ("delta", P::F(1.5))]),
        case("aten.soft_margin_loss.default", C, &[("x", &[S, N(4)]), ("y", &[S, N(4)])], vec![x("self"), ("target", P::In("y")), ("reduction", P::I(2))]),
        Case { positive: &["t"], ..case("aten.kl_div.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)])], vec![x("self"), ("target", P::In("t")), ("reduction", P::I(1)), ("log_target", P::B(false))]) },
        Case { unit: &["x", "t"], positive: &["w"], ..case("aten.binary_cross_entropy.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)]), ("w", &[N(4)])], vec![x("self"), ("target", P::In("t")), ("weight", P::In("w")), ("reduction", P::I(1))]) },
        Case { unit: &["t"], positive: &["w", "pw"], ..case("aten.binary_cross_entropy_with_logits.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)]), ("w", &[N(4)]), ("pw", &[N(4)])], vec![x("self"), ("target", P::In("t")), ("weight", P::In("w")), ("pos_weight", P::In("pw")), ("reduction", P::I(2))]) },
        Case { positive: &["t"], ..case("aten.poisson_nll_loss.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)])], vec![("input", P::In("x")), ("target", P::In("t")), ("log_input", P::B(true)), ("full", P::B(true)), ("eps", P::F(1e-8)), ("reduction", P::I(1))]) },
        case("aten.margin_ranking_loss.default", C, &[("a", &[S, N(4)]), ("b", &[S, N(4)]), ("t", &[S, N(4)])], vec![("input1", P::In("a")), ("input2", P::In("b")), ("target", P::In("t")), ("margin", P::F(0.2)), ("reduction", P::I(1))]),
        Case { indices: &[("t", 2)], ..case("aten.hinge_embedding_loss.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)])], vec![x("self"), ("target", P::In("t")), ("margin", P::F(1.0)), ("reduction", P::I(0))]) },
        Case { indices: &[("t", 2)], ..case("aten.cosine_embedding_loss.default", C, &[("a", &[S, N(5)]), ("b", &[S, N(5)]), ("t", &[S])], vec![("input1", P::In("a")), ("input2", P::In("b")), ("target", P::In("t")), ("margin", P::F(0.1)), ("reduction", P::I(1))]) },
        case("aten.triplet_margin_loss.default", C, &[("a", &[S, N(5)]), ("p", &[S, N(5)]), ("n", &[S, N(5)])], vec![("anchor", P::In("a")), ("positive", P::In("p")), ("negative", P::In("n")), ("margin", P::F(1.0)), ("p", P::F(2.0)), ("eps", P::F(1e-6)), ("swap", P::B(true)), ("reduction", P::I(1))]),
        Case { indices: &[("t", 4)], ..case("aten.multilabel_margin_loss.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)])], vec![x("self"), ("target", P::In("t")), ("reduction", P::I(1))]) },
        Case { indices: &[("t", 4)], ..case("aten.multilabel_margin_loss_forward.default", C, &[("x", &[S, N(4)]), ("t", &[S, N(4)])], vec![x("self"), ("target", P::In("t")), ("reduction", P::I(0))]) },
        Case { indices: &[("t", 5)], positive: &["w"], ..case("aten.multi_margin_loss.default", C, &[("x", &[S, N(5)]), ("t", &[S]), ("w", &[N(5)])], vec![x("self"), ("target", P::In("t")), ("p", P::I(2)), ("margin", P::F(0.5)), ("weight", P::In("w")), ("reduction", P::I(0))]) },
        Case { indices: &[("t", 5)], positive: &["w"], ..case("aten.nll_loss.default", C, &[("x", &[S, N(5)]), ("t", &[S]), ("w", &[N(5)])], vec![x("self"), ("target", P::In("t")), ("weight", P::In("w")), ("reduction", P::I(1)), ("ignore_index", P::I(2))]) },
        Case { indices: &[("t", 3)], ..case("aten.nll_loss2d.default", C, &[("x", &[S, N(3), N(2), N(4)]), ("t", &[S, N(2), N(4)])], vec![x("self"), ("target", P::In("t")), ("weight", P::None), ("reduction", P::I(2)), ("ignore_index", P::I(-100))]) },
        Case { indices: &[("t", 5)], ..case("aten.nll_loss_forward.default", C, &[("x", &[S, N(5)]), ("t", &[S])], vec![x("self"), ("target", P::In("t")), ("weight", P::None), ("reduction", P::I(0)), ("ignore_index", P::I(1))]) },
        Case { indices: &[("t", 3)], positive: &["w"], ..case("aten.nll_loss2d_forward.default", C, &[("x", &[S, N(3), N(2), N(2)]), ("t", &[S, N(2), N(2)]), ("w", &[N(3)])], vec![x("self"), ("target", P::In("t")), ("weight", P::In("w")), ("reduction", P::I(1)), ("ignore_index", P::I(-100))]) },
        Case { indices: &[("t", 3)], ..case("aten.nll_loss_nd.default", C, &[("x", &[S, N(3), N(5)]), ("t", &[S, N(5)])], vec![x("self"), ("target", P::In("t")), ("weight", P::None), ("reduction", P::I(0)), ("ignore_index", P::I(1))]) },
        Case { indices: &[("t", 4)], positive: &["w"], ..case("aten.cross_entropy_loss.default", C, &[("x", &[S, N(4)]), ("t", &[S]), ("w", &[N(4)])], vec![x("self"), ("target", P::In("t")), ("weight", P::In("w")), ("reduction", P::I(1)), ("ignore_index", P::I(0)), ("label_smoothing", P::F(0.1))]) },
        case("aten.cosine_similarity.default", C, &[("a", &[S, N(5)]), ("b", &[S, N(5)])], vec![("x1", P::In("a")), ("x2", P::In("b")), ("dim", P::I(1)), ("eps", P::F(1e-8))]),
        case("aten.pairwise_distance.default", C, &[("a", &[S, N(5)]), ("b", &[N(5)])], vec![("x1", P::In("a")), ("x2", P::In("b")), ("p", P::F(3.0)), ("eps", P::F(1e-6)), ("keepdim", P::B(false))]),
        case("aten.glu.default", C, &[("x", &[S, N(6)])], vec![x("self"), ("dim", P::I(-1))]),
        case("aten.prelu.default", C, &[("x", &[S, N(3), N(4)]), ("w", &[N(3)])], vec![x("self"), ("weight", P::In("w"))]),
        case("aten._prelu_kernel.default", C, &[("x", &[S, N(3), N(4)]), ("w", &[N(1)])], vec![x("self"), ("weight", P::In("w"))]),
        case("aten.rrelu.default", C, &[("x", &[S, N(4)])], vec![x("self"), ("lower", P::F(0.1)), ("upper", P::F(0.3)), ("training", P::B(false))]),
        Case { masks: &["m"], ..case("aten.native_dropout_backward.default", C, &[("g", &[S, N(4)]), ("m", &[S, N(4)])], vec![("grad_output", P::In("g")), ("mask", P::In("m")), ("scale", P::F(2.0))]) },
        case("aten._softmax_backward_data.default", C, &[("g", &[S, N(4)]), ("y", &[S, N(4)])], vec![("grad_output", P::In("g")), ("output", P::In("y")), ("dim", P::I(1)), ("input_dtype", P::Dtype(DType::F32))]),
        // Issue 25's corpus classes: rules written from ATen's bodies and torch._decomp.
        case("aten.repeat_interleave.self_int", C, &[("x", &[S, N(2), N(3)])], vec![x("self"), ("repeats", P::I(3)), ("dim", P::I(1))]),
        case("aten.repeat_interleave.self_int", I, &[("x", &[S])], vec![x("self"), ("repeats", P::I(2))]),
        Case { indices: &[("o", 4)], ..case("aten.type_as.default", C, &[("x", &[S, N(3)]), ("o", &[])], vec![x("self"), ("other", P::In("o"))]) },
        case("aten.concat.default", C, &[("a", &[S, N(3)]), ("b", &[S, N(2)])], vec![("tensors", P::Ins(&["a", "b"])), ("dim", P::I(1))]),
        case("aten.concatenate.default", I, &[("a", &[S, N(3)]), ("b", &[N(2), N(3)])], vec![("tensors", P::Ins(&["a", "b"]))]),
        case("aten.avg_pool1d.default", C, &[("x", &[S, N(2), N(7)])], vec![x("self"), ("kernel_size", P::Is(&[3])), ("stride", P::Is(&[2])), ("padding", P::Is(&[1]))]),
        case("aten.max_pool1d.default", C, &[("x", &[S, N(2), N(7)])], vec![x("self"), ("kernel_size", P::Is(&[2]))]),
        case("aten.max_pool1d.default", I, &[("x", &[S, N(2), N(7)])], vec![x("self"), ("kernel_size", P::Is(&[3])), ("stride", P::Is(&[2]))]),
        case("aten.tile.default", C, &[("x", &[S, N(2), N(3)])], vec![x("self"), ("dims", P::Is(&[2, 1]))]),
        case("aten.adaptive_avg_pool1d.default", C, &[("x", &[S, N(3), N(5)])], vec![x("self"), ("output_size", P::Is(&[1]))]),
        case("aten.im2col.default", C, &[("x", &[S, N(2), S, N(1)])], vec![x("self"), ("kernel_size", P::Is(&[3, 1])), ("dilation", P::Is(&[1, 1])), ("padding", P::Is(&[1, 0])), ("stride", P::Is(&[1, 1]))]),
        case("aten.im2col.default", I, &[("x", &[N(2), N(3), S, N(5)])], vec![x("self"), ("kernel_size", P::Is(&[2, 2])), ("dilation", P::Is(&[2, 1])), ("padding", P::Is(&[1, 1])), ("stride", P::Is(&[2, 2]))]),
        Case { masks: &["m"], ..case("aten.where.Scalar", C, &[("m", &[S, N(3)])], vec![("condition", P::In("m")), ("self", P::F(0.0)), ("other", P::F(-1e10))]) },
        Case { masks: &["m"], ..case("aten.where.ScalarSelf", C, &[("m", &[S, N(3)]), ("x", &[N(3)])], vec![("condition", P::In("m")), ("self", P::F(-2.5)), ("other", P::In("x"))]) },
        case("aten.split.Tensor", C, &[("x", &[S, N(8)])], vec![x("self"), ("split_size", P::I(3)), ("dim", P::I(-1))]),
        case("aten.meshgrid.indexing", C, &[("a", &[S]), ("b", &[N(3)])], vec![("tensors", P::Ins(&["a", "b"])), ("indexing", P::Str("xy"))]),
        case("aten.meshgrid.default", I, &[("a", &[N(2)]), ("b", &[S]), ("c", &[N(3)])], vec![("tensors", P::Ins(&["a", "b", "c"]))]),
        Case { masks: &["m"], ..case("aten.all.dim", C, &[("m", &[S, N(3)])], vec![("self", P::In("m")), ("dim", P::I(1)), ("keepdim", P::B(true))]) },
        case("aten.all.dims", I, &[("x", &[S, N(3)])], vec![x("self"), ("dim", P::Is(&[0]))]),
        Case { masks: &["m"], ..case("aten.all.default", C, &[("m", &[S, N(3)])], vec![("self", P::In("m"))]) },
        case("aten.select_scatter.default", C, &[("x", &[N(3), S, N(4)]), ("s", &[S, N(4)])], vec![x("self"), ("src", P::In("s")), ("dim", P::I(0)), ("index", P::I(-1))]),
        Case { masks: &["m"], ..case("aten.masked_fill.Tensor", C, &[("x", &[S, N(4)]), ("m", &[N(4)]), ("v", &[])], vec![x("self"), ("mask", P::In("m")), ("value", P::In("v"))]) },
        Case { masks: &["a", "b"], ..case("aten.__or__.Tensor", C, &[("a", &[S, N(4)]), ("b", &[N(4)])], vec![("self", P::In("a")), ("other", P::In("b"))]) },
        Case { indices: &[("a", 9), ("b", 9)], ..case("aten.__xor__.Tensor", I, &[("a", &[S, N(4)]), ("b", &[])], vec![("self", P::In("a")), ("other", P::In("b"))]) },
    ]
    .into_iter()
    .chain(composite_cases())
    .collect()
}

/// Composite products and numeric routines (CompositeImplicitAutograd in PyTorch): contractions,
/// integration, differences, membership and quantiles, each in several spellings and shapes.
fn composite_cases() -> Vec<Case> {
    let x = |name| (name, P::In("x"));
    let eq = |e: &'static str| ("equation", P::Str(e));
    let ab = || ("tensors", P::Ins(&["a", "b"]));
    vec![
        case("aten.einsum.default", C, &[("a", &[S, N(3)]), ("b", &[N(3), N(4)])], vec![eq("ij,jk->ik"), ab()]),
        case("aten.einsum.default", C, &[("a", &[S, N(2), N(3)]), ("b", &[S, N(3), N(4)])], vec![eq("bij,bjk->bik"), ab()]),
        case("aten.einsum.default", C, &[("a", &[S, N(2), N(3)]), ("b", &[N(3), N(4)])], vec![eq("...ij,...jk"), ab()]),
        case("aten.einsum.default", C, &[("a", &[N(4), S, N(4)])], vec![eq("iji->j"), ("tensors", P::Ins(&["a"]))]),
        case("aten.einsum.default", C, &[("a", &[S, N(5)])], vec![eq("ij->"), ("tensors", P::Ins(&["a"]))]),
        case("aten.einsum.default", C, &[("a", &[S, N(5)])], vec![eq("ij->ji"), ("tensors", P::Ins(&["a"]))]),
        case("aten.einsum.default", C, &[("a", &[S]), ("b", &[S])], vec![eq("i,i"), ab()]),
        case("aten.einsum.default", C, &[("a", &[S, N(3)]), ("b", &[N(3), N(4)]), ("c", &[N(4), N(2)])], vec![eq("ij,jk,kl->il"), ("tensors", P::Ins(&["a", "b", "c"]))]),
        case("aten.einsum.default", C, &[("a", &[S, N(3)]), ("b", &[N(2), N(3), N(4)]), ("c", &[S, N(4)])], vec![eq("bn,anm,bm->ba"), ("tensors", P::Ins(&["a", "b", "c"])), ("path", P::Is(&[0, 2, 0, 1]))]),
        case("aten.einsum.default", C, &[("a", &[N(1), N(3)]), ("b", &[S, N(3)])], vec![eq("ij,kj->ik"), ab()]),
        Case { indices: &[("a", 7)], ..case("aten.einsum.default", C, &[("a", &[S, N(3)])], vec![eq("ij->i"), ("tensors", P::Ins(&["a"]))]) },
        case("aten.tensordot.default", C, &[("a", &[S, N(3), N(4)]), ("b", &[N(4), N(3), N(5)])], vec![("self", P::In("a")), ("other", P::In("b")), ("dims_self", P::Is(&[1, -1])), ("dims_other", P::Is(&[1, 0]))]),
        case("aten.tensordot.default", C, &[("a", &[N(1), N(1), S]), ("b", &[N(2), N(1), N(2)])], vec![("self", P::In("a")), ("other", P::In("b")), ("dims_self", P::Is(&[0, 1])), ("dims_other", P::Is(&[2, 0]))]),
        case("aten.linalg_vecdot.default", C, &[("a", &[S, N(4)]), ("b", &[N(1), N(4)])], vec![("x", P::In("a")), ("y", P::In("b")), ("dim", P::I(-1))]),
        case("aten.linalg_vecdot.default", C, &[("a", &[S]), ("b", &[S])], vec![("x", P::In("a")), ("y", P::In("b"))]),
        case("aten.linalg_multi_dot.default", C, &[("a", &[S, N(3)]), ("b", &[N(3), N(4)]), ("c", &[N(4), N(2)])], vec![("tensors", P::Ins(&["a", "b", "c"]))]),
        case("aten.linalg_multi_dot.default", C, &[("a", &[N(5)]), ("b", &[N(5), N(3)]), ("c", &[N(3), N(7)]), ("d", &[N(7)])], vec![("tensors", P::Ins(&["a", "b", "c", "d"]))]),
        case("aten.linalg_multi_dot.default", C, &[("a", &[N(2), N(6)]), ("b", &[N(6), N(3)]), ("c", &[N(3), N(5)])], vec![("tensors", P::Ins(&["a", "b", "c"]))]),
        case("aten.linalg_matrix_power.default", C, &[("x", &[S, N(3), N(3)])], vec![x("self"), ("n", P::I(0))]),
        case("aten.linalg_matrix_power.default", C, &[("x", &[S, N(3), N(3)])], vec![x("self"), ("n", P::I(3))]),
        case("aten.linalg_matrix_power.default", C, &[("x", &[N(3), N(3)])], vec![x("self"), ("n", P::I(6))]),
        case("aten.linalg_matrix_power.default", C, &[("x", &[S, N(2), N(2)])], vec![x("self"), ("n", P::I(-2))]),
        case("aten.linalg_tensorinv.default", C, &[("x", &[N(2), N(3), N(6)])], vec![x("self"), ("ind", P::I(2))]),
        case("aten.linalg_tensorsolve.default", C, &[("a", &[N(6), N(2), N(3)]), ("b", &[N(2), N(3)])], vec![("self", P::In("a")), ("other", P::In("b")), ("dims", P::Is(&[0]))]),
        case("aten.linalg_matrix_norm.str_ord", C, &[("x", &[S, N(3), N(4)])], vec![("self", P::In("x")), ("ord", P::Str("nuc"))]),
        case("aten.linalg_matrix_norm.str_ord", C, &[("x", &[N(3), S, N(4)])], vec![("self", P::In("x")), ("ord", P::Str("nuc")), ("dim", P::Is(&[0, 2])), ("keepdim", P::B(true))]),
        case("aten.linalg_matrix_norm.str_ord", C, &[("x", &[S, N(3), N(4)])], vec![("self", P::In("x")), ("ord", P::Str("fro")), ("keepdim", P::B(true))]),
        case("aten.matrix_exp.default", C, &[("x", &[S, N(3), N(3)])], vec![x("self")]),
        case("aten.trapz.x", C, &[("y", &[S, N(5)]), ("t", &[S, N(5)])], vec![("y", P::In("y")), ("x", P::In("t"))]),
        case("aten.trapezoid.x", C, &[("y", &[N(5), S]), ("t", &[N(5)])], vec![("y", P::In("y")), ("x", P::In("t")), ("dim", P::I(0))]),
        Case { indices: &[("y", 9), ("t", 9)], ..case("aten.trapezoid.x", C, &[("y", &[S, N(4)]), ("t", &[N(4)])], vec![("y", P::In("y")), ("x", P::In("t"))]) },
        case("aten.trapz.dx", C, &[("y", &[S, N(4)])], vec![("y", P::In("y")), ("dx", P::F(0.5))]),
        case("aten.trapezoid.dx", C, &[("y", &[N(3), S])], vec![("y", P::In("y")), ("dx", P::F(2.0)), ("dim", P::I(0))]),
        case("aten.cumulative_trapezoid.x", C, &[("y", &[S, N(5)]), ("t", &[N(1), N(5)])], vec![("y", P::In("y")), ("x", P::In("t"))]),
        case("aten.cumulative_trapezoid.dx", C, &[("y", &[N(4), S])], vec![("y", P::In("y")), ("dx", P::F(3.0)), ("dim", P::I(0))]),
        case("aten.gradient.scalarint", C, &[("x", &[S, N(5)])], vec![x("self"), ("spacing", P::F(2.0)), ("dim", P::I(1))]),
        case("aten.gradient.scalarrayarray", C, &[("x", &[S, N(4), N(5)])], vec![x("self"), ("spacing", P::Fs(&[2.0, 0.5])), ("dim", P::Is(&[1, 2])), ("edge_order", P::I(2))]),
        case("aten.gradient.array", C, &[("x", &[N(3), S])], vec![x("self"), ("dim", P::Is(&[0])), ("edge_order", P::I(2))]),
        case("aten.gradient.scalararray", C, &[("x", &[N(6), S])], vec![x("self"), ("spacing", P::F(0.25)), ("dim", P::Is(&[0]))]),
        case("aten.gradient.tensorarray", C, &[("x", &[S, N(5)]), ("c", &[N(5)])], vec![x("self"), ("spacing", P::Ins(&["c"])), ("dim", P::Is(&[1]))]),
        case("aten.gradient.tensorarray", C, &[("x", &[S, N(4)]), ("c", &[N(4)])], vec![x("self"), ("spacing", P::Ins(&["c"])), ("dim", P::Is(&[-1])), ("edge_order", P::I(2))]),
        case("aten.linalg_vander.default", C, &[("x", &[S, N(3)])], vec![x("x"), ("N", P::I(4))]),
        case("aten.linalg_vander.default", C, &[("x", &[S, N(4)])], vec![x("x")]),
        Case { indices: &[("e", 6), ("t", 6)], ..case("aten.isin.Tensor_Tensor", C, &[("e", &[S, N(4)]), ("t", &[N(3)])], vec![("elements", P::In("e")), ("test_elements", P::In("t"))]) },
        Case { indices: &[("e", 20), ("t", 20)], ..case("aten.isin.Tensor_Tensor", C, &[("e", &[N(2)]), ("t", &[N(5), N(6)])], vec![("elements", P::In("e")), ("test_elements", P::In("t")), ("invert", P::B(true))]) },
        case("aten.isin.Tensor_Tensor", C, &[("e", &[N(3)]), ("t", &[N(40)])], vec![("elements", P::In("e")), ("test_elements", P::In("t")), ("assume_unique", P::B(true))]),
        Case { indices: &[("e", 4)], ..case("aten.isin.Tensor_Scalar", C, &[("e", &[S, N(3)])], vec![("elements", P::In("e")), ("test_element", P::I(2)), ("invert", P::B(true))]) },
        Case { indices: &[("t", 4)], ..case("aten.isin.Scalar_Tensor", C, &[("t", &[S, N(3)])], vec![("element", P::I(1)), ("test_elements", P::In("t"))]) },
        case("aten.quantile.scalar", C, &[("x", &[S, N(5)])], vec![x("self"), ("q", P::F(0.3)), ("dim", P::I(1)), ("keepdim", P::B(true))]),
        case("aten.quantile.scalar", C, &[("x", &[N(3), S, N(2)])], vec![x("self"), ("q", P::F(0.75)), ("dim", P::I(2)), ("interpolation", P::Str("nearest"))]),
        case("aten.quantile.scalar", C, &[("x", &[N(3), N(4), N(2)])], vec![x("self"), ("q", P::F(0.6))]),
        case("aten.quantile.scalar", C, &[("x", &[N(4), S])], vec![x("self"), ("q", P::F(0.4)), ("dim", P::I(0)), ("interpolation", P::Str("midpoint"))]),
        Case { unit: &["q"], ..case("aten.quantile.default", C, &[("x", &[S, N(6)]), ("q", &[N(3)])], vec![x("self"), ("q", P::In("q")), ("dim", P::I(-1)), ("interpolation", P::Str("lower"))]) },
        Case { unit: &["q"], ..case("aten.nanquantile.default", C, &[("x", &[N(5), S]), ("q", &[N(2)])], vec![x("self"), ("q", P::In("q")), ("dim", P::I(0)), ("keepdim", P::B(true)), ("interpolation", P::Str("higher"))]) },
        case("aten.nanquantile.scalar", C, &[("x", &[S, N(3)])], vec![x("self"), ("q", P::F(0.5)), ("dim", P::I(1))]),
        case("aten.cartesian_prod.default", C, &[("a", &[S]), ("b", &[N(3)])], vec![ab()]),
        case("aten.cartesian_prod.default", C, &[("a", &[S])], vec![("tensors", P::Ins(&["a"]))]),
        case("aten.combinations.default", C, &[("x", &[S])], vec![x("self")]),
        case("aten.combinations.default", C, &[("x", &[N(5)])], vec![x("self"), ("r", P::I(3)), ("with_replacement", P::B(true))]),
    ]
}

fn meta(dims: &[D], dtype: DType) -> TensorMeta {
    let sizes: Vec<Expr> = dims.iter().map(|d| match d {
        S => Expr::symbol("s0"),
        N(n) => Expr::int(*n),
    }).collect();
    TensorMeta::contiguous(dtype, sizes)
}

fn build(c: &Case) -> (Model, Graph) {
    let mut g = Graph::new("case");
    let mut ids = BTreeMap::new();
    for (name, dims) in c.inputs {
        ids.insert(*name, g.add_input(name, ValueKind::Tensor(meta(dims, c.dtype(name))), InputKind::UserInput).unwrap());
    }
    let mut sizes = BTreeMap::new();
    for (_, p) in &c.args {
        if let P::SizeOf(input, d) = p {
            let x = ids[input];
            let e = g.value(x).tensor().unwrap().sizes[*d as usize].clone();
            let args = vec![
                NamedArg { name: "self".into(), arg: Arg::Tensor(x), kwarg: false },
                NamedArg { name: "dim".into(), arg: Arg::Int(*d), kwarg: false },
            ];
            let n = g.add_node("size", "aten.sym_size.int", args, vec![("size".into(), ValueKind::SymInt(e))], NodeMeta::default()).unwrap();
            sizes.insert((*input, *d), g.node(n).outputs[0]);
        }
    }
    let args: Vec<NamedArg> = c
        .args
        .iter()
        .map(|(n, p)| NamedArg {
            name: n.to_string(),
            arg: match p {
                P::SizeOf(i, d) => Arg::SymInt(SymIntArg::Value(sizes[&(*i, *d)])),
                P::Dtype(d) => Arg::ScalarType(*d),
                P::In(i) => Arg::Tensor(ids[i]),
                P::Ins(v) => Arg::Tensors(v.iter().map(|i| ids[i]).collect()),
                P::I(v) => Arg::Int(*v),
                P::Is(v) => Arg::Ints(v.to_vec()),
                P::F(v) => Arg::Float(*v),
                P::Fs(v) => Arg::Floats(v.to_vec()),
                P::B(v) => Arg::Bool(*v),
                P::Str(v) => Arg::String(v.to_string()),
                P::None => Arg::None,
            },
            kwarg: false,
        })
        .collect();
    let kinds = infer(c.target, &args, &g).unwrap_or_else(|e| panic!("{}: {e}", c.target));
    let outs: Vec<(String, ValueKind)> = kinds.into_iter().enumerate().map(|(i, k)| (format!("out{i}"), k)).collect();
    let node = g.add_node("op", c.target, args, outs, NodeMeta::default()).unwrap();
    let rule_outputs = g.node(node).outputs.len();
    // Multi-output rules (native_layer_norm, chunk) are checked on every output they produce.
    let rule_outputs = if c.target.contains("batch_norm") { 1 } else { rule_outputs };
    let checked: Vec<Arg> = g.node(node).outputs[..rule_outputs].iter().map(|v| Arg::Tensor(*v)).collect();
    g.outputs.extend(checked);
    let mut model = Model::new(Format::Pt2, c.target);
    model.symbols.push(SymbolInfo { name: "s0".into(), range: Range { min: 1, max: Some(9) }, hint: Some(2) });
    (model, g)
}

fn random_inputs(c: &Case, s0: usize, rng: &mut StdRng) -> Vec<Tensor> {
    c.inputs
        .iter()
        .map(|(name, dims)| {
            let shape: Vec<usize> = dims.iter().map(|d| match d {
                S => s0,
                N(n) => *n as usize,
            }).collect();
            let numel: usize = shape.iter().product();
            if let Some((_, bound)) = c.indices.iter().find(|(n, _)| n == name) {
                let values: Vec<i64> = (0..numel).map(|_| rng.gen_range(0..*bound)).collect();
                return Tensor::from_vec(&shape, values).unwrap();
            }
            if c.masks.contains(name) {
                let values: Vec<bool> = (0..numel).map(|_| rng.gen_bool(0.5)).collect();
                return Tensor::from_vec(&shape, values).unwrap();
            }
            let positive = c.positive.contains(name);
            let unit = c.unit.contains(name);
            let values: Vec<f32> = (0..numel)
                .map(|_| if unit { rng.gen_range(0.05f32..0.95) } else if positive { rng.gen_range(0.1f32..2.0) } else { rng.gen_range(-3.0f32..3.0) })
                .collect();
            Tensor::from_vec(&shape, values).unwrap()
        })
        .collect()
}

/// Rules whose source op neither the interpreter nor the meta functions know yet (they are
/// spellings torch normalises: `conv1d`, `to`, in-place ops, ...). Each must instead
/// fire on a model of the zoo, where tests/zoo.rs compares the whole graph's op multiset with
/// torch's.
const CHECKED_ON_THE_ZOO: &[&str] = &[
    "aten.conv1d.default",
    "aten.new_ones.default",
    "aten.to.dtype",
    "aten.to.device",
    "aten.to.dtype_layout",
    "aten.where.ScalarOther",
    "aten.min.other",
    "aten.dropout_.default",
    "aten.squeeze.dim",
];

/// Every decomposition rule in the op registry: its target, the table it serves, its builder.
fn registered_rules() -> Vec<(&'static str, Table, Build)> {
    let mut out = Vec::new();
    for d in xpu_workbench::ops::all() {
        for (table, build) in [(Table::Core, d.core), (Table::Core, d.core_only), (Table::Inductor, d.inductor)] {
            if let Some(b) = build {
                out.push((d.target, table, b));
            }
        }
    }
    out
}

/// Whether decomposing some zoo model under `table` applies `rule` to a node of `target`.
fn fires_on_the_zoo(target: &str, table: Table, rule: Build) -> bool {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/zoo/torch-2.15");
    let mode = if table == Table::Inductor { Mode::Full } else { Mode::Core };
    std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "pt2")).any(|p| {
        let model = xpu_workbench::import::load(&p).unwrap();
        let g = &model.graphs[0];
        decompose(g, mode, &Marks::default()).is_ok_and(|d| {
            d.decomposed.iter().any(|x| {
                let t = &g.node(x.node).target;
                t == target && find(table, t).is_some_and(|f| std::ptr::fn_addr_eq(f, rule))
            })
        })
    })
}

#[test]
fn every_rule_has_a_case() {
    let cases = cases();
    for (target, table, rule) in registered_rules() {
        // A core rule also applies under Inductor's table when no Inductor rule overrides it.
        let exercises = |c: &Case| find(c.table, c.target).is_some_and(|f| std::ptr::fn_addr_eq(f, rule));
        if cases.iter().any(exercises) {
            continue;
        }
        assert!(
            CHECKED_ON_THE_ZOO.contains(&target) && fires_on_the_zoo(target, table, rule),
            "rule {target} ({table:?}) has no property case and fires on no zoo model"
        );
    }
}

#[test]
fn every_rule_matches_the_reference_interpreter_at_random_bindings() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    for c in cases() {
        let (model, g) = build(&c);
        let d = match c.table {
            Table::Core => decompose(&g, Mode::Core, &Marks::default()),
            Table::Inductor => decompose(&g, Mode::Full, &Marks::default()),
            // What the lowering expands, in any mode.
            Table::Lowering => xpu_workbench::decomp::expand_for_lowering(&g, Mode::None),
        }
        .unwrap_or_else(|e| panic!("{}: {e}", c.target));
        let fired: Vec<&str> = d.decomposed.iter().map(|x| g.node(x.node).target.as_str()).collect();
        assert_eq!(fired, vec![c.target], "{}: the rule did not fire", c.target);
        for s0 in [1usize, rng.gen_range(2..=9), rng.gen_range(2..=9), 9] {
            let inputs = random_inputs(&c, s0, &mut rng);
            let want = exec::run(&model, &g, &inputs).unwrap_or_else(|e| panic!("{} original: {e}", c.target));
            let got = exec::run(&model, &d.graph, &inputs).unwrap_or_else(|e| panic!("{} decomposed: {e}", c.target));
            assert_eq!(want.len(), got.len());
            for (w, o) in want.iter().zip(&got) {
                assert_eq!(w.shape(), o.shape(), "{} at s0={s0}", c.target);
                let (w, o) = (w.to_f64_vec(), o.to_f64_vec());
                let scale = w.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                let err = w.iter().zip(&o).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                assert!(err <= 1e-5 * scale, "{} ({:?}) at s0={s0}: max error {err}", c.target, c.table);
            }
        }
    }
}
