"""Regenerate cudadoctor/kb/cuda_errors.json and kb/library_errors.json from NVIDIA's own headers and libraries.

Reads the headers and shared libraries that NVIDIA's pip wheels install (nvidia-cuda-runtime 13.0,
nvidia-cublas 13.1, nvidia-cudnn-cu13 9.x, nvidia-nccl-cu13 2.x: the ones torch's CUDA wheels pull in),
parses every enumerator of CUresult (cuda.h), cudaError_t (driver_types.h), ncclResult_t (nccl.h),
cudnnStatus_t (cudnn_graph.h), cublasStatus_t (cublas_api.h) and CUptiResult (cupti_result.h) with its doc comment, and asks the
libraries for their own message texts (cudaGetErrorString, ncclGetErrorString, cublasGetStatusString:
these need no GPU). The catalogue mapping (which cudadoctor code an error means) is kept from the
existing table: this script refreshes the numbers, names and texts only.

    python benchmarks/kb_from_headers.py [SITE_PACKAGES/nvidia]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import sys
from pathlib import Path

KB = Path(__file__).resolve().parent.parent / "cudadoctor" / "kb"
CHECKED = "2026-11-27"

#: enum name -> (cudadoctor code, confidence, why): decided from what the error means (its doc comment).
#: 36 (CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) has no code on purpose: Warp reports it when it cannot resolve a
#: driver entry point at all (no libcuda: NVIDIA/warp#672; a Warp older than the driver: escontra/gauss_gym#16),
#: so the number does not show that the driver is old.
MAP = {
    # driver API (cuda.h)
    "CUDA_ERROR_STUB_LIBRARY": (
        "stub-libcuda",
        "high",
        "the libcuda loaded is the toolkit's link-time stub, not the driver's library",
    ),
    "CUDA_ERROR_DEVICE_UNAVAILABLE": (
        "gpu-compute-mode-restricted",
        "medium",
        "devices busy or unavailable: most often an Exclusive-Process/Prohibited compute mode or a GPU held by another process",
    ),
    "CUDA_ERROR_NO_DEVICE": ("no-gpu-visible", "high", "the driver loaded but detected no CUDA-capable device for this process"),
    "CUDA_ERROR_INVALID_DEVICE": (
        "device-ordinal-invalid",
        "high",
        "the device ordinal asked for does not name a visible CUDA device",
    ),
    "CUDA_ERROR_NO_BINARY_FOR_GPU": (
        "gpu-arch-unsupported",
        "high",
        "no kernel image suitable for the device: the code was not compiled for its architecture",
    ),
    "CUDA_ERROR_ECC_UNCORRECTABLE": ("gpu-ecc-errors", "high", "an uncorrectable ECC error was detected during execution"),
    "CUDA_ERROR_LAUNCH_TIMEOUT": (
        "display-gpu-watchdog-timeout",
        "high",
        "a kernel ran longer than the device's run-time limit allows, which only a display watchdog (Windows TDR, X) sets",
    ),
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": (
        "driver-too-old",
        "medium",
        "the PTX was produced by a newer toolchain than the driver's JIT understands: the driver is older than the CUDA that built it",
    ),
    "CUDA_ERROR_SYSTEM_NOT_READY": (
        "fabric-manager-missing",
        "medium",
        "the system is not ready for CUDA work: a required driver daemon (on NVSwitch systems, Fabric Manager) is not running",
    ),
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": (
        "nvml-driver-mismatch",
        "medium",
        "the display driver (kernel side) and the CUDA driver (libcuda) are different versions; with CUDA compat libraries in an image the specific signature of cuda-compat-driver-mismatch applies",
    ),
    "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": (
        "cuda-forward-compat",
        "high",
        "forward compatibility was attempted on hardware that does not support it",
    ),
    "CUDA_ERROR_UNKNOWN": (
        "nvidia-uvm-stale",
        "low",
        "an unknown internal error; at CUDA initialisation on Linux its commonest cause is a stale nvidia_uvm module (after suspend or a driver update)",
    ),
    # runtime API (driver_types.h)
    "cudaErrorStubLibrary": ("stub-libcuda", "high", "the CUDA driver found is the toolkit's stub library"),
    "cudaErrorInsufficientDriver": ("driver-too-old", "high", "the installed NVIDIA driver is older than the CUDA runtime"),
    "cudaErrorDevicesUnavailable": (
        "gpu-compute-mode-restricted",
        "medium",
        "all CUDA devices busy or unavailable, often due to an exclusive or prohibited compute mode",
    ),
    "cudaErrorInvalidDeviceFunction": (
        "gpu-arch-unsupported",
        "medium",
        "the device function does not exist or is not compiled for the device's architecture",
    ),
    "cudaErrorNoDevice": ("no-gpu-visible", "high", "no CUDA-capable device was detected by the installed driver"),
    "cudaErrorInvalidDevice": ("device-ordinal-invalid", "high", "the device ordinal does not correspond to a valid CUDA device"),
    "cudaErrorNoKernelImageForDevice": ("gpu-arch-unsupported", "high", "no kernel image suitable for the device"),
    "cudaErrorECCUncorrectable": ("gpu-ecc-errors", "high", "an uncorrectable ECC error was detected"),
    "cudaErrorLaunchTimeout": (
        "display-gpu-watchdog-timeout",
        "high",
        "a kernel ran longer than the device's run-time limit allows, which only a display watchdog (Windows TDR, X) sets",
    ),
    "cudaErrorUnsupportedPtxVersion": (
        "driver-too-old",
        "medium",
        "PTX compiled with a toolchain newer than the driver supports",
    ),
    "cudaErrorSystemNotReady": (
        "fabric-manager-missing",
        "medium",
        "a required driver daemon (Fabric Manager on NVSwitch systems) is not running",
    ),
    "cudaErrorSystemDriverMismatch": (
        "nvml-driver-mismatch",
        "medium",
        "display driver and CUDA driver versions differ (compat libraries in an image: see cuda-compat-driver-mismatch)",
    ),
    "cudaErrorCompatNotSupportedOnDevice": (
        "cuda-forward-compat",
        "high",
        "forward compatibility attempted on hardware that does not support it",
    ),
    "cudaErrorUnknown": (
        "nvidia-uvm-stale",
        "low",
        "unknown internal error; at initialisation on Linux, commonly a stale nvidia_uvm module",
    ),
    # NCCL
    # cuDNN
    "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH": (
        "library-shadowing",
        "high",
        "cuDNN's sub-libraries are different versions: two cuDNN installs mixed on the loader path (cuDNN 9 loads "
        "libcudnn_graph, libcudnn_engines_*, libcudnn_ops/cnn/adv at run time by name; one missing from torch's wheel "
        "is found in a system copy)",
    ),
    "CUDNN_STATUS_VERSION_MISMATCH": (
        "library-shadowing",
        "high",
        "cuDNN's libraries are different versions (cuDNN 8's sub-library version check; an alias of "
        "SUBLIBRARY_VERSION_MISMATCH in cuDNN 9): two cuDNN installs mixed on the loader path",
    ),
    "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED": ("cudnn-mismatch", "high", "a cuDNN sub-library could not be loaded"),
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER": ("driver-too-old", "high", "cuDNN needs a newer CUDA driver"),
    "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART": (
        "cudnn-mismatch",
        "medium",
        "the cuDNN loaded was built for another CUDA runtime than the one in the process",
    ),
    "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH": (
        "gpu-arch-unsupported",
        "medium",
        "the cuDNN in use has no support for this GPU's architecture",
    ),
    "CUDNN_STATUS_ARCH_MISMATCH": (
        "gpu-arch-unsupported",
        "medium",
        "the cuDNN in use has no support for this GPU's architecture",
    ),
    "CUDNN_STATUS_NOT_INITIALIZED": (
        "cudnn-mismatch",
        "low",
        "cuDNN could not initialise: a cuDNN that does not fit the CUDA/driver/GPU, or too little GPU memory left to create its handle",
    ),
    # cuBLAS
    "CUBLAS_STATUS_ARCH_MISMATCH": (
        "gpu-arch-unsupported",
        "medium",
        "the function needs an architectural feature the device lacks",
    ),
    # CUPTI (the library under nvprof, Nsight, the torch/Paddle profilers, PAPI, likwid)
    "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES": (
        "gpu-perf-counters-restricted",
        "high",
        "the user may not read the GPU's performance counters: the driver restricts profiling to administrators "
        "(NVreg_RestrictProfilingToAdminUsers), its default since NVIDIA's fix for CVE-2018-6260",
    ),
    "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED": (
        "profiler-unsupported-gpu",
        "high",
        "CUPTI's legacy event/metric API (nvprof's, old profilers') does not support compute capability 7.5 and newer",
    ),
    "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED": (
        "cupti-multiple-subscribers",
        "high",
        "CUPTI takes one subscriber: another tool (nsys, ncu, compute-sanitizer, cuda-gdb, a framework's own profiler) "
        "already subscribed in this process",
    ),
}


def _clean_comment(c: str) -> str:
    c = re.sub(r"^\s*/\*\*<?|\*/\s*$", "", c.strip())
    lines = [re.sub(r"^\s*\*\s?", "", x).strip() for x in c.split("\n")]
    text = " ".join(x for x in lines if x)
    text = re.sub(r"\\deprecated\b", "Deprecated:", text)
    text = re.sub(r"::(\w)", r"\1", text)
    text = re.sub(r"@since cuDNN [\d.]+", "", text)
    return re.sub(r"\s+", " ", text).strip()


def enum_items(header: str, start: str, end: str) -> list[dict]:
    """Enumerators between the `start` and `end` regexes, each with its value and doc comment."""
    m = re.search(start, header)
    if m is None:
        raise SystemExit(f"no enum starting {start!r}")
    body = header[m.end() :]
    body = body[: re.search(end, body).start()]
    out, pending, values = [], "", {}
    pos = 0
    tok = re.compile(r"/\*\*.*?\*/|/\*.*?\*/|//[^\n]*|,?\s*(\w+)(?:\s+[A-Z_]+)?\s*=\s*([^,/}\n]+)", re.S)
    for t in tok.finditer(body, pos):
        s = t.group(0)
        if s.startswith("/**<"):
            if out:
                out[-1]["doc"] = _clean_comment(s)
            continue
        if s.startswith("/**"):
            pending = _clean_comment(s)
            continue
        if s.startswith("/*") or s.startswith("//"):
            continue
        name, val = t.group(1), t.group(2).strip()
        num = int(val, 0) if re.fullmatch(r"-?(0x)?[\da-fA-F]+", val) else values.get(val)
        if num is None:
            continue
        values[name] = num
        out.append({"value": num, "name": name, "doc": pending})
        pending = ""
    return out


def main(nv: Path) -> None:
    inc = nv / "cu13" / "include"
    cu = enum_items((inc / "cuda.h").read_text(), r"typedef enum cudaError_enum\s*\{", r"\}\s*CUresult;")
    rt = enum_items((inc / "driver_types.h").read_text(), r"enum __device_builtin__ cudaError\s*\{", r"\};")
    cudart = ctypes.CDLL(str(nv / "cu13" / "lib" / "libcudart.so.13"))
    cudart.cudaGetErrorString.restype = ctypes.c_char_p
    for e in rt:
        e["message"] = cudart.cudaGetErrorString(e["value"]).decode()
    nccl = enum_items(
        (nv / "nccl" / "include" / "nccl.h").read_text(), r"typedef enum \{(?=\s*ncclSuccess)", r"\}\s*ncclResult_t;"
    )
    lib = ctypes.CDLL(str(nv / "nccl" / "lib" / "libnccl.so.2"))
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    for e in nccl:
        e["message"] = lib.ncclGetErrorString(e["value"]).decode()
    cudnn = enum_items(
        (nv / "cudnn" / "include" / "cudnn_graph.h").read_text(),
        r"typedef enum \{(?=\s*CUDNN_STATUS_SUCCESS)",
        r"\}\s*cudnnStatus_t;",
    )
    cublas = enum_items(
        (inc / "cublas_api.h").read_text(), r"typedef enum \{(?=\s*CUBLAS_STATUS_SUCCESS)", r"\}\s*cublasStatus_t;"
    )
    lib = ctypes.CDLL(str(nv / "cu13" / "lib" / "libcublas.so.13"))
    lib.cublasGetStatusString.restype = ctypes.c_char_p
    for e in cublas:
        e["message"] = lib.cublasGetStatusString(e["value"]).decode()
    cupti = [
        e
        for e in enum_items(
            (inc / "cupti_result.h").read_text(), r"(?s)typedef enum \{(?=(?:\s|/\*.*?\*/)*CUPTI_SUCCESS)", r"\}\s*CUptiResult;"
        )
        if e["name"] != "CUPTI_ERROR_FORCE_INT"
    ]
    lib = ctypes.CDLL(str(nv / "cu13" / "lib" / "libcupti.so.13"))
    text = ctypes.c_char_p()
    for e in cupti:
        if lib.cuptiGetErrorMessage(e["value"], ctypes.byref(text)) == 0 and text.value:
            msg = text.value.decode().strip()
            if msg not in (e["name"], "<unknown>"):
                e["message"] = msg
    legacy = json.loads((KB / "cuda_errors.json").read_text())["runtime_legacy"] if (KB / "cuda_errors.json").exists() else []
    legacy_cudnn = (
        json.loads((KB / "library_errors.json").read_text())["cudnn_legacy"] if (KB / "library_errors.json").exists() else []
    )
    cuda = {
        "checked": CHECKED,
        "cuda": "13.0",
        "sources": [
            {
                "title": "cuda.h (CUresult) of CUDA 13.0, from the nvidia-cuda-runtime 13.0.96 wheel",
                "url": "https://pypi.org/project/nvidia-cuda-runtime/13.0.96/",
            },
            {
                "title": "driver_types.h (cudaError_t) of CUDA 13.0, same wheel; messages from its libcudart's cudaGetErrorString",
                "url": "https://pypi.org/project/nvidia-cuda-runtime/13.0.96/",
            },
            {
                "title": "CUDA Driver API: Data types (CUresult)",
                "url": "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
            },
            {
                "title": "CUDA Runtime API: Data types (cudaError)",
                "url": "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
            },
            {
                "title": "CUDA 10.0 Runtime API: Data types (the numbering before CUDA 10.1)",
                "url": "https://docs.nvidia.com/cuda/archive/10.0/cuda-runtime-api/group__CUDART__TYPES.html",
            },
        ],
        "notes": [
            "Extracted by benchmarks/kb_from_headers.py: every enumerator of CUresult and cudaError_t with its doc comment; runtime messages are what libcudart's cudaGetErrorString returns (no GPU needed).",
            "runtime_legacy: the cudaError_t numbering of CUDA 10.0 and older (renumbered in 10.1), read only for numbers the current headers do not define (38 no device, 48 no kernel image, 10 invalid device, 39 ECC, 30 unknown).",
            "code: the cudadoctor catalogue code the error means, with confidence and why; absent where no code applies.",
        ],
        "driver": [_mapped(e) for e in cu],
        "runtime": [_mapped(e) for e in rt],
        "runtime_legacy": legacy,
    }
    libs = {
        "checked": CHECKED,
        "sources": [
            {
                "title": "nccl.h (ncclResult_t) of NCCL 2.30, from the nvidia-nccl-cu13 2.30.7 wheel; messages from ncclGetErrorString",
                "url": "https://pypi.org/project/nvidia-nccl-cu13/2.30.7/",
            },
            {
                "title": "cudnn_graph.h (cudnnStatus_t) of cuDNN 9.24, from the nvidia-cudnn-cu13 9.24.0.43 wheel",
                "url": "https://pypi.org/project/nvidia-cudnn-cu13/9.24.0.43/",
            },
            {
                "title": "cuDNN 8.9 API: cudnnStatus_t (the numbering of cuDNN 8)",
                "url": "https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-890/api/index.html",
            },
            {
                "title": "cublas_api.h (cublasStatus_t) of cuBLAS 13.1, from the nvidia-cublas 13.1.1.3 wheel; messages from cublasGetStatusString",
                "url": "https://pypi.org/project/nvidia-cublas/13.1.1.3/",
            },
            {
                "title": "cupti_result.h (CUptiResult) of CUDA 13.0, from the nvidia-cuda-cupti 13.0.85 wheel; messages from cuptiGetErrorMessage",
                "url": "https://pypi.org/project/nvidia-cuda-cupti/13.0.85/",
            },
        ],
        "notes": [
            "Extracted by benchmarks/kb_from_headers.py from the headers and libraries of the wheels named in sources.",
            "cudnn_legacy: cuDNN 8's numbering (0-14), which cuDNN 9 replaced with 1xxx-5xxx categories; names are the same where both have them.",
        ],
        "nccl": [_mapped(e) for e in nccl],
        "cudnn": [_mapped(e) for e in cudnn],
        "cudnn_legacy": legacy_cudnn,
        "cublas": [_mapped(e) for e in cublas],
        "cupti": [_mapped(e) for e in cupti],
    }
    for name, doc in (("cuda_errors", cuda), ("library_errors", libs)):
        (KB / f"{name}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _mapped(e: dict) -> dict:
    out = {k: v for k, v in e.items() if v != ""}
    if e["name"] in MAP:
        code, conf, why = MAP[e["name"]]
        out.update({"code": code, "confidence": conf, "why": why})
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("nvidia", nargs="?", type=Path, help="the nvidia folder of a site-packages (default: this Python's)")
    a = ap.parse_args()
    main(a.nvidia or Path(sys.prefix) / "lib" / "python3.11" / "site-packages" / "nvidia")
