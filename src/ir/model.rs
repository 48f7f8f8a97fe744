use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Graph, TensorMeta};
use crate::sym::{Expr, Range};

/// Which kind of file a model came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pt2,
    Onnx,
    TorchTrace,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Pt2 => "pt2",
            Format::Onnx => "onnx",
            Format::TorchTrace => "torch_trace",
        }
    }
}

/// A dynamic dimension: its name (`s77`), legal range and the example value it was traced with.
#[derive(Clone, Debug, PartialEq)]
pub struct SymbolInfo {
    pub name: String,
    pub range: Range,
    pub hint: Option<i64>,
}

/// A condition the compiled artifact assumes; if it flips, PyTorch recompiles.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    pub expr: Expr,
    /// The text it was parsed from, as the file wrote it.
    pub source: String,
}

/// A guard the file records that cannot be evaluated: its text as written and why not. Kept so
/// that every guard is listed, not only those the evaluator understands.
#[derive(Clone, Debug, PartialEq)]
pub struct UnreadGuard {
    pub source: String,
    pub reason: String,
}

/// Raw bytes of a weight, or why they are not available.
#[derive(Clone, Debug, PartialEq)]
pub enum WeightData {
    Bytes(Arc<Vec<u8>>),
    Unavailable(String),
}

/// A parameter, buffer or constant tensor stored in the model file.
#[derive(Clone, Debug, PartialEq)]
pub struct Weight {
    /// Fully qualified name (`fc1.weight`).
    pub fqn: String,
    pub meta: TensorMeta,
    pub data: WeightData,
}

/// Everything loaded from one file.
#[derive(Clone, Debug)]
pub struct Model {
    pub format: Format,
    /// The file it was loaded from, as the user named it (for messages).
    pub source: String,
    pub graphs: Vec<Graph>,
    pub symbols: Vec<SymbolInfo>,
    pub guards: Vec<Guard>,
    /// Guards that are listed but cannot be evaluated (unparsed syntax, non-integer symbols).
    pub unread_guards: Vec<UnreadGuard>,
    /// Keyed by fully qualified name.
    pub weights: BTreeMap<String, Weight>,
    /// Things the importer skipped or could not interpret, each naming where.
    pub warnings: Vec<String>,
    /// The torch that wrote the file (`2.11.0+cu130`), where the file says: picks the op
    /// registry's kernel tables.
    pub torch_version: Option<String>,
}

impl Model {
    /// An empty model of `format`, loaded from `source` (named in messages).
    pub fn new(format: Format, source: impl Into<String>) -> Model {
        Model {
            format,
            source: source.into(),
            graphs: Vec::new(),
            symbols: Vec::new(),
            guards: Vec::new(),
            unread_guards: Vec::new(),
            weights: BTreeMap::new(),
            warnings: Vec::new(),
            torch_version: None,
        }
    }

    pub fn symbol(&self, name: &str) -> Option<&SymbolInfo> {
        self.symbols.iter().find(|s| s.name == name)
    }
}
