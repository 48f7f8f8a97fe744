//! The `*_as` ops, which take their shape from another tensor: ATen's CompositeImplicitAutograd
//! bodies read `other.sym_sizes()` and call the sized op (`TensorShape.cpp`):
//! `reshape_as` → `reshape`, `view_as` → `view`, `expand_as` → `expand`.
//!
//! Written as rules rather than taken from the traced table (`crate::ops::composite_traces`):
//! make_fx traces `reshape_as` through `reshape`'s own branch on the input's strides and size
//! products, so a trace holds only for the ranks and layout it was made at (2.15 recorded rank 1
//! only, and LeViT and RoFormer reshape rank 3 into rank 4), while the sized op's rule here
//! (`view::view_of`) decides view or copy for any layout as ATen does. 2.11's table has no
//! `expand_as` at all (its broadcast check guarded on sizes when it was traced).

use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{SymIntArg, ValueId};

/// `other`'s sizes, as `sym_size` of its dynamic dims and literals of its static ones.
fn sizes_of_other(rw: &mut Rw) -> Result<Vec<SymIntArg>, RuleError> {
    let other = rw.t("other")?;
    (0..rw.rank(other)?).map(|d| rw.size(other, d)).collect()
}

/// `reshape_as(self, other)` → `reshape(self, other.shape)`: a `view`, after a `clone` when
/// `self`'s layout cannot be viewed so.
pub fn reshape_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = sizes_of_other(rw)?;
    Ok(vec![super::view::view_of(rw, x, sizes)?])
}

/// `view_as(self, other)` → `view(self, other.shape)`.
pub fn view_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = sizes_of_other(rw)?;
    Ok(vec![rw.op("aten.view.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])?])
}

/// `expand_as(self, other)` → `expand(self, other.shape)`.
pub fn expand_as(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let sizes = sizes_of_other(rw)?;
    Ok(vec![rw.op("aten.expand.default", vec![("self", A::T(x)), ("size", A::Sizes(sizes))])?])
}
