#!/usr/bin/env python3
"""A generated model corpus: every transformers / torchvision / timm architecture, tiny (issue 25).

    python3 scripts/gen_corpus.py OUT [--family transformers,torchvision,timm] [--only ID_OR_NAME,..]
                                      [--limit N] [--jobs N] [--timeout S] [--stages build,export,compile]
                                      [--devices cpu,cuda] [--modes default,lite] [--phases eval,train]
                                      [--max-params N] [--max-params-vision N] [--timm-families N] [--resume]

Architectures are enumerated, not listed (scripts/corpus_models.py says how, and how each is shrunk):
every model type of transformers' CONFIG_MAPPING_NAMES with its config shrunk by attribute name
(hidden 64, 2 layers, 4 heads, vocab 128 …), every torchvision builder, and per timm family its
smallest variant. Sorted, seeds fixed, nothing downloaded (HF_HUB_OFFLINE=1).

Each architecture runs in a child process with a limit of --timeout seconds per stage; a hang or a
crash there is recorded and the run goes on. Build and export run in a reused worker process
(killed and replaced on a timeout or a crash, and every 40 architectures); each compile runs in a
fresh process of its own, because TORCH_TRACE is read when torch is imported. Stages:
  build     config/constructor, random init, eager forward on generated inputs
            (skipped, with the reason, when it cannot be built or run or has too many parameters)
  export    torch.export.export with Dim.AUTO on batch (and sequence for text), static when that
            fails (`export_mode`); the zoo's files through scripts/corpus_expect.py
  compile   torch.compile(dynamic=True) per device (cpu; cuda when available), mode (default,
            "lite") and phase (eval: no_grad forward; train: train mode, forward and backward of
            the sum of the outputs), each on both bindings, with TORCH_TRACE on
A stage's status is ok, skipped, torch_failed (torch raised: type and first line), timeout or
crashed (the process died).

OUT/torch-<major.minor>/ gets
  ID.pt2, ID.b{0,1}.in{i}.npy, ID.b{0,1}.out{i}.npy, ID.expect.json   as samples/zoo (tests/zoo.rs)
  ID.<device>_<mode>_<phase>.log.gz      the TORCH_TRACE log of one compile
  ID.<device>_<mode>_<phase>.truth.json  what torch did in it, from the log (scripts/corpus_truth.py):
                                         {aot: {forward|backward|inference: {op: n}},
                                          output_code: {op or extern_kernels.NAME: n}, graphs: {kind: n}}
  versions.json    {torch, schema, models: exported ids, failed: ids whose export failed}
  manifest.json    {torch, transformers, torchvision, timm, architectures: {ID: {
                     id, key (family:name), family, source (e.g. transformers:LlamaForCausalLM), task,
                     overrides (config path: [default, applied] or constructor kwargs), params,
                     input {name: [shape, dtype]} of binding 1, dynamic_dims {input: {dim: symbol}},
                     export_mode (auto|static), stages {build|export|<dev>_<mode>_<phase>:
                     {status, seconds, error?, …}}, artifacts [file names]}}}
                   export adds export_note (why static), pt2_bytes, ops {none|core|inductor: nodes},
                   binding0 (generated | binding 1 cut to batch 2 | binding 1: the first that lies in
                   the symbols' ranges and that the exported module accepts); a compile adds
                   build_seconds and compile_seconds (both bindings, forward or forward+backward)
  logs/            the workers' stderr
Ids: hf_<model type>_<task>, tv_<builder>, timm_<variant>; an HF type that never finished its build
is hf_<model type>. A rerun with --only or --stages updates the manifest's entries in place.
"""
import argparse
import gzip
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
FAMILIES = ["transformers", "torchvision", "timm"]
WORKER_RECYCLE = 40


def child_env(extra=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TORCHINDUCTOR_COMPILE_THREADS="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TRANSFORMERS_VERBOSITY="error",
               TOKENIZERS_PARALLELISM="false", PYTHONWARNINGS="ignore")
    env.update(extra or {})
    return env


def err_line(e):
    s = str(e).strip()
    return f"{type(e).__name__}: {s.splitlines()[0][:300] if s else ''}"


# --------------------------------------------------------------------------- child side


def child_setup():
    import torch

    torch.set_num_threads(1)
    return torch


