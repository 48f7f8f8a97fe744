#!/usr/bin/env python3
"""TORCH_TRACE logs (and, on a GPU, torch.profiler traces) of compiled real models.

    python3 scripts/gen_inductor_logs.py OUTDIR [--only=llama,gpt2,bert,resnet] [--modes=default,lite]
                                                [--provenance=0|1] [--profile] [--steps=N] [--zoo]
                                                [--timeout=SECONDS per job, 900]

Each job runs in its own process with a fresh Inductor cache, so every compile is logged in full:

  OUTDIR/<model>_<mode>/trace.log      the TORCH_TRACE dedicated log (torch.compile(dynamic=True))
  OUTDIR/<model>_<mode>/profile.json   with --profile: torch.profiler export_chrome_trace of N steps

Models are built from small configs with random weights (no download): a tiny Llama
(transformers LlamaConfig), GPT-2, BERT, and torchvision's resnet18; `symviews` and
`symviews_marked` (`--only=symviews,symviews_marked --modes=lite`) are gen_samples.py's SymViews,
the second with its relu marked `compile_with_inductor`. `--zoo` takes the thirteen models of
scripts/gen_zoo.py instead (its builders, seeds and both inputs; `--only` picks among them), so the
logs are of the very models whose .pt2 exports samples/zoo holds. `--provenance=1` sets
INDUCTOR_PROVENANCE=1 (torch >= 2.8), which makes Inductor log its kernel ↔ node mappings
(`inductor_provenance_tracking_node_mappings`, `..._kernel_stack_traces`); without it the log holds
only the output code, the post-grad graph and `triton_kernel_info`.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

CHILD = r"""
import os, sys, torch
torch.manual_seed(0)
torch.set_num_threads(int(os.environ.get("GEN_THREADS", "1")))
dev = "cuda" if torch.cuda.is_available() else "cpu"
name, mode, profile, steps = %(name)r, %(mode)r, %(profile)r, %(steps)r

def hf(kind):
    import transformers as T
    if kind == "llama":
        cfg = T.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
        m = T.LlamaForCausalLM(cfg)
    elif kind == "gpt2":
        cfg = T.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4, n_positions=128)
        m = T.GPT2LMHeadModel(cfg)
    else:
        cfg = T.BertConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=128, max_position_embeddings=128)
        m = T.BertModel(cfg)
    return m

if %(zoo)r:
    # gen_zoo.py's models, built and fed exactly as it exports them (its module reads sys.argv[1]
    # as its output folder on import: point it at a scratch folder).
    sys.path.insert(0, %(here)r)
    import tempfile
    sys.argv = ["gen_zoo.py", tempfile.mkdtemp(prefix="zoo_")]
    import random, gen_zoo
    (_, _, build, make_inputs, _), = [m for m in gen_zoo.models() if m[0] == name]
    torch.manual_seed(0)
    random.seed(0)
    model = build()
    inputs = [make_inputs(0), make_inputs(1)]
    call = lambda f, x: f(*x)
elif name.startswith("symviews"):
    # The dynamic-shape lite case: views whose sizes are products of symbols; `symviews_marked`
    # marks its relu compile_with_inductor, so lite mode lowers that node alone.
    sys.path.insert(0, %(here)r)
    import torch.fx.traceback as fx_traceback
    from gen_samples import SymViews
    class MarkedSymViews(SymViews):
        def forward(self, x):
            b, s, d = x.shape
            y = self.proj(x.reshape(b * s, d))
            y = y.view(b, s * 16)
            with fx_traceback.annotate({"compile_with_inductor": 0}):
                r = torch.relu(y)
            y = r + torch.arange(s * 16, dtype=y.dtype, device=y.device)
            z = torch.cat([x, x], dim=1)
            return y.view(b, s, 16).sum(dim=1), z.mean(dim=(1, 2)), y.mean()
    model = MarkedSymViews() if name == "symviews_marked" else SymViews()
    inputs = [(torch.randn(2, 5, 8),), (torch.randn(3, 7, 8),)]
    call = lambda f, x: f(*x)
