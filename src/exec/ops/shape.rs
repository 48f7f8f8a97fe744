//! Views, copies, concatenation and tensor creation. Every view materialises a contiguous copy:
//! the interpreter trades memory for never having to reason about aliasing.

use ndarray::{ArrayD, Axis, IxDyn, Slice};

use super::{dtype_ok, one, result_type, shape_err, wrap_dim, OpCx, OpError, OpResult, Operand, Scalar};
use crate::exec::tensor::{each_map, Data, Tensor};
use crate::exec::value::RtValue;
use crate::ir::DType;

pub(crate) fn many(ts: Vec<Tensor>) -> OpResult<Vec<RtValue>> {
    Ok(ts.into_iter().map(RtValue::Tensor).collect())
}

/// Sizes with at most one `-1`, inferred from `numel`.
fn infer_sizes(sizes: &[i64], numel: usize, what: &str) -> OpResult<Vec<usize>> {
    let mut out = Vec::with_capacity(sizes.len());
    let mut infer = None;
    for (i, &s) in sizes.iter().enumerate() {
        match s {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            s if s >= 0 => out.push(s as usize),
            _ => return shape_err(format!("{what}: invalid size {s} in {sizes:?}")),
        }
    }
    let known: usize = out.iter().product();
    if let Some(i) = infer {
        if known == 0 || !numel.is_multiple_of(known) {
            return shape_err(format!("{what}: cannot infer -1 in {sizes:?} for {numel} elements"));
        }
        out[i] = numel / known;
    }
    if out.iter().product::<usize>() != numel {
        return shape_err(format!("{what}: shape {sizes:?} is invalid for {numel} elements"));
    }
    Ok(out)
}

/// `view`, `reshape`, `_unsafe_view`: same elements, new shape.
pub fn view(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let sizes = match cx.opt_ints("size")? {
        Some(s) => s,
        None => cx.ints("shape")?,
    };
    let shape = infer_sizes(&sizes, t.numel(), "view")?;
    one(t.reshape(&shape).ok_or_else(|| OpError::Shape("view".into()))?)
}

pub(crate) fn permute_tensor(t: &Tensor, perm: &[usize]) -> OpResult<Tensor> {
    let mut seen = vec![false; t.ndim()];
    if perm.len() != t.ndim() || perm.iter().any(|&p| p >= t.ndim() || std::mem::replace(&mut seen[p], true)) {
        return shape_err(format!("{perm:?} is not a permutation of the {} dims of {:?}", t.ndim(), t.shape()));
    }
    Ok(Tensor::from_data(each_map!(t.data(), a => a.clone().permuted_axes(IxDyn(perm)))))
}

pub fn permute(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let perm = cx.ints("dims")?.iter().map(|&d| wrap_dim(d, t.ndim())).collect::<OpResult<Vec<_>>>()?;
    one(permute_tensor(t, &perm)?)
}

pub(crate) fn transpose_tensor(t: &Tensor, d0: usize, d1: usize) -> OpResult<Tensor> {
    let mut perm: Vec<usize> = (0..t.ndim()).collect();
    if t.ndim() > 0 {
        perm.swap(d0, d1);
    }
    permute_tensor(t, &perm)
}

pub fn transpose(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let (d0, d1) = (wrap_dim(cx.int("dim0")?, t.ndim())?, wrap_dim(cx.int("dim1")?, t.ndim())?);
    one(transpose_tensor(t, d0, d1)?)
}

pub fn t(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    match t.ndim() {
        0 | 1 => one(t.clone()),
        2 => one(transpose_tensor(t, 0, 1)?),
        n => shape_err(format!("t() expects a tensor of at most 2 dims, got {n}")),
    }
}

