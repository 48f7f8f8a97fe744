#!/usr/bin/env python3
"""torch.profiler traces of one compiled model at several sizes of a dynamic dimension: the input
of `xpu-workbench sweep-profiles` (issue 13: a sweep from imported profiles).

    python3 scripts/gen_profile_sweep.py OUTDIR [--sizes=16,32,...] [--modes=default,lite] [--steps=N]

Per mode, in its own process with a fresh Inductor cache: a tiny Llama (transformers LlamaConfig,
GQA 4/2 heads, random weights, no download) compiled once with torch.compile(dynamic=True), then
run at every sequence length (batch 2) — one compile serves them all while its guards hold — and
profiled there for N steps after a warm-up call:

  OUTDIR/llama_<mode>.log            the TORCH_TRACE dedicated log of that process (every compile)
  OUTDIR/llama_<mode>_s<seq>.json    torch.profiler export_chrome_trace at that sequence length
  OUTDIR/llama_<mode>.sizes.json     the sizes, the device, torch's version, compiles per size
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, torch
import transformers as T
torch.manual_seed(0)
dev = "cuda" if torch.cuda.is_available() else "cpu"
mode, sizes, steps, out = %(mode)r, %(sizes)r, %(steps)r, %(out)r
cfg = T.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max(sizes))
model = T.LlamaForCausalLM(cfg).to(dev).eval()
kw = {"dynamic": True}
if mode != "default":
    kw["mode"] = mode
fn = torch.compile(model, **kw)
from torch.profiler import profile as prof, ProfilerActivity
acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
import torch._dynamo.utils as du
frames = []
with torch.no_grad():
    for s in sizes:
        x = torch.randint(0, 256, (2, s), device=dev)
        fn(input_ids=x, use_cache=False)
        if dev == "cuda":
            torch.cuda.synchronize()
        with prof(activities=acts) as p:
            for _ in range(steps):
                fn(input_ids=x, use_cache=False)
            if dev == "cuda":
                torch.cuda.synchronize()
        p.export_chrome_trace(os.path.join(out, "llama_%%s_s%%d.json" %% (mode, s)))
        frames.append({"seq": s, "unique_graphs": du.counters["stats"]["unique_graphs"]})
json.dump({"torch": torch.__version__, "device": dev, "mode": mode, "batch": 2, "steps": steps,
           "sizes": sizes, "compiles_after_each_size": frames},
          open(os.path.join(out, "llama_%%s.sizes.json" %% mode), "w"), indent=1)
print("ok", mode, torch.__version__, dev)
"""


def job(out, mode, sizes, steps):
    tdir = tempfile.mkdtemp(prefix="tt_")
    cache = tempfile.mkdtemp(prefix="ind_cache_")
    env = dict(os.environ, TORCH_TRACE=tdir, TORCHINDUCTOR_CACHE_DIR=cache, INDUCTOR_PROVENANCE="1")
    src = CHILD % {"mode": mode, "sizes": sizes, "steps": steps, "out": out}
    r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=900)
    print(mode, "rc", r.returncode, r.stdout[-300:], r.stderr[-3000:] if r.returncode else "", flush=True)
    logs = sorted(glob.glob(os.path.join(tdir, "*.log")), key=os.path.getsize)
    if logs:
        shutil.copy(logs[-1], os.path.join(out, f"llama_{mode}.log"))
    shutil.rmtree(tdir, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    opt = {a.split("=", 1)[0]: (a.split("=", 1) + [""])[1] for a in sys.argv[2:] if a.startswith("--")}
    sizes = [int(s) for s in (opt.get("--sizes") or "16,32,64,128,256,512,1024").split(",")]
    for m in (opt.get("--modes") or "default,lite").split(","):
        job(out, m, sizes, int(opt.get("--steps") or 5))
