//! One meta function per op family, registered with each op in the op registry
//! (`crate::ops`, `.meta(..)`). Each returns the outputs' `ValueKind`s.

use super::{broadcast_shapes, contiguous, norm_dim, Args, InferError};
use crate::ir::{Arg, DType, TensorMeta, ValueKind};
use crate::sym::{Expr, Func};

pub(crate) type Out = Result<Vec<ValueKind>, InferError>;

pub(crate) use super::promote::lerp;
pub(crate) use super::select::{
    diagonal, diff, dot, eye, inv_ex, like_input, like_matrix, linalg_solve, scan, searchsorted, sort, stack, svdvals,
};
pub(crate) use super::ops_nn::{
    adaptive_avg_pool2d, avg_pool2d, batch_norm_batch_stats, batch_norm_no_training, bmm, composite_norm, convolution, fused_rms_norm, grouped_mm, linear,
    matmul, max_pool2d_values, max_pool2d_with_indices, mm, native_layer_norm, prims_low_memory_max_pool_offsets_to_indices,
    prims_low_memory_max_pool_with_offsets, sdpa, sdpa_flash_cpu,
};
pub(crate) use super::ops_shape::{
    as_strided, cat, chunk, clone, constant_pad_nd, expand, flatten, index_select, index_tensor, permute, repeat, select_int,
    slice_scatter, slice_tensor, split_meta, squeeze_dim, t, transpose, unflatten, unsqueeze, view,
};
pub(crate) use super::loss::{class_loss, cosine_similarity, dropout_backward, glu, margin_loss, pairwise_distance, pointwise_loss, softmax_backward_data, target_shaped_loss, triplet_loss};

/// Unary elementwise ops and others whose output is laid out like their first tensor input.
pub(crate) fn same_as_input(a: &Args) -> Out {
    let x = first_tensor(a)?;
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

/// `view_as_real`: a complex tensor as its float pairs, a trailing dim of 2 (a view: each
/// stride doubles, the pair's is 1).
pub(crate) fn view_as_real(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dtype = match x.dtype {
        DType::Complex32 => DType::F16,
        DType::Complex64 => DType::F32,
        DType::Complex128 => DType::F64,
        other => return Err(a.err(format!("expects a complex tensor, got {other}"))),
    };
    let mut sizes = x.sizes.clone();
    sizes.push(Expr::int(2));
    let mut m = contiguous(x, dtype, sizes);
    if x.strides.len() == x.sizes.len() {
        m.strides = x.strides.iter().map(|st| Expr::mul(st.clone(), Expr::int(2))).chain([Expr::int(1)]).collect();
        m.storage_offset = Expr::mul(x.storage_offset.clone(), Expr::int(2));
    }
    one(m)
}

/// Comparisons with a scalar and logical negation: bool, laid out like `self`.
pub(crate) fn bool_like_input(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, DType::Bool, x.sizes.clone()))
}

pub(crate) fn where_(a: &Args) -> Out {
    let c = a.tensor("condition")?;
    let x = a.tensor("self")?;
    let y = a.tensor("other")?;
    let s = broadcast_shapes(&c.sizes, &x.sizes).and_then(|s| broadcast_shapes(&s, &y.sizes));
    one(contiguous(x, result_type(a, &["self", "other"])?, s.map_err(|m| a.err(m))?))
}

/// Unary math that makes integers float (`exp`, `log`, `sigmoid`, ...: PyTorch's
/// INT_TO_FLOAT promotion): float inputs keep their dtype, the others become float32.
pub(crate) fn float_unary(a: &Args) -> Out {
    let x = first_tensor(a)?;
    let dtype = if x.dtype.is_floating() { x.dtype } else { DType::F32 };
    one(contiguous(x, dtype, x.sizes.clone()))
}

/// Comparisons of two operands (tensor or number): bool, broadcast.
pub(crate) fn compare(a: &Args) -> Out {
    let (like, sizes) = broadcast_operands(a, &["self", "other"])?;
    one(contiguous(like, DType::Bool, sizes))
}

