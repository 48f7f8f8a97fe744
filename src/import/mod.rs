//! File → [`Model`]. One importer per format; each error names the file and where in it.

pub mod pt2;

use std::path::Path;

use crate::ir::Model;

/// Any importer's error.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Pt2(#[from] pt2::Pt2Error),
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: unrecognised format: expected a torch.export .pt2 archive (a zip file)")]
    UnknownFormat { file: String },
}

/// Loads any supported model file, choosing the importer from the file's first bytes.
pub fn load(path: &Path) -> Result<Model, ImportError> {
    puffin::profile_scope!("import", path.display().to_string());
    let file = path.display().to_string();
    let mut magic = [0u8; 4];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|source| ImportError::Io { file: file.clone(), source })?;
        let n = f.read(&mut magic).map_err(|source| ImportError::Io { file: file.clone(), source })?;
        if n < 4 {
            return Err(ImportError::UnknownFormat { file });
        }
    }
    if &magic == b"PK\x03\x04" || &magic == b"PK\x05\x06" {
        return Ok(pt2::load(path)?);
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
