#!/usr/bin/env bash
# Starts the app under a virtual X server, waits until it has drawn and stopped changing (its
# spinners animate while workers run), and captures the screen.
#   scripts/gui_screenshot.sh BINARY OUT_PREFIX [APP ARGS...]
# writes OUT_PREFIX.ppm (for tests to read) and OUT_PREFIX.png. Needs xvfb-run and ImageMagick
# (scripts/install_gui_test_deps.sh).
set -euo pipefail
bin=$1
out=$2
shift 2
# A fresh config folder: no saved session or theme from the person running the test.
XDG_CONFIG_HOME="$(mktemp -d)"
export XDG_CONFIG_HOME OUT="$out" LIBGL_ALWAYS_SOFTWARE=1
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c '
    "$0" "$@" &
    pid=$!
    # The pointer starts at the screen centre, where its hover tooltip would hide the graph.
    if command -v xdotool >/dev/null; then sleep 1; xdotool mousemove 1599 999 || true; fi
    prev=""
    for _ in $(seq 1 90); do
        sleep 1
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" || true
            echo "error: the app exited before it was captured" >&2
            exit 1
        fi
        import -window root -depth 8 "$OUT.ppm" 2>/dev/null || continue
        sum=$(md5sum < "$OUT.ppm")
        [ "$sum" = "$prev" ] && break
        prev=$sum
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
' "$bin" "$@"
convert "$out.ppm" "$out.png"
rm -rf "$XDG_CONFIG_HOME"
