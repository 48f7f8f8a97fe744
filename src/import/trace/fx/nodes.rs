//! What each statement of a `forward` body means as a graph: a node, an alias, an in-place
//! operator, a write into a tensor, or a joint graph's unpacking of its inputs.

use super::{annotation_text, cut, pytree, Cx};
use crate::import::trace::python::{Py, Stmt};
use crate::ir::{InputKind, NodeMeta, ValueKind};

impl Cx {
    /// One logical line: its first statement, and the one after the `;` (which names the node of
    /// an in-place operator or a setitem); `line` is the text, for messages.
    pub(super) fn statement(&mut self, stmt: Stmt, next: Option<&Stmt>, line: &str, meta: &NodeMeta) -> Result<(), String> {
        match stmt {
            Stmt::Declare { target: Py::Name(name), annotation: Py::Str(annot) } => {
                self.declared.insert(name, annot);
                Ok(())
            }
            Stmt::Declare { .. } => Err(format!("expected `name: \"dtype[sizes][strides]device\"`, found `{}`", cut(line))),
            Stmt::AugAssign { target, op, symbol, value } => self.augmented(&target, (op, symbol), &value, next, line, meta),
            Stmt::Assign { targets, annotation, value } if targets.len() == 1 => match &targets[0] {
                Py::Subscript(base, idx) if annotation.is_none() && matches!(base.as_ref(), Py::Name(_)) => {
                    self.setitem(base, idx, &value, next, line, meta)
                }
                Py::Tuple(names) => {
                    let (names, from) = pytree::unpacking(names, &value)?;
                    self.unpack(names, &from)
                }
                Py::Name(name) => self.assign(name, annotation.as_ref(), &value, meta),
                other => Err(format!("expected a node name on the left of `=`, found `{}`", cut(&other.to_string()))),
            },
            _ => Err(format!("expected `name = expression`, found `{}`", cut(line))),
        }
    }

    /// `name: "annot" = rhs`: a node, or an alias when `rhs` is a name.
    fn assign(&mut self, name: &str, annotation: Option<&Py>, rhs: &Py, meta: &NodeMeta) -> Result<(), String> {
        let annot = annotation_text(annotation)?;
        if let Py::Name(src) = rhs {
            let v = *self.names.get(src).ok_or_else(|| format!("`{src}` is not defined before this line"))?;
            self.names.insert(name.to_string(), v);
            return Ok(());
        }
        let (target, args) = self.call(rhs)?;
        let kind = self.annotation_kind(annot.as_deref(), 0);
        let id = self
            .graph
            .add_node(name, &target, args, vec![(name.to_string(), kind)], meta.clone())
            .map_err(|e| e.to_string())?;
        let out = self.graph.node(id).outputs[0];
        self.names.insert(name.to_string(), out);
        Ok(())
    }

    /// The placeholders a joint graph unpacks from its parameter lists, typed by their declarations.
    fn unpack(&mut self, names: Vec<String>, from: &[String]) -> Result<(), String> {
        if let Some(c) = from.iter().find(|c| !self.containers.contains(c)) {
            return Err(format!("expected the inputs to be unpacked from the parameters of `forward`, but `{c}` is none of them"));
        }
        for pname in names {
            let annot = self.declared.remove(&pname);
            if annot.is_none() {
                self.warnings.push(format!("{}: input `{pname}` is unpacked without an annotation line before it", self.graph.name));
            }
            let kind = self.annotation_kind(annot.as_deref(), 0);
            let id = self.graph.add_input(&pname, kind, InputKind::UserInput).map_err(|e| e.to_string())?;
            self.names.insert(pname, id);
        }
        Ok(())
    }

    /// `a += b;  c: "annot" = a`: FX's print of an in-place operator node `c = operator.iadd(a, b)`.
    fn augmented(&mut self, target: &Py, op: (&str, &str), value: &Py, next: Option<&Stmt>, line: &str, meta: &NodeMeta) -> Result<(), String> {
        let (op, symbol) = op;
        let Py::Name(target) = target else {
            return Err(format!("expected a name before `{symbol}`, found `{}`", cut(&target.to_string())));
        };
        let (name, annot) = match next {
            Some(Stmt::Assign { targets, annotation, value: Py::Name(v) }) if v == target && targets.len() == 1 => match &targets[0] {
                Py::Name(name) => (name.clone(), annotation_text(annotation.as_ref())?),
                _ => return Err(format!("expected `name = {target}` after `{target} {symbol} ...`, found `{}`", cut(line))),
            },
            Some(_) => return Err(format!("expected `name = {target}` after `{target} {symbol} ...`, found `{}`", cut(line))),
            None => return Err(format!("expected `; name = {target}` after `{target} {symbol} ...`")),
        };
        let mut args = Vec::new();
        self.push_arg(&mut args, "arg0", &Py::Name(target.clone()), false)?;
        self.push_arg(&mut args, "arg1", value, false)?;
        let kind = self.annotation_kind(annot.as_deref(), 0);
        let id = self
            .graph
            .add_node(&name, &format!("_operator.i{op}"), args, vec![(name.clone(), kind)], meta.clone())
            .map_err(|e| e.to_string())?;
        let out = self.graph.node(id).outputs[0];
        self.names.insert(name, out);
        Ok(())
    }

    /// `x[idx] = v;  setitem = x;  setitem = None`: FX's print of an `operator.setitem` node
    /// (dynamo keeps in-place writes into a tensor, torchvision's Swin builds its attention mask
    /// so). The node is named by the alias that follows; it writes into `x` and returns nothing,
    /// so later reads of `x` stay edges from `x`.
    fn setitem(&mut self, base: &Py, idx: &Py, value: &Py, next: Option<&Stmt>, line: &str, meta: &NodeMeta) -> Result<(), String> {
        let name = match next {
            Some(Stmt::Assign { targets, .. }) => match targets.first() {
                Some(Py::Name(n)) => Some(n.clone()),
                _ => None,
            },
            _ => None,
        }
        .ok_or_else(|| format!("expected `; name = ...` naming the setitem node after `{}`", cut(line)))?;
        let mut args = Vec::new();
        self.push_arg(&mut args, "arg0", base, false)?;
        self.push_arg(&mut args, "arg1", idx, false)?;
        self.push_arg(&mut args, "arg2", value, false)?;
        let id = self
            .graph
            .add_node(&name, "_operator.setitem", args, vec![(name.clone(), ValueKind::Other("None".into()))], meta.clone())
            .map_err(|e| e.to_string())?;
        let out = self.graph.node(id).outputs[0];
        self.names.insert(name, out);
        Ok(())
    }
}
