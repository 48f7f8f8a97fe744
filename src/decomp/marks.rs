//! Which nodes the user marked for decomposition in lite mode.

use crate::ir::{Graph, Node};

/// Marks from the command line (`--mark NAME`, `--mark op:TARGET`, `--mark module:PATH`);
/// nodes annotated `compile_with_inductor` in the file are always marked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    pub names: Vec<String>,
    pub ops: Vec<String>,
    pub modules: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MarkError {
    #[error("--mark {spec}: no node of graph `{graph}` matches")]
    NoMatch { spec: String, graph: String },
    #[error("--mark {0}: empty after its prefix")]
    Empty(String),
}

impl Marks {
    /// Parses `--mark` specs.
    pub fn parse(specs: &[String]) -> Result<Marks, MarkError> {
        let mut m = Marks::default();
        for s in specs {
            let (list, value) = if let Some(op) = s.strip_prefix("op:") {
                (&mut m.ops, op.strip_prefix("torch.ops.").unwrap_or(op))
            } else if let Some(path) = s.strip_prefix("module:") {
                (&mut m.modules, path)
            } else {
                (&mut m.names, s.as_str())
            };
            if value.is_empty() {
                return Err(MarkError::Empty(s.clone()));
            }
            list.push(value.to_string());
        }
        Ok(m)
    }

    /// Whether `node` is marked: annotated in the file, or matched by a spec.
    pub fn marks(&self, node: &Node) -> bool {
        node.meta.compile_with_inductor() || self.matches_spec(node)
    }

    /// Whether a command-line spec matches `node`. An op spec without an overload
    /// (`aten.gelu`) matches every overload; a module spec matches the module and its children.
    pub fn matches_spec(&self, node: &Node) -> bool {
        self.names.iter().any(|n| n == &node.name)
            || self.ops.iter().any(|o| {
                node.target == *o || node.target.strip_prefix(o.as_str()).is_some_and(|rest| rest.starts_with('.'))
            })
            || self.modules.iter().any(|p| {
                node.meta.nn_module_stack.iter().any(|f| f.path == *p || f.path.starts_with(&format!("{p}.")))
            })
    }

    /// Every spec must match at least one node, so a typo is an error, not a silent no-op.
    pub fn check_against(&self, graph: &Graph) -> Result<(), MarkError> {
        let single = |names: Vec<String>, ops: Vec<String>, modules: Vec<String>| Marks { names, ops, modules };
        let specs = self
            .names
            .iter()
            .map(|n| (n.clone(), single(vec![n.clone()], vec![], vec![])))
            .chain(self.ops.iter().map(|o| (format!("op:{o}"), single(vec![], vec![o.clone()], vec![]))))
            .chain(self.modules.iter().map(|p| (format!("module:{p}"), single(vec![], vec![], vec![p.clone()]))));
        for (spec, m) in specs {
            if !graph.nodes.iter().any(|n| m.matches_spec(n)) {
                return Err(MarkError::NoMatch { spec, graph: graph.name.clone() });
            }
        }
        Ok(())
    }
}
