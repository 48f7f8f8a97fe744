"""PyTorch on this machine's CPU on the zoo's models, for comparison with `bench models`.

    pip install torch            (CPU wheels are enough; a C++ compiler for torch.compile)
    python scripts/bench_torch_cpu.py [DIR ...] [--repeat 7] [--threads N] [--no-compile] [--only NAME,...] > torch.json

For every `.pt2` in the zoo folders (both committed sets by default) it loads the exported
program and runs `ep.module()` on the program's own example inputs (the shapes the export
traced, which are the hints `bench models` binds), eagerly and through `torch.compile`
(Inductor's C++ backend; the first call's compile time is reported apart). Each mode is run
once to warm up and `--repeat` times timed; it prints one JSON document with the median
milliseconds per forward. These are wall-clock times of a whole forward, Python dispatch
included; `bench models` reports device time summed over kernels and the wall time of a whole
run, and with `--against-torch PY` runs this script itself (embedded) in the same run.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

ZOO = ["samples/zoo/torch-2.15", "samples/zoo/torch-2.11"]


def median_ms(fn, args, repeat):
    fn(*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def one_model(path, repeat, compile_too):
    ep = torch.export.load(path)
    args, kwargs = ep.example_inputs
    if kwargs:
        return {"error": "keyword example inputs are not supported by this script"}
    module = ep.module()
    # The shapes `bench models` binds at the model's hints, to check both ran the same sizes.
    row = {"input_shapes": [list(a.shape) for a in args if isinstance(a, torch.Tensor)]}
    with torch.no_grad():
        row["eager_ms"] = median_ms(module, args, repeat)
        if compile_too:
            torch._dynamo.reset()
            compiled = torch.compile(module)
            t = time.perf_counter()
            compiled(*args)
            row["compile_s"] = time.perf_counter() - t
            row["compiled_ms"] = median_ms(compiled, args, repeat)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="*", default=ZOO)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--only", default="", help="models whose file name contains one of these (comma-separated)")
    a = p.parse_args()
    only = [o for o in a.only.split(",") if o]
    torch.set_num_threads(a.threads)
    rows = []
    for d in a.dirs:
        for name in sorted(f for f in os.listdir(d) if f.endswith(".pt2")):
            if only and not any(o in name[: -len(".pt2")] for o in only):
                continue
            path = os.path.join(d, name)
            try:
                row = one_model(path, a.repeat, not a.no_compile)
            except Exception as e:  # a model this torch cannot load or compile: say so, go on
                row = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
            row.update(model=name[: -len(".pt2")], dir=d)
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    json.dump(
        {
            "torch": torch.__version__,
            "threads": a.threads,
            "repeat": a.repeat,
            "load_average": list(os.getloadavg()),
            "models": rows,
        },
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main()
