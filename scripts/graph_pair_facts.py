"""What differs between two of torch's graphs, read straight from torch's own output, for the
expectations of tests/graph_diff.rs (`xpu-workbench diff` must find exactly these).

    python scripts/graph_pair_facts.py A.pt2 B.pt2
    python scripts/graph_pair_facts.py A.log.gz B.log.gz STAGE   (e.g. aot_inference_graph)

Each graph becomes one line per node, `op(args) -> outputs`, with every value a node reads named
by how many nodes back it was defined (`%-1` the node just before, `in0` the first input), so
that torch's renumbering (`view_6` in one version is `view_7` in the next) does not show and an
inserted node only shows where it is read across; devices are dropped (a CUDA and a CPU log differ in every
tensor's device). The two line lists are then compared with difflib and the differing lines
printed: `-` only in A, `+` only in B. Plain Python and the standard library only: the archives'
`model.json` and the logs' printed graphs are read as text, so this is independent of both torch's
and our parser.
"""

import difflib
import gzip
import json
import re
import sys
import zipfile


def pt2_lines(path):
    z = zipfile.ZipFile(path)
    name = next(n for n in z.namelist() if n.endswith("models/model.json"))
    g = json.loads(z.read(name))["graph_module"]["graph"]
    defined = {v: f"in{i}" for i, v in enumerate(_input_names(g))}
    lines = []
    for k, n in enumerate(g["nodes"]):
        names = {v: (d if isinstance(d, str) else f"%-{k - d}") for v, d in defined.items()}
        args = ", ".join(_render(a["arg"], names) for a in n["inputs"])
        for o in _names(n["outputs"]):
            defined.setdefault(o, k)
        outs = ", ".join(_meta(g, v) for v in _names(n["outputs"]))
        lines.append(f"{n['target'].replace('torch.ops.', '')}({args}) -> {outs}")
    return lines


def _meta(g, name):
    """dtype code, sizes and strides of a tensor (or the expression of a symbolic int)."""
    t = g.get("tensor_values", {}).get(name)
    if t is not None:
        return json.dumps({k: t[k] for k in ("dtype", "sizes", "strides")}, sort_keys=True)
    s = g.get("sym_int_values", {}).get(name)
    return json.dumps(s, sort_keys=True) if s is not None else "-"


def _input_names(g):
    out = []
    for spec in g["inputs"]:
        out.extend(_names(spec))
    return out


def _names(x):
    """Every value name an export JSON fragment defines or reads, in order."""
    found = []
    if isinstance(x, dict):
        for k, v in x.items():
            if k in ("name", "as_name") and isinstance(v, str):
                found.append(v)
            else:
                found.extend(_names(v))
    elif isinstance(x, list):
        for v in x:
            found.extend(_names(v))
    return found


def _render(x, names):
    text = json.dumps(x, sort_keys=True)
    return re.sub(r'"(?:as_)?name": "([^"]+)"', lambda m: f'"v": "{names.get(m.group(1), "?")}"', text)


ASSIGN = re.compile(r"^\s*([A-Za-z_][\w]*)(?::\s*\"([^\"]*)\")?\s*=\s*(.+?)(;\s+[\w =,]*None)?$")


def log_lines(path, stage):
    """The first `stage` graph of the log, one line per assignment."""
    text = gzip.open(path, "rt").read() if path.endswith(".gz") else open(path).read()
    lines = text.split("\n")
    payload = None
    for i, line in enumerate(lines):
        m = re.search(r"\] (\{.*\})$", line)
        if not m:
            continue
        try:
            env = json.loads(m.group(1))
        except ValueError:
            continue
        kind = env.get("artifact", {}).get("name") if "artifact" in env else next(
            (k for k in env if k not in ("frame_id", "frame_compile_id", "attempt", "has_payload")), None)
        if kind == stage:
            payload = []
            for p in lines[i + 1:]:
                if not p.startswith("\t"):
                    break
                payload.append(p[1:])
            break
    if payload is None:
        sys.exit(f"{path}: no {stage}")
    defined, out, k = {}, [], 0
    header = "\n".join(payload)
    sig = re.search(r"def forward\((.*?)\):", header, re.S)
    params = re.findall(r"(\w+):\s*\"", sig.group(1)) if sig else []
    for i, p in enumerate(params):
        defined[p] = f"in{i}"
    for line in payload:
        m = ASSIGN.match(line)
        if not m or line.strip().startswith(("def ", "class ", "#", "return")):
            continue
        var, ann, rhs, _ = m.groups()
        ann = re.sub(r"(cuda:\d+|cpu|xpu:\d+)$", "", ann or "")
        names = {v: (d if isinstance(d, str) else f"%-{k - d}") for v, d in defined.items()}
        rhs = re.sub(r"(?<![.\w])[A-Za-z_]\w*\b", lambda t: names.get(t.group(0), t.group(0)), rhs)
        defined[var] = k
        k += 1
        out.append(f"{rhs} : {ann}")
    return out


def main():
    a, b = sys.argv[1], sys.argv[2]
    if a.endswith(".pt2"):
        la, lb = pt2_lines(a), pt2_lines(b)
    else:
        la, lb = log_lines(a, sys.argv[3]), log_lines(b, sys.argv[3])
    print(f"A: {a} ({len(la)} nodes)\nB: {b} ({len(lb)} nodes)")
    for line in difflib.unified_diff(la, lb, lineterm="", n=0):
        if not line.startswith(("---", "+++")):
            print(line[:240])


if __name__ == "__main__":
    main()
