#!/usr/bin/env bash
# The corpus tier on architectures nobody here picked, on the GPU machine's CPUs (issue 25):
# exports every architecture scripts/gen_corpus.py enumerates with the machine's own torch, then runs
# the model half of tests/corpus.rs on each export, one process per architecture, all in one
# command (the machine goes back 30 s after a command ends, so nothing can be left for a second).
#
#   EXPORT_S=300 TIER_S=230 JOBS=60 [FAMILY=timm,torchvision] [ONLY_FILE=ids.txt] bash scripts/device_corpus_tier.sh CORPUS_TEST_BINARY OUTDIR
#
# FAMILY narrows the generator to some families: one command has 10 minutes, and exporting every
# transformers architecture first leaves torchvision and timm unexported when all three are asked.
# ONLY_FILE (comma-separated IDs, gen_corpus.py's --only) continues where an earlier run's time ran
# out: the IDs of a previous manifest that this machine's first run did not reach.
#
# CORPUS_TEST_BINARY is `cargo test --test corpus --no-run`'s executable, built and stripped here
# (the machine has no crates registry). Each architecture gets its own corpus root that links the
# export set, so each writes its own corpus-report.md; OUTDIR gets every report, the manifest and
# the generator's log. An architecture whose stages outrun the time left has no report: counted
# as not run, never as passed.
set -u
bin=$1; out=$2
export_s=${EXPORT_S:-300}; tier_s=${TIER_S:-230}; jobs=${JOBS:-60}
corpus=/tmp/corpus; shards=/tmp/shards
mkdir -p "$out" "$shards"
timeout "$export_s" "${PYTHON:-python3}" scripts/gen_corpus.py "$corpus" --stages build,export --jobs "$jobs" --timeout 90 ${FAMILY:+--family "$FAMILY"} \
    ${ONLY_FILE:+--only "$(tr -d '\n' <"$ONLY_FILE")"} \
    >"$out/gen.log" 2>&1
set_dir=$(ls -d "$corpus"/torch-* | head -1)
cp "$set_dir/manifest.json" "$out/manifest.json"
"${PYTHON:-python3}" - "$set_dir/manifest.json" >"$shards/ids" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for a, e in sorted(m["architectures"].items()):
    if e.get("stages", {}).get("export", {}).get("status") in ("ok", "torch_failed", "timeout", "crashed"):
        print(a)
PY
echo "$(wc -l <"$shards/ids") exported or failed in torch.export" >>"$out/gen.log"
deadline=$(( $(date +%s) + tier_s ))
one() {
    local id=$1 root="$shards/$1" left=$(( deadline - $(date +%s) ))
    [ "$left" -gt 5 ] || { echo "$id not run: no time left" >>"$shards/done"; return; }
    mkdir -p "$root" && ln -sfn "$set_dir" "$root/$(basename "$set_dir")"
    XPU_WORKBENCH_CORPUS="$root" CORPUS_STAGES=models CORPUS_ONLY="$id" CORPUS_MIN_PASS=0 \
        timeout "$left" "$bin" --nocapture >"$root/test.log" 2>&1
    echo "$id rc=$?" >>"$shards/done"
}
export -f one; export shards set_dir bin deadline
xargs -a "$shards/ids" -P "$jobs" -I{} bash -c 'one {}'
for d in "$shards"/*/; do
    id=$(basename "$d")
    [ -f "$d/corpus-report.md" ] && { echo "=== $id"; cat "$d/corpus-report.md"; } 
done >"$out/reports.md"
cat "$shards/done" >"$out/done.txt" 2>/dev/null
tar -C "$shards" -cJf "$out/test-logs.tar.xz" $(cd "$shards" && ls -d */test.log 2>/dev/null) 2>/dev/null
echo "reports: $(grep -c '^=== ' "$out/reports.md") of $(wc -l <"$shards/ids")"
