//! Products that ATen composes from matrix multiplies (aten/src/ATen/native/Linear.cpp and
//! LinearAlgebra.cpp): `tensordot` (`permute` + `reshape` + `mm`), `linalg_vecdot` (`vdot`, or
//! `mul` + `sum`), `linalg_multi_dot` (a chain of `mm` in the cheapest order) and
//! `linalg_matrix_power` (repeated squaring with `matmul`).

use super::build::{self, not_one};
use super::{dim, Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, ValueId};

fn arg_err(name: &str, message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: name.into(), message: message.into() }
}

pub fn tensordot(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (a, b) = (rw.t("self")?, rw.t("other")?);
    let (ra, rb) = (rw.rank(a)?, rw.rank(b)?);
    let d1 = rw.ints("dims_self")?.unwrap_or_default();
    let d2 = rw.ints("dims_other")?.unwrap_or_default();
    if d1.len() != d2.len() {
        return Err(arg_err("dims_other", "both dimension lists should have same length"));
    }
    if rw.meta(a)?.dtype != rw.meta(b)?.dtype {
        return Err(arg_err("other", "both inputs should have same dtype"));
    }
    let d1 = d1.iter().map(|&d| dim(d, ra, "dims_self")).collect::<Result<Vec<_>, _>>()?;
    let d2 = d2.iter().map(|&d| dim(d, rb, "dims_other")).collect::<Result<Vec<_>, _>>()?;
    let (mut t1, mut t2) = (a, b);
    let mut csize = Vec::new();
    for (&x, &y) in d1.iter().zip(&d2) {
        // Broadcast (size-1) contracted dims are summed right away.
        if !not_one(rw, b, y)? {
            t1 = build::sum(rw, t1, &[x], true)?;
        } else if !not_one(rw, a, x)? {
            t2 = build::sum(rw, t2, &[y], true)?;
        } else {
            let (p, q) = (rw.meta(a)?.sizes[x].as_int(), rw.meta(b)?.sizes[y].as_int());
            if let (Some(p), Some(q)) = (p, q) {
                if p != q {
                    return Err(RuleError::Unsupported(format!("contracted dimensions need to match: {p} in dim {x}, {q} in dim {y}")));
                }
            }
            csize.push(rw.size(a, x)?);
        }
    }
    let (mut p1, mut p2, mut rsizes, mut size1, mut size2) = (Vec::new(), d2.clone(), Vec::new(), Vec::new(), Vec::new());
    for i in (0..ra).filter(|i| !d1.contains(i)) {
        p1.push(i);
        let s = rw.size(t1, i)?;
        size1.push(s.clone());
        rsizes.push(s);
    }
    p1.extend(&d1);
    for i in (0..rb).filter(|i| !d2.contains(i)) {
        p2.push(i);
        let s = rw.size(t2, i)?;
        size2.push(s.clone());
        rsizes.push(s);
    }
    let (size1, size2, csize) = (rw.product(size1)?, rw.product(size2)?, rw.product(csize)?);
    let t1 = build::permute(rw, t1, &p1)?;
    let t1 = super::view::view_of(rw, t1, vec![size1, csize.clone()])?;
    let t2 = build::permute(rw, t2, &p2)?;
    let t2 = super::view::view_of(rw, t2, vec![csize, size2])?;
    let out = build::mm(rw, t1, t2)?;
    Ok(vec![build::view(rw, out, rsizes)?])
}

/// `vdot` of two vectors, else `(x.conj() * y).sum(dim)`; `conj` of a real tensor is the tensor
/// itself and is not recorded.
pub fn linalg_vecdot(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let (x, y) = (rw.t("x")?, rw.t("y")?);
    let (dx, dy) = (rw.meta(x)?.dtype, rw.meta(y)?.dtype);
    if !dx.is_floating() {
        return Err(arg_err("x", format!("linalg.vecdot expects a floating point tensor, got {dx}")));
    }
    if dx != dy {
        return Err(arg_err("y", format!("x is {dx} and y is {dy}: the dtypes must match")));
    }
    if rw.rank(x)? == 1 && rw.rank(y)? == 1 {
        return Ok(vec![rw.op("aten.vdot.default", vec![("self", A::T(x)), ("other", A::T(y))])?]);
    }
    let p = build::binary(rw, "aten.mul.Tensor", x, A::T(y))?;
    let d = dim(rw.int("dim", Some(-1))?, rw.rank(p)?, "dim")?;
    Ok(vec![build::sum(rw, p, &[d], false)?])
}

