#!/usr/bin/env bash
# Installs Intel's OpenCL CPU runtime (from PyPI wheels) into .tools/opencl, plus the OpenCL ICD
# loader, clinfo and SPIRV-Tools from Debian when they are missing. Safe to run again: a finished
# install is detected by a stamp naming the wheel versions, and apt-get runs only for what is absent.
#
# Afterwards: `source scripts/env.sh` and `clinfo -l` shows "Intel(R) OpenCL" with a CPU device.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="$repo/.tools/opencl"
lib="$prefix/lib"
vendors="$prefix/vendors"

# Versions that load together: intel-opencl-rt 2026.2 asks for tbb 2023.* and its libintelocl.so
# needs libimf/libsvml/libirng/libintlc from the compiler runtime of the same release.
ocl_version="2026.2.0"
tbb_version="2023.2.0"
cmplr_version="2026.2.0"
stamp="$prefix/.installed-ocl-$ocl_version-tbb-$tbb_version-cmplr-$cmplr_version"

say() { printf 'install_opencl_cpu: %s\n' "$*"; }

# --- Debian packages: the ICD loader that the app dlopens, clinfo to check, SPIRV-Tools for tests.
missing=()
have_lib() { ldconfig -p 2>/dev/null | grep -q "$1"; }
have_lib 'libOpenCL.so.1 ' || missing+=(ocl-icd-libopencl1)
command -v clinfo >/dev/null || missing+=(clinfo)
{ command -v spirv-as >/dev/null && command -v spirv-val >/dev/null && command -v spirv-dis >/dev/null; } \
    || missing+=(spirv-tools)
command -v unzip >/dev/null || missing+=(unzip)
if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    say "apt-get install ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    say "ICD loader, clinfo and spirv-tools already present"
fi

# --- The Intel CPU runtime from PyPI wheels.
if [[ -f "$stamp" && -f "$lib/libintelocl.so" ]]; then
    say "Intel OpenCL CPU runtime $ocl_version already in $lib"
else
    say "downloading intel-opencl-rt==$ocl_version tbb==$tbb_version intel-cmplr-lib-rt==$cmplr_version"
    rm -rf "$prefix"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work/wheels" \
        "intel-opencl-rt==$ocl_version" "tbb==$tbb_version" "intel-cmplr-lib-rt==$cmplr_version"
    mkdir -p "$lib" "$vendors"
    for wheel in "$work"/wheels/*.whl; do
        unzip -q -o "$wheel" '*.data/data/lib/*' -d "$work/unpacked"
    done
    # The runtime wheel also carries its own libOpenCL.so (an ICD loader); leave it out so that
    # the one loader on the machine is Debian's, which honours OCL_ICD_VENDORS. icx-lto.so is the
    # compiler's link-time-optimisation plugin (90 MB) that the runtime never loads.
    find "$work/unpacked" -path '*.data/data/lib/*' -type f ! -name 'libOpenCL.so*' ! -name icx-lto.so \
        -exec mv -f -t "$lib" {} +
    # Wheels cannot hold symlinks, so every soname alias is a full copy (libcommon_clang.so alone
    # is 200 MB twice); turn identical aliases back into links to the longest (versioned) name.
    (
        cd "$lib"
        for f in *.so.*[0-9] *.so; do
            [[ -f "$f" && ! -L "$f" ]] || continue
            for g in "$f".*; do
                if [[ -f "$g" && ! -L "$g" ]] && cmp -s "$f" "$g"; then
                    ln -sf "$(ls -d "$f".* | awk '{ print length, $0 }' | sort -n | tail -1 | cut -d' ' -f2-)" "$f"
                    break
                fi
            done
        done
    )
    touch "$stamp"
    say "unpacked $(find "$lib" -maxdepth 1 -type f | wc -l) files into $lib ($(du -sh "$lib" | cut -f1))"
fi

# --- The ICD file names the runtime by absolute path, so it works from any working directory.
mkdir -p "$vendors"
printf '%s\n' "$lib/libintelocl.so" >"$vendors/intel-cpu.icd"
say "wrote $vendors/intel-cpu.icd -> $lib/libintelocl.so"

# --- Check: the CPU device is listed and takes SPIR-V.
# shellcheck source=scripts/env.sh
source "$repo/scripts/env.sh"
info="$(clinfo 2>&1 || true)"
if grep -q 'Intel(R) OpenCL' <<<"$info"; then
    say "clinfo: $(clinfo -l 2>/dev/null | tr -s ' \n' ' ')"
    say "clinfo: $(grep -m1 'IL version' <<<"$info" | tr -s ' ')"
else
    say "clinfo does not list the Intel(R) OpenCL platform; clinfo says:"
    head -20 <<<"$info" >&2
    exit 1
fi
