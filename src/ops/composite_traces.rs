//! What each CompositeImplicitAutograd ATen overload expands to, traced by torch itself.
//!
//! `scripts/gen_composite_graphs.py` traces every composite overload of the torch it runs under
//! with `make_fx` (symbolic sizes, no decomposition table) on sample arguments made from its
//! schema, and records each trace as data: the ATen graph the op becomes, valid for the tensor
//! dtypes and ranks and the other argument values it was traced with. The table is committed
//! gzipped in `assets/ops/` (torch version inside) and embedded. A composite op the registry has
//! no rule of its own for is rewritten through it (`crate::decomp::rules::traced`), so a model
//! that calls `type_as` or any other composite op nobody wrote a rule for still decomposes, runs
//! and lowers as torch would run its body.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// The traced expansions of one torch version.
#[derive(Debug, Deserialize)]
pub struct TracedTable {
    /// `2.15.0`.
    pub torch: String,
    /// The script that wrote it.
    #[serde(default)]
    pub made_by: String,
    /// Keyed by graph target (`aten.type_as.default`): the traces that succeeded, one per
    /// argument signature.
    pub ops: HashMap<String, Vec<Variant>>,
    /// Composite overloads no sample could trace, with the last error: not expanded.
    #[serde(default)]
    pub not_traced: BTreeMap<String, Option<String>>,
    /// Overloads that are no composite but that torch.export's default table
    /// (`core_aten_decompositions()`, what `run_decompositions()` applies) decomposes in Python
    /// (`detach`, `zeros`, `arange.start`, `baddbmm`), traced through that decomposition.
    #[serde(default)]
    pub core: HashMap<String, Vec<Variant>>,
    #[serde(default)]
    pub core_not_traced: BTreeMap<String, Option<String>>,
    /// The overloads of [`TracedTable::core`] that Inductor's table (`select_decomp_table()`)
    /// decomposes with the very same function (`softplus`, `stack`): their traces hold under
    /// `full` too. Inductor swaps in its own decomposition for a few (`silu`, `lerp`), and leaves
    /// some out (`baddbmm`, `unbind`).
    #[serde(default)]
    pub core_in_inductor: BTreeSet<String>,
}

/// Which traces a lookup wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Composite bodies: what any tracing expands.
    Composite,
    /// Composite bodies and torch.export's default table: what `run_decompositions()` expands.
    Core,
    /// Composite bodies and the export-table traces Inductor's table shares: what
    /// `run_decompositions(select_decomp_table())` expands.
    Inductor,
}

impl TracedTable {
    fn get(&self, target: &str, kind: Kind) -> Option<&Vec<Variant>> {
        self.ops.get(target).or_else(|| match kind {
            Kind::Core => self.core.get(target),
            Kind::Inductor if self.core_in_inductor.contains(target) => self.core.get(target),
            _ => None,
        })
    }
}

/// One trace: the arguments it holds for and the graph it made.
#[derive(Debug, Deserialize)]
pub struct Variant {
    /// Per argument name: a tensor's dtype and rank, or any other argument's value.
    pub guard: BTreeMap<String, Guard>,
    pub nodes: Vec<TracedNode>,
    /// The op's results, as references (see [`TracedNode::args`]).
    pub outputs: Vec<Value>,
    /// Per tensor argument, its sizes in the trace (`s12`): the symbols the nodes' recorded
    /// metadata is written in.
    #[serde(default)]
    pub sizes: BTreeMap<String, Vec<String>>,
    /// Sizes the trace required equal (`Eq(s1, s3)`): the op's own precondition, met by any
    /// graph torch exported.
    #[serde(default)]
    pub requires: Vec<String>,
}

/// What a variant requires of one argument.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Guard {
    Tensor { dtype: String, rank: usize },
    /// Any value of a kind (`i`, `f`, `dtype`, `list` of `len`): the trace reads it where
    /// `{"arg": NAME}` stands. `default`: the sample was the schema default, so a node that
    /// leaves the argument out matches too, reading `sample`.
    Wired {
        wired: String,
        sample: Value,
        #[serde(default)]
        default: bool,
        #[serde(default)]
        len: Option<usize>,
    },
    /// Exactly this value, spelled as in [`TracedNode::args`] (null: None); `default` as above.
    Value {
        value: Value,
        #[serde(default)]
        default: bool,
    },
}

