//! What a backend's ATen does with each op, per torch version: runs its own kernel (`native`),
//! expands its CompositeImplicitAutograd body while tracing (`composite`), sends it to the CPU
//! (`cpu_fallback`: torch-xpu-ops' fallback list, a device round trip per call), or has nothing
//! (`not_implemented`: on XPU a NotImplementedError unless `PYTORCH_ENABLE_XPU_FALLBACK=1`).
//!
//! In lite mode every unmarked op is kept whole and dispatched to ATen on the device, so this is
//! what lite mode's graph will do there. The kernel facts are the backend tables ([`super::backend`]);
//! the CPU-fallback lists are read from torch-xpu-ops' `XPUFallback.template` / `.cpp` of each
//! release branch by `scripts/gen_xpu_readiness.py` (`assets/ops/xpu-fallback.json.gz`, commits
//! recorded). A table refreshed from a user's XPU build (`backends --refresh`) carries its own
//! dispatcher's list (`sources.xpu_cpu_fallback`), which wins.

use std::collections::BTreeMap;

use super::backend::{aten_name, functional_name, Backend, BackendTable, OpFacts};

mod lists;
mod report;
pub use lists::{fallback_for, fallback_lists, FallbackList};
pub use report::{call_status, changes, graphs_of, Change, OpEntry, Report};

/// One op's fate on a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Native,
    Composite,
    CpuFallback,
    NotImplemented,
}

impl Status {
    pub const ALL: [Status; 4] = [Status::Native, Status::Composite, Status::CpuFallback, Status::NotImplemented];

    /// The name in reports and JSON.
    pub fn key(self) -> &'static str {
        match self {
            Status::Native => "native",
            Status::Composite => "composite",
            Status::CpuFallback => "cpu_fallback",
            Status::NotImplemented => "not_implemented",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// The lite/default choice of `torch.compile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Lite,
    Default,
}

/// What decides an op's status, besides the kernel table: where the CPU-fallback list came from.
pub struct Context<'a> {
    pub table: &'a BackendTable,
    pub backend: Backend,
    /// The embedded torch-xpu-ops list of the table's version (XPU only).
    pub fallback: Option<&'static FallbackList>,
    /// The user's dispatcher said these are CPU fallbacks (a table refreshed on an XPU build).
    dispatcher_fallback: Option<Vec<String>>,
}

