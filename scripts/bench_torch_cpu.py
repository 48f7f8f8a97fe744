"""PyTorch on this machine's CPU on the zoo's models, for comparison with `bench models`.

    pip install torch            (CPU wheels are enough; a C++ compiler for torch.compile)
    python scripts/bench_torch_cpu.py [DIR|FILE.pt2 ...] [--repeat 7] [--threads N] [--no-compile] [--only NAME,...] > torch.json

For every `.pt2` in the zoo folders (both committed sets by default), or each `.pt2` named
(what `bench models --sample` hands it), it loads the exported
program and runs `ep.module()` on the program's own example inputs (the shapes the export
traced, which are the hints `bench models` binds), eagerly and through `torch.compile`
(Inductor's C++ backend; the first call's compile time is reported apart). Each mode is run
once to warm up and `--repeat` times timed; it prints one JSON document with the median
milliseconds per forward. These are wall-clock times of a whole forward, Python dispatch
included; `bench models` reports device time summed over kernels and the wall time of a whole
run, and with `--against-torch PY` runs this script itself (embedded) in the same run.
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import time
import zipfile

import torch

# Modules whose import registers custom ops that exports record by name: `torch.export.load`
# cannot deserialize a graph calling an op nobody registered ("We ran into an error when
# deserializing the saved file"). transformers' MoE models call `transformers::grouped_mm_fallback`
# (registered by transformers.integrations.moe), its MSA attention `transformers_msa::sparse_atten`;
# torchvision's detection models `torchvision::nms`, `roi_align`, ... Each is imported when installed.
CUSTOM_OP_MODULES = {
    "transformers": "transformers.integrations.moe",
    "transformers_msa": "transformers.integrations.msa_attention",
    "torchvision": "torchvision",
}


def register_custom_ops():
    """Imports what registers the custom ops above; returns {namespace: module or why not}."""
    done = {}
    for ns, module in CUSTOM_OP_MODULES.items():
        try:
            importlib.import_module(module)
            done[ns] = module
        except Exception as e:  # not installed, or too old to have the op: loading will say which op
            done[ns] = f"not imported: {type(e).__name__}: {e}".splitlines()[0]
    return done


def unregistered_ops(path):
    """Ops the export calls that this Python has not registered (namespace.op), to name them
    when loading fails instead of torch's generic deserialization error."""
    missing = set()
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            if not name.endswith("models/model.json"):
                continue
            for target in json.loads(z.read(name)).get("graph_module", {}).get("graph", {}).get("nodes", []):
                t = target.get("target", "")
                parts = t.split(".")
                if len(parts) < 3 or parts[:2] != ["torch", "ops"]:
                    continue
                ns, op = parts[2], parts[3] if len(parts) > 3 else ""
                if not hasattr(getattr(torch.ops, ns), op):
                    missing.add(f"{ns}.{op}")
    return sorted(missing)

ZOO = ["samples/zoo/torch-2.15", "samples/zoo/torch-2.11"]


def timed_ms(fn, args, repeat):
    """Median, min and max milliseconds of `repeat` calls after one warm-up: the spread tells a
    steady measurement from one taken while the machine was busy."""
    fn(*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), min(times), max(times)


def one_model(path, repeat, compile_too):
    ep = torch.export.load(path)
    args, kwargs = ep.example_inputs
    if kwargs:
        return {"error": "keyword example inputs are not supported by this script"}
    module = ep.module()
    # The shapes `bench models` binds at the model's hints, to check both ran the same sizes.
    row = {"input_shapes": [list(a.shape) for a in args if isinstance(a, torch.Tensor)]}
    with torch.no_grad():
        row["eager_ms"], row["eager_min_ms"], row["eager_max_ms"] = timed_ms(module, args, repeat)
        if compile_too:
            # A model torch.compile fails on still has its eager time: the error is kept apart.
            try:
                torch._dynamo.reset()
                compiled = torch.compile(module)
                t = time.perf_counter()
                compiled(*args)
                row["compile_s"] = time.perf_counter() - t
                row["compiled_ms"], row["compiled_min_ms"], row["compiled_max_ms"] = timed_ms(compiled, args, repeat)
            except Exception as e:
                row["compile_error"] = f"{type(e).__name__}: {e}".splitlines()[0]
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="*", default=ZOO, help="folders of .pt2 files, or .pt2 files")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--only", default="", help="models whose file name contains one of these (comma-separated)")
    a = p.parse_args()
    only = [o for o in a.only.split(",") if o]
    torch.set_num_threads(a.threads)
    custom_ops = register_custom_ops()
    files = []
    for d in a.dirs:
        if d.endswith(".pt2"):
            files.append((os.path.dirname(d), os.path.basename(d)))
        else:
            files.extend((d, name) for name in sorted(f for f in os.listdir(d) if f.endswith(".pt2")))
    meta = {
        "torch": torch.__version__,
        # What torch will use, not what was asked for (set_num_threads may clamp it).
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "repeat": a.repeat,
        "custom_ops": custom_ops,
    }
    # First on stderr, before the rows: a run stopped part-way has said what it ran with
    # (`bench models --resume` reads it back with the rows).
    print(json.dumps(meta), file=sys.stderr, flush=True)
    load_before = list(os.getloadavg())
    rows = []
    for d, name in files:
        if only and not any(o in name[: -len(".pt2")] for o in only):
            continue
        path = os.path.join(d, name)
        try:
            row = one_model(path, a.repeat, not a.no_compile)
        except Exception as e:  # a model this torch cannot load or compile: say so, go on
            row = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
            try:
                missing = unregistered_ops(path)
            except Exception:  # an unreadable archive: torch's own error above says so
                missing = []
            if missing:
                row["error"] += f" (ops not registered in this Python: {', '.join(missing)})"
        row.update(model=name[: -len(".pt2")], dir=d)
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    json.dump(
        {
            **meta,
            "load_average_before": load_before,
            "load_average": list(os.getloadavg()),
            "models": rows,
        },
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main()
