use serde_json::json;

use super::*;

fn ok(model: &str, ours: f64, eager: f64, compiled: f64) -> Outcome {
    Outcome { model: model.into(), dir: "d".into(), ours: Ok(ours), eager: Ok(eager), compiled: Ok(compiled), spread: 1.0 }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn a_model_that_failed_is_never_a_win() {
    let mut failed = ok("broken", 1.0, 2.0, 2.0);
    failed.ours = Err("lowering: unsupported op".into());
    let mut torch_failed = ok("torch_broken", 1.0, 2.0, 2.0);
    torch_failed.compiled = Err("BackendCompilerFailed: x".into());
    let outcomes = vec![ok("a", 1.0, 4.0, 2.0), ok("b", 3.0, 4.0, 2.0), failed, torch_failed];
    let s = summarize(&outcomes);
    assert_eq!(s.models, 4);
    let c = &s.against_compiled;
    assert_eq!((c.measured, c.ahead), (2, 1));
    assert!(close(Some(c.ahead_pct_of_models), 25.0), "{c:?}");
    assert!(close(c.ahead_pct_of_measured, 50.0), "{c:?}");
    // Eager ran for torch_broken: measured there, and ours (1.0) is ahead of its 2.0.
    let e = &s.against_eager;
    assert_eq!((e.measured, e.ahead), (3, 3));
    assert!(close(Some(e.ahead_pct_of_models), 75.0), "{e:?}");
    let names: Vec<&str> = s.not_measured.iter().map(|n| n.model.as_str()).collect();
    assert_eq!(names, ["broken", "torch_broken"]);
    assert_eq!(s.not_measured[0].ours.as_deref(), Some("lowering: unsupported op"));
    assert_eq!(s.not_measured[1].torch_compiled.as_deref(), Some("BackendCompilerFailed: x"));
    assert_eq!(s.not_measured[1].torch_eager, None);
}

#[test]
fn median_and_geometric_mean_of_the_ratios() {
    // ours / compiled: 0.5, 2.0, 1.0, 4.0 → median (1.0 + 2.0) / 2, geometric mean 4^(1/4).
    let outcomes = vec![ok("a", 1.0, 1.0, 2.0), ok("b", 4.0, 1.0, 2.0), ok("c", 3.0, 1.0, 3.0), ok("d", 8.0, 1.0, 2.0)];
    let c = summarize(&outcomes).against_compiled;
    assert!(close(c.median_ratio, 1.5), "{c:?}");
    assert!(close(c.geomean_ratio, 4f64.powf(0.25)), "{c:?}");
    assert_eq!(c.ahead, 1, "a ratio of exactly 1 is not ahead");
    let odd = summarize(&outcomes[..3]).against_compiled;
    assert!(close(odd.median_ratio, 1.0), "{odd:?}");
}

#[test]
fn nothing_measured_gives_no_ratios_and_no_share() {
    let mut o = ok("a", 1.0, 1.0, 1.0);
    o.ours = Err("x".into());
    let s = summarize(&[o]);
    assert_eq!(s.against_compiled.measured, 0);
    assert_eq!(s.against_compiled.ahead_pct_of_models, 0.0);
    assert_eq!(s.against_compiled.ahead_pct_of_measured, None);
    assert_eq!(s.against_compiled.median_ratio, None);
    assert_eq!(s.against_compiled.geomean_ratio, None);
    let empty = summarize(&[]);
    assert_eq!((empty.models, empty.against_eager.ahead_pct_of_models), (0, 0.0));
}

#[test]
fn rows_are_read_with_each_sides_reason() {
    let measured = Outcome::from_row(&json!({"model": "m", "dir": "d", "full": {"median_wall_ms": 2.0},
        "torch_eager_ms": 4.0, "torch_compiled_ms": 1.0}));
    assert_eq!(measured, ok("m", 2.0, 4.0, 1.0));
    let load = Outcome::from_row(&json!({"model": "m", "dir": "d", "error": "could not load the model", "torch_error": "RuntimeError: y"}));
    assert_eq!(load.ours, Err("could not load the model".into()));
    assert_eq!(load.eager, Err("RuntimeError: y".into()));
    assert_eq!(load.compiled, Err("RuntimeError: y".into()));
    let full = Outcome::from_row(&json!({"model": "m", "full": {"error": "run: out of memory"}, "torch_eager_ms": 4.0,
        "torch_compiled_ms": null, "torch_compile_error": "InductorError: z"}));
    assert_eq!(full.ours, Err("run: out of memory".into()));
    assert_eq!(full.eager, Ok(4.0));
    assert_eq!(full.compiled, Err("InductorError: z".into()));
    let spread = Outcome::from_row(&json!({"model": "m", "full": {"median_wall_ms": 2.0, "min_wall_ms": 1.0, "max_wall_ms": 1.2},
        "torch_eager_ms": 4.0, "torch_eager_spread": 3.0, "torch_compiled_spread": null}));
    assert_eq!(spread.spread, 3.0, "the widest side");
    assert_eq!(measured.spread, 1.0, "no min and max: no spread known");
    let no_torch = Outcome::from_row(&json!({"model": "m", "full": {"median_wall_ms": 2.0}}));
    assert!(no_torch.compiled.as_ref().is_err_and(|e| e.contains("torch did not time")), "{no_torch:?}");
    let zero = Outcome::from_row(&json!({"model": "m", "full": {"median_wall_ms": 0.0}, "torch_eager_ms": 1.0}));
    assert!(zero.ours.is_err(), "a zero time is no measurement");
}

#[test]
fn unsteady_models_are_flagged_and_still_counted() {
    let mut busy = ok("busy", 1.0, 2.0, 2.0);
    busy.spread = UNSTEADY + 0.5;
    let mut edge = ok("edge", 1.0, 2.0, 2.0);
    edge.spread = UNSTEADY;
    let s = summarize(&[busy, edge, ok("calm", 1.0, 2.0, 2.0)]);
    assert_eq!(s.against_compiled.ahead, 3);
    assert_eq!(s.unsteady, [Unsteady { model: "busy".into(), dir: "d".into(), spread: 2.0 }]);
}
