//! ONNX models (`.onnx`, protobuf; weights inline or as external data next to the file), as
//! `torch.onnx.export(dynamo=True)` writes them with dynamic dimensions.
//!
//! * Each `dim_param` becomes a symbol. ONNX stores neither a range nor an example value for it, so
//!   its range is `[1, ∞)` and its hint is 1 (the smallest legal size): every shape then evaluates,
//!   and the app's sliders start there. `--bind batch=8` chooses another value.
//! * Every tensor gets a symbolic shape: common ops are inferred here ([`shape`]), ops this build
//!   cannot infer keep the shape the file's `value_info` declares, and failing that are marked
//!   unknown with a warning.
//! * Ops become targets `onnx.<OpType>` (`<domain>.<OpType>` outside the default domain).
//! * External data is read relative to the model's folder, bounds-checked, and never from a path
//!   that leaves that folder.

mod convert;
mod data;
mod proto;
mod shape;

use std::path::Path;

use prost::Message;

use crate::ir::Model;

/// Largest `.onnx` file read (protobuf itself cannot exceed 2 GiB; bigger models use external data).
pub const MAX_MODEL_BYTES: u64 = 2 << 30;
/// Largest total of external data read for one model.
pub const MAX_EXTERNAL_BYTES: u64 = 16 << 30;

/// What went wrong loading an ONNX model. Every variant names the file; most name the node,
/// tensor or field.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: {size} bytes is over the {limit}-byte limit for an ONNX model")]
    TooLarge { file: String, size: u64, limit: u64 },
    #[error("{file}: not a readable ONNX model (protobuf ModelProto): {detail}")]
    Decode { file: String, detail: String },
    #[error("{file}: the model has no graph (ModelProto.graph is missing)")]
    NoGraph { file: String },
    #[error("{file}: node {node}: {message}")]
    Node { file: String, node: String, message: String },
    #[error("{file}: tensor `{tensor}`: {message}")]
    Tensor { file: String, tensor: String, message: String },
}

/// Loads an `.onnx` file; external data is looked up next to it.
pub fn load(path: &Path) -> Result<Model, OnnxError> {
    let file = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|source| OnnxError::Io { file: file.clone(), source })?;
    if meta.len() > MAX_MODEL_BYTES {
        return Err(OnnxError::TooLarge { file, size: meta.len(), limit: MAX_MODEL_BYTES });
    }
    let bytes = std::fs::read(path).map_err(|source| OnnxError::Io { file: file.clone(), source })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_bytes(&file, &bytes, Some(&dir))
}

/// Loads a model held in memory; `dir` is where its external data lives (`None`: external data is
/// reported unavailable rather than read).
pub fn load_bytes(file: &str, bytes: &[u8], dir: Option<&Path>) -> Result<Model, OnnxError> {
    let model = proto::ModelProto::decode(bytes).map_err(|e| OnnxError::Decode { file: file.to_string(), detail: e.to_string() })?;
    if model.ir_version.is_none() && model.graph.is_none() {
        return Err(OnnxError::Decode {
            file: file.to_string(),
            detail: "neither ir_version nor graph is present: expected an ONNX ModelProto".into(),
        });
    }
    convert::convert(file, &model, dir)
}
