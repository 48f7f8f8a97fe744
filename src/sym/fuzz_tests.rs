//! Hostile input: thousands of random and mutated strings through both parsers, printing and
//! evaluation. Any panic or stack overflow fails the test; errors are the expected outcome.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;

const SEEDS: &[&str] = &[
    "Mul(Integer(64), Symbol('s27', positive=True, integer=True))",
    "Add(Integer(-1), FloorDiv(Symbol('s0', integer=True), Integer(2)))",
    "Pow(Symbol('s27', positive=True, integer=True), Integer(-2))",
    "ModularIndexing(Symbol('x'), Integer(4), Integer(3))",
    "And(StrictLessThan(Symbol('s0'), Integer(8)), Not(Equality(Symbol('s1'), Integer(1))))",
    "Float('0.5', precision=53)",
    "(s0 - 1)//2 + 1",
    "Max(1, s0) * s1 ** 2 % 7",
    "1 <= s0 <= 64 and not s1 != 2 or (s0 < 8) & (s1 > 2)",
    "L['x'].size()[0] == L['self'].fc.weight.size()[1]",
    "CeilToInt(IntTrueDiv(s0, 3)) - TruncToInt(-7/2) + RoundToInt(2.5)",
    "9223372036854775807 + 1",
];

const ALPHABET: &[u8] = b"()[],.'=+-*/%<>&|~! _0123456789sSabxLeEMIFnotrdAPw\"\\";

fn mutate(rng: &mut StdRng, s: &str) -> String {
    let mut b: Vec<u8> = s.bytes().collect();
    for _ in 0..rng.gen_range(1..6) {
        let at = rng.gen_range(0..=b.len());
        match rng.gen_range(0..4) {
            0 if at < b.len() => {
                b.remove(at);
            }
            1 => b.insert(at, ALPHABET[rng.gen_range(0..ALPHABET.len())]),
            2 if at < b.len() => b[at] = ALPHABET[rng.gen_range(0..ALPHABET.len())],
            _ => {
                let end = rng.gen_range(at..=b.len());
                let piece = b[at..end].to_vec();
                b.splice(at..at, piece);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn exercise(text: &str, b: &Bindings) {
    for parsed in [parse_srepr(text), parse_infix(text)] {
        match parsed {
            Ok(e) => {
                let _ = e.eval(b);
                let printed = e.to_string();
                let _ = parse_infix(&printed);
                let _ = e.simplify();
            }
            Err(err) => {
                let _ = err.to_string();
            }
        }
    }
    let _ = parse_infix_with(text, &mut |s| s.starts_with('L').then(|| Expr::int(3)));
}

#[test]
fn random_and_mutated_text_never_panics() {
    let mut rng = StdRng::seed_from_u64(0x005e_ed51);
    let b: Bindings = [("s0", 5), ("s1", 0), ("s27", -3), ("x", i64::MAX)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
    for i in 0..4000 {
        let text = if i % 4 == 0 {
            let len = rng.gen_range(0..40);
            (0..len).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect()
        } else {
            let seed = SEEDS[rng.gen_range(0..SEEDS.len())];
            mutate(&mut rng, seed)
        };
        exercise(&text, &b);
    }
    for text in [
        "(".repeat(100_000),
        "-".repeat(100_000) + "1",
        "Add(".repeat(100_000),
        "9".repeat(5000),
        format!("s0{}", "**s0".repeat(5000)),
        format!("x{}", " % y".repeat(5000)),
        "'".to_string() + &"\\".repeat(7),
        "\u{0}\u{ffff}é∞".to_string(),
    ] {
        exercise(&text, &b);
    }
}
