#!/usr/bin/env bash
# Installs what the HTML report's browser test (tests/report.rs) needs on Debian 12: Debian's
# chromium, run headless. Idempotent: installs only when it is missing, so scripts/test.sh can run it
# every time.
set -euo pipefail

if command -v chromium >/dev/null; then
    echo "chromium already installed"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium
