#!/usr/bin/env python3
"""One model three ways, for `profile FILE --against-inductor LOG --inductor-trace TRACE`: our side's
export and Inductor's side's compile log and profiler trace, made in one run of one torch, so the
two sides share source lines and module paths (what matches their nodes).

    /opt/torchenv/bin/python scripts/gen_inductor_compare.py OUTDIR [--only=mlp,cnn,transformer_block]
                                                             [--calls=N timed calls, 10]

Models are gen_samples.py's (`mlp`, `cnn`, `transformer_block`), built from the same seed and fed
the same example input. Per model, each in its own process with a fresh Inductor cache:

  OUTDIR/NAME.pt2               torch.export.save (gen_samples.py's dynamic dims; their hints are
                                the example input's sizes, which `profile` binds by default)
  OUTDIR/NAME.log               TORCH_TRACE of torch.compile(dynamic=False) on the CPU at the example
                                input, INDUCTOR_PROVENANCE=1 (kernel <-> node mappings)
  OUTDIR/NAME.profile.json      torch.profiler (CPU) export_chrome_trace of N calls after warm-up,
                                with TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE=1: each C++ kernel call
                                is a record function named `graph_<id>_<kernel>` (without it the
                                profiler sees no C++ kernel at all)

Torch runs with its default thread count (printed); the trace header records nothing about it.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import os, sys, tempfile, torch
# gen_samples.py makes its output folder (argv[1]) on import: point it at a scratch folder.
sys.argv = ["gen_samples.py", tempfile.mkdtemp(prefix="samples_")]
sys.path.insert(0, %(here)r)
import gen_samples
name, out, calls = %(name)r, %(out)r, %(calls)r
torch.manual_seed(0)
(model, args, dyn), = [(m, a, d) for n, m, a, d in gen_samples.models() if n == name]
model = model.eval()
ep = torch.export.export(model, args, dynamic_shapes={k: dyn[k] for k in dyn})
torch.export.save(ep, os.path.join(out, name + ".pt2"))
fn = torch.compile(model, dynamic=False)
from torch.profiler import profile, ProfilerActivity
with torch.no_grad():
    for _ in range(3):
        fn(*args)
    with profile(activities=[ProfilerActivity.CPU]) as p:
        for _ in range(calls):
            fn(*args)
p.export_chrome_trace(os.path.join(out, name + ".profile.json"))
print("ok", name, torch.__version__, "threads", torch.get_num_threads())
"""


def job(out, name, calls):
    tdir = tempfile.mkdtemp(prefix="tt_")
    cache = tempfile.mkdtemp(prefix="ind_cache_")
    env = dict(os.environ, TORCH_TRACE=tdir, TORCHINDUCTOR_CACHE_DIR=cache, INDUCTOR_PROVENANCE="1",
               TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE="1")
    src = CHILD % {"here": HERE, "name": name, "out": os.path.abspath(out), "calls": calls}
    r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True)
    print(name, "rc", r.returncode, r.stdout.strip()[-300:], r.stderr[-3000:] if r.returncode else "", flush=True)
    logs = sorted(glob.glob(os.path.join(tdir, "*.log")), key=os.path.getsize)
    if r.returncode == 0 and logs:
        shutil.copy(logs[-1], os.path.join(out, name + ".log"))
    shutil.rmtree(tdir, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return r.returncode


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    opt = {a.split("=", 1)[0]: (a.split("=", 1) + [""])[1] for a in sys.argv[2:] if a.startswith("--")}
    names = (opt.get("--only") or "mlp,cnn,transformer_block").split(",")
    rcs = [job(out, n, int(opt.get("--calls") or 10)) for n in names]
    sys.exit(max(rcs))
