//! Shape ops and the convolution/pooling spellings that core ATen normalises:
//! `transpose` → `permute`, `reshape`/`flatten`/`unflatten` → `view` (after a `clone` when the
//! input is not contiguous), `chunk` → `split`, `conv2d` → `convolution`, ...

use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, TensorMeta, ValueId};
use crate::sym::Expr;

pub fn transpose(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let rank = rw.rank(x)?;
    let d0 = dim(rw.int("dim0", None)?, rank, "dim0")?;
    let d1 = dim(rw.int("dim1", None)?, rank, "dim1")?;
    let mut perm: Vec<i64> = (0..rank as i64).collect();
    perm.swap(d0, d1);
    Ok(vec![rw.op("aten.permute.default", vec![("self", A::T(x)), ("dims", A::Is(perm))])?])
}

pub(super) fn is_contiguous(m: &TensorMeta) -> bool {
    let want = TensorMeta::contiguous_strides(&m.sizes);
    // A size-1 dimension's stride never matters.
    m.sizes.iter().zip(m.strides.iter().zip(&want)).all(|(s, (a, b))| a == b || s.as_int() == Some(1))
}

/// Whether `view` can give `old` the shape `new` without a copy: ATen's `computeStride`, with
/// symbolic sizes compared as expressions (a product that is not provably equal is taken as
/// "not equal", which only ever chooses the copy).
fn viewable(old: &TensorMeta, new: &[Expr]) -> bool {
    let (shape, stride) = (&old.sizes, &old.strides);
    if shape.is_empty() {
        return true;
    }
    let mut view_d = new.len() as isize - 1;
    let mut chunk_base = stride[shape.len() - 1].clone();
    let (mut tensor_numel, mut view_numel) = (Expr::int(1), Expr::int(1));
    for d in (0..shape.len()).rev() {
        tensor_numel = Expr::mul(tensor_numel, shape[d].clone());
        let chunk_ends = d == 0
            || (shape[d - 1].as_int() != Some(1) && stride[d - 1] != Expr::mul(tensor_numel.clone(), chunk_base.clone()));
        if chunk_ends {
            while view_d >= 0 && (view_numel != tensor_numel || new[view_d as usize].as_int() == Some(1)) {
                view_numel = Expr::mul(view_numel, new[view_d as usize].clone());
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return false;
            }
            if d > 0 {
                chunk_base = stride[d - 1].clone();
                tensor_numel = Expr::int(1);
                view_numel = Expr::int(1);
            }
        }
    }
    view_d == -1
}

/// `view(x, sizes)`, cloning first when the view is impossible (what `reshape` does).
fn view_of(rw: &mut Rw, x: ValueId, sizes: Vec<SymIntArg>) -> Result<ValueId, RuleError> {
    let meta = rw.meta(x)?.clone();
    let new: Option<Vec<Expr>> = sizes.iter().map(|s| rw.sym_expr(s).ok().filter(|e| e.as_int() != Some(-1))).collect();
    let copy = match new {
        Some(new) => !viewable(&meta, &new),
        None => !is_contiguous(&meta), // a -1 size: decided on contiguity alone
    };
    let src = if copy { rw.op("aten.clone.default", vec![("self", A::T(x))])? } else { x };
    rw.op("aten.view.default", vec![("self", A::T(src)), ("size", A::Sizes(sizes))])
}

fn size_list(rw: &Rw, name: &str) -> Result<Vec<SymIntArg>, RuleError> {
    match rw.passthrough(name)? {
        Some(Arg::SymInts(v)) => Ok(v),
        Some(Arg::Ints(v)) => Ok(v.into_iter().map(SymIntArg::Int).collect()),
        _ => Err(RuleError::Arg { name: name.into(), message: "expected a size list".into() }),
    }
}

pub fn reshape(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = size_list(rw, "shape")?;
    Ok(vec![view_of(rw, x, sizes)?])
}

