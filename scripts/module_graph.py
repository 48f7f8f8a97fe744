#!/usr/bin/env python3
"""The import graph between the crate's top-level modules (src/<name>/ and src/<name>.rs).

Reads every src/**/*.rs except lib.rs and main.rs, strips comments and string literals, and
collects each `crate::<module>` path (also inside `use crate::{a::X, b}` groups). Prints:

  * the edges between top-level modules, with how many files make each edge,
  * the cycles (strongly connected components with more than one module, and each two-way pair),
  * the imports that run against LAYERS below (an import from a lower layer into a higher one),
    file by file.

Code inside `#[cfg(test)]` items is counted apart (`--tests` includes it in the graph): a unit
test may reach up a layer to build its inputs without the library depending on that layer.

`--submodules` prints instead the cycles between second-level modules (`pipeline::check`,
`ops::table`, ...), leaving out edges between a module and its own parent, resolving `crate::`, `super::` and `self::` paths and, in a `mod.rs`, paths
that start with a child module's name.

Usage: python3 scripts/module_graph.py [--tests] [--edges-only] [--submodules]
Plain Python 3; no dependencies. docs/ARCHITECTURE.md quotes its output.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# The declared layer order, bottom first. A module may import modules of its own layer or of
# layers below it; anything else is a back-edge. Modules of one layer may import each other,
# but cycles among them are still reported.
LAYERS = [
    ("data", ["ir", "sym", "npy", "config"]),
    ("import", ["import", "python"]),
    ("ops registry", ["ops"]),
    ("passes", ["infer", "decomp", "exec", "shapes", "hierarchy"]),
    ("lower", ["lower", "codegen", "runtime", "coverage", "opinfo"]),
    ("analysis", ["profile", "diff", "report", "sweep"]),
    # The pipeline's steps as one call each (lower a file, run, profile, check), driving the
    # layers below for both front ends: the CLI parses into them, the app's jobs call them.
    ("pipeline", ["pipeline"]),
    # `ui` owns no compiler logic and never imports `cli`; `cli` starts the GUI (and benches its
    # layout), so the CLI sits on top.
    ("ui", ["ui"]),
    ("cli", ["cli"]),
]


def layer_of():
    out = {}
    for i, (_, mods) in enumerate(LAYERS):
        for m in mods:
            out[m] = i
    return out


def top_modules():
    mods = set()
    for name in os.listdir(ROOT):
        p = os.path.join(ROOT, name)
        if os.path.isdir(p):
            mods.add(name)
        elif name.endswith(".rs") and name not in ("lib.rs", "main.rs"):
            mods.add(name[:-3])
    return mods


STRING_RE = re.compile(
    r'r(#*)"(?:.|\n)*?"\1'          # raw strings r"..", r#".."#
    r'|b?"(?:\\.|[^"\\])*"'         # strings and byte strings
    r"|b?'(?:\\.|[^'\\])'"          # char literals ('{' would break brace matching)
)


def strip(src):
    """Source without comments and literals, newlines kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if src[i] == "\n":
                        out.append("\n")
                    i += 1
        else:
            m = STRING_RE.match(src, i)
            # A lifetime ('a) is not a char literal; the regex needs the closing quote.
            if m and (src[i] != "r" or (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))) \
                    and (src[i] != "b" or (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))):
                out.append("\"\"" + "\n" * m.group(0).count("\n"))
                i = m.end()
            else:
                out.append(src[i])
                i += 1
    return "".join(out)


CFG_TEST_RE = re.compile(r"#\[cfg\((?:test|all\(test[^\]]*)\)\]")


def split_tests(code):
    """(library code, test code): the item after each #[cfg(test)] goes to the second."""
    lib, test, i = [], [], 0
    for m in CFG_TEST_RE.finditer(code):
        if m.start() < i:
            continue
        lib.append(code[i:m.start()])
        j = m.end()
        # The item ends at its matching close brace, or at a `;` before any brace.
        depth, k = 0, j
        while k < len(code):
            c = code[k]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    k += 1
                    break
            elif c == ";" and depth == 0:
                k += 1
                break
            k += 1
        test.append(code[j:k])
        i = k
    lib.append(code[i:])
    return "".join(lib), "".join(test)


