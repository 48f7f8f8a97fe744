//! What panels ask the app to do. Panels never change [`AppState`](super::AppState) themselves:
//! they push commands, and the app applies them after drawing, one place for every change.

use std::path::PathBuf;

use egui::{Key, KeyboardShortcut, ModifierNames, Modifiers};

use super::state::{AppState, Source, View};
use crate::ir::NodeId;

/// A lite-mode mark: one node, or every node under a module path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkTarget {
    Node(String),
    Module(String),
}

/// What a profile is exported as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportKind {
    /// Chrome trace-event JSON (Perfetto, chrome://tracing).
    Chrome,
    /// A `.puffin` recording (puffin_viewer).
    Puffin,
}

impl ExportKind {
    pub fn extension(self) -> &'static str {
        match self {
            ExportKind::Chrome => "json",
            ExportKind::Puffin => "puffin",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Open(Source),
    /// Ask for a file with the system dialog (on a worker: the dialog blocks).
    OpenDialog,
    Focus(View),
    SetShown(View, bool),
    /// Show or hide a stage view (dynamo, AOT, post-grad, kernels) of a log's compile.
    SetStageShown(View, bool),
    Select(View, NodeId),
    ClearSelection,
    /// Select and centre the camera on the node.
    JumpTo(View, NodeId),
    SetMark(MarkTarget, bool),
    SetBinding(String, i64),
    /// A sweep point clicked: bind the dimension there and, when the heat overlay shows a run of
    /// ours, profile again at the new binding so the overlay follows the point.
    BindSweepPoint(String, i64),
    ResetBindings,
    /// Fold an open module, or open a folded one (its child modules stay folded).
    ToggleCollapse(String),
    /// Fold exactly these modules (breadcrumbs: fold all, fold to layers, open all).
    SetFolded(std::collections::BTreeSet<String>),
    /// Stand in this module (breadcrumbs), or at the top level.
    FocusModule(Option<String>),
    /// Stand in this module and move the shown views to it (`None`: the top of the graph).
    RevealModule(Option<String>),
    /// Move the other decomposition views' cameras with the one the user moves.
    SetSyncCameras(bool),
    ShowProblems(bool),
    Fit(View),
    /// The user moved a view's camera (the other decomposition views follow).
    SetCamera(View, super::state::Camera),
    /// A pending fit placed it (each view places its own: no following).
    PlaceCamera(View, super::state::Camera),
    OpenSearch,
    CloseSearch,
    SetSearch(String),
    SetTheme(super::state::Theme),
    ToggleNeighbourhood,
    Copy(String),
    ForgetRecent(PathBuf),
    PickDevice(crate::runtime::Backend),
    /// Derive the lite view for this backend's kernels (`None`: the marks alone).
    SetTargetBackend(Option<crate::ops::Backend>),
    /// Show this graph of a multi-graph model as the original (decomposed in lite and full).
    PickGraph(usize),
    /// Show a TORCH_TRACE compile's stages side by side (`None`: back to the decomposition views).
    ShowStages(Option<String>),
    /// Pick a kernel of the kernels stage (index into its kernels; `None`: none): its source
    /// shows in the kernel list, its nodes are highlighted in every stage.
    SelectKernel(Option<usize>),
    /// Profile the focused view's plan on the picked device (on a worker).
    RunProfile,
    ShowProfile(bool),
    /// Colour graph nodes by the last profile's device time.
    SetHeat(bool),
    /// Ask where to export the last profile (on a worker: the dialog blocks).
    ExportDialog(ExportKind),
    /// Write the last profile there (on a worker).
    Export(ExportKind, PathBuf),
    /// Ask where to write the open file's HTML report (on a worker: the dialog blocks).
    ExportReportDialog,
    /// Write the open file's HTML report there (on a worker).
    ExportReport(PathBuf),
    /// Ask for a torch.profiler trace of the open log's run (on a worker: the dialog blocks).
    ImportProfileDialog,
    /// Attribute a torch.profiler (Kineto) trace to the open log's kernels and graph nodes, and
    /// show it in the profile panel and the heat overlay, as a run of our own would be.
    ImportProfile(PathBuf),
    /// Ask for one of the comparison's files (on a worker: the dialog blocks).
    CompareDialog(super::comparing::CompareSlot),
    /// Compare the open log with another log of the same model (and their profiles), on a worker.
    Compare(super::comparing::CompareInputs),
    ShowCompare(bool),
    /// List every node in the comparison, or only those the two runs ran differently.
    SetCompareAllNodes(bool),
    /// Everything the sweep panel asks for (its store is `AppState::sweep`).
    Sweep(super::sweeping::SweepCommand),
    /// Everything the diff mode asks for (its store is `AppState::diff`).
    Diff(super::diff_view::DiffCommand),
    /// What the profile panel's "against Inductor" section asks for (its store is `AppState::against`).
    AgainstInductor(super::against_inductor::AgainstCommand),
}

/// An action the user reaches both from the UI (a menu entry or button) and by a key: its label,
/// tooltip and shortcut are written here once, for the menus, the buttons and the shortcut handler
/// (as rerun's `UICommand` does), so a label never names a key the handler does not bind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UiCommand {
    Open,
    RunProfile,
    Search,
    CycleBackend,
    /// Fit the focused view (a plain key: not while a text field takes the keyboard).
    Fit,
}

