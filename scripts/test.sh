#!/usr/bin/env bash
# Installs everything the tests need on a fresh Debian 12 machine (as root, or with sudo),
# then runs the whole test suite. CI calls exactly this (see .ci/run and README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v cargo >/dev/null; then
    echo "error: cargo not found: install a Rust toolchain >= 1.88 (rustup) first" >&2
    exit 2
fi
for installer in scripts/install_*.sh; do
    [ -e "$installer" ] || continue
    echo "== $installer"
    bash "$installer"
done
if [ -f scripts/env.sh ]; then
    # shellcheck disable=SC1091
    source scripts/env.sh
fi
# The OpenCL tests skip only where the runtime is absent; here it was just installed.
export XPU_WORKBENCH_REQUIRE_OPENCL=1
# Likewise the GUI screenshot test: install_gui_test_deps.sh just installed Xvfb and ImageMagick.
export XPU_WORKBENCH_REQUIRE_GUI=1
# And the report's browser test: install_report_test_deps.sh just installed chromium.
export XPU_WORKBENCH_REQUIRE_BROWSER=1
# A clean checkout builds every test binary once: incremental caches would only double the
# target directory (about 3 GB more), and CI once failed on a full disk because of them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cargo test --workspace --locked "$@"
