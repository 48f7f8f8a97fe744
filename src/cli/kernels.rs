//! `kernels LOG [--compile ID] [--profile TRACE.json] [--json]`: Inductor's kernels of each
//! compile in a TORCH_TRACE log — name, source, original and post-grad nodes — and with a
//! torch.profiler trace, the device time of each kernel and of each original node.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value as Json};

use crate::import::trace::{self, KernelSource, KernelTable};
use crate::profile::attribute::{attribute, CompiledKernels, KernelRef};
use crate::profile::kernel_time::{attributed_trace, kernel_times, KernelTimes};
use crate::profile::kineto;

use super::kernels_compare as compare;

/// One log's kernels, with the device time of a profile when one was given.
struct Analysis {
    file: String,
    ids: Vec<String>,
    tables: Vec<Vec<KernelTable>>,
    times: Option<(kineto::Flavour, KernelTimes)>,
}

impl Analysis {
    fn compiled(&self) -> Vec<CompiledKernels<'_>> {
        self.ids.iter().zip(&self.tables).map(|(id, t)| CompiledKernels { compile: id, tables: t }).collect()
    }
}

fn analyse(file: &Path, compile: Option<&str>, profile: Option<&Path>, chrome: Option<&Path>, allow: &[PathBuf]) -> Result<Analysis, ExitCode> {
    let log = trace::load_log(file).map_err(|e| super::fail(super::EXIT_USAGE, &e))?;
    let files = allow.iter().fold(log.file_access(), |f, p| f.allow(p));
    for w in &log.warnings {
        eprintln!("warning: {w}");
    }
    let mut a = Analysis { file: file.display().to_string(), ids: Vec::new(), tables: Vec::new(), times: None };
    for c in &log.compiles {
        let id = c.id.to_string();
        if compile.is_some_and(|want| want != id) || c.output_code.is_empty() {
            continue;
        }
        a.ids.push(id);
        a.tables.push(trace::kernels(c, &files));
    }
    if let Some(want) = compile.filter(|_| a.ids.is_empty()) {
        let have: Vec<String> = log.compiles.iter().map(|c| c.id.to_string()).collect();
        let msg = format!("{}: no compile `{want}` with output code (compiles: {})", file.display(), have.join(", "));
        return Err(super::fail(super::EXIT_USAGE, &msg));
    }
    if let Some(p) = profile {
        let t = kineto::load(p).map_err(|e| super::fail(super::EXIT_USAGE, &e))?;
        for w in &t.warnings {
            eprintln!("warning: {w}");
        }
        let compiled = a.compiled();
        let owners = attribute(&t, &compiled);
        let times = kernel_times(&t, &compiled, &owners);
        if let Some(out) = chrome {
            let written = attributed_trace(&t, &compiled, &owners).write_chrome(out);
            written.map_err(|e| super::fail(super::EXIT_FAILED, &format!("{}: cannot write: {e}", out.display())))?;
        }
        a.times = Some((t.flavour, times));
    }
    Ok(a)
}

/// `kernels A [--profile PA] [--against B [--against-profile PB]]`.
pub struct Args<'a> {
    pub log: &'a Path,
    pub compile: Option<&'a str>,
    pub profile: Option<&'a Path>,
    pub against: Option<&'a Path>,
    pub against_profile: Option<&'a Path>,
    /// Writes the profile as a Chrome trace whose device spans are named by graph nodes.
    pub chrome: Option<&'a Path>,
    /// Folders or files a log's named output code may also be read from (beside the log's folder
    /// and the Inductor cache).
    pub allow: &'a [PathBuf],
    pub json: bool,
}

pub fn run(args: Args<'_>) -> ExitCode {
    let a = match analyse(args.log, args.compile, args.profile, args.chrome, args.allow) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let b = match args.against.map(|b| analyse(b, args.compile, args.against_profile, None, args.allow)) {
        Some(Ok(b)) => Some(b),
        Some(Err(code)) => return code,
        None => None,
    };
    if args.json {
        let mut doc = analysis_json(&a, args.profile);
        if let Some(b) = &b {
            doc = json!({ "a": doc, "b": analysis_json(b, args.against_profile), "comparison": compare::compare(&side(&a), &side(b)) });
        }
        super::print_json(&doc);
    } else if let Some(b) = &b {
        print!("{}", compare::summary(&compare::compare(&side(&a), &side(b))));
    } else {
        print!("{}", summary(&a.compiled(), a.times.as_ref().map(|(_, t)| t)));
    }
    ExitCode::SUCCESS
}

fn side(a: &Analysis) -> compare::Side<'_> {
    compare::Side { file: &a.file, tables: &a.tables, times: a.times.as_ref().map(|(_, t)| t) }
}

