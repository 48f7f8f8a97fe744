//! The human-readable diff: per graph pair, per group, each difference naming nodes, ops and
//! shapes. `-` only in A, `+` only in B, `~` changed (each change on its own line).

use std::fmt::Write as _;

use super::{Class, Entry, FileDiff, GraphDiff, NodeRef};

pub fn file_diff(d: &FileDiff) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "A: {}\nB: {}", d.a_file, d.b_file);
    for p in &d.pairs {
        let label = if p.a == p.b { p.a.clone() } else { format!("{} ↔ {}", p.a, p.b) };
        s.push('\n');
        s.push_str(&graph_diff(&label, &p.diff));
    }
    for (tag, list) in [("A", &d.only_a), ("B", &d.only_b)] {
        for g in list {
            let _ = writeln!(s, "\n{g}: only in {tag} (no graph of that stage and compile in the other file)");
        }
    }
    s
}

pub fn graph_diff(label: &str, d: &GraphDiff) -> String {
    let mut s = String::new();
    let c = &d.counts;
    let renames = |pairs: &[(String, String)]| pairs.iter().map(|(p, q)| format!("{p} → {q}")).collect::<Vec<_>>().join(", ");
    if !d.differs() {
        // What was mapped to make them equal is still worth saying.
        let mut mapped = String::new();
        for (what, pairs) in [("symbols", &d.symbols), ("devices", &d.devices)] {
            if !pairs.is_empty() {
                let _ = write!(mapped, "; {what} {}", renames(pairs));
            }
        }
        let _ = writeln!(s, "{label}: same ({} inputs and nodes{mapped})", c.same);
        return s;
    }
    let _ = writeln!(s, "{label}: {} changed, {} only in A, {} only in B, {} same", c.changed, c.only_a, c.only_b, c.same);
    if !d.symbols.is_empty() {
        let _ = writeln!(s, "  symbols: {}", renames(&d.symbols));
    }
    if !d.devices.is_empty() {
        let _ = writeln!(s, "  devices: {}", renames(&d.devices));
    }
    for g in d.groups.iter().filter(|g| g.counts.differs()) {
        let name = if g.name.is_empty() { "(top level)" } else { g.name.as_str() };
        let _ = writeln!(s, "  {name}:");
        for e in g.entries.iter().map(|&i| &d.entries[i]).filter(|e| e.class != Class::Same) {
            entry(&mut s, e);
        }
    }
    let same_groups = d.groups.iter().filter(|g| !g.counts.differs()).count();
    if same_groups > 0 {
        let _ = writeln!(s, "  ({same_groups} other groups the same)");
    }
    s
}

fn node(r: &NodeRef) -> String {
    format!("{:<28} {:<36} {}", r.name, r.op, r.outputs.join(", "))
}

fn entry(s: &mut String, e: &Entry) {
    match (e.class, &e.a, &e.b) {
        (Class::OnlyA, Some(a), _) => {
            let _ = writeln!(s, "    - {}", node(a));
        }
        (Class::OnlyB, _, Some(b)) => {
            let _ = writeln!(s, "    + {}", node(b));
        }
        (Class::Changed, Some(a), Some(b)) => {
            let names = if a.name == b.name { a.name.clone() } else { format!("{} ↔ {}", a.name, b.name) };
            let kinds: std::collections::BTreeSet<_> = e.changes.iter().map(|c| c.kind).collect();
            let kinds: Vec<&str> = kinds.into_iter().map(|k| k.name()).collect();
            let _ = writeln!(s, "    ~ {names} ({}): {}", b.op, kinds.join(", "));
            for c in &e.changes {
                let _ = writeln!(s, "        {}: {} → {}", c.what, c.a, c.b);
            }
        }
        _ => {}
    }
}
