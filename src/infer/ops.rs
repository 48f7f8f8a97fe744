//! One meta function per op family, registered with each op in the op registry
//! (`crate::ops`, `.meta(..)`). Each returns the outputs' `ValueKind`s.

use super::{broadcast_shapes, contiguous, norm_dim, Args, InferError};
use crate::ir::{Arg, DType, TensorMeta, ValueKind};
use crate::sym::Expr;

pub(crate) type Out = Result<Vec<ValueKind>, InferError>;

pub(crate) use super::promote::lerp;
pub(crate) use super::select::{
    diagonal, diff, dot, eye, inv_ex, like_input, like_matrix, linalg_solve, scan, searchsorted, sort, stack, svdvals,
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

pub(crate) fn permute(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let dims = a.ints("dims")?.ok_or_else(|| a.err("missing `dims`"))?;
    let perm = permutation(a, &dims, x.sizes.len())?;
    let mut m = x.clone();
    m.sizes = perm.iter().map(|&d| x.sizes[d].clone()).collect();
    m.strides = perm.iter().map(|&d| x.strides[d].clone()).collect();
    one(m)
}

pub(crate) fn t(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let mut m = x.clone();
    m.sizes.reverse();
    m.strides.reverse();
    one(m)
}

pub(crate) fn transpose(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let r = x.sizes.len();
    let d0 = norm_dim(a.int("dim0", None)?, r).ok_or_else(|| a.err("dim0 out of range"))?;
    let d1 = norm_dim(a.int("dim1", None)?, r).ok_or_else(|| a.err("dim1 out of range"))?;
    let mut m = x.clone();
    m.sizes.swap(d0, d1);
    m.strides.swap(d0, d1);
    one(m)
}

pub(crate) fn view(a: &Args) -> Out {
    let t = a.target;
    let x = a.tensor("self")?;
    let name = if a.get("size").is_some() { "size" } else { "shape" };
    let sizes = resolve_minus_one(a, x, a.sym_sizes(name)?)?;
    let mut m = contiguous(x, x.dtype, sizes);
    // A view keeps the strides its input's layout gives it (reshape copies otherwise).
    if t == "aten.view.default" {
        if let Some(strides) = super::view_strides(x, &m.sizes) {
            m.strides = strides;
            m.storage_offset = x.storage_offset.clone();
        }
    }
    one(m)
}

pub(crate) fn expand(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let sizes = a.sym_sizes("size")?;
    if sizes.len() < x.sizes.len() {
        return Err(a.err("expand to fewer dimensions"));
    }
    let lead = sizes.len() - x.sizes.len();
    let mut m = x.clone();
    m.strides = (0..sizes.len())
        .map(|i| {
            if i < lead || (x.sizes[i - lead].as_int() == Some(1) && sizes[i].as_int() != Some(1)) {
                Expr::int(0)
            } else {
                x.strides[i - lead].clone()
            }
        })
        .collect();
    m.sizes = sizes
        .into_iter()
        .enumerate()
        .map(|(i, s)| if s.as_int() == Some(-1) { x.sizes[i - lead].clone() } else { s })
        .collect();
    one(m)
}

pub(crate) fn squeeze_dim(a: &Args) -> Out {
    // Only dims of static size 1 go: a symbolic size is >= 2 under its range (0/1 specialised).
    let x = a.tensor("self")?;
    let rank = x.sizes.len();
    let dims = match a.ints("dim")? {
        Some(d) => d.iter().map(|d| norm_dim(*d, rank.max(1)).ok_or_else(|| a.err("dim out of range"))).collect::<Result<Vec<_>, _>>()?,
        None => (0..rank).collect(),
    };
    let kept: Vec<usize> = (0..rank).filter(|i| !(dims.contains(i) && x.sizes[*i].as_int() == Some(1))).collect();
    let mut m = contiguous(x, x.dtype, kept.iter().map(|i| x.sizes[*i].clone()).collect());
    // A view: the kept dims keep their strides (`unbind`'s pieces of a permuted `qkv` are not
    // contiguous, and whether a later `reshape` copies depends on it).
    if x.strides.len() == rank {
        m.strides = kept.iter().map(|i| x.strides[*i].clone()).collect();
        m.storage_offset = x.storage_offset.clone();
    }
    one(m)
}

pub(crate) fn sdpa_flash_cpu(a: &Args) -> Out {
    // Output [B, H, L, Ev] laid out as [B, L, H, Ev] contiguous, as the CPU kernel's meta
    // function allocates it (what export records); logsumexp [B, H, L] in the kernel's
    // accumulation type: float64 for float64 inputs, float32 otherwise.
    let q = a.tensor("query")?;
    let v = a.tensor("value")?;
    if q.sizes.len() != 4 || v.sizes.len() != 4 {
        return Err(a.err("expects 4-D query, key and value"));
    }
    let (b, h, l, e) = (q.sizes[0].clone(), q.sizes[1].clone(), q.sizes[2].clone(), v.sizes[3].clone());
    let mut out = contiguous(q, q.dtype, vec![b.clone(), h.clone(), l.clone(), e.clone()]);
    let he = Expr::mul(h.clone(), e.clone());
    out.strides = vec![Expr::mul(l.clone(), he.clone()), e, he, Expr::int(1)];
    let lse = contiguous(q, if q.dtype == DType::F64 { DType::F64 } else { DType::F32 }, vec![b, h, l]);
    Ok(vec![ValueKind::Tensor(out), ValueKind::Tensor(lse)])
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

/// `unsqueeze` is a view (ATen's `inferUnsqueezeGeometry`): the input's strides, and for the new
/// dim `size(d) * stride(d)` of the dim it goes before (1 at the end). A channels-last
/// `adaptive_avg_pool1d` input (FocalNet) read as contiguous here, so its `as_strided` went missing.
pub(crate) fn unsqueeze(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let d = norm_dim(a.int("dim", None)?, x.sizes.len() + 1).ok_or_else(|| a.err("dim out of range"))?;
    if x.strides.len() != x.sizes.len() {
        let mut sizes = x.sizes.clone();
        sizes.insert(d, Expr::int(1));
        return one(contiguous(x, x.dtype, sizes));
    }
    let mut m = x.clone();
    let stride = match (x.sizes.get(d), x.strides.get(d)) {
        (Some(s), Some(t)) => Expr::mul(s.clone(), t.clone()),
        _ => Expr::int(1),
    };
    m.sizes.insert(d, Expr::int(1));
    m.strides.insert(d, stride);
    one(m)
}

pub(crate) fn mm(a: &Args) -> Out {
    let t = a.target;
    let (m1, m2) = if t == "aten.mm.default" { ("self", "mat2") } else { ("mat1", "mat2") };
    let x = a.tensor(m1)?;
    let w = a.tensor(m2)?;
    if x.sizes.len() != 2 || w.sizes.len() != 2 {
        return Err(a.err("expects 2-D matrices"));
    }
    one(contiguous(x, x.dtype, vec![x.sizes[0].clone(), w.sizes[1].clone()]))
}

/// `aten._grouped_mm` and transformers' `grouped_mm_fallback` (input, weight, offs): 2-D × 3-D
/// with offs is rows × N; 3-D × 2-D is M × columns; 2-D × 2-D is groups × M × N; 3-D × 3-D a
/// batched product (`crate::exec::ops::grouped`). The result has the first operand's dtype.
pub(crate) fn grouped_mm(a: &Args) -> Out {
    let (x, w) = if a.get("input").is_some() { (a.tensor("input")?, a.tensor("weight")?) } else { (a.tensor("self")?, a.tensor("mat2")?) };
    let groups = || -> Result<Expr, InferError> {
        let o = a.tensor("offs")?;
        o.sizes.first().cloned().ok_or_else(|| a.err("offs must be 1-D"))
    };
    let sizes = match (x.sizes.len(), w.sizes.len()) {
        (2, 3) => vec![x.sizes[0].clone(), w.sizes[2].clone()],
        (3, 2) => vec![x.sizes[1].clone(), w.sizes[1].clone()],
        (2, 2) => vec![groups()?, x.sizes[0].clone(), w.sizes[1].clone()],
        (3, 3) => vec![x.sizes[0].clone(), x.sizes[1].clone(), w.sizes[2].clone()],
        (rx, rw) => return Err(a.err(format!("a grouped product of a {rx}-D and a {rw}-D operand is not defined"))),
    };
    let dtype = match a.get("out_dtype") {
        Some(Arg::ScalarType(d)) => *d,
        _ => x.dtype,
    };
    one(contiguous(x, dtype, sizes))
}

pub(crate) fn matmul(a: &Args) -> Out {
    let (x, w) = (a.tensor("self")?, a.tensor("other")?);
    let (rx, rw) = (x.sizes.len(), w.sizes.len());
    if rx < 2 || rw < 2 {
        return Err(a.err("matmul here takes operands of rank >= 2"));
    }
    let mut sizes = broadcast_shapes(&x.sizes[..rx - 2], &w.sizes[..rw - 2]).map_err(|m| a.err(m))?;
    sizes.extend([x.sizes[rx - 2].clone(), w.sizes[rw - 1].clone()]);
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn bmm(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let w = a.tensor("mat2")?;
    if x.sizes.len() != 3 || w.sizes.len() != 3 {
        return Err(a.err("expects 3-D batches"));
    }
    one(contiguous(x, x.dtype, vec![x.sizes[0].clone(), x.sizes[1].clone(), w.sizes[2].clone()]))
}

pub(crate) fn split_meta(a: &Args) -> Out {
    split(a)
}

pub(crate) fn native_layer_norm(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let stat = row_stat_sizes(a, x)?;
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, stat.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, stat)),
    ])
}