/// `gather(self, dim, index)`: `index`'s shape, `self`'s dtype.
pub(crate) fn gather(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let i = a.tensor("index")?;
    if i.sizes.len() != x.sizes.len() && !(x.sizes.len() <= 1 && i.sizes.len() <= 1) {
        return Err(a.err(format!("index of rank {} for a rank-{} input", i.sizes.len(), x.sizes.len())));
    }
    one(contiguous(x, x.dtype, i.sizes.clone()))
}

pub(crate) fn addcmul(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let t1 = a.tensor("tensor1")?;
    let t2 = a.tensor("tensor2")?;
    let s = broadcast_shapes(&x.sizes, &t1.sizes).and_then(|s| broadcast_shapes(&s, &t2.sizes));
    one(contiguous(x, x.dtype, s.map_err(|m| a.err(m))?))
}

pub(crate) fn reduce(a: &Args) -> Out {
    let t = a.target;
    let x = a.tensor("self")?;
    let keep = a.bool("keepdim", false)?;
    let dims = reduce_dims(a, x)?;
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        // `any` answers in bool, except that uint8 stays uint8 (PyTorch's legacy byte masks).
        _ if t == "aten.any.dim" && x.dtype == DType::U8 => x.dtype,
        _ if t.starts_with("aten.any.") || t.starts_with("aten.all.") => DType::Bool,
        // Sums of bools and integers are int64, as in PyTorch.
        _ if t.starts_with("aten.sum.") && !x.dtype.is_floating() => DType::I64,
        _ => x.dtype,
    };
    one(contiguous(x, dtype, reduced(&x.sizes, &dims, keep)))
}

pub(crate) fn var_std(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dims = reduce_dims(a, x)?;
    one(contiguous(x, x.dtype, reduced(&x.sizes, &dims, a.bool("keepdim", false)?)))
}

pub(crate) fn var_mean(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dims = reduce_dims(a, x)?;
    let m = contiguous(x, x.dtype, reduced(&x.sizes, &dims, a.bool("keepdim", false)?));
    Ok(vec![ValueKind::Tensor(m.clone()), ValueKind::Tensor(m)])
}

pub(crate) fn softmax_like(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

pub(crate) fn full(a: &Args) -> Out {
    factory(a, a.sym_sizes("size")?)
}

/// A fresh contiguous tensor of `sizes` from a factory's `dtype` (float32 when absent) and
/// `device` (cpu when absent) arguments.
pub(crate) fn factory(a: &Args, sizes: Vec<Expr>) -> Out {
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => DType::F32,
    };
    let device = match a.get("device") {
        Some(Arg::Device(d)) => d.clone(),
        _ => "cpu".to_string(),
    };
    let strides = TensorMeta::contiguous_strides(&sizes);
    one(TensorMeta { dtype, sizes, strides, storage_offset: Expr::int(0), device, requires_grad: false })
}

pub(crate) fn to_copy(a: &Args) -> Out {
    // memory_format=preserve keeps a dense tensor's strides.
    let x = a.tensor("self")?;
    let mut m = x.clone();
    if let Some(Arg::ScalarType(d)) = a.get("dtype") {
        m.dtype = *d;
    }
    if let Some(Arg::Device(d)) = a.get("device") {
        m.device = d.clone();
    }
    m.storage_offset = Expr::int(0);
    one(m)
}

pub(crate) fn scalar_tensor(a: &Args) -> Out {
    factory(a, vec![])
}

pub(crate) fn copy(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

pub(crate) fn new_zeros(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => x.dtype,
    };
    one(contiguous(x, dtype, a.sym_sizes("size")?))
}

