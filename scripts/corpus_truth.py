"""What torch itself did in one compiled run, read off its TORCH_TRACE log (no torch needed).

A TORCH_TRACE log is a sequence of records: a glog header line ending in a JSON object
(`V1123 08:05:55.894 17839 file.py:454] {"aot_inference_graph": {}, "frame_id": 0, ...}`)
followed, when the object has `has_payload`, by payload lines that start with a tab.

`truth(log_text)` returns
  aot            {"forward"|"backward"|"inference": {op: count}}: the ATen ops (`torch.ops.NS.OP.OVERLOAD`)
                 of the AOT graphs, summed over frames; of a frame compiled in several attempts only
                 the last attempt's graph counts
  output_code    {op: count}: what Inductor's output code calls whole, i.e. `extern_kernels.NAME` and
                 `torch.ops.NS.OP.OVERLOAD` calls outside comments (fallbacks, library kernels such
                 as mm/convolution, custom ops), summed over every output code of the run
  graphs         {record kind: how many records} for the AOT graphs and output codes seen
  aot_at         {"forward"|"backward"|"inference": {op: {"FILE:LINE": count}}}: the same ops by the
                 source line torch wrote above them (`# File: FILE:LINE in fn, code: ...`; "" where
                 none): where a decomposed call's op must be missing, while other calls' (a `stack`
                 becomes a `cat`) may hold it elsewhere

    python3 scripts/corpus_truth.py LOG[.gz] [OUT.json]    recomputes a log's truth (a slimmed log
                                                            keeps every AOT graph and output code)
    python3 scripts/corpus_truth.py --refresh DIR...       every NAME.truth.json beside its
                                                            NAME.log[.gz], in place (adds `aot_at`
                                                            to a corpus made before it existed)
"""
import json
import re
from collections import Counter

HEADER = re.compile(r"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] (\{.*\})\s*$")
OP = re.compile(r"torch\.ops\.(\w+)\.(\w+)\.(\w+)\(")
EXTERN = re.compile(r"\bextern_kernels\.(\w+)\(")
FILE = re.compile(r"^\s*# File: (.+?):(\d+) in ")
AOT = {"aot_forward_graph": "forward", "aot_backward_graph": "backward", "aot_inference_graph": "inference"}


def records(text):
    """(kind, meta dict, payload text) for every record of the log."""
    kind, meta, payload = None, None, []
    for line in text.splitlines():
        if line.startswith("\t"):
            payload.append(line[1:])
            continue
        m = HEADER.match(line)
        if not m:
            continue
        if kind:
            yield kind, meta, "\n".join(payload)
        try:
            meta = json.loads(m.group(1))
        except ValueError:
            kind, meta, payload = None, None, []
            continue
        kind = next(iter(meta), None)
        payload = []
    if kind:
        yield kind, meta, "\n".join(payload)


def code_lines(src):
    """Lines of Python source with comments dropped (Inductor's `# Original ATen: [aten.mm]` notes)."""
    for line in src.splitlines():
        s = line.split("#", 1)[0]
        if s.strip():
            yield s


def located_ops(payload):
    """{op: {"FILE:LINE": count}} of one graph: each op under the last `# File:` comment above it."""
    out, loc = {}, ""
    for line in payload.splitlines():
        m = FILE.match(line)
        if m:
            loc = f"{m.group(1)}:{m.group(2)}"
            continue
        if not line.strip():
            loc = ""  # torch separates source lines by a blank line; a node after one has none
            continue
        for op in (".".join(m) for m in OP.findall(line.split("#", 1)[0])):
            at = out.setdefault(op, {})
            at[loc] = at.get(loc, 0) + 1
    return out


def truth(text):
    aot, seen, code, kinds = {}, {}, Counter(), Counter()
    for kind, meta, payload in records(text):
        if kind in AOT:
            kinds[kind] += 1
            key = (meta.get("frame_id"), meta.get("frame_compile_id"), AOT[kind])
            attempt = meta.get("attempt", 0) or 0
            if key not in seen or attempt >= seen[key][0]:
                seen[key] = (attempt, Counter(".".join(m) for l in code_lines(payload) for m in OP.findall(l)), located_ops(payload))
        elif kind == "inductor_output_code":
            kinds[kind] += 1
            for l in code_lines(payload):
                code.update(".".join(m) for m in OP.findall(l))
                code.update("extern_kernels." + m for m in EXTERN.findall(l))
    at = {}
    for (_, _, stage), (_, ops, located) in seen.items():
        aot.setdefault(stage, Counter()).update(ops)
        for op, locs in located.items():
            for loc, n in locs.items():
                d = at.setdefault(stage, {}).setdefault(op, {})
                d[loc] = d.get(loc, 0) + n
    return {"aot": {k: dict(sorted(v.items())) for k, v in sorted(aot.items())},
            "aot_at": {k: {op: dict(sorted(l.items())) for op, l in sorted(v.items())} for k, v in sorted(at.items())},
            "output_code": dict(sorted(code.items())), "graphs": dict(sorted(kinds.items()))}


def refresh(dirs):
    import glob
    import os

    done = 0
    for d in dirs:
        for t in sorted(glob.glob(os.path.join(d, "*.truth.json"))):
            stem = t[: -len(".truth.json")]
            log = next((p for p in (stem + ".log.gz", stem + ".log") if os.path.exists(p)), None)
            if log:
                write(log, t)
                done += 1
    print(f"{done} truth file(s) recomputed")


def write(path, out):
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        t = truth(f.read())
    # Keep what the corpus generator wrote beside the truth (id, mode, device ...).
    try:
        with open(out) as f:
            old = json.load(f)
    except (OSError, ValueError):
        old = {}
    old.update(t)
    with open(out, "w") as f:
        json.dump(old, f, indent=0, sort_keys=True)


def main():
    import gzip
    import sys

    if sys.argv[1] == "--refresh":
        refresh(sys.argv[2:])
        return
    path = sys.argv[1]
    if len(sys.argv) > 2:
        write(path, sys.argv[2])
        return
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        print(json.dumps(truth(f.read()), indent=0, sort_keys=True))


if __name__ == "__main__":
    main()
