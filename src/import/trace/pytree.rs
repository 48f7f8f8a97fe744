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

use super::python::{is_identifier, Py, Stmt};

/// The call that unpacks the flattened inputs.
const FLATTEN: &str = "fx_pytree.tree_flatten_spec";

/// Whether a statement of the body unpacks the inputs from pytrees: then the signature's
/// parameters are containers.
pub(super) fn flattens_inputs(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Assign { value: Py::Call { func, .. }, .. } if func.dotted().as_deref() == Some(FLATTEN))
}

/// The names an unpacking binds, in order, and the containers they come from.
pub(super) type Unpacked = (Vec<String>, Vec<String>);

/// `a, b, c, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)`: the names bound,
/// in order, and the containers they come from. `targets` are the items of the left side.
pub(super) fn unpacking(targets: &[Py], rhs: &Py) -> Result<Unpacked, String> {
    let mut names = Vec::new();
    for t in targets {
        match t {
            Py::Name(n) if is_identifier(n) => names.push(n.clone()),
            bad => return Err(format!("expected names separated by `,` on the left of `=`, found `{bad}`")),
        }
    }
    let Py::Call { func, args, .. } = rhs else {
        return Err(format!("expected `{FLATTEN}([...], self._in_spec)` on the right of a tuple unpacking"));
    };
    if func.dotted().as_deref() != Some(FLATTEN) {
        let f = func.dotted().unwrap_or_else(|| "an expression".into());
        return Err(format!("expected `{FLATTEN}(...)` on the right of a tuple unpacking, found a call of `{f}`"));
    }
    let containers = match args.first() {
        Some(Py::List(items) | Py::Tuple(items)) => items.iter().map(|p| p.dotted()).collect::<Option<Vec<String>>>(),
        Some(Py::Name(n)) => Some(vec![n.clone()]),
        _ => None,
    };
    let Some(containers) = containers else {
        return Err(format!("expected `{FLATTEN}([primals, tangents], self._in_spec)`: a list of parameter names first"));
    };
    Ok((names, containers))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::trace::python::{parse, parse_line};

    fn targets(text: &str) -> Vec<Py> {
        match parse(text).unwrap() {
            Py::Tuple(items) => items,
            other => vec![other],
        }
    }

    #[test]
    fn unpackings_as_aot_prints_them() {
        let stmt = parse_line("primals_1, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)").unwrap();
        assert!(flattens_inputs(&stmt[0]));
        assert!(!flattens_inputs(&parse_line("x = foo(primals)").unwrap()[0]));
        let rhs = parse("fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)").unwrap();
        let (names, containers) = unpacking(&targets("(primals_1, tangents_1,)"), &rhs).unwrap();
        assert_eq!((names, containers), (vec!["primals_1".to_string(), "tangents_1".into()], vec!["primals".to_string(), "tangents".into()]));
        let other = parse("foo(primals)").unwrap();
        assert!(matches!(unpacking(&targets("(a, b)"), &other), Err(e) if e.contains("found a call of `foo`")));
        assert!(matches!(unpacking(&targets("(a, b[0])"), &rhs), Err(e) if e.contains("`b[0]`")));
        let tree = returned_tree(parse("pytree.tree_unflatten([a, None], self._out_spec)").unwrap());
        assert!(matches!(tree, Py::List(ref xs) if xs.len() == 2), "{tree:?}");
    }
}
