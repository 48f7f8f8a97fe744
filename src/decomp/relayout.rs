//! Strides of a node copied whole whose inputs' layouts changed upstream.
//!
//! A decomposition can give a value another layout than the exported graph recorded: the math
//! form of `scaled_dot_product_attention` returns `[L, N, H, E]` storage where the fused CPU
//! kernel returned `[N, L, H, E]`. Torch's re-trace computes every later node's strides again
//! from its inputs, so the `transpose`, `view` and `mul` after the attention carry the new layout
//! into the `linear` that reads them, and `linear`/`matmul` choose `bmm` over `mm` on those
//! strides (Afmoe's and BitNet's gated attention output, Data2Vec-Vision's projection). A copied
//! node keeps the archive's metadata only where its inputs kept theirs.

use std::cmp::Ordering;
use std::collections::HashSet;

use crate::ir::{Arg, Graph, NamedArg, Node, TensorMeta, ValueId, ValueKind};
use crate::lower::ops::OpKind;
use crate::sym::{Bindings, Expr};

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
    elementwise_strides(&operands, sizes)
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

/// The strides of an elementwise result of `sizes` (`torch._prims_common.
/// compute_elementwise_output_strides`): operands broadcast to `sizes` (a broadcast dim has
/// stride 0), 0-dim operands left out; all contiguous gives contiguous, else dims are ordered
/// by the operands' strides, the first operand that tells two dims apart deciding, and the
/// result is dense in that order. `None` where an operand does not broadcast to `sizes`.
pub(crate) fn elementwise_strides(operands: &[&TensorMeta], sizes: &[Expr]) -> Option<Vec<Expr>> {
    let n = sizes.len();
    let ops: Vec<&TensorMeta> = operands.iter().copied().filter(|m| !m.sizes.is_empty()).collect();
    if n <= 1 || ops.is_empty() {
        return Some(TensorMeta::contiguous_strides(sizes));
    }
    let mut strides: Vec<Vec<Expr>> = Vec::with_capacity(ops.len());
    for m in &ops {
        let lead = n.checked_sub(m.sizes.len())?;
        let mut s = vec![Expr::int(0); n];
        for (d, (size, stride)) in m.sizes.iter().zip(&m.strides).enumerate() {
            let broadcast = size.as_int() == Some(1) && sizes[lead + d].as_int() != Some(1);
            s[lead + d] = if broadcast { Expr::int(0) } else { stride.clone() };
        }
        strides.push(s);
    }
    let contiguous = |m: &TensorMeta| super::rules::view::is_contiguous(m);
    if ops.iter().all(|m| m.sizes.len() == n && contiguous(m)) {
        return Some(TensorMeta::contiguous_strides(sizes));
    }
    let is_zero = |e: &Expr| e.as_int() == Some(0);
    let should_swap = |a: usize, b: usize| -> Ordering {
        for s in &strides {
            if is_zero(&s[a]) || is_zero(&s[b]) {
                continue;
            }
            match known_cmp(&s[a], &s[b]) {
                Some(Ordering::Less) => return Ordering::Less,
                Some(Ordering::Greater) => return Ordering::Greater,
                _ => {}
            }
            if known_cmp(&sizes[a], &sizes[b]) == Some(Ordering::Greater) {
                return Ordering::Greater;
            }
        }
        Ordering::Equal
    };
    // Insertion sort from the innermost dim out, as torch sorts (ambiguous pairs stay put).
    let mut perm: Vec<usize> = (0..n).rev().collect();
    for i in 1..n {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match should_swap(perm[d0], perm[d1]) {
                Ordering::Greater => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                Ordering::Less => break,
                Ordering::Equal => {}
            }
        }
    }
    // `perm` lists dims innermost first: each stride is the product of the sizes inside it.
    let mut out = vec![Expr::int(1); n];
    let mut step = Expr::int(1);
    for &d in &perm {
        out[d] = step.clone();
        let size = match sizes[d].as_int() {
            Some(i) => Expr::int(i.max(1)),
            None => sizes[d].clone(),
        };
        step = Expr::mul(step, size);
    }
    Some(out)
}

/// How `a` compares with `b` for every size their symbols can take (each at least 2, as
/// export's dynamic dims are), or `None` where that differs (torch's `guard_or_false` on both).
fn known_cmp(a: &Expr, b: &Expr) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
        return Some(x.cmp(&y));
    }
    let mut symbols = a.free_symbols();
    symbols.extend(b.free_symbols());
    const VALUES: [i64; 7] = [2, 3, 5, 7, 11, 64, 1000];
    let mut seen = None;
    for k in 0..VALUES.len() {
        let mut at = Bindings::new();
        for (i, s) in symbols.iter().enumerate() {
            at.set(s, VALUES[(k + 2 * i) % VALUES.len()]);
        }
        let c = match (a.eval_int(&at), b.eval_int(&at)) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => return None,
        };
        if seen.is_some_and(|s| s != c) {
            return None;
        }
        seen = Some(c);
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    fn meta(sizes: &[Expr], strides: &[Expr]) -> TensorMeta {
        let mut m = TensorMeta::contiguous(DType::F32, sizes.to_vec());
        m.strides = strides.to_vec();
        m
    }

    fn ints(v: &[i64]) -> Vec<Expr> {
        v.iter().map(|i| Expr::int(*i)).collect()
    }

    /// Afmoe's `view(attn.transpose(1, 2)) * sigmoid(gate)`: the first operand's `[L, N, E]`
    /// storage order wins over the contiguous gate, as torch's re-trace records (strides
    /// `(64, 64*s72, 1)` for sizes `(s72, s53, 64)`).
    #[test]
    fn the_first_operand_that_orders_two_dims_decides() {
        let (n, l) = (Expr::symbol("s72"), Expr::symbol("s53"));
        let sizes = vec![n.clone(), l.clone(), Expr::int(64)];
        let attn = meta(&sizes, &[Expr::int(64), Expr::mul(Expr::int(64), n.clone()), Expr::int(1)]);
        let gate = meta(&sizes, &TensorMeta::contiguous_strides(&sizes));
        let s = elementwise_strides(&[&attn, &gate], &sizes).unwrap();
        assert_eq!(s, attn.strides);
        // The other way round, the contiguous operand decides.
        assert_eq!(elementwise_strides(&[&gate, &attn], &sizes).unwrap(), gate.strides);
    }

    #[test]
    fn broadcast_operands_and_contiguous_ones_give_row_major() {
        let sizes = ints(&[2, 3, 4]);
        let a = meta(&sizes, &ints(&[12, 4, 1]));
        let bias = meta(&ints(&[4]), &ints(&[1]));
        assert_eq!(elementwise_strides(&[&a, &bias], &sizes).unwrap(), ints(&[12, 4, 1]));
        // A transposed operand with a broadcast row vector: the transposed order.
        let t = meta(&sizes, &ints(&[12, 1, 3]));
        assert_eq!(elementwise_strides(&[&bias, &t], &sizes).unwrap(), ints(&[12, 1, 3]));
    }

    #[test]
    fn symbolic_comparisons_hold_for_every_size_or_are_unknown() {
        let s = Expr::symbol("s0");
        assert_eq!(known_cmp(&Expr::int(64), &Expr::mul(Expr::int(64), s.clone())), Some(Ordering::Less));
        assert_eq!(known_cmp(&s, &Expr::int(5)), None);
    }
}
