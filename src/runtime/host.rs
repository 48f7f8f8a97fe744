//! What a plan run does on the host between launches: binds the unbacked symbols a sync step
//! reads back (or a host step's outputs reveal), checks the graph's runtime assertions with the
//! symbols bound so far, and runs host-fallback nodes through the interpreter.

use std::collections::{BTreeMap, HashMap};

use super::plan::RunError;
use crate::exec::{self, Generator, RtValue, Values};
use crate::ir::{Graph, Node, ValueId, ValueKind};
use crate::lower::{bare_symbol, SyncValue};
use crate::sym::{Bindings, Expr};

/// The scalars of one run: the bindings it started with plus every unbacked symbol bound
/// since, the unbacked float symbols (`zuf0`), and symbolic values host steps computed.
#[derive(Clone, Debug, Default)]
pub struct RunScalars {
    pub bindings: Bindings,
    pub floats: BTreeMap<String, f64>,
    computed: HashMap<ValueId, RtValue>,
}

/// Deepest chain of symbolic producers [`RunScalars::value_of`] follows.
const MAX_DEPTH: usize = 64;

impl RunScalars {
    /// Starts from `bindings` without their unbacked symbols: those are the run's to compute
    /// (a value a slider gave one would only be checked against the data, and fail).
    pub fn new(bindings: &Bindings) -> RunScalars {
        let backed = bindings.iter().filter(|(k, _)| !crate::sym::is_unbacked(k)).map(|(k, v)| (k.to_string(), v)).collect();
        RunScalars { bindings: backed, ..RunScalars::default() }
    }

    /// Takes the words a sync step of `node` read back: binds each unbound symbol, checks every
    /// other expression against its value.
    pub fn bind_sync(&mut self, node: &str, values: &[SyncValue], words: &[i64]) -> Result<(), RunError> {
        if words.len() != values.len() {
            return Err(RunError::Sync { node: node.into(), message: format!("read back {} values, expected {}", words.len(), values.len()) });
        }
        for (what, &word) in values.iter().zip(words) {
            if what.float {
                let f = f64::from_bits(word as u64);
                match bare_symbol(&what.expr) {
                    Some(s) => {
                        self.floats.insert(s.to_string(), f);
                    }
                    None => return Err(RunError::Sync { node: node.into(), message: format!("{}: a float {f} for `{}`, which is not a symbol", what.what, what.expr) }),
                }
                continue;
            }
            self.bind_int(node, &what.expr, word).map_err(|e| match e {
                RunError::Sync { node, message } => RunError::Sync { node, message: format!("{} ({}): {message}", what.what, what.expr) },
                e => e,
            })?;
        }
        Ok(())
    }

    /// `expr` takes the integer `v`: bound when it is an unbound symbol, else checked.
    fn bind_int(&mut self, node: &str, expr: &Expr, v: i64) -> Result<(), RunError> {
        // The symbol's range is the graph's to check: torch.export writes it as `_assert_scalar`
        // nodes, which the meta steps after this one evaluate with the bound value.
        if let Some(s) = bare_symbol(expr).filter(|s| self.bindings.get(s).is_none()) {
            self.bindings.set(s, v);
            return Ok(());
        }
        match expr.eval_int(&self.bindings) {
            Ok(want) if want == v => Ok(()),
            Ok(want) => Err(RunError::Sync { node: node.into(), message: format!("computed {v} for `{expr}`, which is {want} here") }),
            Err(e) => Err(RunError::Sync { node: node.into(), message: format!("computed {v} for `{expr}`, which cannot be evaluated: {e}") }),
        }
    }

    /// Binds the unbacked symbols `node`'s computed outputs reveal: a tensor dim whose size is a
    /// bare unbound symbol, a symbolic int or float output that is one. Anything else that can
    /// be evaluated is checked against the result.
    pub fn bind_outputs(&mut self, graph: &Graph, node: &Node, results: &[RtValue]) -> Result<(), RunError> {
        for (o, r) in node.outputs.iter().zip(results) {
            match (&graph.value(*o).kind, r) {
                (ValueKind::Tensor(meta), RtValue::Tensor(t)) if meta.sizes.len() == t.ndim() => {
                    for (e, &d) in meta.sizes.iter().zip(t.shape()) {
                        if bare_symbol(e).is_some() || e.eval_int(&self.bindings).is_ok() {
                            self.bind_int(&node.name, e, d as i64)?;
                        }
                    }
                }
                (ValueKind::SymInt(e), RtValue::Int(v)) if bare_symbol(e).is_some() || e.eval_int(&self.bindings).is_ok() => {
                    self.bind_int(&node.name, e, *v)?;
                }
                (ValueKind::SymFloat(e), RtValue::Float(f)) => {
                    if let Some(s) = bare_symbol(e) {
                        self.floats.insert(s.to_string(), *f);
                    }
                }
                _ => {}
            }
            if !matches!(r, RtValue::Tensor(_)) {
                self.computed.insert(*o, r.clone());
            }
        }
        Ok(())
    }

