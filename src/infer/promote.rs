//! Result dtypes of elementwise ops, as `torch.result_type` computes them, and the meta functions
//! of the elementwise ops that need them (arithmetic, comparisons, `lerp`): decompositions mix
//! integer tensors with Python floats (`trapezoid`'s `/ 2.`) and masks with numbers, so the
//! output dtype is not simply `self`'s.

use super::{broadcast_shapes, contiguous, Args, InferError};
use crate::ir::{Arg, DType, TensorMeta, ValueKind};
use crate::sym::Expr;

type Out = Result<Vec<ValueKind>, InferError>;

/// bool < integer < float: a lower-priority operand only counts when its category is higher.
fn category(d: DType) -> u8 {
    if d == DType::Bool {
        0
    } else if d.is_floating() {
        2
    } else {
        1
    }
}

/// The operands' three priority tiers: tensors with dims, zero-dim tensors, Python numbers.
#[derive(Default)]
struct Tiers {
    dim: Option<DType>,
    zero: Option<DType>,
    number: Option<DType>,
}

impl Tiers {
    fn add(slot: &mut Option<DType>, d: DType) -> Result<(), String> {
        *slot = Some(match *slot {
            None => d,
            Some(s) => DType::promote_types(s, d).ok_or_else(|| format!("no promotion of {s} and {d}"))?,
        });
        Ok(())
    }

    fn combine(higher: Option<DType>, lower: Option<DType>) -> Result<Option<DType>, String> {
        Ok(match (higher, lower) {
            (None, l) => l,
            (h, None) => h,
            (Some(h), Some(l)) if category(l) > category(h) => {
                Some(DType::promote_types(h, l).ok_or_else(|| format!("no promotion of {h} and {l}"))?)
            }
            (h, Some(_)) => h,
        })
    }
}

/// `torch.result_type` of the named arguments (tensors or numbers; absent ones are skipped). A
/// Python float counts as the default dtype (float32), an int as int64.
pub(crate) fn result_type(a: &Args, names: &[&str]) -> Result<DType, InferError> {
    let mut t = Tiers::default();
    for n in names {
        let r = match a.get(n) {
            Some(Arg::Tensor(_)) => {
                let m = a.tensor(n)?;
                if m.sizes.is_empty() {
                    Tiers::add(&mut t.zero, m.dtype)
                } else {
                    Tiers::add(&mut t.dim, m.dtype)
                }
            }
            Some(Arg::Float(_)) => Tiers::add(&mut t.number, DType::F32),
            Some(Arg::Int(_)) | Some(Arg::SymInt(_)) => Tiers::add(&mut t.number, DType::I64),
            Some(Arg::Bool(_)) => Tiers::add(&mut t.number, DType::Bool),
            _ => Ok(()),
        };
        r.map_err(|m| a.err(m))?;
    }
    let lower = Tiers::combine(t.zero, t.number).map_err(|m| a.err(m))?;
    Tiers::combine(t.dim, lower).map_err(|m| a.err(m))?.ok_or_else(|| a.err("no operands"))
}

/// The broadcast shape of the named tensor arguments (numbers do not take part), and the first
/// tensor's metadata (the output is laid out like it).
fn broadcast<'a>(a: &Args<'a>, names: &[&str]) -> Result<(Vec<Expr>, &'a TensorMeta), InferError> {
    let mut out: Option<(Vec<Expr>, &'a TensorMeta)> = None;
    for n in names {
        if let Some(Arg::Tensor(_)) = a.get(n) {
            let m = a.tensor(n)?;
            out = Some(match out {
                None => (m.sizes.clone(), m),
                Some((s, first)) => (broadcast_shapes(&s, &m.sizes).map_err(|e| a.err(e))?, first),
            });
        }
    }
    out.ok_or_else(|| a.err("no tensor operand"))
}

fn one(like: &TensorMeta, dtype: DType, sizes: Vec<Expr>) -> Out {
    Ok(vec![ValueKind::Tensor(contiguous(like, dtype, sizes))])
}

/// Elementwise binary ops (`self` with a tensor or number `other`): broadcast shape, promoted
/// dtype; true division of integers gives the default float dtype.
pub(crate) fn binary(a: &Args) -> Out {
    let (sizes, first) = broadcast(a, &["self", "other"])?;
    let mut dtype = result_type(a, &["self", "other"])?;
    let true_div = matches!(a.target, "aten.div.Tensor" | "aten.div.Scalar");
    if true_div && !dtype.is_floating() {
        dtype = DType::F32;
    }
    one(first, dtype, sizes)
}

/// Comparisons (`eq`, `lt`, ... with a tensor or number `other`): bool, broadcast.
pub(crate) fn compare(a: &Args) -> Out {
    let (sizes, first) = broadcast(a, &["self", "other"])?;
    result_type(a, &["self", "other"])?;
    one(first, DType::Bool, sizes)
}

/// `lerp(self, end, weight)`: the three broadcast, in `self`'s dtype.
pub(crate) fn lerp(a: &Args) -> Out {
    let (sizes, x) = broadcast(a, &["self", "end", "weight"])?;
    one(x, x.dtype, sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Graph, InputKind, NamedArg};

    fn input(g: &mut Graph, name: &str, dtype: DType, sizes: &[i64]) -> Arg {
        let sizes: Vec<Expr> = sizes.iter().map(|&s| Expr::int(s)).collect();
        let m = TensorMeta {
            dtype,
            strides: TensorMeta::contiguous_strides(&sizes),
            sizes,
            storage_offset: Expr::int(0),
            device: "cpu".into(),
            requires_grad: false,
        };
        Arg::Tensor(g.add_input(name, ValueKind::Tensor(m), InputKind::UserInput).unwrap())
    }

    fn dtype_of(target: &str, g: &Graph, x: Arg, other: Arg) -> DType {
        let args = vec![
            NamedArg { name: "self".into(), arg: x, kwarg: false },
            NamedArg { name: "other".into(), arg: other, kwarg: false },
        ];
        let a = Args { target, args: &args, graph: g };
        match &binary(&a).unwrap()[0] {
            ValueKind::Tensor(m) => m.dtype,
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn numbers_and_zero_dim_tensors_only_raise_the_category() {
        let mut g = Graph::new("g");
        let i8v = input(&mut g, "a", DType::I8, &[3]);
        let f16v = input(&mut g, "b", DType::F16, &[3]);
        let f64z = input(&mut g, "c", DType::F64, &[]);
        let i64z = input(&mut g, "d", DType::I64, &[]);
        assert_eq!(dtype_of("aten.mul.Tensor", &g, i8v.clone(), Arg::Float(0.5)), DType::F32);
        assert_eq!(dtype_of("aten.mul.Tensor", &g, i8v.clone(), Arg::Int(2)), DType::I8);
        assert_eq!(dtype_of("aten.mul.Tensor", &g, f16v.clone(), Arg::Float(0.5)), DType::F16);
        assert_eq!(dtype_of("aten.add.Tensor", &g, f16v, f64z.clone()), DType::F16);
        assert_eq!(dtype_of("aten.add.Tensor", &g, i8v.clone(), f64z), DType::F64);
        assert_eq!(dtype_of("aten.add.Tensor", &g, i8v.clone(), i64z), DType::I8);
        assert_eq!(dtype_of("aten.div.Tensor", &g, i8v, Arg::Int(2)), DType::F32, "true division of integers");
    }
}