pub(crate) fn expand_tensor(t: &Tensor, sizes: &[i64]) -> OpResult<Tensor> {
    let (n, k) = (sizes.len(), t.ndim());
    if n < k {
        return shape_err(format!("expand to {sizes:?}: fewer dims than the tensor's {:?}", t.shape()));
    }
    let mut shape = Vec::with_capacity(n);
    for (i, &s) in sizes.iter().enumerate() {
        let have = if i >= n - k { Some(t.shape()[i - (n - k)]) } else { None };
        shape.push(match (s, have) {
            (-1, Some(h)) => h,
            (s, _) if s < 0 => return shape_err(format!("expand to {sizes:?}: invalid size {s}")),
            (s, Some(h)) if h != 1 && h != s as usize => {
                return shape_err(format!("expand {:?} to {sizes:?}: dim {i} is {h}, not 1", t.shape()))
            }
            (s, _) => s as usize,
        });
    }
    let data = each_map!(t.data(), a => a.broadcast(IxDyn(&shape)).ok_or_else(|| OpError::Shape(format!("cannot expand {:?} to {shape:?}", t.shape())))?.to_owned());
    Ok(Tensor::from_data(data))
}

pub fn expand(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(expand_tensor(cx.tensor("self")?, &cx.ints("size")?)?)
}

/// `clone`, `contiguous`, `alias`, `detach`: the values are already contiguous copies.
pub fn identity(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(cx.tensor("self")?.clone())
}

pub fn unsqueeze(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int("dim")?, t.ndim() + 1)?;
    let mut shape = t.shape().to_vec();
    shape.insert(d, 1);
    one(t.reshape(&shape).ok_or_else(|| OpError::Shape("unsqueeze".into()))?)
}

/// `squeeze.dim`, `squeeze.dims`, `squeeze.default`: drops the named (or all) dims of size 1.
pub fn squeeze_dims(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let dims = match cx.opt_ints("dim")? {
        Some(d) => d.iter().map(|&d| wrap_dim(d, t.ndim())).collect::<OpResult<Vec<_>>>()?,
        None => (0..t.ndim()).collect(),
    };
    let shape: Vec<usize> =
        t.shape().iter().enumerate().filter(|(i, &s)| !(s == 1 && dims.contains(i))).map(|(_, &s)| s).collect();
    one(t.reshape(&shape).ok_or_else(|| OpError::Shape("squeeze".into()))?)
}

pub fn unflatten(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int("dim")?, t.ndim())?;
    let inner = infer_sizes(&cx.ints("sizes")?, t.shape()[d], "unflatten")?;
    let mut shape = t.shape()[..d].to_vec();
    shape.extend(inner);
    shape.extend_from_slice(&t.shape()[d + 1..]);
    one(t.reshape(&shape).ok_or_else(|| OpError::Shape("unflatten".into()))?)
}

pub fn flatten(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    if t.ndim() == 0 {
        return one(t.reshape(&[1]).ok_or_else(|| OpError::Shape("flatten".into()))?);
    }
    let s = wrap_dim(cx.int_or("start_dim", 0)?, t.ndim())?;
    let e = wrap_dim(cx.int_or("end_dim", -1)?, t.ndim())?;
    if s > e {
        return shape_err(format!("flatten: start_dim {s} comes after end_dim {e}"));
    }
    let mut shape = t.shape()[..s].to_vec();
    shape.push(t.shape()[s..=e].iter().product());
    shape.extend_from_slice(&t.shape()[e + 1..]);
    one(t.reshape(&shape).ok_or_else(|| OpError::Shape("flatten".into()))?)
}

/// `t[..., start:end:step, ...]` along `dim`, bounds already clamped.
pub(crate) fn slice_tensor(t: &Tensor, dim: usize, start: usize, end: usize, step: usize) -> Tensor {
    let s = Slice::new(start as isize, Some(end.max(start) as isize), step as isize);
    Tensor::from_data(each_map!(t.data(), a => a.slice_axis(Axis(dim), s).to_owned()))
}

fn split_sizes(t: &Tensor, dim: usize, sizes: &[usize]) -> OpResult<Vec<RtValue>> {
    let n = t.shape().get(dim).copied().unwrap_or(1);
    if sizes.iter().sum::<usize>() != n {
        return shape_err(format!("split sizes {sizes:?} do not sum to dim {dim}'s size {n}"));
    }
    let mut start = 0;
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        out.push(slice_tensor(t, dim, start, start + s, 1));
        start += s;
    }
    many(out)
}

