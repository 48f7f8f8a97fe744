//! torch.export `.pt2` archives (torch 2.6–2.15): `<name>/models/<model>.json` graphs, raw weight
//! bytes under `data/weights/` described by `<model>_weights_config.json`, and constants.
//! Nothing is ever unpickled: pickled payloads are reported as unavailable.

mod archive;
mod convert;
mod inline;
mod schema;
mod weights;

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;

use crate::ir::Model;

/// Schema major versions this build reads (torch 2.6 to 2.15 write 8.x: 2.11 writes 8.17, 2.15 8.20).
pub const SUPPORTED_SCHEMA_MAJOR: std::ops::RangeInclusive<i64> = 7..=8;

/// What went wrong loading an archive. Every variant names the file; most name the entry and
/// the JSON path (`graph_module.graph.nodes[3].inputs[0]`) too.
#[derive(Debug, thiserror::Error)]
pub enum Pt2Error {
    #[error("{file}: cannot read: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}: not a readable zip archive (truncated or corrupt?): {detail}")]
    Zip { file: String, detail: String },
    #[error("{file}: no torch.export model in the archive: expected `<name>/models/<model>.json`; entries: {entries}")]
    NoModel { file: String, entries: String },
    #[error("{file}: entry `{entry}` is {size} bytes, over the {limit}-byte limit")]
    TooLarge { file: String, entry: String, size: u64, limit: u64 },
    #[error("{file}: entry `{entry}` would expand from {compressed} to {declared} bytes: refusing a likely zip bomb")]
    Bomb { file: String, entry: String, declared: u64, compressed: u64 },
    #[error("{file}: {entry}: invalid JSON at `{path}`: {detail}")]
    Json { file: String, entry: String, path: String, detail: String },
    #[error("{file}: {entry}: schema version {major}.{minor} is not supported (this build reads {}.x to {}.x, torch 2.6–2.15)", SUPPORTED_SCHEMA_MAJOR.start(), SUPPORTED_SCHEMA_MAJOR.end())]
    SchemaVersion { file: String, entry: String, major: i64, minor: i64 },
    #[error("{file}: {entry}: `{path}`: {message}")]
    At { file: String, entry: String, path: String, message: String },
}

/// Loads a `.pt2` archive from disk.
pub fn load(path: &Path) -> Result<Model, Pt2Error> {
    let file = path.display().to_string();
    let f = File::open(path).map_err(|source| Pt2Error::Io { file: file.clone(), source })?;
    load_from(&file, BufReader::new(f))
}

/// Loads a `.pt2` archive held in memory (the embedded sample, fuzzing); `file` names it in errors.
pub fn load_bytes(file: &str, bytes: &[u8]) -> Result<Model, Pt2Error> {
    load_from(file, Cursor::new(bytes))
}

fn load_from<R: Read + Seek>(file: &str, reader: R) -> Result<Model, Pt2Error> {
    let mut archive = archive::Archive::open(file, reader)?;
    let layout = Layout::discover(&archive.names).ok_or_else(|| Pt2Error::NoModel {
        file: file.to_string(),
        entries: summarize(&archive.names),
    })?;
    convert::load_archive(file, &mut archive, &layout)
}

/// Where the models and payloads sit inside the zip.
#[derive(Debug)]
pub(crate) struct Layout {
    /// Archive root folder including the trailing slash (`mlp/`), possibly empty.
    pub root: String,
    /// `(model name, entry)` for each `models/<model>.json`; for the pre-2.7 layout, the one
    /// `serialized_exported_program.json` with model name `model`.
    pub models: Vec<(String, String)>,
    /// The pre-2.7 layout keeps weights pickled: they are never loaded.
    pub legacy: bool,
}

impl Layout {
    fn discover(names: &[String]) -> Option<Layout> {
        let mut models = Vec::new();
        let mut root = None;
        for n in names {
            if let Some(idx) = n.find("models/") {
                let (prefix, rest) = n.split_at(idx);
                let rest = &rest["models/".len()..];
                if let Some(stem) = rest.strip_suffix(".json") {
                    if !stem.contains('/') && (prefix.is_empty() || prefix.ends_with('/')) && !prefix.contains("data/") {
                        root.get_or_insert_with(|| prefix.to_string());
                        if root.as_deref() == Some(prefix) {
                            models.push((stem.to_string(), n.clone()));
                        }
                    }
                }
            }
        }
        if let Some(root) = root {
            return Some(Layout { root, models, legacy: false });
        }
        let legacy = names.iter().find(|n| n.ends_with("serialized_exported_program.json"))?;
        let root = legacy.trim_end_matches("serialized_exported_program.json").to_string();
        Some(Layout { root, models: vec![("model".into(), legacy.clone())], legacy: true })
    }
}

fn summarize(names: &[String]) -> String {
    if names.is_empty() {
        return "(none)".into();
    }
    let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
    let more = names.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} … and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_models_under_the_archive_root() {
        let names: Vec<String> =
            ["mlp/archive_format", "mlp/models/model.json", "mlp/data/weights/model_weights_config.json"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let l = Layout::discover(&names).unwrap();
        assert_eq!(l.root, "mlp/");
        assert_eq!(l.models, vec![("model".to_string(), "mlp/models/model.json".to_string())]);
        assert!(!l.legacy);
    }

    #[test]
    fn finds_the_legacy_layout_and_nothing_in_unrelated_zips() {
        let names = vec!["serialized_exported_program.json".to_string(), "serialized_state_dict.pt".into()];
        assert!(Layout::discover(&names).unwrap().legacy);
        assert!(Layout::discover(&["readme.txt".to_string()]).is_none());
    }
}
