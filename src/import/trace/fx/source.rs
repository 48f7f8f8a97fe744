//! Where a node came from: FX's `# File: ...` comments and torch's stack traces, and the
//! `# Annotation: {...}` marks above a group of nodes.

use crate::import::trace::python::{self, lex::leading_group, Py};
use crate::ir::NodeMeta;

/// Where a node came from in the user's code.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    pub function: String,
    pub code: String,
}

impl SourceLoc {
    /// Python traceback form, as torch's `node.meta["stack_trace"]` holds it.
    pub fn to_stack_trace(&self) -> String {
        format!("  File \"{}\", line {}, in {}\n    {}\n", self.file, self.line, self.function, self.code)
    }

    /// The innermost frame of a Python traceback (`File "f.py", line 3, in g\n    code`).
    pub fn from_stack_trace(trace: &str) -> Option<SourceLoc> {
        let at = trace.rfind("File \"")?;
        let rest = &trace[at + 6..];
        let (file, rest) = rest.split_once("\", line ")?;
        let (line, rest) = rest.split_once(", in ")?;
        let (function, rest) = rest.split_once('\n').unwrap_or((rest, ""));
        let code = rest.lines().next().unwrap_or("").trim();
        Some(SourceLoc {
            file: file.to_string(),
            line: line.trim().parse().ok()?,
            function: function.trim().to_string(),
            code: code.to_string(),
        })
    }

    /// Parses the comment FX prints: `File: /m.py:67 in forward, code: h = self.ln1(x)`.
    fn from_comment(text: &str) -> Option<SourceLoc> {
        let rest = text.trim().strip_prefix("File:")?.trim_start();
        let (head, code) = rest.split_once(", code: ").unwrap_or((rest, ""));
        let (place, function) = head.rsplit_once(" in ")?;
        let (file, line) = place.rsplit_once(':')?;
        Some(SourceLoc {
            file: file.to_string(),
            line: line.trim().parse().ok()?,
            function: function.trim().to_string(),
            code: code.trim().to_string(),
        })
    }
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} `{}`", self.file, self.line, self.code)
    }
}

/// Metadata from a comment line: `File: ...`, `Annotation: {...} File: ...`, `No stacktrace found`.
pub(super) fn comment_meta(comment: &str) -> Option<NodeMeta> {
    let c = comment.trim();
    if c.starts_with("No stacktrace found") {
        return Some(NodeMeta::default());
    }
    // A joint or backward graph's gradient nodes name the forward node they differentiate: its
    // location is theirs, which is how an op is followed across the two graphs.
    let c = c.strip_prefix("Backward of forward node:").map(str::trim_start).unwrap_or(c);
    let mut meta = NodeMeta::default();
    let mut rest = c;
    if let Some(a) = c.strip_prefix("Annotation:") {
        let (group, after) = leading_group(a)?;
        if let Ok(Py::Dict(entries)) = python::parse(group) {
            for (k, v) in entries {
                let key = match k {
                    Py::Str(s) => s,
                    other => format!("{other:?}"),
                };
                meta.custom.insert(key, py_json(&v));
            }
        }
        rest = after.trim_start();
    }
    let loc = SourceLoc::from_comment(rest);
    if loc.is_none() && meta.custom.is_empty() {
        return None;
    }
    meta.stack_trace = loc.map(|l| l.to_stack_trace());
    Some(meta)
}

fn py_json(py: &Py) -> serde_json::Value {
    use serde_json::Value as J;
    match py {
        Py::None => J::Null,
        Py::Bool(b) => J::Bool(*b),
        Py::Int(v) => J::from(*v),
        Py::Float(v) => serde_json::Number::from_f64(*v).map(J::Number).unwrap_or(J::Null),
        Py::Str(s) => J::String(s.clone()),
        Py::List(xs) | Py::Tuple(xs) => J::Array(xs.iter().map(py_json).collect()),
        Py::Dict(kv) => J::Object(
            kv.iter()
                .map(|(k, v)| (if let Py::Str(s) = k { s.clone() } else { format!("{k:?}") }, py_json(v)))
                .collect(),
        ),
        other => J::String(other.dotted().unwrap_or_else(|| format!("{other:?}"))),
    }
}
