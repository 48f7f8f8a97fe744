#!/usr/bin/env python3
"""Generate tests/data/sym_cases.json: random sympy expressions with their values.

The oracle for src/sym: each case holds sympy's own `srepr` and `str()` of an expression over
shape-like symbols, integer bindings, and the value sympy (or Python's integer ops, for torch's
FloorDiv / PythonMod, which plain sympy lacks) computes. The Rust test parses both texts and
must get the same value.

    python3 scripts/gen_sym_cases.py          # rewrites tests/data/sym_cases.json

Deterministic (seeded); needs only `pip install sympy`.
"""

import json
import pathlib
import random

import sympy

SEED = 20240611
CASES = 300
LIMIT = 2**50  # keep every intermediate far inside i64


class FloorDiv(sympy.Function):
    """torch.utils._sympy.functions.FloorDiv: Python // on integers, printed as `//`."""

    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(int(a) // int(b))
        return None

    def _sympystr(self, printer):
        a, b = self.args
        # Wrapped whole: sympy prints a function as an atom, so `2*FloorDiv(x, y)` must not
        # come out as `2*(x)//(y)`, which Python reads as `(2*x)//y`.
        return f"(({printer._print(a)})//({printer._print(b)}))"


class PythonMod(sympy.Function):
    """torch's PythonMod: Python % (sign of the divisor), printed as `%`."""

    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            return sympy.Integer(int(a) % int(b))
        return None

    def _sympystr(self, printer):
        a, b = self.args
        return f"(({printer._print(a)}) % ({printer._print(b)}))"


S0 = sympy.Symbol("s0", positive=True, integer=True)
S1 = sympy.Symbol("s1", positive=True, integer=True)
S2 = sympy.Symbol("s2", positive=True, integer=True)
U0 = sympy.Symbol("u0", integer=True)


def nonzero_const(rng):
    return sympy.Integer(rng.choice([-5, -3, -2, 2, 3, 4, 5, 7, 8, 16]))


def divisor(rng, syms):
    # Positive symbols are never zero, so they are safe divisors.
    if rng.random() < 0.3:
        return rng.choice([s for s in syms if s.is_positive])
    return nonzero_const(rng)


def int_expr(rng, syms, depth):
    if depth == 0 or rng.random() < 0.1:
        if rng.random() < 0.6:
            return rng.choice(syms)
        return sympy.Integer(rng.randint(-9, 9))
    kind = rng.choice(["add", "add", "sub", "mul", "mul", "pow", "floordiv", "mod", "pymod", "floor", "max", "min", "neg"])
    a = int_expr(rng, syms, depth - 1)
    if kind == "add":
        return a + int_expr(rng, syms, depth - 1)
    if kind == "sub":
        return a - int_expr(rng, syms, depth - 1)
    if kind == "mul":
        return a * int_expr(rng, syms, depth - 1)
    if kind == "pow":
        return a ** rng.choice([2, 2, 3])
    if kind == "floordiv":
        return FloorDiv(a, divisor(rng, syms))
    if kind == "mod":
        return sympy.Mod(a, divisor(rng, syms))
    if kind == "pymod":
        return PythonMod(a, divisor(rng, syms))
    if kind == "floor":
        return sympy.floor(a / divisor(rng, syms))
    if kind == "max":
        return sympy.Max(a, int_expr(rng, syms, depth - 1))
    if kind == "min":
        return sympy.Min(a, int_expr(rng, syms, depth - 1))
    return -a


def bool_expr(rng, syms, depth):
    rel = rng.choice([sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge])
    r = rel(int_expr(rng, syms, depth), int_expr(rng, syms, depth))
    if rng.random() < 0.3:
        other = rng.choice([sympy.Lt, sympy.Ge])(int_expr(rng, syms, 1), int_expr(rng, syms, 1))
        r = rng.choice([sympy.And, sympy.Or])(r, other)
    return r


def small_enough(expr, subs):
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, (sympy.Expr,)) and not node.is_Boolean:
            v = node.subs(subs)
            if v.is_number and (not v.is_finite or abs(v) >= LIMIT):
                return False
    return True


def main():
    rng = random.Random(SEED)
    cases = []
    while len(cases) < CASES:
        syms = rng.choice([[S0, S1], [S0, S1, S2], [S0, U0], [S0, S1, U0]])
        want_bool = rng.random() < 0.2
        expr = bool_expr(rng, syms, 2) if want_bool else int_expr(rng, syms, rng.randint(2, 4))
        values = {s: rng.randint(1, 40) if s.is_positive else rng.randint(-20, 20) for s in syms}
        try:
            if not small_enough(expr, values):
                continue
            v = expr.subs(values)
        except (ZeroDivisionError, TypeError, ValueError):
            continue
        if len(str(expr)) < 8:
            continue  # a bare symbol or number tests nothing new
        if want_bool:
            if v not in (sympy.true, sympy.false):
                continue
            expected = {"bool": bool(v)}
        else:
            if not v.is_Integer:
                continue
            expected = {"int": int(v)}
        cases.append({
            "srepr": sympy.srepr(expr),
            "str": str(expr),
            "bindings": {s.name: n for s, n in sorted(values.items(), key=lambda kv: kv[0].name)},
            **expected,
        })
    out = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "sym_cases.json"
    doc = {"generator": "scripts/gen_sym_cases.py", "sympy": sympy.__version__, "seed": SEED, "cases": cases}
    out.write_text(json.dumps(doc, indent=0) + "\n")
    print(f"wrote {len(cases)} cases to {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
