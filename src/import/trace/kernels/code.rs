//! Reading Inductor's output code: the kernels it defines at its top level (with the comment
//! block above each) and the launches in `call()`, through trace import's Python reader.

use std::collections::BTreeMap;

use super::{Kernel, KernelKind, KernelSource, KernelTable, Launch};
use crate::import::trace::python::lex::{Lexer, Tok, Token};
use crate::import::trace::python::{self, indent, Py, Source, Stmt};

/// What the comment block above a kernel's definition says.
#[derive(Default)]
pub(super) struct DefComments {
    pub(super) path: Option<String>,
    pub(super) source_nodes: Vec<String>,
    pub(super) post_grad: Vec<String>,
}

/// A kernel definition of the output code's top level.
pub(super) struct Definition<'a> {
    pub(super) name: &'a str,
    pub(super) flavour: &'a str,
    /// The lines of the first triple-quoted argument after the one that opens it, up to the
    /// line that closes it (the kernel's source as Inductor wrote it, raw).
    pub(super) source: Option<String>,
    /// The source string never closes (the log was cut off in it).
    pub(super) unterminated: bool,
}

fn is_triple_quote(text: &str) -> bool {
    text.starts_with("'''") || text.starts_with("\"\"\"")
}

/// `name = async_compile.<flavour>(args...)` at the start of `text` (the output code from a
/// line on; only as much is read as the call takes).
pub(super) fn kernel_definition(text: &str) -> Option<Definition<'_>> {
    if text.starts_with(char::is_whitespace) {
        return None;
    }
    let mut lexer = Lexer::new(text);
    let mut head = Vec::new();
    for _ in 0..6 {
        head.push(lexer.next()?.ok()?);
    }
    let word = |t: &Token| &text[t.start..t.end];
    let [name, eq, module, dot, flavour, open] = head.as_slice() else { return None };
    let shape = (&name.tok, &eq.tok, word(module), &dot.tok, &flavour.tok, &open.tok);
    if !matches!(shape, (Tok::Name(_), Tok::Op("="), "async_compile", Tok::Op("."), Tok::Name(_), Tok::Op("("))) {
        return None;
    }
    let mut def = Definition { name: word(name), flavour: word(flavour), source: None, unterminated: false };
    let mut depth = 1;
    for t in lexer {
        let t = match t {
            Ok(t) => t,
            Err(e) => {
                if depth == 1 && text.get(e.pos..).is_some_and(is_triple_quote) {
                    def.unterminated = true;
                    let body = text[e.pos + 3..].split_once('\n').map_or("", |(_, b)| b);
                    let lines: Vec<&str> = body.lines().collect();
                    def.source = (!lines.is_empty()).then(|| lines.join("\n"));
                }
                break;
            }
        };
        match t.tok {
            Tok::Str(_) if depth == 1 => {
                let raw = word(&t).trim_start_matches(|c: char| c.is_ascii_alphabetic());
                if is_triple_quote(raw) {
                    // The lines between the one that opens the string and the one that closes it.
                    let inner = &raw[3..raw.len() - 3];
                    def.source = inner.split_once('\n').and_then(|(_, body)| body.rsplit_once('\n')).map(|(code, _)| code.to_string());
                    break;
                }
            }
            Tok::Op("(" | "[" | "{") => depth += 1,
            Tok::Op(")" | "]" | "}") => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    Some(def)
}

/// Reads the `#` lines right above a kernel definition.
pub(super) fn def_comments(before: &[&str]) -> DefComments {
    let start = before.iter().rposition(|l| !l.starts_with('#')).map_or(0, |i| i + 1);
    let block = &before[start..];
    let mut out = DefComments::default();
    let mut mapping = false;
    let mut fragment = Vec::new();
    let mut in_fragment = false;
    for l in block {
        let c = l.trim_start_matches('#');
        if let Some(p) = c.trim().strip_prefix("kernel path:") {
            out.path = Some(p.trim().to_string());
        } else if let Some(nodes) = source_nodes(c) {
            out.source_nodes = nodes;
        } else if c.trim() == "Source node to ATen node mapping:" {
            mapping = true;
            in_fragment = false;
        } else if c.trim() == "Graph fragment:" {
            mapping = false;
            in_fragment = true;
        } else if mapping {
            if let Some((_, rhs)) = c.split_once("=>") {
                for n in rhs.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !out.post_grad.iter().any(|x| x == n) {
                        out.post_grad.push(n.to_string());
                    }
                }
            } else {
                mapping = false;
            }
        } else if in_fragment {
            if let Some(rest) = c.trim().strip_prefix('%') {
                if c.contains("call_function[") {
                    if let Some(name) = rest.split_whitespace().next() {
                        fragment.push(name.to_string());
                    }
                }
            }
        }
    }
    if out.post_grad.is_empty() {
        out.post_grad = fragment;
    }
    out
}

