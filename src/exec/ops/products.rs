//! Contractions: `einsum` (with `...` and implicit output), and the ops that are einsums with a
//! fixed equation: `tensordot`, `inner`, `dot`, `vdot`, `mv`, `linalg_vecdot`, `bilinear`,
//! `linalg_multi_dot`. All of them but `bilinear` (which keeps PyTorch's order of products and
//! roundings) run through one label-based contraction in `f64`.

use std::collections::BTreeMap;

use super::fvec::{promoted, round_to, F};
use super::{one, shape_err, wrap_dim, OpCx, OpError, OpResult};
use crate::exec::tensor::Tensor;
use crate::exec::value::RtValue;

/// One operand of a contraction: values and one label per dim.
struct Term {
    f: F,
    labels: Vec<u32>,
}

/// `Σ over labels not in out` of the product of the terms, as a tensor of labels `out`. A label
/// of size 1 in one operand broadcasts against the others (the ellipsis dims of einsum).
fn contract(terms: &[Term], out: &[u32]) -> OpResult<F> {
    let mut size: BTreeMap<u32, usize> = BTreeMap::new();
    for t in terms {
        if t.labels.len() != t.f.shape.len() {
            return shape_err(format!("{} labels for an operand of shape {:?}", t.labels.len(), t.f.shape));
        }
        for (&l, &s) in t.labels.iter().zip(&t.f.shape) {
            let e = size.entry(l).or_insert(s);
            if *e == 1 {
                *e = s;
            } else if s != 1 && s != *e {
                return shape_err(format!("dimension sizes {} and {s} of one subscript do not match", *e));
            }
        }
    }
    let summed: Vec<u32> = size.keys().copied().filter(|l| !out.contains(l)).collect();
    let all: Vec<u32> = out.iter().chain(&summed).copied().collect();
    let dims: Vec<usize> = all.iter().map(|l| size[l]).collect();
    let out_shape: Vec<usize> = out.iter().map(|l| size[l]).collect();
    let n_out: usize = out_shape.iter().product();
    let n_sum: usize = dims[out.len()..].iter().product();
    // Per term: the stride of each label of `all` into the term's values (0 where absent or broadcast).
    let term_strides: Vec<Vec<usize>> = terms
        .iter()
        .map(|t| {
            let st = super::fvec::strides(&t.f.shape);
            all.iter()
                .map(|l| {
                    t.labels.iter().enumerate().filter(|(i, m)| *m == l && t.f.shape[*i] != 1).map(|(i, _)| st[i]).sum()
                })
                .collect()
        })
        .collect();
    let mut v = vec![0.0; n_out];
    let mut idx = vec![0usize; all.len()];
    for (o, slot) in v.iter_mut().enumerate() {
        let mut rem = o;
        for d in (0..out.len()).rev() {
            idx[d] = rem % dims[d];
            rem /= dims[d];
        }
        let mut acc = 0.0;
        for s in 0..n_sum {
            let mut rem = s;
            for d in (out.len()..all.len()).rev() {
                idx[d] = rem % dims[d];
                rem /= dims[d];
            }
            let mut p = 1.0;
            for (t, st) in terms.iter().zip(&term_strides) {
                p *= t.f.v[idx.iter().zip(st).map(|(i, s)| i * s).sum::<usize>()];
            }
            acc += p;
        }
        *slot = acc;
    }
    Ok(F::new(out_shape, v))
}

/// Placeholder labels of ellipsis dims before they are numbered.
const ELLIPSIS: u32 = 1_000_000;

fn label(c: char) -> OpResult<u32> {
    if c.is_ascii_alphabetic() {
        Ok(c as u32)
    } else {
        Err(OpError::Arg { arg: "equation".into(), message: format!("`{c}` is not a subscript letter") })
    }
}

/// Labels of one einsum term; `...` becomes labels 0.. aligned from the right, for `rank` dims.
fn term_labels(s: &str, rank: usize, ell: &mut usize) -> OpResult<Vec<u32>> {
    let Some((pre, post)) = s.split_once("...") else {
        return s.chars().map(label).collect();
    };
    let named = pre.chars().count() + post.chars().count();
    let k = rank.checked_sub(named).ok_or_else(|| OpError::Arg { arg: "equation".into(), message: format!("`{s}` has more subscripts than dims") })?;
    *ell = (*ell).max(k);
    let mut l: Vec<u32> = pre.chars().map(label).collect::<OpResult<_>>()?;
    // Placeholders for the ellipsis dims; the caller numbers them 0.. (below the letters' codes),
    // right-aligned against the widest ellipsis.
    l.extend((0..k).map(|i| ELLIPSIS + i as u32));
    l.extend(post.chars().map(label).collect::<OpResult<Vec<_>>>()?);
    Ok(l)
}