/// One node of a trace. Argument values: `{"in": NAME}` an argument of the op, `{"node": I,
/// "out": K}` output K of node I, `{"i"|"f"|"b"|"s"|"dtype"|"layout"|"device"|"mf": V}`
/// constants, null for None, and lists of these.
#[derive(Debug, Deserialize)]
pub struct TracedNode {
    pub target: String,
    pub args: Vec<(String, Value)>,
    /// torch's metadata of its outputs (`{"dtype", "sizes", "strides"}` or `{"sym"}`, sizes in
    /// the trace's symbols); left out where the variant reads arguments by value.
    #[serde(default)]
    pub meta: Option<Vec<Value>>,
}

const EMBEDDED: &[(&str, &[u8])] = &[
    // Traced on the GPU machine's torch 2.11 (scripts/device_knowledge.sh): graphs a 2.11 export
    // or log makes are expanded as that torch expands them, not as a newer one would.
    ("composite-2.11.json.gz", include_bytes!("../../assets/ops/composite-2.11.json.gz")),
    ("composite-2.15.json.gz", include_bytes!("../../assets/ops/composite-2.15.json.gz")),
];

impl TracedTable {
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<TracedTable, String> {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(bytes).read_to_end(&mut text).map_err(|e| format!("{name}: {e}"))?;
        serde_json::from_slice(&text).map_err(|e| format!("{name}: {e}"))
    }
}

/// The embedded tables, oldest torch first (one that does not parse is a build defect, caught
/// by the test below, and left out at run time).
pub fn tables() -> &'static [TracedTable] {
    static T: OnceLock<Vec<TracedTable>> = OnceLock::new();
    T.get_or_init(|| {
        let mut v: Vec<TracedTable> = EMBEDDED.iter().filter_map(|(n, b)| TracedTable::from_bytes(n, b).ok()).collect();
        v.sort_by_key(|t| super::backend::version_key(&t.torch));
        v
    })
}

/// The traces of `target` for a graph made by torch `version`: the newest table not newer than
/// it that has the op, else the oldest that has it (an unknown version counts as the newest).
pub fn variants(target: &str, version: Option<&str>, kind: Kind) -> Option<&'static [Variant]> {
    let want = version.map(super::backend::version_key).unwrap_or((u32::MAX, 0, 0));
    let with: Vec<&TracedTable> = tables().iter().filter(|t| t.get(target, kind).is_some()).collect();
    let t = with.iter().rev().find(|t| super::backend::version_key(&t.torch) <= want).or(with.first())?;
    t.get(target, kind).map(Vec::as_slice)
}

/// Every trace of `target`, [`variants`]' table first, then the other tables' from the newest: a
/// call whose argument dtypes the graph's own torch was never sampled with (a 2.11 graph's
/// `type_as` of two integer tensors: the 2.11 table holds float pairs only) expands through
/// another torch's trace of the same composite body rather than not at all.
pub fn variants_in_order(target: &str, version: Option<&str>, kind: Kind) -> Vec<&'static Variant> {
    let Some(first) = variants(target, version, kind) else { return Vec::new() };
    let mut out: Vec<&'static Variant> = first.iter().collect();
    for t in tables().iter().rev() {
        match t.get(target, kind) {
            Some(v) if !std::ptr::eq(v.as_slice(), first) => out.extend(v.iter()),
            _ => {}
        }
    }
    out
}

/// Whether torch.export's default table decomposes `target` (traced or not): the non-composite
/// overloads `core_aten_decompositions()` lists.
pub fn in_core_table(target: &str) -> bool {
    tables().iter().any(|t| t.core.contains_key(target) || t.core_not_traced.contains_key(target))
}

/// The table that describes torch `version`: the newest not newer than it, else the oldest (an
/// unknown version counts as the newest), as [`variants`] picks.
fn table_of(version: Option<&str>) -> Option<&'static TracedTable> {
    let want = version.map(super::backend::version_key).unwrap_or((u32::MAX, 0, 0));
    tables().iter().rev().find(|t| super::backend::version_key(&t.torch) <= want).or(tables().first())
}

/// Whether torch `version`'s own export table (`core_aten_decompositions()`) decomposes `target`.
pub fn in_core_table_of(target: &str, version: Option<&str>) -> bool {
    table_of(version).is_some_and(|t| t.core.contains_key(target) || t.core_not_traced.contains_key(target))
}

/// Whether torch `version` keeps `target` whole under `run_decompositions()` where another
/// torch's export table decomposes it: torch 2.11's table has no `linalg_vector_norm` (2.15's
/// does), so a 2.11 graph keeps it where a 2.15 one becomes `pow`/`sum`/`pow`. Read off the
/// tables each torch wrote, never listed by hand.
pub fn core_table_keeps(target: &str, version: Option<&str>) -> bool {
    in_core_table(target) && !in_core_table_of(target, version)
}

