//! Meta functions of the shape and layout ops: views (`view`, `permute`, `expand`, `unsqueeze`,
//! `as_strided`, ...), slicing and indexing, concatenation and padding, and `clone`'s layout rule.
//! Kept apart from `ops.rs` because their work is size/stride arithmetic, not dtype promotion;
//! `ops.rs` re-exports each one so the registry keeps naming them `crate::infer::ops::...`.

use super::ops::{one, Out};
use super::{contiguous, norm_dim, Args, InferError};
use crate::ir::{Arg, DType, TensorMeta, ValueKind};
use crate::sym::Expr;

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

pub(crate) fn split_meta(a: &Args) -> Out {
    split(a)
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
