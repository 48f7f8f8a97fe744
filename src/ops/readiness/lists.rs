//! torch-xpu-ops' CPU-fallback lists per torch version, as `scripts/gen_xpu_readiness.py` read them
//! from each release branch (`assets/ops/xpu-fallback.json.gz`, embedded).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::ops::backend::{release_key, BackendTable};

/// torch-xpu-ops' lists for one torch version.
#[derive(Clone, Debug, Deserialize)]
pub struct FallbackList {
    /// `2.11`.
    pub torch: String,
    /// The branch read (`release/2.11`, or `main` for a torch newer than every release branch).
    #[serde(rename = "ref")]
    pub branch: String,
    pub commit: String,
    pub date: String,
    pub file: String,
    /// Overload keys as the tables spell them (`dot`, `geqrf.a`).
    pub cpu_fallback: Vec<String>,
    /// torchvision op name → sent to the CPU (`false`: torch-xpu-ops' own kernel).
    pub torchvision_cpu: BTreeMap<String, bool>,
}

#[derive(Deserialize)]
struct FallbackDoc {
    versions: Vec<FallbackList>,
}

const EMBEDDED: &[u8] = include_bytes!("../../../assets/ops/xpu-fallback.json.gz");

/// Every embedded list, oldest torch first. The asset not parsing is a build defect (unit test).
pub fn fallback_lists() -> &'static [FallbackList] {
    static LISTS: OnceLock<Vec<FallbackList>> = OnceLock::new();
    LISTS.get_or_init(|| {
        let mut v = BackendTable::json_of(EMBEDDED)
            .ok()
            .and_then(|text| serde_json::from_slice::<FallbackDoc>(&text).ok())
            .map(|d| d.versions)
            .unwrap_or_default();
        v.sort_by_key(|l| release_key(&l.torch));
        v
    })
}

/// The list of a torch version: the newest not newer than it (the oldest for an older torch).
pub fn fallback_for(torch: &str) -> Option<&'static FallbackList> {
    let want = release_key(torch);
    let lists = fallback_lists();
    lists.iter().rev().find(|l| release_key(&l.torch) <= want).or_else(|| lists.first())
}
