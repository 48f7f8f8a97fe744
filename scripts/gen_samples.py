#!/usr/bin/env python3
"""Generate the real PyTorch samples under samples/.

Run with torch (2.6-2.11) on a machine that has it (the lent device machine here):

    python3 scripts/gen_samples.py OUTDIR [--big] [--only=NAME,NAME]

For each model it writes
  NAME.pt2             torch.export.save() of the exported program (dynamic dims)
  NAME.core.pt2        ep.run_decompositions() (core ATen)
  NAME.inductor.pt2    ep.run_decompositions(Inductor's default table), when it succeeds
  NAME.in0.npy ...     seeded random inputs; NAME.out0.npy ... eager outputs (float32, CPU)
  NAME.expect.json     op histograms of the three graphs, symbols, and every tensor's
                       shape/strides evaluated by sympy at random legal bindings
--big adds big12k.pt2: a 12,000-node chain for import benchmarks.
--legacy adds mlp.legacy.pt2: the same MLP written in the layout torch.export.save used up to
2.6 (serialized_exported_program.json + pickled state dict), by torch's own serializer.
Nothing here is hard-coded into the Rust tests: they read these files.
"""
import json
import os
import random
import sys
import traceback
from collections import Counter

import numpy as np
import sympy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

OUT = sys.argv[1] if len(sys.argv) > 1 else "samples"
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)
random.seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.gelu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class Block(nn.Module):
    """Pre-norm transformer block: layer_norm, SDPA attention, GELU MLP, softmax head."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)
        self.head = nn.Linear(d, 16)

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q = q.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, s, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v)
        a = a.transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(a)
        x = x + self.down(F.gelu(self.up(self.ln2(x))))
        return torch.softmax(self.head(x), dim=-1)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.b2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.avg_pool2d(F.relu(self.b2(self.c2(x))), 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class SymViews(nn.Module):
    """Views whose shapes are products of symbols; sym_size users; cat doubling a symbol."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 16)

    def forward(self, x):
        b, s, d = x.shape
        y = self.proj(x.reshape(b * s, d))  # [b*s, 16]
        y = y.view(b, s * 16)  # products of symbols
        y = torch.relu(y) + torch.arange(s * 16, dtype=y.dtype)
        z = torch.cat([x, x], dim=1)  # 2*s
        return y.view(b, s, 16).sum(dim=1), z.mean(dim=(1, 2)), y.mean()


