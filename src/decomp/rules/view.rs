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
    // A 0-dim tensor takes dims 0 and -1 (`norm_dim`) and transposes nothing: `permute(x, [])`.
    if rank > 0 {
        perm.swap(d0, d1);
    }
    Ok(vec![rw.op("aten.permute.default", vec![("self", A::T(x)), ("dims", A::Is(perm))])?])
}

pub(crate) fn is_contiguous(m: &TensorMeta) -> bool {
    let want = TensorMeta::contiguous_strides(&m.sizes);
    // A size-1 dimension's stride never matters.
    m.sizes.iter().zip(m.strides.iter().zip(&want)).all(|(s, (a, b))| s.as_int() == Some(1) || same_size(a, b))
}

/// Whether two size expressions are equal for every size their symbols can take (all at least
/// 2, as export's dynamic dims are): torch decides from the symbols' ranges that a stride
/// recorded as `Min(64, 64*s53)` is `64` (Qwen2-MoE's router input is contiguous), where the
/// expressions differ. Checked at several bindings, distinct per symbol.
pub(crate) fn same_size(a: &Expr, b: &Expr) -> bool {
    if a == b {
        return true;
    }
    let mut symbols = a.free_symbols();
    symbols.extend(b.free_symbols());
    if symbols.is_empty() {
        return false;
    }
    const VALUES: [i64; 7] = [2, 3, 5, 7, 11, 64, 1000];
    (0..VALUES.len()).all(|k| {
        let mut at = crate::sym::Bindings::new();
        for (i, s) in symbols.iter().enumerate() {
            at.set(s, VALUES[(k + 2 * i) % VALUES.len()]);
        }
        matches!((a.eval_int(&at), b.eval_int(&at)), (Ok(x), Ok(y)) if x == y)
    })
}

