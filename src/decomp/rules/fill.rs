//! Factories and fills: `new_zeros` → `full`, `fill` → `full_like` / `copy`, and Inductor's
//! `full_like` → `full` (what functionalized `x[...].fill_(v)` and masks built in place become).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};
use crate::sym::Expr;

/// `new_zeros(self, size)` → `full(size, 0)` with `self`'s dtype and device unless given.
pub fn new_zeros(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    super::view::new_full(rw, 0)
}

/// `fill.Scalar(self, v)` → `full_like(self, v)` (torch/_decomp's `fill_scalar`).
pub fn fill_scalar(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let v = rw.scalar("value").ok_or_else(|| RuleError::Arg { name: "value".into(), message: "expected a number".into() })?;
    Ok(vec![rw.op("aten.full_like.default", vec![("self", A::T(x)), ("fill_value", v)])?])
}

/// `fill.Tensor(self, v)` → `copy(self, v)` of a 0-dim `v` (torch/_decomp's `fill_tensor`).
pub fn fill_tensor(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, v) = (rw.t("self")?, rw.t("value")?);
    if rw.rank(v)? != 0 {
        return Err(RuleError::Arg { name: "value".into(), message: "fill takes a 0-dim tensor".into() });
    }
    Ok(vec![rw.op("aten.copy.default", vec![("self", A::T(x)), ("src", A::T(v))])?])
}

/// `lift_fresh_copy(x)` → `clone(x)`.
pub fn lift_fresh_copy(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    Ok(vec![rw.op("aten.clone.default", vec![("self", A::T(x))])?])
}

/// Whether `m`'s dims are laid out outermost first (strides non-increasing over the dims of size
/// above 1): then Inductor's physical permutation of it is the identity and `full_like` is one
/// `full`. A slice of a row-major tensor is row-major too, contiguous or not.
fn row_major(m: &crate::ir::TensorMeta) -> bool {
    if super::view::is_contiguous(m) {
        return true;
    }
    let strides: Option<Vec<i64>> =
        m.sizes.iter().zip(&m.strides).filter(|(s, _)| s.as_int() != Some(1)).map(|(_, st)| st.as_int()).collect();
    strides.is_some_and(|s| s.windows(2).all(|w| w[0] >= w[1]))
}

/// Whether `f` holds between two sizes or strides for every value their symbols can take, as
/// torch's `guard_or_false` answers (false where it cannot tell): decided on literals, else at
/// several bindings of the symbols (all at least 2, as export's dynamic dims are).
fn surely(a: &Expr, b: &Expr, f: impl Fn(i64, i64) -> bool) -> bool {
    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
        return f(x, y);
    }
    let mut symbols = a.free_symbols();
    symbols.extend(b.free_symbols());
    const VALUES: [i64; 7] = [2, 3, 5, 7, 11, 64, 1000];
    (0..VALUES.len()).all(|k| {
        let mut at = crate::sym::Bindings::new();
        for (i, s) in symbols.iter().enumerate() {
            at.set(s, VALUES[(k + 2 * i) % VALUES.len()]);
        }
        matches!((a.eval_int(&at), b.eval_int(&at)), (Ok(x), Ok(y)) if f(x, y))
    })
}

