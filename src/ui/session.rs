//! What survives a restart: per file, the marks, bindings, views and layout choices; for the app,
//! the theme and the recent files. JSON under `$XDG_CONFIG_HOME/xpu-workbench/` (or the platform's
//! config folder), written atomically so a crash mid-write never leaves a torn file.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::state::{Theme, View};

const RECENT_MAX: usize = 10;

/// Per-file state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    /// The file (or embedded sample) this belongs to, for a person reading the folder.
    pub source: String,
    pub mark_nodes: Vec<String>,
    pub mark_modules: Vec<String>,
    pub bindings: BTreeMap<String, i64>,
    pub focus: Option<View>,
    pub shown: Option<[bool; 3]>,
    pub collapsed: BTreeSet<String>,
    /// View name → `[centre x, centre y, zoom]`.
    pub cameras: BTreeMap<String, [f32; 3]>,
}

/// App-wide settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub theme: Theme,
    pub recent: Vec<PathBuf>,
}

impl Settings {
    /// Puts `path` first, once, and keeps the list short.
    pub fn remember(&mut self, path: &Path) {
        self.recent.retain(|p| p != path);
        self.recent.insert(0, path.to_path_buf());
        self.recent.truncate(RECENT_MAX);
    }
}

/// Where sessions and settings live.
#[derive(Clone, Debug)]
pub struct Store {
    pub dir: PathBuf,
}

impl Store {
    /// `$XDG_CONFIG_HOME/xpu-workbench`, else the platform's config folder; `None` when no home
    /// is known (the app then runs without persistence).
    pub fn default_location() -> Option<Store> {
        crate::config::config_dir().map(|dir| Store { dir })
    }

    fn session_path(&self, key: &str) -> PathBuf {
        // A stable name that no path character can break: the hash of the key.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        self.dir.join("sessions").join(format!("{:016x}.json", h.finish()))
    }

    pub fn load_session(&self, key: &str) -> Option<Session> {
        let text = std::fs::read_to_string(self.session_path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn save_session(&self, key: &str, s: &Session) -> std::io::Result<()> {
        write_atomic(&self.session_path(key), &serde_json::to_vec_pretty(s)?)
    }

    pub fn load_settings(&self) -> Settings {
        std::fs::read_to_string(self.dir.join("settings.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    pub fn save_settings(&self, s: &Settings) -> std::io::Result<()> {
        write_atomic(&self.dir.join("settings.json"), &serde_json::to_vec_pretty(s)?)
    }
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk, then renames it over
/// `path`: readers see the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename itself is durable only once the folder is synced (where that is possible).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_store(tag: &str) -> Store {
        let dir = std::env::temp_dir().join(format!("xpu-wb-session-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store { dir }
    }

    #[test]
    fn sessions_round_trip_per_file_and_leave_no_temporary_files() {
        let store = temp_store("rt");
        let mut s = Session { source: "a.pt2".into(), ..Session::default() };
        s.mark_nodes.push("gelu".into());
        s.bindings.insert("s77".into(), 9);
        s.focus = Some(View::Lite);
        s.cameras.insert("lite".into(), [3.0, 4.0, 0.5]);
        store.save_session("/x/a.pt2", &s).unwrap();
        assert_eq!(store.load_session("/x/a.pt2"), Some(s));
        assert_eq!(store.load_session("/x/b.pt2"), None);
        let leftovers: Vec<_> = std::fs::read_dir(store.dir.join("sessions"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        let _ = std::fs::remove_dir_all(&store.dir);
    }

    #[test]
    fn recent_files_are_most_recent_first_without_duplicates() {
        let mut s = Settings::default();
        for p in ["a", "b", "a"] {
            s.remember(Path::new(p));
        }
        assert_eq!(s.recent, vec![PathBuf::from("a"), PathBuf::from("b")]);
        for i in 0..20 {
            s.remember(Path::new(&format!("f{i}")));
        }
        assert_eq!(s.recent.len(), RECENT_MAX);
    }

    #[test]
    fn a_corrupt_settings_file_falls_back_to_defaults() {
        let store = temp_store("corrupt");
        write_atomic(&store.dir.join("settings.json"), b"{not json").unwrap();
        assert_eq!(store.load_settings(), Settings::default());
        let _ = std::fs::remove_dir_all(&store.dir);
    }
}