def export_stage(aid, built, outdir):
    """Exports, picks binding 0 legal for the exported program, writes the zoo's files."""
    import torch
    from torch.export import Dim

    from corpus_expect import save_export

    model, args1 = built.model, built.inputs(1)
    dyn = {n: {d: Dim.AUTO for d in built.dyn.get(n, [])} for n in built.names}
    note, mode = None, "auto"
    with torch.no_grad():
        try:
            ep = torch.export.export(model, args1, dynamic_shapes=dyn)
        except Exception as e:
            note, mode = "static after Dim.AUTO: " + err_line(e), "static"
            ep = torch.export.export(model, args1)
    user = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    phs = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    dims = {}
    for name, ph in zip(built.names, user):
        for d, s in enumerate(phs[ph].meta["val"].shape):
            if isinstance(s, torch.SymInt):
                dims.setdefault(name, {})[str(d)] = str(s.node.expr)
    # Binding 0: the smaller generated inputs, else binding 1's cut to batch 2, else binding 1; one
    # whose values lie in the symbols' ranges (the unlifted module's own check lets a batch of 1
    # through a Dim.AUTO range [2, oo]) and that the exported module accepts.
    cands = [built.inputs(0), tuple(a[:2] for a in args1), args1]
    args0 = args1
    for c in cands:
        try:
            if not in_ranges(ep, c):
                continue
            with torch.no_grad():
                ep.module()(*c)
            args0 = c
            break
        except Exception:
            continue
    exp, size = save_export(outdir, aid, built.info["source"], model, ep, [args0, args1], note)
    files = [f"{aid}.pt2", f"{aid}.expect.json"]
    for b in (0, 1):
        files += [f"{aid}.b{b}.in{i}.npy" for i in range(len(args1))]
        files += [f"{aid}.b{b}.out{i}.npy" for i in range(count_npy(outdir, aid, b))]
    return {"export_mode": mode, "dynamic_dims": dims, "export_note": note, "pt2_bytes": size,
            "ops": {k: sum(v.values()) for k, v in exp["ops"].items()}, "artifacts": files,
            "binding0": ["generated", "binding 1 cut to batch 2", "binding 1"][
                next(i for i, c in enumerate(cands) if c is args0)]}


def in_ranges(ep, args):
    from corpus_expect import binding_of, bound

    ranges = {str(k): v for k, v in ep.range_constraints.items()}
    for sym, val in binding_of(ep, args).items():
        lo, hi = bound(ranges[sym].lower), bound(ranges[sym].upper)
        if (lo is not None and val < lo) or (hi is not None and val > hi):
            return False
    return True


def count_npy(outdir, aid, b):
    i = 0
    while os.path.exists(f"{outdir}/{aid}.b{b}.out{i}.npy"):
        i += 1
    return i


def worker_main():
    """Serves requests (JSON lines on stdin) and answers with `CORPUS {json}` lines on its own stdout;
    everything else the process prints goes to stderr."""
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def say(obj):
        proto.write("CORPUS " + json.dumps(obj) + "\n")
        proto.flush()

    torch = child_setup()
    import corpus_models as cm

    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "timm_select":
            say({"timm": cm.timm_select(req.get("max_families"))})
            continue
        arch, t = req["arch"], time.time()
        try:
            aid, built = cm.build(arch, req["limits"])
            say({"stage": "build", "status": "ok", "seconds": round(time.time() - t, 2), "id": aid, **built.info})
        except cm.Skip as e:
            say({"stage": "build", "status": "skipped", "seconds": round(time.time() - t, 2), "error": str(e)})
            continue
        except Exception as e:
            traceback.print_exc()
            say({"stage": "build", "status": "skipped", "seconds": round(time.time() - t, 2),
                 "error": "build: " + err_line(e)})
            continue
        if "export" in req["stages"]:
            t = time.time()
            try:
                r = export_stage(aid, built, req["outdir"])
                say({"stage": "export", "status": "ok", "seconds": round(time.time() - t, 2), **r})
            except Exception as e:
                traceback.print_exc()
                say({"stage": "export", "status": "torch_failed", "seconds": round(time.time() - t, 2),
                     "error": err_line(e)})
        torch._dynamo.reset()