    /// The value of symbolic value `v`: what a host step computed for it, else its expression
    /// under the bindings, else its producer (symbolic arithmetic, a comparison) evaluated on
    /// its own symbolic arguments.
    pub fn value_of(&self, graph: &Graph, v: ValueId) -> Result<RtValue, String> {
        self.value_at(graph, v, 0)
    }

    fn value_at(&self, graph: &Graph, v: ValueId, depth: usize) -> Result<RtValue, String> {
        if let Some(x) = self.computed.get(&v) {
            return Ok(x.clone());
        }
        let value = graph.value(v);
        let direct = match &value.kind {
            ValueKind::SymInt(e) => e.eval_int(&self.bindings).map(RtValue::Int),
            ValueKind::SymBool(e) => e.eval_bool(&self.bindings).map(RtValue::Bool),
            ValueKind::SymFloat(e) => match bare_symbol(e).and_then(|s| self.floats.get(s)) {
                Some(f) => Ok(RtValue::Float(*f)),
                None => e.eval(&self.bindings).map(|x| match x {
                    crate::sym::Value::Int(i) => RtValue::Float(i as f64),
                    crate::sym::Value::Rational(p, q) => RtValue::Float(p as f64 / q as f64),
                    crate::sym::Value::Float(f) => RtValue::Float(f),
                    crate::sym::Value::Bool(b) => RtValue::Bool(b),
                }),
            },
            other => return Err(format!("`{}` is a {other:?}, not a symbolic scalar", value.name)),
        };
        let why = match direct {
            Ok(x) => return Ok(x),
            Err(e) => e.to_string(),
        };
        let producer = value.producer.map(|p| graph.node(p));
        match producer.filter(|_| depth < MAX_DEPTH) {
            Some(node) if scalar_only(graph, node) => {
                let out = node.outputs.iter().position(|o| *o == v).unwrap_or(0);
                let results = self.run_scalar_node(graph, node, depth + 1).map_err(|e| format!("`{}`: {why}; its producer: {e}", value.name))?;
                results.into_iter().nth(out).ok_or_else(|| format!("`{}`: its producer `{}` returned too few values", value.name, node.name))
            }
            _ => Err(format!("`{}` = `{}`: {why}", value.name, expr_of(&value.kind))),
        }
    }

    /// Runs a node that reads only symbolic scalars through the interpreter.
    fn run_scalar_node(&self, graph: &Graph, node: &Node, depth: usize) -> Result<Vec<RtValue>, String> {
        let mut values = Values::new(graph);
        for v in node.inputs() {
            values.set(v, self.value_at(graph, v, depth)?);
        }
        // It computes a symbolic scalar, and random ops yield tensors: it draws nothing.
        exec::run_node(graph, node, &values, &self.bindings, exec::NodeStream::default()).map_err(|e| match e {
            // The node is named by the caller's error already.
            exec::ExecError::Unsupported { message, .. } | exec::ExecError::BadArg { message, .. } | exec::ExecError::Shape { message, .. } => message,
            e => e.to_string(),
        })
    }

    /// A meta step of the device runner: a runtime assertion on symbolic scalars
    /// (`_assert_scalar`, `sym_constrain_range*`: nodes with no outputs that read no tensor)
    /// runs with the symbols bound so far; it fails the run, naming the node, when it does not
    /// hold or cannot be evaluated. Other meta nodes compute values that later consumers
    /// evaluate from their expressions.
    pub fn check(&self, graph: &Graph, node: &Node) -> Result<(), RunError> {
        if !node.outputs.is_empty() || !scalar_only(graph, node) {
            return Ok(());
        }
        let fail = |message: String| RunError::Assertion { node: node.name.clone(), target: node.target.clone(), message };
        self.run_scalar_node(graph, node, 0).map(|_| ()).map_err(|e| fail(format!("{e}{}", self.context(graph, node))))
    }

    /// ` (u0 = 3, u1 = 0)`: the bindings of the symbols a node's arguments mention.
    fn context(&self, graph: &Graph, node: &Node) -> String {
        let mut shown: Vec<String> = Vec::new();
        for v in node.inputs() {
            let mut stack = vec![v];
            let mut seen = 0;
            while let Some(v) = stack.pop() {
                seen += 1;
                if seen > MAX_DEPTH {
                    break;
                }
                let value = graph.value(v);
                for s in expr_of(&value.kind).free_symbols() {
                    if let Some(x) = self.bindings.get(&s) {
                        let b = format!("{s} = {x}");
                        if !shown.contains(&b) {
                            shown.push(b);
                        }
                    }
                }
                if let Some(p) = value.producer.map(|p| graph.node(p)).filter(|n| scalar_only(graph, n)) {
                    stack.extend(p.inputs());
                }
            }
        }
        if shown.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown.join(", "))
        }
    }
}

