//! Shape inference ("meta functions"): the symbolic output metadata of an op from its arguments.
//! Decomposition rules emit new nodes through this, so every emitted value has a symbolic shape
//! that stays right for every legal value of the dynamic dimensions.

mod broadcast;
pub(crate) mod layout;
pub(crate) mod loss;
pub(crate) mod memory_format;
pub(crate) mod ops;
mod ops_nn;
mod ops_shape;
mod promote;
mod select;

use crate::ir::{Arg, Graph, NamedArg, SymIntArg, TensorMeta, ValueKind};
use crate::sym::Expr;

pub use broadcast::broadcast_shapes;

/// Why the metadata of an op could not be inferred.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot infer the output of `{target}`: {message}")]
pub struct InferError {
    pub target: String,
    pub message: String,
}

/// Output metadata of `target` applied to `args` (values refer to `graph`), one per output.
/// The meta function comes from the op registry (`crate::ops`, `.meta(..)`); a composite op
/// without one has its decomposition's ([`crate::decomp::infer_by_rule`]).
pub fn infer(target: &str, args: &[NamedArg], graph: &Graph) -> Result<Vec<ValueKind>, InferError> {
    let a = Args { target, args, graph };
    if let Some(meta) = crate::ops::get(target).and_then(|d| d.meta) {
        return meta(&a);
    }
    match crate::decomp::infer_by_rule(target, args, graph) {
        Some(kinds) => kinds.map_err(|e| a.err(format!("through its decomposition: {e}"))),
        None => Err(a.err("no meta function for this op")),
    }
}

/// A meta function: the outputs' metadata from the arguments.
pub type MetaFn = fn(&Args) -> Result<Vec<ValueKind>, InferError>;

/// Argument access for meta functions, with errors that name the op and argument.
pub struct Args<'a> {
    pub target: &'a str,
    pub args: &'a [NamedArg],
    pub graph: &'a Graph,
}

impl<'a> Args<'a> {
    pub fn err(&self, message: impl Into<String>) -> InferError {
        InferError { target: self.target.to_string(), message: message.into() }
    }

