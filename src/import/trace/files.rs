//! Which files a log may make us read. A log names files (the output code's path when the payload
//! is missing), and whatever we read from them can end up in a report that is sent to others. A
//! crafted log must not pull a user's file (`~/.ssh/id_rsa`, a private script) into one, so a file
//! a log only names is read where torch itself writes such files — the log's own folder and the
//! Inductor cache (`TORCHINDUCTOR_CACHE_DIR`, else torch's default
//! `<tempdir>/torchinductor_<user>`) — or where the user explicitly allowed it.
//!
//! Paths are compared after resolving symbolic links and `..`, so a link in the log's folder
//! that points elsewhere is judged by where it points.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What happened to a file a log named: read (and how many bytes went into the result), or
/// skipped with why. Callers that embed content list every `Read` (a report's "files embedded").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum NamedFile {
    Read { path: String, bytes: u64 },
    Skipped { path: String, why: String },
}

/// The places a log's named files may be read from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileAccess {
    /// Canonical folders (everything under them) or files.
    allowed: Vec<PathBuf>,
    /// What the places are, for messages (`the log's folder /x`, `the Inductor cache /tmp/...`).
    described: Vec<String>,
    /// The folder relative names are resolved against.
    base: Option<PathBuf>,
}

/// Largest named file read (the output code of a big model is a few MB).
pub const MAX_NAMED_FILE: u64 = 64 << 20;

impl FileAccess {
    /// Nothing may be read.
    pub fn nothing() -> FileAccess {
        FileAccess::default()
    }

    /// The log's own folder and the Inductor cache: where torch writes what a log names.
    pub fn for_log(log_file: &Path) -> FileAccess {
        let folder = match log_file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut access = FileAccess { base: Some(folder.clone()), ..FileAccess::default() };
        access.add(&folder, "the log's folder");
        if let Some(cache) = inductor_cache_dir() {
            access.add(&cache, "the Inductor cache");
        }
        access
    }

    /// Also allows `path` (a folder: everything under it; or one file), as the user asked.
    pub fn allow(mut self, path: &Path) -> FileAccess {
        self.add(path, "allowed by the user");
        self
    }

    fn add(&mut self, path: &Path, what: &str) {
        // A place that does not exist holds nothing to read; it is still named in messages.
        if let Ok(c) = path.canonicalize() {
            self.allowed.push(c);
        }
        self.described.push(format!("{what} ({})", path.display()));
    }

    /// Where `named` may be read from, or why not.
    pub fn check(&self, named: &str) -> Result<PathBuf, String> {
        let path = Path::new(named);
        let path = match (&self.base, path.is_relative()) {
            (Some(base), true) => base.join(path),
            _ => path.to_path_buf(),
        };
        let real = path.canonicalize().map_err(|e| format!("{named} is not on this machine ({e})"))?;
        if self.allowed.iter().any(|a| real.starts_with(a)) {
            return Ok(real);
        }
        let places = if self.described.is_empty() { "nowhere".to_string() } else { self.described.join(", ") };
        let resolved = if real != path { format!(" (it resolves to {})", real.display()) } else { String::new() };
        Err(format!(
            "{named}{resolved} is outside the places a log's named files are read from: {places}; \
             allow it explicitly (--allow-file) to read it"
        ))
    }

    /// Reads `named` as text if it is allowed and at most [`MAX_NAMED_FILE`] bytes: the text and
    /// the record of what was read, or the record of why not.
    pub fn read(&self, named: &str) -> (Option<String>, NamedFile) {
        let skipped = |why: String| (None, NamedFile::Skipped { path: named.to_string(), why });
        let real = match self.check(named) {
            Ok(p) => p,
            Err(why) => return skipped(why),
        };
        match std::fs::metadata(&real) {
            Ok(m) if !m.is_file() => skipped(format!("{named} is not a regular file")),
            Ok(m) if m.len() > MAX_NAMED_FILE => skipped(format!("{named} is over {MAX_NAMED_FILE} bytes")),
            Ok(_) => match std::fs::read_to_string(&real) {
                Ok(text) => {
                    let bytes = text.len() as u64;
                    (Some(text), NamedFile::Read { path: real.display().to_string(), bytes })
                }
                Err(e) => skipped(format!("{named}: cannot read: {e}")),
            },
            Err(e) => skipped(format!("{named}: cannot read: {e}")),
        }
    }
}

