//! The sweep panel's store: its settings, the running sweep (a worker thread that streams points
//! back over a channel and stops when asked) and what it measured. The measuring is
//! `sweep::run_sweep`, the same as the `sweep` command's.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use super::state::{clamp_i64, AppState};
use crate::decomp::Mode;
use crate::sweep::{self, Dim, Flip, Progress, Selection, Sweep, SweepOptions, SweepPoint};

/// The modes the panel compares, in legend order.
pub const MODES: [Mode; 2] = [Mode::Lite, Mode::Full];
/// Ranges are capped here when a symbol is unbounded above (`int_oo`), as the dims sliders are.
pub const DEFAULT_HI: i64 = 1024;
/// Interactive sweeps repeat less than the command does: the plot should fill in quickly.
const REPEAT: u32 = 3;
const BUDGET: Duration = Duration::from_millis(100);

/// What the panel asks the app to do with the sweep.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepCommand {
    Show(bool),
    /// Sweep this symbol (its range reset to the symbol's, capped at [`DEFAULT_HI`]).
    SetDim(String),
    SetRange(i64, i64),
    SetPoints(usize),
    SetMode(Mode, bool),
    SetLogX(bool),
    SetLogY(bool),
    /// Whose kernels the stacked plot shows.
    SetStacked(Mode),
    Run,
    Cancel,
    /// Ask where to write the CSV (a dialog, on a worker), then write it.
    ExportCsv,
    ExportCsvTo(PathBuf),
    /// Capture this part of the window (the panel, in points) and ask where to write it as PNG.
    ExportPng(egui::Rect),
    /// Ask for a folder of profiler traces at several sizes (`scripts/gen_profile_sweep.py`).
    LoadProfiles,
    /// Plot the sweep of the profiler traces in this folder (`sweep-profiles --dir`).
    LoadProfilesFrom(PathBuf),
}

enum Msg {
    Progress(Progress),
    Done(Result<Sweep, sweep::SweepError>),
    Exported(Result<String, String>),
    Picked(Option<PathBuf>),
    PickedFolder(Option<PathBuf>),
}

/// A sweep running on its worker.
struct Job {
    rx: Receiver<Msg>,
    cancel: Arc<AtomicBool>,
}

pub struct SweepState {
    pub open: bool,
    pub dim: Option<String>,
    pub lo: i64,
    pub hi: i64,
    pub points: usize,
    pub modes: Vec<Mode>,
    pub log_x: bool,
    pub log_y: bool,
    pub stacked: Mode,
    /// `(what, done, total)` while a sweep runs.
    pub progress: Option<(String, usize, usize)>,
    /// Measured so far (streamed in while running), value-major.
    pub measured: Vec<SweepPoint>,
    /// Flips of the swept range and the dimension they are over, known as soon as a run starts.
    pub flips: Vec<Flip>,
    pub swept: Option<Dim>,
    /// The finished sweep (for export).
    pub result: Option<Arc<Sweep>>,
    pub error: Option<String>,
    pub note: Option<String>,
    /// Sweep this as soon as a model is open and the devices are probed (`--sweep`).
    pub pending: Option<Dim>,
    /// The part of the window a requested screenshot is to be cropped to, until it arrives.
    shot: Option<egui::Rect>,
    job: Option<Job>,
    /// Exports and dialogs answer here.
    side: Option<Receiver<Msg>>,
    /// A folder of profiler traces the dialog picked, loaded on the next frame.
    picked_folder: Option<PathBuf>,
}

impl Default for SweepState {
    fn default() -> Self {
        SweepState {
            open: false,
            dim: None,
            lo: 1,
            hi: DEFAULT_HI,
            points: 16,
            modes: MODES.to_vec(),
            log_x: true,
            // Times over a log-spaced range span decades: log-log is the readable default.
            log_y: true,
            stacked: Mode::Lite,
            progress: None,
            measured: Vec::new(),
            flips: Vec::new(),
            swept: None,
            result: None,
            error: None,
            note: None,
            pending: None,
            shot: None,
            job: None,
            side: None,
            picked_folder: None,
        }
    }
}

impl SweepState {
    pub fn running(&self) -> bool {
        self.job.is_some()
    }

    /// A sweep, an export or its dialog is under way.
    pub fn busy(&self) -> bool {
        self.job.is_some() || self.side.is_some()
    }

