//! The sympy oracle: `tests/data/sym_cases.json`, made by `scripts/gen_sym_cases.py`, holds
//! sympy's `srepr` and `str()` of random expressions and the values sympy computed for them.
//! Both parsers must reproduce every value, and printing must round-trip through `parse_infix`.

use serde_json::Value as Json;

use super::*;

const CASES: &str = include_str!("../../tests/data/sym_cases.json");

fn bindings(case: &Json) -> Bindings {
    case["bindings"]
        .as_object()
        .expect("bindings object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().expect("integer binding")))
        .collect()
}

/// Checks one parsed expression against the case's expected value; returns a failure line.
fn check(label: &str, text: &str, parsed: Result<Expr, SymError>, case: &Json, b: &Bindings) -> Option<String> {
    let e = match parsed {
        Ok(e) => e,
        Err(err) => return Some(format!("{label} `{text}`: {err}")),
    };
    let got = if let Some(want) = case.get("int").and_then(Json::as_i64) {
        e.eval_int(b).map(|v| v == want).map_err(|err| (err, Json::from(want)))
    } else {
        let want = case["bool"].as_bool().expect("int or bool expectation");
        e.eval_bool(b).map(|v| v == want).map_err(|err| (err, Json::from(want)))
    };
    match got {
        Ok(true) => {}
        Ok(false) => return Some(format!("{label} `{text}` parsed as `{e}`: wrong value under {b:?}, case {case}")),
        Err((err, want)) => return Some(format!("{label} `{text}` parsed as `{e}`: {err}, expected {want}")),
    }
    let printed = e.to_string();
    match parse_infix(&printed) {
        Ok(again) if again == e => None,
        Ok(again) => Some(format!("{label} `{text}`: `{printed}` reparses as `{again}`")),
        Err(err) => Some(format!("{label} `{text}`: printed `{printed}` does not reparse: {err}")),
    }
}

#[test]
fn both_parsers_agree_with_sympy_and_printing_round_trips() {
    let doc: Json = serde_json::from_str(CASES).expect("sym_cases.json is JSON");
    let cases = doc["cases"].as_array().expect("cases array");
    assert!(cases.len() >= 300, "the oracle file lost cases");
    let mut failures = Vec::new();
    for case in cases {
        let b = bindings(case);
        let srepr = case["srepr"].as_str().expect("srepr");
        let infix = case["str"].as_str().expect("str");
        failures.extend(check("srepr", srepr, parse_srepr(srepr), case, &b));
        failures.extend(check("str", infix, parse_infix(infix), case, &b));
        if let Ok(e) = parse_srepr(srepr) {
            if e.simplify() != e {
                failures.push(format!("`{e}` is not a fixed point of simplify: `{}`", e.simplify()));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