/// torch's Inductor cache folder (`torch._inductor.runtime.cache_dir_utils.cache_dir`):
/// `TORCHINDUCTOR_CACHE_DIR`, else `<tempdir>/torchinductor_<user>` with the user name sanitized
/// as torch does. `None` when neither the variable nor a user name is known.
pub fn inductor_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TORCHINDUCTOR_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // getpass.getuser() reads these in this order before asking the password database.
    let user = ["LOGNAME", "USER", "LNAME", "USERNAME"].iter().find_map(|k| std::env::var(k).ok().filter(|u| !u.is_empty()))?;
    let sanitized: String = user.chars().map(|c| if "\\/:*?\"<>|".contains(c) { '_' } else { c }).collect();
    Some(std::env::temp_dir().join(format!("torchinductor_{sanitized}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xpu-wb-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn reads_beside_the_log_and_refuses_elsewhere() {
        let logs = scratch("logs");
        let elsewhere = scratch("elsewhere");
        std::fs::write(logs.join("out.py"), "print(1)\n").unwrap();
        std::fs::write(elsewhere.join("secret.txt"), "secret\n").unwrap();
        let access = FileAccess::for_log(&logs.join("run.log"));
        let (text, used) = access.read(&logs.join("out.py").display().to_string());
        assert_eq!(text.as_deref(), Some("print(1)\n"));
        assert!(matches!(used, NamedFile::Read { bytes: 9, .. }), "{used:?}");
        // Relative names resolve against the log's folder, not the working directory.
        assert_eq!(access.read("out.py").0.as_deref(), Some("print(1)\n"));
        let secret = elsewhere.join("secret.txt").display().to_string();
        let (text, used) = access.read(&secret);
        assert_eq!(text, None);
        let NamedFile::Skipped { why, .. } = used else { panic!("read {used:?}") };
        assert!(why.contains("outside the places") && why.contains("the log's folder"), "{why}");
        // `..` out of the log's folder is judged by where it lands.
        let dotted = format!("{}/../{}/secret.txt", logs.display(), elsewhere.file_name().unwrap().to_string_lossy());
        assert_eq!(access.read(&dotted).0, None);
        // Explicitly allowed, it is read.
        assert_eq!(access.clone().allow(&elsewhere).read(&secret).0.as_deref(), Some("secret\n"));
        assert_eq!(FileAccess::nothing().read(&logs.join("out.py").display().to_string()).0, None);
        let _ = std::fs::remove_dir_all(&logs);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_beside_the_log_is_judged_by_its_target() {
        let logs = scratch("links");
        let elsewhere = scratch("link-target");
        std::fs::write(elsewhere.join("secret.txt"), "secret\n").unwrap();
        std::os::unix::fs::symlink(elsewhere.join("secret.txt"), logs.join("out.py")).unwrap();
        let (text, used) = FileAccess::for_log(&logs.join("run.log")).read(&logs.join("out.py").display().to_string());
        assert_eq!(text, None);
        let NamedFile::Skipped { why, .. } = used else { panic!("read {used:?}") };
        assert!(why.contains("resolves to"), "{why}");
        let _ = std::fs::remove_dir_all(&logs);
        let _ = std::fs::remove_dir_all(&elsewhere);
    }

    #[test]
    fn the_cache_dir_follows_torch() {
        // Only the variable's branch is checked: tests run in parallel and the environment is shared,
        // so it is read, not set.
        if let Some(v) = std::env::var_os("TORCHINDUCTOR_CACHE_DIR").filter(|v| !v.is_empty()) {
            assert_eq!(inductor_cache_dir(), Some(PathBuf::from(v)));
        } else if let Some(d) = inductor_cache_dir() {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with("torchinductor_") && !name.contains('/'), "{name}");
        }
    }
}
