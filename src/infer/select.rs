//! Meta functions of sorting, searching, gathering and scans, of `stack` and `diagonal`, and of
//! the linear-algebra ops the composite products decompose into (`eye`, `dot`, `linalg_inv`,
//! `linalg_solve`, `linalg_svdvals`).

use super::{broadcast_shapes, contiguous, norm_dim, Args, InferError};
use crate::ir::{Arg, DType, TensorMeta, ValueKind};
use crate::sym::Expr;

type Out = Result<Vec<ValueKind>, InferError>;

fn one(m: TensorMeta) -> Out {
    Ok(vec![ValueKind::Tensor(m)])
}

fn dim_arg(a: &Args, name: &str, default: Option<i64>, rank: usize) -> Result<usize, InferError> {
    let d = a.int(name, default)?;
    norm_dim(d, rank).ok_or_else(|| a.err(format!("`{name}` {d} out of range for rank {rank}")))
}

/// `sort`: the sorted values and their int64 indices, both shaped like `self`.
pub(crate) fn sort(a: &Args) -> Out {
    let x = a.tensor("self")?;
    dim_arg(a, "dim", Some(-1), x.sizes.len())?;
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, DType::I64, x.sizes.clone())),
    ])
}

/// `searchsorted(sorted_sequence, self)`: an index per value of `self`.
pub(crate) fn searchsorted(a: &Args) -> Out {
    let v = a.tensor("self")?;
    a.tensor("sorted_sequence")?;
    let dtype = if a.bool("out_int32", false)? { DType::I32 } else { DType::I64 };
    one(contiguous(v, dtype, v.sizes.clone()))
}

/// `cumsum` / `cumprod`: shaped like `self`; integers and bools accumulate in int64 unless a
/// `dtype` is given.
pub(crate) fn scan(a: &Args) -> Out {
    let x = a.tensor("self")?;
    dim_arg(a, "dim", None, x.sizes.len())?;
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ if !x.dtype.is_floating() => DType::I64,
        _ => x.dtype,
    };
    one(contiguous(x, dtype, x.sizes.clone()))
}

/// `stack(tensors, dim)`: a new dim of the list's length, the operands' dtypes promoted.
pub(crate) fn stack(a: &Args) -> Out {
    let ids = match a.get("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(a.err("expected a non-empty tensor list `tensors`")),
    };
    let mut metas = ids.iter().map(|v| a.graph.value(*v).tensor().ok_or_else(|| a.err("`tensors` holds a non-tensor")));
    let first = metas.next().ok_or_else(|| a.err("empty `tensors`"))??;
    let mut dtype = first.dtype;
    for m in metas {
        let m = m?;
        if m.sizes != first.sizes {
            return Err(a.err("stack expects tensors of one shape"));
        }
        dtype = DType::promote_types(dtype, m.dtype).ok_or_else(|| a.err(format!("no promotion of {dtype} and {}", m.dtype)))?;
    }
    let d = dim_arg(a, "dim", Some(0), first.sizes.len() + 1)?;
    let mut sizes = first.sizes.clone();
    sizes.insert(d, Expr::int(ids.len() as i64));
    one(contiguous(first, dtype, sizes))
}

/// `diagonal(self, offset, dim1, dim2)`: a view with both dims removed and the diagonal's length
/// appended. A symbolic length is known only for offset 0 on two equal sizes.
pub(crate) fn diagonal(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let rank = x.sizes.len();
    let (d1, d2) = (dim_arg(a, "dim1", Some(0), rank)?, dim_arg(a, "dim2", Some(1), rank)?);
    if d1 == d2 {
        return Err(a.err("diagonal dims must differ"));
    }
    let offset = a.int("offset", Some(0))?;
    let (n1, n2) = (&x.sizes[d1], &x.sizes[d2]);
    let len = match (n1.as_int(), n2.as_int()) {
        (Some(p), Some(q)) => Expr::int(if offset >= 0 { p.min(q - offset) } else { (p + offset).min(q) }.max(0)),
        _ if offset == 0 && n1 == n2 => n1.clone(),
        _ => return Err(a.err("the diagonal of dynamic dims needs offset 0 and equal sizes")),
    };
    let start = if offset >= 0 { Expr::mul(Expr::int(offset), x.strides[d2].clone()) } else { Expr::mul(Expr::int(-offset), x.strides[d1].clone()) };
    let mut m = x.clone();
    m.storage_offset = Expr::add(x.storage_offset.clone(), start);
    let keep = |i: &usize| *i != d1 && *i != d2;
    m.sizes = (0..rank).filter(keep).map(|i| x.sizes[i].clone()).chain([len]).collect();
    m.strides = (0..rank).filter(keep).map(|i| x.strides[i].clone()).chain([Expr::add(x.strides[d1].clone(), x.strides[d2].clone())]).collect();
    one(m)
}

