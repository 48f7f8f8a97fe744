#!/usr/bin/env python3
"""Export PyTorch's OpInfo sample inputs as tiny graphs, one archive per op, for tests/opinfo.rs.

    python3 scripts/gen_opinfo.py [OUTDIR] [--only=NAME,NAME] [--shard=I/N]
    python3 scripts/gen_opinfo.py --mark=tests/data/opinfo/index.json   (re-derive `check` only)
    python3 scripts/gen_opinfo.py DIR --pick=others --seed=1   (a held-out set: see below)

OUTDIR defaults to tests/data/opinfo. For every OpInfo of
torch.testing._internal.common_methods_invocations.op_db (plus EXTRA below: ops that real graphs
contain but op_db does not test directly) and each dtype of DTYPES the OpInfo supports on CPU, a
few of its sample inputs (float32: the first, the smallest, the highest-rank; other dtypes: the
first) become one case each. `--pick=others` takes, per dtype, up to three small samples the
default pick does not (the second, the middle and the last), and `--seed=S` seeds the sample
generator differently: a held-out set to run with `OPINFO_DIR=DIR cargo test --test opinfo`,
cases nobody tuned the code on:

  OUTDIR/<op>.zip.gz     one archive per op (a stored zip, gzipped), holding for case K
      K.pt2              torch.export.export() of a module calling the op on the sample's
                         tensors (every tensor of the sample is a graph input; numbers,
                         dims and flags are baked in as constants, as in real graphs)
      K.in0.npy ...      the inputs, K.out0.npy ... PyTorch's eager outputs on them
                         (bfloat16 is stored as its uint16 bit pattern: numpy has no bfloat16)
      K.ref0.npy ...     for float16/bfloat16/float32 outputs: PyTorch's outputs with the
                         sample upcast to float64 (test_decomp's reference; index: `refs`)
  OUTDIR/index.json      every case: op, variant, dtype, aten targets of the graph,
                         input/output dtypes and shapes, tolerances (PyTorch's assert_close
                         defaults per dtype); and every case that could not be made, with why.

Ops made with `every=True` (scripts/opinfo_core_aten.py: Core ATen ops that op_db never calls
directly, backward ops among them) turn every sample into a case. With --only, the committed
OUTDIR/index.json is updated in place: the named ops' entries are replaced, every other entry is
written back as it was.

Cases whose outputs differ between two eager runs, complex dtypes and ops with no function variant
are recorded as skipped, not silently dropped. Random ops that OpInfo seeds itself (so two eager
runs agree) and uninitialised tensors (`empty*`, a growing `resize_`) are kept, with a `check` entry saying their
values cannot equal PyTorch's: `{"kind": "random", "support": [lo, hi] | null, "open_hi": bool,
"integral": bool}` (tests/opinfo.rs checks shape, dtype, that every value lies in the support,
and a loose statistic on large samples) or `{"kind": "uninitialized"}` (shape and dtype only).
The support is read from the random node's arguments when that node produces the output; when
the random values flow through other ops first, the support is null (shape and dtype only).
An output whose eager shape contradicts the exported graph's own metadata carries
`{"kind": "metadata_shape", "outputs": [[i, sizes], ...]}`: checked against the metadata's shape.
Eigenvectors and singular vectors (unique up to sign) carry `{"kind": "up_to_sign", "outputs":
[...], "rows": [...]}`: those outputs are compared after aligning each column's (for `rows`:
each row's) sign with PyTorch's. The per-op archives stay small
(the archive's sample_inputs entry, which the importer does not read, is left out).
"""
import gzip
import io
import json
import math
import os
import signal
import sys
import traceback
import warnings
import zipfile

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from case_files import npy_bytes, slim_pt2, write_zip_gz

warnings.filterwarnings("ignore")

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = ARGS[0] if ARGS else "tests/data/opinfo"
ONLY = None
SHARD = (0, 1)
PICK = "default"
SEED = 0
for a in sys.argv[1:]:
    if a.startswith("--pick="):
        PICK = a.split("=", 1)[1]
    if a.startswith("--seed="):
        SEED = int(a.split("=", 1)[1])
    if a.startswith("--only="):
        ONLY = set(a.split("=", 1)[1].split(","))
    if a.startswith("--shard="):
        i, n = a.split("=", 1)[1].split("/")
        SHARD = (int(i), int(n))

