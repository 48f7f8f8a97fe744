//! Strides of a node copied whole whose inputs' layouts changed upstream.
//!
//! A decomposition can give a value another layout than the exported graph recorded: the math
//! form of `scaled_dot_product_attention` returns `[L, N, H, E]` storage where the fused CPU
//! kernel returned `[N, L, H, E]`. Torch's re-trace computes every later node's strides again
//! from its inputs, so the `transpose`, `view` and `mul` after the attention carry the new layout
//! into the `linear` that reads them, and `linear`/`matmul` choose `bmm` over `mm` on those
//! strides (Afmoe's and BitNet's gated attention output, Data2Vec-Vision's projection). A copied
//! node keeps the archive's metadata only where its inputs kept theirs.

use std::collections::HashSet;

use crate::ir::{Arg, Graph, NamedArg, Node, TensorMeta, ValueId, ValueKind};
use crate::lower::ops::OpKind;
use crate::sym::Expr;

/// The outputs' kinds of `node` (of `input`) copied into `out` with arguments `args`, where an
/// input's strides differ from what the archive recorded and the op's layout follows from its
/// inputs': views by their meta functions, elementwise ops as TensorIterator orders dims.
/// `None` keeps the recorded metadata (nothing changed, or the op's layout is its own); a
/// changed input counts where a view or this function laid it out (`laid`).
pub(super) fn relaid(input: &Graph, node: &Node, out: &Graph, args: &[NamedArg], map: &[Option<ValueId>], laid: &HashSet<ValueId>) -> Option<Vec<ValueKind>> {
    let changed = node.inputs().any(|v| {
        let Some(new) = map.get(v.index()).copied().flatten() else { return false };
        match (input.value(v).tensor(), out.value(new).tensor()) {
            (Some(a), Some(b)) => !same_layout(a, b) && (laid.contains(&new) || laid_out_by_a_view(out, new)),
            _ => false,
        }
    });
    if !changed {
        return None;
    }
    let kind = crate::ops::get(&node.target).and_then(|d| d.lower.map(|(k, _)| k))?;
    let recorded: Vec<ValueKind> = node.outputs.iter().map(|v| input.value(*v).kind.clone()).collect();
    let strides: Vec<Vec<Expr>> = match kind {
        OpKind::View => {
            let kinds = crate::infer::infer(&node.target, args, out).ok()?;
            if kinds.len() != recorded.len() {
                return None;
            }
            kinds.iter().map(|k| match k {
                ValueKind::Tensor(m) => Some(m.strides.clone()),
                _ => None,
            }).collect::<Option<_>>()?
        }
        OpKind::Pointwise => {
            let [ValueKind::Tensor(m)] = recorded.as_slice() else { return None };
            vec![pointwise_strides(args, out, &m.sizes)?]
        }
        _ => return None,
    };
    let mut kinds = recorded;
    let mut relaid = false;
    for (k, s) in kinds.iter_mut().zip(strides) {
        match k {
            ValueKind::Tensor(m) if m.sizes.len() == s.len() => {
                let new = TensorMeta { strides: s, ..m.clone() };
                if !same_layout(m, &new) {
                    *m = new;
                    relaid = true;
                }
            }
            _ => return None,
        }
    }
    relaid.then_some(kinds)
}

/// Whether `v`'s strides come from a view's meta function, which derives them from its input
/// as ATen does. The meta functions of other ops a rule emits give row-major results where torch
/// may not (a convolution of a channels-last input, a `mul` of a transposed one): a layout they
/// report is not believed over the archive's, so only layouts a rule spells with views
/// (`permute`, `clone` + `permute`: the math attention's) travel on, and those of copies laid
/// out again here (`laid`: a norm's `pow`/`mul` after the attention's transpose).
fn laid_out_by_a_view(out: &Graph, v: ValueId) -> bool {
    let kind = |n: crate::ir::NodeId| crate::ops::get(&out.node(n).target).and_then(|d| d.lower.map(|(k, _)| k));
    out.value(v).producer.is_some_and(|n| kind(n) == Some(OpKind::View))
}

/// Whether two metadata of one value lay it out alike: equal strides (as sizes, for every value
/// of their symbols) wherever the size is not 1 (a size-1 dim's stride is never read).
fn same_layout(a: &TensorMeta, b: &TensorMeta) -> bool {
    a.sizes.len() == b.sizes.len()
        && a.sizes.iter().zip(a.strides.iter().zip(&b.strides)).all(|(n, (x, y))| n.as_int() == Some(1) || super::rules::view::same_size(x, y))
}

/// The strides TensorIterator gives an elementwise op's output of `sizes` whose arguments are
/// `args` (values of `out`); `None` where a `memory_format` other than `preserve_format` sets
/// the layout itself (`clone`), or an operand does not broadcast.
pub(super) fn pointwise_strides(args: &[NamedArg], out: &Graph, sizes: &[Expr]) -> Option<Vec<Expr>> {
    if args.iter().any(|a| a.name == "memory_format" && !preserves(&a.arg)) {
        return None;
    }
    let operands: Vec<&TensorMeta> = args.iter().filter_map(|a| tensor_of(&a.arg, out)).collect();
    if operands.iter().any(|o| o.sizes.len() > sizes.len()) {
        return None;
    }
    Some(crate::infer::layout::elementwise_strides(&operands, sizes))
}

fn preserves(a: &Arg) -> bool {
    match a {
        Arg::None => true,
        Arg::MemoryFormat(f) => f == "preserve_format",
        _ => false,
    }
}

fn tensor_of<'a>(a: &Arg, g: &'a Graph) -> Option<&'a TensorMeta> {
    match a {
        Arg::Tensor(v) => g.value(*v).tensor(),
        _ => None,
    }
}