    /// Takes what the workers sent since the last frame.
    pub fn poll(&mut self) {
        let mut finished = false;
        if let Some(job) = &self.job {
            while let Ok(m) = job.rx.try_recv() {
                match m {
                    Msg::Progress(Progress::Status { text, done, total }) => self.progress = Some((text, done, total)),
                    Msg::Progress(Progress::Point(p)) => self.measured.push(p),
                    Msg::Done(r) => {
                        finished = true;
                        match r {
                            Ok(s) => {
                                self.measured = s.points.clone();
                                self.flips = s.flips.clone();
                                self.swept = Some(s.dim.clone());
                                self.result = Some(Arc::new(s));
                            }
                            Err(sweep::SweepError::Cancelled) => {
                                self.note = Some(format!("cancelled after {} measurements", self.measured.len()));
                            }
                            Err(e) => self.error = Some(e.to_string()),
                        }
                    }
                    _ => {}
                }
            }
        }
        if finished {
            self.job = None;
            self.progress = None;
        }
        let mut side_done = false;
        let mut load_after_pick = None;
        if let Some(rx) = &self.side {
            while let Ok(m) = rx.try_recv() {
                side_done = true;
                match m {
                    Msg::Exported(Ok(t)) => self.note = Some(t),
                    Msg::Exported(Err(e)) => self.error = Some(e),
                    Msg::Picked(Some(path)) => self.note = Some(format!("exporting to {}", path.display())),
                    Msg::PickedFolder(Some(dir)) => load_after_pick = Some(dir),
                    _ => {}
                }
            }
        }
        if side_done {
            self.side = None;
        }
        self.picked_folder = load_after_pick.or(self.picked_folder.take());
    }
}

/// Once a frame: takes what the workers sent, and starts a pending sweep once it can run.
pub fn frame(state: &mut AppState, ctx: &egui::Context) {
    state.sweep.poll();
    if let Some(dir) = state.sweep.picked_folder.take() {
        load_profiles(&mut state.sweep, dir, ctx);
    }
    let ready = state.doc.is_some() && state.profile.device.is_some() && state.loading.is_none();
    if let Some(d) = state.sweep.pending.take_if(|_| ready) {
        apply(state, SweepCommand::SetDim(d.symbol.clone()), ctx);
        state.sweep.lo = d.lo;
        state.sweep.hi = d.hi;
        state.sweep.open = true;
        run(state, ctx);
    }
    if let Some(rect) = state.sweep.shot {
        let shot = ctx.input(|i| {
            i.raw.events.iter().find_map(|e| match e {
                egui::Event::Screenshot { image, .. } => Some(image.clone()),
                _ => None,
            })
        });
        match shot {
            Some(image) => {
                state.sweep.shot = None;
                let crop = image.region(&rect, Some(ctx.pixels_per_point()));
                save_png(&mut state.sweep, crop, ctx);
            }
            None => ctx.request_repaint_after(Duration::from_millis(50)),
        }
    }
    if state.sweep.pending.is_some() {
        // Nothing else may wake the UI between the load finishing and the probe answering.
        ctx.request_repaint_after(Duration::from_millis(100));
    }
}

/// The symbol to sweep when none is picked: the first of the model's.
pub fn default_dim(state: &AppState) -> Option<String> {
    state.doc.as_ref()?.model.symbols.first().map(|s| s.name.clone())
}

/// Applies a panel command; `ctx` is woken by the workers.
pub fn apply(state: &mut AppState, c: SweepCommand, ctx: &egui::Context) {
    let s = &mut state.sweep;
    match c {
        SweepCommand::Show(on) => s.open = on,
        SweepCommand::SetDim(name) => {
            if let Some(sym) = state.doc.as_ref().and_then(|d| d.model.symbol(&name)) {
                s.lo = clamp_i64(sym.range.min);
                s.hi = sym.range.max.map_or(DEFAULT_HI, clamp_i64).min(s.lo.saturating_add(DEFAULT_HI).max(DEFAULT_HI));
                s.dim = Some(name);
            }
        }
        SweepCommand::SetRange(lo, hi) => (s.lo, s.hi) = (lo, hi),
        SweepCommand::SetPoints(n) => s.points = n.clamp(2, 256),
        SweepCommand::SetMode(m, on) => {
            s.modes.retain(|x| *x != m);
            if on {
                s.modes.push(m);
                s.modes.sort_by_key(|m| MODES.iter().position(|x| x == m));
            }
        }
        SweepCommand::SetLogX(on) => s.log_x = on,
        SweepCommand::SetLogY(on) => s.log_y = on,
        SweepCommand::SetStacked(m) => s.stacked = m,
        SweepCommand::Run => run(state, ctx),
        SweepCommand::Cancel => {
            if let Some(job) = &s.job {
                job.cancel.store(true, Ordering::Relaxed);
            }
        }
        SweepCommand::ExportCsv => export_dialog(s, ctx),
        SweepCommand::ExportCsvTo(path) => export(s, path, ctx),
        SweepCommand::ExportPng(rect) => {
            s.shot = Some(rect);
            ctx.send_viewport_cmd(egui::ViewportCommand::Screenshot);
        }
        SweepCommand::LoadProfiles => pick_profiles_folder(s, ctx),
        SweepCommand::LoadProfilesFrom(dir) => load_profiles(s, dir, ctx),
    }
}