torch.manual_seed(SEED)
try:
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
except ModuleNotFoundError as e:
    # torch's test internals import test-only packages a plain torch install lacks (expecttest
    # in 2.11 to 2.15): say which, instead of a traceback through torch.testing.
    sys.exit(f"gen_opinfo.py: torch.testing._internal needs `{e.name}`: pip install {e.name}")
from torch.testing._internal.opinfo.core import OpInfo, SampleInput  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opinfo_core_aten import core_aten_ops  # noqa: E402

# (dtype, how many samples). float32 is the default dtype users meet most: more samples.
DTYPES = [
    (torch.float32, 3),
    (torch.float16, 1),
    (torch.bfloat16, 1),
    (torch.float64, 1),
    (torch.int64, 1),
    (torch.int32, 1),
    (torch.int8, 1),
    (torch.uint8, 1),
    (torch.bool, 1),
]

# torch.testing.assert_close's defaults (torch/testing/_comparison.py).
TOL = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def extra_ops():
    """Non-core ops that export leaves in real graphs and op_db does not cover as such."""
    T = lambda *s, dtype=torch.float32: torch.randn(*s).to(dtype)  # noqa: E731

    def mk(name, fn, samples, dtypes=(torch.float32,), every=False):
        def sample_inputs(op, device, dtype, requires_grad=False, **kw):
            for s in samples(dtype):
                yield s
        if every:
            EVERY_SAMPLE.add(name)
        return OpInfo(name, op=fn, dtypes=dtypes, sample_inputs_func=sample_inputs)

    ints = lambda lo, hi, *s: torch.randint(lo, hi, s)  # noqa: E731
    return [
        mk("x_to_dtype_int64", lambda x: x.to(torch.int64), lambda d: [SampleInput(T(3, 4) * 4)]),
        mk("x_to_dtype_float16", lambda x: x.to(torch.float16), lambda d: [SampleInput(T(3, 4))]),
        mk("x_to_dtype_bool", lambda x: x.to(torch.bool), lambda d: [SampleInput(T(3, 4).round())]),
        mk("x_int_to_float", lambda x: x.float(), lambda d: [SampleInput(ints(-5, 5, 6))]),
        mk("x_embedding", torch.nn.functional.embedding,
           lambda d: [SampleInput(ints(0, 10, 2, 5), args=(T(10, 4),)),
                      SampleInput(ints(0, 10, 7), args=(T(10, 3),), kwargs={"padding_idx": 0})]),
        mk("x_sdpa_bool_mask", torch.nn.functional.scaled_dot_product_attention,
           lambda d: [SampleInput(T(2, 2, 5, 8), args=(T(2, 2, 5, 8), T(2, 2, 5, 8)),
                                  kwargs={"attn_mask": torch.rand(5, 5) > 0.3}),
                      SampleInput(T(1, 2, 4, 8), args=(T(1, 2, 4, 8), T(1, 2, 4, 8)),
                                  kwargs={"attn_mask": torch.rand(1, 1, 4, 4) > 0.5})]),
        mk("x_sdpa_causal", torch.nn.functional.scaled_dot_product_attention,
           lambda d: [SampleInput(T(2, 2, 5, 8), args=(T(2, 2, 5, 8), T(2, 2, 5, 8)), kwargs={"is_causal": True})]),
        mk("x_sdpa_float_mask", torch.nn.functional.scaled_dot_product_attention,
           lambda d: [SampleInput(T(2, 2, 5, 8), args=(T(2, 2, 5, 8), T(2, 2, 5, 8)), kwargs={"attn_mask": T(5, 5)})]),
        mk("x_dropout_eval", lambda x: torch.nn.functional.dropout(x, 0.5, training=False), lambda d: [SampleInput(T(3, 4))]),
        mk("x_relu_", lambda x: torch.relu_(x.clone()), lambda d: [SampleInput(T(3, 4))]),
        mk("x_add_", lambda x, y: x.clone().add_(y), lambda d: [SampleInput(T(3, 4), args=(T(4),))]),
        mk("x_zeros", lambda x: torch.zeros(x.shape[0], 3) + x[:, :1], lambda d: [SampleInput(T(2, 5))]),
        mk("x_new_zeros", lambda x: x.new_zeros(3, 2), lambda d: [SampleInput(T(2, 5))]),
        mk("x_new_ones", lambda x: x.new_ones(3, 2), lambda d: [SampleInput(T(2, 5))]),
        mk("x_new_full", lambda x: x.new_full((3, 2), 7.0), lambda d: [SampleInput(T(2, 5))]),
        mk("x_arange_like", lambda x: torch.arange(x.shape[-1]) * 2, lambda d: [SampleInput(T(2, 5))]),
        mk("x_conv1d", torch.nn.functional.conv1d,
           lambda d: [SampleInput(T(2, 4, 9), args=(T(6, 4, 3), T(6)), kwargs={"padding": 1}),
                      SampleInput(T(1, 4, 10), args=(T(4, 1, 3),), kwargs={"groups": 4, "stride": 2})]),
        mk("x_masked_fill_bool", lambda x, m: x.masked_fill(m, float("-inf")),
           lambda d: [SampleInput(T(3, 4), args=(torch.rand(3, 4) > 0.5,))]),
        mk("x_tril_mask", lambda x: torch.ones(x.shape[-1], x.shape[-1], dtype=torch.bool).tril() & (x > 0),
           lambda d: [SampleInput(T(4, 4))]),
    ] + core_aten_ops(mk, T, ints)