pub(crate) fn arange(a: &Args) -> Out {
    let t = a.target;
    let float = |n: &str| match a.get(n) {
        Some(Arg::Float(f)) => Some(*f),
        _ => None,
    };
    let floats = ["start", "end", "step"].iter().any(|n| float(n).is_some());
    let n = if t == "prims.iota.default" {
        a.sym_int("length")?
    } else if floats {
        // A float bound or step: `ceil((end - start) / step)` of static numbers.
        let num = |n: &str, default: f64| match a.get(n) {
            Some(Arg::Float(f)) => Ok(*f),
            Some(Arg::Int(i)) | Some(Arg::SymInt(crate::ir::SymIntArg::Int(i))) => Ok(*i as f64),
            None | Some(Arg::None) => Ok(default),
            Some(other) => Err(a.err(format!("`{n}`: a float arange needs static numbers, found {other:?}"))),
        };
        let (start, end, step) = (num("start", 0.0)?, num("end", 0.0)?, num("step", 1.0)?);
        if step == 0.0 || !(start.is_finite() && end.is_finite() && step.is_finite()) {
            return Err(a.err(format!("arange({start}, {end}, {step})")));
        }
        Expr::int(((end - start) / step).ceil().max(0.0) as i64)
    } else {
        let end = a.sym_int("end")?;
        let start = if a.get("start").is_some_and(|s| !matches!(s, Arg::None)) { a.sym_int("start")? } else { Expr::int(0) };
        let step = a.int("step", Some(1))?;
        if step == 0 {
            return Err(a.err("step must be nonzero"));
        }
        // torch/_refs: `(end - start + step - sgn(step)) // step`.
        Expr::floordiv(Expr::add(Expr::sub(end, start), Expr::int(step - step.signum())), Expr::int(step))
    };
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        // torch's default dtype where a bound or the step is a float.
        _ if floats => DType::F32,
        _ => DType::I64,
    };
    Ok(vec![ValueKind::Tensor(TensorMeta {
        dtype,
        sizes: vec![n],
        strides: vec![Expr::int(1)],
        storage_offset: Expr::int(0),
        device: "cpu".into(),
        requires_grad: false,
    })])
}

pub(crate) fn convert_element_type(a: &Args) -> Out {
    let x = a.tensor("a")?;
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => return Err(a.err("missing dtype")),
    };
    one(contiguous(x, dtype, x.sizes.clone()))
}

pub(crate) fn sym_size(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let d = norm_dim(a.int("dim", None)?, x.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    Ok(vec![ValueKind::SymInt(x.sizes[d].clone())])
}

pub(crate) fn sym_arith(a: &Args) -> Out {
    let t = a.target;
    let x = a.sym_int("a")?;
    let y = a.sym_int("b")?;
    let e = match t {
        "_operator.mul" => Expr::mul(x, y),
        "_operator.add" => Expr::add(x, y),
        "_operator.sub" => Expr::sub(x, y),
        "torch.sym_min" => Expr::min(x, y),
        "torch.sym_max" => Expr::max(x, y),
        _ => Expr::floordiv(x, y),
    };
    Ok(vec![ValueKind::SymInt(e)])
}

/// Float arithmetic on sizes, as torch's sympy spells it: `torch.sym_float(a)` is
/// `ToFloat(a)`, `_operator.truediv(a, b)` `FloatTrueDiv(a, b)` (a float literal kept as one),
/// `math.ceil(a)` `CeilToInt(a)`; left unsimplified, as torch leaves the shapes they make
/// (XLNet's `arange` of a float step: `CeilToInt(FloatTrueDiv(ToFloat(-2*s), -1.0))`).
pub(crate) fn sym_float_arith(a: &Args) -> Out {
    let operand = |name: &str| -> Result<Expr, InferError> {
        match a.get(name) {
            Some(Arg::Float(f)) => Ok(Expr::float(*f)),
            Some(Arg::SymFloat(v)) => match &a.graph.value(*v).kind {
                ValueKind::SymFloat(e) => Ok(e.clone()),
                _ => Err(a.err(format!("`{name}` is not a SymFloat"))),
            },
            _ => a.sym_int(name),
        }
    };
    Ok(vec![match a.target {
        "torch.sym_float" => ValueKind::SymFloat(Expr::call(Func::ToFloat, vec![operand("a")?])),
        "_operator.truediv" => ValueKind::SymFloat(Expr::call(Func::FloatTrueDiv, vec![operand("a")?, operand("b")?])),
        _ => ValueKind::SymInt(Expr::call(Func::CeilToInt, vec![operand("a")?])),
    }])
}

pub(super) fn one(m: TensorMeta) -> Out {
    Ok(vec![ValueKind::Tensor(m)])
}

fn first_tensor<'a>(a: &Args<'a>) -> Result<&'a TensorMeta, InferError> {
    for n in ["self", "input"] {
        if let Some(Arg::Tensor(_)) = a.get(n) {
            return a.tensor(n);
        }
    }
    Err(a.err("missing tensor argument `self`"))
}

