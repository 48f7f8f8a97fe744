//! The app's File → "Export report…" on a real compiled log with its imported torch.profiler trace,
//! driven headlessly: the same report `xpu-workbench report LOG --profile TRACE` writes.

mod common;

use common::sample;
use common::ui::Harness;
use xpu_workbench::ui::{Command, Source};

fn data(page: &str) -> serde_json::Value {
    let start = page.find("id=\"report-data\">").expect("a data block") + "id=\"report-data\">".len();
    let end = start + page[start..].find("</script>").expect("the data block ends");
    serde_json::from_str(&page[start..end]).expect("the data block is JSON")
}

#[test]
fn the_file_menu_exports_the_open_logs_report_with_its_imported_profile() {
    let log = sample("inductor/cuda211_llama_default.log.gz");
    let profile = sample("inductor/cuda211_llama_default.profile.json.gz");
    let mut h = Harness::new(Source::File(log.clone()));
    h.click_label(|l| l == "File", "the File menu");
    h.expect(|l| l.starts_with("Export report…"), "the menu item");
    h.apply(Command::ImportProfile(profile.clone()));
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ui-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("llama.html");
    h.apply(Command::ExportReport(out.clone()));
    let messages = &h.app.state.messages;
    assert!(messages.iter().any(|m| m.starts_with("wrote the report")), "{messages:?}");
    let d = data(&std::fs::read_to_string(&out).expect("the report was written"));
    assert_eq!(d["kernels"]["profile"], profile.display().to_string());
    assert!(d["kernels"]["rows"].as_array().unwrap().iter().any(|k| k["device_us"].as_f64().is_some_and(|t| t > 0.0)));
    let files: Vec<&str> = d["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(files, [log.display().to_string(), profile.display().to_string()]);

    // The embedded sample is no file to report on: said so, nothing written.
    let mut h = Harness::new(Source::Embedded);
    let none = dir.join("none.html");
    h.apply(Command::ExportReport(none.clone()));
    assert!(h.app.state.messages.iter().any(|m| m.contains("open a file first")), "{:?}", h.app.state.messages);
    assert!(!none.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
