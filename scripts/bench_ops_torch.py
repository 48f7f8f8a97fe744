#!/usr/bin/env python3
"""Torch eager timings of the OpInfo-style cases, for `xpu-workbench bench ops`.

    /opt/torchenv/bin/python scripts/bench_ops_torch.py [--dir DIR] [--out FILE] [--only OP,OP]

Reads the case set in DIR (default tests/data/opinfo: scripts/gen_opinfo.py's layout), runs
each case's exported graph (`K.pt2`, `torch.export.load(...).module()`) on its committed inputs
on this CPU, and writes the median wall time of one call per case, in milliseconds, with the
torch version, the machine and the thread count, as JSON to FILE (default: stdout). Committed as
tests/data/opinfo_torch_times.json; `bench ops --against-torch PY` runs this script live instead
(the embedded copy) so both sides are timed in the same run on the same machine.

Each case: two warm-up calls, then calls until at least 5 and 20 ms of them (at most 200); the
median of those. A case that torch itself fails on is recorded with its error, not dropped.
"""
import argparse
import gzip
import io
import json
import os
import platform
import statistics
import sys
import time
import zipfile

import numpy as np
import torch


def machine():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs"


def tensor(data, dtype):
    a = np.load(io.BytesIO(data), allow_pickle=False)
    if dtype == "bfloat16":
        return torch.from_numpy(a.astype(np.uint16).view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def with_sample_inputs(pt2, xs):
    """The archive with the sample inputs put back: gen_opinfo.py leaves them out to keep the
    committed archives small, and torch.export.load requires them."""
    zin = zipfile.ZipFile(io.BytesIO(pt2))
    names = zin.namelist()
    prefix = next((n.split("/data/")[0] for n in names if "/data/" in n), names[0].split("/")[0])
    b = io.BytesIO()
    torch.save((tuple(xs), {}), b)
    o = io.BytesIO()
    with zipfile.ZipFile(o, "w", zipfile.ZIP_STORED) as zout:
        for n in names:
            zout.writestr(n, zin.read(n))
        zout.writestr(f"{prefix}/data/sample_inputs/model.pt", b.getvalue())
    return o.getvalue()


def time_case(z, case):
    k = case["case"]
    xs = [tensor(z.read(f"{k}.in{i}.npy"), dt) for i, (dt, _) in enumerate(case["inputs"])]
    ep = torch.export.load(io.BytesIO(with_sample_inputs(z.read(f"{k}.pt2"), xs)))
    fn = ep.module()
    with torch.no_grad():
        for _ in range(2):
            fn(*xs)
        times = []
        spent = 0.0
        while len(times) < 5 or (spent < 0.02 and len(times) < 200):
            t0 = time.perf_counter()
            fn(*xs)
            dt = time.perf_counter() - t0
            times.append(dt)
            spent += dt
    return statistics.median(times) * 1e3, len(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="tests/data/opinfo")
    ap.add_argument("--out", default="-")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    index = json.load(open(os.path.join(args.dir, "index.json")))
    out = {
        "torch": torch.__version__,
        "machine": machine(),
        "threads": torch.get_num_threads(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": "scripts/bench_ops_torch.py " + " ".join(sys.argv[1:]),
        "cases": {},
    }
    archive = None
    for case in index["cases"]:
        if only and case["op"] not in only:
            continue
        key = f"{case['file']}#{case['case']}"
        try:
            if archive is None or archive[0] != case["file"]:
                raw = gzip.decompress(open(os.path.join(args.dir, case["file"]), "rb").read())
                archive = (case["file"], zipfile.ZipFile(io.BytesIO(raw)))
            ms, n = time_case(archive[1], case)
            out["cases"][key] = {"median_ms": ms, "calls": n}
        except Exception as e:  # noqa: BLE001 - a failing case is recorded, not fatal
            msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
            out["cases"][key] = {"error": f"{type(e).__name__}: {msg}"}
    text = json.dumps(out, indent=0, sort_keys=True)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
