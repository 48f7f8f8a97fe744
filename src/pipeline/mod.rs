//! The workbench's pipeline, one call per step, for the command line and the app alike: a model
//! file lowered under a decomposition mode, inputs read from `.npy` files or drawn at random,
//! the plan run on a device (or profiled), the outputs saved and compared with the reference
//! interpreter's ([`check`]). The CLI only parses its arguments into these calls and prints what
//! comes back; the app's profile job calls [`profile_graph`] as `profile` does, so a profile of
//! the same graph draws the same inputs in both.
//!
//! Errors are typed ([`PipelineError`]); which of them is the user's input and which a failed
//! step is the caller's to decide (the CLI's exit statuses).

pub mod check;

use std::path::{Path, PathBuf};

use crate::decomp::{MarkError, Marks, Mode};
use crate::exec::{self, Tensor};
use crate::import::{self, ImportError};
use crate::ir::{Graph, Model};
use crate::lower::{self, LowerError, Plan};
use crate::npy::{self, NpyError};
use crate::profile::{profile_plan, CpuCapture, PlanProfile, ProfileOptions};
use crate::runtime::plan::{compile_plan, run_on_device_with, PlanRun, RunError};
use crate::runtime::{open, pick_backend, probe_all, reference, Backend, Device};
use crate::sym::Bindings;

pub use check::{check_run, Check, RuleCheck};