impl<'a> Context<'a> {
    pub fn new(table: &'a BackendTable, backend: Backend) -> Context<'a> {
        let dispatcher_fallback = table.sources.get("xpu_cpu_fallback").and_then(|v| v.as_array()).map(|a| {
            a.iter().filter_map(|s| s.as_str().map(str::to_string)).collect::<Vec<_>>()
        });
        let fallback = (backend == Backend::Xpu).then(|| fallback_for(&table.torch)).flatten();
        Context { table, backend, fallback, dispatcher_fallback }
    }

    /// Where the CPU-fallback facts come from, for reports.
    pub fn fallback_source(&self) -> Option<String> {
        if self.backend != Backend::Xpu {
            return None;
        }
        if self.dispatcher_fallback.is_some() {
            return Some(format!("the dispatcher of your torch build ({})", self.table.origin));
        }
        self.fallback.map(|l| format!("torch-xpu-ops {} {} ({}), {}", l.branch, &l.commit[..12.min(l.commit.len())], l.date, l.file))
    }

    fn in_cpu_fallback_list(&self, key: &str, facts: &OpFacts) -> bool {
        if self.backend != Backend::Xpu {
            return false;
        }
        match (&self.dispatcher_fallback, self.fallback) {
            (Some(list), _) => list.iter().any(|k| k == key),
            // A yaml kernel and a fallback entry together: the kernel is what runs (torch-xpu-ops
            // main skips fallback entries that already have one).
            (None, Some(l)) => !facts.has_kernel(Backend::Xpu) && l.cpu_fallback.iter().any(|k| k == key),
            (None, None) => false,
        }
    }

    /// The status of one graph target, or why it is not known. `None`: not an op with a kernel
    /// at all (Python operators on sizes, asserts).
    pub fn op(&self, target: &str) -> Option<Result<OpStatus, String>> {
        if crate::decomp::is_symbolic_size_op(target) || target.starts_with("builtins.") {
            return None;
        }
        if let Some(name) = torchvision_name(target) {
            return Some(self.torchvision(name));
        }
        let Some((name, overload)) = aten_name(target) else {
            if target.starts_with("prims.") || target.starts_with("torch.ops.prims.") {
                return Some(Err(format!(
                    "`{target}` is a prim (what Inductor's decompositions produce), not an ATen op the tables know"
                )));
            }
            return Some(Err(format!("not an ATen op: what `{target}` runs on {} is not known", self.backend)));
        };
        // A graph may spell an overload the schema does not have (`transpose.default` for
        // `transpose.int`): the op's overloads merged stand for it.
        let merged;
        let facts = match self.table.op(target) {
            Some(f) => f,
            None => match self.table.op_by_name(name) {
                Some(f) => {
                    merged = f;
                    &merged
                }
                None => return Some(Err(format!("aten.{name} is not in the op table of torch {}", self.table.torch))),
            },
        };
        let key = match overload {
            Some(o) if o != "default" && self.table.ops.contains_key(&format!("{name}.{o}")) => format!("{name}.{o}"),
            _ => name.to_string(),
        };
        let status = self.status_of(&key, facts);
        let (into, traced_on) = match (status == Status::Composite).then(|| expansion(self.table, name, self.backend)).flatten() {
            Some((ops, device)) => (Some(ops), Some(device)),
            None => (None, None),
        };
        // What the expansion's pieces do here: an expansion into ops the backend lacks too is no help.
        let pieces = into
            .iter()
            .flatten()
            .filter_map(|op| {
                let s = self.op(&format!("aten.{op}"))?.ok()?;
                (s.status != Status::Native && s.status != Status::Composite).then(|| (op.clone(), s.status))
            })
            .collect();
        let sibling = (status == Status::NotImplemented).then(|| self.listed_sibling(name)).flatten();
        Some(Ok(OpStatus { key, status, into, traced_on, pieces, sibling, inductor: facts.inductor, elsewhere: facts.kernels.clone() }))
    }

    /// Another overload of `name` in the CPU-fallback list (`linalg_lu.out` for `linalg_lu`): the
    /// list names structured ops by their out= overload, and whether the functional one reaches that
    /// fallback on a given build is for its dispatcher to say, not these tables.
    fn listed_sibling(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}.");
        match (&self.dispatcher_fallback, self.fallback) {
            (Some(_), _) | (None, None) => None,
            (None, Some(l)) => l.cpu_fallback.iter().find(|k| k.starts_with(&prefix)).cloned(),
        }
        .filter(|_| self.backend == Backend::Xpu)
    }

    /// The status of a table entry, by precedence: the CPU-fallback list (a kernel registered for
    /// the XPU key beats a composite body), a kernel or view, a composite body, nothing.
    fn status_of(&self, key: &str, facts: &OpFacts) -> Status {
        if self.in_cpu_fallback_list(key, facts) {
            Status::CpuFallback
        } else if facts.view || facts.has_kernel(self.backend) {
            Status::Native
        } else if facts.composite {
            Status::Composite
        } else {
            Status::NotImplemented
        }
    }

    fn torchvision(&self, name: &str) -> Result<OpStatus, String> {
        let known = fallback_lists().iter().any(|l| l.torchvision_cpu.contains_key(name));
        let status = match self.backend {
            Backend::Xpu => match self.fallback.and_then(|l| l.torchvision_cpu.get(name)) {
                Some(true) => Status::CpuFallback,
                Some(false) => Status::Native,
                None if known => Status::NotImplemented,
                None => return Err(format!("torchvision::{name} is in no torch-xpu-ops torchvision table")),
            },
            // torchvision ships CPU and CUDA kernels for its C++ ops.
            Backend::Cpu | Backend::Cuda if known => Status::Native,
            _ => return Err(format!("what torchvision::{name} runs on {} is not known", self.backend)),
        };
        Ok(OpStatus {
            key: format!("torchvision::{name}"),
            status,
            into: None,
            traced_on: None,
            pieces: Vec::new(),
            sibling: None,
            inductor: false,
            elsewhere: Vec::new(),
        })
    }
}