/// Pieces of `size` along `dim`, the last one shorter; at least one piece.
fn even_pieces(n: usize, size: usize) -> Vec<usize> {
    if n == 0 {
        return vec![0];
    }
    let mut v = vec![size; n / size];
    if !n.is_multiple_of(size) {
        v.push(n % size);
    }
    v
}

pub fn chunk(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let chunks = cx.int("chunks")?;
    if chunks <= 0 {
        return shape_err(format!("chunk expects a positive number of chunks, got {chunks}"));
    }
    let d = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    let n = t.shape()[d];
    let size = n.div_ceil(chunks as usize).max(1);
    split_sizes(t, d, &even_pieces(n, size))
}

pub fn split(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let size = cx.int("split_size")?;
    if size <= 0 {
        return shape_err(format!("split expects a positive split_size, got {size}"));
    }
    let d = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    split_sizes(t, d, &even_pieces(t.shape()[d], size as usize))
}

pub fn split_with_sizes(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    let sizes = cx.ints("split_sizes")?;
    if sizes.iter().any(|&s| s < 0) {
        return shape_err(format!("negative split size in {sizes:?}"));
    }
    split_sizes(t, d, &sizes.iter().map(|&s| s as usize).collect::<Vec<_>>())
}

pub fn slice(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int_or("dim", 0)?, t.ndim())?;
    let n = t.shape()[d] as i64;
    let step = cx.int_or("step", 1)?;
    if step <= 0 {
        return shape_err(format!("slice step must be positive, got {step}"));
    }
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n) as usize;
    let start = clamp(cx.opt_int("start")?.unwrap_or(0));
    let end = clamp(cx.opt_int("end")?.unwrap_or(n));
    one(slice_tensor(t, d, start, end, step as usize))
}

pub fn select(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    let d = wrap_dim(cx.int("dim")?, t.ndim())?;
    let n = t.shape()[d] as i64;
    let i = cx.int("index")?;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return shape_err(format!("index {i} is out of range for dim {d} of size {n}"));
    }
    let j = j as usize;
    one(Tensor::from_data(each_map!(t.data(), a => a.index_axis(Axis(d), j).to_owned())))
}

/// Concatenates same-dtype tensors along `dim`.
pub(crate) fn concat(ts: &[Tensor], dim: usize) -> OpResult<Tensor> {
    macro_rules! join {
        ($variant:ident) => {{
            let views: Vec<_> = ts
                .iter()
                .map(|t| match t.data() {
                    Data::$variant(a) => Ok(a.view()),
                    _ => Err(OpError::DType(t.dtype())),
                })
                .collect::<OpResult<_>>()?;
            Data::$variant(ndarray::concatenate(Axis(dim), &views).map_err(|e| {
                OpError::Shape(format!("cannot concatenate {:?} along dim {dim}: {e}", ts.iter().map(|t| t.shape()).collect::<Vec<_>>()))
            })?)
        }};
    }
    let data = match ts.first().map(|t| t.dtype()) {
        Some(DType::F32) => join!(F32),
        Some(DType::F64) => join!(F64),
        Some(DType::I64) => join!(I64),
        Some(DType::I32) => join!(I32),
        Some(DType::I16) => join!(I16),
        Some(DType::I8) => join!(I8),
        Some(DType::U8) => join!(U8),
        Some(DType::F16) => join!(F16),
        Some(DType::BF16) => join!(BF16),
        Some(DType::Bool) => join!(Bool),
        Some(d) => return Err(OpError::DType(d)),
        None => return shape_err("cat of no tensors"),
    };
    Ok(Tensor::from_data(data))
}

pub(crate) fn common_dtype(ts: &[&Tensor]) -> OpResult<Vec<Tensor>> {
    let out = result_type(&ts.iter().map(|t| Operand::Tensor(t)).collect::<Vec<_>>())?;
    ts.iter().map(|t| dtype_ok(t.cast(out))).collect()
}

pub fn cat(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let all = cx.tensors("tensors")?;
    // PyTorch skips legacy empty 1-D tensors of shape [0] in cat.
    let ts: Vec<&Tensor> = all.iter().copied().filter(|t| t.shape() != [0]).collect();
    if ts.is_empty() {
        return one(all.first().map(|t| (*t).clone()).ok_or_else(|| OpError::Shape("cat of no tensors".into()))?);
    }
    let d = wrap_dim(cx.int_or("dim", 0)?, ts[0].ndim())?;
    one(concat(&common_dtype(&ts)?, d)?)
}