class Acts(nn.Module):
    """One of each activation / normalisation helper that Inductor decomposes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(24, 24)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, y):
        h = self.fc(x)
        a = F.silu(h) + F.hardswish(h) + F.hardsigmoid(h) + F.relu6(h)
        a = self.drop(a)
        a = torch.clamp(a, -2.0, 2.0)
        a = torch.addcmul(a, h, y, value=0.5)
        v = torch.var(a, dim=-1, keepdim=True)
        sd = torch.std(a, dim=-1, keepdim=True)
        n = (a - a.mean(dim=-1, keepdim=True)) * torch.rsqrt(v + 1e-5) + sd
        g = F.gelu(n, approximate="tanh")
        ls = F.log_softmax(g, dim=-1)
        u = ls.unflatten(-1, (4, 6)).flatten(-2).contiguous().clone()
        return u + x.expand(x.shape[0], 24)


class Annotated(nn.Module):
    """A block whose layer_norm is marked for Inductor (lite mode decomposes only it)."""

    def __init__(self, d=32):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 64)
        self.fc2 = nn.Linear(64, d)

    def forward(self, x):
        import torch.fx.traceback as fx_traceback

        with fx_traceback.annotate({"compile_with_inductor": 0}):
            h = self.ln(x)
        h = F.gelu(self.fc1(h))
        return torch.softmax(self.fc2(h), dim=-1)


def dims(**kw):
    return {k: Dim(k, min=lo, max=hi) for k, (lo, hi) in kw.items()}


def models():
    batch = Dim("batch", min=1, max=1024)
    seq = Dim("seq", min=2, max=512)
    yield "mlp", MLP(), (torch.randn(4, 32),), {"x": {0: batch}}
    yield "transformer_block", Block(), (torch.randn(2, 7, 32),), {"x": {0: batch, 1: seq}}
    yield "cnn", CNN(), (torch.randn(2, 3, 16, 16),), {"x": {0: batch}}
    yield "sym_views", SymViews(), (torch.randn(3, 5, 8),), {"x": {0: batch, 1: seq}}
    yield "activations", Acts(), (torch.randn(5, 24), torch.randn(5, 24)), {"x": {0: batch}, "y": {0: batch}}
    yield "annotated", Annotated(), (torch.randn(3, 6, 32),), {"x": {0: batch, 1: seq}}


def op_hist(ep):
    c = Counter()
    for n in ep.graph.nodes:
        if n.op == "call_function":
            t = str(n.target)
            c[t] += 1
    return dict(sorted(c.items()))


def flat_vals(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from flat_vals(x)
    else:
        yield v


def to_int(e, subs):
    if isinstance(e, torch.SymInt):
        e = e.node.expr
    if isinstance(e, int):
        return e
    r = sympy.sympify(e).xreplace(subs)
    return int(r)


def expectations(ep, n_bind=6):
    syms = {}
    for s, vr in ep.range_constraints.items():
        lo = int(vr.lower)
        hi = vr.upper
        hi = int(hi) if hi.is_finite else None
        syms[str(s)] = (s, lo, hi)
    rows = []
    rng = random.Random(1234)
    for i in range(n_bind):
        bind = {}
        for name, (s, lo, hi) in syms.items():
            top = min(hi if hi is not None else 64, 64)
            v = lo if i == 0 else rng.randint(lo, max(lo, top))
            bind[name] = v
        subs = {syms[k][0]: sympy.Integer(v) for k, v in bind.items()}
        values = {}
        for n in ep.graph.nodes:
            val = n.meta.get("val")
            if val is None:
                continue
            items = list(flat_vals(val))
            if len(items) == 1 and isinstance(items[0], torch.Tensor):
                t = items[0]
                values[n.name] = {
                    "dtype": str(t.dtype).replace("torch.", ""),
                    "shape": [to_int(d, subs) for d in t.shape],
                    "strides": [to_int(d, subs) for d in t.stride()],
                }
            elif len(items) == 1 and isinstance(items[0], torch.SymInt):
                values[n.name] = {"int": to_int(items[0], subs)}
        rows.append({"bindings": bind, "values": values})
    return rows


def save_npy(prefix, tensors):
    for i, t in enumerate(tensors):
        np.save(f"{prefix}{i}.npy", t.detach().cpu().numpy())


def export_one(name, model, args, dyn):
    model.eval()
    names = list(dyn.keys())
    dynamic_shapes = {k: dyn[k] for k in names}
    import torch.fx.traceback as fx_traceback

    # preserve_node_meta() carries fx_traceback.annotate() into node.meta["custom"].
    with fx_traceback.preserve_node_meta():
        ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes)
    torch.export.save(ep, f"{OUT}/{name}.pt2")
    with torch.no_grad():
        out = model(*args)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    save_npy(f"{OUT}/{name}.in", args)
    save_npy(f"{OUT}/{name}.out", outs)
    exp = {
        "torch_version": torch.__version__,
        "symbols": {
            str(s): {"min": int(vr.lower), "max": (int(vr.upper) if vr.upper.is_finite else None)}
            for s, vr in ep.range_constraints.items()
        },
        "ops": {"none": op_hist(ep)},
    }
    # Shapes come from the archive as the app reads it, so reload it first.
    ep_loaded = torch.export.load(f"{OUT}/{name}.pt2")
    exp["shapes"] = expectations(ep_loaded)
    core = ep.run_decompositions()
    torch.export.save(core, f"{OUT}/{name}.core.pt2")
    exp["ops"]["core"] = op_hist(core)
    try:
        from torch._inductor.decomposition import select_decomp_table

        ind = ep.run_decompositions(select_decomp_table())
        torch.export.save(ind, f"{OUT}/{name}.inductor.pt2")
        exp["ops"]["inductor"] = op_hist(ind)
    except Exception as e:  # recorded, not hidden
        exp["inductor_error"] = repr(e)
    with open(f"{OUT}/{name}.expect.json", "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
    print(f"{name}: {len(list(ep.graph.nodes))} fx nodes, symbols {exp['symbols']}")


def write_legacy(name, model, args, dyn):
    """The pre-2.7 `torch.export.save` layout, written with torch's serializer as 2.6's save did."""
    import zipfile

    from torch._export.serde.schema import SCHEMA_VERSION
    from torch._export.serde.serialize import serialize

    torch.manual_seed(0)
    ep = torch.export.export(model.eval(), args, dynamic_shapes=dyn)
    art = serialize(ep)
    with zipfile.ZipFile(f"{OUT}/{name}.legacy.pt2", "w") as z:
        z.writestr("serialized_exported_program.json", art.exported_program)
        z.writestr("serialized_state_dict.pt", art.state_dict)
        z.writestr("serialized_constants.pt", art.constants)
        z.writestr("serialized_example_inputs.pt", art.example_inputs)
        z.writestr("version", ".".join(map(str, SCHEMA_VERSION)))
    print(f"{name}.legacy.pt2 written, schema {SCHEMA_VERSION}")


class Chain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        for i in range(self.n):
            y = x * 0.5
            y = y + 1.0
            y = torch.relu(y)
            y = y - x
            y = torch.sigmoid(y)
            x = x + y
        return x


def main():
    only = [a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")]
    for name, model, args, dyn in models():
        if only and name not in only[0]:
            continue
        try:
            export_one(name, model, args, dyn)
        except Exception:
            print(f"FAILED {name}")
            traceback.print_exc()
    if "--legacy" in sys.argv:
        try:
            write_legacy("mlp", MLP(), (torch.randn(4, 32),), {"x": {0: Dim("batch", min=1, max=1024)}})
        except Exception:
            print("FAILED legacy")
            traceback.print_exc()
    if "--big" in sys.argv:
        try:
            m = Chain(2000)
            ep = torch.export.export(m, (torch.randn(4, 16),), dynamic_shapes={"x": {0: Dim("batch", min=1, max=4096)}})
            torch.export.save(ep, f"{OUT}/big12k.pt2")
            print("big12k:", len(list(ep.graph.nodes)), "fx nodes")
        except Exception:
            print("FAILED big12k")
            traceback.print_exc()


if __name__ == "__main__":
    main()