    pub fn get(&self, name: &str) -> Option<&'a Arg> {
        self.args.iter().find(|a| a.name == name).map(|a| &a.arg)
    }

    pub fn tensor(&self, name: &str) -> Result<&'a TensorMeta, InferError> {
        match self.get(name) {
            Some(Arg::Tensor(v)) => {
                self.graph.value(*v).tensor().ok_or_else(|| self.err(format!("`{name}` is not a tensor")))
            }
            _ => Err(self.err(format!("missing tensor argument `{name}`"))),
        }
    }

    pub fn int(&self, name: &str, default: Option<i64>) -> Result<i64, InferError> {
        match self.get(name) {
            Some(Arg::Int(i)) => Ok(*i),
            Some(Arg::SymInt(SymIntArg::Int(i))) => Ok(*i),
            None | Some(Arg::None) => default.ok_or_else(|| self.err(format!("missing int argument `{name}`"))),
            Some(other) => Err(self.err(format!("`{name}` should be an int, found {other:?}"))),
        }
    }

    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, InferError> {
        match self.get(name) {
            Some(Arg::Ints(v)) => Ok(Some(v.clone())),
            Some(Arg::Int(i)) => Ok(Some(vec![*i])),
            Some(Arg::SymInts(v)) => v
                .iter()
                .map(|s| match s {
                    SymIntArg::Int(i) => Ok(*i),
                    SymIntArg::Value(_) => Err(self.err(format!("`{name}` must be static"))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            None | Some(Arg::None) => Ok(None),
            Some(other) => Err(self.err(format!("`{name}` should be an int list, found {other:?}"))),
        }
    }

    pub fn bool(&self, name: &str, default: bool) -> Result<bool, InferError> {
        match self.get(name) {
            Some(Arg::Bool(b)) => Ok(*b),
            None | Some(Arg::None) => Ok(default),
            Some(other) => Err(self.err(format!("`{name}` should be a bool, found {other:?}"))),
        }
    }

    /// A symbolic size list (`view`'s `size`, `expand`'s `size`): literals or SymInt values.
    pub fn sym_sizes(&self, name: &str) -> Result<Vec<Expr>, InferError> {
        match self.get(name) {
            Some(Arg::Ints(v)) => Ok(v.iter().map(|i| Expr::int(*i)).collect()),
            Some(Arg::SymInts(v)) => v
                .iter()
                .map(|s| match s {
                    SymIntArg::Int(i) => Ok(Expr::int(*i)),
                    SymIntArg::Value(id) => match &self.graph.value(*id).kind {
                        ValueKind::SymInt(e) => Ok(e.clone()),
                        _ => Err(self.err(format!("`{name}` holds a value that is not a SymInt"))),
                    },
                })
                .collect(),
            _ => Err(self.err(format!("missing size list `{name}`"))),
        }
    }

    pub fn sym_int(&self, name: &str) -> Result<Expr, InferError> {
        match self.get(name) {
            Some(Arg::Int(i)) | Some(Arg::SymInt(SymIntArg::Int(i))) => Ok(Expr::int(*i)),
            Some(Arg::SymInt(SymIntArg::Value(id))) => match &self.graph.value(*id).kind {
                ValueKind::SymInt(e) => Ok(e.clone()),
                _ => Err(self.err(format!("`{name}` is not a SymInt"))),
            },
            _ => Err(self.err(format!("missing SymInt argument `{name}`"))),
        }
    }
}

/// A fresh contiguous tensor of `dtype`-like metadata.
pub(crate) fn contiguous(like: &TensorMeta, dtype: crate::ir::DType, sizes: Vec<Expr>) -> TensorMeta {
    TensorMeta {
        dtype,
        strides: TensorMeta::contiguous_strides(&sizes),
        sizes,
        storage_offset: Expr::int(0),
        device: like.device.clone(),
        requires_grad: false,
    }
}

/// Normalises a possibly negative dimension index against `rank`.
pub fn norm_dim(dim: i64, rank: usize) -> Option<usize> {
    let r = rank.max(1) as i64;
    let d = if dim < 0 { dim + r } else { dim };
    (0..r).contains(&d).then_some(d as usize)
}

/// `sizes` with its one `-1` replaced by what the other sizes leave of `x`'s element count;
/// `None` for more than one `-1`.
pub(crate) fn resolve_minus_one(x: &TensorMeta, sizes: Vec<Expr>) -> Option<Vec<Expr>> {
    let minus: Vec<usize> = sizes.iter().enumerate().filter(|(_, s)| s.as_int() == Some(-1)).map(|(i, _)| i).collect();
    match minus.as_slice() {
        [] => Some(sizes),
        [i] => {
            let rest: Vec<Expr> = sizes.iter().enumerate().filter(|(j, _)| j != i).map(|(_, s)| s.clone()).collect();
            let mut sizes = sizes;
            sizes[*i] = quotient(&x.sizes, &rest);
            Some(sizes)
        }
        _ => None,
    }
}

/// The strides of `view(old, new)`, or `None` when no view can have that shape (`reshape` then
/// copies): ATen's `computeStride`, with symbolic sizes compared as expressions (a product not
/// provably equal counts as unequal, which only ever chooses the copy).
pub(crate) fn view_strides(old: &TensorMeta, new: &[Expr]) -> Option<Vec<Expr>> {
    let (shape, stride) = (&old.sizes, &old.strides);
    let mut out = vec![Expr::int(1); new.len()];
    if shape.is_empty() {
        return Some(TensorMeta::contiguous_strides(new));
    }
    let mut view_d = new.len() as isize - 1;
    let mut chunk_base = stride[shape.len() - 1].clone();
    let (mut tensor_numel, mut view_numel) = (Expr::int(1), Expr::int(1));
    for d in (0..shape.len()).rev() {
        tensor_numel = Expr::mul(tensor_numel, shape[d].clone());
        let chunk_ends =
            d == 0 || (shape[d - 1].as_int() != Some(1) && stride[d - 1] != Expr::mul(tensor_numel.clone(), chunk_base.clone()));
        if chunk_ends {
            while view_d >= 0 && (view_numel != tensor_numel || new[view_d as usize].as_int() == Some(1)) {
                out[view_d as usize] = Expr::mul(view_numel.clone(), chunk_base.clone());
                view_numel = Expr::mul(view_numel, new[view_d as usize].clone());
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if d > 0 {
                chunk_base = stride[d - 1].clone();
                tensor_numel = Expr::int(1);
                view_numel = Expr::int(1);
            }
        }
    }
    (view_d == -1).then_some(out)
}

/// `prod(num) / prod(den)` for sizes: equal symbolic factors cancel and the integer parts divide,
/// so `[s0, 2, s1, 16] / [s0, s1, 16]` is `2`; otherwise a `FloorDiv` of the products.
fn quotient(num: &[Expr], den: &[Expr]) -> Expr {
    let split = |v: &[Expr]| -> (i64, Vec<Expr>) {
        let mut c = 1i64;
        let mut syms = Vec::new();
        for e in v {
            match e.as_int() {
                Some(i) => c = c.saturating_mul(i),
                None => syms.push(e.clone()),
            }
        }
        (c, syms)
    };
    let ((cn, mut sn), (cd, sd)) = (split(num), split(den));
    let cancels = sd.iter().all(|f| match sn.iter().position(|g| g == f) {
        Some(p) => {
            sn.remove(p);
            true
        }
        None => false,
    });
    if cancels && cd != 0 && cn % cd == 0 {
        return sn.into_iter().fold(Expr::int(cn / cd), Expr::mul);
    }
    let prod = |v: &[Expr]| v.iter().fold(Expr::int(1), |acc, s| Expr::mul(acc, s.clone()));
    Expr::floordiv(prod(num), prod(den))
}