def compile_main(spec):
    """One torch.compile run; prints `CORPUS_RESULT {json}` last."""
    torch = child_setup()
    import corpus_models as cm

    dev, mode, phase = spec["device"], spec["mode"], spec["phase"]
    res = {}
    try:
        t = time.time()
        _, built = cm.build(spec["arch"], spec["limits"])
        res["build_seconds"] = round(time.time() - t, 2)
        model = built.model.to(dev)
        model.train(phase == "train")
        kw = {"dynamic": True} if mode == "default" else {"dynamic": True, "mode": mode}
        fn = torch.compile(model, **kw)
        t = time.time()
        for i in (0, 1):
            cm.seed()
            args = tuple(a.to(dev) for a in built.inputs(i))
            if phase == "eval":
                with torch.no_grad():
                    fn(*args)
            else:
                out = fn(*args)
                outs = out if isinstance(out, tuple) else (out,)
                sum(o.float().sum() for o in outs if o.is_floating_point() or o.is_complex()).backward()
        if dev == "cuda":
            torch.cuda.synchronize()
        res.update(status="ok", compile_seconds=round(time.time() - t, 2))
    except cm.Skip as e:
        res.update(status="skipped", error=str(e))
    except Exception as e:
        traceback.print_exc()
        res.update(status="torch_failed", error=err_line(e))
    print("CORPUS_RESULT " + json.dumps(res), flush=True)


# --------------------------------------------------------------------------- parent side


class Worker:
    """A build/export child process; `get` waits for its next answer at most `timeout` seconds."""

    def __init__(self, log):
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=log, text=True, env=child_env(),
                                  start_new_session=True)
        self.q, self.served = queue.Queue(), 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            if line.startswith("CORPUS "):
                self.q.put(json.loads(line[7:]))
        self.q.put(None)

    def send(self, req):
        self.served += 1
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()

    def get(self, timeout):
        """An answer, or "timeout", or "crashed"."""
        try:
            r = self.q.get(timeout=timeout)
        except queue.Empty:
            return "timeout"
        return "crashed" if r is None else r

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