# Names of ops whose every sample becomes a case (the samples are a test matrix written for
# them: strides, paddings, groups, output masks), not only pick()'s first/smallest/highest-rank.
EVERY_SAMPLE = set()


# Random samplers by target: their support from the node's named arguments as
# (lo, hi, open_hi, integral); None where the support is the real line. inf stands for unbounded.
INF = float("inf")
RANDOM = {
    "aten.rand.default": lambda a: (0.0, 1.0, True, False),
    "aten.rand_like.default": lambda a: (0.0, 1.0, True, False),
    "aten.randn.default": lambda a: None,
    "aten.randn_like.default": lambda a: None,
    "aten.randint.default": lambda a: (float(a.get("low", 0)), float(a["high"]), True, True),
    "aten.randint.low": lambda a: (float(a["low"]), float(a["high"]), True, True),
    "aten.randint_like.default": lambda a: (0.0, float(a["high"]), True, True),
    "aten.randint_like.low_dtype": lambda a: (float(a["low"]), float(a["high"]), True, True),
    "aten.randperm.default": lambda a: (0.0, float(a["n"]), True, True),
    "aten.bernoulli.default": lambda a: (0.0, 1.0, False, True),
    "aten.bernoulli.p": lambda a: (0.0, 1.0, False, True),
    "aten.uniform_.default": lambda a: (float(a.get("from", 0.0)), float(a.get("to", 1.0)), True, False),
    "aten.normal_.default": lambda a: None,
    "aten.normal.Tensor_Tensor": lambda a: None,
    "aten.normal.Tensor_float": lambda a: None,
    "aten.normal.float_Tensor": lambda a: None,
    "aten.normal.float_float": lambda a: None,
    "aten.exponential_.default": lambda a: (0.0, INF, False, False),
    "aten.cauchy_.default": lambda a: None,
    "aten.log_normal_.default": lambda a: (0.0, INF, False, False),
    "aten.geometric_.default": lambda a: (1.0, INF, False, True),
    "aten.multinomial.default": lambda a: (0.0, float(a["self.sizes"][-1]), True, True),
    "aten.rrelu.default": lambda a: None,
    "aten.native_dropout.default": lambda a: None,
    "aten.dropout.default": lambda a: None,
    "aten.feature_dropout.default": lambda a: None,
    "aten.alpha_dropout.default": lambda a: None,
    "aten.feature_alpha_dropout.default": lambda a: None,
}
# Samplers that draw only in training: target -> (the bool argument, its default). The
# workbench's registry marks the same ops `.random_if(arg, default)`.
TRAINING = {
    "aten.rrelu.default": ("training", False),
    "aten.native_dropout.default": ("train", True),
    "aten.dropout.default": ("train", False),
    "aten.feature_dropout.default": ("train", False),
    "aten.alpha_dropout.default": ("train", False),
    "aten.feature_alpha_dropout.default": ("train", False),
}
# Decompositions whose vectors are unique only up to sign: target -> the outputs holding one
# vector per column. Their cases compare those outputs after aligning each column's sign with
# PyTorch's (`{"kind": "up_to_sign", "outputs": [graph output indices]}`).
# Outputs holding vectors unique only up to sign: (outputs whose columns are the vectors,
# outputs whose rows are). Singular vectors come in pairs whose signs flip together; LAPACK and
# another SVD may pick either.
SIGN_FREE = {
    "aten.linalg_eigh.default": ([1], []),
    "aten.linalg_svd.default": ([0], [2]),
    "aten.svd.default": ([0, 2], []),
}
UNINITIALIZED = {
    "aten.empty.memory_format", "aten.empty_like.default", "aten.new_empty.default",
    "aten.empty_strided.default", "aten.empty_permuted.default", "aten.new_empty_strided.default",
}
# Ops that leave the elements past their input's uninitialised when they grow it.
GROWING = {"aten.resize_.default", "aten.resize_as_.default"}


