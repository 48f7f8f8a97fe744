//! What panels ask the app to do. Panels never change [`AppState`](super::AppState) themselves:
//! they push commands, and the app applies them after drawing, one place for every change.

use std::path::PathBuf;

use super::state::{Source, View};
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
