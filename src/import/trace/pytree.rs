//! The pytree form of a graph dump: how AOT autograd prints its joint graph (`aot_joint_graph`),
//! whose `forward(self, primals, tangents)` takes two lists and returns a pytree:
//!
//! ```text
//! def forward(self, primals, tangents):
//!     primals_1: "f32[64, 32][32, 1]cpu"
//!     tangents_1: "f32[s77, 16][16, 1]cpu"
//!     primals_1, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
//!     ...
//!     return pytree.tree_unflatten([t_8, None, view_6], self._out_spec)
//! ```
//!
//! The graph's placeholders are the flattened names (each annotated on a line of its own before
//! the unpacking); the signature's parameters are only the containers they are unpacked from, and
//! the outputs are the leaves of the list handed to `tree_unflatten` (`None` for an input with no
//! gradient). The forward and backward graphs AOT autograd partitions it into are printed in the
//! plain form and need none of this.

use super::pyexpr::Py;

/// The call that unpacks the flattened inputs.
const FLATTEN: &str = "fx_pytree.tree_flatten_spec";

/// Whether the body (the lines after the signature, up to the first line indented no deeper than
/// `def`) unpacks its inputs from pytrees: then the signature's parameters are containers.
pub(super) fn flattens_inputs(body: &[&str], def_indent: usize) -> bool {
    body.iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > def_indent)
        .any(|l| l.contains(&format!("{FLATTEN}(")))
}

/// A bare annotation `name: "annot"`: a placeholder's type, declared before it is unpacked.
/// `None` when the statement is no bare annotation (it has an `=`, or no `:` outside quotes).
pub(super) fn declaration(stmt: &str) -> Option<Result<(String, String), String>> {
    let stmt = stmt.trim();
    let colon = stmt.find(':')?;
    let (name, rest) = (stmt[..colon].trim(), stmt[colon + 1..].trim());
    if !is_identifier(name) || !rest.starts_with(['"', '\'']) {
        return None;
    }
    let quote = rest.chars().next()?;
    Some(match rest[1..].find(quote) {
        Some(end) if rest[end + 2..].trim().is_empty() => Ok((name.to_string(), rest[1..1 + end].to_string())),
        Some(_) => return None,
        None => Err(format!("expected `{name}: \"dtype[sizes][strides]device\"`, found an unterminated annotation")),
    })
}

/// The names an unpacking binds, in order, and the containers they come from.
pub(super) type Unpacked = (Vec<String>, Vec<String>);

/// `a, b, c, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)`: the names bound,
/// in order, and the containers they come from. `lhs` and `rhs` are the two sides of the `=`;
/// `None` when the left side is no tuple of names (not an unpacking at all).
pub(super) fn unpacking(lhs: &str, rhs: &Py) -> Option<Result<Unpacked, String>> {
    let lhs = lhs.trim();
    if !lhs.contains(',') || lhs.contains(['"', '\'']) {
        return None;
    }
    let names: Vec<&str> = lhs.split(',').map(str::trim).filter(|n| !n.is_empty()).collect();
    if let Some(bad) = names.iter().find(|n| !is_identifier(n)) {
        return Some(Err(format!("expected names separated by `,` on the left of `=`, found `{bad}`")));
    }
    let Py::Call { func, args, .. } = rhs else {
        return Some(Err(format!("expected `{FLATTEN}([...], self._in_spec)` on the right of a tuple unpacking")));
    };
    if func.dotted().as_deref() != Some(FLATTEN) {
        let f = func.dotted().unwrap_or_else(|| "an expression".into());
        return Some(Err(format!("expected `{FLATTEN}(...)` on the right of a tuple unpacking, found a call of `{f}`")));
    }
    let containers = match args.first() {
        Some(Py::List(items) | Py::Tuple(items)) => items.iter().map(|p| p.dotted()).collect::<Option<Vec<String>>>(),
        Some(Py::Name(n)) => Some(vec![n.clone()]),
        _ => None,
    };
    let Some(containers) = containers else {
        return Some(Err(format!("expected `{FLATTEN}([primals, tangents], self._in_spec)`: a list of parameter names first")));
    };
    Some(Ok((names.into_iter().map(str::to_string).collect(), containers)))
}

/// The returned tree: the list handed to `pytree.tree_unflatten(list, self._out_spec)`, or the
/// returned value itself.
pub(super) fn returned_tree(py: Py) -> Py {
    match py {
        Py::Call { func, mut args, .. }
            if func.dotted().is_some_and(|f| f == "pytree.tree_unflatten" || f.ends_with("_pytree.tree_unflatten"))
                && !args.is_empty() =>
        {
            args.swap_remove(0)
        }
        other => other,
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::pyexpr;

    #[test]
    fn declarations_and_unpackings_as_aot_prints_them() {
        assert_eq!(
            declaration(r#"primals_1: "f32[64][1]cuda:0""#),
            Some(Ok(("primals_1".into(), "f32[64][1]cuda:0".into())))
        );
        assert_eq!(declaration(r#"x: "f32[3][1]cpu" = y"#), None, "an annotated assignment is no bare declaration");
        assert_eq!(declaration("x = y"), None);
        assert!(matches!(declaration(r#"tangents_1: "f32[s0, 64"#), Some(Err(e)) if e.contains("unterminated")));
        let rhs = pyexpr::parse("fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)").unwrap();
        let (names, containers) = unpacking("primals_1, tangents_1,", &rhs).unwrap().unwrap();
        assert_eq!((names, containers), (vec!["primals_1".to_string(), "tangents_1".into()], vec!["primals".to_string(), "tangents".into()]));
        assert!(unpacking("x", &rhs).is_none());
        let other = pyexpr::parse("foo(primals)").unwrap();
        assert!(matches!(unpacking("a, b", &other), Some(Err(e)) if e.contains("found a call of `foo`")));
        assert!(matches!(unpacking("a, b[0]", &rhs), Some(Err(e)) if e.contains("`b[0]`")));
        let tree = returned_tree(pyexpr::parse("pytree.tree_unflatten([a, None], self._out_spec)").unwrap());
        assert!(matches!(tree, Py::List(ref xs) if xs.len() == 2), "{tree:?}");
    }
}
