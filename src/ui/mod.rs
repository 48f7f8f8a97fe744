//! The desktop app (eframe/egui). [`AppState`] is the store; `panels/` and [`canvas`] read it and
//! emit [`Command`]s; [`App`] applies them and runs loading, decomposition and layout on workers
//! ([`jobs`]). No compiler logic lives here: it calls `import`, `decomp` and `shapes`.

pub mod against_inductor;
mod app;
pub mod assets;
pub mod bench;
pub mod camera_sync;
pub mod canvas;
mod canvas_edges;
pub mod groups;
// The module tree lives below the UI (the HTML report folds by it too); UI code keeps its path.
pub use crate::hierarchy;
mod command;
mod command_handling;
pub mod comparing;
pub mod diff_links;
pub mod diff_view;
mod file_dialog;
pub mod kernel_stage;
mod job_handling;
mod jobs;
pub mod layout;
pub mod log_open;
pub mod minimap;
pub mod neighbourhood;
mod panels;
mod report_export;
pub mod profiling;
pub mod readiness;
pub mod session;
pub mod stages;
pub mod state;
pub mod sweeping;
mod task;

pub use app::App;
pub use command::{Command, ExportKind, MarkTarget};
pub use state::{AppState, Source, View};

/// What the app does once the file it opens is loaded.
#[derive(Clone, Debug, Default)]
pub struct Startup {
    /// Run & profile the model.
    pub profile: bool,
    /// `SYM=LO..HI`: sweep it in the sweep panel.
    pub sweep: Option<String>,
    /// A TORCH_TRACE log's compile id: show its stages and kernels.
    pub stages: Option<String>,
    /// With `stages`: the kernel to pick.
    pub kernel: Option<String>,
    /// Open the diff mode against this file.
    pub diff: Option<std::path::PathBuf>,
}

/// Opens the app window on `source` and returns when it closes, doing what `startup` asks once
/// the file is open.
pub fn run(source: Source, startup: Startup) -> Result<(), String> {
    let Startup { profile, sweep, stages, kernel, diff } = startup;
    let sweep = sweep.map(|d| crate::sweep::Dim::parse(&d)).transpose().map_err(|e| e.to_string())?;
    let mut options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("xpu-workbench")
            .with_inner_size([1600.0, 1000.0])
            .with_drag_and_drop(true)
            .with_app_id("xpu-workbench"),
        ..Default::default()
    };
    if let Some(icon) = assets::icon() {
        options.viewport = options.viewport.with_icon(icon);
    }
    eframe::run_native(
        "xpu-workbench",
        options,
        Box::new(move |_cc| {
            let mut app = App::new(source, session::Store::default_location());
            if profile {
                app.profile_when_open();
            }
            if let Some(id) = stages {
                app.show_stages_when_open(id, kernel);
            }
            app.state.sweep.pending = sweep;
            app.state.diff.pending = diff;
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| format!("cannot open the app window: {e}"))
}