def numel_of(graph, name):
    """Elements of a tensor value whose sizes the archive records as ints, else None."""
    sizes = [d.get("as_int") for d in graph["tensor_values"].get(name, {}).get("sizes", [None])]
    return None if None in sizes else math.prod(sizes)


def grows(graph, node):
    """Whether a GROWING node's output holds more elements than its input (unknown: yes)."""
    src = next((i["arg"]["as_tensor"]["name"] for i in node["inputs"] if i["name"] == "self" and "as_tensor" in i["arg"]), None)
    outs = [o.get("as_tensor", {}).get("name") for o in node["outputs"]]
    before, after = numel_of(graph, src), numel_of(graph, outs[0]) if outs else None
    return before is None or after is None or after > before


def graph_json(pt2):
    """The serialized graph of a (slim) .pt2 archive."""
    z = zipfile.ZipFile(io.BytesIO(pt2))
    name = next(n for n in z.namelist() if n.endswith(".json") and "/models/" in n and "model" in os.path.basename(n))
    return json.loads(z.read(name))["graph_module"]["graph"]


def named_args(graph, node):
    """A node's scalar arguments by schema name (what the archive recorded: ints, floats,
    bools), and a tensor argument's sizes as `name.sizes`."""
    out = {}
    for i in node["inputs"]:
        arg = i["arg"]
        for kind in ("as_int", "as_float", "as_bool"):
            if kind in arg:
                out[i["name"]] = arg[kind]
        if "as_tensor" in arg:
            meta = graph["tensor_values"].get(arg["as_tensor"]["name"], {})
            out[i["name"] + ".sizes"] = [d.get("as_int") for d in meta.get("sizes", [])]
    return out


def metadata_check(pt2, eager_shapes):
    """`{"kind": "metadata_shape", "outputs": [[i, sizes], ...]}` when eager's output `i` has
    another shape than the exported graph's own metadata records for it (CPU `_embedding_bag`
    returns an empty `offset2bag` for bfloat16 where its meta function says one entry per
    index): no backend can match both, and compiled code follows the metadata, so those outputs
    are checked against the metadata's shape (values cannot be compared). None otherwise."""
    g = graph_json(pt2)
    names = [o["as_tensor"]["name"] for o in g["outputs"] if "as_tensor" in o]
    if len(names) != len(g["outputs"]) or len(names) != len(eager_shapes):
        return None
    wrong = []
    for i, (n, eager) in enumerate(zip(names, eager_shapes)):
        sizes = [d.get("as_int") for d in g["tensor_values"].get(n, {}).get("sizes", [{}])]
        if None not in sizes and sizes != list(eager):
            wrong.append([i, sizes])
    return {"kind": "metadata_shape", "outputs": wrong} if wrong else None