/// `# Topologically Sorted Source Nodes: [a, b], Original ATen: [...]` → `[a, b]`.
fn source_nodes(comment: &str) -> Option<Vec<String>> {
    let rest = comment.trim().strip_prefix("Topologically Sorted Source Nodes: [")?;
    let end = rest.find(']')?;
    Some(rest[..end].split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
}

/// Finds every launch in `call()` (and in `partition_N()` functions, which `call()` runs), in
/// program order, adding library and fallback call sites as kernels.
pub(super) fn launches(src: &Source, table: &mut KernelTable, by_name: &mut BTreeMap<String, usize>) {
    let mut body_indent: Option<usize> = None;
    let mut pending_nodes: Option<Vec<String>> = None;
    let mut pending_handle: Option<(String, u64)> = None;
    let mut ordinal: BTreeMap<String, usize> = BTreeMap::new();
    let mut next = 0;
    while next < src.line_count() {
        let at = next;
        let raw = src.line(at);
        let indent = indent(raw);
        let line = raw.trim();
        let text = if line.is_empty() || line.starts_with('#') {
            next += 1;
            line
        } else {
            let (text, after) = src.logical(at);
            next = after;
            text
        };
        if line.is_empty() {
            continue;
        }
        if let Some(name) = def_name(line) {
            body_indent = (name == "call" || name.starts_with("partition_")).then_some(indent + 1);
            continue;
        }
        let Some(min) = body_indent else { continue };
        if indent < min {
            body_indent = None;
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if let Some(nodes) = source_nodes(c) {
                pending_nodes = Some(nodes);
            } else if let Some(h) = c.trim().strip_prefix("[Provenance debug handles]") {
                pending_handle = h.trim().rsplit_once(':').and_then(|(n, v)| Some((n.to_string(), v.trim().parse().ok()?)));
            }
            continue;
        }
        let Some((callee, kind)) = launch_callee(text, by_name) else { continue };
        let handle = pending_handle.take().filter(|(n, _)| *n == callee || n.ends_with(&callee)).map(|(_, h)| h);
        let call_nodes = pending_nodes.take();
        let index = match kind {
            Some(k) => {
                let n = ordinal.entry(callee.clone()).or_insert(0);
                *n += 1;
                let name = match handle {
                    Some(h) => format!("{callee}:{h}"),
                    None => format!("{callee}#{n}"),
                };
                table.kernels.push(Kernel {
                    name,
                    callee: callee.clone(),
                    kind: k,
                    source: KernelSource::Library,
                    nodes: call_nodes.unwrap_or_default(),
                    post_grad_nodes: Vec::new(),
                    call_sites: 0,
                    stack_traces: Vec::new(),
                    compile_time_us: None,
                    num_configs: None,
                });
                table.kernels.len() - 1
            }
            None => {
                let idx = by_name[&callee];
                let k = &mut table.kernels[idx];
                for n in call_nodes.unwrap_or_default() {
                    if !k.nodes.contains(&n) {
                        k.nodes.push(n);
                    }
                }
                idx
            }
        };
        table.kernels[index].call_sites += 1;
        table.launches.push(Launch { kernel: index, line: at + 1, handle });
    }
}

/// `def name(` → `name`.
fn def_name(line: &str) -> Option<&str> {
    let mut lexer = Lexer::new(line);
    let (Some(Ok(def)), Some(Ok(name))) = (lexer.next(), lexer.next()) else { return None };
    matches!((&def.tok, &name.tok), (Tok::Name(d), Tok::Name(_)) if d == "def").then(|| &line[name.start..name.end])
}

/// The callee a `call()` statement launches: a defined kernel (`k.run(` or `k(`: kind `None`), a
/// library kernel (`extern_kernels.mm(`) or an ATen fallback (`torch.ops.aten.cumsum.default(`).
/// Only the first statement of the line is read, as a call or `name = call`.
fn launch_callee(text: &str, by_name: &BTreeMap<String, usize>) -> Option<(String, Option<KernelKind>)> {
    let stmt = python::parse_line(text).ok()?.into_iter().next()?;
    let call = match stmt {
        Stmt::Expr(call) => call,
        Stmt::Assign { targets, annotation: None, value } if matches!(targets.as_slice(), [Py::Name(_)]) => value,
        _ => return None,
    };
    let Py::Call { func, .. } = call else { return None };
    let func = func.dotted()?;
    if let Some(name) = func.strip_suffix(".run").filter(|n| by_name.contains_key(*n)) {
        return Some((name.to_string(), None));
    }
    if by_name.contains_key(&func) {
        return Some((func, None));
    }
    if func.starts_with("extern_kernels.") {
        return Some((func, Some(KernelKind::Extern)));
    }
    if let Some(op) = func.strip_prefix("torch.ops.").filter(|f| f.split('.').count() >= 2) {
        return Some((op.to_string(), Some(KernelKind::Fallback)));
    }
    None
}