/// `compute_elementwise_output_logical_to_physical_perm(m)` of torch._prims_common for one
/// tensor: its dims from outermost to innermost in memory. Contiguous is the identity, dense
/// channels-last NHWC; otherwise torch's insertion sort, back to front, by stride (zero strides
/// never decide; equal strides put the longer dim inner), each comparison as torch's
/// `guard_or_false` makes it ([`surely`]): ProphetNet's `zeros_like` of an expanded
/// `[s43, 16, 2, s53, s53]` with strides `[s53, 0, 0, 0, 1]` is row-major.
fn physical_order(m: &crate::ir::TensorMeta) -> Vec<usize> {
    let rank = m.sizes.len();
    if rank < 2 || super::view::is_contiguous(m) {
        return (0..rank).collect();
    }
    if super::view::channels_last(m) {
        return std::iter::once(0).chain(2..rank).chain(std::iter::once(1)).collect();
    }
    let zero = Expr::int(0);
    let is_zero = |e: &Expr| surely(e, &zero, |x, _| x == 0);
    let ge = |a: &Expr, b: &Expr| is_zero(b) || (!is_zero(a) && (surely(a, b, |x, y| x >= y) || surely(a, b, |x, y| y != 0 && x % y == 0)));
    let should_swap = |a: usize, b: usize| -> i32 {
        let (sa, sb) = (&m.strides[a], &m.strides[b]);
        if is_zero(sa) || is_zero(sb) {
            return 0;
        }
        if surely(sa, sb, |x, y| x == y) {
            return if ge(&m.sizes[b], &m.sizes[a]) { 0 } else { 1 };
        }
        if ge(sb, sa) {
            -1
        } else if ge(sa, sb) {
            1
        } else {
            0
        }
    };
    let mut perm: Vec<usize> = (0..rank).rev().collect();
    for i in 1..rank {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match should_swap(perm[d0], perm[d1]) {
                1 => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                -1 => break,
                _ => {}
            }
        }
    }
    perm.reverse();
    perm
}

/// Inductor's `full_like(self, v)` in `self`'s dtype and device: under `preserve_format` a
/// `full` of the physical shape (`self`'s sizes in memory order, [`physical_order`]), permuted
/// back and cloned when that order is not the identity (`_get_shape_permutation_like`); under
/// `contiguous_format` (`zeros_like(x, memory_format=torch.contiguous_format)`, GroupViT's hard
/// assignment) `full(self.shape)`, whose `.to(memory_format)` copies nothing. Other formats
/// are kept whole.
pub fn full_like(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    let order = match rw.passthrough("memory_format")? {
        None | Some(Arg::None) => physical_order(&meta),
        Some(Arg::MemoryFormat(f)) if f.contains("preserve") => physical_order(&meta),
        Some(Arg::MemoryFormat(f)) if f.contains("contiguous") => (0..meta.sizes.len()).collect(),
        Some(_) => return Err(RuleError::Declined),
    };
    // A boolean fill (`zeros_like` of a mask is `full_like(mask, False)`) stays a bool.
    let v = match rw.passthrough("fill_value")? {
        Some(Arg::Bool(b)) => A::B(b),
        _ => rw.scalar("fill_value").ok_or_else(|| RuleError::Arg { name: "fill_value".into(), message: "expected a number".into() })?,
    };
    let dtype = match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) => d,
        _ => meta.dtype,
    };
    let sizes: Vec<SymIntArg> = order.iter().map(|&d| rw.size(x, d)).collect::<Result<_, _>>()?;
    let args = vec![
        ("size", A::Sizes(sizes)),
        ("fill_value", v),
        ("dtype", A::Raw(Arg::ScalarType(dtype))),
        ("device", A::Raw(Arg::Device(meta.device.clone()))),
        ("pin_memory", A::B(false)),
    ];
    let full = rw.op("aten.full.default", args)?;
    if order.iter().enumerate().all(|(i, &d)| i == d) {
        return Ok(vec![full]);
    }
    // `permutation[logical] = physical`: the inverse of the order.
    let mut back = vec![0i64; order.len()];
    for (p, &l) in order.iter().enumerate() {
        back[l] = p as i64;
    }
    let permuted = rw.op("aten.permute.default", vec![("self", A::T(full)), ("dims", A::Is(back))])?;
    Ok(vec![rw.op("aten.clone.default", vec![("self", A::T(permuted))])?])
}

/// The factory keywords of `self`-like ops: dtype and device as given, else `self`'s.
pub(super) fn like_kwargs(rw: &Rw, meta: &crate::ir::TensorMeta) -> Result<(crate::ir::DType, String), RuleError> {
    let dtype = match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) => d,
        _ => meta.dtype,
    };
    let device = match rw.passthrough("device")? {
        Some(Arg::Device(d)) => d,
        _ => meta.device.clone(),
    };
    Ok((dtype, device))
}