pub fn flatten(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let rank = rw.rank(x)?;
    if rank == 0 {
        return Ok(vec![view_of(rw, x, vec![SymIntArg::Int(1)])?]);
    }
    let start = dim(rw.int("start_dim", Some(0))?, rank, "start_dim")?;
    let end = dim(rw.int("end_dim", Some(-1))?, rank, "end_dim")?;
    if start > end {
        return Err(RuleError::Arg { name: "start_dim".into(), message: "after end_dim".into() });
    }
    let mut sizes = Vec::new();
    for d in 0..start {
        sizes.push(rw.size(x, d)?);
    }
    let middle: Vec<SymIntArg> = (start..=end).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
    sizes.push(rw.product(middle)?);
    for d in end + 1..rank {
        sizes.push(rw.size(x, d)?);
    }
    Ok(vec![view_of(rw, x, sizes)?])
}

pub fn unflatten(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let rank = rw.rank(x)?;
    let d = dim(rw.int("dim", None)?, rank, "dim")?;
    let parts = size_list(rw, "sizes")?;
    let mut sizes = Vec::new();
    for i in 0..rank {
        if i == d {
            sizes.extend(parts.iter().cloned());
        } else {
            sizes.push(rw.size(x, i)?);
        }
    }
    Ok(vec![view_of(rw, x, sizes)?])
}

pub fn contiguous(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    Ok(vec![rw.op("aten.clone.default", vec![("self", A::T(x))])?])
}

/// Sizes of `chunk(n, chunks)` pieces: ceil(n / chunks) each, the last smaller.
fn chunk_sizes(rw: &Rw, x: ValueId) -> Result<(Vec<i64>, i64, i64), RuleError> {
    let chunks = rw.int("chunks", None)?;
    if chunks <= 0 {
        return Err(RuleError::Arg { name: "chunks".into(), message: "must be positive".into() });
    }
    let rank = rw.rank(x)?;
    let d = rw.int("dim", Some(0))?;
    let du = dim(d, rank, "dim")?;
    let n = rw.meta(x)?.sizes[du]
        .as_int()
        .ok_or_else(|| RuleError::Unsupported("chunk along a dynamic dimension".into()))?;
    let each = (n + chunks - 1) / chunks;
    let mut sizes = Vec::new();
    let mut left = n;
    while left > 0 {
        sizes.push(each.min(left));
        left -= each;
    }
    Ok((sizes, each, d))
}

pub fn chunk_core(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let (sizes, _, d) = chunk_sizes(rw, x)?;
    rw.op_n("aten.split_with_sizes.default", vec![("self", A::T(x)), ("split_sizes", A::Is(sizes)), ("dim", A::I(d))])
}

pub fn chunk(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let (_, each, d) = chunk_sizes(rw, x)?;
    rw.op_n("aten.split.Tensor", vec![("self", A::T(x)), ("split_size", A::I(each)), ("dim", A::I(d))])
}

fn ints_or(rw: &Rw, name: &str, default: Vec<i64>) -> Result<Vec<i64>, RuleError> {
    Ok(rw.ints(name)?.filter(|v| !v.is_empty()).unwrap_or(default))
}

/// `squeeze.dim` → `squeeze.dims([dim])`: core ATen keeps only the list overload.
pub fn squeeze_dim(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let d = rw.int("dim", None)?;
    Ok(vec![rw.op("aten.squeeze.dims", vec![("self", A::T(x)), ("dim", A::Is(vec![d]))])?])
}

/// `conv1d` / `conv2d` / `conv3d` → `convolution` with every list spelled out for `n` spatial dims
/// (a one-element list repeats, as the Python-level functions do), as `run_decompositions()` emits.
fn conv_nd(rw: &mut Rw, n: usize) -> Result<Vec<ValueId>, RuleError> {
    if matches!(rw.passthrough("padding")?, Some(Arg::String(_))) {
        return Err(RuleError::Unsupported("string padding ('same'/'valid')".into()));
    }
    let list = |rw: &Rw, name: &str, default: i64| -> Result<Vec<i64>, RuleError> {
        let v = ints_or(rw, name, vec![default; n])?;
        Ok(if v.len() == 1 { vec![v[0]; n] } else { v })
    };
    let args = vec![
        ("input", A::T(rw.t("input")?)),
        ("weight", A::T(rw.t("weight")?)),
        ("bias", A::OptT(rw.opt_t("bias")?)),
        ("stride", A::Is(list(rw, "stride", 1)?)),
        ("padding", A::Is(list(rw, "padding", 0)?)),
        ("dilation", A::Is(list(rw, "dilation", 1)?)),
        ("transposed", A::B(false)),
        ("output_padding", A::Is(vec![0; n])),
        ("groups", A::I(rw.int("groups", Some(1))?)),
    ];
    Ok(vec![rw.op("aten.convolution.default", args)?])
}

