//! Readable FX graph dumps (`GraphModule.print_readable()`, as dynamo, AOT autograd and Inductor log
//! them) → [`Graph`]. Each line of the `forward` body is one node:
//!
//! ```text
//! # File: /m.py:67 in forward, code: h = self.ln1(x)
//! add: "f32[s77, 64][64, 1]cuda:0" = torch.ops.aten.add.Tensor(x, y);  x = y = None
//! ```
//!
//! The annotation gives the output's dtype, sizes, strides and device; the `# File:` comment above a
//! group of nodes gives their source location, kept in [`NodeMeta::stack_trace`] in Python's
//! traceback form so every importer's nodes read the same; `# Annotation: {...}` gives
//! `fx_traceback.annotate` marks, kept in [`NodeMeta::custom`]. Every line is read by the one
//! Python parser of trace import ([`super::python`]); this module gives the statements meaning.

mod annotation;
mod args;
mod nodes;
mod source;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

pub use annotation::parse_annotation;
pub use source::SourceLoc;

use super::python::{self, indent, lex, PyError, Py, Source, Stmt};
use super::pytree;
use crate::ir::{Graph, InputKind, NodeMeta, ValueId, ValueKind};

/// The [`crate::ir::Arg::Opaque`] kind of an argument kept as Python structure (see `Cx::structure`).
pub const PY_KIND: &str = "python";

/// A graph dump that cannot be read: the payload line (1-based) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct FxError {
    pub line: usize,
    pub message: String,
}

/// One line of the `forward` body: a comment, or a logical line's statements (parsed up front so
/// the joint-graph form can be told before the signature is read; a syntax error is reported
/// only when the line is reached, so errors come in line order).
enum BodyLine<'a> {
    Comment(&'a str),
    Code(&'a str, Result<Vec<Stmt>, PyError>),
}

/// Parses the first `forward` of a readable graph dump. Annotations that cannot be read become
/// warnings (the value is then of unknown kind); structural problems are errors.
pub fn parse_graph(name: &str, text: &str) -> Result<(Graph, Vec<String>), FxError> {
    let src = Source::new(text);
    let err = |line: usize, message: String| FxError { line: line + 1, message };
    let def = (0..src.line_count())
        .find(|&i| src.line(i).trim_start().starts_with("def forward("))
        .ok_or_else(|| FxError { line: 1, message: "no `def forward(` in the graph dump".into() })?;
    let def_indent = indent(src.line(def));
    let mut cx = Cx {
        graph: Graph::new(name),
        names: HashMap::new(),
        warnings: Vec::new(),
        containers: Vec::new(),
        declared: HashMap::new(),
    };

    // The signature may span lines, one parameter per line with `# PlainAOTInput(...)` comments.
    let (header, body_start) = src.logical(def);
    if lex::open_brackets(header).is_ok_and(|open| open > 0) {
        return Err(err(def, "the `def forward(` signature never closes (truncated?)".into()));
    }
    let params = match python::parse_line(header) {
        Ok(stmts) => match stmts.into_iter().next() {
            Some(Stmt::Def { params, .. }) => params,
            _ => return Err(err(def, "expected `def forward(...):`".into())),
        },
        Err(e) => return Err(err(def, format!("`def forward(...)`: {e}"))),
    };

    let (body, end) = read_body(&src, body_start, def_indent);
    // A joint graph's parameters are the lists its placeholders are unpacked from (see `pytree`).
    let pytree_inputs = body.iter().any(|(_, l)| match l {
        BodyLine::Code(_, Ok(stmts)) => stmts.iter().any(pytree::flattens_inputs),
        _ => false,
    });
    for param in params {
        if param.name == "self" {
            continue;
        }
        let annot = annotation_text(param.annotation.as_ref()).map_err(|m| err(def, m))?;
        if pytree_inputs && annot.is_none() {
            cx.containers.push(param.name);
            continue;
        }
        let kind = cx.annotation_kind(annot.as_deref(), def);
        let id = cx
            .graph
            .add_input(&param.name, kind, InputKind::UserInput)
            .map_err(|e| err(def, e.to_string()))?;
        cx.names.insert(param.name, id);
    }

    let mut meta = NodeMeta::default();
    let mut returned = false;
    for (i, line) in body {
        let (text, stmts) = match line {
            BodyLine::Comment(comment) => {
                if let Some(m) = source::comment_meta(comment) {
                    meta = m;
                }
                continue;
            }
            BodyLine::Code(text, Ok(stmts)) => (text, stmts),
            BodyLine::Code(text, Err(e)) => return Err(err(i, format!("`{}`: {e}", cut(text.trim())))),
        };
        let mut stmts = stmts.into_iter();
        let (Some(first), next) = (stmts.next(), stmts.next()) else { continue };
        if let Stmt::Return(value) = first {
            let py = value.ok_or_else(|| err(i, "return value: expected an expression after `return`".into()))?;
            // The outputs are the leaves of the returned pytree, as FX flattens them.
            let mut items = Vec::new();
            flatten(pytree::returned_tree(py), &mut items);
            for item in &items {
                let a = cx.arg(item).map_err(|m| err(i, m))?;
                cx.graph.outputs.push(a);
            }
            returned = true;
            break;
        }
        cx.statement(first, next.as_ref(), text.trim(), &meta).map_err(|m| err(i, m))?;
    }
    if let (false, Some((i, line))) = (returned, end) {
        if line.starts_with("class ") || line.starts_with("def ") {
            cx.warnings.push(format!("{name}: line {}: nested graph `{line}` is not imported", i + 1));
        }
    }
    let mut unused: Vec<&String> = cx.declared.keys().collect();
    unused.sort();
    if let Some(first) = unused.first() {
        cx.warnings.push(format!("{name}: {} annotated input(s) never unpacked from the parameters (`{first}` ...)", unused.len()));
    }
    if !returned {
        cx.warnings.push(format!("{name}: the graph dump ends before its `return` (truncated?); it has no outputs"));
    }
    Ok((cx.graph, cx.warnings))
}

/// The body's lines (0-based line numbers), up to the first line indented no deeper than `def`,
/// which is returned too (trimmed).
#[allow(clippy::type_complexity)]
fn read_body<'a>(src: &Source<'a>, start: usize, def_indent: usize) -> (Vec<(usize, BodyLine<'a>)>, Option<(usize, &'a str)>) {
    let mut body = Vec::new();
    let mut i = start;
    while i < src.line_count() {
        let raw = src.line(i);
        let line = raw.trim();
        if line.is_empty() {
            i += 1;
            continue;
        }
        if indent(raw) <= def_indent {
            return (body, Some((i, line)));
        }
        if let Some(comment) = line.strip_prefix('#') {
            body.push((i, BodyLine::Comment(comment)));
            i += 1;
            continue;
        }
        let (text, next) = src.logical(i);
        body.push((i, BodyLine::Code(text, python::parse_line(text))));
        i = next;
    }
    (body, None)
}

