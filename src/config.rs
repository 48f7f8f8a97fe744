//! Where the workbench keeps what outlives a run: sessions, recent files, op tables refreshed
//! from the user's own torch.

use std::path::PathBuf;

/// `$XDG_CONFIG_HOME/xpu-workbench`, else the platform's config folder; `None` when no home is
/// known (the workbench then runs without persistence).
pub fn config_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| {
        if cfg!(windows) {
            std::env::var_os("APPDATA").map(PathBuf::from)
        } else if cfg!(target_os = "macos") {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join("Library/Application Support"))
        } else {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config"))
        }
    })?;
    Some(base.join("xpu-workbench"))
}
