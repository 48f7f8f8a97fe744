//! `kernels A --against B`: the text of [`profile::compare`](crate::profile::compare)'s
//! comparison of two logs of one model.

use std::fmt::Write as _;

pub use crate::profile::compare::{compare, Comparison, NodeDiff, Side};

pub fn summary(c: &Comparison) -> String {
    let mut s = String::new();
    for (tag, k) in [("A", &c.a), ("B", &c.b)] {
        let time = k.device_us.map(|u| format!(", {u:.1} us attributed device time")).unwrap_or_default();
        let _ = writeln!(
            s,
            "{tag}: {}: {} generated kernels, {} library calls, {} fallbacks, {} launches{time}",
            k.file, k.generated, k.library, k.fallback, k.launches
        );
    }
    let changed: Vec<&NodeDiff> = c.nodes.iter().filter(|d| d.a != d.b).collect();
    let _ = writeln!(s, "\nnodes run differently ({} of {}):", changed.len(), c.nodes.len());
    for d in changed.iter().take(40) {
        let _ = writeln!(s, "  {:<40} A {:<8} B {}", d.node, d.a, d.b);
    }
    if changed.len() > 40 {
        let _ = writeln!(s, "  ... {} more", changed.len() - 40);
    }
    if c.nodes.iter().any(|d| d.a_us.is_some() || d.b_us.is_some()) {
        let _ = writeln!(s, "\nper node device time (largest differences first):");
        let fmt = |u: Option<f64>| u.map_or("-".to_string(), |u| format!("{u:.1}"));
        for d in c.nodes.iter().take(30) {
            let delta = d.b_us.unwrap_or(0.0) - d.a_us.unwrap_or(0.0);
            let _ = writeln!(s, "  {:<40} A {:>9} us  B {:>9} us  B-A {:>+9.1} us", d.node, fmt(d.a_us), fmt(d.b_us), delta);
        }
        if let (Some(a), Some(b)) = (c.a.device_us, c.b.device_us) {
            let _ = writeln!(s, "  total: A {a:.1} us, B {b:.1} us, B-A {:+.1} us", b - a);
        }
    }
    s
}