pub fn stack(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    let first = ts.first().ok_or_else(|| OpError::Shape("stack of no tensors".into()))?;
    let d = wrap_dim(cx.int_or("dim", 0)?, first.ndim() + 1)?;
    let mut expanded = Vec::with_capacity(ts.len());
    for t in common_dtype(&ts)? {
        if t.shape() != first.shape() {
            return shape_err(format!("stack expects equal shapes, got {:?} and {:?}", first.shape(), t.shape()));
        }
        let mut shape = t.shape().to_vec();
        shape.insert(d, 1);
        expanded.push(t.reshape(&shape).ok_or_else(|| OpError::Shape("stack".into()))?);
    }
    one(concat(&expanded, d)?)
}

/// `_to_copy` / `to.dtype`: a copy, converted when a dtype is given. Device and layout are
/// ignored: the interpreter has one device.
pub fn to_copy(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    cast_to(cx, "self", cx.opt_dtype("dtype")?)
}

/// `self.type_as(other)`: `self` in `other`'s dtype (ATen's `self.to(other.options())`).
pub fn type_as(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let want = match cx.complex_or_real("other")? {
        Ok(c) => c.dtype,
        Err(t) => t.dtype(),
    };
    cast_to(cx, "self", Some(want))
}

/// Argument `arg` cast to `want` (`None`: a copy). Complex values live between nodes
/// (`crate::exec::complex`): a real tensor cast to a complex dtype (`fft_fftn` of a real input
/// traces to `_to_copy(x, complex64)` + `_fft_c2c`), or a complex one to another complex dtype.
fn cast_to(cx: &OpCx, arg: &str, want: Option<DType>) -> OpResult<Vec<RtValue>> {
    use crate::exec::complex::ComplexTensor;
    match (cx.complex_or_real(arg)?, want) {
        (Err(t), Some(d)) if ComplexTensor::is_complex(d) => {
            Ok(vec![RtValue::Complex(ComplexTensor::from_real(t, d).ok_or(OpError::DType(d))?)])
        }
        (Ok(c), Some(d)) => Ok(vec![RtValue::Complex(c.cast(d).ok_or(OpError::DType(d))?)]),
        (Ok(c), None) => Ok(vec![RtValue::Complex(c.clone())]),
        (Err(t), Some(d)) => one(dtype_ok(t.cast(d))?),
        (Err(t), None) => one(t.clone()),
    }
}

/// `prims.convert_element_type(a, dtype)`: Inductor's spelling of a dtype cast.
pub fn convert_element_type(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let d = cx.opt_dtype("dtype")?.ok_or_else(|| OpError::Arg { arg: "dtype".into(), message: "missing".into() })?;
    cast_to(cx, "a", Some(d))
}

/// `prims.iota(length, start, step, dtype)`: `start + i * step` for i in 0..length — what
/// Inductor's table turns `arange` into.
pub fn iota(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let n = cx.int("length")?;
    if n < 0 {
        return shape_err(format!("iota of negative length {n}"));
    }
    let (start, step) = (cx.int_or("start", 0)?, cx.int_or("step", 1)?);
    let t = Tensor::from_array(ArrayD::from_shape_fn(IxDyn(&[n as usize]), |i| start + step * i[0] as i64));
    one(match cx.opt_dtype("dtype")? {
        Some(d) => dtype_ok(t.cast(d))?,
        None => t,
    })
}

pub(crate) fn shape_of(cx: &OpCx, name: &str) -> OpResult<Vec<usize>> {
    let sizes = cx.ints(name)?;
    if let Some(s) = sizes.iter().find(|&&s| s < 0) {
        return shape_err(format!("negative size {s} in {sizes:?}"));
    }
    Ok(sizes.iter().map(|&s| s as usize).collect())
}

/// The dtype a factory infers from a fill value: bool, int64, or the default float32.
pub(crate) fn scalar_dtype(s: Scalar) -> DType {
    match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::I64,
        Scalar::Float(_) => DType::F32,
    }
}

