//! `chunk` along a dynamic dimension, as torch traces it (ProphetNet chunks its `3*s` stream
//! dimension three ways). ATen's `chunk` computes `split_size = (n + chunks - 1) // chunks` on the
//! SymInt size, which the tracer records as `_operator.add(n, chunks)` and `_operator.sub(.., 1)`
//! (the floor division usually simplifies to a size that has a value already), then calls
//! `split.Tensor` with that SymInt; export's table goes on to `split_with_sizes`, recording the
//! last piece's `split_size * chunks - n` as one more `_operator.sub`. torch guards the number of
//! pieces to an int; here only a size the pieces divide exactly is modelled, and anything else is
//! refused naming the sizes.

use super::build::size_arg;
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym::Expr;

/// The pieces of `x` chunked `chunks` ways along dynamic dim `d`: the SymInt piece size, its
/// count, and each piece's metadata.
pub(super) struct Pieces {
    pub n: SymIntArg,
    pub each: SymIntArg,
    pub kinds: Vec<ValueKind>,
}

pub(super) fn pieces(rw: &mut Rw, x: ValueId, chunks: i64, d: usize) -> Result<Pieces, RuleError> {
    let n = rw.size(x, d)?;
    let plus = rw.sym_arith("add", n.clone(), chunks)?;
    let minus = rw.sym_arith("sub", plus, 1)?;
    let each = rw.sym_arith("floordiv", minus, chunks)?;
    let (ne, ee) = (rw.sym_expr(&n)?, rw.sym_expr(&each)?);
    if Expr::mul(ee.clone(), Expr::int(chunks)) != ne {
        return Err(RuleError::Unsupported(format!(
            "chunk of dynamic size {ne} into {chunks}: pieces of {ee} need not divide it, and the number of pieces then needs a guard this build does not model"
        )));
    }
    let meta: TensorMeta = rw.meta(x)?.clone();
    let stride = meta.strides.get(d).cloned().ok_or_else(|| RuleError::Unsupported("dim out of range".into()))?;
    let kinds = (0..chunks)
        .map(|i| {
            let mut m = meta.clone();
            m.sizes[d] = ee.clone();
            m.storage_offset = Expr::add(meta.storage_offset.clone(), Expr::mul(Expr::mul(Expr::int(i), ee.clone()), stride.clone()));
            ValueKind::Tensor(m)
        })
        .collect();
    Ok(Pieces { n, each, kinds })
}

/// Inductor's table: `split.Tensor` by the SymInt piece size.
pub(super) fn split(rw: &mut Rw, x: ValueId, chunks: i64, d: usize) -> Result<Vec<ValueId>, RuleError> {
    let p = pieces(rw, x, chunks, d)?;
    let args = vec![("self", A::T(x)), ("split_size", size_arg(p.each)), ("dim", A::I(d as i64))];
    rw.op_n_with("aten.split.Tensor", args, Some(p.kinds))
}

/// Export's table: `split_with_sizes` of equal SymInt pieces, after the `_operator.sub` torch's
/// `split` decomposition records for the last piece (`split_size * chunks - n`, zero here).
pub(super) fn split_with_sizes(rw: &mut Rw, x: ValueId, chunks: i64, d: usize) -> Result<Vec<ValueId>, RuleError> {
    let p = pieces(rw, x, chunks, d)?;
    let whole = rw.product(vec![p.each.clone(), SymIntArg::Int(chunks)])?;
    let gap = rw.op("_operator.sub", vec![("a", A::Raw(Arg::SymInt(whole))), ("b", A::Raw(Arg::SymInt(p.n)))])?;
    // torch's `split` then sizes the last piece `split_size - gap`: that is the piece size, which
    // has a value, so export erases the duplicate and keeps its operands, the `gap` among them,
    // read by nothing (one `_operator.sub` per chunk in ProphetNet's core graph).
    rw.sym_arith2("sub", p.each.clone(), SymIntArg::Value(gap))?;
    let args = vec![("self", A::T(x)), ("split_sizes", A::Sizes(vec![p.each; chunks as usize])), ("dim", A::I(d as i64))];
    rw.op_n_with("aten.split_with_sizes.default", args, Some(p.kinds))
}

#[cfg(test)]
mod tests {
    use crate::decomp::{decompose, Marks, Mode};
    use super::super::test_graph::{arg, node};
    use crate::ir::{Arg, DType, Graph, InputKind, NodeMeta, TensorMeta, ValueKind};
    use crate::sym::Expr;

    /// Two `chunk(3)`s of a `3*s` dim (ProphetNet's streams) in export's table: the first records
    /// `3*s + 3`, `- 1` and the zero gap `3*s - 3*s`; the second finds the first two and records
    /// only its own gap, which torch keeps although nothing reads it (its `split_size - gap` is
    /// erased as a duplicate of `s`): three `_operator.sub`, as torch 2.15's graph of
    /// hf_prophetnet_causal_lm has one per chunk plus the first's `- 1`.
    #[test]
    fn each_chunk_keeps_its_last_piece_gap() {
        let s0 = Expr::symbol("s0");
        let mut g = Graph::new("g");
        let y = g.add_input("y", ValueKind::Tensor(TensorMeta::contiguous(DType::F32, vec![s0.clone()])), InputKind::UserInput).unwrap();
        let x = g.add_input("x", ValueKind::Tensor(TensorMeta::contiguous(DType::F32, vec![Expr::int(2), Expr::mul(Expr::int(3), s0)])), InputKind::UserInput).unwrap();
        node(&mut g, "sym_size_int", "aten.sym_size.int", vec![arg("self", Arg::Tensor(y)), arg("dim", Arg::Int(0))]);
        for name in ["chunk", "chunk_1"] {
            let args = vec![arg("self", Arg::Tensor(x)), arg("chunks", Arg::Int(3)), arg("dim", Arg::Int(1))];
            // Each piece is `x[:, i*s:(i+1)*s]` (infer refuses a dynamic chunk: the rule is its meta).
            let outs = (0..3i64)
                .map(|i| {
                    let mut m = TensorMeta::contiguous(DType::F32, vec![Expr::int(2), Expr::mul(Expr::int(3), Expr::symbol("s0"))]);
                    m.sizes[1] = Expr::symbol("s0");
                    m.storage_offset = Expr::mul(Expr::int(i), Expr::symbol("s0"));
                    (format!("{name}_{i}"), ValueKind::Tensor(m))
                })
                .collect();
            let id = g.add_node(name, "aten.chunk.default", args, outs, NodeMeta::default()).unwrap();
            g.outputs.push(Arg::Tensor(g.node(id).outputs[0]));
        }
        let ops = decompose(&g, Mode::Core, &Marks::default()).unwrap().graph.op_histogram();
        assert_eq!(ops.get("_operator.sub"), Some(&3), "{ops:?}");
        assert_eq!(ops.get("aten.split_with_sizes.default"), Some(&2), "{ops:?}");
    }
}
