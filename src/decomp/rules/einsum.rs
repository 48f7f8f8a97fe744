//! `einsum` as ATen's `at::native::einsum` (aten/src/ATen/native/Linear.cpp) computes it: each
//! operand has its repeated labels reduced to diagonals, is unsqueezed and permuted to the
//! common order "output labels, then contracted labels" (labels ordered A–Z then a–z, the
//! ellipsis where the output puts it), and the operands are contracted pairwise, left to right
//! (or in the order of the `path` argument, which `torch.einsum` passes when opt_einsum chose
//! one for three or more operands), each pair with [`sumproduct_pair`]: `permute` + `reshape`
//! + `bmm`. Contracted dims present in one operand only are summed first, as ATen does.

use super::build::{self, not_one};
use super::{Rw, A};
use crate::decomp::RuleError;
use crate::ir::{Arg, SymIntArg, ValueId};
use std::collections::VecDeque;

const LETTERS: usize = 26;
const LABELS: usize = 2 * LETTERS;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Label {
    /// A subscript letter: A–Z are 0–25, a–z are 26–51 (ATen's order).
    Letter(usize),
    Ellipsis,
}

fn eq_err(message: impl Into<String>) -> RuleError {
    RuleError::Arg { name: "equation".into(), message: message.into() }
}

/// Labels of `s` (one operand's subscripts, or the output's), spaces ignored.
fn parse_labels(s: &str) -> Result<Vec<Label>, RuleError> {
    let mut out = Vec::new();
    let mut chars = s.chars().filter(|c| *c != ' ').peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' => {
                if chars.next() != Some('.') || chars.next() != Some('.') {
                    return Err(eq_err(format!("`{s}` has a `.` outside an ellipsis")));
                }
                if out.contains(&Label::Ellipsis) {
                    return Err(eq_err(format!("`{s}` has two ellipses")));
                }
                out.push(Label::Ellipsis);
            }
            'A'..='Z' => out.push(Label::Letter(c as usize - 'A' as usize)),
            'a'..='z' => out.push(Label::Letter(c as usize - 'a' as usize + LETTERS)),
            _ => return Err(eq_err(format!("invalid subscript `{c}`: subscripts must be in [a-zA-Z]"))),
        }
    }
    Ok(out)
}

/// Where every label and the ellipsis go in the common dim order.
struct Layout {
    /// Per letter, its dim in the common order.
    perm_index: [Option<usize>; LABELS],
    /// First dim of the ellipsis dims, and how many there are.
    ell_index: usize,
    ell_num_dim: usize,
    /// Dims `0..out_num_dim` are the output; the rest are contracted.
    out_num_dim: usize,
    total: usize,
}

fn layout(ops: &[Vec<Label>], ranks: &[usize], rhs: Option<&str>) -> Result<Layout, RuleError> {
    let mut count = [0usize; LABELS];
    let mut ell_num_dim = 0;
    for (i, (labels, &rank)) in ops.iter().zip(ranks).enumerate() {
        let named = labels.iter().filter(|l| **l != Label::Ellipsis).count();
        let has_ell = labels.contains(&Label::Ellipsis);
        if (has_ell && named > rank) || (!has_ell && named != rank) {
            return Err(eq_err(format!("{named} subscripts for operand {i} of rank {rank}")));
        }
        if has_ell {
            ell_num_dim = ell_num_dim.max(rank - named);
        }
        for l in labels {
            if let Label::Letter(s) = l {
                count[*s] += 1;
            }
        }
    }
    let mut perm_index = [None; LABELS];
    let mut next = 0;
    let mut ell_index = 0;
    let mut ell_in_output = false;
    match rhs {
        None => {
            // Implicit output: the ellipsis, then the labels used once, in order.
            next = ell_num_dim;
            ell_in_output = true;
            for s in 0..LABELS {
                if count[s] == 1 {
                    perm_index[s] = Some(next);
                    next += 1;
                }
            }
        }
        Some(rhs) => {
            for l in parse_labels(rhs)? {
                match l {
                    Label::Ellipsis => {
                        ell_index = next;
                        next += ell_num_dim;
                        ell_in_output = true;
                    }
                    Label::Letter(s) => {
                        if count[s] == 0 || perm_index[s].is_some() {
                            return Err(eq_err("an output subscript is repeated or appears in no operand"));
                        }
                        perm_index[s] = Some(next);
                        next += 1;
                    }
                }
            }
        }
    }
    let out_num_dim = next;
    if !ell_in_output {
        ell_index = next;
        next += ell_num_dim;
    }
    for s in 0..LABELS {
        if count[s] > 0 && perm_index[s].is_none() {
            perm_index[s] = Some(next);
            next += 1;
        }
    }
    Ok(Layout { perm_index, ell_index, ell_num_dim, out_num_dim, total: next })
}

