//! Inductor's low-memory max-pool: `max_pool2d_with_indices` → `prims._low_memory_max_pool_with_offsets`
//! (the values, and each maximum's offset inside its window as int8) and, where the indices are
//! read, `prims._low_memory_max_pool_offsets_to_indices` (offsets back to flat input indices).
//! Inductor keeps windows of more than 25 elements whole (`should_fallback_max_pool_with_indices`).
//! `avg_pool1d` and `max_pool1d` are the 2-D pools of the input unsqueezed (ATen's composite bodies).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

/// Windows above this many elements stay `max_pool2d_with_indices` (Inductor's fallback).
const MAX_WINDOW: i64 = 25;

/// An int-list argument padded to two entries as Inductor's `pad_listlike` does.
fn pair(rw: &Rw, name: &str, default: &[i64]) -> Result<Vec<i64>, RuleError> {
    let v = rw.ints(name)?.filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_vec());
    match v.as_slice() {
        [a] => Ok(vec![*a, *a]),
        [a, b] => Ok(vec![*a, *b]),
        _ => Err(RuleError::Arg { name: name.into(), message: format!("expected 1 or 2 ints, got {v:?}") }),
    }
}

pub fn max_pool2d_with_indices(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let kernel = pair(rw, "kernel_size", &[])?;
    let stride = pair(rw, "stride", &kernel)?;
    let padding = pair(rw, "padding", &[0])?;
    let dilation = pair(rw, "dilation", &[1])?;
    let ceil_mode = rw.bool("ceil_mode", false)?;
    let window = |x: ValueId| {
        vec![
            ("self", A::T(x)),
            ("kernel_size", A::Is(kernel.clone())),
            ("stride", A::Is(stride.clone())),
            ("padding", A::Is(padding.clone())),
            ("dilation", A::Is(dilation.clone())),
            ("ceil_mode", A::B(ceil_mode)),
        ]
    };
    if kernel.iter().product::<i64>() > MAX_WINDOW {
        return Err(RuleError::Declined);
    }
    let outs = rw.op_n("prims._low_memory_max_pool_with_offsets.default", window(x))?;
    let (vals, offsets) = match outs.as_slice() {
        [v, o] => (*v, *o),
        _ => return Err(RuleError::Unsupported("_low_memory_max_pool_with_offsets gave no offsets".into())),
    };
    let rank = rw.rank(x)?;
    if rank < 3 {
        return Err(RuleError::Arg { name: "self".into(), message: format!("2-D pooling of a rank-{rank} tensor") });
    }
    let input_size: Vec<SymIntArg> = (rank - 2..rank).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
    let indices = rw.op(
        "prims._low_memory_max_pool_offsets_to_indices.default",
        vec![
            ("self", A::T(offsets)),
            ("kernel_size", A::Is(kernel.clone())),
            ("input_size", A::Sizes(input_size)),
            ("stride", A::Is(stride.clone())),
            ("padding", A::Is(padding.clone())),
            ("dilation", A::Is(dilation.clone())),
        ],
    )?;
    Ok(vec![vals, indices])
}

/// A 1-D pooling argument: one int (`stride` empty or left out means the kernel's).
fn one(rw: &Rw, name: &str, default: Option<i64>) -> Result<i64, RuleError> {
    match (rw.ints(name)?.filter(|v| !v.is_empty()).as_deref(), default) {
        (Some([a]), _) => Ok(*a),
        (None, Some(d)) => Ok(d),
        (v, _) => Err(RuleError::Arg { name: name.into(), message: format!("expected one int, got {v:?}") }),
    }
}

/// `avg_pool1d` as ATen's composite body (`aten/src/ATen/native/Pooling.cpp`): the 2-D pool of
/// the input unsqueezed at -2, with a window of height 1, squeezed back. SEW's and Qwen2-Audio's
/// `AvgPool1d` became `avg_pool2d` in both tables of both torches (corpus, issue 25).
pub fn avg_pool1d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let kernel = one(rw, "kernel_size", None)?;
    let stride = one(rw, "stride", Some(kernel))?;
    let padding = one(rw, "padding", Some(0))?;
    let ceil_mode = rw.bool("ceil_mode", false)?;
    let count_include_pad = rw.bool("count_include_pad", true)?;
    let u = rw.op("aten.unsqueeze.default", vec![("self", A::T(x)), ("dim", A::I(-2))])?;
    let pooled = rw.op(
        "aten.avg_pool2d.default",
        vec![
            ("self", A::T(u)),
            ("kernel_size", A::Is(vec![1, kernel])),
            ("stride", A::Is(vec![1, stride])),
            ("padding", A::Is(vec![0, padding])),
            ("ceil_mode", A::B(ceil_mode)),
            ("count_include_pad", A::B(count_include_pad)),
        ],
    )?;
    Ok(vec![rw.op("aten.squeeze.dim", vec![("self", A::T(pooled)), ("dim", A::I(-2))])?])
}

/// `max_pool1d` as ATen runs it on a traced (fake) tensor: `max_pool1d_with_indices`, whose
/// composite body is the 2-D pool of the input unsqueezed at -2 with a window of height 1,
/// squeezed back; only the values are read, so the indices' squeeze is dead code torch drops
/// (CANINE's downsampling).
pub fn max_pool1d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let kernel = one(rw, "kernel_size", None)?;
    let stride = one(rw, "stride", Some(kernel))?;
    let padding = one(rw, "padding", Some(0))?;
    let dilation = one(rw, "dilation", Some(1))?;
    let ceil_mode = rw.bool("ceil_mode", false)?;
    let u = rw.op("aten.unsqueeze.default", vec![("self", A::T(x)), ("dim", A::I(-2))])?;
    let outs = rw.op_n(
        "aten.max_pool2d_with_indices.default",
        vec![
            ("self", A::T(u)),
            ("kernel_size", A::Is(vec![1, kernel])),
            ("stride", A::Is(vec![1, stride])),
            ("padding", A::Is(vec![0, padding])),
            ("dilation", A::Is(vec![1, dilation])),
            ("ceil_mode", A::B(ceil_mode)),
        ],
    )?;
    let values = *outs.first().ok_or_else(|| RuleError::Unsupported("max_pool2d_with_indices gave no values".into()))?;
    Ok(vec![rw.op("aten.squeeze.dim", vec![("self", A::T(values)), ("dim", A::I(-2))])?])
}

/// `adaptive_avg_pool1d(x, [1])`, ATen's body: `adaptive_avg_pool2d` of the input unsqueezed at
/// -2 to `[1, 1]`, squeezed back. The 2-D rule restrides a channels-last mean (`as_strided`), a
/// branch on the layout that a trace taken on a contiguous sample cannot hold (FocalNet's and
/// Hiera's heads pool a transposed sequence). Other output sizes stay the traces' case.
pub fn adaptive_avg_pool1d(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    if one(rw, "output_size", None)? != 1 {
        return super::traced::expand(rw);
    }
    let u = rw.op("aten.unsqueeze.default", vec![("self", A::T(x)), ("dim", A::I(-2))])?;
    let pooled = rw.op("aten.adaptive_avg_pool2d.default", vec![("self", A::T(u)), ("output_size", A::Is(vec![1, 1]))])?;
    Ok(vec![rw.op("aten.squeeze.dim", vec![("self", A::T(pooled)), ("dim", A::I(-2))])?])
}