/// `new_empty(self, size)` → `empty.memory_format(size)` in `self`'s dtype and device unless
/// given (torch._refs' `new_empty`, in both tables), with every factory keyword spelled out as
/// torch's trace does. Written as a rule: the traced table's variants are keyed by which
/// keywords the call passes, and a `pin_memory=False` passed alone (HY-V4's `expand_kv`) matched
/// none of them.
pub fn new_empty(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    let size = rw.passthrough("size")?.ok_or_else(|| RuleError::Arg { name: "size".into(), message: "missing".into() })?;
    let (dtype, device) = like_kwargs(rw, &meta)?;
    let pin = match rw.passthrough("pin_memory")? {
        Some(Arg::Bool(b)) => b,
        _ => false,
    };
    let args = vec![
        ("size", A::Raw(size)),
        ("dtype", A::Raw(Arg::ScalarType(dtype))),
        ("layout", A::Raw(Arg::Layout("strided".into()))),
        ("device", A::Raw(Arg::Device(device))),
        ("pin_memory", A::B(pin)),
    ];
    Ok(vec![rw.op("aten.empty.memory_format", args)?])
}

/// Whether a `memory_format` argument asks for `self`'s layout (absent or `preserve_format`).
fn preserves_format(rw: &Rw) -> Result<bool, RuleError> {
    Ok(match rw.passthrough("memory_format")? {
        None | Some(Arg::None) => true,
        Some(Arg::MemoryFormat(f)) => f.contains("preserve"),
        Some(_) => false,
    })
}

/// `zeros(size)` → `full(size, 0)` (torch._refs: `full` of `False` for bool, else 0), in both
/// tables.
pub fn zeros(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let size = rw.passthrough("size")?.ok_or_else(|| RuleError::Arg { name: "size".into(), message: "missing".into() })?;
    let dtype = match rw.passthrough("dtype")? {
        Some(Arg::ScalarType(d)) => d,
        _ => crate::ir::DType::F32,
    };
    let zero = if dtype == crate::ir::DType::Bool { A::B(false) } else { A::I(0) };
    // torch._refs resolves the default dtype before calling `full`.
    let mut args = vec![("size", A::Raw(size)), ("fill_value", zero), ("dtype", A::Raw(Arg::ScalarType(dtype)))];
    for name in ["layout", "device", "pin_memory"] {
        if let Some(a) = rw.passthrough(name)? {
            args.push((name, A::Raw(a)));
        }
    }
    Ok(vec![rw.op("aten.full.default", args)?])
}

/// `zeros_like(self)` → `full_like(self, 0)` (torch._refs), keywords passed on; Inductor's table
/// takes that on to `full`.
pub fn zeros_like(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    filled_like(rw, 0)
}

/// `ones_like(self, ...)` → `full_like(self, 1, ...)` (`True` for a boolean tensor), as
/// `zeros_like` (Llama 4's chunked attention mask kept it whole under core).
pub fn ones_like(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    filled_like(rw, 1)
}

fn filled_like(rw: &mut Rw, value: i64) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let fill = if rw.meta(x)?.dtype == crate::ir::DType::Bool && rw.passthrough("dtype")?.is_none() { A::B(value != 0) } else { A::I(value) };
    let mut args = vec![("self", A::T(x)), ("fill_value", fill)];
    for name in ["dtype", "layout", "device", "pin_memory", "memory_format"] {
        if let Some(a) = rw.passthrough(name)? {
            args.push((name, A::Raw(a)));
        }
    }
    Ok(vec![rw.op("aten.full_like.default", args)?])
}