/// Where ATen's `multi_dot` splits each sub-chain `i..=j` (`order[i][j]`: the last matrix of the
/// left factor) of matrices with dims `p[k] x p[k + 1]`: three matrices take the cheaper of
/// `(AB)C` and `A(BC)`, ties to `(AB)C` (`multi_dot_three`); more the cheapest order.
pub(crate) fn multi_dot_order(p: &[i64]) -> Vec<Vec<usize>> {
    let mut s = chain_order(p);
    if let [a, b, c, d] = *p {
        let (cost1, cost2) = ((a * c) * (b + d), (b * d) * (a + c));
        s[0][2] = if cost1 > cost2 { 0 } else { 1 };
    }
    s
}

/// The split points of the cheapest multiplication order of a chain of matrices with dims
/// `p[i] x p[i + 1]` (Cormen et al., as ATen's `matrix_chain_order`; the first cheapest split wins).
fn chain_order(p: &[i64]) -> Vec<Vec<usize>> {
    let n = p.len() - 1;
    let mut m = vec![vec![0i64; n]; n];
    let mut s = vec![vec![0usize; n]; n];
    for l in 1..n {
        for i in 0..n - l {
            let j = i + l;
            m[i][j] = i64::MAX;
            for k in i..j {
                let q = m[i][k].saturating_add(m[k + 1][j]).saturating_add(p[i].saturating_mul(p[k + 1]).saturating_mul(p[j + 1]));
                if q < m[i][j] {
                    m[i][j] = q;
                    s[i][j] = k;
                }
            }
        }
    }
    s
}

fn chain(rw: &mut Rw, ts: &[ValueId], order: &[Vec<usize>], i: usize, j: usize) -> Result<ValueId, RuleError> {
    if i == j {
        return Ok(ts[i]);
    }
    let k = order[i][j];
    let left = chain(rw, ts, order, i, k)?;
    let right = chain(rw, ts, order, k + 1, j)?;
    build::mm(rw, left, right)
}

/// `linalg_multi_dot`: a 1-D first (last) operand is a row (column) vector whose dim leaves the
/// result. Two matrices are one `mm`; three take the cheaper of the two orders; more follow the
/// cheapest chain order. Orders are chosen on static sizes (ATen reads concrete sizes); with
/// dynamic ones the chain is multiplied left to right.
pub fn linalg_multi_dot(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let given = match rw.passthrough("tensors")? {
        Some(Arg::Tensors(v)) => v,
        _ => return Err(arg_err("tensors", "expected a tensor list")),
    };
    let n = given.len();
    if n < 2 {
        return Err(arg_err("tensors", format!("multi_dot expects at least 2 tensors, got {n}")));
    }
    let mut ts = given.clone();
    let mut out_shape = Vec::new();
    match rw.rank(given[0])? {
        1 => ts[0] = build::unsqueeze(rw, given[0], 0)?,
        2 => out_shape.push(rw.size(given[0], 0)?),
        r => return Err(arg_err("tensors", format!("the first tensor must be 1D or 2D, got {r}D"))),
    }
    match rw.rank(given[n - 1])? {
        1 => ts[n - 1] = build::unsqueeze(rw, given[n - 1], -1)?,
        2 => out_shape.push(rw.size(given[n - 1], 1)?),
        r => return Err(arg_err("tensors", format!("the last tensor must be 1D or 2D, got {r}D"))),
    }
    for (i, &t) in given.iter().enumerate().take(n - 1).skip(1) {
        if rw.rank(t)? != 2 {
            return Err(arg_err("tensors", format!("tensor {i} must be 2D")));
        }
    }
    let dtype = rw.meta(ts[0])?.dtype;
    for (i, &t) in ts.iter().enumerate().skip(1) {
        if rw.meta(t)?.dtype != dtype {
            return Err(arg_err("tensors", format!("tensor {i} is not {dtype} like tensor 0")));
        }
    }
    // p[i] x p[i + 1] is the shape of matrix i, when every size is static.
    let mut dims = Vec::with_capacity(n + 1);
    for &t in &ts {
        dims.push(rw.meta(t)?.sizes[0].as_int());
    }
    dims.push(rw.meta(ts[n - 1])?.sizes[1].as_int());
    let p: Option<Vec<i64>> = dims.into_iter().collect();
    let product = match (n, p) {
        (2, _) => build::mm(rw, ts[0], ts[1])?,
        (_, Some(p)) => chain(rw, &ts, &multi_dot_order(&p), 0, n - 1)?,
        (_, None) => {
            let mut acc = ts[0];
            for &t in &ts[1..] {
                acc = build::mm(rw, acc, t)?;
            }
            acc
        }
    };
    Ok(vec![build::view(rw, product, out_shape)?])
}