/// Elementwise binary ops: `self` broadcast with `other` (either may be a Python number;
/// `pow`'s is `exponent`), in their promoted dtype; true division makes integers float.
pub(crate) fn binary(a: &Args) -> Out {
    let names: &[&str] = if a.get("exponent").is_some() { &["self", "exponent"] } else { &["self", "other"] };
    let (like, sizes) = broadcast_operands(a, names)?;
    let mut dtype = result_type(a, names)?;
    let true_div = a.target.starts_with("aten.div.") && !matches!(a.get("rounding_mode"), Some(Arg::String(_)));
    if true_div && !dtype.is_floating() {
        dtype = DType::F32;
    }
    one(contiguous(like, dtype, sizes))
}

/// `clamp.Tensor` / `clamp_min.Tensor` / `clamp_max.Tensor`: `self` and the tensor bounds
/// broadcast, in their promoted dtype.
pub(crate) fn clamp_tensor(a: &Args) -> Out {
    let names = &["self", "min", "max"];
    let (like, sizes) = broadcast_operands(a, names)?;
    one(contiguous(like, result_type(a, names)?, sizes))
}

/// The tensor operands among `names` broadcast together, and the first of them (whose device
/// the result takes).
pub(super) fn broadcast_operands<'a>(a: &Args<'a>, names: &[&str]) -> Result<(&'a TensorMeta, Vec<Expr>), InferError> {
    let mut like = None;
    let mut sizes: Vec<Expr> = Vec::new();
    for n in names {
        if let Some(Arg::Tensor(_)) = a.get(n) {
            let t = a.tensor(n)?;
            sizes = broadcast_shapes(&sizes, &t.sizes).map_err(|m| a.err(m))?;
            like.get_or_insert(t);
        }
    }
    Ok((like.ok_or_else(|| a.err("no tensor operand"))?, sizes))
}

/// `torch.result_type` of the operands `names` (tensors, or Python numbers).
fn result_type(a: &Args, names: &[&str]) -> Result<DType, InferError> {
    use crate::exec::ops::pointwise::{result_dtype, Rank};
    let mut kinds = Vec::new();
    for n in names {
        kinds.push(match a.get(n) {
            Some(Arg::Tensor(_)) => {
                let t = a.tensor(n)?;
                (t.dtype, if t.sizes.is_empty() { Rank::ZeroDim } else { Rank::Dim })
            }
            Some(Arg::Int(_)) | Some(Arg::SymInt(_)) => (DType::I64, Rank::Number),
            Some(Arg::Float(_)) => (DType::F32, Rank::Number),
            Some(Arg::Bool(_)) => (DType::Bool, Rank::Number),
            _ => continue,
        });
    }
    result_dtype(&kinds).map_err(|e| a.err(format!("{e:?}")))
}

fn reduce_dims(a: &Args, x: &TensorMeta) -> Result<Vec<usize>, InferError> {
    let r = x.sizes.len();
    match a.ints("dim")? {
        None => Ok((0..r).collect()),
        Some(v) if v.is_empty() => Ok((0..r).collect()),
        Some(v) => v.iter().map(|&d| norm_dim(d, r).ok_or_else(|| a.err(format!("dim {d} out of range")))).collect(),
    }
}

fn reduced(sizes: &[Expr], dims: &[usize], keep: bool) -> Vec<Expr> {
    sizes
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match (dims.contains(&i), keep) {
            (true, true) => Some(Expr::int(1)),
            (true, false) => None,
            (false, _) => Some(s.clone()),
        })
        .collect()
}