pub fn einsum(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let eq: String = cx.str_or("equation", "")?.chars().filter(|c| !c.is_whitespace()).collect();
    let ts = cx.tensors("tensors")?;
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let parts: Vec<&str> = lhs.split(',').collect();
    if parts.len() != ts.len() {
        return shape_err(format!("einsum `{eq}` names {} operands, {} given", parts.len(), ts.len()));
    }
    let mut ell = 0;
    let mut labels = parts.iter().zip(&ts).map(|(p, t)| term_labels(p, t.ndim(), &mut ell)).collect::<OpResult<Vec<_>>>()?;
    // Right-align ellipsis labels: an operand with k of `ell` ellipsis dims takes the last k.
    for (l, p) in labels.iter_mut().zip(&parts) {
        if let Some(k) = p.split_once("...").map(|_| l.iter().filter(|&&x| x >= ELLIPSIS).count()) {
            for (j, x) in l.iter_mut().filter(|x| **x >= ELLIPSIS).enumerate() {
                *x = (ell - k + j) as u32;
            }
        }
    }
    let ell_labels: Vec<u32> = (0..ell as u32).collect();
    let out: Vec<u32> = match rhs {
        Some(r) => match r.split_once("...") {
            Some((a, b)) => {
                let mut o: Vec<u32> = a.chars().map(label).collect::<OpResult<_>>()?;
                o.extend(&ell_labels);
                o.extend(b.chars().map(label).collect::<OpResult<Vec<_>>>()?);
                o
            }
            None => r.chars().map(label).collect::<OpResult<_>>()?,
        },
        None => {
            // Implicit output: the ellipsis, then the letters used once, alphabetically.
            let mut count: BTreeMap<u32, usize> = BTreeMap::new();
            labels.iter().flatten().filter(|&&l| l >= 64).for_each(|&l| *count.entry(l).or_default() += 1);
            ell_labels.iter().copied().chain(count.into_iter().filter(|(_, n)| *n == 1).map(|(l, _)| l)).collect()
        }
    };
    let terms: Vec<Term> = ts.iter().zip(labels).map(|(t, labels)| Term { f: F::of(t), labels }).collect();
    let mut dtype = promoted(&ts)?;
    let path = cx.opt_ints("path")?;
    if !dtype.is_floating() && sums_an_operand(&terms, &out, path.as_deref()) {
        dtype = crate::ir::DType::I64;
    }
    one(contract(&terms, &out)?.to(dtype)?)
}

/// Whether ATen's `einsum` sums some operand on its own (`at::sum`, which widens integers to
/// int64): one operand with contracted labels; else, walking the pairs in ATen's order (left to
/// right, or `path`'s), a contracted label that only one side of a pair holds with a size
/// other than 1 and that no later operand holds.
fn sums_an_operand(terms: &[Term], out: &[u32], path: Option<&[i64]>) -> bool {
    if terms.len() == 1 {
        return terms[0].labels.iter().any(|l| !out.contains(l));
    }
    // Per operand: each label's size (1 where it lacks the label).
    let mut count: BTreeMap<u32, usize> = BTreeMap::new();
    let mut ops: std::collections::VecDeque<BTreeMap<u32, usize>> = terms
        .iter()
        .map(|t| {
            let mut m = BTreeMap::new();
            for (l, &n) in t.labels.iter().zip(&t.f.shape) {
                m.insert(*l, n);
            }
            for l in m.keys() {
                *count.entry(*l).or_default() += 1;
            }
            m
        })
        .collect();
    let contracted: Vec<u32> = count.keys().copied().filter(|l| !out.contains(l)).collect();
    let mut steps = path.into_iter().flatten().copied();
    while ops.len() > 1 {
        let (i, j) = match path {
            None => (0, 1),
            Some(_) => {
                let (a, b) = (steps.next().unwrap_or(0), steps.next().unwrap_or(1));
                let (i, j) = (a.min(b).max(0) as usize, a.max(b).max(0) as usize);
                if i == j || j >= ops.len() {
                    return false;
                }
                (i, j)
            }
        };
        let (Some(b), Some(a)) = (ops.remove(j), ops.remove(i)) else { return false };
        let size = |m: &BTreeMap<u32, usize>, l: &u32| m.get(l).copied().unwrap_or(1);
        let mut product = a.clone();
        for (l, &n) in &b {
            let e = product.entry(*l).or_insert(1);
            *e = (*e).max(n);
        }
        for l in &contracted {
            let (sa, sb) = (size(&a, l) != 1, size(&b, l) != 1);
            let c = count.entry(*l).or_default();
            if sa && sb {
                *c = c.saturating_sub(1);
                if *c == 1 {
                    *c = 0;
                    product.insert(*l, 1);
                }
            } else if *c == 1 && (sa || sb) {
                return true;
            }
        }
        if path.is_some() {
            ops.push_back(product);
        } else {
            ops.push_front(product);
        }
    }
    false
}