/// `linalg_matrix_power(A, n)` (ATen's `linalg_matrix_power_impl`): the identity for `n = 0`
/// (a contiguous clone of `A` overwritten by `eye`), a clone for `n = 1`, `linalg_inv` for
/// negative powers, `matmul` chains for 2 and 3, and binary exponentiation above.
pub fn linalg_matrix_power(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let a = rw.t("self")?;
    let mut n = rw.int("n", None)?;
    let r = rw.rank(a)?;
    if r < 2 || rw.meta(a)?.sizes[r - 1] != rw.meta(a)?.sizes[r - 2] {
        return Err(arg_err("self", "linalg.matrix_power expects a batch of square matrices"));
    }
    let inv = |rw: &mut Rw, x: ValueId| rw.op("aten.linalg_inv.default", vec![("A", A::T(x))]);
    let matmul = |rw: &mut Rw, x: ValueId, y: ValueId| rw.op("aten.matmul.default", vec![("self", A::T(x)), ("other", A::T(y))]);
    let contiguous = |rw: &mut Rw, x: ValueId| super::view::contiguous_clone(rw, x);
    match n {
        0 => {
            let out = contiguous(rw, a)?;
            let size = rw.size(a, r - 1)?;
            let dtype = rw.meta(a)?.dtype;
            let eye = rw.op("aten.eye.default", vec![("n", A::Raw(Arg::SymInt(size))), ("dtype", A::Raw(Arg::ScalarType(dtype)))])?;
            return Ok(vec![rw.op("aten.copy.default", vec![("self", A::T(out)), ("src", A::T(eye))])?]);
        }
        1 => return Ok(vec![contiguous(rw, a)?]),
        -1 => return Ok(vec![inv(rw, a)?]),
        _ => {}
    }
    let a = if n < 0 { inv(rw, a)? } else { a };
    n = n.abs();
    if n == 2 {
        return Ok(vec![matmul(rw, a, a)?]);
    }
    if n == 3 {
        let aa = matmul(rw, a, a)?;
        return Ok(vec![matmul(rw, aa, a)?]);
    }
    let (mut z, mut result): (Option<ValueId>, Option<ValueId>) = (None, None);
    while n > 0 {
        let bit = n % 2;
        n /= 2;
        let zz = match z {
            Some(z) => matmul(rw, z, z)?,
            None => a,
        };
        z = Some(zz);
        if bit == 1 {
            result = Some(match result {
                Some(r) => matmul(rw, r, zz)?,
                None => zz,
            });
        }
    }
    result.map(|r| vec![r]).ok_or_else(|| RuleError::Unsupported("no power computed".into()))
}
