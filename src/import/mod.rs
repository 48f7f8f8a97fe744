//! File → [`Model`]. One importer per format; each error names the file and where in it.

pub mod onnx;
pub mod pt2;
pub mod trace;

use std::path::Path;

use crate::ir::{Format, Model};

/// Any importer's error.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Pt2(#[from] pt2::Pt2Error),
    #[error(transparent)]
    Onnx(#[from] onnx::OnnxError),
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: unrecognised format: expected a torch.export .pt2 archive (a zip file), a TORCH_TRACE log (.log or .log.gz) or an ONNX model (.onnx)")]
    UnknownFormat { file: String },
}

/// Loads any supported model file, choosing the importer from the file's first bytes.
pub fn load(path: &Path) -> Result<Model, ImportError> {
    puffin::profile_scope!("import", path.display().to_string());
    match detect(path)? {
        Format::Pt2 => Ok(pt2::load(path)?),
        Format::TorchTrace => Ok(trace::load(path)?),
        Format::Onnx => Ok(onnx::load(path)?),
    }
}

/// Which importer reads `path`: zip magic → `.pt2`; gzip magic or a glog-style envelope line →
/// TORCH_TRACE log; an `.onnx` name, or a first byte that opens an ONNX `ModelProto` → ONNX.
pub fn detect(path: &Path) -> Result<Format, ImportError> {
    use std::io::Read;
    let file = path.display().to_string();
    let mut head = Vec::with_capacity(512);
    let f = std::fs::File::open(path).map_err(|source| ImportError::Io { file: file.clone(), source })?;
    f.take(512).read_to_end(&mut head).map_err(|source| ImportError::Io { file: file.clone(), source })?;
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Ok(Format::Pt2);
    }
    if trace::sniff(&head) {
        return Ok(Format::TorchTrace);
    }
    let onnx_name = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("onnx"));
    // ModelProto's first field is `ir_version` (field 1, varint: tag byte 0x08).
    if onnx_name || (head.first() == Some(&0x08) && head.len() > 2) {
        return Ok(Format::Onnx);
    }
    Err(ImportError::UnknownFormat { file })
}

/// The sample the app opens when no file is given: a transformer block with dynamic batch and
/// sequence, exported by torch 2.11.
pub const EMBEDDED_SAMPLE_NAME: &str = "samples/transformer_block.pt2";
pub const EMBEDDED_SAMPLE: &[u8] = include_bytes!("../../samples/transformer_block.pt2");

pub fn load_embedded_sample() -> Result<Model, ImportError> {
    Ok(pt2::load_bytes(EMBEDDED_SAMPLE_NAME, EMBEDDED_SAMPLE)?)
}