pub(crate) fn filled(dtype: DType, shape: &[usize], v: Scalar) -> OpResult<Tensor> {
    match (v, dtype) {
        // Integers go through i64: through f64 an int64 above 2^53 would round, and a negative
        // value would saturate where PyTorch's fill wraps (uint8 -5 is 251).
        (Scalar::Int(i), d) if !d.is_floating() && d != DType::Bool => dtype_ok(Tensor::from_array(ArrayD::from_elem(IxDyn(shape), i)).cast(d)),
        _ => dtype_ok(Tensor::full(dtype, shape, v.to_f64())),
    }
}

pub fn arange(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let end = cx.opt_scalar("end")?.ok_or_else(|| OpError::Arg { arg: "end".into(), message: "missing".into() })?;
    let start = cx.scalar_or("start", Scalar::Int(0))?;
    let step = cx.scalar_or("step", Scalar::Int(1))?;
    let all_int = [start, end, step].iter().all(|s| matches!(s, Scalar::Int(_)));
    let dtype = cx.opt_dtype("dtype")?.unwrap_or(if all_int { DType::I64 } else { DType::F32 });
    let (a, b, s) = (start.to_f64(), end.to_f64(), step.to_f64());
    if s == 0.0 || !((b - a) / s).is_finite() {
        return shape_err(format!("arange({a}, {b}, {s}) has no finite length"));
    }
    let n = ((b - a) / s).ceil().max(0.0) as usize;
    if !dtype.is_floating() && !matches!(dtype, DType::Complex32 | DType::Complex64 | DType::Complex128) {
        // An integer arange computes its values from its scalars truncated to int64:
        // arange(5, 0, -0.5) in int64 is ten 5s. Its length depends on the torch version
        // (torch 2.15 takes it from the scalars as given, arange(-0.9, 2.1, 2.0) is [0, 2];
        // earlier int64 ones from the truncations, [0]); the exported graph records the length
        // its torch computed, so a static one is taken from there.
        let (ai, si) = (start_int(start), start_int(step));
        let n = recorded_length(cx).unwrap_or(n);
        let t = Tensor::from_array(ArrayD::from_shape_fn(IxDyn(&[n]), |i| ai + si * i[0] as i64));
        return one(dtype_ok(t.cast(dtype))?);
    }
    let t = Tensor::from_array(ArrayD::from_shape_fn(IxDyn(&[n]), |i| a + s * i[0] as f64));
    one(dtype_ok(t.cast(dtype))?)
}

/// The static length the graph's metadata records for this node's 1-D output, if any.
fn recorded_length(cx: &OpCx) -> Option<usize> {
    let out = *cx.node.outputs.first()?;
    let sizes = &cx.graph?.value(out).tensor()?.sizes;
    match sizes.as_slice() {
        [n] => n.as_int().and_then(|n| usize::try_from(n).ok()),
        _ => None,
    }
}

fn start_int(s: Scalar) -> i64 {
    match s {
        Scalar::Int(i) => i,
        other => other.to_f64() as i64,
    }
}

pub fn full(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let v = cx.opt_scalar("fill_value")?.ok_or_else(|| OpError::Arg { arg: "fill_value".into(), message: "missing".into() })?;
    let dtype = cx.opt_dtype("dtype")?.unwrap_or(scalar_dtype(v));
    one(filled(dtype, &shape_of(cx, "size")?, v)?)
}

pub fn zeros(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(DType::F32), &shape_of(cx, "size")?, Scalar::Int(0))?)
}

pub fn ones(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(DType::F32), &shape_of(cx, "size")?, Scalar::Int(1))?)
}

fn like(cx: &OpCx, v: Scalar) -> OpResult<Vec<RtValue>> {
    let t = cx.tensor("self")?;
    one(filled(cx.opt_dtype("dtype")?.unwrap_or(t.dtype()), t.shape(), v)?)
}

pub fn full_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let v = cx.opt_scalar("fill_value")?.ok_or_else(|| OpError::Arg { arg: "fill_value".into(), message: "missing".into() })?;
    like(cx, v)
}

pub fn zeros_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    like(cx, Scalar::Int(0))
}

pub fn ones_like(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    like(cx, Scalar::Int(1))
}