/// Reads a folder of profiler traces on a worker and shows their sweep like a measured one.
fn load_profiles(s: &mut SweepState, dir: PathBuf, ctx: &egui::Context) {
    if s.running() {
        return;
    }
    s.error = None;
    s.note = None;
    s.measured.clear();
    s.result = None;
    s.progress = Some((format!("reading {}", dir.display()), 0, 1));
    let (tx, rx) = channel();
    s.job = Some(Job { rx, cancel: Arc::new(AtomicBool::new(false)) });
    let ctx = ctx.clone();
    let spawned = super::jobs::worker_thread("job-sweep-profiles").spawn(move || {
        let r = sweep::profiles::series_in_dir(&dir)
            .and_then(|series| sweep::profiles::sweep_from_profiles("seq", &series))
            .map_err(sweep::SweepError::from);
        let _ = tx.send(Msg::Done(r));
        ctx.request_repaint();
    });
    if let Err(e) = spawned {
        s.job = None;
        s.progress = None;
        s.error = Some(format!("cannot start reading the traces: {e}"));
    }
}

#[cfg(feature = "file-dialog")]
fn pick_profiles_folder(s: &mut SweepState, ctx: &egui::Context) {
    side_job(s, ctx, "dialog", |tx| {
        let picked = rfd::FileDialog::new().set_title("A folder of profiler traces at several sizes").pick_folder();
        let _ = tx.send(Msg::PickedFolder(picked));
    });
}

#[cfg(not(feature = "file-dialog"))]
fn pick_profiles_folder(s: &mut SweepState, _ctx: &egui::Context) {
    s.error = Some("this build has no file dialog: run `xpu-workbench sweep-profiles --dir DIR`".into());
}

/// Starts a sweep of the original graph (lite with the app's lite marks) on the picked device.
fn run(state: &mut AppState, ctx: &egui::Context) {
    if state.sweep.running() {
        return;
    }
    let marks = state.lite_marks();
    let fixed_explicit: Vec<(String, i64)> = state.bindings.iter().map(|(k, v)| (k.to_string(), v)).collect();
    let s = &mut state.sweep;
    s.error = None;
    s.note = None;
    let (Some(doc), Some(backend)) = (&state.doc, state.profile.device) else {
        s.error = Some("nothing to sweep yet: open a model and wait for the device probe".into());
        return;
    };
    let Some(symbol) = s.dim.clone().or_else(|| doc.model.symbols.first().map(|x| x.name.clone())) else {
        s.error = Some("this model has no dynamic dimensions to sweep".into());
        return;
    };
    let model = doc.model.clone();
    let graph = doc.graph;
    let dim = Dim { symbol: symbol.clone(), lo: s.lo, hi: s.hi };
    // The other symbols stay where the sliders put them.
    let explicit: Vec<(String, i64)> = fixed_explicit.into_iter().filter(|(k, _)| *k != symbol).collect();
    let prepared = sweep::prepare(&model, &dim, &explicit)
        .and_then(|fixed| sweep::plan_points(&model, &dim, &fixed, &Selection::Count(s.points)).map(|p| (fixed, p)));
    let (fixed, points) = match prepared {
        Ok(x) => x,
        Err(e) => {
            s.error = Some(e.to_string());
            return;
        }
    };
    let options = SweepOptions { modes: s.modes.clone(), marks, backend, warmup: 1, repeat: REPEAT, budget: BUDGET, seed: 0 };
    s.dim = Some(symbol);
    s.measured.clear();
    s.result = None;
    s.flips = points.flips.clone();
    s.swept = Some(dim.clone());
    s.progress = Some(("starting".into(), 0, points.values.len() * options.modes.len()));
    let (tx, rx) = channel();
    let cancel = Arc::new(AtomicBool::new(false));
    s.job = Some(Job { rx, cancel: cancel.clone() });
    let ctx = ctx.clone();
    let spawned = super::jobs::worker_thread("job-sweep").spawn(move || {
        let g = &model.graphs[graph];
        let mut report = |p: Progress| {
            let _ = tx.send(Msg::Progress(p));
            ctx.request_repaint();
        };
        let r = sweep::run_sweep(&model, g, &dim, &fixed, &points, &options, &mut report, &cancel);
        let _ = tx.send(Msg::Done(r));
        ctx.request_repaint();
    });
    if let Err(e) = spawned {
        s.job = None;
        s.progress = None;
        s.error = Some(format!("cannot start the sweep: {e}"));
    }
}

