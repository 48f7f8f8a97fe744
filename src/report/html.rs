//! The report as one HTML file: the page, its style and script (assets/report/, compiled in) and the
//! report's data as JSON in a `<script type="application/json">` block the script reads.
//!
//! Everything in the data came from a file someone else may have crafted, so the page treats it as
//! text (the script never parses it as markup), and the Content-Security-Policy runs only the
//! page's own script (by a per-render nonce): an inline handler smuggled into a node name would not
//! run even if it reached the DOM as markup.

use std::hash::{BuildHasher, Hasher};

use super::types::Report;

const PAGE: &str = include_str!("../../assets/report/report.html");
const STYLE: &str = include_str!("../../assets/report/report.css");
const SCRIPT: &str = include_str!("../../assets/report/report.js");

/// The whole page.
pub fn render(report: &Report) -> String {
    let data = serde_json::to_string(report).unwrap_or_else(|e| format!("{{\"title\":\"cannot serialize the report: {e}\"}}"));
    // `<` only occurs inside JSON strings, where `\u003c` means the same: no `</script>` can end
    // the block early.
    let data = data.replace('<', "\\u003c");
    fill(PAGE, &[("TITLE", &escape(&report.title)), ("NONCE", &nonce()), ("STYLE", STYLE), ("SCRIPT", SCRIPT), ("DATA", &data)])
}

/// Replaces `{{NAME}}` markers of the template (never of the values: a value holding `{{DATA}}`
/// stays as it is).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + values.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}").and_then(|end| values.iter().find(|(k, _)| *k == &after[..end]).map(|(_, v)| (end, v))) {
            Some((end, v)) => {
                out.push_str(v);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Text for an HTML text node or attribute.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A value no file can predict: std's hasher is seeded at random per process.
fn nonce() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_close_its_script_block_or_fill_markers() {
        let r = Report { title: "</script><script>alert(1)</script>{{SCRIPT}}".into(), ..Report::default() };
        let page = render(&r);
        // The page's own two script blocks and nothing else.
        assert_eq!(page.matches("<script").count(), 2, "{page}");
        assert!(page.contains("&lt;/script&gt;"));
        assert!(page.contains("\\u003c/script>\\u003cscript>alert(1)\\u003c/script>{{SCRIPT}}"));
        assert!(page.contains("Content-Security-Policy"));
        assert!(!page.contains("{{DATA}}") && !page.contains("{{STYLE}}"));
    }
}