def check_of(pt2):
    """The `check` rule of a case whose values cannot equal PyTorch's, or None."""
    g = graph_json(pt2)
    name = lambda n: n["target"].replace("torch.ops.", "")  # noqa: E731
    nodes = g["nodes"]
    graph_outs = [o.get("as_tensor", {}).get("name") for o in g["outputs"]]
    produced_by = lambda n: [o.get("as_tensor", {}).get("name") for o in n["outputs"]]  # noqa: E731
    # Uninitialised memory only matters where it is an output; consumers that overwrite it
    # (window functions fill an `empty`) still have exact values.
    if any(name(n) in UNINITIALIZED and set(produced_by(n)) & set(graph_outs) for n in nodes):
        return {"kind": "uninitialized"}
    if any(name(n) in GROWING and set(produced_by(n)) & set(graph_outs) and grows(g, n) for n in nodes):
        return {"kind": "uninitialized"}
    for n in nodes:
        if name(n) in SIGN_FREE:
            outs = produced_by(n)
            cols, rows = ({outs[i] for i in which if i < len(outs)} for which in SIGN_FREE[name(n)])
            idx = [i for i, o in enumerate(graph_outs) if o in cols]
            by_row = [i for i, o in enumerate(graph_outs) if o in rows]
            if idx or by_row:
                rec = {"kind": "up_to_sign", "outputs": idx}
                if by_row:
                    rec["rows"] = by_row
                return rec
    def draws(n):
        arg, default = TRAINING.get(name(n), (None, True))
        return arg is None or named_args(g, n).get(arg, default)

    rand = [n for n in nodes if name(n) in RANDOM and draws(n)]
    if not rand:
        return None
    rec = {"kind": "random", "support": None, "open_hi": False, "integral": False}
    produced = produced_by(rand[0])
    # Only when the sampler's result is the graph's output is its support the output's.
    if len(rand) == 1 and graph_outs == produced:
        support = RANDOM[name(rand[0])](named_args(g, rand[0]))
        if support is not None:
            lo, hi, open_hi, integral = support
            rec.update({"support": [lo, hi if hi != INF else None], "open_hi": open_hi, "integral": integral})
    return rec


def mark(index_path):
    """Re-derives every case's `check` from its committed graph (no sampling, no eager runs)."""
    index = json.load(open(index_path))
    root = os.path.dirname(index_path)
    archive = (None, None)
    for c in index["cases"]:
        if archive[0] != c["file"]:
            raw = gzip.decompress(open(os.path.join(root, c["file"]), "rb").read())
            archive = (c["file"], zipfile.ZipFile(io.BytesIO(raw)))
        pt2 = archive[1].read(f"{c['case']}.pt2")
        chk = check_of(pt2) or metadata_check(pt2, [shape for _, shape in c["outputs"]])
        c.pop("check", None)
        if chk:
            c["check"] = chk
    with open(index_path, "w") as f:
        json.dump(index, f, indent=0)


def dtype_name(d):
    return str(d).replace("torch.", "")


MAX_NUMEL = 4096


class Timeout(Exception):
    pass


def on_alarm(*_):
    raise Timeout("timed out")


signal.signal(signal.SIGALRM, on_alarm)


def pick(samples, n):
    """The first sample, then the smallest and the highest-rank, without repeats."""
    if not samples:
        return []
    def numel(s):
        ts = [t for t in tree_flatten((s.input, s.args, s.kwargs))[0] if isinstance(t, torch.Tensor)]
        return sum(t.numel() for t in ts)
    def rank(s):
        ts = [t for t in tree_flatten((s.input, s.args, s.kwargs))[0] if isinstance(t, torch.Tensor)]
        return max((t.ndim for t in ts), default=0)
    # Big samples (some interpolate ones hold 10^5 elements) would dominate the committed data.
    small = [i for i in range(len(samples)) if numel(samples[i]) <= MAX_NUMEL]
    smallest = min(range(len(samples)), key=lambda i: numel(samples[i]))
    order = [small[0] if small else smallest]
    if n > 1:
        order.append(smallest)
        if small:
            order.append(max(small, key=lambda i: (rank(samples[i]), -i)))
    out = []
    for i in order:
        if i not in out:
            out.append(i)
    return [(i, samples[i]) for i in out[:n]]


