#!/usr/bin/env python3
"""Concrete shapes of every tensor of the ONNX samples, as ONNX Runtime computes them, at several
bindings of the dynamic dims; written to samples/onnx_shapes.json for tests/onnx_import.rs.

    pip install onnx onnxruntime numpy && python3 scripts/gen_onnx_shapes.py
"""
import json
import os

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "samples")
BINDINGS = {
    "mlp": [{"batch": b} for b in (1, 3, 17)],
    "mlp_ext": [{"batch": b} for b in (1, 5)],
    "cnn": [{"batch": b} for b in (1, 2, 9)],
    "transformer_block": [{"batch": b, "seq": s} for b, s in ((1, 2), (3, 5), (2, 11))],
}

out = {}
for name, bindings in BINDINGS.items():
    path = os.path.join(SAMPLES, name + ".onnx")
    model = onnx.load(path)  # loads external data too
    graph = model.graph
    declared = {o.name for o in graph.output}
    for node in graph.node:
        for o in node.output:
            if o and o not in declared:
                graph.output.append(onnx.helper.make_empty_tensor_value_info(o))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    cases = []
    for b in bindings:
        feeds = {}
        for i in sess.get_inputs():
            shape = [b[d] if isinstance(d, str) else d for d in i.shape]
            feeds[i.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        results = sess.run(names, feeds)
        cases.append({"bindings": b, "shapes": {n: list(r.shape) for n, r in zip(names, results)}})
    out[name] = cases
    print(name, len(names), "values")

with open(os.path.join(SAMPLES, "onnx_shapes.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
