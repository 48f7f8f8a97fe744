//! The real app driven headlessly, for UI tests beyond `ui_headless.rs`: an egui `Context` runs
//! `App::ui` frame after frame, input goes in as AccessKit actions, and assertions read what is
//! displayed from the AccessKit tree by label, as a screen reader would.

use std::time::{Duration, Instant};

use egui::accesskit::{Action, ActionRequest, Node, NodeId, Role};
use egui::{pos2, Event, Rect};
use xpu_workbench::ui::{App, Source};

pub struct Harness {
    pub ctx: egui::Context,
    pub app: App,
    events: Vec<Event>,
    nodes: Vec<(NodeId, Node)>,
}

impl Harness {
    /// The app on `source`, with no session store (nothing from the person running the tests).
    pub fn new(source: Source) -> Harness {
        let ctx = egui::Context::default();
        ctx.enable_accesskit();
        let mut h = Harness { ctx, app: App::new(source, None), events: Vec::new(), nodes: Vec::new() };
        h.settle();
        h
    }

    pub fn frame(&mut self) {
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(pos2(0.0, 0.0), egui::vec2(1600.0, 1000.0))),
            events: std::mem::take(&mut self.events),
            ..Default::default()
        };
        let app = &mut self.app;
        let out = self.ctx.run(input, |ctx| app.ui(ctx));
        if let Some(update) = out.platform_output.accesskit_update {
            self.nodes = update.nodes;
        }
    }

    /// Runs frames until no worker is busy, then two more so the display catches up.
    pub fn settle(&mut self) {
        let start = Instant::now();
        self.frame();
        while self.app.busy() {
            assert!(start.elapsed() < Duration::from_secs(120), "the app stayed busy for two minutes");
            std::thread::sleep(Duration::from_millis(5));
            self.frame();
        }
        self.frame();
        self.frame();
    }

    /// Applies a command as a panel would push it, then lets the workers finish.
    pub fn apply(&mut self, cmd: xpu_workbench::ui::Command) {
        let ctx = self.ctx.clone();
        self.app.apply(cmd, &ctx);
        self.settle();
    }

    pub fn labels(&self) -> Vec<String> {
        self.nodes.iter().filter_map(|(_, n)| n.name().map(str::to_string)).collect()
    }

    pub fn find_role(&self, role: Role, name: &str) -> NodeId {
        match self.nodes.iter().find(|(_, n)| n.role() == role && n.name() == Some(name)) {
            Some((id, _)) => *id,
            None => panic!("no {role:?} named {name:?}; labels: {:#?}", self.labels()),
        }
    }

    pub fn find(&self, pred: impl Fn(&str) -> bool) -> Option<(NodeId, &Node)> {
        self.nodes.iter().find(|(_, n)| n.name().is_some_and(&pred)).map(|(id, n)| (*id, n))
    }

    pub fn expect(&self, pred: impl Fn(&str) -> bool, what: &str) -> (NodeId, Node) {
        match self.find(pred) {
            Some((id, n)) => (id, n.clone()),
            None => panic!("nothing displayed matches {what}; labels: {:#?}", self.labels()),
        }
    }

    pub fn action(&mut self, target: NodeId, action: Action) {
        self.events.push(Event::AccessKitActionRequest(ActionRequest { action, target, data: None }));
        self.frame();
        self.settle();
    }

    pub fn click_label(&mut self, pred: impl Fn(&str) -> bool, what: &str) {
        let (id, _) = self.expect(pred, what);
        self.action(id, Action::Default);
    }

    /// Presses and releases `key`, then lets the workers finish.
    pub fn key(&mut self, key: egui::Key, modifiers: egui::Modifiers) {
        for pressed in [true, false] {
            self.events.push(Event::Key { key, physical_key: None, pressed, repeat: false, modifiers });
        }
        self.frame();
        self.settle();
    }
}