/// Why a pipeline step stopped; each names the file, mark, node or folder it is about.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error("{}: the model has no graph", .file.display())]
    NoGraph { file: PathBuf },
    #[error(transparent)]
    Marks(#[from] MarkError),
    #[error(transparent)]
    Lower(#[from] LowerError),
    /// Random inputs could not be drawn (a size the bindings leave open, a dtype with no draw).
    #[error("{0}")]
    Inputs(String),
    /// An input `.npy` file could not be read as a tensor.
    #[error(transparent)]
    ReadInput(NpyError),
    #[error("{}: cannot create: {source}", .dir.display())]
    CreateDir { dir: PathBuf, source: std::io::Error },
    /// An output could not be written as `.npy`.
    #[error(transparent)]
    WriteOutput(NpyError),
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A model with its first graph lowered under a mode: what `compile`, `run` and `profile` share.
pub struct Lowered {
    pub model: Model,
    pub plan: Plan,
}

/// Loads `file` and lowers its first graph under `mode`, lite mode keeping the nodes the mark
/// specs (`NAME`, `op:TARGET`, `module:PATH`) do not name.
pub fn lower_file(file: &Path, mode: Mode, marks: &[String]) -> Result<Lowered, PipelineError> {
    let model = import::load(file)?;
    let graph = model.graphs.first().ok_or_else(|| PipelineError::NoGraph { file: file.to_path_buf() })?;
    let marks = Marks::parse(marks)?;
    marks.check_against(graph)?;
    let plan = lower::lower(&model, graph, mode, &marks)?;
    Ok(Lowered { model, plan })
}

/// Random user inputs of the shapes `b` gives the model's first graph's inputs.
pub fn random_inputs(model: &Model, b: &Bindings, seed: u64) -> Result<Vec<Tensor>, PipelineError> {
    let graph = model.graphs.first().ok_or_else(|| PipelineError::Inputs("the model has no graph".into()))?;
    exec::random_inputs(graph, b, seed).map_err(PipelineError::Inputs)
}

/// User inputs in graph order, one `.npy` file each.
pub fn read_inputs(paths: &[PathBuf]) -> Result<Vec<Tensor>, PipelineError> {
    paths
        .iter()
        .map(|p| {
            npy::read(p)
                .and_then(|a| {
                    Tensor::from_le_bytes(a.dtype, &a.shape, &a.data).map_err(|message| NpyError::Format { file: p.display().to_string(), message })
                })
                .map_err(PipelineError::ReadInput)
        })
        .collect()
}

/// Writes `outputs` to `dir` (created if missing) as `out0.npy`, `out1.npy`, …; the paths written.
pub fn save_outputs(dir: &Path, outputs: &[Tensor]) -> Result<Vec<PathBuf>, PipelineError> {
    std::fs::create_dir_all(dir).map_err(|source| PipelineError::CreateDir { dir: dir.to_path_buf(), source })?;
    let mut written = Vec::with_capacity(outputs.len());
    for (i, t) in outputs.iter().enumerate() {
        let path = dir.join(format!("out{i}.npy"));
        let a = npy::NpyArray { dtype: t.dtype(), shape: t.shape().to_vec(), data: t.to_le_bytes() };
        npy::write(&path, &a).map_err(PipelineError::WriteOutput)?;
        written.push(path);
    }
    Ok(written)
}

/// Runs the lowered plan on `wanted` (`None`: the app's order, XPU, OpenCL, reference:
/// [`pick_backend`]), random ops drawing from `gen`; the device's name comes back with the run.
pub fn run_plan_on(wanted: Option<Backend>, l: &Lowered, inputs: &[Tensor], b: &Bindings, gen: &exec::Generator) -> Result<(String, PlanRun), RunError> {
    let backend = pick_backend(&probe_all(), wanted);
    if backend == Backend::Reference {
        let r = reference::run_reference_with(&l.plan, &l.model, inputs, b, gen)?;
        return Ok(("reference (CPU interpreter)".into(), r));
    }
    let mut dev: Box<dyn Device> = open(backend)?;
    let modules = compile_plan(&l.plan)?;
    let name = format!("{} ({})", dev.info().name, dev.info().backend);
    let r = run_on_device_with(dev.as_mut(), &l.plan, &modules, &l.model, inputs, b, gen)?;
    Ok((name, r))
}

/// Profiles `plan` (lowered from `graph`) on `backend` with random inputs drawn from `seed` at
/// `bindings`: `profile` and the app's profile panel both come here, so both time the same run.
#[allow(clippy::too_many_arguments)]
pub fn profile_graph(
    capture: CpuCapture,
    backend: Backend,
    plan: &Plan,
    model: &Model,
    graph: &Graph,
    bindings: &Bindings,
    seed: u64,
    options: ProfileOptions,
    progress: &mut dyn FnMut(String),
) -> Result<PlanProfile, PipelineError> {
    let inputs = exec::random_inputs(graph, bindings, seed).map_err(PipelineError::Inputs)?;
    Ok(profile_plan(capture, backend, plan, model, &inputs, bindings, options, progress)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples").join(name)
    }

    #[test]
    fn a_sample_lowered_and_run_on_the_reference_matches_torch_and_the_interpreter() {
        let l = lower_file(&sample("mlp.pt2"), Mode::Full, &[]).expect("mlp lowers");
        assert!(l.plan.kernel_count() > 0);
        let inputs = read_inputs(&[sample("mlp.in0.npy")]).expect("inputs");
        let graph = &l.model.graphs[0];
        let b = exec::infer_bindings(&l.model, graph, &inputs).expect("bindings");
        let gen = exec::Generator::seeded(0);
        let (device, run) = run_plan_on(Some(Backend::Reference), &l, &inputs, &b, &gen).expect("runs");
        assert_eq!(device, "reference (CPU interpreter)");
        let c = check_run(&l.model, graph, &inputs, &gen, &run.outputs).expect("interpreter runs");
        assert!(c.ok, "{c:?}");
        // Against what torch computed, too: the comparison can fail.
        let torch = read_inputs(&[sample("mlp.out0.npy")]).expect("torch's output");
        assert!(check::check(graph, &run.outputs, &torch).ok);
        let wrong: Vec<Tensor> = torch.iter().map(|t| Tensor::from_vec(t.shape(), vec![1e3f32; t.numel()]).expect("tensor")).collect();
        assert!(!check::check(graph, &run.outputs, &wrong).ok);
    }

    #[test]
    fn errors_name_the_file_mark_or_folder() {
        let missing = lower_file(&sample("no_such_model.pt2"), Mode::Full, &[]).err().expect("missing file");
        assert!(matches!(missing, PipelineError::Import(_)) && missing.to_string().contains("no_such_model.pt2"), "{missing}");
        let mark = lower_file(&sample("mlp.pt2"), Mode::Lite, &["no_such_node".into()]).err().expect("bad mark");
        assert!(matches!(mark, PipelineError::Marks(_)) && mark.to_string().contains("no_such_node"), "{mark}");
        let input = read_inputs(&[sample("mlp.pt2")]).err().expect("not an .npy");
        assert!(matches!(input, PipelineError::ReadInput(_)) && input.to_string().contains("mlp.pt2"), "{input}");
        // A folder below a file cannot be made.
        let below_file = sample("mlp.pt2").join("out");
        let dir = save_outputs(&below_file, &[]).err().expect("cannot create");
        assert!(matches!(dir, PipelineError::CreateDir { .. }) && dir.to_string().contains("cannot create"), "{dir}");
    }

    #[test]
    fn saved_outputs_read_back_as_they_were() {
        let dir = std::env::temp_dir().join(format!("xpu-wb-pipeline-{}", std::process::id()));
        let t = vec![Tensor::from_vec(&[2, 3], vec![0.5f32, -1.0, 2.0, 3.0, f32::NAN, 7.0]).expect("tensor")];
        let paths = save_outputs(&dir, &t).expect("written");
        assert_eq!(paths, vec![dir.join("out0.npy")]);
        let back = read_inputs(&paths).expect("read back");
        assert_eq!(back[0].to_le_bytes(), t[0].to_le_bytes());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