#[cfg(feature = "file-dialog")]
fn export_dialog(s: &mut SweepState, ctx: &egui::Context) {
    let Some(result) = s.result.clone() else { return };
    side_job(s, ctx, "export", move |tx| {
        let picked = rfd::FileDialog::new()
            .set_title("Export the sweep")
            .set_file_name(format!("sweep-{}.csv", result.dim.symbol))
            .save_file();
        let _ = tx.send(Msg::Picked(picked.clone()));
        if let Some(path) = picked {
            let _ = tx.send(Msg::Exported(write_csv(&result, &path)));
        }
    });
}

#[cfg(not(feature = "file-dialog"))]
fn export_dialog(s: &mut SweepState, ctx: &egui::Context) {
    let name = s.result.as_ref().map_or("sweep".into(), |r| format!("sweep-{}", r.dim.symbol));
    export(s, PathBuf::from(format!("{name}.csv")), ctx);
}

fn export(s: &mut SweepState, path: PathBuf, ctx: &egui::Context) {
    let Some(result) = s.result.clone() else {
        s.error = Some("nothing to export: run a sweep first".into());
        return;
    };
    side_job(s, ctx, "export", move |tx| {
        let _ = tx.send(Msg::Exported(write_csv(&result, &path)));
    });
}

/// Runs `job` (a dialog or a file write: they block) on a worker, with a new side channel that
/// replaces the last one, so a superseded dialog's or export's messages are dropped with it.
fn side_job(s: &mut SweepState, ctx: &egui::Context, name: &str, job: impl FnOnce(&Sender<Msg>) + Send + 'static) {
    let (tx, rx) = channel();
    s.side = Some(rx);
    let ctx = ctx.clone();
    let spawned = super::jobs::worker_thread(&format!("job-sweep-{name}")).spawn(move || {
        job(&tx);
        ctx.request_repaint();
    });
    if let Err(e) = spawned {
        s.side = None;
        s.error = Some(format!("cannot start the sweep's {name}: {e}"));
    }
}

/// `image` as PNG bytes (8-bit RGBA).
pub fn encode_png(image: &egui::ColorImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, image.size[0] as u32, image.size[1] as u32);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| e.to_string())?;
    w.write_image_data(image.as_raw()).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Asks where (a dialog, on a worker) and writes the captured panel there.
fn save_png(s: &mut SweepState, image: egui::ColorImage, ctx: &egui::Context) {
    let name = s.swept.as_ref().map_or("sweep".into(), |d| format!("sweep-{}", d.symbol));
    side_job(s, ctx, "plot export", move |tx| {
        #[cfg(feature = "file-dialog")]
        let path = rfd::FileDialog::new().set_title("Export the sweep plot").set_file_name(format!("{name}.png")).save_file();
        #[cfg(not(feature = "file-dialog"))]
        let path = Some(PathBuf::from(format!("{name}.png")));
        let _ = tx.send(Msg::Picked(path.clone()));
        if let Some(path) = path {
            let written = encode_png(&image).and_then(|bytes| std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display())));
            let _ = tx.send(Msg::Exported(written.map(|_| format!("wrote {}", path.display()))));
        }
    });
}

fn write_csv(s: &Sweep, path: &std::path::Path) -> Result<String, String> {
    std::fs::write(path, sweep::to_csv(s)).map(|_| format!("wrote {}", path.display())).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn png_export_round_trips_the_captured_pixels() {
        let mut image = egui::ColorImage::new([5, 3], egui::Color32::from_rgb(10, 20, 30));
        image.pixels[7] = egui::Color32::from_rgb(200, 100, 50);
        let bytes = super::encode_png(&image).unwrap();
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (5, 3));
        assert_eq!(&buf[7 * 4..7 * 4 + 4], &[200, 100, 50, 255]);
    }
}