/// One op's status with what explains it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpStatus {
    /// The table's key: `dot`, `add.Tensor`, `torchvision::nms`.
    pub key: String,
    pub status: Status,
    /// Composite: the ATen ops torch traced it into, where the tables have a trace.
    pub into: Option<Vec<String>>,
    /// The device torch traced `into` on (`cpu`, `cuda`): XPU's own trace may differ (attention).
    pub traced_on: Option<&'static str>,
    /// Pieces of `into` that are not native here either (CPU fallback, not implemented).
    pub pieces: Vec<(String, Status)>,
    /// Not implemented, but another overload is in the CPU-fallback list (`linalg_lu.out`).
    pub sibling: Option<String>,
    /// In Inductor's default decomposition table.
    pub inductor: bool,
    /// The backends with a kernel of their own.
    pub elsewhere: Vec<String>,
}

impl OpStatus {
    /// What happens to the op in `mode` on `backend`.
    pub fn meaning(&self, mode: Mode, backend: Backend) -> String {
        let mut into = match (&self.into, self.traced_on) {
            (Some(i), Some(d)) => format!(" into {} (as torch traced it on {})", i.join(", "), d.to_uppercase()),
            (Some(i), None) => format!(" into {}", i.join(", ")),
            _ => String::new(),
        };
        if !self.pieces.is_empty() {
            let p: Vec<String> = self.pieces.iter().map(|(op, s)| format!("{op}: {s}")).collect();
            into.push_str(&format!("; pieces not native on {backend}: {}", p.join(", ")));
        }
        match (mode, self.status) {
            (_, Status::Composite) => format!("expanded while tracing{into}, before lite mode or Inductor decide anything"),
            (Mode::Lite, Status::Native) => format!("kept whole; runs {backend}'s own kernel"),
            (Mode::Lite, Status::CpuFallback) => {
                "kept whole; falls back to the CPU at run time (\"Aten Op fallback from XPU to CPU\"): arguments copied to the host and results back on every call".to_string()
            }
            (Mode::Lite, Status::NotImplemented) => format!(
                "kept whole; raises NotImplementedError on {backend} at run time{}{}",
                if backend == Backend::Xpu { " (with PYTORCH_ENABLE_XPU_FALLBACK=1 it runs on the CPU instead)" } else { "" },
                self.sibling_note()
            ),
            (Mode::Default, _) if self.inductor => "decomposed by Inductor's default table and lowered to generated kernels".to_string(),
            (Mode::Default, Status::Native) => format!("lowered by Inductor, or called as a fallback kernel: {backend}'s own"),
            (Mode::Default, Status::CpuFallback) => "called by Inductor as a fallback kernel, which falls back to the CPU".to_string(),
            (Mode::Default, Status::NotImplemented) => format!(
                "unless Inductor lowers it, called as a fallback kernel that raises NotImplementedError on {backend}{}",
                self.sibling_note()
            ),
        }
    }

    fn sibling_note(&self) -> String {
        let mut note = self
            .sibling
            .as_ref()
            .map(|o| format!("; torch-xpu-ops sends its overload `{o}` to the CPU, which this overload may reach on your build: `backends --refresh --python PATH` with an XPU torch settles it"))
            .unwrap_or_default();
        if let [only] = self.elsewhere.as_slice() {
            note.push_str(&format!(
                "; only {only} has a kernel: a {only}-specific op the graph's own device chose (`_scaled_dot_product_flash_attention_for_cpu`), whose caller traced on this backend would pick another"
            ));
        }
        note
    }
}