/// One operand brought to the common order: repeated labels become diagonals, missing labels
/// become size-1 dims. Counts, per common dim, the operands where it is not of size 1.
fn align(rw: &mut Rw, x: ValueId, labels: &[Label], lay: &Layout, dim_counts: &mut [usize]) -> Result<ValueId, RuleError> {
    let mut op = x;
    let mut perm: Vec<Option<usize>> = vec![None; lay.total];
    let mut dim = 0;
    for l in labels {
        match *l {
            Label::Ellipsis => {
                let covered = rw.rank(x)? + 1 - labels.len();
                for j in lay.ell_num_dim - covered..lay.ell_num_dim {
                    if not_one(rw, op, dim)? {
                        dim_counts[lay.ell_index + j] += 1;
                    }
                    perm[lay.ell_index + j] = Some(dim);
                    dim += 1;
                }
            }
            Label::Letter(s) => {
                let p = lay.perm_index[s].ok_or_else(|| eq_err("a label without a place"))?;
                match perm[p] {
                    None => {
                        if not_one(rw, op, dim)? {
                            dim_counts[p] += 1;
                        }
                        perm[p] = Some(dim);
                        dim += 1;
                    }
                    Some(prev) => {
                        // A repeated label: its diagonal, moved back to where the label first was.
                        let (a, b) = (rw.meta(op)?.sizes[prev].clone(), rw.meta(op)?.sizes[dim].clone());
                        if a != b {
                            return Err(eq_err(format!("a repeated subscript has sizes {a} and {b}")));
                        }
                        let diag = rw.op(
                            "aten.diagonal.default",
                            vec![("self", A::T(op)), ("offset", A::I(0)), ("dim1", A::I(prev as i64)), ("dim2", A::I(dim as i64))],
                        )?;
                        let r = rw.rank(diag)?;
                        let mut order: Vec<usize> = (0..r - 1).collect();
                        order.insert(prev, r - 1);
                        op = build::permute(rw, diag, &order)?;
                    }
                }
            }
        }
    }
    let mut order = Vec::with_capacity(lay.total);
    for p in perm {
        order.push(match p {
            Some(d) => d,
            None => {
                op = build::unsqueeze(rw, op, dim as i64)?;
                dim += 1;
                dim - 1
            }
        });
    }
    build::permute(rw, op, &order)
}

/// `(left * right).sum(sum_dims)` through `bmm`, as ATen's `sumproduct_pair`: both operands
/// have the same rank; dims of size 1 in one of them broadcast. Summed dims stay as size 1
/// (`keepdim`).
pub(super) fn sumproduct_pair(rw: &mut Rw, left: ValueId, right: ValueId, sum_dims: &[usize]) -> Result<ValueId, RuleError> {
    if sum_dims.is_empty() {
        return build::binary(rw, "aten.mul.Tensor", left, A::T(right));
    }
    let rank = rw.rank(left)?;
    if rw.rank(right)? != rank {
        return Err(RuleError::Unsupported("sumproduct_pair of operands of different ranks".into()));
    }
    let (mut left, mut right) = (left, right);
    let (mut lro, mut lo, mut ro) = (Vec::new(), Vec::new(), Vec::new());
    let (mut lro_size, mut lo_size, mut ro_size, mut sum_size) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..rank {
        let (sl, sr) = (not_one(rw, left, i)?, not_one(rw, right, i)?);
        if sum_dims.contains(&i) {
            if sl && sr {
                same_size(rw, left, right, i)?;
                sum_size.push(rw.size(left, i)?);
            } else if sl {
                left = build::sum(rw, left, &[i], true)?;
            } else if sr {
                right = build::sum(rw, right, &[i], true)?;
            }
        } else if sl && sr {
            same_size(rw, left, right, i)?;
            lro.push(i);
            lro_size.push(rw.size(left, i)?);
        } else if sl {
            lo.push(i);
            lo_size.push(rw.size(left, i)?);
        } else {
            ro.push(i);
            ro_size.push(rw.size(right, i)?);
        }
    }
    let mut out_size = Vec::with_capacity(rank);
    for &d in lro.iter().chain(&lo) {
        out_size.push(rw.size(left, d)?);
    }
    out_size.extend(sum_dims.iter().map(|_| SymIntArg::Int(1)));
    for &d in &ro {
        out_size.push(rw.size(right, d)?);
    }
    let lperm: Vec<usize> = lro.iter().chain(&lo).chain(sum_dims).chain(&ro).copied().collect();
    let rperm: Vec<usize> = lro.iter().chain(sum_dims).chain(&ro).chain(&lo).copied().collect();
    let mut operm = vec![0; rank];
    for (i, &d) in lperm.iter().enumerate() {
        operm[d] = i;
    }
    let (lro_n, lo_n, ro_n, sum_n) = (rw.product(lro_size)?, rw.product(lo_size)?, rw.product(ro_size)?, rw.product(sum_size)?);
    let l = build::permute(rw, left, &lperm)?;
    let l = super::view::view_of(rw, l, vec![lro_n.clone(), lo_n, sum_n.clone()])?;
    let r = build::permute(rw, right, &rperm)?;
    let r = super::view::view_of(rw, r, vec![lro_n, sum_n, ro_n])?;
    let out = rw.op("aten.bmm.default", vec![("self", A::T(l)), ("mat2", A::T(r))])?;
    let out = build::view(rw, out, out_size)?;
    build::permute(rw, out, &operm)
}

