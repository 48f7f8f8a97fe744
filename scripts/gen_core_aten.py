#!/usr/bin/env python3
"""List PyTorch's Core ATen IR opset (the `core` tag of native_functions.yaml), one target a line
(`aten.add.Tensor`), for `xpu-workbench ops` / docs/OPS.md:

    python3 scripts/gen_core_aten.py > src/cli/core_aten_ops.txt

Reads the yaml shipped with the installed torch (torchgen/packaged/ATen/native/).
"""
import os

import torchgen
import yaml

path = os.path.join(os.path.dirname(torchgen.__file__), "packaged/ATen/native/native_functions.yaml")
import torch  # noqa: E402

print(f"# Core ATen ops (core tag of native_functions.yaml), torch {torch.__version__}")
for e in yaml.safe_load(open(path)):
    tags = e.get("tags", [])
    tags = [tags] if isinstance(tags, str) else tags
    if "core" not in tags:
        continue
    name = e["func"].split("(", 1)[0]
    base, _, overload = name.partition(".")
    print(f"aten.{base}.{overload or 'default'}")