/// `torchvision.nms.default`, `torch.ops.torchvision.nms`, `torchvision::nms` → `nms`.
pub fn torchvision_name(target: &str) -> Option<&str> {
    let t = target.strip_prefix("torch.ops.").unwrap_or(target);
    let rest = t.strip_prefix("torchvision.").or_else(|| t.strip_prefix("torchvision::"))?;
    rest.split('.').next().filter(|n| !n.is_empty())
}

/// What a composite op becomes, as torch traced it: the backend-dependent expansion where this
/// backend lacks a kernel others have (`_fused_rms_norm` → `pow, mean, ...`), else the most
/// frequent trace of a torch-level call of the same name (`linear` → `addmm` / `mm`...).
pub fn expansion(table: &BackendTable, name: &str, backend: Backend) -> Option<(Vec<String>, &'static str)> {
    if let Some(into) = crate::decomp::predict::traced_expansion(table, name, backend) {
        // predict's backend-dependent expansions are CPU traces standing for any backend without the kernel.
        return Some((into, "cpu"));
    }
    let me = functional_name(name);
    let device = if backend == Backend::Cpu { "cpu" } else { "cuda" };
    let mut found: BTreeMap<&Vec<String>, usize> = BTreeMap::new();
    for t in super::backend::this_then_others(table) {
        for (key, exp) in &t.expansions {
            if key.rsplit('.').next() != Some(me) {
                continue;
            }
            for alt in exp.get(device).into_iter().flatten().filter(|a| !a.is_empty() && !a.iter().any(|op| op == me)) {
                *found.entry(alt).or_insert(0) += 1;
            }
        }
    }
    found.into_iter().max_by_key(|(alt, n)| (*n, usize::MAX - alt.len())).map(|(alt, _)| (alt.clone(), device))
}

