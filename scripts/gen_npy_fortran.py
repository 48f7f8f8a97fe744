#!/usr/bin/env python3
"""Writes tests/data/npy_fortran/: arrays NumPy saves in Fortran order, each beside the same array
saved in C order (NAME.f.npy, NAME.c.npy), for src/npy.rs's tests.

    /opt/torchenv/bin/python scripts/gen_npy_fortran.py

`np.save` writes `fortran_order: True` for an array that is Fortran- and not C-contiguous: a
transposed array, or a LAPACK result torch returns column-major (QR's Q, SVD's U) and hands to
NumPy with its strides.
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "npy_fortran")


def save(name, a):
    assert a.flags.f_contiguous and not a.flags.c_contiguous, name
    np.save(os.path.join(OUT, f"{name}.f.npy"), a)
    np.save(os.path.join(OUT, f"{name}.c.npy"), np.ascontiguousarray(a))
    with open(os.path.join(OUT, f"{name}.f.npy"), "rb") as f:
        assert b"'fortran_order': True" in f.read(128), name


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    save("qr_q_f64_4x3", torch.linalg.qr(torch.randn(4, 3, dtype=torch.float64)).Q.numpy())
    save("svd_u_f32_5x5", torch.linalg.svd(torch.randn(5, 2))[0].numpy())
    # a[i, j, k] = 6k + 2j + i: the test checks these values without the C-order twin.
    save("transposed_i64_2x3x4", np.arange(24, dtype=np.int64).reshape(4, 3, 2).T)
    save("transposed_f16_3x2", np.asfortranarray(np.arange(6, dtype=np.float16).reshape(3, 2) / 4))
    save("transposed_bool_2x3", np.array([[True, False, False], [True, True, False]], order="F"))
    save("bf16_bits_u16_3x4", torch.randn(4, 3, dtype=torch.bfloat16).view(torch.uint16).numpy().T)
    save("transposed_u8_2x1x3", np.arange(6, dtype=np.uint8).reshape(3, 1, 2).T)


if __name__ == "__main__":
    main()
