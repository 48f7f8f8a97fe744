//! The lowering context of one kernel: reads graph values at symbolic coordinates, either from a
//! buffer (materialised values) or by inlining the producer's own lowering (views always, and
//! pointwise producers inside fused kernels) — Inductor's "loader composition".

use std::collections::{BTreeSet, HashMap, HashSet};

use super::kernel::{Access, BinOp, Elem, ExprId, KernelBuilder, RedOp, Ty, VarId};
use super::ops::OpKind;
use super::LowerError;
use crate::ir::{Arg, Graph, Node, NodeId, SymIntArg, TensorMeta, ValueId, ValueKind};
use crate::sym;

/// One kernel under construction.
pub struct Ctx<'a> {
    pub graph: &'a Graph,
    pub kb: KernelBuilder,
    /// Values held in buffers: graph inputs and the outputs of earlier kernels.
    pub materialized: &'a HashSet<ValueId>,
    /// The producers a fused kernel may inline; `None` in fallback kernels, which inline only
    /// views, as eager ATen kernels read their inputs from memory.
    pub fuse: Option<&'a HashSet<NodeId>>,
    /// Compute nodes inlined into this kernel, for the step's node list.
    pub inlined: BTreeSet<NodeId>,
    /// The node being lowered, for messages.
    pub node: Option<&'a Node>,
    /// While set, every buffer load is masked by it (reads 0 where it is false): lowerings
    /// whose coordinates may fall outside an input (scatter sources, data-dependent indices)
    /// read under it instead of touching memory out of bounds.
    pub mask: Option<ExprId>,
    /// Inlined producers already lowered at these coordinates. A producer read twice at the
    /// same element (GELU reads `x` twice) would otherwise be built twice: its reductions take
    /// fresh loop variables, so hash-consing cannot see that the two copies are one, and an
    /// inlined matrix product would be computed twice per element.
    /// Keyed by the mask in force too: a read under a mask is not the unmasked read.
    pub reads: HashMap<(ValueId, Vec<ExprId>, Option<ExprId>), ExprId>,
    /// The scratch buffers the node's staged kernels wrote for this, its output kernel
    /// (`lower::staged`); empty in every other kernel.
    pub staged: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub fn err(&self, node: &Node, message: impl Into<String>) -> LowerError {
        LowerError::Unsupported { node: node.name.clone(), target: node.target.clone(), message: message.into() }
    }

    pub fn meta(&self, v: ValueId) -> Result<&'a TensorMeta, LowerError> {
        self.graph.value(v).tensor().ok_or_else(|| LowerError::Internal(format!("value `{}` is not a tensor", self.graph.value(v).name)))
    }

    pub fn sizes(&self, v: ValueId) -> Result<Vec<sym::Expr>, LowerError> {
        Ok(self.meta(v)?.sizes.clone())
    }

    /// The sizes of `v` as kernel expressions.
    pub fn ksizes(&mut self, v: ValueId) -> Result<Vec<ExprId>, LowerError> {
        let s = self.sizes(v)?;
        Ok(s.iter().map(|e| self.kb.size(e)).collect())
    }

    /// `x` rounded to what a tensor of `v`'s dtype stores, and widened back: where PyTorch keeps
    /// an intermediate of a 16-bit float op in the tensor's dtype. The identity otherwise.
    pub fn round_as(&mut self, v: ValueId, x: ExprId) -> Result<ExprId, LowerError> {
        Ok(match Elem::from_dtype(self.meta(v)?.dtype) {
            Some(e) => self.kb.round_to(x, e),
            None => x,
        })
    }

    /// The element of value `v` at coordinates `idx` (one per dim of `v`).
    pub fn read(&mut self, v: ValueId, idx: &[ExprId]) -> Result<ExprId, LowerError> {
        let value = self.graph.value(v);
        let meta = self.meta(v)?;
        if idx.len() != meta.sizes.len() {
            return Err(LowerError::Internal(format!("`{}` read with {} coordinates, has {} dims", value.name, idx.len(), meta.sizes.len())));
        }
        if self.materialized.contains(&v) {
            let Some(elem) = Elem::from_dtype(meta.dtype) else {
                return Err(LowerError::DType { value: value.name.clone(), dtype: meta.dtype.name().into() });
            };
            let buf = self.kb.buffer_of(&value.name, Access::Read, elem);
            let strides = TensorMeta::contiguous_strides(&meta.sizes);
            let mut index = self.kb.i64(0);
            for (i, s) in idx.iter().zip(&strides) {
                let s = self.kb.size(s);
                let term = self.kb.binary(BinOp::Mul, *i, s)?;
                index = self.kb.binary(BinOp::Add, index, term)?;
            }
            return Ok(match self.mask {
                Some(m) => self.kb.load_masked(buf, index, m, 0.0),
                None => self.kb.load(buf, index),
            });
        }
        let Some(producer) = value.producer else {
            return Err(LowerError::Internal(format!("graph input `{}` has no buffer", value.name)));
        };
        let node = self.graph.node(producer);
        let out = node.outputs.iter().position(|o| *o == v).unwrap_or(0);
        let (kind, lower) = crate::ops::lowering(&node.target).ok_or_else(|| LowerError::NoLowering { node: node.name.clone(), target: node.target.clone() })?;
        if kind != OpKind::View && !self.fuse.is_some_and(|f| f.contains(&producer)) {
            return Err(LowerError::Internal(format!("`{}` is read before it is computed", value.name)));
        }
        if kind != OpKind::View {
            self.inlined.insert(producer);
        }
        let key = (v, idx.to_vec(), self.mask);
        if let Some(e) = self.reads.get(&key) {
            return Ok(*e);
        }
        let saved = self.node.replace(node);
        let r = lower(self, node, out, idx);
        self.node = saved;
        let mut e = r?;
        if kind != OpKind::View {
            e = self.wrap_to(e, meta.dtype)?;
        }
        self.reads.insert(key, e);
        Ok(e)
    }

    /// An inlined integer result narrowed (wrapping) to its tensor's dtype, as the eager op
    /// stores it: kernels compute integers in i64, so `u8` `3 - 5` would stay `-2` where PyTorch
    /// reads back `254` (trapezoid's `x[1:] - x[:-1]` on uint8 samples).
    fn wrap_to(&mut self, e: ExprId, dtype: crate::ir::DType) -> Result<ExprId, LowerError> {
        use crate::ir::DType;
        if self.kb.ty(e) != Ty::I64 {
            return Ok(e);
        }
        Ok(match dtype {
            DType::U8 => {
                let mask = self.kb.i64(0xff);
                self.kb.binary(BinOp::BitAnd, e, mask)?
            }
            DType::I8 | DType::I16 | DType::I32 => {
                let bits = match dtype {
                    DType::I8 => 56,
                    DType::I16 => 48,
                    _ => 32,
                };
                let shift = self.kb.i64(bits);
                let high = self.kb.binary(BinOp::Shl, e, shift)?;
                self.kb.binary(BinOp::Shr, high, shift)?
            }
            _ => e,
        })
    }

    /// Runs `f` with every load masked by `m` (and by any mask already in force).
    pub fn masked<T>(&mut self, m: ExprId, f: impl FnOnce(&mut Self) -> Result<T, LowerError>) -> Result<T, LowerError> {
        let m = match self.mask {
            Some(outer) => self.kb.and(outer, m)?,
            None => m,
        };
        let saved = self.mask.replace(m);
        let r = f(self);
        self.mask = saved;
        r
    }

    /// The tensor argument `name` of `node`.
    pub fn tensor(&self, node: &Node, name: &str) -> Result<ValueId, LowerError> {
        match node.arg(name) {
            Some(Arg::Tensor(v)) => Ok(*v),
            other => Err(self.err(node, format!("argument `{name}`: expected a tensor, got {other:?}"))),
        }
    }

    pub fn opt_tensor(&self, node: &Node, name: &str) -> Option<ValueId> {
        node.arg(name).and_then(Arg::as_tensor)
    }

    /// A number argument (int, float, bool or symbolic int) as an f32 expression.
    pub fn opt_number(&mut self, node: &Node, name: &str) -> Result<Option<ExprId>, LowerError> {
        Ok(Some(match node.arg(name) {
            None | Some(Arg::None) => return Ok(None),
            Some(Arg::Float(f)) => self.kb.f32(*f as f32),
            Some(Arg::Int(i)) => self.kb.f32(*i as f32),
            Some(Arg::Bool(b)) => self.kb.f32(*b as i32 as f32),
            Some(Arg::SymInt(s)) => {
                let e = self.sym_int(node, name, s)?;
                let k = self.kb.size(&e);
                self.kb.to_f32(k)
            }
            Some(other) => return Err(self.err(node, format!("argument `{name}`: expected a number, got {other:?}"))),
        }))
    }

    pub fn number_or(&mut self, node: &Node, name: &str, default: f32) -> Result<ExprId, LowerError> {
        match self.opt_number(node, name)? {
            Some(e) => Ok(e),
            None => Ok(self.kb.f32(default)),
        }
    }

    /// A constant float argument (eps, scale), for values that must be known at compile time.
    pub fn float_or(&self, node: &Node, name: &str, default: f64) -> Result<f64, LowerError> {
        match node.arg(name) {
            None | Some(Arg::None) => Ok(default),
            Some(Arg::Float(f)) => Ok(*f),
            Some(Arg::Int(i)) => Ok(*i as f64),
            // A Scalar may be a bool (`constant_pad_nd(bool_tensor, pad, True)`): 1 or 0.
            Some(Arg::Bool(b)) => Ok(f64::from(u8::from(*b))),
            Some(other) => Err(self.err(node, format!("argument `{name}`: expected a constant number, got {other:?}"))),
        }
    }

    pub fn bool_or(&self, node: &Node, name: &str, default: bool) -> Result<bool, LowerError> {
        match node.arg(name) {
            None | Some(Arg::None) => Ok(default),
            Some(Arg::Bool(b)) => Ok(*b),
            Some(other) => Err(self.err(node, format!("argument `{name}`: expected a bool, got {other:?}"))),
        }
    }

    pub fn str_or<'n>(&self, node: &'n Node, name: &str, default: &'n str) -> Result<&'n str, LowerError> {
        match node.arg(name) {
            None | Some(Arg::None) => Ok(default),
            Some(Arg::String(s)) => Ok(s),
            Some(other) => Err(self.err(node, format!("argument `{name}`: expected a string, got {other:?}"))),
        }
    }

    /// A SymInt argument's expression.
    pub fn sym_int_arg(&self, node: &Node, name: &str, s: &SymIntArg) -> Result<sym::Expr, LowerError> {
        self.sym_int(node, name, s)
    }

    fn sym_int(&self, node: &Node, name: &str, s: &SymIntArg) -> Result<sym::Expr, LowerError> {
        match s {
            SymIntArg::Int(i) => Ok(sym::Expr::int(*i)),
            SymIntArg::Value(v) => match &self.graph.value(*v).kind {
                ValueKind::SymInt(e) => Ok(e.clone()),
                other => Err(self.err(node, format!("argument `{name}`: expected a symbolic int, got {other:?}"))),
            },
        }
    }

    /// A SymInt-list argument (`input_size`), each entry as its expression.
    pub fn sym_ints(&self, node: &Node, name: &str) -> Result<Vec<sym::Expr>, LowerError> {
        match node.arg(name) {
            Some(Arg::Ints(v)) => Ok(v.iter().map(|i| sym::Expr::int(*i)).collect()),
            Some(Arg::SymInts(v)) => v.iter().map(|s| self.sym_int(node, name, s)).collect(),
            other => Err(self.err(node, format!("argument `{name}`: expected a list of ints, got {other:?}"))),
        }
    }

    /// An int-list argument (plain ints only: kernel geometry must be static).
    pub fn ints_or(&self, node: &Node, name: &str, default: &[i64]) -> Result<Vec<i64>, LowerError> {
        match node.arg(name) {
            None | Some(Arg::None) => Ok(default.to_vec()),
            Some(Arg::Ints(v)) => Ok(v.clone()),
            Some(Arg::Int(i)) => Ok(vec![*i]),
            Some(Arg::SymInts(v)) => v
                .iter()
                .map(|s| match s {
                    SymIntArg::Int(i) => Ok(*i),
                    SymIntArg::Value(_) => Err(self.err(node, format!("argument `{name}`: symbolic values are not supported here"))),
                })
                .collect(),
            Some(other) => Err(self.err(node, format!("argument `{name}`: expected ints, got {other:?}"))),
        }
    }

    pub fn int_or(&self, node: &Node, name: &str, default: i64) -> Result<i64, LowerError> {
        match node.arg(name) {
            None | Some(Arg::None) => Ok(default),
            Some(Arg::Int(i)) | Some(Arg::SymInt(SymIntArg::Int(i))) => Ok(*i),
            Some(other) => Err(self.err(node, format!("argument `{name}`: expected an int, got {other:?}"))),
        }
    }

    /// Reads tensor argument `name` broadcast to an output of coordinates `idx`, or the
    /// number it holds.
    pub fn operand(&mut self, node: &Node, name: &str, idx: &[ExprId], out_sizes: &[sym::Expr]) -> Result<ExprId, LowerError> {
        if let Some(v) = self.opt_tensor(node, name) {
            return self.read_broadcast(v, idx, out_sizes);
        }
        self.opt_number(node, name)?.ok_or_else(|| self.err(node, format!("argument `{name}` is missing")))
    }

    /// Reads `v` broadcast (numpy rules, right-aligned) to an output with `out_sizes`.
    pub fn read_broadcast(&mut self, v: ValueId, idx: &[ExprId], out_sizes: &[sym::Expr]) -> Result<ExprId, LowerError> {
        let sizes = self.sizes(v)?;
        let lead = idx.len().checked_sub(sizes.len()).ok_or_else(|| LowerError::Internal("broadcast to fewer dims".into()))?;
        let zero = self.kb.i64(0);
        let mut in_idx = Vec::with_capacity(sizes.len());
        for (d, s) in sizes.iter().enumerate() {
            let o = &out_sizes[lead + d];
            let broadcast = s.as_int() == Some(1) && o.as_int() != Some(1);
            in_idx.push(if broadcast { zero } else { idx[lead + d] });
        }
        self.read(v, &in_idx)
    }

    /// Folds `op` over the coordinates of `dims` of a tensor of `sizes`: `body` receives the
    /// full coordinates, with the reduced dims bound to fresh loop variables.
    pub fn reduce_dims(
        &mut self,
        op: RedOp,
        sizes: &[sym::Expr],
        dims: &[usize],
        base: &[ExprId],
        body: &mut ReduceBody<'_, 'a>,
    ) -> Result<ExprId, LowerError> {
        let mut idx = base.to_vec();
        let mut vars: Vec<(VarId, ExprId)> = Vec::new();
        for &d in dims {
            // A 0-d tensor's dim 0 (or -1, as `wrap_dims` accepts) is its one element.
            if sizes.is_empty() {
                continue;
            }
            let (Some(size), Some(slot)) = (sizes.get(d), idx.get_mut(d)) else {
                return Err(reduced_dim_out_of_range(d, sizes.len()));
            };
            let var = self.kb.fresh_var()?;
            *slot = self.kb.var(var);
            let extent = self.kb.size(size);
            vars.push((var, extent));
        }
        let mut acc = body(self, &idx)?;
        // Innermost loop is the last reduced dim, so consecutive iterations read adjacent memory.
        for (var, extent) in vars.into_iter().rev() {
            acc = self.kb.reduce(op, var, extent, acc)?;
        }
        Ok(acc)
    }

    /// Product of `sizes[d]` over `dims`, as f32.
    pub fn count(&mut self, sizes: &[sym::Expr], dims: &[usize]) -> Result<ExprId, LowerError> {
        let mut n = self.kb.i64(1);
        for &d in dims {
            if sizes.is_empty() {
                continue;
            }
            let s = self.kb.size(sizes.get(d).ok_or_else(|| reduced_dim_out_of_range(d, sizes.len()))?);
            n = self.kb.binary(BinOp::Mul, n, s)?;
        }
        Ok(self.kb.to_f32(n))
    }

    pub fn check_f32(&self, node: &Node, e: ExprId) -> Result<ExprId, LowerError> {
        if !self.kb.ty(e).is_float() {
            return Err(self.err(node, "expected a float result"));
        }
        Ok(e)
    }
}

/// The element a reduction folds, at full coordinates (reduced dims bound to loop variables).
pub type ReduceBody<'f, 'a> = dyn FnMut(&mut Ctx<'a>, &[ExprId]) -> Result<ExprId, LowerError> + 'f;

/// Normalises possibly negative `dims` for rank `ndim` (an empty list means every dim).
fn reduced_dim_out_of_range(d: usize, rank: usize) -> LowerError {
    LowerError::Internal(format!("reduced dim {d} is out of range for rank {rank}"))
}

pub fn wrap_dims(dims: &[i64], ndim: usize) -> Result<Vec<usize>, String> {
    if dims.is_empty() {
        return Ok((0..ndim).collect());
    }
    let mut out: Vec<usize> = Vec::with_capacity(dims.len());
    for &d in dims {
        // As PyTorch's maybe_wrap_dim: a 0-d tensor takes dims 0 and -1, as if it had one.
        let n = ndim.max(1) as i64;
        let w = if d < 0 { d + n } else { d };
        if w < 0 || w >= n {
            return Err(format!("dim {d} out of range for rank {ndim}"));
        }
        if !out.contains(&(w as usize)) {
            out.push(w as usize);
        }
    }
    out.sort_unstable();
    Ok(out)
}