pub fn conv1d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    conv_nd(rw, 1)
}

pub fn conv2d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    conv_nd(rw, 2)
}

pub fn conv3d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    conv_nd(rw, 3)
}

pub fn max_pool2d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let kernel = ints_or(rw, "kernel_size", vec![])?;
    if kernel.is_empty() {
        return Err(RuleError::Arg { name: "kernel_size".into(), message: "missing".into() });
    }
    let args = vec![
        ("self", A::T(rw.t("self")?)),
        ("kernel_size", A::Is(kernel.clone())),
        ("stride", A::Is(ints_or(rw, "stride", kernel)?)),
        ("padding", A::Is(ints_or(rw, "padding", vec![0])?)),
        ("dilation", A::Is(ints_or(rw, "dilation", vec![1])?)),
        ("ceil_mode", A::B(rw.bool("ceil_mode", false)?)),
    ];
    Ok(rw.op_n("aten.max_pool2d_with_indices.default", args)?.into_iter().take(1).collect())
}

/// Global average pooling (`output_size` all ones) is a `mean` over the spatial dims.
pub fn adaptive_avg_pool2d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let out = rw.ints("output_size")?.unwrap_or_default();
    if out.iter().any(|&o| o != 1) {
        return Err(RuleError::Unsupported(format!("adaptive_avg_pool2d to {out:?} (only global pooling decomposes)")));
    }
    Ok(vec![rw.op(
        "aten.mean.dim",
        vec![("self", A::T(x)), ("dim", A::Is(vec![-1, -2])), ("keepdim", A::B(true))],
    )?])
}

/// `arange(end)` → `arange.start_step(0, end, 1)` (core ATen spells every arange in full).
pub fn arange(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let end = rw.passthrough("end")?.ok_or_else(|| RuleError::Arg { name: "end".into(), message: "missing".into() })?;
    let mut args = vec![("start", A::I(0)), ("end", A::Raw(end)), ("step", A::I(1))];
    if let Some(d) = rw.passthrough("dtype")? {
        args.push(("dtype", A::Raw(d)));
    }
    Ok(vec![rw.op("aten.arange.start_step", args)?])
}

/// Inductor: `arange(start, end, step)` → `iota(length) * step + start`, cast to the dtype.
/// Supports literal start and step (what exported graphs carry) and a symbolic end.
pub fn arange_iota(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (start, step) = (rw.int("start", Some(0))?, rw.int("step", Some(1))?);
    if step <= 0 {
        return Err(RuleError::Unsupported(format!("arange with step {step}")));
    }
    let end = match rw.passthrough("end")? {
        Some(Arg::SymInt(s)) => s,
        Some(Arg::Int(i)) => SymIntArg::Int(i),
        _ => return Err(RuleError::Unsupported("arange with a non-integer end".into())),
    };
    let length = match (&end, start, step) {
        (SymIntArg::Int(e), _, _) => SymIntArg::Int(((e - start).max(0) + step - 1) / step),
        (_, 0, 1) => end,
        _ => return Err(RuleError::Unsupported("arange with a symbolic end and start != 0 or step != 1".into())),
    };
    let iota = rw.op(
        "prims.iota.default",
        vec![("length", A::Raw(Arg::SymInt(length))), ("start", A::I(0)), ("step", A::I(1)), ("dtype", A::Raw(Arg::ScalarType(crate::ir::DType::I64)))],
    )?;
    // Emitted even when trivial (step 1, start 0), as Inductor's table does.
    let scaled = rw.op("aten.mul.Tensor", vec![("self", A::T(iota)), ("other", A::I(step))])?;
    let mut y = rw.op("aten.add.Tensor", vec![("self", A::T(scaled)), ("other", A::I(start))])?;
    if let Some(Arg::ScalarType(d)) = rw.passthrough("dtype")? {
        if d != crate::ir::DType::I64 {
            y = rw.op("prims.convert_element_type.default", vec![("a", A::T(y)), ("dtype", A::Raw(Arg::ScalarType(d)))])?;
        }
    }
    Ok(vec![y])
}
