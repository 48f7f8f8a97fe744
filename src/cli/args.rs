//! Arguments more than one subcommand takes (the model to lower, the device to time on), the
//! argument structs handed whole to a subcommand's file, and `bench`'s subcommands.

use std::path::PathBuf;

use clap::Subcommand;

use super::bench_models;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Import a model and evaluate every tensor's shape at the symbols' hints.
    Import {
        file: PathBuf,
        #[arg(long, default_value_t = 20)]
        repeat: usize,
    },
    /// Median time of `diff`'s alignment and classification of two loaded graphs (loading and
    /// decomposing not counted).
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// As `diff --stage`.
        #[arg(long, value_name = "S[,S]")]
        stage: Option<String>,
        #[arg(long, default_value_t = 20)]
        repeat: usize,
    },
    /// Nanoseconds per puffin scope, with scopes off (the default) and on.
    Puffin {
        /// Scopes per round.
        #[arg(long, default_value_t = 1_000_000)]
        scopes: u64,
        #[arg(long, default_value_t = 15)]
        repeat: usize,
    },
    /// GB/s of generated pointwise and reduction kernels against a copy kernel (OpenCL), for
    /// buffers from 1 MB to --max-mb (x8 steps), and lite vs full kernel counts of the samples.
    Kernels {
        #[arg(long = "max-mb", default_value_t = 1024)]
        max_mb: usize,
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// Leave out the matrix products (the serial ones take most of the time).
        #[arg(long = "no-matmul")]
        no_matmul: bool,
        /// Print JSON (the only format; accepted so the command reads like the others).
        #[arg(long)]
        json: bool,
    },
    /// Every zoo model's lite and full plan on one device: kernels launched and median device
    /// time of a run of each (JSON; one line per model on stderr as it finishes).
    Models {
        /// Folder of .pt2 models (repeat for several; default: both committed zoo sets).
        #[arg(long = "dir", default_values = bench_models::ZOO)]
        dirs: Vec<PathBuf>,
        /// auto (XPU, then OpenCL), xpu or opencl.
        #[arg(long, default_value = "auto")]
        device: String,
        /// SYM=INT for models that have symbol SYM; others take their hints.
        #[arg(long = "bind", value_name = "SYM=INT")]
        binds: Vec<String>,
        #[arg(long, default_value_t = 1)]
        warmup: u32,
        #[arg(long, default_value_t = 5)]
        repeat: u32,
        /// Only models whose name contains one of these (comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Time torch eager and torch.compile with this Python (torch installed) on the same
        /// models in the same run, and report our full mode's wall time against them.
        #[arg(long = "against-torch", value_name = "PY")]
        against_torch: Option<PathBuf>,
        /// torch's threads with --against-torch (default: every core). On a busy machine fewer
        /// threads than cores keep OpenMP's barriers from waiting on descheduled threads.
        #[arg(long = "torch-threads", value_name = "N", requires = "against_torch")]
        torch_threads: Option<u32>,
        /// Torch's times from a file scripts/bench_torch_cpu.py printed before, instead of running it.
        #[arg(long = "torch-json", value_name = "FILE", conflicts_with = "against_torch")]
        torch_json: Option<PathBuf>,
        /// Measure N models drawn at random (seeded, the same on every machine) from those --only leaves.
        #[arg(long, value_name = "N")]
        sample: Option<usize>,
        /// The seed of --sample.
        #[arg(long, default_value_t = 0, requires = "sample")]
        seed: u64,
        /// Also write the run as a markdown table (conditions, summary, one row per model) to FILE.
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
        /// Carry on from the stderr of an earlier run (same arguments) that stopped part-way:
        /// models it finished, on torch's side or ours, are not run again.
        #[arg(long, value_name = "LOG")]
        resume: Option<PathBuf>,
        /// Print JSON (the only format; accepted so the command reads like the others).
        #[arg(long)]
        json: bool,
    },
    /// Every OpInfo-style case through the OpenCL kernels (mode none) and the interpreter, next
    /// to torch eager on the same CPU: medians, and the cases above --threshold × torch eager.
    Ops {
        /// The case set (scripts/gen_opinfo.py's layout; default tests/data/opinfo).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Only these ops (OpInfo names, comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Seconds one case may take in all; a case that overruns is stopped and listed as slow.
        #[arg(long = "max-seconds", default_value_t = 30.0)]
        max_seconds: f64,
        /// Timed runs per case (fewer when a case is slow).
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// List cases above this many times torch eager.
        #[arg(long, default_value_t = 10.0)]
        threshold: f64,
        /// What is held against torch eager: device (the kernels' summed device time) or wall
        /// (a whole run: uploads, launches, read-back).
        #[arg(long, default_value = "device")]
        metric: String,
        /// Time torch eager now with this Python (torch installed) instead of reading the
        /// committed timings (DIR/torch_times.json).
        #[arg(long = "against-torch", value_name = "PY")]
        against_torch: Option<PathBuf>,
        /// Committed torch timings to read instead of DIR/torch_times.json.
        #[arg(long = "torch-times", value_name = "FILE")]
        torch_times: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Internal: time the case keys read on stdin, one JSON line each (what the supervisor runs).
        #[arg(long, hide = true)]
        worker: bool,
    },
    /// Slider move → every shape, stride, byte size and guard re-evaluated (the app's hot path).
    Slider {
        file: PathBuf,
        #[arg(long, default_value_t = 30)]
        repeat: usize,
    },
    /// Headless frame time (egui run + tessellate, 1600×1000) of the graph views on prefixes of
    /// the file's first graph.
    Frame {
        file: PathBuf,
        /// Node counts to draw (prefixes of the graph).
        #[arg(long, value_delimiter = ',', default_value = "500,2000,12000")]
        nodes: Vec<usize>,
        #[arg(long, default_value_t = 30)]
        frames: usize,
        /// Also time egui_node_graph2 holding every node (slow at large counts).
        #[arg(long)]
        node_graph: bool,
    },
}

