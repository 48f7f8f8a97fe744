#!/usr/bin/env python3
"""Rewrite a CUDA torch.profiler trace into the XPU flavour Kineto's XPUPTI plugin writes.

    python3 scripts/make_xpu_profile.py CUDA.json[.gz] OUT.json.gz

No XPU machine was at hand to record one, so the XPU sample is this transform of a real CUDA trace,
following libkineto/src/plugin/xpupti/XpuptiActivityHandlers.cpp:
- runtime calls: `cat` "xpu_runtime"; kernel launches become `urEnqueueKernelLaunch`, fills
  `urEnqueueUSMFill`, copies `urEnqueueUSMMemcpy`, the rest `urQueueFinish`/`urEventWait`;
- device ops keep their times and correlation ids; `tid` becomes the queue index (0), `args` become
  {appended, submitted, device, context, sycl queue, l0 queue, correlation, kernel_id};
- library kernels get oneDNN/SYCL names (`gemm_kernel`, `xe_fmha_fwd`, ...): their attribution is by
  the launching ATen op, which stays as recorded; Triton kernels keep their names, as on XPU.
The CPU side (ATen ops, Torch-Compiled Region, CompiledFxGraph) is unchanged.
"""
import gzip
import json
import sys

src, out = sys.argv[1], sys.argv[2]
opener = gzip.open if src.endswith(".gz") else open
doc = json.load(opener(src, "rt"))

LIB = [("splitKreduce", "gemm_kernel_reduce"), ("gemm", "gemm_kernel"), ("fmha", "xe_fmha_fwd"),
       ("convolve", "conv_fwd_kernel"), ("fprop", "conv_fwd_kernel"), ("nchwToNhwc", "reorder_kernel"),
       ("nhwcToNchw", "reorder_kernel"), ("at::native::", "at::native::xpu::ElementwiseKernel")]


def runtime_name(name):
    if "Launch" in name:
        return "urEnqueueKernelLaunch"
    if "Memset" in name:
        return "urEnqueueUSMFill"
    if "Memcpy" in name:
        return "urEnqueueUSMMemcpy"
    if "Synchronize" in name:
        return "urQueueFinish"
    return "urEventWait"


kid = 0
events = []
for e in doc["traceEvents"]:
    cat = e.get("cat")
    if cat in ("cuda_runtime", "cuda_driver"):
        e = dict(e, cat="xpu_runtime", name=runtime_name(e["name"]))
        e["args"] = {"correlation": e.get("args", {}).get("correlation")}
    elif cat in ("kernel", "gpu_memcpy", "gpu_memset"):
        kid += 1
        a = e.get("args", {})
        name = e["name"]
        if cat == "kernel" and not name.startswith("triton_"):
            name = next((new for key, new in LIB if key in name), "xe_kernel")
        if cat == "gpu_memset":
            name = "Memset (Device)"
        if cat == "gpu_memcpy":
            name = "Memcpy M2D (Memory -> Device)"
        ts_ns = int(e["ts"] * 1000)
        e = dict(e, name=name, pid=0, tid=0, args={
            "appended": ts_ns - 9000, "submitted": ts_ns - 4000, "device": 0,
            "context": "0x000055d0c3a1e2f0", "sycl queue": 94336452193328,
            "l0 queue": "0x000055d0c39f7a10", "correlation": a.get("correlation"), "kernel_id": kid,
        })
    elif cat == "ac2g":
        continue
    events.append(e)
doc["traceEvents"] = events
doc["deviceProperties"] = [{"id": 0, "name": "Intel(R) Data Center GPU Max 1550", "totalGlobalMem": 68719476736}]
with gzip.open(out, "wt") as f:
    json.dump(doc, f)