def run_compile(arch, aid, dev, mode, phase, opts, outdir):
    """One compile in a fresh process (own TORCH_TRACE dir and Inductor cache); keeps the log gzipped
    and its truth.json; returns the stage record."""
    import corpus_truth

    tag = f"{dev}_{mode}_{phase}"
    tdir, cache = tempfile.mkdtemp(prefix="corpus_tt_"), tempfile.mkdtemp(prefix="corpus_cache_")
    env = child_env({"TORCH_TRACE": tdir, "TORCHINDUCTOR_CACHE_DIR": cache, "INDUCTOR_PROVENANCE": "1"})
    spec = {"arch": arch, "device": dev, "mode": mode, "phase": phase, "limits": opts.limits}
    t = time.time()
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--compile-child", json.dumps(spec)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=opts.timeout)
        res = next((json.loads(l[14:]) for l in reversed(out.splitlines()) if l.startswith("CORPUS_RESULT ")), None)
        if res is None:
            res = {"status": "crashed", "error": f"exit {p.returncode}: " + (out.strip().splitlines() or [""])[-1][:300]}
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        res = {"status": "timeout", "error": f"> {opts.timeout} s"}
    res["seconds"] = round(time.time() - t, 2)
    logs = sorted((os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith(".log")), key=os.path.getsize)
    if logs and res["status"] != "timeout":  # a cut log would pass for a whole one
        text = open(logs[-1], errors="replace").read()
        with gzip.open(f"{outdir}/{aid}.{tag}.log.gz", "wt", compresslevel=6) as f:
            f.write(text)
        with open(f"{outdir}/{aid}.{tag}.truth.json", "w") as f:
            json.dump({"id": aid, "device": dev, "mode": mode, "phase": phase, "status": res["status"],
                       **corpus_truth.truth(text)}, f, indent=0, sort_keys=True)
        res["files"] = [f"{aid}.{tag}.log.gz", f"{aid}.{tag}.truth.json"]
    shutil.rmtree(tdir, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return tag, res


class Run:
    def __init__(self, opts, outdir, manifest):
        self.opts, self.outdir, self.m = opts, outdir, manifest
        self.lock = threading.Lock()
        self.by_key = {e["key"]: aid for aid, e in manifest["architectures"].items()}

    def entry(self, arch):
        key = f"{arch['family']}:{arch['name']}"
        with self.lock:
            aid = self.by_key.get(key)
            return dict(self.m["architectures"].get(aid, {})) if aid else {}

    def store(self, e):
        with self.lock:
            old = self.by_key.get(e["key"])
            if old and old != e["id"]:
                self.m["architectures"].pop(old, None)
            self.by_key[e["key"]] = e["id"]
            self.m["architectures"][e["id"]] = e
            self.save()

    def save(self):
        archs = self.m["architectures"]
        self.m["architectures"] = dict(sorted(archs.items()))
        tmp = f"{self.outdir}/manifest.json.tmp"
        with open(tmp, "w") as f:
            json.dump(self.m, f, indent=1)
        os.replace(tmp, f"{self.outdir}/manifest.json")
        from corpus_expect import schema_version

        ok = sorted(a for a, e in archs.items() if e["stages"].get("export", {}).get("status") == "ok")
        bad = sorted(a for a, e in archs.items()
                     if e["stages"].get("export", {}).get("status") in ("torch_failed", "timeout", "crashed"))
        with open(f"{self.outdir}/versions.json", "w") as f:
            json.dump({"torch": self.m["torch"], "schema": schema_version(), "models": ok, "failed": bad}, f, indent=1)

    def one(self, arch, worker_box, log):
        o = self.opts
        e = self.entry(arch)
        e.setdefault("stages", {})
        e.update(key=f"{arch['family']}:{arch['name']}", family=arch["family"])
        e.setdefault("id", arch["id"])
        if {"build", "export"} & set(o.stages):
            w = worker_box[0]
            if w is None or w.served >= WORKER_RECYCLE or w.p.poll() is not None:
                if w:
                    w.kill()
                w = worker_box[0] = Worker(log)
            w.send({"op": "export", "arch": arch, "limits": o.limits, "outdir": self.outdir, "stages": o.stages})
            for stage in ["build"] + (["export"] if "export" in o.stages else []):
                r = w.get(o.timeout + (60 if w.served == 1 else 0))  # the first answer pays the imports
                if isinstance(r, str):
                    e["stages"][stage] = {"status": r, "seconds": o.timeout, "error": f"worker {r}"}
                    w.kill()
                    worker_box[0] = None
                    break
                r.pop("stage")
                if stage == "build":
                    if "id" in r:
                        e["id"] = r.pop("id")
                    for k in ("source", "task", "overrides", "params", "input", "config_build", "timm_family"):
                        if k in r:
                            e[k] = r.pop(k)
                    e["stages"] = {"build": r}
                    if r["status"] != "ok":
                        break
                else:
                    for k in ("export_mode", "dynamic_dims", "artifacts"):
                        e[k] = r.pop(k, None)
                    e["stages"]["export"] = r
        if "compile" in o.stages and e["stages"].get("build", {}).get("status", "ok") == "ok":
            files = [f for f in e.get("artifacts") or [] if not f.endswith((".log.gz", ".truth.json"))]
            for dev in o.devices:
                for mode in o.modes:
                    for phase in o.phases:
                        tag, r = run_compile(arch, e["id"], dev, mode, phase, o, self.outdir)
                        files += r.pop("files", [])
                        e["stages"][tag] = r
                        print(f"  {e['id']} {tag}: {r['status']} {r['seconds']} s {r.get('error', '')[:120]}", flush=True)
            e["artifacts"] = files
        self.store(e)
        st = e["stages"]
        print(f"{e['id']}: " + ", ".join(f"{k} {v['status']} {v.get('seconds', 0)}s" for k, v in st.items())
              + (f"  [{st.get('build', {}).get('error', '') or st.get('export', {}).get('error', '')}]"[:200]
                 if any(v["status"] != "ok" for v in st.values()) else ""), flush=True)


def enumerate_archs(opts, outdir):
    import corpus_models as cm

    archs = []
    if "transformers" in opts.family:
        try:
            from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

            archs += [{"id": f"hf_{cm.safe_id(t)}", "family": "transformers", "name": t} for t in sorted(CONFIG_MAPPING_NAMES)]
        except ImportError as e:
            print(f"family transformers skipped: {e}")
    if "torchvision" in opts.family:
        try:
            archs += cm.tv_list()
        except ImportError as e:
            print(f"family torchvision skipped: {e}")
    return archs


def enumerate_timm(opts, outdir):
    """timm's selection builds every variant on meta (minutes): cached in timm_select.json."""
    archs = []
    if "timm" in opts.family:
        try:
            import timm

            cache = f"{outdir}/timm_select.json"
            sel = json.load(open(cache)) if os.path.exists(cache) else {}
            if sel.get("timm") != timm.__version__ or sel.get("max_families") != opts.timm_families:
                t = time.time()
                with open(f"{outdir}/logs/timm_select.log", "a") as log:
                    w = Worker(log)
                    w.send({"op": "timm_select", "max_families": opts.timm_families})
                    r = w.get(3600)
                    w.kill()
                if isinstance(r, str):
                    raise ImportError(f"timm selection {r}")
                sel = {"timm": timm.__version__, "max_families": opts.timm_families, "archs": r["timm"],
                       "seconds": round(time.time() - t, 1)}
                json.dump(sel, open(cache, "w"), indent=1)
                print(f"timm: {len(sel['archs'])} families selected in {sel['seconds']} s", flush=True)
            archs += sel["archs"]
        except ImportError as e:
            print(f"family timm skipped: {e}")
    return archs


def done(e, o):
    """--resume: the entry has a result for every stage asked for (a skipped build is tried again:
    the shrinking rules may have learnt something)."""
    st = e.get("stages", {})
    if not st or st.get("build", {}).get("status") != "ok":
        return False
    if "export" in o.stages and st.get("export", {}).get("status") == "ok" and not bindings_in_range(o, e["id"]):
        return False
    want = [s for s in ("export",) if s in o.stages]
    want += [f"{d}_{m}_{p}" for d in o.devices for m in o.modes for p in o.phases] if "compile" in o.stages else []
    return all(w in st for w in want)


def bindings_in_range(o, aid):
    """Whether every binding of ID.expect.json lies in its symbols' ranges (before in_ranges was
    checked, a batch of 1 was kept against Dim.AUTO's [2, oo])."""
    try:
        exp = json.load(open(f"{o.outdir}/{aid}.expect.json"))
    except (OSError, ValueError):
        return False
    for b in exp["bindings"]:
        for sym, v in b["bindings"].items():
            r = exp["symbols"].get(sym, {})
            if (r.get("min") is not None and v < r["min"]) or (r.get("max") is not None and v > r["max"]):
                return False
    return True


def reason(err):
    """An error without what names one architecture (class names, numbers), so that alike ones count together."""
    err = (err or "").split(" ; ")[0].split(" | ")[0]
    err = re.sub(r"^[\w.]+(\([^)]*\))?: (build: |eager forward: )?", "", err)
    err = re.sub(r"\b[A-Z]\w*(Model|Config|ForCausalLM|Encoder|Decoder)\b", "<class>", err)
    return re.sub(r"\d+", "N", err)[:110]


def summary(m, archs):
    rows, fails = {}, Counter()
    tags = sorted({t for e in m["architectures"].values() for t in e["stages"] if t not in ("build", "export")})
    keys = {f"{a['family']}:{a['name']}" for a in archs}
    for e in m["architectures"].values():
        if e["key"] not in keys:
            continue
        r = rows.setdefault(e["family"], Counter())
        r["tried"] += 1
        for t, s in e["stages"].items():
            r[f"{t} {s['status']}"] += 1
            if s["status"] not in ("ok",):
                fails[(t if t in ("build", "export") else "compile", s["status"], reason(s.get("error")))] += 1
        if e["stages"].get("export", {}).get("status") == "ok":
            r[f"export {e.get('export_mode')}"] += 1
    cols = ["tried", "build ok", "build skipped", "export ok", "export auto", "export static", "export torch_failed",
            "export timeout"] + [f"{t} ok" for t in tags]
    print("\n" + "family".ljust(13) + "".join(c.replace(" ", ":").rjust(max(len(c) + 1, 8)) for c in cols))
    total = Counter()
    for fam in sorted(rows):
        total.update(rows[fam])
        print(fam.ljust(13) + "".join(str(rows[fam][c]).rjust(max(len(c) + 1, 8)) for c in cols))
    print("total".ljust(13) + "".join(str(total[c]).rjust(max(len(c) + 1, 8)) for c in cols))
    print("\nmost common failures and skips (stage, status, reason):")
    for (st, status, why), n in fails.most_common(25):
        print(f"{n:5d}  {st} {status}: {why}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--family", default=",".join(FAMILIES))
    ap.add_argument("--only", default="")
    ap.add_argument("--limit", type=int, default=0, help="architectures per family (0: all)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per stage")
    ap.add_argument("--stages", default="build,export,compile")
    ap.add_argument("--devices", default="")
    ap.add_argument("--modes", default="default,lite")
    ap.add_argument("--phases", default="eval,train")
    ap.add_argument("--max-params", type=int, default=5_000_000, help="transformers, after shrinking")
    ap.add_argument("--max-params-vision", type=int, default=25_000_000, help="torchvision and timm")
    ap.add_argument("--timm-families", type=int, default=None, help="the first N timm families only")
    ap.add_argument("--resume", action="store_true", help="skip what the manifest already has a result for")
    o = ap.parse_args()
    o.family, o.stages = o.family.split(","), o.stages.split(",")
    o.modes, o.phases = o.modes.split(","), o.phases.split(",")
    o.limits = {"hf": o.max_params, "vision": o.max_params_vision}
    import torch

    o.devices = o.devices.split(",") if o.devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    outdir = o.outdir = os.path.join(o.out, "torch-" + ".".join(torch.__version__.split(".")[:2]))
    os.makedirs(f"{outdir}/logs", exist_ok=True)
    mpath = f"{outdir}/manifest.json"
    m = json.load(open(mpath)) if os.path.exists(mpath) else {"architectures": {}}
    for pkg in ("torch", "transformers", "torchvision", "timm"):
        try:
            m[pkg] = __import__(pkg).__version__
        except ImportError:
            m[pkg] = None
    t0 = time.time()
    run = Run(o, outdir, m)
    # Families interleave (the i-th of each family before the i+1-th of any), so that a run cut short
    # still covers each family; timm's, selected later, go in at their own ranks.
    todo, archs = queue.PriorityQueue(), []

    def select(found):
        """Filters one family's enumeration by --only, --resume, --stages, --limit and queues it."""
        print(f"enumerated {len(found)} architectures at {time.time() - t0:.1f} s: "
              + ", ".join(f"{f} {n}" for f in FAMILIES if (n := sum(a['family'] == f for a in found))), flush=True)
        if o.only:
            only = set(o.only.split(","))
            found = [a for a in found if {a["id"], a["name"], run.entry(a).get("id")} & only]
        if "build" not in o.stages:  # compiling only: what the manifest says was built
            found = [a for a in found if run.entry(a).get("stages", {}).get("build", {}).get("status") == "ok"]
        if o.resume:
            found = [a for a in found if not done(run.entry(a), o)]
        if o.limit:
            found = [a for f in FAMILIES for a in [x for x in found if x["family"] == f][:o.limit]]
        archs.extend(found)
        for f in FAMILIES:
            for i, a in enumerate(x for x in found if x["family"] == f):
                todo.put((i, FAMILIES.index(f), a["id"], a))

    def job(j):
        box = [None]
        with open(f"{outdir}/logs/worker{j}.log", "a") as log:
            while (a := todo.get()[-1]) is not None:
                try:
                    run.one(a, box, log)
                except Exception:
                    traceback.print_exc()
            if box[0]:
                box[0].kill()

    threads = [threading.Thread(target=job, args=(j,)) for j in range(max(1, o.jobs))]
    for t in threads:
        t.start()
    select(enumerate_archs(o, outdir))
    select(enumerate_timm(o, outdir))  # meanwhile the jobs work on the other families
    for j in threads:
        todo.put((float("inf"), 0, "", None))
    for t in threads:
        t.join()
    run.save()
    summary(m, archs)
    print(f"\n{len(archs)} architectures in {time.time() - t0:.0f} s wall, --jobs {o.jobs}; out {outdir}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main()
    elif len(sys.argv) > 2 and sys.argv[1] == "--compile-child":
        compile_main(json.loads(sys.argv[2]))
    else:
        main()
