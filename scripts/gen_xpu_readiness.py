#!/usr/bin/env python3
"""XPU's CPU-fallback lists per torch version, as data the workbench embeds (assets/ops/xpu-fallback.json.gz).

    python3 scripts/gen_xpu_readiness.py GIT_DIR [OUT.json.gz]

GIT_DIR is a clone (bare is fine) of https://github.com/intel/torch-xpu-ops with its release branches.
No torch is needed: the facts are read from the branches' sources.

torch-xpu-ops registers two things in `src/ATen/native/xpu/XPUFallback.template` (`XPUFallback.cpp`
from release/2.14 on), both of which decide what an XPU op does when the kernel tables
(assets/ops/torch-V.json.gz) give XPU no kernel of its own:
  cpu_fallback  the `fallback_list` of `TORCH_LIBRARY_IMPL(aten, XPU, m)`: overloads given a boxed kernel
                that copies the arguments to the CPU, runs the CPU kernel and copies back ("Aten Op
                fallback from XPU to CPU" warning).
  torchvision   `torchvision_ops_dispatching_table_`: torchvision ops registered lazily for XPU, each
                `false` (redispatched to torch-xpu-ops' own SYCL kernel) or `true` (sent to the CPU).
                torchvision itself ships no XPU kernels (torchvision/csrc/ops has cpu, cuda, mps).
Every other op without an XPU kernel reaches the catch-all `TORCH_LIBRARY_IMPL(_, XPU, m)` fallback,
which raises NotImplementedError unless PYTORCH_ENABLE_XPU_FALLBACK=1 (then it too runs on the CPU).

Torch version -> branch: 2.9 ... 2.14 -> release/2.9 ... release/2.14 (whichever exist), the newest
torch after them -> main. Each entry records the branch, its commit and the file read.
"""
import gzip
import json
import re
import subprocess
import sys

FILES = ["src/ATen/native/xpu/XPUFallback.template", "src/ATen/native/xpu/XPUFallback.cpp"]
VERSIONS = ["2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15"]


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True).stdout


def branch_for(git_dir, version):
    refs = set(git(git_dir, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())
    want = f"release/{version}"
    return want if want in refs else "main"


def read_source(git_dir, ref):
    for path in FILES:
        try:
            return path, git(git_dir, "show", f"{ref}:{path}")
        except subprocess.CalledProcessError:
            continue
    sys.exit(f"{ref}: none of {FILES}")


def fallback_list(text):
    """The string literals of `std::vector<std::string> fallback_list = { ... };`."""
    m = re.search(r"fallback_list\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        return []
    body = re.sub(r"//[^\n]*", "", m.group(1))
    return re.findall(r'"([^"]+)"', body)


def torchvision_table(text):
    """`{"torchvision::nms", false}` entries: op name (without namespace) -> sent to the CPU."""
    m = re.search(r"torchvision_ops_dispatching_table_\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        return {}
    return {name: flag == "true" for name, flag in re.findall(r'\{\s*"torchvision::(\w+)"\s*,\s*(true|false)\s*\}', m.group(1))}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    git_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "assets/ops/xpu-fallback.json.gz"
    entries = []
    for v in VERSIONS:
        ref = branch_for(git_dir, v)
        commit = git(git_dir, "rev-parse", ref).strip()
        date = git(git_dir, "log", "-1", "--format=%cs", commit).strip()
        path, text = read_source(git_dir, commit)
        fb = fallback_list(text)
        tv = torchvision_table(text)
        if not fb or not tv:
            sys.exit(f"{ref}:{path}: found {len(fb)} fallback ops, {len(tv)} torchvision ops; the file's layout changed")
        entries.append({
            "torch": v, "ref": ref, "commit": commit, "date": date, "file": path,
            "cpu_fallback": sorted(set(fb)), "torchvision_cpu": tv,
        })
        print(f"torch {v}: {ref} {commit[:12]} ({date}) {path}: {len(fb)} CPU-fallback overloads, "
              f"{len(tv)} torchvision ops ({sum(tv.values())} on the CPU)")
    doc = {
        "source": "https://github.com/intel/torch-xpu-ops",
        "generator": "scripts/gen_xpu_readiness.py",
        "versions": entries,
    }
    data = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    # No name and no time in the gzip header: the same branches give the same bytes.
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(data)
    print(out, len(data), "bytes of JSON")


if __name__ == "__main__":
    main()
