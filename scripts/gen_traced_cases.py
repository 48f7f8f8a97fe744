#!/usr/bin/env python3
"""PyTorch's outputs for composite ops that only the traced expansions cover (issue 25):
tests/data/traced_cases.json, read by tests/traced_expansions.rs.

    python3 scripts/gen_traced_cases.py tests/data/traced_cases.json

Each case: an ATen overload, its arguments (`{"t": I}` the I-th input tensor, constants spelled
as in assets/ops/composite-*.json.gz: `{"i"|"f"|"b"|"dtype": V}`), the input tensors and the
eager outputs (dtype, shape, flat values as float64), at several shapes and dtypes.
"""
import json
import sys

import torch

torch.manual_seed(0)
A = torch.ops.aten


def t(*shape, dtype=torch.float32):
    if dtype == torch.int64:
        return torch.randint(-3, 4, shape)
    return torch.randn(*shape).to(dtype)


def pos(*shape, dtype=torch.float32):
    return (torch.rand(*shape) + 0.1).to(dtype)


# (overload, tensors, other arguments as [name, encoded value])
CASES = []
# Mixed dtypes are traced at ranks 2 and 3 (other float pairs by renaming), integers at rank 2.
for shape in [(3, 4), (2, 3, 4)]:
    pairs = [(torch.float32, torch.float32), (torch.float32, torch.float64), (torch.float64, torch.float32)]
    for a, b in pairs + ([(torch.float32, torch.int64)] if len(shape) == 2 else []):
        CASES.append((A.type_as.default, [("self", t(*shape, dtype=a)), ("other", t(*shape, dtype=b))], []))
for shape in [(3, 4), (2, 3, 4)]:
    for dt in [torch.float32, torch.float64]:
        CASES.append((A.absolute.default, [("self", t(*shape, dtype=dt))], []))
        CASES.append((A.arccos.default, [("self", t(*shape, dtype=dt).clamp(-0.99, 0.99))], []))
        CASES.append((A.greater.Tensor, [("self", t(*shape, dtype=dt)), ("other", t(*shape, dtype=dt))], []))
        CASES.append((A.divide.Scalar, [("self", t(*shape, dtype=dt))], [["other", {"f": 4.0}]]))
    CASES.append((A.linalg_matmul.default, [("self", t(*shape)), ("other", t(*shape[:-2], shape[-1], 5))], []))


def value(v):
    if isinstance(v, list):
        return [value(x) for x in v]
    if isinstance(v, dict):
        k, x = next(iter(v.items()))
        return getattr(torch, x) if k == "dtype" else x
    return v


def tensor(x):
    return {"dtype": str(x.dtype).replace("torch.", ""), "shape": list(x.shape), "data": x.double().flatten().tolist()}


def main():
    out = []
    for op, tensors, others in CASES:
        kwargs = {n: x for n, x in tensors}
        kwargs.update({n: value(v) for n, v in others})
        res = op(**kwargs)
        res = list(res) if isinstance(res, (tuple, list)) else [res]
        args = [[n, {"t": i}] for i, (n, _) in enumerate(tensors)] + others
        target = f"aten.{op._schema.name.split('::')[1]}.{op._overloadname}"
        out.append({"target": target, "args": args, "inputs": [tensor(x) for _, x in tensors], "outputs": [tensor(r) for r in res]})
    with open(sys.argv[1], "w") as f:
        json.dump({"torch": torch.__version__, "made_by": "scripts/gen_traced_cases.py", "cases": out}, f)
    print(f"{len(out)} cases")


if __name__ == "__main__":
    main()
