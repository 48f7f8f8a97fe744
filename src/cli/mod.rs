//! The command line: every thing the app can do, scriptable. `cli.rs`-style: arguments here,
//! each subcommand's work in its own file.

mod against_torch;
mod args;
mod backends;
mod bench;
mod bench_kernels;
mod bench_models;
mod bench_ops;
mod check_lite;
mod trace_calls;
pub mod compile;
mod decompose;
mod diff;
mod devices;
mod eval;
mod inspect;
mod ops;
mod kernels;
mod kernels_compare;
mod profile;
mod profile_inductor;
mod readiness;
mod report;
mod shapes;
mod sweep;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::import;
use crate::ir::Model;

pub use args::{AnyDevice, BenchCommand, CompileArgs, Lowering, RunArgs, SweepArgs};

#[derive(Parser, Debug)]
#[command(name = "xpu-workbench", version, about = "Workbench for PyTorch Inductor on Intel XPU")]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A model file to open in the app (no file: the embedded sample).
    pub file: Option<PathBuf>,
    /// In the app: run & profile (with the heat overlay on) as soon as the model is open.
    #[arg(long)]
    pub profile: bool,
    /// In the app: sweep SYM=LO..HI (lite and full, the picked device) as soon as the model is open.
    #[arg(long, value_name = "SYM=LO..HI")]
    pub sweep: Option<String>,
    /// In the app, on a TORCH_TRACE log: show this compile's stages and kernels once it is open.
    #[arg(long, value_name = "COMPILE_ID")]
    pub stages: Option<String>,
    /// In the app, with --stages: pick this kernel (its source shows, its nodes light up), shown
    /// beside the dynamo graph (the other stages can be ticked back on).
    #[arg(long, value_name = "NAME", requires = "stages")]
    pub kernel: Option<String>,
    /// In the app: open the diff mode against this file (log, .pt2 or .onnx) once the model is
    /// open, as File › Compare graph with… does.
    #[arg(long, value_name = "B")]
    pub diff: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Graphs, op histograms, inputs/outputs and symbols of a model file.
    Inspect {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Node-level diff of two graphs: one stage of two TORCH_TRACE logs, two exports, or two
    /// stages of one file. Exit 0 when nothing differs, 1 when something does, 2 on bad input.
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// Logs: dynamo, aot, aot_forward, aot_backward, aot_inference or post_grad (default: every
        /// stage). Exports: none, core, lite or full. `SA,SB` picks A's and B's separately.
        #[arg(long, value_name = "S[,S]")]
        stage: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Every tensor's concrete shape and strides, and every guard, under symbol bindings.
    Shapes {
        file: PathBuf,
        /// SYM=INT; unbound symbols take their traced hint.
        #[arg(long = "bind", value_name = "SYM=INT")]
        binds: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// The graph after decomposition: none, core (run_decompositions), lite (marked nodes only)
    /// or full (Inductor's default table).
    Decompose {
        file: PathBuf,
        #[arg(long, default_value = "full")]
        mode: String,
        /// NAME (node), op:TARGET or module:PATH; annotated nodes are always marked.
        #[arg(long = "mark", value_name = "SPEC")]
        marks: Vec<String>,
        #[arg(long)]
        json: bool,
        /// Also decompose the archive with the user's torch and diff the op multisets, node by
        /// node (core or full): exit 0 when equal, 1 when not, 2 when torch is missing.
        #[arg(long)]
        against_torch: bool,
        /// The Python that holds torch, for --against-torch.
        #[arg(long, value_name = "PATH", default_value = "python3")]
        python: String,
    },
    /// Exit 0 when lite mode decomposed no unmarked node, 1 listing each violation, 3 when
    /// something could not be checked (named). Reads a TORCH_TRACE log (every dynamo op looked for
    /// in the AOT graph and classified), or a .pt2 archive: with --backend, which unmarked nodes
    /// lite mode cannot keep on that backend; without, our lite mode (or the file's decomposed graph).
    CheckLite {
        file: PathBuf,
        #[arg(long = "mark", value_name = "SPEC")]
        marks: Vec<String>,
        /// cpu, cuda or xpu: predict what that backend's missing kernels force (.pt2 only).
        #[arg(long)]
        backend: Option<String>,
        /// The torch version whose kernel tables apply (default: the one the file names).
        #[arg(long, value_name = "VERSION")]
        torch: Option<String>,
        /// A python with torch: calls of a log the tables have no trace of are traced with it at the
        /// log's example values (fake tensors on the log's device), cached per torch version.
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Traces, in one run of PYTHON's torch, the calls of the logs that no table has a trace of, caches
    /// them (as check-lite --python does for one log) and checks every log again.
    TraceCalls {
        #[arg(required = true)]
        logs: Vec<PathBuf>,
        /// A python with torch.
        #[arg(long, value_name = "PATH")]
        python: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The op registry's kernel tables per torch version: which backends have a kernel for an op
    /// (--op NAME), or --refresh from your own torch's dispatcher (an XPU build shows XPU's).
    Backends {
        #[arg(long, value_name = "NAME")]
        op: Option<String>,
        #[arg(long, value_name = "VERSION")]
        torch: Option<String>,
        #[arg(long)]
        refresh: bool,
        /// The python whose torch --refresh reads.
        #[arg(long, default_value = "python3")]
        python: String,
        #[arg(long)]
        json: bool,
    },
    /// Per op of a model (.pt2, or a TORCH_TRACE log's AOT graphs): native on the backend, expanded
    /// (composite), sent to the CPU (torch-xpu-ops' fallback list) or not implemented, in the file's
    /// torch version, and what that means in lite or default mode. Exit 0 all native, 1 some not,
    /// 3 ops the tables do not know.
    Readiness {
        file: PathBuf,
        /// xpu, cuda or cpu.
        #[arg(long, default_value = "xpu")]
        backend: String,
        /// The torch version whose tables apply (default: the one the file names).
        #[arg(long, value_name = "VERSION")]
        torch: Option<String>,
        /// lite (every unmarked op kept and dispatched to ATen) or default (Inductor's table).
        #[arg(long, default_value = "lite")]
        mode: String,
        /// Also what changed in this torch version's tables.
        #[arg(long = "against-torch", value_name = "V2")]
        against_torch: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Inductor's kernels of each compile in a TORCH_TRACE log (name, source, original and
    /// post-grad nodes); with a torch.profiler trace, each kernel's and each node's device time.
    Kernels {
        log: PathBuf,
        /// One compile id (`0/1`); all compiles with output code when absent.
        #[arg(long, value_name = "ID")]
        compile: Option<String>,
        /// torch.profiler `export_chrome_trace` JSON (plain or .gz), CUDA or XPU.
        #[arg(long, value_name = "TRACE.json")]
        profile: Option<PathBuf>,
        /// A second log of the same model (lite against default): kernel counts, which nodes each
        /// fused or ran as fallbacks, per-node and total device time differences.
        #[arg(long, value_name = "LOG")]
        against: Option<PathBuf>,
        /// The profiler trace of the --against run.
        #[arg(long = "against-profile", value_name = "TRACE.json", requires = "against")]
        against_profile: Option<PathBuf>,
        /// Writes the --profile trace as Chrome trace JSON (Perfetto) with each device kernel
        /// named by the graph nodes it computes.
        #[arg(long, value_name = "OUT.json", requires = "profile")]
        chrome: Option<PathBuf>,
        /// A folder or file the log's named output code may also be read from (by default only the
        /// log's folder and the Inductor cache are; repeatable).
        #[arg(long = "allow-file", value_name = "PATH")]
        allow: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// One self-contained HTML file to share (no network, no server): the folded graph before and
    /// after, check-lite's verdicts, readiness, kernels with profiler time, guards and ranges, the
    /// versions and config the file records, and every file it embeds. Files a log only names are
    /// read from the log's folder and the Inductor cache, else only with --allow-file.
    Report {
        /// A TORCH_TRACE log, .pt2 or .onnx file.
        file: PathBuf,
        /// torch.profiler trace of the log's run (plain or .gz).
        #[arg(long, value_name = "TRACE.json")]
        profile: Option<PathBuf>,
        /// The backend readiness is told for: xpu, cuda or cpu.
        #[arg(long, default_value = "xpu")]
        backend: String,
        /// A folder or file the log's named files may also be read from (repeatable).
        #[arg(long = "allow-file", value_name = "PATH")]
        allow: Vec<PathBuf>,
        /// Another log or export to diff against (`diff FILE B`), shown in its own section.
        #[arg(long, value_name = "B")]
        against: Option<PathBuf>,
        #[arg(short = 'o', long = "out", value_name = "REPORT.html")]
        out: PathBuf,
    },
    /// Per ATen op: Core ATen or not, interpreter and kernel coverage, OpInfo cases passing
    /// (from the results tests/opinfo.rs writes); --markdown prints docs/OPS.md.
    Ops {
        #[arg(long)]
        markdown: bool,
        #[arg(long, default_value = "tests/data/opinfo_floor.json")]
        results: PathBuf,
    },
    /// Every backend (Level Zero, OpenCL, reference): its device, or why it is unavailable.
    Devices {
        #[arg(long)]
        json: bool,
    },
    /// Run the graph in the reference CPU interpreter on .npy inputs; save outputs as .npy.
    Eval {
        file: PathBuf,
        /// Decomposition applied first: none, core, lite or full.
        #[arg(long, default_value = "none")]
        mode: String,
        /// Marks for lite mode: NAME, op:TARGET or module:PATH.
        #[arg(long = "mark", value_name = "SPEC")]
        marks: Vec<String>,
        /// The user inputs in graph order, comma-separated .npy files.
        #[arg(long, value_delimiter = ',', required = true)]
        inputs: Vec<PathBuf>,
        /// Folder to write out0.npy, out1.npy, ... into.
        #[arg(long = "save-outputs", value_name = "DIR")]
        save_outputs: Option<PathBuf>,
        /// Key of the generator random ops draw from (Philox4x32-10).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// Lower to kernels and write one .spv and .spvasm per kernel plus plan.json into --emit.
    Compile(CompileArgs),
    /// Lower, compile and run on a device; time each kernel; optionally check against the
    /// reference interpreter.
    Run(RunArgs),
    /// Run a model's kernels on a device with profiling on: warm-up, then N timed repetitions;
    /// prints each kernel's median device time and writes a Chrome trace and a puffin recording.
    Profile {
        #[command(flatten)]
        model: Lowering,
        /// SYM=INT; unbound symbols take their hint.
        #[arg(long = "bind", value_name = "SYM=INT")]
        binds: Vec<String>,
        #[command(flatten)]
        device: AnyDevice,
        #[arg(long, default_value_t = 10)]
        repeat: u32,
        #[arg(long, default_value_t = 1)]
        warmup: u32,
        /// Chrome trace-event JSON (Perfetto, chrome://tracing).
        #[arg(long, value_name = "OUT.json")]
        trace: Option<PathBuf>,
        /// puffin recording (puffin_viewer).
        #[arg(long, value_name = "OUT.puffin")]
        puffin: Option<PathBuf>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        #[arg(long)]
        json: bool,
        /// A TORCH_TRACE log of the same model under torch.compile: each of our kernels' regions
        /// beside Inductor's kernels for the same original nodes, with --inductor-trace.
        #[arg(long, value_name = "LOG", requires = "inductor_trace")]
        against_inductor: Option<PathBuf>,
        /// torch.profiler trace (export_chrome_trace) of that compiled model's runs; on the CPU
        /// record it with TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1 so C++ kernels show.
        #[arg(long, value_name = "TRACE", requires = "against_inductor")]
        inductor_trace: Option<PathBuf>,
    },
    /// Device time, bytes moved and guards across a dynamic dimension's range, per mode: one plan
    /// per mode reused while the guards hold, rebuilt (and marked) where one flips.
    #[command(group(clap::ArgGroup::new("format").args(["json", "csv"])))]
    Sweep(SweepArgs),
    /// A sweep from torch.profiler traces recorded at several sizes (scripts/gen_profile_sweep.py):
    /// per mode a TORCH_TRACE log and its traces; device time per point and per Inductor kernel.
    #[command(group(clap::ArgGroup::new("format").args(["json", "csv"])))]
    SweepProfiles {
        /// A folder as gen_profile_sweep.py writes it: NAME_MODE.log[.gz] and NAME_MODE_sVALUE.json[.gz].
        #[arg(long, value_name = "DIR", required_unless_present = "logs")]
        dir: Option<PathBuf>,
        /// MODE=LOG: a mode's TORCH_TRACE log (MODE: lite, or default/full for Inductor's table).
        #[arg(long = "log", value_name = "MODE=LOG")]
        logs: Vec<String>,
        /// MODE@VALUE=TRACE: a profiler trace of that mode's compiled model at that value.
        #[arg(value_name = "MODE@VALUE=TRACE")]
        traces: Vec<String>,
        /// The dimension's name in the output (the traces' sizes are its values).
        #[arg(long, default_value = "seq")]
        dim: String,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        csv: bool,
    },
    /// Benchmarks (medians over repetitions) for docs/PERFORMANCE.md.
    #[command(subcommand)]
    Bench(BenchCommand),
}

/// Exit statuses: 0 ok, 1 the check or command failed, 2 bad input (file, flag, binding),
/// 3 a check could not look at everything (what it could not is named) and found nothing wrong in the rest.
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_UNVERIFIED: u8 = 3;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => {
            let source = match cli.file {
                Some(f) => crate::ui::Source::File(f),
                None => crate::ui::Source::Embedded,
            };
            let startup = crate::ui::Startup { profile: cli.profile, sweep: cli.sweep, stages: cli.stages, kernel: cli.kernel, diff: cli.diff };
            match crate::ui::run(source, startup) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(EXIT_FAILED, &e),
            }
        }
        Some(Command::Inspect { file, json }) => inspect::run(&file, json),
        Some(Command::Diff { a, b, stage, json }) => diff::run(&a, &b, stage.as_deref(), json),
        Some(Command::Shapes { file, binds, json }) => shapes::run(&file, &binds, json),
        Some(Command::Decompose { file, mode, marks, json, against_torch, python }) => {
            decompose::run(&file, &mode, &marks, json, against_torch.then_some(python.as_str()))
        }
        Some(Command::CheckLite { file, marks, backend, torch, python, json }) => check_lite::run(check_lite::Args {
            file: &file,
            marks: &marks,
            backend: backend.as_deref(),
            torch: torch.as_deref(),
            python: python.as_deref(),
            json,
        }),
        Some(Command::TraceCalls { logs, python, json }) => trace_calls::run(&logs, &python, json),
        Some(Command::Readiness { file, backend, torch, mode, against_torch, json }) => readiness::run(readiness::Args {
            file: &file,
            backend: &backend,
            torch: torch.as_deref(),
            mode: &mode,
            against: against_torch.as_deref(),
            json,
        }),
        Some(Command::Backends { op, torch, refresh, python, json }) => backends::run(backends::Args {
            op: op.as_deref(),
            torch: torch.as_deref(),
            refresh,
            python: &python,
            json,
        }),
        Some(Command::Report { file, profile, backend, allow, against, out }) => {
            report::run(report::Args { file: &file, profile: profile.as_deref(), backend: &backend, allow: &allow, against: against.as_deref(), out: &out })
        }
        Some(Command::Kernels { log, compile, profile, against, against_profile, chrome, allow, json }) => kernels::run(kernels::Args {
            log: &log,
            compile: compile.as_deref(),
            profile: profile.as_deref(),
            against: against.as_deref(),
            against_profile: against_profile.as_deref(),
            chrome: chrome.as_deref(),
            allow: &allow,
            json,
        }),
        Some(Command::Devices { json }) => devices::run(json),
        Some(Command::Ops { markdown, results }) => ops::run(markdown, &results),
        Some(Command::Eval { file, mode, marks, inputs, save_outputs, seed, json }) => {
            eval::run(&file, &mode, &marks, &inputs, save_outputs.as_deref(), seed, json)
        }
        Some(Command::Compile(a)) => compile::compile(&a),
        Some(Command::Run(a)) => compile::run(&a),
        Some(Command::Profile { model, binds, device, repeat, warmup, trace, puffin, seed, json, against_inductor, inductor_trace }) => {
            profile::run(profile::ProfileArgs {
                file: &model.file,
                mode: &model.mode,
                marks: &model.marks,
                binds: &binds,
                device: &device.device,
                warmup,
                repeat,
                trace: trace.as_deref(),
                puffin: puffin.as_deref(),
                seed,
                json,
                inductor: against_inductor.as_deref().zip(inductor_trace.as_deref()),
            })
        }
        Some(Command::Sweep(a)) => sweep::run(&a),
        Some(Command::SweepProfiles { dir, logs, traces, dim, json, csv }) => {
            sweep::run_profiles(dir.as_deref(), &logs, &traces, &dim, json, csv)
        }
        Some(Command::Bench(BenchCommand::Import { file, repeat })) => bench::import(&file, repeat),
        Some(Command::Bench(BenchCommand::Diff { a, b, stage, repeat })) => bench::diff(&a, &b, stage.as_deref(), repeat),
        Some(Command::Bench(BenchCommand::Puffin { scopes, repeat })) => bench::puffin_overhead(scopes, repeat),
        Some(Command::Bench(BenchCommand::Kernels { max_mb, repeat, no_matmul, json: _ })) => bench_kernels::kernels(max_mb, repeat, !no_matmul),
        Some(Command::Bench(BenchCommand::Models { dirs, device, binds, warmup, repeat, only, against_torch, torch_json, torch_threads, sample, seed, markdown, resume, json: _ })) => {
            let binds: Result<Vec<(String, i64)>, _> = binds.iter().map(|s| crate::shapes::parse_binding(s)).collect();
            match binds {
                Ok(binds) => bench_models::models(bench_models::ModelsArgs { dirs: &dirs, device: &device, binds: &binds, warmup, repeat, only: &only, against_torch: against_torch.as_deref(), torch_json: torch_json.as_deref(), sample, seed, markdown: markdown.as_deref(), resume: resume.as_deref(), torch_threads }),
                Err(e) => fail(EXIT_USAGE, &e),
            }
        }
        Some(Command::Bench(BenchCommand::Ops { dir, only, max_seconds, repeat, threshold, metric, against_torch, torch_times, json, worker })) => {
            bench_ops::ops(bench_ops::OpsArgs { dir, only, max_seconds, repeat, threshold, metric, against_torch, torch_times, json, worker })
        }
        Some(Command::Bench(BenchCommand::Slider { file, repeat })) => bench::slider(&file, repeat),
        Some(Command::Bench(BenchCommand::Frame { file, nodes, frames, node_graph })) => {
            bench::frame(&file, &nodes, frames, node_graph)
        }
    }
}

pub(crate) fn load(file: &Path) -> Result<Model, ExitCode> {
    import::load(file).map_err(|e| fail(EXIT_USAGE, &e))
}

pub(crate) fn fail(code: u8, err: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {err}");
    ExitCode::from(code)
}

/// A pipeline step's error as an exit status: bad input (file, marks, inputs, an output folder
/// that cannot be made) or a step that failed.
pub(crate) fn fail_pipeline(e: &crate::pipeline::PipelineError) -> ExitCode {
    use crate::pipeline::PipelineError as E;
    let code = match e {
        E::Import(_) | E::NoGraph { .. } | E::Marks(_) | E::Inputs(_) | E::ReadInput(_) | E::CreateDir { .. } => EXIT_USAGE,
        E::Lower(_) | E::WriteOutput(_) | E::Run(_) => EXIT_FAILED,
    };
    fail(code, e)
}

pub(crate) fn print_json(v: &serde_json::Value) {
    // Writing to a closed pipe is not an error worth a panic.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, v);
    let _ = writeln!(out);
}