fn labelled(t: &Tensor, labels: Vec<u32>) -> Term {
    Term { f: F::of(t), labels }
}

pub fn tensordot(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    let (da, db) = (cx.ints("dims_self")?, cx.ints("dims_other")?);
    if da.len() != db.len() {
        return shape_err(format!("tensordot contracts {} dims of self and {} of other", da.len(), db.len()));
    }
    let mut la: Vec<u32> = (0..a.ndim() as u32).collect();
    let mut lb: Vec<u32> = (100..100 + b.ndim() as u32).collect();
    for (&x, &y) in da.iter().zip(&db) {
        let (x, y) = (wrap_dim(x, a.ndim())?, wrap_dim(y, b.ndim())?);
        lb[y] = 1000 + x as u32;
        la[x] = 1000 + x as u32;
    }
    let out: Vec<u32> = la.iter().chain(&lb).copied().filter(|&l| l < 1000).collect();
    let r = contract(&[labelled(a, la), labelled(b, lb)], &out)?;
    one(r.to(promoted(&[a, b])?)?)
}

/// Contracts the last dim of `a` with the last dim of `b`: `inner`, `dot`, `vdot`.
fn inner_impl(a: &Tensor, b: &Tensor) -> OpResult<Tensor> {
    if a.ndim() == 0 || b.ndim() == 0 {
        let fs = super::fvec::broadcast_all(&[a, b])?;
        let v = fs[0].v.iter().zip(&fs[1].v).map(|(x, y)| x * y).collect();
        return F::new(fs[0].shape.clone(), v).to(promoted(&[a, b])?);
    }
    let la: Vec<u32> = (0..a.ndim() as u32 - 1).chain([999]).collect();
    let lb: Vec<u32> = (100..100 + b.ndim() as u32 - 1).chain([999]).collect();
    if a.shape().last() != b.shape().last() {
        return shape_err(format!("inner of {:?} and {:?}: last dims differ", a.shape(), b.shape()));
    }
    let out: Vec<u32> = la.iter().chain(&lb).copied().filter(|&l| l != 999).collect();
    contract(&[labelled(a, la), labelled(b, lb)], &out)?.to(promoted(&[a, b])?)
}

pub fn inner(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    one(inner_impl(cx.tensor("self")?, cx.tensor("other")?)?)
}

pub fn dot(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("tensor")?);
    if a.ndim() != 1 || b.ndim() != 1 || a.shape() != b.shape() || a.dtype() != b.dtype() {
        return shape_err(format!("dot expects two 1-D tensors of one size and dtype, got {:?} {} and {:?} {}", a.shape(), a.dtype(), b.shape(), b.dtype()));
    }
    one(inner_impl(a, b)?)
}

pub fn vdot(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b) = (cx.tensor("self")?, cx.tensor("other")?);
    if a.ndim() != 1 || b.ndim() != 1 || a.shape() != b.shape() {
        return shape_err(format!("vdot expects two 1-D tensors of one size, got {:?} and {:?}", a.shape(), b.shape()));
    }
    one(inner_impl(a, b)?)
}

pub fn mv(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, v) = (cx.tensor("self")?, cx.tensor("vec")?);
    if a.ndim() != 2 || v.ndim() != 1 || a.shape()[1] != v.shape()[0] {
        return shape_err(format!("mv of {:?} and {:?}", a.shape(), v.shape()));
    }
    one(inner_impl(a, v)?)
}

pub fn linalg_vecdot(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (x, y) = (cx.tensor("x")?, cx.tensor("y")?);
    let fs = super::fvec::broadcast_all(&[x, y])?;
    let n = fs[0].shape.len();
    let d = wrap_dim(cx.int_or("dim", -1)?, n)?;
    let l: Vec<u32> = (0..n as u32).collect();
    let out: Vec<u32> = l.iter().copied().filter(|&i| i as usize != d).collect();
    let terms = [Term { f: fs[0].clone(), labels: l.clone() }, Term { f: fs[1].clone(), labels: l }];
    one(contract(&terms, &out)?.to(promoted(&[x, y])?)?)
}

