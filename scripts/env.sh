# Source this (bash) to use the OpenCL CPU runtime installed by scripts/install_opencl_cpu.sh:
#   source scripts/env.sh
# Works from any directory: the repository is found from this file's own path.

_xpu_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_xpu_ocl="$_xpu_repo/.tools/opencl"

# The ICD loader reads vendor files from this directory instead of /etc/OpenCL/vendors.
export OCL_ICD_VENDORS="$_xpu_ocl/vendors"
# libintelocl.so finds its direct dependencies through its RUNPATH ($ORIGIN); the folder is on the
# search path as well for what the runtime and tbb dlopen by bare name (e.g. libtbbbind).
case ":${LD_LIBRARY_PATH:-}:" in
    *":$_xpu_ocl/lib:"*) ;;
    *) export LD_LIBRARY_PATH="$_xpu_ocl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac

unset _xpu_repo _xpu_ocl