impl UiCommand {
    pub const ALL: [UiCommand; 5] = [UiCommand::Open, UiCommand::RunProfile, UiCommand::Search, UiCommand::CycleBackend, UiCommand::Fit];

    /// What the entry says, without its shortcut.
    pub fn text(self) -> &'static str {
        match self {
            UiCommand::Open => "Open…",
            UiCommand::RunProfile => "▶ Run & profile",
            UiCommand::Search => "Search",
            UiCommand::CycleBackend => "Next target backend",
            UiCommand::Fit => "Fit",
        }
    }

    /// What the entry does, as its hover text says it (naming the focused view where it acts on it).
    pub fn tooltip(self, state: &AppState) -> String {
        match self {
            UiCommand::Open => "open a .pt2 export, an ONNX file or a TORCH_TRACE log".into(),
            UiCommand::RunProfile => format!("runs the {} view's plan on the picked device", state.focus.name()),
            UiCommand::Search => format!("find nodes of the {} view by name or op", state.focus.name()),
            UiCommand::CycleBackend => "derive the lite view for the next backend's kernels (XPU, CUDA, CPU, the marks alone)".into(),
            UiCommand::Fit => format!("show the whole {} view", state.focus.name()),
        }
    }

    pub fn shortcut(self) -> KeyboardShortcut {
        let (modifiers, key) = match self {
            UiCommand::Open => (Modifiers::COMMAND, Key::O),
            UiCommand::RunProfile => (Modifiers::COMMAND, Key::R),
            UiCommand::Search => (Modifiers::COMMAND, Key::F),
            UiCommand::CycleBackend => (Modifiers::COMMAND, Key::B),
            UiCommand::Fit => (Modifiers::NONE, Key::F),
        };
        KeyboardShortcut::new(modifiers, key)
    }

    /// A key without modifiers types into a focused text field instead.
    pub fn is_plain_key(self) -> bool {
        self.shortcut().modifiers.is_none()
    }

    /// The shortcut as labels show it ("Ctrl+O"): written the same on every platform, as before.
    pub fn shortcut_text(self) -> String {
        self.shortcut().format(&ModifierNames::NAMES, false)
    }

    /// The entry's label: its text and, in brackets, its shortcut ("Open… (Ctrl+O)").
    pub fn label(self) -> String {
        format!("{} ({})", self.text(), self.shortcut_text())
    }

    /// What the app applies for it, now.
    pub fn command(self, state: &AppState) -> Command {
        match self {
            UiCommand::Open => Command::OpenDialog,
            UiCommand::RunProfile => Command::RunProfile,
            UiCommand::Search => Command::OpenSearch,
            UiCommand::CycleBackend => {
                use crate::ops::Backend;
                let order = [Some(Backend::Xpu), Some(Backend::Cuda), Some(Backend::Cpu), None];
                let at = order.iter().position(|b| *b == state.target_backend).unwrap_or(0);
                Command::SetTargetBackend(order[(at + 1) % order.len()])
            }
            UiCommand::Fit => Command::Fit(state.focus),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_bound_key() {
        assert_eq!(UiCommand::Open.label(), "Open… (Ctrl+O)");
        assert_eq!(UiCommand::RunProfile.label(), "▶ Run & profile (Ctrl+R)");
        assert_eq!(UiCommand::Search.label(), "Search (Ctrl+F)");
        assert_eq!(UiCommand::CycleBackend.shortcut_text(), "Ctrl+B");
        assert_eq!(UiCommand::Fit.label(), "Fit (F)");
        assert!(UiCommand::Fit.is_plain_key() && !UiCommand::Search.is_plain_key());
    }

    #[test]
    fn no_two_commands_share_a_shortcut() {
        let mut keys: Vec<_> = UiCommand::ALL.iter().map(|c| c.shortcut_text()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), UiCommand::ALL.len());
    }

    #[test]
    fn the_backend_cycles_through_every_target_and_back() {
        let mut state = AppState::default();
        let mut seen = Vec::new();
        for _ in 0..4 {
            let Command::SetTargetBackend(b) = UiCommand::CycleBackend.command(&state) else { panic!("not a backend change") };
            seen.push(b);
            state.target_backend = b;
        }
        assert_eq!(seen.last(), Some(&state.target_backend));
        assert_eq!(seen.iter().filter(|b| b.is_none()).count(), 1, "the marks alone once per cycle: {seen:?}");
        assert_eq!(UiCommand::CycleBackend.command(&state), Command::SetTargetBackend(seen[0]));
    }
}
