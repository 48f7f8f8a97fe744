#!/usr/bin/env bash
# Lowers every torch.export archive in DIR with `xpu-workbench compile` (full mode, kernels
# written to a scratch folder that is removed after each model), one model at a time, each under
# `timeout 120`, and writes one tab-separated line per model: name, exit status, seconds, and the
# last line it printed (the error, or "N kernels (full mode) written to ..." when it lowered). Used for issue 28's "every corpus model lowers"
# sweep (docs/PERFORMANCE.md); group the failures with scripts/sweep_group.py.
#
# usage: scripts/sweep_compile.sh BINARY DIR OUT.tsv
set -u
bin=$1 dir=$2 out=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
: >"$out"
for f in "$dir"/*.pt2; do
    name=$(basename "$f" .pt2)
    start=$(date +%s.%N)
    timeout 120 "$bin" compile "$f" --emit "$scratch/emit" >"$scratch/log" 2>&1
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    msg=$(grep -v '^\s*$' "$scratch/log" | tail -n 1 | tr '\t' ' ')
    [ $rc -eq 124 ] && msg="timeout after 120 s"
    printf '%s\t%d\t%.1f\t%s\n' "$name" "$rc" "$secs" "$msg" >>"$out"
    rm -rf "$scratch/emit"
done
