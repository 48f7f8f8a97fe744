//! Convolutions on tiny output maps: the output channels across the work-items
//! ([`Schedule::Spread`]), the batch × pixels unrolled per work-item, the weight read from a
//! copy stored transposed.
//!
//! Why (docs/PERFORMANCE.md, "Issue 28: convolutions against torch at the corpus's own sizes"
//! and "Issue 28: tiny maps"): tv_resnet34's layer4 runs 3×3 512→512 convolutions on 2×2
//! maps (batch 3). On [`Schedule::Channels`] the column is the map's 4 pixels, a group of 4
//! work-items the OpenCL CPU runtime does not vectorize; the same 28 M multiply-adds took
//! 6.2 ms there against 0.65 ms on 16×16 maps. Here neighbouring work-items hold neighbouring
//! output channels: the weight `wᵀ[j, co]` is one contiguous vector load per step (the
//! runtime keeps the transposed copy resident, as for linear layers, `lower::gemm`), the
//! input tap one uniform scalar shared by the group, and each weight load feeds every lane's
//! multiply-add.

use super::kernel::{Access, Elem, ExprId, KExpr, Kernel, Layout, VarId};
use super::schedule::Schedule;
use crate::ir::{DType, Graph, InputKind};

/// Most output pixels (batch × map) a work-item carries as lanes: one accumulator register
/// each. A 2×2 map at batch 3 is 12. Measured on the OpenCL CPU device (docs/PERFORMANCE.md,
/// "Issue 28: tiny maps"): 48 lanes (a 4×4 map at batch 3) took 1.7 ms against 1.0 ms on the
/// blocked pixels, the accumulators no longer fitting the vector registers.
pub const MAX_LANES: u32 = 16;

/// Largest output map (pixels per image and channel) taken off the blocked-pixel schedule:
/// a 4×4 map at batch 1 (16 lanes) took 0.20–0.27 ms here against 0.32–0.34 ms blocked; larger
/// maps exceed [`MAX_LANES`] at any batch.
pub const TINY_MAP: i64 = 16;

/// Fewest output channels: the work-items of one group.
pub const MIN_CHANNELS: i64 = 64;

/// Work-items per group along the output channels: one AVX-512 vector of float32 lanes.
/// Groups of 64 measured the same within the load's noise (docs/PERFORMANCE.md).
pub const SPREAD_GROUP: u32 = 16;

/// `k` on [`Schedule::Spread`], when it is a convolution-like fold on a tiny map: elementwise
/// so far, with deep folds ([`super::wide_block::WIDE_FOLD`]) and an unmasked float32 read of
/// a weight (a parameter or constant of `graph`) `w[co, j]` at `co · cols + j`, `co` an output
/// coordinate of at least [`MIN_CHANNELS`] whose trailing map has at most [`TINY_MAP`]
/// pixels, the other output coordinates at most [`MAX_LANES`] in all (or the map's alone, the
/// leading ones then left to the grid). Anything else: `None`.
pub fn spread(graph: &Graph, k: &Kernel) -> Option<Kernel> {
    if k.schedule != Schedule::Elementwise || k.linear.is_some() || super::wide_block::fold_depth(k) < super::wide_block::WIDE_FOLD {
        return None;
    }
    let (load, coord, rows) = weight_read(graph, k)?;
    let static_extent = |d: &ExprId| match *k.expr(*d) {
        KExpr::I64(n) => Some(n),
        _ => None,
    };
    let map = k.domain[coord as usize + 1..].iter().try_fold(1i64, |acc, d| static_extent(d).map(|n| acc.saturating_mul(n)))?;
    if rows < MIN_CHANNELS || map > TINY_MAP {
        return None;
    }
    let transposed = k.rows_transposed(load, VarId(coord), rows)?;
    // Every other coordinate in lanes where they are static and few (a batch of 3 × 2×2:
    // each weight load feeds 12 lanes), else the leading ones (a dynamic batch, as the corpus
    // exports have) on the grid and only the map in lanes.
    let (outer, mut out) = match transposed.unrolled(coord, 0, MAX_LANES) {
        Some(all) => (0, all),
        None => (coord, transposed.unrolled(coord, coord, MAX_LANES)?),
    };
    let lanes = (out.stores.len() / k.stores.len().max(1)) as u32;
    out.schedule = Schedule::Spread { group: SPREAD_GROUP, coord, lanes, outer };
    Some(out)
}

/// The weight read [`spread`] rewrites: the load, the output coordinate that picks its row,
/// and its row count.
fn weight_read(graph: &Graph, k: &Kernel) -> Option<(ExprId, u32, i64)> {
    let rank = k.domain.len() as u32;
    // Static extents of the folds' variables, to bound the column `j`.
    let mut extents = std::collections::HashMap::new();
    for e in &k.exprs {
        if let KExpr::Reduce { var, extent, .. } = *e {
            if let KExpr::I64(n) = *k.expr(extent) {
                extents.insert(var.0, n);
            }
        }
    }
    k.exprs.iter().enumerate().find_map(|(i, e)| {
        let KExpr::Load { buf, index, mask: None, .. } = *e else { return None };
        let p = k.buffers.get(buf as usize)?;
        if p.access != Access::Read || p.layout != Layout::Plain || p.elem != Elem::F32 {
            return None;
        }
        let (rows, cols) = weight_shape(graph, &p.value)?;
        let (terms, constant) = super::gemm::affine(k, index)?;
        let mut coord = None;
        let mut last = constant;
        for (v, c) in terms {
            if v < rank {
                // Exactly one output coordinate, the row, stepping a whole row.
                if coord.replace(v).is_some() || c != cols {
                    return None;
                }
            } else {
                let n = *extents.get(&v)?;
                if c < 0 {
                    return None;
                }
                last = last.checked_add(c.checked_mul(n - 1)?)?;
            }
        }
        let coord = coord?;
        let extent_matches = matches!(*k.expr(k.domain[coord as usize]), KExpr::I64(n) if n == rows);
        (constant >= 0 && last < cols && extent_matches).then_some((ExprId(i as u32), coord, rows))
    })
}

/// `[rows, cols]` of graph value `name` viewed as a matrix (its first dim, the product of the
/// rest), when it is a float32 parameter or tensor constant of static sizes and two or more
/// dims: loaded from the model, never written by the graph.
fn weight_shape(graph: &Graph, name: &str) -> Option<(i64, i64)> {
    let v = graph.value_id(name)?;
    let resident = graph.inputs.iter().any(|(i, kind)| *i == v && matches!(kind, InputKind::Parameter { .. } | InputKind::TensorConstant { .. }));
    let t = graph.value(v).tensor()?;
    if !resident || t.dtype != DType::F32 || t.sizes.len() < 2 {
        return None;
    }
    let sizes: Vec<i64> = t.sizes.iter().map(|s| s.as_int()).collect::<Option<_>>()?;
    Some((sizes[0], sizes[1..].iter().try_fold(1i64, |a, s| a.checked_mul(*s))?))
}
