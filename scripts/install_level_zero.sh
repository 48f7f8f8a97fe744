#!/bin/sh
# Installs what the Level Zero tests need on Debian/Ubuntu: the loader (libze1, opened at run
# time by level-zero-sys) and its header (libze-dev, read by level-zero-sys/tests/layout.rs).
# Idempotent: does nothing when both are installed. Needs root (or sudo).
set -eu

packages="libze1 libze-dev"
missing=""
for package in $packages; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $package"
    fi
done
if [ -z "$missing" ]; then
    echo "level zero: $packages already installed"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
else
    sudo=""
fi
# Refresh the package lists only when apt has none, or they do not know a missing package.
for package in $missing; do
    if ! apt-cache show "$package" >/dev/null 2>&1; then
        $sudo apt-get update
        break
    fi
done
# shellcheck disable=SC2086 # word splitting of the package list is intended
$sudo apt-get install -y $missing