/// Whether `node` reads no tensor (so it can run on symbolic scalars alone) and has an
/// interpreter implementation.
fn scalar_only(graph: &Graph, node: &Node) -> bool {
    crate::ops::run_fn(&node.target).is_some() && node.inputs().all(|v| graph.value(v).tensor().is_none())
}

fn expr_of(kind: &ValueKind) -> Expr {
    match kind {
        ValueKind::SymInt(e) | ValueKind::SymBool(e) | ValueKind::SymFloat(e) => e.clone(),
        _ => Expr::int(0),
    }
}

/// Runs host step `node` on tensors the runner gathered: each tensor input (through `tensor`,
/// which reads it back from the device or takes the host copy, complex or real), each symbolic input from
/// `scalars`. Returns its outputs after binding the symbols they reveal.
pub fn run_host_node(
    graph: &Graph,
    node: &Node,
    scalars: &mut RunScalars,
    gen: &Generator,
    tensor: &mut dyn FnMut(ValueId) -> Result<RtValue, RunError>,
) -> Result<Vec<RtValue>, RunError> {
    let mut values = Values::new(graph);
    for v in node.inputs() {
        let x = match &graph.value(v).kind {
            ValueKind::Tensor(_) => tensor(v)?,
            ValueKind::Other(_) => continue,
            _ => scalars.value_of(graph, v).map_err(|message| RunError::Host { node: node.name.clone(), target: node.target.clone(), message })?,
        };
        values.set(v, x);
    }
    let results = exec::run_node(graph, node, &values, &scalars.bindings, gen.stream(crate::ops::rng::stream_of(graph, node)))?;
    scalars.bind_outputs(graph, node, &results)?;
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Arg, NamedArg, NodeMeta, SymIntArg};

    fn value(what: &'static str, expr: Expr) -> SyncValue {
        SyncValue { expr, float: false, what }
    }

    #[test]
    fn a_sync_binds_unbound_symbols_and_checks_the_rest() {
        let mut s = RunScalars::new(&Bindings::from_iter([("s0".to_string(), 4)]));
        let values = [value("count", Expr::symbol("u0")), value("rows", Expr::symbol("s0")), value("negatives", Expr::int(0))];
        s.bind_sync("nz", &values, &[3, 4, 0]).unwrap();
        assert_eq!(s.bindings.get("u0"), Some(3));
        let e = s.bind_sync("nz", &values, &[3, 5, 0]).unwrap_err().to_string();
        assert!(e.contains("nz") && e.contains("rows") && e.contains("computed 5") && e.contains("is 4"), "{e}");
        let e = s.bind_sync("nz", &values, &[3, 4, 2]).unwrap_err().to_string();
        assert!(e.contains("negatives"), "{e}");
        let float = [SyncValue { expr: Expr::symbol("zuf0"), float: true, what: "the element" }];
        s.bind_sync("item", &float, &[2.5f64.to_bits() as i64]).unwrap();
        assert_eq!(s.floats.get("zuf0"), Some(&2.5));
    }

    #[test]
    fn an_assertion_runs_on_the_bound_symbols_and_names_its_node() {
        let mut g = Graph::new("g");
        let u0 = Expr::symbol("u0");
        let n = g.add_input("n", ValueKind::SymInt(u0.clone()), crate::ir::InputKind::UserInput).unwrap();
        let args = vec![
            NamedArg { name: "a".into(), arg: Arg::SymInt(SymIntArg::Value(n)), kwarg: false },
            NamedArg { name: "b".into(), arg: Arg::Int(2), kwarg: false },
        ];
        let le = g.add_node("le", "_operator.le", args, vec![("le".into(), ValueKind::SymBool(Expr::le(u0, Expr::int(2))))], NodeMeta::default()).unwrap();
        let le = g.node(le).outputs[0];
        let args = vec![
            NamedArg { name: "self".into(), arg: Arg::SymBool(le), kwarg: false },
            NamedArg { name: "assert_msg".into(), arg: Arg::String("u0 <= 2".into()), kwarg: false },
        ];
        let check = g.add_node("check_le", "aten._assert_scalar.default", args, vec![], NodeMeta::default()).unwrap();
        let node = g.node(check).clone();
        let unbound = RunScalars::new(&Bindings::new()).check(&g, &node).unwrap_err().to_string();
        assert!(unbound.contains("check_le") && unbound.contains("u0"), "an assertion that cannot be evaluated fails: {unbound}");
        // An unbacked symbol is bound by the sync step that reads it back, not by the caller's
        // bindings (`new` drops those).
        let synced = |v: i64| {
            let mut s = RunScalars::new(&Bindings::from_iter([("u0".to_string(), 7)]));
            s.bind_sync("n", &[SyncValue { expr: Expr::symbol("u0"), float: false, what: "count" }], &[v]).unwrap();
            s
        };
        synced(2).check(&g, &node).unwrap();
        let e = synced(3).check(&g, &node).unwrap_err().to_string();
        assert!(e.contains("check_le") && e.contains("u0 <= 2") && e.contains("u0 = 3"), "{e}");
    }
}