fn analysis_json(a: &Analysis, profile: Option<&Path>) -> Json {
    let compiled = a.compiled();
    let times_ref = a.times.as_ref().map(|(_, t)| t);
    let mut doc = json!({
        "log": a.file,
        "compiles": compiled.iter().enumerate().map(|(ci, c)| compile_json(ci, c, times_ref)).collect::<Vec<_>>(),
    });
    if let (Some(p), Some((flavour, t))) = (profile, &a.times) {
        doc["profile"] = json!(p.display().to_string());
        doc["flavour"] = json!(flavour);
        doc["attributed_us"] = json!(t.attributed_us);
        doc["unattributed_us"] = json!(t.unattributed_us);
        doc["outside_us"] = json!(t.outside_us);
        doc["attributed_share"] = json!(t.attributed_share);
        doc["unattributed"] = json!(t.unattributed);
        doc["nodes"] = json!(t.nodes);
    }
    doc
}

fn compile_json(ci: usize, c: &CompiledKernels<'_>, times: Option<&KernelTimes>) -> Json {
    let tables: Vec<Json> = c
        .tables
        .iter()
        .enumerate()
        .map(|(ti, t)| {
            let kernels: Vec<Json> = t
                .kernels
                .iter()
                .enumerate()
                .map(|(ki, k)| {
                    let mut j = json!({
                        "name": k.name, "callee": k.callee, "kind": k.kind, "source": k.source,
                        "nodes": k.nodes, "post_grad_nodes": k.post_grad_nodes, "call_sites": k.call_sites,
                        "stack_traces": k.stack_traces, "compile_time_us": k.compile_time_us, "num_configs": k.num_configs,
                    });
                    if let Some(t) = times {
                        let kt = t.per_kernel.get(&KernelRef { compile: ci, table: ti, kernel: ki }).cloned().unwrap_or_default();
                        j["calls"] = json!(kt.calls);
                        j["device_us"] = json!(kt.device_us);
                        j["median_us"] = json!(kt.median_us);
                        j["device_kernels"] = json!(kt.device_kernels);
                    }
                    j
                })
                .collect();
            json!({
                "file": t.file, "provenance": t.provenance, "notes": t.notes, "kernels": kernels,
                "launches": t.launches.iter().map(|l| json!({"kernel": t.kernels[l.kernel].name, "line": l.line, "handle": l.handle})).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "id": c.compile, "output_code": tables })
}

fn summary(compiled: &[CompiledKernels<'_>], times: Option<&KernelTimes>) -> String {
    let mut s = String::new();
    for (ci, c) in compiled.iter().enumerate() {
        for (ti, t) in c.tables.iter().enumerate() {
            let _ = writeln!(
                s,
                "compile {}: {} kernels, {} launches in call(); nodes from {}",
                c.compile,
                t.kernels.len(),
                t.launches.len(),
                if t.provenance { "provenance mappings" } else { "code comments (no INDUCTOR_PROVENANCE)" }
            );
            for n in &t.notes {
                let _ = writeln!(s, "  note: {n}");
            }
            for (ki, k) in t.kernels.iter().enumerate() {
                let src = match &k.source {
                    KernelSource::Code { language, text } => format!("{language}, {} lines", text.lines().count()),
                    KernelSource::NotInLog { path, .. } => format!("source not in log ({})", path.as_deref().unwrap_or("no path")),
                    KernelSource::Library => "library".into(),
                };
                let time = times
                    .and_then(|t| t.per_kernel.get(&KernelRef { compile: ci, table: ti, kernel: ki }))
                    .map(|kt| format!("  {:>4} calls {:>10.1} us  median {:>8.2} us", kt.calls, kt.device_us, kt.median_us))
                    .unwrap_or_default();
                let _ = writeln!(s, "  {:<60} {:<9} [{src}]{time}", cut(&k.name, 60), format!("{:?}", k.kind).to_lowercase());
                let _ = writeln!(s, "      nodes: {}", list(&k.nodes));
                if !k.post_grad_nodes.is_empty() {
                    let _ = writeln!(s, "      post-grad: {}", list(&k.post_grad_nodes));
                }
            }
        }
    }
    if let Some(t) = times {
        let _ = writeln!(s, "\nper original node (kernel time split evenly among the nodes it computes):");
        for n in t.nodes.iter().take(30) {
            let _ = writeln!(s, "  {:>6.2}%  {:>10.1} us  {} {}", n.share * 100.0, n.device_us, n.compile, n.node);
        }
        if t.nodes.len() > 30 {
            let _ = writeln!(s, "  ... {} more", t.nodes.len() - 30);
        }
        let _ = writeln!(
            s,
            "\nattributed {:.1} us, unattributed {:.1} us ({:.1}% of the compiled regions' kernel time attributed); {:.1} us outside compiled regions",
            t.attributed_us,
            t.unattributed_us,
            t.attributed_share * 100.0,
            t.outside_us
        );
        for u in &t.unattributed {
            let _ = writeln!(s, "  unattributed: {} ({}×, {:.1} us): {}", u.name, u.ops, u.device_us, u.why);
        }
    }
    s
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "(none known)".into();
    }
    let shown: Vec<&str> = names.iter().take(12).map(String::as_str).collect();
    let more = if names.len() > 12 { format!(", … {} more", names.len() - 12) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}
