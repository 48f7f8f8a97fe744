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
"""
import json
import re
from collections import Counter

HEADER = re.compile(r"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] (\{.*\})\s*$")
OP = re.compile(r"torch\.ops\.(\w+)\.(\w+)\.(\w+)\(")
EXTERN = re.compile(r"\bextern_kernels\.(\w+)\(")
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


def truth(text):
    aot, seen, code, kinds = {}, {}, Counter(), Counter()
    for kind, meta, payload in records(text):
        if kind in AOT:
            kinds[kind] += 1
            key = (meta.get("frame_id"), meta.get("frame_compile_id"), AOT[kind])
            attempt = meta.get("attempt", 0) or 0
            if key not in seen or attempt >= seen[key][0]:
                seen[key] = (attempt, Counter(".".join(m) for l in code_lines(payload) for m in OP.findall(l)))
        elif kind == "inductor_output_code":
            kinds[kind] += 1
            for l in code_lines(payload):
                code.update(".".join(m) for m in OP.findall(l))
                code.update("extern_kernels." + m for m in EXTERN.findall(l))
    for (_, _, stage), (_, ops) in seen.items():
        aot.setdefault(stage, Counter()).update(ops)
    return {"aot": {k: dict(sorted(v.items())) for k, v in sorted(aot.items())},
            "output_code": dict(sorted(code.items())), "graphs": dict(sorted(kinds.items()))}
