#!/usr/bin/env python3
"""Folds calls traced by `check-lite --python` into an embedded backend table (assets/ops/).

    python3 scripts/merge_traced_calls.py assets/ops/torch-2.15.json.gz CACHE.json [CACHE.json ...]

A CACHE is what `xpu-workbench check-lite LOG --python PY` wrote (`<ops dir>/traced/torch-V.json`):
per call as dynamo writes it (`Tensor.type_as`), per device, the ATen ops the user's torch traced it
into at the example values of real logs. Run over the corpus's logs (scripts/gen_corpus.py), it
derives what a call becomes from every call the corpus's models make, instead of a hand list. The
cache's torch version must be the table's; its alternatives join the table's `expansions` and
`sources.traced_calls` records how many calls came from where.
"""
import gzip
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    table_path, caches = sys.argv[1], sys.argv[2:]
    opener = gzip.open if table_path.endswith(".gz") else open
    with opener(table_path, "rt") as f:
        table = json.load(f)
    exp = table.setdefault("expansions", {})
    added, calls = 0, 0
    for c in caches:
        with open(c) as f:
            cache = json.load(f)
        if cache["torch"].split("+")[0] != table["torch"].split("+")[0]:
            sys.exit(f"{c}: traced with torch {cache['torch']}, the table is torch {table['torch']}")
        calls += len(cache.get("traced", {}))
        for target, per_dev in cache.get("expansions", {}).items():
            mine = exp.setdefault(target, {})
            for dev, alts in per_dev.items():
                slot = mine.setdefault(dev, [])
                for a in alts:
                    if a not in slot:
                        slot.append(a)
                        added += 1
                slot.sort()
    table["expansions"] = dict(sorted(exp.items()))
    table["sources"]["traced_calls"] = (
        f"{calls} calls of real logs' dynamo graphs traced by scripts/trace_calls.py at their example values "
        f"(check-lite --python; merged by scripts/merge_traced_calls.py)"
    )
    with gzip.open(table_path, "wt", compresslevel=9) if table_path.endswith(".gz") else open(table_path, "w") as f:
        json.dump(table, f, separators=(",", ":"), sort_keys=True)
    print(f"{table_path}: {added} alternatives added from {calls} traced calls; {len(exp)} expansion keys")


if __name__ == "__main__":
    main()
