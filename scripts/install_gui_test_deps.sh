#!/usr/bin/env bash
# Installs what the GUI screenshot test needs on Debian 12: a virtual X server, a screen grabber,
# and Mesa's software OpenGL (the app draws with OpenGL through glutin). Idempotent: installs only
# what is missing, so scripts/test.sh can run it every time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt_install.sh"

packages=(
    xvfb xauth            # xvfb-run
    imagemagick           # import (window capture) and identify (pixel statistics)
    libgl1 libegl1 libgl1-mesa-dri libglx-mesa0   # OpenGL through Mesa's llvmpipe
    libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon0 libxkbcommon-x11-0
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "GUI test dependencies already installed"
    exit 0
fi
apt_install "${missing[@]}"
