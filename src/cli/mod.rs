//! The command line: every thing the app can do, scriptable. `cli.rs`-style: arguments here,
//! each subcommand's work in its own file.

mod bench;
mod decompose;
mod inspect;
mod shapes;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::import;
use crate::ir::Model;

#[derive(Parser, Debug)]
#[command(name = "xpu-workbench", version, about = "Workbench for PyTorch Inductor on Intel XPU")]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A model file to open in the app (no file: the embedded sample).
    pub file: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Graphs, op histograms, inputs/outputs and symbols of a model file.
    Inspect {
        file: PathBuf,
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
    },
    /// Exit 0 when lite mode decomposed no unmarked node, 1 listing each violation.
    CheckLite {
        file: PathBuf,
        #[arg(long = "mark", value_name = "SPEC")]
        marks: Vec<String>,
    },
    /// Benchmarks (medians over repetitions) for docs/PERFORMANCE.md.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Import a model and evaluate every tensor's shape at the symbols' hints.
    Import {
        file: PathBuf,
        #[arg(long, default_value_t = 20)]
        repeat: usize,
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

/// Exit statuses: 0 ok, 1 the check or command failed, 2 bad input (file, flag, binding).
pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        None => {
            let source = match cli.file {
                Some(f) => crate::ui::Source::File(f),
                None => crate::ui::Source::Embedded,
            };
            match crate::ui::run(source) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(EXIT_FAILED, &e),
            }
        }
        Some(Command::Inspect { file, json }) => inspect::run(&file, json),
        Some(Command::Shapes { file, binds, json }) => shapes::run(&file, &binds, json),
        Some(Command::Decompose { file, mode, marks, json }) => decompose::run(&file, &mode, &marks, json),
        Some(Command::CheckLite { file, marks }) => match load(&file) {
            Ok(model) => decompose::check_lite_pt2(&model, &marks),
            Err(code) => code,
        },
        Some(Command::Bench(BenchCommand::Import { file, repeat })) => bench::import(&file, repeat),
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

pub(crate) fn print_json(v: &serde_json::Value) {
    // Writing to a closed pipe is not an error worth a panic.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, v);
    let _ = writeln!(out);
}
