#!/usr/bin/env python3
"""TORCH_TRACE logs of training compiles (one forward + backward), the inputs of the training tests.

    python3 scripts/gen_train_logs.py OUTDIR [--only=mlp,rmsnet,llama] [--modes=default,lite]
                                             [--timeout=SECONDS per job, 900]

Each job runs in its own process with a fresh Inductor cache, so every compile is logged in full
(aot_joint_graph, aot_forward_graph, aot_backward_graph, the post-grad graphs and output code):

  OUTDIR/cpu<torch>_<model>_<mode>_train.log.gz

`torch.compile(model, dynamic=True)` (and `mode="lite"`), model in train mode, one forward and one
`loss.backward()`, on CPU, seed 0, one thread. Models are built here with random weights (no download):

  mlp     Linear → LayerNorm → GELU → Linear (the LayerNorm/GELU pair torch's default table decomposes)
  rmsnet  Linear → nn.RMSNorm → SiLU → Linear; CPU has no `_fused_rms_norm` kernel, so tracing
          expands it in lite mode too (the case check-lite must name)
  llama   transformers' LlamaForCausalLM from a tiny LlamaConfig (GQA, RoPE, RMSNorm), loss on the logits
"""
import glob
import gzip
import os
import shutil
import subprocess
import sys
import tempfile



def child(name, mode):
    """One job, in its own process: the models live in this file, so the graphs' `# File:` comments
    name real source lines (code run with `python -c` has none, and check-lite then sees one location)."""
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.ln, self.fc2 = nn.Linear(32, 64), nn.LayerNorm(64), nn.Linear(64, 16)
        def forward(self, x):
            return self.fc2(nn.functional.gelu(self.ln(self.fc1(x))))

    class RMSNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.norm, self.fc2 = nn.Linear(32, 64), nn.RMSNorm(64), nn.Linear(64, 16)
        def forward(self, x):
            return self.fc2(nn.functional.silu(self.norm(self.fc1(x))))

    if name == "llama":
        import transformers as T
        cfg = T.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
        model = T.LlamaForCausalLM(cfg)
        x = torch.randint(0, 256, (2, 8))
        loss_of = lambda f: f(input_ids=x, use_cache=False).logits.float().pow(2).mean()
    else:
        model = MLP() if name == "mlp" else RMSNet()
        x = torch.randn(4, 8, 32)
        loss_of = lambda f: f(x).pow(2).mean()
    model = model.train()
    kw = {"dynamic": True}
    if mode != "default":
        kw["mode"] = mode
    fn = torch.compile(model, **kw)
    loss_of(fn).backward()
    print("compiled ok", name, mode, torch.__version__)


def job(out, name, mode, timeout):
    tdir = tempfile.mkdtemp(prefix="tt_")
    cache = tempfile.mkdtemp(prefix="ind_cache_")
    env = dict(os.environ, TORCH_TRACE=tdir, TORCHINDUCTOR_CACHE_DIR=cache)
    try:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, mode], env=env, capture_output=True, text=True, timeout=timeout)
        print(name, mode, "rc", r.returncode, r.stdout[-300:], r.stderr[-2000:] if r.returncode else "", flush=True)
        logs = sorted(glob.glob(os.path.join(tdir, "*.log")), key=os.path.getsize)
        if r.returncode == 0 and logs:
            import torch  # only for the version in the file name
            ver = "".join(torch.__version__.split("+")[0].split(".")[:2])
            dst = os.path.join(out, f"cpu{ver}_{name}_{mode}_train.log.gz")
            with open(logs[-1], "rb") as f, gzip.GzipFile(dst, "wb", mtime=0) as g:
                shutil.copyfileobj(f, g)
            print("wrote", dst, os.path.getsize(dst), "bytes", flush=True)
    except subprocess.TimeoutExpired:
        # Said, and no log kept: a cut log would pass for a whole one.
        print(name, mode, f"TIMEOUT after {timeout} s: no log written", flush=True)
    finally:
        shutil.rmtree(tdir, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        sys.exit(0)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    opt = {a.split("=", 1)[0]: (a.split("=", 1) + [""])[1] for a in sys.argv[2:] if a.startswith("--")}
    jobs = [("mlp", "default"), ("mlp", "lite"), ("rmsnet", "default"), ("rmsnet", "lite"), ("llama", "lite")]
    names = (opt.get("--only") or "mlp,rmsnet,llama").split(",")
    modes = (opt.get("--modes") or "default,lite").split(",")
    for n, m in jobs:
        if n in names and m in modes:
            job(out, n, m, int(opt.get("--timeout") or 900))