/// `eye(n)` / `eye(n, m)`: a fresh matrix, float32 unless a `dtype` is given.
pub(crate) fn eye(a: &Args) -> Out {
    let n = a.sym_int("n")?;
    let m = if a.get("m").is_some() { a.sym_int("m")? } else { n.clone() };
    super::ops::factory(a, vec![n, m])
}

/// `dot` / `vdot` of two vectors: a zero-dim tensor.
pub(crate) fn dot(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, x.dtype, Vec::new()))
}

/// Ops whose output is shaped like their square input `A` (`linalg_inv`, `linalg_matrix_exp`).
pub(crate) fn like_matrix(a: &Args) -> Out {
    let x = if a.get("A").is_some() { a.tensor("A")? } else { a.tensor("self")? };
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

/// `linalg_inv_ex(A)`: the inverse, and an int32 status per matrix of the batch.
pub(crate) fn inv_ex(a: &Args) -> Out {
    let x = a.tensor("A")?;
    let batch = x.sizes[..x.sizes.len().saturating_sub(2)].to_vec();
    Ok(vec![ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())), ValueKind::Tensor(contiguous(x, DType::I32, batch))])
}

/// `empty_like` and friends: shaped like `self`, in the given `dtype` or `self`'s.
pub(crate) fn like_input(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dtype = match a.get("dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => x.dtype,
    };
    one(contiguous(x, dtype, x.sizes.clone()))
}

/// `diff(self, n, dim, prepend, append)`: `n` fewer samples along `dim` than the joined input.
pub(crate) fn diff(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let d = dim_arg(a, "dim", Some(-1), x.sizes.len())?;
    let n = a.int("n", Some(1))?;
    let mut len = x.sizes[d].clone();
    for name in ["prepend", "append"] {
        if let Some(Arg::Tensor(_)) = a.get(name) {
            len = Expr::add(len, a.tensor(name)?.sizes.get(d).cloned().ok_or_else(|| a.err(format!("`{name}` rank")))?);
        }
    }
    let len = match len.as_int() {
        Some(l) => Expr::int((l - n).max(0)),
        None => Expr::sub(len, Expr::int(n)),
    };
    let mut sizes = x.sizes.clone();
    sizes[d] = len;
    let dtype = if x.dtype == DType::Bool { DType::Bool } else { x.dtype };
    one(contiguous(x, dtype, sizes))
}

/// `linalg_solve(A, B)`: `B` is a batch of vectors when it has one dim fewer than `A`; the batch
/// dims broadcast.
pub(crate) fn linalg_solve(a: &Args) -> Out {
    let (m, b) = (a.tensor("A")?, a.tensor("B")?);
    let ra = m.sizes.len();
    if ra < 2 {
        return Err(a.err("`A` must be a batch of matrices"));
    }
    let vector = b.sizes.len() == 1 || b.sizes.len() + 1 == ra;
    let tail = if vector { 1 } else { 2 };
    let b_batch = &b.sizes[..b.sizes.len().saturating_sub(tail)];
    let mut sizes = broadcast_shapes(&m.sizes[..ra - 2], b_batch).map_err(|e| a.err(e))?;
    sizes.extend(b.sizes[b.sizes.len().saturating_sub(tail)..].iter().cloned());
    one(contiguous(m, m.dtype, sizes))
}

/// `linalg_svdvals(A)`: the batch dims and `min(m, n)` singular values.
pub(crate) fn svdvals(a: &Args) -> Out {
    let x = a.tensor("A")?;
    let r = x.sizes.len();
    if r < 2 {
        return Err(a.err("`A` must be a batch of matrices"));
    }
    let k = match (x.sizes[r - 2].as_int(), x.sizes[r - 1].as_int()) {
        (Some(p), Some(q)) => Expr::int(p.min(q)),
        _ if x.sizes[r - 2] == x.sizes[r - 1] => x.sizes[r - 1].clone(),
        _ => Expr::min(x.sizes[r - 2].clone(), x.sizes[r - 1].clone()),
    };
    let sizes = x.sizes[..r - 2].iter().cloned().chain([k]).collect();
    one(contiguous(x, x.dtype, sizes))
}