/// Every overload of a table by status on `backend`: the per-version summary.
pub fn counts(ctx: &Context) -> BTreeMap<Status, usize> {
    let mut out: BTreeMap<Status, usize> = Status::ALL.iter().map(|s| (*s, 0)).collect();
    for (key, facts) in &ctx.table.ops {
        *out.entry(ctx.status_of(key, facts)).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::backend::table_for;

    fn status(torch: &str, backend: Backend, target: &str) -> Status {
        let t = table_for(Some(torch)).unwrap();
        Context::new(t, backend).op(target).unwrap().unwrap().status
    }

    #[test]
    fn embedded_lists_cover_every_table_version_with_commits() {
        let lists = fallback_lists();
        let versions: Vec<&str> = lists.iter().map(|l| l.torch.as_str()).collect();
        assert_eq!(versions, ["2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15"]);
        for l in lists {
            assert_eq!(l.commit.len(), 40, "{}", l.torch);
            assert!(l.cpu_fallback.len() > 20, "{}: {}", l.torch, l.cpu_fallback.len());
            assert_eq!(l.torchvision_cpu.get("nms"), Some(&false), "{}", l.torch);
        }
        assert_eq!(fallback_for("2.11.0+xpu").unwrap().branch, "release/2.11");
        assert_eq!(fallback_for("2.15.0").unwrap().branch, "main");
        assert_eq!(fallback_for("2.8.0").unwrap().torch, "2.9");
    }

    /// `dot` was in torch-xpu-ops' fallback list up to release/2.10 and got a SYCL kernel in 2.11.
    #[test]
    fn dot_falls_back_to_cpu_until_2_11() {
        for (v, want) in [("2.9.1", Status::CpuFallback), ("2.10.0", Status::CpuFallback), ("2.11.0", Status::Native), ("2.15.0", Status::Native)] {
            assert_eq!(status(v, Backend::Xpu, "aten.dot.default"), want, "torch {v}");
        }
        assert_eq!(status("2.9.1", Backend::Cuda, "aten.dot.default"), Status::Native);
        assert_eq!(status("2.15.0", Backend::Xpu, "aten.cholesky_inverse.default"), Status::CpuFallback);
    }

    #[test]
    fn fused_rms_norm_composite_then_native_and_the_rest() {
        assert_eq!(status("2.11.0", Backend::Xpu, "aten._fused_rms_norm.default"), Status::Composite);
        assert_eq!(status("2.12.0", Backend::Xpu, "aten._fused_rms_norm.default"), Status::Native);
        assert_eq!(status("2.15.0", Backend::Cpu, "aten._fused_rms_norm.default"), Status::Composite);
        let t = table_for(Some("2.11.0")).unwrap();
        let s = Context::new(t, Backend::Xpu).op("aten._fused_rms_norm.default").unwrap().unwrap();
        assert!(s.into.unwrap().iter().any(|o| o == "rsqrt"));
        // A CUDA-only kernel with no composite body: nothing on XPU or CPU (and not in the list).
        assert_eq!(status("2.15.0", Backend::Xpu, "aten._cudnn_rnn.default"), Status::NotImplemented);
        assert_eq!(status("2.15.0", Backend::Xpu, "aten.view.default"), Status::Native);
        assert_eq!(status("2.15.0", Backend::Xpu, "aten.transpose.default"), Status::Native);
        let cpu_only = Context::new(table_for(Some("2.15")).unwrap(), Backend::Xpu)
            .op("aten._scaled_dot_product_flash_attention_for_cpu.default")
            .unwrap()
            .unwrap();
        assert!(cpu_only.meaning(Mode::Lite, Backend::Xpu).contains("only CPU has a kernel"), "{cpu_only:?}");
        let lu = Context::new(table_for(Some("2.15")).unwrap(), Backend::Xpu).op("aten.linalg_lu.default").unwrap().unwrap();
        assert_eq!((lu.status, lu.sibling.as_deref()), (Status::NotImplemented, Some("linalg_lu.out")));
        assert_eq!(status("2.15.0", Backend::Xpu, "torchvision.nms.default"), Status::Native);
        assert_eq!(status("2.15.0", Backend::Xpu, "torchvision.roi_align.default"), Status::Native);
        assert!(Context::new(t, Backend::Xpu).op("_operator.getitem").is_none());
        assert!(Context::new(t, Backend::Xpu).op("my_lib.op.default").unwrap().is_err());
    }

    #[test]
    fn a_dispatcher_list_wins_over_the_embedded_one() {
        let doc = r#"{"torch":"2.15.0","sources":{"xpu_cpu_fallback":["add.Tensor"]},
            "ops":{"add.Tensor":{"kernels":["CPU","CUDA","XPU"]},"dot":{"kernels":["CPU","CUDA"]}}}"#;
        let t = BackendTable::from_bytes("user.json", doc.as_bytes()).unwrap();
        let ctx = Context::new(&t, Backend::Xpu);
        assert_eq!(ctx.op("aten.add.Tensor").unwrap().unwrap().status, Status::CpuFallback);
        assert_eq!(ctx.op("aten.dot.default").unwrap().unwrap().status, Status::NotImplemented);
        assert!(ctx.fallback_source().unwrap().contains("dispatcher"));
    }

    #[test]
    fn every_overload_has_a_status_and_the_lists_shrink() {
        let fallbacks: Vec<usize> = ["2.9", "2.11", "2.15"]
            .iter()
            .map(|v| counts(&Context::new(table_for(Some(v)).unwrap(), Backend::Xpu))[&Status::CpuFallback])
            .collect();
        assert!(fallbacks[0] > fallbacks[2] && fallbacks[2] > 5, "{fallbacks:?}");
        let t = table_for(Some("2.15")).unwrap();
        let c = counts(&Context::new(t, Backend::Cuda));
        assert_eq!(c.values().sum::<usize>(), t.ops.len());
        assert_eq!(c[&Status::CpuFallback], 0);
    }

    #[test]
    fn names() {
        assert_eq!(torchvision_name("torchvision.nms.default"), Some("nms"));
        assert_eq!(torchvision_name("torch.ops.torchvision.roi_align.default"), Some("roi_align"));
        assert_eq!(torchvision_name("torchvision::nms"), Some("nms"));
        assert_eq!(torchvision_name("aten.nms"), None);
    }
}
