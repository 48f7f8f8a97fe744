#!/usr/bin/env python3
"""Python baseline for docs/PERFORMANCE.md: median time of json.load() of a .pt2's model JSON.

    python3 scripts/bench_json_load.py samples/big12k.pt2 [REPEAT]

The JSON is extracted once to a temporary file first, so only json.load (file read + parse)
is timed, exactly what "Python's json.load of the same JSON alone" means.
"""
import json
import statistics
import sys
import tempfile
import time
import zipfile

path = sys.argv[1]
repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 20
z = zipfile.ZipFile(path)
name = next(n for n in z.namelist() if "/models/" in n and n.endswith(".json"))
with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
    tmp.write(z.read(name))
    tmp.flush()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        with open(tmp.name) as f:
            json.load(f)
        times.append(time.perf_counter() - t0)
print(json.dumps({"file": path, "entry": name, "repeat": repeat, "json_load_median_ms": statistics.median(times) * 1e3}))
