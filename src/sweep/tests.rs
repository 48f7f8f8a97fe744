//! Sweeps of real samples on the reference device: points, flips and recompiles where the guards
//! say, and traffic that follows the shapes.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use super::*;
use crate::ir::Guard;
use crate::sym::parse_infix;

/// `samples/NAME.pt2` with `guards` added (the samples' own guards are trivially true).
fn sample(name: &str, guards: &[&str]) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/{name}.pt2"));
    let mut m = crate::import::load(&path).unwrap();
    for g in guards {
        m.guards.push(Guard { expr: parse_infix(g).unwrap(), source: g.to_string() });
    }
    m
}

fn sweep(m: &Model, dim: &str, selection: Selection, modes: &[Mode]) -> Sweep {
    let dim = Dim::parse(dim).unwrap();
    let fixed = prepare(m, &dim, &[]).unwrap();
    let points = plan_points(m, &dim, &fixed, &selection).unwrap();
    let options = SweepOptions { modes: modes.to_vec(), marks: Marks::default(), backend: Backend::Reference, warmup: 0, repeat: 1, budget: std::time::Duration::ZERO, seed: 0 };
    run_sweep(m, &m.graphs[0], &dim, &fixed, &points, &options, &mut |_| {}, &AtomicBool::new(false)).unwrap()
}

#[test]
fn recompiles_exactly_where_a_guard_flips_in_each_mode() {
    let m = sample("mlp", &["s77 <= 64"]);
    let s = sweep(&m, "s77=1..128", Selection::Count(4), &[Mode::Lite, Mode::Full]);
    let values: Vec<i64> = s.points.iter().filter(|p| p.mode == "full").map(|p| p.value).collect();
    assert_eq!(values, vec![1, 5, 25, 64, 65, 128]);
    assert_eq!(s.flips, vec![Flip { value: 65, guard: "s77 <= 64".into(), from: true, to: false }]);
    assert_eq!(s.compiles, vec![("lite", 2), ("full", 2)]);
    for p in &s.points {
        assert_eq!(p.recompiled, p.value == 65, "{} mode at {}", p.mode, p.value);
        assert_eq!(p.guards.iter().find(|g| g.expr == "s77 <= 64").unwrap().value, Some(p.value <= 64));
    }
}

#[test]
fn a_guard_that_flips_back_recompiles_twice_and_explicit_values_still_see_flips() {
    let m = sample("mlp", &["s77 <= 8 or s77 > 100"]);
    let s = sweep(&m, "s77=1..200", Selection::Values(vec![150, 4, 50, 9]), &[Mode::Full]);
    let got: Vec<(i64, bool)> = s.points.iter().map(|p| (p.value, p.recompiled)).collect();
    // Explicit values are measured as given; the plan is rebuilt at the first value past each flip.
    assert_eq!(got, vec![(4, false), (9, true), (50, false), (150, true)]);
    assert_eq!(s.flips.iter().map(|f| f.value).collect::<Vec<_>>(), vec![9, 101]);
    assert_eq!(s.compiles, vec![("full", 3)]);
}

#[test]
fn no_guards_one_compile_and_traffic_grows_with_the_dimension() {
    let m = sample("transformer_block", &[]);
    let s = sweep(&m, "s27=2..512", Selection::Count(5), &[Mode::Lite, Mode::Full]);
    assert!(s.flips.is_empty());
    assert_eq!(s.compiles, vec![("lite", 1), ("full", 1)]);
    assert!(s.points.iter().all(|p| !p.recompiled && p.kernels_launched > 0 && p.kernels.len() == p.kernels_launched));
    for mode in ["lite", "full"] {
        let bytes: Vec<u64> = s.points.iter().filter(|p| p.mode == mode).map(|p| p.bytes).collect();
        assert!(bytes.windows(2).all(|w| w[0] < w[1]), "{mode}: {bytes:?}");
    }
    // Lite keeps the unmarked ops as fallback kernels: more launches than full's fusions.
    let launches = |mode| s.points.iter().find(|p| p.mode == mode).unwrap().kernels_launched;
    assert!(launches("lite") > launches("full"));
    let csv = to_csv(&s);
    assert_eq!(csv.lines().count(), 1 + s.points.len());
    assert!(csv.starts_with("s27,mode,device_us,"));
    let json = to_json(&s);
    assert_eq!(json["dim"], "s27");
    assert!(json["points"][0]["kernels"][0]["median_us"].as_f64().is_some());
}

#[test]
fn errors_name_the_symbol_and_range() {
    let m = sample("transformer_block", &[]);
    let err = |dim: &str, binds: &[(String, i64)]| prepare(&m, &Dim::parse(dim).unwrap(), binds).unwrap_err().to_string();
    assert!(err("seq=1..8", &[]).contains("seq: not a symbol of this model; its symbols are: s27 ∈ [2, 512], s77 ∈ [1, 1024]"));
    assert_eq!(err("s27=1..600", &[]), "--dim s27=1..600: outside the symbol's legal range [2, 512]");
    assert_eq!(err("s27=9..3", &[]), "--dim s27=9..3: empty range (LO must not exceed HI)");
    assert!(err("s27=2..8", &[("s27".into(), 4)]).contains("cannot also be bound"));
    assert!(err("s27=2..8", &[("s77".into(), 5000)]).contains("s77 = 5000 is outside its range [1, 1024]"));
    assert!(Dim::parse("s27=2-8").unwrap_err().to_string().contains("SYM=LO..HI"));
    let dim = Dim::parse("s27=2..8").unwrap();
    let fixed = prepare(&m, &dim, &[]).unwrap();
    let e = plan_points(&m, &dim, &fixed, &Selection::Values(vec![3, 9])).unwrap_err();
    assert_eq!(e.to_string(), "--values: s27 = 9 is outside the swept range 2..8");
}