pub(crate) fn fused_rms_norm(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let stat = row_stat_sizes(a, x)?;
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype.opmath(), stat)),
    ])
}

pub(crate) fn batch_norm_no_training(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let c = vec![Expr::int(0)];
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, x.sizes.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, c.clone())),
        ValueKind::Tensor(contiguous(x, x.dtype, c)),
    ])
}

pub(crate) fn convolution(a: &Args) -> Out {
    conv(a)
}

pub(crate) fn max_pool2d_values(a: &Args) -> Out {
    Ok(max_pool(a)?.into_iter().take(1).collect())
}

/// `repeat(self, repeats)`: the input's sizes, padded with leading 1s to the length of
/// `repeats`, each times its repeat (`tile` becomes it).
pub(crate) fn repeat(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let reps = a.sym_sizes("repeats")?;
    let lead = reps.len().checked_sub(x.sizes.len()).ok_or_else(|| a.err("fewer repeats than the input has dims"))?;
    let padded = std::iter::repeat_n(Expr::int(1), lead).chain(x.sizes.iter().cloned());
    let sizes = padded.zip(reps).map(|(s, r)| Expr::mul(s, r)).collect();
    one(contiguous(x, x.dtype, sizes))
}

/// `avg_pool2d`: a max-pool's window arithmetic without dilation (`avg_pool1d` becomes it).
pub(crate) fn avg_pool2d(a: &Args) -> Out {
    max_pool2d_values(a)
}

