//! Composite linear algebra that reshapes around one LAPACK-backed op (aten/src/ATen/native/
//! LinearAlgebra.cpp, BatchLinearAlgebra.cpp): `linalg_tensorinv` (`linalg_inv_ex` of the
//! square matrix the tensor folds into), `linalg_tensorsolve` (`linalg_solve` of it),
//! `linalg_matrix_norm.str_ord` (`linalg_vector_norm` for `fro`, the sum of `linalg_svdvals`
//! for `nuc`) and `matrix_exp` (`linalg_matrix_exp`). The LAPACK-backed ops stay whole: they
//! run as eager fallbacks.

use super::build;
use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};

fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: name.into(), message: message.into() }
}

/// Fails when two products of sizes are both static and differ.
fn same_product(rw: &Rw, a: &SymIntArg, b: &SymIntArg, what: &str) -> Result<(), RuleError> {
    if let (SymIntArg::Int(p), SymIntArg::Int(q)) = (a, b) {
        if p != q {
            return Err(arg_err("self", format!("{what}: {p} != {q}")));
        }
    } else if rw.sym_expr(a)? != rw.sym_expr(b)? {
        return Err(RuleError::Unsupported(format!("{what}: cannot show {} == {}", rw.sym_expr(a)?, rw.sym_expr(b)?)));
    }
    Ok(())
}

/// `linalg_tensorinv(A, ind)`: `A` folded to a `prod(shape[:ind]) x prod(shape[ind:])` matrix,
/// inverted, and unfolded to `shape[ind:] + shape[:ind]`.
pub fn linalg_tensorinv(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let ind = rw.int("ind", Some(2))?;
    let rank = rw.rank(x)?;
    if ind <= 0 || ind as usize > rank {
        return Err(arg_err("ind", format!("expected a strictly positive integer at most the rank {rank}, got {ind}")));
    }
    let sizes = build::sizes(rw, x)?;
    let (start, end) = sizes.split_at(ind as usize);
    let (start, end) = (start.to_vec(), end.to_vec());
    let p_end = rw.product(end.clone())?;
    let p_start = rw.product(start.clone())?;
    same_product(rw, &p_end, &p_start, "prod(self.shape[ind:]) must equal prod(self.shape[:ind])")?;
    let square = super::view::view_of(rw, x, vec![p_end.clone(), p_end])?;
    let inv = rw.op_n("aten.linalg_inv_ex.default", vec![("A", A::T(square)), ("check_errors", A::B(false))])?;
    let inv = *inv.first().ok_or_else(|| RuleError::Unsupported("linalg_inv_ex has no outputs".into()))?;
    let shape: Vec<SymIntArg> = end.into_iter().chain(start).collect();
    Ok(vec![super::view::view_of(rw, inv, shape)?])
}

/// `linalg_tensorsolve(A, B, dims)`: `dims` of `A` moved to the end, `A` folded to a square
/// matrix, solved against `B` flattened, and the solution unfolded to `A`'s trailing shape.
pub fn linalg_tensorsolve(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("other")?);
    let ndim = rw.rank(a)?;
    let b_rank = rw.rank(b)?;
    let mut a = a;
    if let Some(dims) = rw.ints("dims")? {
        let moved = dims.iter().map(|&d| dim(d, ndim, "dims")).collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..ndim).filter(|d| !moved.contains(d)).collect();
        order.extend(&moved);
        if order.len() != ndim {
            return Err(arg_err("dims", "a dim is repeated"));
        }
        a = build::permute(rw, a, &order)?;
    }
    if b_rank > ndim {
        return Err(arg_err("other", format!("rank {b_rank} above self's {ndim}")));
    }
    let sizes = build::sizes(rw, a)?;
    let result_shape = sizes[b_rank..].to_vec();
    let result_product = rw.product(result_shape.clone())?;
    let b_sizes = build::sizes(rw, b)?;
    let other_product = rw.product(b_sizes)?;
    same_product(rw, &result_product, &other_product, "prod(self.shape[other.ndim:]) must equal prod(other.shape)")?;
    let square = super::view::view_of(rw, a, vec![result_product.clone(), result_product])?;
    let flat = rw.op("aten.flatten.using_ints", vec![("self", A::T(b)), ("start_dim", A::I(0)), ("end_dim", A::I(-1))])?;
    let x = rw.op("aten.linalg_solve.default", vec![("A", A::T(square)), ("B", A::T(flat)), ("left", A::B(true))])?;
    Ok(vec![super::view::view_of(rw, x, result_shape)?])
}

/// `linalg_matrix_norm(self, ord="fro"|"nuc", dim, keepdim, dtype)`.
pub fn linalg_matrix_norm_str(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    let ord = rw.string("ord", "fro")?;
    let rank = rw.rank(x)?;
    if rank < 2 {
        return Err(arg_err("self", "linalg.matrix_norm expects a tensor of at least 2 dims"));
    }
    let dims = rw.ints("dim")?.unwrap_or_else(|| vec![-2, -1]);
    let [d0, d1] = dims.as_slice() else { return Err(arg_err("dim", "expects a 2-tuple of ints")) };
    let (d0, d1) = (dim(*d0, rank, "dim")?, dim(*d1, rank, "dim")?);
    if d0 == d1 {
        return Err(arg_err("dim", "dims must be different"));
    }
    let keepdim = rw.bool("keepdim", false)?;
    let dtype = rw.passthrough("dtype")?.filter(|d| matches!(d, Arg::ScalarType(_)));
    match ord.as_str() {
        "fro" => {
            let mut args = vec![("self", A::T(x)), ("ord", A::F(2.0)), ("dim", A::Is(vec![d0 as i64, d1 as i64])), ("keepdim", A::B(keepdim))];
            if let Some(d) = dtype {
                args.push(("dtype", A::Raw(d)));
            }
            Ok(vec![rw.op("aten.linalg_vector_norm.default", args)?])
        }
        "nuc" => {
            let x = match dtype {
                Some(d) => rw.op("aten._to_copy.default", vec![("self", A::T(x)), ("dtype", A::Raw(d))])?,
                None => x,
            };
            // The two dims moved to the end (`create_dim_backshift_permutation`).
            let mut perm: Vec<usize> = (0..rank).filter(|&d| d != d0 && d != d1).collect();
            perm.extend([d0, d1]);
            let moved = build::permute(rw, x, &perm)?;
            let sv = rw.op("aten.linalg_svdvals.default", vec![("A", A::T(moved))])?;
            let r = rw.rank(sv)?;
            let total = build::sum(rw, sv, &[r - 1], keepdim)?;
            if !keepdim {
                return Ok(vec![total]);
            }
            let u = build::unsqueeze(rw, total, -1)?;
            let mut reverse = vec![0; rank];
            for (i, &p) in perm.iter().enumerate() {
                reverse[p] = i;
            }
            Ok(vec![build::permute(rw, u, &reverse)?])
        }
        o => Err(arg_err("ord", format!("order `{o}` not supported"))),
    }
}

/// `matrix_exp` is `linalg_matrix_exp`.
pub fn matrix_exp(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let x = rw.t("self")?;
    Ok(vec![rw.op("aten.linalg_matrix_exp.default", vec![("self", A::T(x))])?])
}
