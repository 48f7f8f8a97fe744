//! Reading entries of a `.pt2` zip with hard limits, so a hostile archive cannot exhaust memory.

use std::io::{Read, Seek};

use super::Pt2Error;

/// The largest JSON entry we read (a 12,000-node model.json is ~10 MB).
pub const MAX_JSON_BYTES: u64 = 512 << 20;
/// The largest single weight, and all weights together.
pub const MAX_WEIGHT_BYTES: u64 = 8 << 30;
/// Zip bombs: no entry may expand more than this ratio over its compressed size.
pub const MAX_EXPANSION_RATIO: u64 = 1_000;

pub struct Archive<R: Read + Seek> {
    file: String,
    zip: zip::ZipArchive<R>,
    /// Entry names, in archive order.
    pub names: Vec<String>,
}

impl<R: Read + Seek> Archive<R> {
    pub fn open(file: &str, reader: R) -> Result<Self, Pt2Error> {
        let zip = zip::ZipArchive::new(reader)
            .map_err(|e| Pt2Error::Zip { file: file.to_string(), detail: e.to_string() })?;
        let names = zip.file_names().map(str::to_string).collect::<Vec<_>>();
        let mut names = names;
        // file_names() is hash-ordered; sort for deterministic discovery and messages.
        names.sort();
        Ok(Archive { file: file.to_string(), zip, names })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// Reads one entry fully, refusing entries over `limit` bytes or with a zip-bomb ratio.
    pub fn read(&mut self, name: &str, limit: u64) -> Result<Vec<u8>, Pt2Error> {
        let file = self.file.clone();
        let zip_err = |e: zip::result::ZipError| Pt2Error::Zip { file: file.clone(), detail: format!("{name}: {e}") };
        let mut entry = self.zip.by_name(name).map_err(zip_err)?;
        let declared = entry.size();
        let compressed = entry.compressed_size().max(1);
        let too_large = |size: u64| Pt2Error::TooLarge { file: file.clone(), entry: name.to_string(), size, limit };
        if declared > limit {
            return Err(too_large(declared));
        }
        if entry.compression() != zip::CompressionMethod::Stored && declared / compressed > MAX_EXPANSION_RATIO {
            return Err(Pt2Error::Bomb { file: file.clone(), entry: name.to_string(), declared, compressed });
        }
        // The declared size may lie: never read past it (plus one byte to detect the lie).
        let mut buf = Vec::with_capacity(declared.min(64 << 20) as usize);
        (&mut entry)
            .take(declared + 1)
            .read_to_end(&mut buf)
            .map_err(|e| Pt2Error::Zip { file: file.clone(), detail: format!("{name}: {e}") })?;
        if buf.len() as u64 != declared {
            return Err(Pt2Error::Zip {
                file: file.clone(),
                detail: format!("{name}: entry holds {} bytes but its header says {declared}", buf.len()),
            });
        }
        Ok(buf)
    }
}