/// Sizes that must match (neither is 1): an error when both are known and differ.
fn same_size(rw: &Rw, a: ValueId, b: ValueId, d: usize) -> Result<(), RuleError> {
    let (x, y) = (&rw.meta(a)?.sizes[d], &rw.meta(b)?.sizes[d]);
    match (x.as_int(), y.as_int()) {
        (Some(p), Some(q)) if p != q => Err(RuleError::Unsupported(format!("non-broadcast dimensions must match: {p} vs {q}"))),
        _ => Ok(()),
    }
}

pub fn einsum(rw: &mut Rw) -> Result<Vec<ValueId>, RuleError> {
    let equation = rw.string("equation", "")?;
    let tensors = match rw.passthrough("tensors")? {
        Some(Arg::Tensors(v)) if !v.is_empty() => v,
        _ => return Err(RuleError::Arg { name: "tensors".into(), message: "expected a non-empty tensor list".into() }),
    };
    let path = rw.ints("path")?;
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation.as_str(), None),
    };
    let labels = lhs.split(',').map(parse_labels).collect::<Result<Vec<_>, _>>()?;
    if labels.len() != tensors.len() {
        return Err(eq_err(format!("{} operands in the equation, {} given", labels.len(), tensors.len())));
    }
    let ranks = tensors.iter().map(|&t| rw.rank(t)).collect::<Result<Vec<_>, _>>()?;
    let lay = layout(&labels, &ranks, rhs)?;
    let mut dim_counts = vec![0usize; lay.total];
    let mut ops = VecDeque::with_capacity(tensors.len());
    for (&t, l) in tensors.iter().zip(&labels) {
        ops.push_back(align(rw, t, l, &lay, &mut dim_counts)?);
    }
    let n = tensors.len();
    if let Some(p) = &path {
        let want = if n == 1 { 1 } else { 2 * (n - 1) };
        if p.len() != want {
            return Err(RuleError::Arg { name: "path".into(), message: format!("{} entries, expected {want}", p.len()) });
        }
    }
    let mut steps = path.iter().flatten().copied();
    while ops.len() > 1 {
        let (i, j) = match &path {
            None => (0, 1),
            Some(_) => {
                let (a, b) = (steps.next().unwrap_or(0), steps.next().unwrap_or(1));
                let (i, j) = (a.min(b), a.max(b));
                if i == j || i < 0 || j as usize >= ops.len() {
                    return Err(RuleError::Arg { name: "path".into(), message: format!("invalid contraction ({a}, {b})") });
                }
                (i as usize, j as usize)
            }
        };
        let b = ops.remove(j).ok_or_else(|| RuleError::Unsupported("contraction index".into()))?;
        let a = ops.remove(i).ok_or_else(|| RuleError::Unsupported("contraction index".into()))?;
        let (mut sum_dims, mut a_sum, mut b_sum) = (Vec::new(), Vec::new(), Vec::new());
        for (d, count) in dim_counts.iter_mut().enumerate().take(lay.total).skip(lay.out_num_dim) {
            let (sa, sb) = (not_one(rw, a, d)?, not_one(rw, b, d)?);
            if sa && sb {
                *count = count.saturating_sub(1);
                if *count == 1 {
                    sum_dims.push(d);
                    *count = 0;
                }
            } else if *count == 1 {
                if sa {
                    a_sum.push(d);
                    *count = 0;
                } else if sb {
                    b_sum.push(d);
                    *count = 0;
                }
            }
        }
        let a = if a_sum.is_empty() { a } else { build::sum(rw, a, &a_sum, true)? };
        let b = if b_sum.is_empty() { b } else { build::sum(rw, b, &b_sum, true)? };
        let product = sumproduct_pair(rw, a, b, &sum_dims)?;
        if path.is_some() {
            ops.push_back(product);
        } else {
            ops.push_front(product);
        }
    }
    let result = ops.pop_front().ok_or_else(|| RuleError::Unsupported("no operand left".into()))?;
    if lay.total == lay.out_num_dim {
        return Ok(vec![result]);
    }
    let contracted: Vec<usize> = (lay.out_num_dim..lay.total).collect();
    if n > 1 {
        // Every contracted dim is size 1 by now.
        let kept = (0..lay.out_num_dim).map(|d| rw.size(result, d)).collect::<Result<Vec<_>, _>>()?;
        return Ok(vec![build::view(rw, result, kept)?]);
    }
    Ok(vec![build::sum(rw, result, &contracted, false)?])
}