struct Cx {
    graph: Graph,
    /// Names as the dump spells them, aliases (`l_x_ = L_x_`) included.
    names: HashMap<String, ValueId>,
    warnings: Vec<String>,
    /// A joint graph's parameters (`primals`, `tangents`): lists, not placeholders.
    containers: Vec<String>,
    /// Bare annotations (`primals_1: "f32[64][1]cpu"`) of placeholders not unpacked yet.
    declared: HashMap<String, String>,
}

/// The text of a quoted annotation (`x: "f32[3][1]cpu"`); torch quotes every annotation it prints.
fn annotation_text(annotation: Option<&Py>) -> Result<Option<String>, String> {
    match annotation {
        None => Ok(None),
        Some(Py::Str(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("expected a quoted annotation, found `{}`", cut(&other.to_string()))),
    }
}

fn flatten(py: Py, out: &mut Vec<Py>) {
    match py {
        Py::Tuple(items) | Py::List(items) => items.into_iter().for_each(|x| flatten(x, out)),
        other => out.push(other),
    }
}

fn cut(s: &str) -> &str {
    let mut end = s.len().min(80);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Cx {
    fn is_value(&self, py: &Py) -> bool {
        matches!(py, Py::Name(n) if self.names.contains_key(n))
    }

    fn annotation_kind(&mut self, annot: Option<&str>, line: usize) -> ValueKind {
        let Some(text) = annot else {
            return ValueKind::Other("unannotated".into());
        };
        match parse_annotation(text) {
            Ok(kind) => kind,
            Err(why) => {
                let at = if line > 0 { format!(" (line {})", line + 1) } else { String::new() };
                self.warnings.push(format!("{}: annotation `{}`{at}: {why}", self.graph.name, cut(text)));
                ValueKind::Other(text.to_string())
            }
        }
    }
}
