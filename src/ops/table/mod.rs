//! The registry's entries, one file per op family, one line per op overload. A line names the
//! op's interpreter implementation (`run`), its kernel lowering (`lower`, with its fusion kind),
//! its meta function (`meta`), its decompositions (`core`, `core_only`, `inductor`), whether
//! Inductor keeps it whole (`keep`) and whether it only ever runs as an eager fallback (`eager`);
//! `super::registry` says what each means.

mod attention;
mod composite;
mod conv_pool;
mod elementwise;
mod indexing;
mod linalg;
mod loss;
mod meta;
mod movement;
mod norm;
mod numeric;
mod random;
mod reduce;
mod shape;
mod sort_scan;

use super::registry::OpDef;

/// What every family file writes its entries with.
mod prelude {
    pub(super) use super::super::registry::{op, OpDef};
    pub(super) use crate::decomp::rules as r;
    pub(super) use crate::exec::ops as x;
    pub(super) use crate::infer::ops as m;
    pub(super) use crate::lower::ops as l;
    pub(super) use crate::lower::ops::OpKind as K;
}

/// Every family, in the order `ops --markdown` and lookups see them.
pub(super) const FAMILIES: &[&[OpDef]] = &[
    shape::OPS,
    meta::OPS,
    elementwise::OPS,
    movement::OPS,
    indexing::OPS,
    sort_scan::OPS,
    reduce::OPS,
    norm::OPS,
    linalg::OPS,
    conv_pool::OPS,
    attention::OPS,
    loss::OPS,
    numeric::OPS,
    random::OPS,
    composite::OPS,
];