PATH_RE = re.compile(r"\bcrate\s*::\s*(\{|[A-Za-z_]\w*)")


def group_heads(code, start):
    """Top-level names in the `{...}` group opening at code[start]."""
    heads, depth, tok, k = [], 0, "", start
    expect = True
    while k < len(code):
        c = code[k]
        if c == "{":
            depth += 1
            if depth == 1:
                expect = True
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        elif depth == 1:
            if c == ",":
                expect = True
            elif expect and (c.isalnum() or c == "_"):
                tok += c
            elif expect and tok:
                heads.append(tok)
                tok, expect = "", False
        k += 1
    if tok:
        heads.append(tok)
    return heads


def imports(code, mods):
    found = set()
    for m in PATH_RE.finditer(code):
        names = group_heads(code, m.start(1)) if m.group(1) == "{" else [m.group(1)]
        found.update(n for n in names if n in mods)
    return found


def scan(include_tests):
    mods = top_modules()
    edges = defaultdict(set)       # (from, to) -> files
    test_edges = defaultdict(set)  # edges only test code makes
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            if rel in ("lib.rs", "main.rs"):
                continue
            src_mod = rel.split(os.sep)[0]
            if src_mod.endswith(".rs"):
                src_mod = src_mod[:-3]
            with open(path, encoding="utf-8") as fh:
                lib, test = split_tests(strip(fh.read()))
            # Whole files of tests (tests.rs, *_tests.rs) are declared under #[cfg(test)] by
            # their parent; count them as test code.
            if f == "tests.rs" or f.endswith("_tests.rs"):
                lib, test = "", lib + test
            for dst in imports(lib, mods):
                if dst != src_mod:
                    edges[(src_mod, dst)].add("src/" + rel)
            for dst in imports(test, mods):
                if dst != src_mod:
                    test_edges[(src_mod, dst)].add("src/" + rel)
    if include_tests:
        for k, v in test_edges.items():
            edges[k] |= v
    return mods, edges, test_edges


