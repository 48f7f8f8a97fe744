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

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Open(Source),
    /// Ask for a file with the system dialog (on a worker: the dialog blocks).
    OpenDialog,
    Focus(View),
    SetShown(View, bool),
    Select(View, NodeId),
    ClearSelection,
    /// Select and centre the camera on the node.
    JumpTo(View, NodeId),
    SetMark(MarkTarget, bool),
    SetBinding(String, i64),
    ResetBindings,
    ToggleCollapse(String),
    Fit(View),
    SetCamera(View, super::state::Camera),
    OpenSearch,
    CloseSearch,
    SetSearch(String),
    SetTheme(super::state::Theme),
    ToggleNeighbourhood,
    Copy(String),
    ForgetRecent(PathBuf),
}