pub(crate) fn adaptive_avg_pool2d(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let out = a.ints("output_size")?.ok_or_else(|| a.err("missing output_size"))?;
    let lead = x.sizes.len().checked_sub(out.len()).ok_or_else(|| a.err("output_size longer than the input"))?;
    let mut sizes = x.sizes[..lead].to_vec();
    sizes.extend(out.iter().map(|&o| Expr::int(o)));
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn linear(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let w = a.tensor("weight")?;
    let mut sizes = x.sizes.clone();
    let last = sizes.last_mut().ok_or_else(|| a.err("input of rank 0"))?;
    *last = w.sizes.first().cloned().ok_or_else(|| a.err("weight of rank 0"))?;
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn composite_norm(a: &Args) -> Out {
    let x = a.tensor("input")?;
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

pub(crate) fn sdpa(a: &Args) -> Out {
    let q = a.tensor("query")?;
    let v = a.tensor("value")?;
    let mut sizes = q.sizes.clone();
    let last = sizes.last_mut().ok_or_else(|| a.err("query of rank 0"))?;
    *last = v.sizes.last().cloned().ok_or_else(|| a.err("value of rank 0"))?;
    one(contiguous(q, q.dtype, sizes))
}

pub(crate) fn flatten(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let r = x.sizes.len();
    if r == 0 {
        return one(contiguous(x, x.dtype, vec![Expr::int(1)]));
    }
    let start = norm_dim(a.int("start_dim", Some(0))?, r).ok_or_else(|| a.err("start_dim out of range"))?;
    let end = norm_dim(a.int("end_dim", Some(-1))?, r).ok_or_else(|| a.err("end_dim out of range"))?;
    if start > end {
        return Err(a.err("start_dim after end_dim"));
    }
    let mut sizes = x.sizes[..start].to_vec();
    sizes.push(x.sizes[start..=end].iter().fold(Expr::int(1), |acc, s| Expr::mul(acc, s.clone())));
    sizes.extend(x.sizes[end + 1..].iter().cloned());
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn unflatten(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let d = norm_dim(a.int("dim", None)?, x.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    let parts = a.sym_sizes("sizes")?;
    let mut sizes = x.sizes[..d].to_vec();
    sizes.extend(parts);
    sizes.extend(x.sizes[d + 1..].iter().cloned());
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn chunk(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let chunks = a.int("chunks", None)?;
    let d = norm_dim(a.int("dim", Some(0))?, x.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    let n = x.sizes[d].as_int().ok_or_else(|| a.err("chunk along a dynamic dimension"))?;
    if chunks <= 0 {
        return Err(a.err("chunks must be positive"));
    }
    let each = (n + chunks - 1) / chunks;
    let mut out = Vec::new();
    let mut left = n;
    while left > 0 {
        let mut m = x.clone();
        m.sizes[d] = Expr::int(each.min(left));
        out.push(ValueKind::Tensor(m));
        left -= each;
    }
    Ok(out)
}

pub(crate) fn slice_tensor(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let d = norm_dim(a.int("dim", Some(0))?, x.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    let step = a.int("step", Some(1))?;
    if step <= 0 {
        return Err(a.err("step must be positive"));
    }
    let (start, len) = slice_extent(a, &x.sizes[d], step)?;
    let mut m = x.clone();
    m.storage_offset = Expr::add(x.storage_offset.clone(), Expr::mul(start, x.strides[d].clone()));
    m.sizes[d] = len;
    m.strides[d] = Expr::mul(x.strides[d].clone(), Expr::int(step));
    one(m)
}

pub(crate) fn select_int(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let d = norm_dim(a.int("dim", None)?, x.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    let i = a.int("index", None)?;
    let i = match (i, x.sizes[d].as_int()) {
        (i, _) if i >= 0 => Expr::int(i),
        (i, Some(n)) if i + n >= 0 => Expr::int(i + n),
        (i, None) => Expr::add(x.sizes[d].clone(), Expr::int(i)),
        _ => return Err(a.err("index out of range")),
    };
    let mut m = x.clone();
    m.storage_offset = Expr::add(x.storage_offset.clone(), Expr::mul(i, x.strides[d].clone()));
    m.sizes.remove(d);
    m.strides.remove(d);
    one(m)
}

pub(crate) fn prims_low_memory_max_pool_with_offsets(a: &Args) -> Out {
    let mut outs = max_pool(a)?;
    if let Some(ValueKind::Tensor(m)) = outs.get_mut(1) {
        m.dtype = DType::I8;
    }
    Ok(outs)
}

pub(crate) fn prims_low_memory_max_pool_offsets_to_indices(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, DType::I64, x.sizes.clone()))
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

pub(crate) fn cat(a: &Args) -> Out {
    let ids = match a.get("tensors") {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(a.err("expected a non-empty tensor list `tensors`")),
    };
    let metas = ids
        .iter()
        .map(|v| a.graph.value(*v).tensor().ok_or_else(|| a.err("`tensors` holds a non-tensor")))
        .collect::<Result<Vec<_>, _>>()?;
    // Legacy 1-D empty tensors join anything.
    let joined: Vec<&TensorMeta> = metas.iter().copied().filter(|m| !(m.sizes.len() == 1 && m.sizes[0].as_int() == Some(0))).collect();
    let first = joined.first().copied().unwrap_or(metas[0]);
    let d = norm_dim(a.int("dim", Some(0))?, first.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    let mut sizes = first.sizes.clone();
    sizes[d] = joined.iter().skip(1).fold(first.sizes[d].clone(), |acc, m| Expr::add(acc, m.sizes[d].clone()));
    one(contiguous(first, first.dtype, sizes))
}

pub(crate) fn clone(a: &Args) -> Out {
    // preserve_format (the default) keeps a dense, non-overlapping layout; anything else
    // (and `contiguous_format`) is row-major.
    let x = a.tensor("self")?;
    let preserve = !matches!(a.get("memory_format"), Some(Arg::MemoryFormat(f)) if f != "preserve_format");
    let mut m = contiguous(x, x.dtype, x.sizes.clone());
    if preserve && dense(x) {
        m.strides = x.strides.clone();
    }
    one(m)
}

pub(crate) fn constant_pad_nd(a: &Args) -> Out {
    let x = a.tensor("self")?;
    // Pad amounts may be SymInts (a pad to a multiple of a dynamic length).
    let pads = a.sym_sizes("pad")?;
    if pads.len() % 2 != 0 || pads.len() / 2 > x.sizes.len() {
        return Err(a.err(format!("pad of {} amounts for a rank-{} tensor", pads.len(), x.sizes.len())));
    }
    let mut sizes = x.sizes.clone();
    for (k, pair) in pads.chunks(2).enumerate() {
        let d = x.sizes.len() - 1 - k;
        sizes[d] = Expr::add(sizes[d].clone(), Expr::add(pair[0].clone(), pair[1].clone()));
    }
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn index_select(a: &Args) -> Out {
    let (x, i) = (a.tensor("self")?, a.tensor("index")?);
    let d = norm_dim(a.int("dim", None)?, x.sizes.len()).ok_or_else(|| a.err("dim out of range"))?;
    let mut sizes = x.sizes.clone();
    if !sizes.is_empty() {
        sizes[d] = i.sizes.first().cloned().unwrap_or(Expr::int(1));
    }
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn index_tensor(a: &Args) -> Out {
    // Integer index tensors broadcast together; their shape replaces the indexed dims where those
    // are adjacent, else leads the result (NumPy's advanced-indexing rule, as ATen's `index`).
    let x = a.tensor("self")?;
    let ids = match a.get("indices") {
        Some(Arg::OptionalTensors(v)) => v.clone(),
        Some(Arg::Tensors(v)) => v.iter().map(|t| Some(*t)).collect(),
        _ => return Err(a.err("expected `indices`")),
    };
    let given: Vec<(usize, crate::ir::ValueId)> = ids.iter().enumerate().filter_map(|(d, v)| v.map(|v| (d, v))).collect();
    let (Some(&(first, _)), Some(&(last, _))) = (given.first(), given.last()) else { return Err(a.err("no index tensor")) };
    if last >= x.sizes.len() {
        return Err(a.err("more indices than dims"));
    }
    let mut shape: Vec<Expr> = Vec::new();
    for (_, i) in &given {
        let im = a.graph.value(*i).tensor().ok_or_else(|| a.err("index is not a tensor"))?;
        if im.dtype == DType::Bool {
            return Err(a.err("a boolean mask index"));
        }
        shape = super::broadcast::broadcast_shapes(&shape, &im.sizes).map_err(|e| a.err(format!("index tensors do not broadcast: {e}")))?;
    }
    let adjacent = last + 1 - first == given.len();
    let rest = |r: std::ops::Range<usize>| x.sizes[r].iter().cloned();
    let sizes: Vec<Expr> = if adjacent {
        rest(0..first).chain(shape).chain(rest(last + 1..x.sizes.len())).collect()
    } else {
        let indexed: Vec<usize> = given.iter().map(|(d, _)| *d).collect();
        shape.into_iter().chain(x.sizes.iter().enumerate().filter(|(d, _)| !indexed.contains(d)).map(|(_, e)| e.clone())).collect()
    };
    one(contiguous(x, x.dtype, sizes))
}

pub(crate) fn as_strided(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let mut m = contiguous(x, x.dtype, a.sym_sizes("size")?);
    m.strides = a.sym_sizes("stride")?;
    if m.strides.len() != m.sizes.len() {
        return Err(a.err("`size` and `stride` differ in length"));
    }
    m.storage_offset = match a.get("storage_offset") {
        None | Some(Arg::None) => x.storage_offset.clone(),
        _ => a.sym_int("storage_offset")?,
    };
    one(m)
}

pub(crate) fn slice_scatter(a: &Args) -> Out {
    let x = a.tensor("self")?;
    one(contiguous(x, x.dtype, x.sizes.clone()))
}

pub(crate) fn max_pool2d_with_indices(a: &Args) -> Out {
    max_pool(a)
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


/// `slice`'s clamped start and length along a dim of size `n` (static, or symbolic with bounds
/// that need no clamping: `start >= 0` and `end` past the end).
fn slice_extent(a: &Args, n: &Expr, step: i64) -> Result<(Expr, Expr), InferError> {
    let start = a.int("start", Some(0))?;
    let end = a.int("end", Some(i64::MAX))?;
    let ceil_div = |len: Expr| Expr::floordiv(Expr::add(len, Expr::int(step - 1)), Expr::int(step));
    match n.as_int() {
        Some(n) => {
            let clamp = |i: i64| if i < 0 { (i + n).max(0) } else { i.min(n) };
            let (s, e) = (clamp(start), clamp(end));
            Ok((Expr::int(s), Expr::int(((e - s).max(0) + step - 1) / step)))
        }
        None if start >= 0 && end == i64::MAX => Ok((Expr::int(start), ceil_div(Expr::sub(n.clone(), Expr::int(start))))),
        // Bounds counted from the end (`x[:-1]`, `x[-2:]`): exact when the size covers both
        // bounds, which tracing a slice of a dynamic dim guards (as export does) and the ops
        // that slice this way require of their sample counts.
        None if end < 0 || (start < 0 && end == i64::MAX) => {
            let at = |i: i64| if i < 0 { Expr::add(n.clone(), Expr::int(i)) } else { Expr::int(i) };
            let s = at(start);
            let e = if end == i64::MAX { n.clone() } else { at(end) };
            Ok((s.clone(), ceil_div(Expr::sub(e, s))))
        }
        None => Err(a.err(format!("slice [{start}:{end}] of a dynamic dim `{n}` needs its range to clamp"))),
    }
}

/// Whether `x`'s elements fill its storage exactly once: ordered by stride, each dim's stride is
/// the product of the sizes inside it (a permuted contiguous tensor). Dims of size 1 do not count.
fn dense(x: &TensorMeta) -> bool {
    let mut dims: Vec<usize> = (0..x.sizes.len()).filter(|&d| x.sizes[d].as_int() != Some(1)).collect();
    let mut need = Expr::int(1);
    while !dims.is_empty() {
        let Some(pos) = dims.iter().position(|&d| x.strides[d] == need) else { return false };
        let d = dims.remove(pos);
        need = Expr::mul(need, x.sizes[d].clone());
    }
    true
}

fn one(m: TensorMeta) -> Out {
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

fn permutation(a: &Args, dims: &[i64], rank: usize) -> Result<Vec<usize>, InferError> {
    if dims.len() != rank {
        return Err(a.err(format!("permutation of {} dims for a rank-{rank} tensor", dims.len())));
    }
    let perm: Vec<usize> = dims
        .iter()
        .map(|&d| norm_dim(d, rank).ok_or_else(|| a.err(format!("dim {d} out of range"))))
        .collect::<Result<_, _>>()?;
    let mut seen = vec![false; rank];
    for &p in &perm {
        if std::mem::replace(&mut seen[p], true) {
            return Err(a.err("repeated dim in permutation"));
        }
    }
    Ok(perm)
}

/// `view(-1)`: the one `-1` becomes numel / product of the other sizes.
fn resolve_minus_one(a: &Args, x: &TensorMeta, sizes: Vec<Expr>) -> Result<Vec<Expr>, InferError> {
    let minus: Vec<usize> = sizes.iter().enumerate().filter(|(_, s)| s.as_int() == Some(-1)).map(|(i, _)| i).collect();
    match minus.as_slice() {
        [] => Ok(sizes),
        [_] => Ok(super::resolve_minus_one(x, sizes).expect("one -1")),
        _ => Err(a.err("more than one -1 in a view size")),
    }
}

/// The shape of a per-row statistic of a norm over the trailing `normalized_shape` dims: those
/// dims kept as 1 (`native_layer_norm`'s mean/rstd, `_fused_rms_norm`'s rstd).
fn row_stat_sizes(a: &Args, x: &TensorMeta) -> Result<Vec<Expr>, InferError> {
    let k = a.ints("normalized_shape")?.ok_or_else(|| a.err("missing normalized_shape"))?.len();
    let r = x.sizes.len();
    Ok((0..r).map(|i| if i + k >= r { Expr::int(1) } else { x.sizes[i].clone() }).collect())
}

fn split(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let r = x.sizes.len();
    let d = norm_dim(a.int("dim", Some(0))?, r).ok_or_else(|| a.err("dim out of range"))?;
    let total = x.sizes[d]
        .as_int()
        .ok_or_else(|| a.err("splitting a dynamic dimension needs a guard this build does not model"))?;
    let pieces: Vec<i64> = if a.target == "aten.split.Tensor" {
        let size = a.int("split_size", None)?;
        if size <= 0 {
            return Err(a.err("split_size must be positive"));
        }
        let mut v = Vec::new();
        let mut left = total;
        while left > 0 {
            v.push(size.min(left));
            left -= size;
        }
        v
    } else {
        a.ints("split_sizes")?.ok_or_else(|| a.err("missing split_sizes"))?
    };
    if pieces.iter().sum::<i64>() != total {
        return Err(a.err(format!("pieces {pieces:?} do not add up to {total}")));
    }
    let mut out = Vec::new();
    let mut offset = x.storage_offset.clone();
    for p in pieces {
        let mut m = x.clone();
        m.sizes[d] = Expr::int(p);
        m.storage_offset = offset.clone();
        offset = Expr::add(offset, Expr::mul(Expr::int(p), x.strides[d].clone()));
        out.push(ValueKind::Tensor(m));
    }
    Ok(out)
}

/// `floor((n + 2p - d(k - 1) - 1) / s) + 1`, or with `ceil` when `ceil_mode`, as PyTorch sizes
/// convolution and pooling outputs.
fn window_out(n: &Expr, k: i64, s: i64, p: i64, d: i64, ceil: bool) -> Expr {
    let span = Expr::sub(Expr::add(n.clone(), Expr::int(2 * p)), Expr::int(d * (k - 1) + 1));
    let num = if ceil { Expr::add(span, Expr::int(s - 1)) } else { span };
    Expr::add(Expr::floordiv(num, Expr::int(s)), Expr::int(1))
}

fn per_dim(v: Option<Vec<i64>>, n: usize, default: i64) -> Vec<i64> {
    match v {
        Some(v) if v.len() == n => v,
        Some(v) if v.len() == 1 => vec![v[0]; n],
        _ => vec![default; n],
    }
}

fn conv(a: &Args) -> Out {
    let x = a.tensor("input")?;
    let w = a.tensor("weight")?;
    if a.bool("transposed", false)? {
        return Err(a.err("transposed convolution"));
    }
    let spatial = x.sizes.len().checked_sub(2).filter(|&n| n >= 1 && w.sizes.len() == n + 2);
    let n = spatial.ok_or_else(|| a.err("input and weight ranks do not match a convolution"))?;
    let (stride, pad, dil) = (per_dim(a.ints("stride")?, n, 1), per_dim(a.ints("padding")?, n, 0), per_dim(a.ints("dilation")?, n, 1));
    let mut sizes = vec![x.sizes[0].clone(), w.sizes[0].clone()];
    for i in 0..n {
        let k = w.sizes[i + 2].as_int().ok_or_else(|| a.err("kernel size must be static"))?;
        sizes.push(window_out(&x.sizes[i + 2], k, stride[i], pad[i], dil[i], false));
    }
    one(contiguous(x, x.dtype, sizes))
}

fn max_pool(a: &Args) -> Out {
    let x = a.tensor("self")?;
    let n = 2;
    if x.sizes.len() < n + 1 {
        return Err(a.err("max_pool2d needs at least 3 dims"));
    }
    let kernel = per_dim(a.ints("kernel_size")?, n, 1);
    let stride = match a.ints("stride")? {
        Some(v) if !v.is_empty() => per_dim(Some(v), n, 1),
        _ => kernel.clone(),
    };
    let (pad, dil) = (per_dim(a.ints("padding")?, n, 0), per_dim(a.ints("dilation")?, n, 1));
    let ceil = a.bool("ceil_mode", false)?;
    let lead = x.sizes.len() - n;
    let mut sizes = x.sizes[..lead].to_vec();
    for i in 0..n {
        sizes.push(window_out(&x.sizes[lead + i], kernel[i], stride[i], pad[i], dil[i], ceil));
    }
    Ok(vec![
        ValueKind::Tensor(contiguous(x, x.dtype, sizes.clone())),
        ValueKind::Tensor(contiguous(x, DType::I64, sizes)),
    ])
}
