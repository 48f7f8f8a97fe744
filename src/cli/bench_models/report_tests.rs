use super::super::summary::summarize;
use super::*;

fn outcome(model: &str, ours: Result<f64, String>, compiled: Result<f64, String>) -> Outcome {
    Outcome { model: model.into(), dir: "corpus".into(), ours, eager: Ok(4.0), compiled, spread: 1.0 }
}

fn machine() -> Machine {
    Machine {
        cpu: Some("Intel(R) Xeon(R) Platinum 8480+".into()),
        cores: Some(2),
        load_average_before: Some([1.0, 1.5, 2.0]),
        load_average_before_ours: Some([1.25, 1.5, 2.0]),
        load_average_after: None,
        build: Build { profile: "optimised", debug_assertions: false, profile_dir: Some("release".into()) },
    }
}

#[test]
fn the_markdown_states_the_conditions_the_verdict_and_each_failure() {
    let outcomes = vec![
        outcome("bert", Ok(1.0), Ok(2.0)),
        outcome("gpt2", Ok(3.0), Ok(2.0)),
        outcome("odd|name", Err("lowering: no rule\nfor op".into()), Err("RuntimeError: deserializing".into())),
        Outcome { model: "moe".into(), dir: "corpus".into(), ours: Ok(1e-4), eager: Err("E: x".into()), compiled: Err("E: x".into()), spread: 2.5 },
    ];
    let s = summarize(&outcomes);
    let torch = TorchSide { torch: "2.15.0".into(), threads: 2, repeat: 5 };
    let m = machine();
    let h = Header { device: "cpu (opencl)", machine: &m, torch: Some(&torch), sample: Some((3, 238, 1)), warmup: 1, repeat: 5 };
    let md = markdown(&h, &s, &outcomes);
    for want in [
        "Intel(R) Xeon(R) Platinum 8480+ (2 hardware threads)",
        "before torch 1.00 1.50 2.00, before ours 1.25 1.50 2.00, after unknown",
        "optimised (debug assertions off, target/release)",
        "torch 2.15.0 (2 threads, 5 timed calls, median)",
        "3 of 238 (`--sample 3 --seed 1`)",
        // 1 of 4 ahead of torch.compile (the failed models are not wins); 2 of 2 measured against eager.
        "| torch.compile | 4 | 2 | 1 | 25.0 | 50.0 | 1.00 | 0.87 |",
        "| torch eager | 4 | 2 | 2 | 50.0 | 100.0 | 0.50 | 0.43 |",
        "| bert | 1.000 | 4.000 | 2.000 | 0.50 | 0.25 | 1.00 |",
        "| odd\\|name | — | 4.000 | — | — | — | 1.00 |",
        "- odd\\|name (corpus): ours: lowering: no rule for op; torch.compile: RuntimeError: deserializing",
        "| moe | 1.0e-4 | — | — | — | — | 2.50 |",
        "Unsteady: on 1 of 4 models a side's slowest timed run took over 1.5 × its fastest",
        "- moe (corpus): torch: E: x\n",
    ] {
        assert!(md.contains(want), "missing {want:?} in:\n{md}");
    }
    // Every table row has the header's number of cells: an unescaped '|' would add one.
    for line in md.lines().filter(|l| l.starts_with("| ") && !l.contains("ours (full")) {
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(cells == 8 || cells == 9, "{line}");
    }
}

#[test]
fn without_torch_or_sample_the_header_says_so() {
    let outcomes = vec![outcome("bert", Ok(1.0), Err("torch did not time this model".into()))];
    let m = machine();
    let h = Header { device: "d", machine: &m, torch: None, sample: None, warmup: 0, repeat: 1 };
    let md = markdown(&h, &summarize(&outcomes), &outcomes);
    assert!(md.contains("- torch: not timed"), "{md}");
    assert!(!md.contains("seeded sample"), "{md}");
    assert!(md.contains("| torch.compile | 1 | 0 | 0 | 0.0 | — | — | — |"), "{md}");
}

#[test]
fn the_cpu_model_is_read_from_cpuinfo() {
    let text = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n";
    assert_eq!(cpu_model(text).as_deref(), Some("Intel(R) Xeon(R) CPU @ 2.20GHz"));
    assert_eq!(cpu_model("processor : 0\n"), None);
    assert_eq!(cpu_model(""), None);
}
