#!/usr/bin/env bash
# Installs what the HTML report's browser test (tests/report.rs) needs on Debian 12: Debian's
# chromium, run headless. Idempotent: installs only when it is missing, so scripts/test.sh can run it
# every time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/apt_install.sh"

if command -v chromium >/dev/null; then
    echo "chromium already installed"
    exit 0
fi
apt_install chromium