elif name == "resnet":
    import torchvision
    model = torchvision.models.resnet18(num_classes=10)
    inputs = [(torch.randn(2, 3, 32, 32),), (torch.randn(3, 3, 40, 40),)]
    call = lambda f, x: f(*x)
else:
    model = hf(name)
    inputs = [(torch.randint(0, 256, (2, 8)),), (torch.randint(0, 256, (3, 11)),)]
    call = lambda f, x: f(input_ids=x[0], use_cache=False) if name != "bert" else f(input_ids=x[0])
model = model.to(dev).eval()
kw = {"dynamic": True}
if mode != "default":
    kw["mode"] = mode
fn = torch.compile(model, **kw)
import contextlib, torch.fx.traceback as fx_tb
# preserve_node_meta() carries fx_traceback.annotate() marks into the traced graphs.
with torch.no_grad(), (fx_tb.preserve_node_meta() if name.startswith("symviews") else contextlib.nullcontext()):
    for x in inputs:
        call(fn, tuple(t.to(dev) for t in x))
    if profile:
        x = tuple(t.to(dev) for t in inputs[-1])
        from torch.profiler import profile as prof, ProfilerActivity
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
        with prof(activities=acts) as p:
            for _ in range(steps):
                call(fn, x)
            if dev == "cuda":
                torch.cuda.synchronize()
        p.export_chrome_trace(os.environ["GEN_PROFILE"])
import torch._inductor.config as icfg
print("compiled ok", name, mode, torch.__version__, dev,
      "provenance_tracking_level", getattr(icfg.trace, "provenance_tracking_level", None))
"""


def job(out, name, mode, provenance, profile, steps, zoo=False, timeout=900):
    d = os.path.join(out, f"{name}_{mode}")
    os.makedirs(d, exist_ok=True)
    tdir = tempfile.mkdtemp(prefix="tt_")
    cache = tempfile.mkdtemp(prefix="ind_cache_")
    env = dict(os.environ, TORCH_TRACE=tdir, TORCHINDUCTOR_CACHE_DIR=cache,
               GEN_PROFILE=os.path.join(d, "profile.json"))
    if provenance:
        env["INDUCTOR_PROVENANCE"] = "1"
    here = os.path.dirname(os.path.abspath(__file__))
    src = CHILD % {"name": name, "mode": mode, "profile": profile, "steps": steps, "here": here, "zoo": zoo}
    try:
        r = subprocess.run([sys.executable, "-c", src], env=env, capture_output=True, text=True, timeout=timeout)
        print(name, mode, "rc", r.returncode, r.stdout[-300:], r.stderr[-2000:] if r.returncode else "", flush=True)
    except subprocess.TimeoutExpired:
        # Said, and no log kept: a cut log would pass for a whole one.
        print(name, mode, f"TIMEOUT after {timeout} s: no log written", flush=True)
        shutil.rmtree(tdir, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        return
    logs = sorted(glob.glob(os.path.join(tdir, "*.log")), key=os.path.getsize)
    if logs:
        shutil.copy(logs[-1], os.path.join(d, "trace.log"))
    shutil.rmtree(tdir, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    out = sys.argv[1]
    opt = {a.split("=", 1)[0]: (a.split("=", 1) + [""])[1] for a in sys.argv[2:] if a.startswith("--")}
    zoo = "--zoo" in opt
    if zoo:
        here = os.path.dirname(os.path.abspath(__file__))
        # The zoo's names, without importing torch here: each job imports it in its own process.
        src = open(os.path.join(here, "gen_zoo.py")).read()
        default = ",".join(l.split('"')[1] for l in src.splitlines() if l.strip().startswith('yield "'))
    else:
        default = "llama,gpt2,bert,resnet"
    names = (opt.get("--only") or default).split(",")
    modes = (opt.get("--modes") or "default,lite").split(",")
    for n in names:
        for m in modes:
            job(out, n, m, opt.get("--provenance", "1") == "1", "--profile" in opt, int(opt.get("--steps") or 5), zoo,
                int(opt.get("--timeout") or 900))