/// `y[..., o] = x1[..., i]·W[o, i, j]·x2[..., j] + b[o]`, in the order PyTorch's `_trilinear`
/// computes it: per output feature `o`, first `t[j] = Σ_i x1[i]·W[o, i, j]`, then
/// `Σ_j t[j]·x2[j]` (two batched matrix products, each stored in the result's dtype), then the
/// bias added (one more rounding).
pub fn bilinear(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let (a, b, w) = (cx.tensor("input1")?, cx.tensor("input2")?, cx.tensor("weight")?);
    let n = a.ndim();
    let fits = n > 0 && n == b.ndim() && a.shape()[..n - 1] == b.shape()[..n - 1] && w.ndim() == 3;
    if !fits || w.shape()[1] != a.shape()[n - 1] || w.shape()[2] != b.shape()[n - 1] {
        return shape_err(format!("bilinear of {:?}, {:?} with weight {:?}", a.shape(), b.shape(), w.shape()));
    }
    let dtype = promoted(&[a, b, w])?;
    let store = round_to(dtype);
    let (outs, n1, n2) = (w.shape()[0], w.shape()[1], w.shape()[2]);
    let rows: usize = a.shape()[..n - 1].iter().product();
    let (av, bv, wv) = (a.to_f64_vec(), b.to_f64_vec(), w.to_f64_vec());
    let bias = cx.opt_tensor("bias")?.map(|t| t.to_f64_vec());
    let mut out = Vec::with_capacity(rows * outs);
    for r in 0..rows {
        for o in 0..outs {
            let y: f64 = (0..n2)
                .map(|j| store((0..n1).map(|i| av[r * n1 + i] * wv[(o * n1 + i) * n2 + j]).sum::<f64>()) * bv[r * n2 + j])
                .sum();
            let y = store(y);
            out.push(bias.as_ref().map_or(y, |bias| y + bias[o % bias.len().max(1)]));
        }
    }
    let mut shape = a.shape()[..n - 1].to_vec();
    shape.push(outs);
    one(F::new(shape, out).to(dtype)?)
}

/// A chain of matrix products; a 1-D first (last) operand is a row (column) vector and its dim
/// is dropped from the result.
pub fn linalg_multi_dot(cx: &OpCx) -> OpResult<Vec<RtValue>> {
    let ts = cx.tensors("tensors")?;
    if ts.len() < 2 {
        return shape_err("multi_dot needs at least two tensors");
    }
    let dtype = promoted(&ts)?;
    let n = ts.len();
    let mut terms = Vec::with_capacity(n);
    let mut out = Vec::new();
    for (i, t) in ts.iter().enumerate() {
        let (row, col) = (i as u32, i as u32 + 1);
        let labels = match t.ndim() {
            1 if i == 0 => vec![col],
            1 if i == n - 1 => vec![row],
            2 => vec![row, col],
            _ => return shape_err(format!("multi_dot operand {i} has shape {:?}", t.shape())),
        };
        terms.push(labelled(t, labels));
    }
    if ts[0].ndim() == 2 {
        out.push(0);
    }
    if ts[n - 1].ndim() == 2 {
        out.push(n as u32);
    }
    // The order ATen multiplies in, each product rounded to the dtype as its `mm` stores it.
    // Matrix i is p[i] x p[i + 1]; 1-D ends are a row and a column vector.
    let mut p: Vec<i64> = terms.iter().enumerate().map(|(i, t)| if i == 0 && t.labels.len() == 1 { 1 } else { t.f.shape[0] as i64 }).collect();
    let last = &terms[n - 1];
    p.push(if last.labels.len() == 1 { 1 } else { last.f.shape[1] as i64 });
    let order = crate::decomp::rules::products::multi_dot_order(&p);
    let chained = chain(&terms, &order, 0, n - 1, dtype)?;
    one(contract(&[chained], &out)?.to(dtype)?)
}

/// The product of `terms[i..=j]`, split as `order` says, rounded to `dtype` after each product.
fn chain(terms: &[Term], order: &[Vec<usize>], i: usize, j: usize, dtype: crate::ir::DType) -> OpResult<Term> {
    if i == j {
        return Ok(Term { f: terms[i].f.clone(), labels: terms[i].labels.clone() });
    }
    let k = order[i][j];
    let (l, r) = (chain(terms, order, i, k, dtype)?, chain(terms, order, k + 1, j, dtype)?);
    let labels: Vec<u32> = l.labels.iter().chain(&r.labels).copied().filter(|x| *x != k as u32 + 1).collect();
    let f = F::of(&contract(&[l, r], &labels)?.to(dtype)?);
    Ok(Term { f, labels })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contraction_is_a_matrix_product() {
        let a = Term { f: F::new(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]), labels: vec![0, 1] };
        let b = Term { f: F::new(vec![2, 1], vec![5.0, 6.0]), labels: vec![1, 2] };
        assert_eq!(contract(&[a, b], &[0, 2]).unwrap().v, vec![17.0, 39.0]);
    }
}