def pick_others(samples, n):
    """Up to three small samples `pick` leaves out: the second, the middle and the last."""
    taken = {i for i, _ in pick(samples, n)}
    def numel(s):
        return sum(t.numel() for t in tree_flatten((s.input, s.args, s.kwargs))[0] if isinstance(t, torch.Tensor))
    rest = [i for i in range(len(samples)) if i not in taken and numel(samples[i]) <= MAX_NUMEL]
    out = []
    for i in (rest[:1] + rest[len(rest) // 2:len(rest) // 2 + 1] + rest[-1:]):
        if i not in out:
            out.append(i)
    return [(i, samples[i]) for i in out]


def outputs_of(fn, leaves, spec, tensor_idx, ts, clone=True):
    ls = list(leaves)
    for i, t in zip(tensor_idx, ts):
        ls[i] = t.clone() if clone else t
    inp, args, kwargs = tree_unflatten(ls, spec)
    return fn(inp, *args, **kwargs)


def flat_outputs(out):
    flat, _ = tree_flatten(out)
    res = []
    for x in flat:
        if isinstance(x, torch.Tensor):
            res.append(x)
        elif isinstance(x, (bool, int, float)):
            res.append(torch.tensor(x))
        elif x is None:
            continue
        else:
            raise TypeError(f"output of type {type(x).__name__}")
    return res


# Output dtypes that get a float64 reference (K.refI.npy): PyTorch's own kernels round at steps
# of their own choosing in these, so a backend that rounds elsewhere can differ from eager by a
# few units in the last place while being as close to the exact answer (see tests/opinfo.rs).
REFERENCED = (torch.float16, torch.bfloat16, torch.float32)


def upcast(x):
    """test_decomp's upcast: floating tensors and low-precision dtype arguments to float64."""
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(torch.float64)
    if isinstance(x, torch.dtype) and x in REFERENCED:
        return torch.float64
    return x


def references(fn, leaves, spec, tensor_idx, ts, outs):
    """PyTorch's outputs for the same sample computed in float64, as PyTorch's test_decomp
    computes its reference for low-precision dtypes: {output index: float64 tensor} for each
    output of a REFERENCED dtype whose float64 twin has the same shape. Empty when the op does
    not run in float64 or gives other outputs there."""
    if not any(o.dtype in REFERENCED for o in outs):
        return {}
    try:
        torch.manual_seed(0)
        ref = flat_outputs(outputs_of(fn, [upcast(x) for x in leaves], spec, tensor_idx, [upcast(t) for t in ts]))
    except Exception:  # noqa: BLE001
        return {}
    if len(ref) != len(outs):
        return {}
    return {i: r.to(torch.float64) for i, (o, r) in enumerate(zip(outs, ref))
            if o.dtype in REFERENCED and r.is_floating_point() and r.shape == o.shape}


def make_case(op, sample, dtype):
    fn = op.op
    leaves, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
    tensor_idx = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    ts = [leaves[i].detach().contiguous() for i in tensor_idx]
    if any(t.is_complex() for t in ts):
        raise TypeError("complex input")
    torch.manual_seed(0)
    out1 = flat_outputs(outputs_of(fn, leaves, spec, tensor_idx, ts))
    torch.manual_seed(1)
    out2 = flat_outputs(outputs_of(fn, leaves, spec, tensor_idx, ts))
    if any(o.is_complex() for o in out1):
        raise TypeError("complex output")
    if not out1:
        raise TypeError("no tensor outputs")
    same = len(out1) == len(out2) and all(
        a.shape == b.shape and torch.equal(torch.nan_to_num(a.float() if a.dtype == torch.bfloat16 else a, nan=0.0),
                                           torch.nan_to_num(b.float() if b.dtype == torch.bfloat16 else b, nan=0.0))
        for a, b in zip(out1, out2))

    class Case(torch.nn.Module):
        def forward(self, *xs):
            return outputs_of(fn, leaves, spec, tensor_idx, xs, clone=False)

    ep = torch.export.export(Case(), tuple(ts), strict=False)
    # The exported program must accept its own sample: export can record a runtime assertion
    # eager does not honour (masked_select with a broadcast mask bounds its output by the
    # input's numel), and no backend should be asked to pass what PyTorch itself rejects.
    try:
        torch.manual_seed(0)
        ep.module()(*[t.clone() for t in ts])
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
        raise TypeError(f"the exported program rejects its own sample: {type(e).__name__}: {msg}") from e
    targets = sorted({str(n.target).replace("torch.ops.", "") if not callable(n.target) or hasattr(n.target, "_schema") else
                      f"{getattr(n.target, '__module__', '')}.{getattr(n.target, '__name__', str(n.target))}"
                      for n in ep.graph.nodes if n.op == "call_function"})
    # A sampler's outputs differ between seeds: its case is kept and compared by its `check`
    # rule (check_of); any other op must give the same outputs twice.
    if not same and not set(targets) & set(RANDOM):
        raise TypeError("nondeterministic (outputs differ between two eager runs)")
    refs = {} if set(targets) & set(RANDOM) else references(fn, leaves, spec, tensor_idx, ts, out1)
    return ep, ts, out1, targets, refs


def main():
    marks = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--mark=")]
    if marks:
        mark(marks[0])
        return
    os.makedirs(OUT, exist_ok=True)
    ops = list(op_db) + extra_ops()
    index_path = os.path.join(OUT, "index.json" if SHARD[1] == 1 else f"index.{SHARD[0]}.json")
    index = {"torch": torch.__version__, "cases": [], "skipped": []}
    seen = {}
    for k, op in enumerate(ops):
        if k % SHARD[1] != SHARD[0]:
            continue
        name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        if ONLY and name not in ONLY and op.name not in ONLY:
            continue
        if op.op is None:
            index["skipped"].append({"op": name, "why": "no function variant"})
            continue
        fname = name.replace("/", "_")
        seen[fname] = seen.get(fname, 0) + 1
        if seen[fname] > 1:
            fname += f"_{seen[fname]}"
        entries = {}
        n_case = 0
        try:
            supported = op.supported_dtypes("cpu")
        except Exception as e:  # noqa: BLE001
            index["skipped"].append({"op": name, "why": f"supported_dtypes: {e}"})
            continue
        for dtype, n in DTYPES:
            if dtype not in supported:
                continue
            try:
                signal.alarm(30)
                samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
                signal.alarm(0)
            except Exception as e:  # noqa: BLE001
                signal.alarm(0)
                index["skipped"].append({"op": name, "dtype": dtype_name(dtype), "why": f"sample_inputs: {type(e).__name__}: {str(e)[:200]}"})
                continue
            if name in EVERY_SAMPLE:
                chosen = list(enumerate(samples))
            else:
                chosen = pick_others(samples, n) if PICK == "others" else pick(samples, n)
            for si, s in chosen:
                rec = {"op": name, "opinfo": op.name, "sample": si, "dtype": dtype_name(dtype)}
                try:
                    signal.alarm(30)
                    ep, ts, outs, targets, refs = make_case(op, s, dtype)
                    if sum(t.numel() for t in ts + outs) > 6 * MAX_NUMEL:
                        raise TypeError(f"too big to commit ({sum(t.numel() for t in ts + outs)} elements)")
                    pt2 = slim_pt2(ep)
                    signal.alarm(0)
                except Exception as e:  # noqa: BLE001
                    signal.alarm(0)
                    msg = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
                    rec["why"] = f"{type(e).__name__}: {msg}"
                    index["skipped"].append(rec)
                    continue
                case = n_case
                n_case += 1
                entries[f"{case}.pt2"] = pt2
                for i, t in enumerate(ts):
                    entries[f"{case}.in{i}.npy"] = npy_bytes(t)
                for i, t in enumerate(outs):
                    entries[f"{case}.out{i}.npy"] = npy_bytes(t)
                for i, t in refs.items():
                    entries[f"{case}.ref{i}.npy"] = npy_bytes(t)
                rtol, atol = TOL.get(dtype, (0.0, 0.0))
                out_tols = [TOL.get(o.dtype, (0.0, 0.0)) for o in outs]
                chk = check_of(pt2) or metadata_check(pt2, [list(t.shape) for t in outs])
                if chk:
                    rec["check"] = chk
                rec.update({
                    "file": f"{fname}.zip.gz",
                    "case": case,
                    "targets": targets,
                    "inputs": [[dtype_name(t.dtype), list(t.shape)] for t in ts],
                    "outputs": [[dtype_name(t.dtype), list(t.shape)] for t in outs],
                    "rtol": [t[0] for t in out_tols],
                    "atol": [t[1] for t in out_tols],
                })
                if refs:
                    rec["refs"] = sorted(refs)
                index["cases"].append(rec)
        if entries:
            write_zip_gz(os.path.join(OUT, f"{fname}.zip.gz"), entries)
        print(f"{name}: {n_case} cases", flush=True)
    if ONLY and SHARD[1] == 1 and os.path.exists(index_path):
        index = merged(json.load(open(index_path)), index)
    with open(index_path, "w") as f:
        json.dump(index, f, indent=0)


def merged(old, new):
    """`old` (the committed index) with the cases and skips of the ops `new` regenerated
    replaced by `new`'s, appended after the others: every other entry stays as it was."""
    redone = {c["op"] for c in new["cases"] + new["skipped"]}
    keep = lambda entries: [e for e in entries if e.get("op") not in redone]  # noqa: E731
    return {"torch": old["torch"], "cases": keep(old["cases"]) + new["cases"], "skipped": keep(old["skipped"]) + new["skipped"]}


if __name__ == "__main__":
    main()