/// `empty_like(self)` → torch._refs': `empty_permuted(self.shape, physical order)` for the
/// default memory format, here for a row-major `self` (identity order); other layouts are kept.
pub fn empty_like(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let meta = rw.meta(x)?.clone();
    if !row_major(&meta) || !preserves_format(rw)? {
        return Err(RuleError::Declined);
    }
    let (dtype, device) = like_kwargs(rw, &meta)?;
    let rank = meta.sizes.len();
    let sizes: Vec<SymIntArg> = (0..rank).map(|d| rw.size(x, d)).collect::<Result<_, _>>()?;
    let args = vec![
        ("size", A::Sizes(sizes)),
        ("physical_layout", A::Is((0..rank as i64).collect())),
        ("dtype", A::Raw(Arg::ScalarType(dtype))),
        ("device", A::Raw(Arg::Device(device))),
        ("pin_memory", A::B(false)),
    ];
    Ok(vec![rw.op("aten.empty_permuted.default", args)?])
}

/// Inductor's `empty_permuted(size, physical_layout)` → `empty(size)` when the layout is the
/// identity; a permuted layout (an `empty` of the physical shape, permuted back) is kept.
pub fn empty_permuted(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let layout = rw.ints("physical_layout")?.unwrap_or_default();
    if layout.iter().enumerate().any(|(i, &p)| p != i as i64) {
        return Err(RuleError::Declined);
    }
    let size = rw.passthrough("size")?.ok_or_else(|| RuleError::Arg { name: "size".into(), message: "missing".into() })?;
    let mut args = vec![("size", A::Raw(size))];
    for name in ["dtype", "layout", "device", "pin_memory"] {
        if let Some(a) = rw.passthrough(name)? {
            args.push((name, A::Raw(a)));
        }
    }
    Ok(vec![rw.op("aten.empty.memory_format", args)?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DType, TensorMeta};

    fn meta(sizes: Vec<Expr>, strides: Vec<Expr>) -> TensorMeta {
        let mut m = TensorMeta::contiguous(DType::F32, sizes);
        m.strides = strides;
        m
    }

    fn ints(v: &[i64]) -> Vec<Expr> {
        v.iter().map(|&i| Expr::int(i)).collect()
    }

    /// torch's `compute_elementwise_output_logical_to_physical_perm` on the layouts the corpus
    /// meets (values from torch 2.15).
    #[test]
    fn physical_order_sorts_dims_as_torch_does() {
        // A transposed [3, 5] (strides 1, 3): dim 1 is outer.
        assert_eq!(physical_order(&meta(ints(&[3, 5]), ints(&[1, 3]))), vec![1, 0]);
        // Channels-last NCHW [2, 4, 3, 3].
        assert_eq!(physical_order(&meta(ints(&[2, 4, 3, 3]), ints(&[36, 1, 12, 4]))), vec![0, 2, 3, 1]);
        // ProphetNet's expanded [s43, 16, 2, s53, s53], strides [s53, 0, 0, 0, 1]: row-major.
        let s53 = Expr::symbol("s53");
        let sizes = vec![Expr::symbol("s43"), Expr::int(16), Expr::int(2), s53.clone(), s53.clone()];
        let strides = vec![s53, Expr::int(0), Expr::int(0), Expr::int(0), Expr::int(1)];
        assert_eq!(physical_order(&meta(sizes, strides)), vec![0, 1, 2, 3, 4]);
        // A transposed [b, 4, s] of a contiguous [b, s, 4]: [0, 2, 1].
        let s = Expr::symbol("s1");
        let sizes = vec![Expr::symbol("s0"), Expr::int(4), s.clone()];
        let strides = vec![Expr::mul(Expr::int(4), s), Expr::int(1), Expr::int(4)];
        assert_eq!(physical_order(&meta(sizes, strides)), vec![0, 2, 1]);
    }

    #[test]
    fn surely_answers_false_where_it_cannot_tell() {
        let s = Expr::symbol("s0");
        assert!(surely(&s, &Expr::int(1), |a, b| a >= b));
        assert!(!surely(&s, &Expr::symbol("s1"), |a, b| a >= b));
        assert!(!surely(&s, &Expr::int(0), |a, _| a == 0));
    }
}
