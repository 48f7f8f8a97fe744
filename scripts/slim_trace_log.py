#!/usr/bin/env python3
"""Keeps the records of TORCH_TRACE logs that the workbench's checks read, dropping the rest.

    python3 scripts/slim_trace_log.py IN.log[.gz] OUT.log[.gz]
    python3 scripts/slim_trace_log.py --dir IN_DIR OUT_DIR      (every *.log.gz in IN_DIR)

Kept, unchanged: the stage graphs (dynamo, AOT joint/forward/backward/inference, post-grad), the
symbols and their specializations, guards, compilation metrics, output code. Dropped: chromium
events, C++ guard dumps, described tensors/storages/sources, side-effect and pre-grad artifacts,
cache and provenance stack-trace artifacts — a third of a log's bytes. The corpus (scripts/
gen_corpus.py) is slimmed before it leaves the machine that compiled it, where truth.json was already
computed from the whole log; a slim log is still a log every command of the workbench reads.
"""
import gzip
import json
import os
import re
import sys

HEADER = re.compile(r"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] (\{.*\})\s*$")
DROP = {"chromium_event", "dynamo_cpp_guards_str", "describe_tensor", "describe_storage", "describe_source", "dump_file"}
KEEP_ARTIFACTS = {"inductor_post_grad_graph", "inductor_provenance_tracking_node_mappings", "aot_forward_graph_fw_metadata"}
META = {"frame_id", "frame_compile_id", "attempt", "has_payload", "compiled_autograd_id"}


def kind_of(obj):
    kind = next((k for k in obj if k not in META), None)
    if kind == "artifact":
        return "artifact:" + str((obj.get("artifact") or {}).get("name"))
    return kind


def keep(kind):
    if kind is None or kind in DROP:
        return False
    if kind.startswith("artifact:"):
        return kind[len("artifact:"):] in KEEP_ARTIFACTS
    return True


def slim(src, dst):
    opener = gzip.open if src.endswith(".gz") else open
    out_open = gzip.open if dst.endswith(".gz") else open
    kept = True
    with opener(src, "rt", errors="replace") as f, out_open(dst, "wt") as out:
        for line in f:
            if not line.startswith("\t"):
                m = HEADER.match(line)
                if m:
                    try:
                        kept = keep(kind_of(json.loads(m.group(1))))
                    except ValueError:
                        kept = True
            if kept:
                out.write(line)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--dir":
        src_dir, dst_dir = sys.argv[2], sys.argv[3]
        os.makedirs(dst_dir, exist_ok=True)
        for name in sorted(os.listdir(src_dir)):
            if name.endswith(".log.gz"):
                slim(os.path.join(src_dir, name), os.path.join(dst_dir, name[: -len(".gz")]))
    elif len(sys.argv) == 3:
        slim(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
