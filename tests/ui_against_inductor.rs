//! The profile panel's "against Inductor" section, on the real app driven headlessly: a profile
//! of our own of `samples/inductor/compare/mlp.pt2` (the reference interpreter, so no OpenCL is
//! needed), then Inductor's log and trace of the same model, and the regions read back from the
//! AccessKit tree as the panel shows them.

mod common;

use common::ui::Harness;
use xpu_workbench::runtime::Backend;
use xpu_workbench::ui::against_inductor::AgainstCommand;
use xpu_workbench::ui::{Command, Source, View};

const DIR: &str = "samples/inductor/compare";

#[test]
fn the_profile_panel_shows_our_regions_beside_inductors_kernels() {
    let mut h = Harness::new(Source::File(format!("{DIR}/mlp.pt2").into()));
    h.apply(Command::PickDevice(Backend::Reference));
    h.apply(Command::Focus(View::Full));
    h.apply(Command::AgainstInductor(AgainstCommand::SetLog(format!("{DIR}/mlp.log.gz").into())));
    h.apply(Command::AgainstInductor(AgainstCommand::SetTrace(format!("{DIR}/mlp.profile.json.gz").into())));
    // Both files, but no profile of ours yet: nothing to compare.
    assert!(h.app.state.against.result.is_none());
    h.apply(Command::RunProfile);
    assert!(h.app.state.profile.result.is_some(), "{:?}", h.app.state.profile.error);
    h.settle();
    assert!(h.app.state.against.error.is_none(), "{:?}", h.app.state.against.error);
    let rows: Vec<String> = h.labels().into_iter().filter(|l| l.starts_with("against Inductor region:")).collect();
    assert_eq!(rows.len(), 3, "{rows:#?}");
    // Read off the log's output code: the matmul is a library call, then the gelu a C++ kernel (call() order).
    assert!(
        rows.iter().any(|r| r.contains("extern_kernels.addmm:1 (library), cpp_fused_gelu_0 (c++)") && r.contains("ratio ")),
        "{rows:#?}"
    );
    h.expect(|l| l.starts_with("against Inductor region: ours fused_addmm") && l.contains("extern_kernels.addmm:5 (library)"), "the last matmul's region");
    // A new profile compares again.
    let before = h.app.state.against.result.as_ref().map(std::sync::Arc::as_ptr);
    h.apply(Command::RunProfile);
    h.settle();
    let after = h.app.state.against.result.as_ref().map(std::sync::Arc::as_ptr);
    assert!(after.is_some() && after != before, "compared again after the new profile");
}
