//! Meta functions whose result dtype follows PyTorch's type promotion beyond `binary`'s two
//! operands (`lerp`), and tests of that promotion (`torch.result_type`): decompositions mix
//! integer tensors with Python floats (`trapezoid`'s `/ 2.`) and masks with numbers, so an
//! output's dtype is not simply `self`'s.

use super::ops::broadcast_operands;
use super::{contiguous, Args};
use crate::ir::ValueKind;

type Out = Result<Vec<ValueKind>, super::InferError>;

/// `lerp(self, end, weight)`: the three broadcast, in `self`'s dtype.
pub(crate) fn lerp(a: &Args) -> Out {
    let (x, sizes) = broadcast_operands(a, &["self", "end", "weight"])?;
    Ok(vec![ValueKind::Tensor(contiguous(x, x.dtype, sizes))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::ops::binary;
    use crate::ir::{Arg, DType, TensorMeta};
    use crate::sym::Expr;
    use crate::ir::{Graph, InputKind, NamedArg};

    fn input(g: &mut Graph, name: &str, dtype: DType, sizes: &[i64]) -> Arg {
        let sizes: Vec<Expr> = sizes.iter().map(|&s| Expr::int(s)).collect();
        let m = TensorMeta::contiguous(dtype, sizes);
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