def sccs(nodes, adj):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(adj[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def module_path(rel):
    """src-relative file path -> module path components (`cli/check.rs` -> [cli, check])."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "mod":
        parts = parts[:-1]
    return parts


REL_RE = re.compile(r"(?<![\w:])((?:crate|super|self)(?:\s*::\s*(?:super|[A-Za-z_]\w*))*)\s*(::\s*\{)?")


def submodule_keys():
    """Every first- and second-level module path, as tuples."""
    keys = set()
    for dirpath, dirs, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".rs"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                if rel in ("lib.rs", "main.rs"):
                    continue
                mp = module_path(rel)
                keys.add(tuple(mp[:1]))
                if len(mp) > 1:
                    keys.add(tuple(mp[:2]))
    return keys


def key_of(path, keys):
    if len(path) >= 2 and tuple(path[:2]) in keys:
        return tuple(path[:2])
    if path and tuple(path[:1]) in keys:
        return tuple(path[:1])
    return None


def sub_imports(code, here, is_mod_rs, keys):
    """Second-level modules `code` (the file of module `here`) names."""
    found = set()
    for m in REL_RE.finditer(code):
        comps = [c.strip() for c in m.group(1).split("::")]
        if comps[0] == "crate":
            path = []
        else:
            path = list(here)
            if comps[0] == "super":
                path = path[:-1]
        for c in comps[1:]:
            path = path[:-1] if c == "super" else path + [c]
        heads = group_heads(code, m.end() - 1) if m.group(2) else [None]
        for h in heads:
            k = key_of(path + ([h] if h else []), keys)
            if k:
                found.add(k)
    if is_mod_rs:
        for k in keys:
            if len(k) == len(here) + 1 and list(k[:-1]) == list(here):
                if re.search(r"(?<![\w:])" + re.escape(k[-1]) + r"\s*::", code):
                    found.add(k)
    return found


def submodules(include_tests):
    keys = submodule_keys()
    edges = defaultdict(set)
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
            if rel in ("lib.rs", "main.rs"):
                continue
            here = module_path(rel)
            src = key_of(here, keys)
            with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
                lib, test = split_tests(strip(fh.read()))
            if f == "tests.rs" or f.endswith("_tests.rs"):
                lib, test = "", lib + test
            code = lib + test if include_tests else lib
            for dst in sub_imports(code, here, f == "mod.rs", keys):
                # A module and its own parent (`cli` and `cli::check`) are one unit: the parent
                # declares and dispatches to its children, which use its shared types. Only edges
                # between siblings and across top-level modules are counted.
                if dst != src and dst != src[:1] and dst[:1] != src:
                    edges[(src, dst)].add("src/" + rel)
    adj = defaultdict(set)
    for a, b in edges:
        adj[a].add(b)
    name = "::".join
    comps = [c for c in sccs(keys, adj) if len(c) > 1]
    pairs = sorted((a, b) for (a, b) in edges if a < b and (b, a) in edges)
    print(f"second-level modules: {len(keys)}; edges: {len(edges)} "
          f"({'test code included' if include_tests else 'library code; --tests adds test code'})")
    print(f"\n== cycles: {len(comps)} strongly connected group(s), {len(pairs)} two-way pair(s) ==")
    for c in comps:
        print(f"  group of {len(c)}: " + " ".join(name(k) for k in c))
    for a, b in pairs:
        print(f"  {name(a)} <-> {name(b)}: {len(edges[(a, b)])} / {len(edges[(b, a)])} file(s)")


def main():
    include_tests = "--tests" in sys.argv
    if "--submodules" in sys.argv:
        submodules(include_tests)
        return
    mods, edges, test_edges = scan(include_tests)
    layer = layer_of()
    unplaced = sorted(m for m in mods if m not in layer)
    adj = defaultdict(set)
    for a, b in edges:
        adj[a].add(b)

    print(f"modules: {len(mods)}; edges: {len(edges)} "
          f"({'test code included' if include_tests else 'library code; --tests adds test code'})")
    if unplaced:
        print("modules in no layer: " + ", ".join(unplaced))
    print("\n== layers (bottom first) ==")
    for i, (name, ms) in enumerate(LAYERS):
        print(f"  {i} {name:13} {' '.join(ms)}")

    print("\n== edges (importer -> imported: files) ==")
    for a in sorted(adj):
        print(f"  {a:9} -> " + ", ".join(f"{b}:{len(edges[(a, b)])}" for b in sorted(adj[a])))
    if "--edges-only" in sys.argv:
        return

    comps = [c for c in sccs(mods, adj) if len(c) > 1]
    pairs = sorted((a, b) for (a, b) in edges if a < b and (b, a) in edges)
    print(f"\n== cycles: {len(comps)} strongly connected group(s), {len(pairs)} two-way pair(s) ==")
    for c in comps:
        print("  group: " + " ".join(c))
    for a, b in pairs:
        print(f"  {a} <-> {b}: {a}->{b} in {len(edges[(a, b)])} file(s), {b}->{a} in {len(edges[(b, a)])}")

    back = sorted(((a, b) for (a, b) in edges if a in layer and b in layer and layer[b] > layer[a]),
                  key=lambda e: (layer[e[0]], e))
    nfiles = sum(len(edges[e]) for e in back)
    print(f"\n== back-edges (lower layer imports a higher one): {len(back)} edge(s), {nfiles} file import(s) ==")
    for a, b in back:
        print(f"  {a} ({LAYERS[layer[a]][0]}) -> {b} ({LAYERS[layer[b]][0]}):")
        for f in sorted(edges[(a, b)]):
            print(f"      {f}")

    if not include_tests:
        only_test = sorted(e for e in test_edges if e not in edges)
        if only_test:
            print(f"\n== edges only test code makes (not counted above): {len(only_test)} ==")
            for a, b in only_test:
                print(f"  {a} -> {b}: " + ", ".join(sorted(test_edges[(a, b)])))


if __name__ == "__main__":
    main()
