//! The eframe app: each frame it takes worker results, reads shortcuts and dropped files, draws the
//! panels (which only read [`AppState`] and push [`Command`]s), then applies the commands.

use std::time::{Duration, Instant};

use egui::{Key, Modifiers};

use super::command::{Command, UiCommand};
use super::jobs::{JobResult, Jobs};
use super::neighbourhood::Neighbourhood;
use super::panels;
use super::session::{Session, Settings, Store};
use super::state::{AppState, Source, Theme, View};
use crate::runtime::probe_all;

const SAVE_EVERY: Duration = Duration::from_millis(750);

pub struct App {
    pub state: AppState,
    pub(super) jobs: Jobs,
    pub(super) store: Option<Store>,
    pub(super) commands: Vec<Command>,
    pub(super) neighbourhood: Neighbourhood,
    pub(super) applied_theme: Option<Theme>,
    pub(super) fonts_set: bool,
    pub(super) load_generation: u64,
    pub(super) dirty_since: Option<Instant>,
    /// Run & profile (heat overlay on) once the model is open and the devices are probed.
    pub(super) profile_when_open: bool,
    /// Show this compile's stages once the log is open, then pick this kernel in them.
    pub(super) stages_when_open: Option<String>,
    pub(super) kernel_when_shown: Option<String>,
}

impl App {
    /// An app that opens `source`; `store` is where sessions persist (`None`: nowhere).
    pub fn new(source: Source, store: Option<Store>) -> App {
        let settings = store.as_ref().map(Store::load_settings).unwrap_or_default();
        let state = AppState { theme: settings.theme, recent: settings.recent, ..AppState::default() };
        let mut app = App {
            state,
            jobs: Jobs::default(),
            store,
            commands: vec![Command::Open(source)],
            neighbourhood: Neighbourhood::default(),
            applied_theme: None,
            fonts_set: false,
            load_generation: 0,
            dirty_since: None,
            profile_when_open: false,
            stages_when_open: None,
            kernel_when_shown: None,
        };
        app.state.loading = Some("starting".into());
        // Probing loads the OpenCL and Level Zero libraries: not on the UI thread.
        app.jobs.spawn("probe", || JobResult::Devices(probe_all()));
        app
    }

    /// Runs & profiles the model, with the heat overlay on, as soon as it is open.
    pub fn profile_when_open(&mut self) {
        self.profile_when_open = true;
    }

    /// Shows compile `id`'s stages as soon as the log is open, and picks `kernel` in them.
    pub fn show_stages_when_open(&mut self, id: String, kernel: Option<String>) {
        self.stages_when_open = Some(id);
        self.kernel_when_shown = kernel;
    }

    /// Whether a load, decomposition or layout is still running (tests wait for this).
    pub fn busy(&self) -> bool {
        self.state.busy() || self.jobs.running() > 0 || !self.commands.is_empty()
    }

