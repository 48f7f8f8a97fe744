#!/usr/bin/env bash
# What the GPU machine's torch (another version than ours) adds to the knowledge tables and the
# corpus, in one command (the machine goes back 30 s after a command ends):
#   - every composite overload traced by scripts/gen_composite_graphs.py, sharded over TRACE_JOBS
#     processes, merged into OUT/composite-<torch>.json.gz (shards cut short merge what they did);
#   - TORCH_TRACE compile logs (scripts/gen_corpus.py --stages build,compile) for the phases and
#     devices given, slimmed (scripts/slim_trace_log.py) with their truth.json and manifest, as
#     OUT/logs.tar.xz.
#
#   TIME_S=520 TRACE_JOBS=36 COMPILE_JOBS=26 PHASES=train,eval DEVICES=cpu,cuda MODES=lite,default \
#       bash scripts/device_knowledge.sh OUT
set -u
out=$1
time_s=${TIME_S:-520}; tj=${TRACE_JOBS:-36}; cj=${COMPILE_JOBS:-26}
py=${PYTHON:-python3}
mkdir -p "$out" /tmp/ct /tmp/cc
export OMP_NUM_THREADS=1
for i in $(seq 0 $((tj - 1))); do
    timeout "$time_s" "$py" scripts/gen_composite_graphs.py "/tmp/ct/s$i.json.gz" --shard "$i/$tj" \
        >/tmp/ct/s$i.err 2>&1 &
done
timeout "$time_s" "$py" scripts/gen_corpus.py /tmp/cc --stages build,compile --jobs "$cj" --timeout 240 \
    --devices "${DEVICES:-cpu,cuda}" --modes "${MODES:-lite,default}" --phases "${PHASES:-train,eval}" \
    >"$out/compile.log" 2>&1 &
wait
v=$("$py" -c "import torch; print(torch.__version__.split('+')[0].rsplit('.', 1)[0])")
"$py" scripts/gen_composite_graphs.py "$out/composite-$v.json.gz" --merge /tmp/ct/*.jsonl 2>>"$out/compile.log"
set_dir=$(ls -d /tmp/cc/torch-* | head -1)
mkdir -p /tmp/slim/$(basename "$set_dir")
"$py" scripts/slim_trace_log.py --dir "$set_dir" "/tmp/slim/$(basename "$set_dir")" >>"$out/compile.log" 2>&1
cp "$set_dir"/*.truth.json "$set_dir"/manifest.json "$set_dir"/versions.json "/tmp/slim/$(basename "$set_dir")/" 2>/dev/null
tar -C /tmp/slim -cf - . | xz -T0 -6 >"$out/logs.tar.xz"
tail -c 3000 /tmp/ct/s0.err >"$out/trace-s0.err"
ls -la "$out"