/// `view(x, sizes)`, cloning first when the view is impossible (what `reshape` does).
///
/// A contiguous `x` is viewed with `sizes` as given, a `-1` kept. Any other `x` goes through
/// ATen's `infer_size` first, and the view (after a copy, or not) takes the resolved sizes: the
/// `-1` becomes `numel / newsize`, and torch's trace records that arithmetic ([`super::infer_size`]).
pub(super) fn view_of(rw: &mut Rw, x: ValueId, sizes: Vec<SymIntArg>) -> Result<ValueId, RuleError> {
    let meta = rw.meta(x)?.clone();
    let sizes = if is_contiguous(&meta) { sizes } else { super::infer_size::infer_size(rw, x, sizes)? };
    let new: Option<Vec<Expr>> = sizes.iter().map(|s| rw.sym_expr(s).ok()).collect();
    // A contiguous tensor takes any shape of its size as a view, even where the sizes are
    // expressions the stride check cannot split (`L + (-L % 4)` into `[-1, 4]`, LongT5's blocks).
    let copy = !is_contiguous(&meta)
        && match new.and_then(|n| crate::infer::resolve_minus_one(&meta, n)) {
            Some(new) => crate::infer::view_strides(&meta, &new).is_none(),
            None => true,
        };
    let src = if copy { contiguous_clone(rw, x)? } else { x };
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

/// ATen's `contiguous`: the tensor itself when it already is row-major, else a row-major copy
/// (Phi-3's `transpose(1, 2).contiguous()` of CPU flash attention's output, laid out
/// `[B, L, H, E]`, copies nothing).
pub fn contiguous(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let fmt = rw.passthrough("memory_format")?;
    let row_major = matches!(&fmt, None | Some(Arg::None)) || matches!(&fmt, Some(Arg::MemoryFormat(f)) if f == "contiguous_format");
    if row_major {
        return Ok(vec![super::layout::contiguous(rw, x)?]);
    }
    Ok(vec![contiguous_clone(rw, x)?])
}

/// `clone(x, memory_format=contiguous_format)`: a row-major copy (`x.contiguous()`), where a plain
/// `clone` keeps a dense input's layout.
pub(super) fn contiguous_clone(rw: &mut Rw, x: ValueId) -> Result<ValueId, RuleError> {
    let format = A::Raw(Arg::MemoryFormat("contiguous_format".into()));
    rw.op("aten.clone.default", vec![("self", A::T(x)), ("memory_format", format)])
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

/// Dim `dim` of `x` when it is dynamic (`chunk` then follows [`super::chunk_dyn`]).
fn dynamic_chunk_dim(rw: &Rw, x: ValueId) -> Result<Option<(i64, usize)>, RuleError> {
    let chunks = rw.int("chunks", None)?;
    let du = dim(rw.int("dim", Some(0))?, rw.rank(x)?, "dim")?;
    Ok(rw.meta(x)?.sizes[du].as_int().is_none().then_some((chunks, du)))
}

pub fn chunk_core(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    if let Some((chunks, d)) = dynamic_chunk_dim(rw, x)?.filter(|(c, _)| *c > 0) {
        return super::chunk_dyn::split_with_sizes(rw, x, chunks, d);
    }
    let (sizes, _, d) = chunk_sizes(rw, x)?;
    rw.op_n("aten.split_with_sizes.default", vec![("self", A::T(x)), ("split_sizes", A::Is(sizes)), ("dim", A::I(d))])
}

pub fn chunk(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    if let Some((chunks, d)) = dynamic_chunk_dim(rw, x)?.filter(|(c, _)| *c > 0) {
        return super::chunk_dyn::split(rw, x, chunks, d);
    }
    let (_, each, d) = chunk_sizes(rw, x)?;
    rw.op_n("aten.split.Tensor", vec![("self", A::T(x)), ("split_size", A::I(each)), ("dim", A::I(d))])
}

/// `split.Tensor` as export's table has it (`torch._decomp.decompositions.split`): chunks of
/// `split_size`, the last one what remains, as `split_with_sizes`. torch guards the number of
/// chunks to an int, so a dynamic dim stays whole here; Inductor's table keeps `split` itself.
pub fn split_core(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let each = rw.int("split_size", None)?;
    let d = dim(rw.int("dim", Some(0))?, rw.rank(x)?, "dim")?;
    let n = rw.meta(x)?.sizes[d].as_int().ok_or(RuleError::Declined)?;
    if each <= 0 || n <= 0 {
        return Err(RuleError::Declined);
    }
    let chunks = (n + each - 1) / each;
    let mut sizes = vec![each; chunks as usize];
    if let Some(last) = sizes.last_mut() {
        *last = each - (each * chunks - n);
    }
    rw.op_n("aten.split_with_sizes.default", vec![("self", A::T(x)), ("split_sizes", A::Is(sizes)), ("dim", A::I(d as i64))])
}

/// `unbind` as export's table has it (`torch._refs.unbind`): `tensor_split` into one-wide
/// `slice`s, then each `squeeze`d along `dim`. The number of outputs is the size of `dim`, so it
/// must be static, as torch requires.
pub fn unbind(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let d = dim(rw.int("dim", Some(0))?, rw.rank(x)?, "dim")?;
    let n = rw.meta(x)?.sizes[d]
        .as_int()
        .ok_or_else(|| RuleError::Unsupported("unbind along a dynamic dimension".into()))?;
    let mut slices = Vec::new();
    for i in 0..n {
        let args = vec![("self", A::T(x)), ("dim", A::I(d as i64)), ("start", A::I(i)), ("end", A::I(i + 1))];
        slices.push(rw.op("aten.slice.Tensor", args)?);
    }
    slices.into_iter().map(|s| rw.op("aten.squeeze.dims", vec![("self", A::T(s)), ("dim", A::Is(vec![d as i64]))])).collect()
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

/// `conv1d` / `conv2d` → `convolution` with every list spelled out for `n` spatial dims
/// (a one-element list repeats, as the Python-level functions do), as `run_decompositions()` emits.
fn conv_nd(rw: &mut Rw, n: usize) -> Result<Vec<ValueId>, RuleError> {
    let list = |rw: &Rw, name: &str, default: i64| -> Result<Vec<i64>, RuleError> {
        let v = ints_or(rw, name, vec![default; n])?;
        Ok(if v.len() == 1 { vec![v[0]; n] } else { v })
    };
    let (stride, dilation) = (list(rw, "stride", 1)?, list(rw, "dilation", 1)?);
    let weight = rw.t("weight")?;
    // The `.padding` overloads (ATen's `_convolution_mode`): "valid" pads nothing; "same" pads
    // `dilation * (k - 1)`, the left half (rounded down) in the convolution; where the halves
    // differ, ATen first pads the input on the right by the difference (`constant_pad_nd`, last
    // dim first as `F.pad` orders it): LASR's depthwise convolution, kernel 32.
    let mut input = rw.t("input")?;
    let padding = match rw.passthrough("padding")? {
        Some(Arg::String(mode)) if mode == "valid" => vec![0; n],
        Some(Arg::String(mode)) if mode == "same" => {
            let kernel = rw.static_sizes(weight).ok_or(RuleError::Declined)?;
            if stride.iter().any(|&s| s != 1) {
                return Err(RuleError::Arg { name: "padding".into(), message: "padding='same' with a stride other than 1".into() });
            }
            let totals: Vec<i64> = (0..n).map(|d| dilation[d] * (kernel.get(d + 2).copied().unwrap_or(1) - 1)).collect();
            if totals.iter().any(|t| t % 2 != 0) {
                let mut pad = vec![0; 2 * n];
                for (d, t) in totals.iter().enumerate() {
                    pad[2 * (n - 1 - d) + 1] = t - t / 2 - t / 2;
                }
                input = rw.op("aten.constant_pad_nd.default", vec![("self", A::T(input)), ("pad", A::Is(pad)), ("value", A::I(0))])?;
            }
            totals.iter().map(|t| t / 2).collect()
        }
        Some(Arg::String(mode)) => return Err(RuleError::Arg { name: "padding".into(), message: format!("unknown mode {mode:?}") }),
        _ => list(rw, "padding", 0)?,
    };
    let args = vec![
        ("input", A::T(input)),
        ("weight", A::T(weight)),
        ("bias", A::OptT(rw.opt_t("bias")?)),
        ("stride", A::Is(stride)),
        ("padding", A::Is(padding)),
        ("dilation", A::Is(dilation)),
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

/// `where.ScalarOther(c, x, s)` → `where.self(c, x, scalar_tensor(s))` in `x`'s dtype.
pub fn where_scalar_other(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (c, x) = (rw.t("condition")?, rw.t("self")?);
    let dtype = rw.meta(x)?.dtype;
    let s = rw.scalar("other").ok_or_else(|| RuleError::Arg { name: "other".into(), message: "expected a number".into() })?;
    let s = rw.op("aten.scalar_tensor.default", vec![("s", s), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?;
    Ok(vec![rw.op("aten.where.self", vec![("condition", A::T(c)), ("self", A::T(x)), ("other", A::T(s))])?])
}

/// `where.ScalarSelf(c, s, x)` → `where.self(c, scalar_tensor(s), x)` in `x`'s dtype (Gemma-4's and
/// EmbeddingGemma's masks; the 2.15 traces hold boolean `x` only). Where the scalar would promote
/// the result (a float scalar against an integer or boolean tensor, any number against a boolean
/// one) torch casts `x` first: not written here.
pub fn where_scalar_self(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (c, x) = (rw.t("condition")?, rw.t("other")?);
    let dtype = rw.meta(x)?.dtype;
    let s = rw.scalar("self").ok_or_else(|| RuleError::Arg { name: "self".into(), message: "expected a number".into() })?;
    if dtype == crate::ir::DType::Bool || (matches!(s, A::F(_)) && !dtype.is_floating()) {
        return Err(RuleError::Declined);
    }
    let s = rw.op("aten.scalar_tensor.default", vec![("s", s), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?;
    Ok(vec![rw.op("aten.where.self", vec![("condition", A::T(c)), ("self", A::T(s)), ("other", A::T(x))])?])
}

/// `where.Scalar(c, a, b)` (two Python numbers) → `where.self(c, scalar_tensor(a), scalar_tensor(b))`
/// in the numbers' promoted dtype: the default float32 where either is a float, else int64
/// (LongT5's `torch.where(mask > 0, 0.0, -1e10)` attention bias). Booleans are not written here.
pub fn where_scalar(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let c = rw.t("condition")?;
    let (Some(a), Some(b)) = (rw.scalar("self"), rw.scalar("other")) else { return Err(RuleError::Declined) };
    let dtype = if matches!(a, A::F(_)) || matches!(b, A::F(_)) { crate::ir::DType::F32 } else { crate::ir::DType::I64 };
    let a = rw.op("aten.scalar_tensor.default", vec![("s", a), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?;
    let b = rw.op("aten.scalar_tensor.default", vec![("s", b), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?;
    Ok(vec![rw.op("aten.where.self", vec![("condition", A::T(c)), ("self", A::T(a)), ("other", A::T(b))])?])
}

/// ATen's `adaptive_avg_pool2d`: global average pooling (`output_size` all ones) is a `mean`
/// over the spatial dims, any other size the `_adaptive_avg_pool2d` kernel (core ATen, and kept
/// by Inductor, which lowers it: CSATv2's pooling to 7×7).
pub fn adaptive_avg_pool2d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let out = rw.ints("output_size")?.unwrap_or_default();
    if out.len() != 2 {
        return Err(RuleError::Arg { name: "output_size".into(), message: format!("expected 2 sizes (height, width), got {out:?}") });
    }
    if out.iter().any(|&o| o != 1) {
        return Ok(vec![rw.op("aten._adaptive_avg_pool2d.default", vec![("self", A::T(x)), ("output_size", A::Is(out))])?]);
    }
    let mean = rw.op("aten.mean.dim", vec![("self", A::T(x)), ("dim", A::Is(vec![-1, -2])), ("keepdim", A::B(true))])?;
    // ATen restrides the mean of a channels-last input to channels-last (`as_strided_`, which
    // functionalizes to `as_strided`).
    let m = rw.meta(x)?.clone();
    if !channels_last(&m) {
        return Ok(vec![mean]);
    }
    let (n, c) = (rw.size(x, 0)?, rw.size(x, 1)?);
    let one = SymIntArg::Int(1);
    let args = vec![
        ("self", A::T(mean)),
        ("size", A::Sizes(vec![n, c.clone(), one.clone(), one])),
        ("stride", A::Sizes(vec![c.clone(), SymIntArg::Int(1), c.clone(), c])),
    ];
    Ok(vec![rw.op("aten.as_strided.default", args)?])
}

/// ATen's `suggest_memory_format() == ChannelsLast` for a 4-D tensor: strides of an NHWC
/// layout seen as NCHW (`[H·W·C, 1, W·C, C]`).
pub(super) fn channels_last(m: &TensorMeta) -> bool {
    let (s, t) = (&m.sizes, &m.strides);
    if s.len() != 4 || s[1].as_int() == Some(1) {
        return false;
    }
    let wc = Expr::mul(s[3].clone(), s[1].clone());
    t[1] == Expr::int(1) && t[3] == s[1] && t[2] == wc && t[0] == Expr::mul(s[2].clone(), wc)
}

/// `__and__` / `__or__` / `__xor__` `.Tensor` → `bitwise_and` / `bitwise_or` / `bitwise_xor`
/// `.Tensor` (`&`, `|`, `^` on tensors: ATen's composite bodies), at any dtype and rank: the
/// traces of `__or__` hold equal-rank pairs only (CPM-Ant's mask `|`).
pub fn bitwise_dunder(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, y) = (rw.t("self")?, rw.t("other")?);
    let target = match rw.target() {
        "aten.__or__.Tensor" => "aten.bitwise_or.Tensor",
        "aten.__xor__.Tensor" => "aten.bitwise_xor.Tensor",
        _ => "aten.bitwise_and.Tensor",
    };
    Ok(vec![rw.op(target, vec![("self", A::T(x)), ("other", A::T(y))])?])
}

/// `new_ones` / `new_zeros` → `full(size, value)` with `self`'s dtype and device unless given.
pub(super) fn new_full(rw: &mut Rw, value: i64) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    let size = size_list(rw, "size")?;
    let (dtype, device) = super::fill::like_kwargs(rw, &meta)?;
    let args = vec![
        ("size", A::Sizes(size)),
        ("fill_value", A::I(value)),
        ("dtype", A::Raw(Arg::ScalarType(dtype))),
        ("device", A::Raw(Arg::Device(device))),
        ("pin_memory", A::B(false)),
    ];
    Ok(vec![rw.op("aten.full.default", args)?])
}

pub fn new_ones(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    new_full(rw, 1)
}

/// `to.dtype` / `to.device` / `to.dtype_layout`: nothing when neither dtype nor device changes
/// and no copy is asked for (the input itself, as PyTorch returns it), else `_to_copy`.
pub fn to(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    let dtype = match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) => Some(d),
        _ => None,
    };
    let device = match rw.passthrough("device")? {
        Some(Arg::Device(d)) => Some(d),
        _ => None,
    };
    let same_dtype = dtype.is_none_or(|d| d == meta.dtype);
    let same_device = device.as_deref().is_none_or(|d| d == meta.device);
    if same_dtype && same_device && !rw.bool("copy", false)? {
        return Ok(vec![x]);
    }
    let mut args = vec![("self", A::T(x))];
    if let Some(d) = dtype.filter(|d| *d != meta.dtype) {
        args.push(("dtype", A::Raw(Arg::ScalarType(d))));
    }
    if let Some(d) = device.filter(|d| *d != meta.device) {
        args.push(("device", A::Raw(Arg::Device(d))));
    }
    Ok(vec![rw.op("aten._to_copy.default", args)?])
}

/// `min.other` → `minimum` (the elementwise minimum of two tensors).
pub fn min_other(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, y) = (rw.t("self")?, rw.t("other")?);
    Ok(vec![rw.op("aten.minimum.default", vec![("self", A::T(x)), ("other", A::T(y))])?])
}

/// Under Inductor's table a `_to_copy` that only changes the dtype is
/// `prims.convert_element_type`.
pub fn to_copy_convert(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let device_changes = matches!(rw.passthrough("device")?, Some(Arg::Device(d)) if d != rw.meta(x)?.device);
    match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) if !device_changes => {
            Ok(vec![rw.op("prims.convert_element_type.default", vec![("a", A::T(x)), ("dtype", A::Raw(Arg::ScalarType(d)))])?])
        }
        _ => Err(RuleError::Unsupported("a _to_copy that changes the device or layout".into())),
    }
}

/// `self.type_as(other)`, ATen's composite body `self.to(other.options())` as torch traces it at
/// any rank (`assets/ops/composite-*.json.gz`): `self` itself when dtype and device agree, else
/// `_to_copy(self, dtype, layout=strided, device)`. The traces hold one rank pair each, so
/// DeBERTa-likes' `torch.tensor(k).type_as(relative_pos)` (a 0-dim int64 against a matrix)
/// matched none and stayed whole (corpus: LongT5, Pegasus-X, ProphetNet, SEW-D).
pub fn type_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let other = rw.t("other")?;
    let (dtype, device) = {
        let (m, o) = (rw.meta(x)?, rw.meta(other)?);
        if m.dtype == o.dtype && m.device == o.device {
            return Ok(vec![x]);
        }
        (o.dtype, o.device.clone())
    };
    let args = vec![
        ("self", A::T(x)),
        ("dtype", A::Raw(Arg::ScalarType(dtype))),
        ("layout", A::Raw(Arg::Layout("strided".into()))),
        ("device", A::Raw(Arg::Device(device))),
    ];
    Ok(vec![rw.op("aten._to_copy.default", args)?])
}

/// `detach(x)` → `alias(x)`: a functional graph has no autograd to detach from, and torch's
/// tables make it the plain alias (both tables).
pub fn detach(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    Ok(vec![rw.op("aten.alias.default", vec![("self", A::T(x))])?])
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