    /// Draws one frame. `eframe::App::update` calls this; headless tests call it directly.
    pub fn ui(&mut self, ctx: &egui::Context) {
        self.jobs.set_context(ctx);
        while let Some(r) = self.jobs.try_recv() {
            self.on_job(r);
        }
        super::sweeping::frame(&mut self.state, ctx);
        for v in super::diff_view::frame(&mut self.state, ctx) {
            self.request_layout(v);
        }
        super::against_inductor::frame(&mut self.state, ctx);
        if !self.fonts_set {
            ctx.set_fonts(super::assets::fonts());
            self.fonts_set = true;
        }
        if self.applied_theme != Some(self.state.theme) {
            ctx.set_visuals(match self.state.theme {
                Theme::Dark => egui::Visuals::dark(),
                Theme::Light => egui::Visuals::light(),
            });
            self.applied_theme = Some(self.state.theme);
        }
        self.shortcuts(ctx);
        if self.profile_when_open && self.state.doc.is_some() && self.state.profile.device.is_some() && !self.busy() {
            self.profile_when_open = false;
            self.state.profile.heat = true;
            self.commands.push(Command::RunProfile);
        }
        if self.state.doc.is_some() && self.state.loading.is_none() {
            if let Some(id) = self.stages_when_open.take() {
                self.commands.push(Command::ShowStages(Some(id)));
            }
        }
        // Once the kernels pane has placed its first camera, which would otherwise replace the
        // picked kernel's.
        let placed = self.state.pane(View::Kernels).camera.fit_pending.is_none();
        if let Some(stage) = self.state.kernels.stage.clone().filter(|_| self.kernel_when_shown.is_some() && placed) {
            let name = self.kernel_when_shown.take().unwrap_or_default();
            match stage.kernels.iter().position(|k| k.name == name) {
                Some(i) => {
                    // The kernel beside the dynamo graph it came from; the other stages can be
                    // ticked back on.
                    for v in [View::Aot, View::PostGrad] {
                        self.commands.push(Command::SetStageShown(v, false));
                    }
                    self.commands.push(Command::SelectKernel(Some(i)));
                    // Applied after this frame is drawn: draw another to show them.
                    ctx.request_repaint();
                }
                None => self.state.message(format!("compile {}: no kernel `{name}`", stage.compile_id)),
            }
        }
        if self.stages_when_open.is_some() || self.kernel_when_shown.is_some() {
            // Waiting on the load and the first layout, which need frames to arrive.
            ctx.request_repaint_after(Duration::from_millis(50));
        }
        for f in ctx.input(|i| i.raw.dropped_files.clone()) {
            if let Some(path) = f.path {
                self.commands.push(Command::Open(Source::File(path)));
            }
        }

        let mut cmds = std::mem::take(&mut self.commands);
        panels::top::show(ctx, &self.state, &mut cmds);
        let problems = panels::problems::collect(&self.state);
        panels::status::show(ctx, &self.state, problems.len(), &mut cmds);
        panels::problems::show(ctx, &self.state, &problems, &mut cmds);
        panels::dims::show(ctx, &self.state, &mut cmds);
        panels::inspector::show(ctx, &self.state, &mut cmds);
        panels::kernels::show(ctx, &self.state, &mut cmds);
        if self.state.profile.open {
            panels::profile::show(ctx, &self.state, &mut cmds);
        }
        if self.state.compare.open {
            panels::compare::show(ctx, &self.state, &mut cmds);
        }
        if self.state.sweep.open {
            panels::sweep::show(ctx, &self.state, &mut cmds);
        }
        if self.state.show_neighbourhood {
            self.neighbourhood.show(ctx, &self.state, &mut cmds);
        }
        if self.state.diff.open {
            panels::diff::show(ctx, &self.state, &mut cmds);
        } else {
            panels::graphs::show(ctx, &self.state, &mut cmds);
        }
        if self.state.search_open {
            panels::search::show(ctx, &self.state, &mut cmds);
        }
        for c in cmds {
            self.apply(c, ctx);
        }

        if self.state.busy() || self.jobs.running() > 0 {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        if self.dirty_since.is_some_and(|t| t.elapsed() >= SAVE_EVERY) {
            self.save();
        } else if self.dirty_since.is_some() {
            ctx.request_repaint_after(SAVE_EVERY);
        }
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        let typing = ctx.wants_keyboard_input();
        let mut out = Vec::new();
        ctx.input_mut(|i| {
            for c in UiCommand::ALL {
                if !(typing && c.is_plain_key()) && i.consume_shortcut(&c.shortcut()) {
                    out.push(c.command(&self.state));
                }
            }
            if i.consume_key(Modifiers::NONE, Key::Escape) && self.state.search_open {
                out.push(Command::CloseSearch);
            }
            if typing {
                return;
            }
            for (key, view) in [(Key::Num1, View::Original), (Key::Num2, View::Lite), (Key::Num3, View::Full)] {
                if i.consume_key(Modifiers::NONE, key) {
                    out.push(Command::Focus(view));
                }
            }
        });
        self.commands.extend(out);
    }

    pub(super) fn touch(&mut self) {
        if self.dirty_since.is_none() {
            self.dirty_since = Some(Instant::now());
        }
    }


    pub(super) fn settings(&self) -> Settings {
        Settings { theme: self.state.theme, recent: self.state.recent.clone() }
    }

    pub(super) fn save_settings(&mut self) {
        if let Some(store) = &self.store {
            if let Err(e) = store.save_settings(&self.settings()) {
                let msg = format!("cannot save settings in {}: {e}", store.dir.display());
                self.state.message(msg);
            }
        }
    }

    /// Writes this file's session now.
    pub fn save(&mut self) {
        self.dirty_since = None;
        let (Some(store), Some(doc)) = (&self.store, &self.state.doc) else { return };
        let s = &self.state;
        let session = Session {
            source: doc.source.label(),
            mark_nodes: s.marks.names.clone(),
            mark_modules: s.marks.modules.clone(),
            bindings: s.explicit.clone(),
            focus: Some(s.focus),
            shown: Some(s.shown),
            collapsed: s.collapsed.clone(),
            cameras: View::ALL
                .iter()
                .map(|v| {
                    let c = s.pane(*v).camera;
                    (v.name().to_string(), [c.center.x, c.center.y, c.zoom])
                })
                .collect(),
        };
        if let Err(e) = store.save_session(&doc.source.session_key(), &session) {
            let msg = format!("cannot save the session in {}: {e}", store.dir.display());
            self.state.message(msg);
        }
    }
}

impl eframe::App for App {
    fn update(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.ui(ctx);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        self.save();
    }
}