/// Whether any table has a trace of `target` of `kind`.
pub fn has(target: &str, kind: Kind) -> bool {
    tables().iter().any(|t| t.get(target, kind).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_covers_composite_ops() {
        for (name, bytes) in EMBEDDED {
            let t = TracedTable::from_bytes(name, bytes).unwrap_or_else(|e| panic!("{e}"));
            assert!(t.ops.len() >= 25, "{name}: only {} ops traced", t.ops.len());
            assert!(t.core.len() >= 100, "{name}: only {} core-table ops traced", t.core.len());
            assert_eq!(t.made_by, "scripts/gen_composite_graphs.py");
        }
        assert_eq!(tables().len(), EMBEDDED.len());
        // `type_as` is `self.to(other.dtype)`: nothing when the dtypes agree, `_to_copy` when not.
        let v = variants("aten.type_as.default", Some("2.15.0"), Kind::Composite).unwrap();
        let same = v.iter().find(|v| matches!(v.guard.get("other"), Some(Guard::Tensor { dtype, .. }) if dtype == "float32")).unwrap();
        assert!(same.nodes.is_empty());
        let cast = v.iter().find(|v| matches!(v.guard.get("other"), Some(Guard::Tensor { dtype, .. }) if dtype == "float16")).unwrap();
        assert_eq!(cast.nodes[0].target, "aten._to_copy.default");
        // Two integer dtypes (BridgeTower: int64 `cumsum` cast to the int32 mask) are a trace of their
        // own: no float trace renames to them.
        let ints = |v: &Variant, a: &str, b: &str| {
            matches!(v.guard.get("self"), Some(Guard::Tensor { dtype, rank: 2 }) if dtype == a)
                && matches!(v.guard.get("other"), Some(Guard::Tensor { dtype, .. }) if dtype == b)
        };
        assert!(v.iter().any(|v| ints(v, "int64", "int32") && v.nodes.len() == 1));
        assert!(v.iter().any(|v| ints(v, "int64", "int64") && v.nodes.is_empty()));
        // `fft_fftn` over given dims (FNet's `dim=(1, 2)`), not only over all of them.
        let f = variants("aten.fft_fftn.default", Some("2.15.0"), Kind::Composite).unwrap();
        assert!(f.iter().any(|v| matches!(v.guard.get("dim"), Some(Guard::Value { default: false, .. }))));
        assert!(variants("aten.add.Tensor", None, Kind::Core).is_none());
        // A 2.11 graph's integer type_as: its own table first, then 2.15's integer-pair traces.
        let all = variants_in_order("aten.type_as.default", Some("2.11.0"), Kind::Composite);
        let own = variants("aten.type_as.default", Some("2.11.0"), Kind::Composite).unwrap();
        assert!(all.len() > own.len() && std::ptr::eq(all[0], &own[0]));
        let int_pair = |v: &&Variant| v.guard.values().filter(|g| matches!(g, Guard::Tensor { dtype, .. } if dtype == "int32")).count() == 1;
        assert!(!own.iter().any(|v| int_pair(&v)) && all.iter().any(int_pair), "2.15 traced an int64/int32 pair, 2.11 did not");
        // `zeros` is no composite; export's default table makes it a `full`.
        assert!(!has("aten.zeros.default", Kind::Composite));
        let z = variants("aten.zeros.default", None, Kind::Core).unwrap();
        assert!(z.iter().all(|v| v.nodes.iter().any(|n| n.target == "aten.full.default")));
    }

    /// torch 2.11's `core_aten_decompositions()` has no `linalg_vector_norm`, 2.15's has (both
    /// tables as each torch wrote them): the corpus's 2.11 models keep the norm whole under core.
    #[test]
    fn each_torch_keeps_what_its_own_export_table_leaves_out() {
        let n = "aten.linalg_vector_norm.default";
        assert!(in_core_table_of(n, Some("2.15.0")) && !in_core_table_of(n, Some("2.11.0+cu130")));
        assert!(core_table_keeps(n, Some("2.11.0+cu130")) && core_table_keeps(n, Some("2.9.1")));
        assert!(!core_table_keeps(n, Some("2.15.0")) && !core_table_keeps(n, None));
        // An op both tables decompose, and one neither has, are no version question.
        assert!(!core_table_keeps("aten.detach.default", Some("2.11.0")));
        assert!(!core_table_keeps("aten.add.Tensor", Some("2.11.0")));
    }
}