/// The model file of `compile`, `run` and `profile`, and the decomposition applied before lowering.
#[derive(clap::Args, Debug)]
pub struct Lowering {
    pub file: PathBuf,
    #[arg(long, default_value = "full")]
    pub mode: String,
    #[arg(long = "mark", value_name = "SPEC")]
    pub marks: Vec<String>,
}

/// `--device` of the timed commands (`profile`, `sweep`): any backend, the best one by default.
#[derive(clap::Args, Debug)]
pub struct AnyDevice {
    /// auto (XPU, then OpenCL, then reference), xpu, opencl, or reference (host times stand
    /// in for device times there).
    #[arg(long, default_value = "auto")]
    pub device: String,
}

#[derive(clap::Args, Debug)]
pub struct CompileArgs {
    #[command(flatten)]
    pub model: Lowering,
    /// SYM=INT, for the sizes plan.json shows; kernels do not depend on it.
    #[arg(long = "bind", value_name = "SYM=INT")]
    pub binds: Vec<String>,
    #[arg(long, value_name = "DIR")]
    pub emit: PathBuf,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: Lowering,
    /// SYM=INT (used when no --inputs are given; unbound symbols take their hint).
    #[arg(long = "bind", value_name = "SYM=INT")]
    pub binds: Vec<String>,
    /// reference (CPU interpreter), opencl, xpu (Level Zero), or auto (XPU, then OpenCL, then reference).
    #[arg(long, default_value = "opencl")]
    pub device: String,
    /// User inputs in graph order, comma-separated .npy files; random (seeded) when absent.
    #[arg(long, value_delimiter = ',')]
    pub inputs: Vec<PathBuf>,
    #[arg(long = "save-outputs", value_name = "DIR")]
    pub save_outputs: Option<PathBuf>,
    /// Compare the outputs with the reference interpreter on the unmodified graph (outputs
    /// of random ops by rule: shape, dtype, distribution).
    #[arg(long)]
    pub check: bool,
    /// Seeds the random inputs and the generator random ops draw from, on every device.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    pub file: PathBuf,
    /// SYM=LO..HI: the symbol to sweep and the part of its range to cover (inclusive).
    #[arg(long, value_name = "SYM=LO..HI")]
    pub dim: String,
    /// Values spread log-uniformly over LO..HI, plus the ends and both sides of each guard flip.
    #[arg(long, default_value_t = 16, conflicts_with = "values")]
    pub points: usize,
    /// Exactly these values instead (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "A,B,C")]
    pub values: Vec<i64>,
    /// OTHER=INT for the other symbols; unbound ones take their hint.
    #[arg(long = "bind", value_name = "SYM=INT")]
    pub binds: Vec<String>,
    /// Decomposition modes to compare (comma-separated): none, core, lite, full.
    #[arg(long = "mode", value_name = "MODE", value_delimiter = ',', default_value = "lite,full")]
    pub modes: Vec<String>,
    /// Marks for lite mode: NAME, op:TARGET or module:PATH.
    #[arg(long = "mark", value_name = "SPEC")]
    pub marks: Vec<String>,
    #[command(flatten)]
    pub device: AnyDevice,
    /// Most timed runs per point and mode (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Stop repeating a point once it has taken this long (it still gets one timed run).
    #[arg(long = "budget-ms", default_value_t = 250)]
    pub budget_ms: u64,
    /// Untimed runs after each build of a plan (not at every point: the binary is reused).
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub csv: bool,
}
