"""Write docs/kb-tables.md: every table in cudadoctor/kb/ with what it holds, its row count, date and sources.

python benchmarks/kb_tables_doc.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cudadoctor import kb

DOC = Path(__file__).resolve().parent.parent / "docs" / "kb-tables.md"


def _n(d: dict, *keys: str) -> int:
    return sum(1 for k in keys for e in d[k] if "code" in e)


WHAT = {
    "cpu_gpu_twins": (
        "per Python module with separate CPU and CUDA distributions that install the same import name (onnxruntime / onnxruntime-gpu, paddlepaddle / paddlepaddle-gpu, tensorflow / tensorflow-gpu 1.x, faiss-cpu / faiss-gpu): both installed means the CPU files can be the ones imported",
        lambda d: f"{len(d['modules'])} modules",
    ),
    "companion_cuda": (
        "per companion package (onnxruntime-gpu, CTranslate2, TensorFlow): the CUDA release and cuDNN major its default GPU build on PyPI loads, by release range",
        lambda d: f"{len(d['packages'])} packages, {sum(len(v) for v in d['packages'].values())} release ranges",
    ),
    "cuda_libraries": (
        "NVIDIA library families named in error texts (cudart, cuBLAS, cuFFT, cuSOLVER, cuSPARSE, NVRTC, cuDNN, NCCL, the driver's libcuda/nvcuda, TensorRT): what the number in a soname or DLL name means per CUDA release, the pip wheel that ships it, and the catalogue code a missing one points to",
        lambda d: f"{len(d['families'])} families, {sum(len(f['names']) for f in d['families'])} library names",
    ),
    "cuda_drivers": (
        "minimum driver per CUDA release (the toolkit's GA driver and the minor-version-compatibility floor) and the CUDA each driver branch reports",
        lambda d: f"{len(d['toolkit_min_driver'])} CUDA releases, {len(d['driver_branch_cuda'])} driver branches",
    ),
    "driver_api_symbols": (
        "the CUDA release that introduced each driver-API entry point (cuXxx and its versioned ABI names cuXxx_v2..., from cudaTypedefs.h): a libcuda lacking one is older than that release",
        lambda d: f"{len(d['introduced'])} entry points",
    ),
    "program_driver_min": (
        "the minimum NVIDIA driver a program's own CUDA build needs, per release of the program and GPU compute capability, as its documentation states it (ollama)",
        lambda d: f"{len(d['programs'])} programs, {sum(len(p['floors']) for p in d['programs'].values())} release ranges",
    ),
    "ptx_isa": (
        "the CUDA release that writes and reads each PTX ISA version (ptxas's \"Unsupported .version X; current version is 'Y'\" names two CUDA releases)",
        lambda d: f"{len(d['ptx_to_cuda'])} PTX ISA versions",
    ),
    "torch_releases": (
        "every torch release series: date, patches, CUDA variants, default variant per platform, Python range, torchvision/torchaudio pairing, cuDNN",
        lambda d: f"{len(d['releases'])} release series",
    ),
    "torch_arch_lists": (
        "compiled architectures (sm_/compute_) of each official Linux x86_64 wheel, per release and CUDA variant",
        lambda d: f"{sum(len(v) for v in d['builds'].values())} builds over {len(d['builds'])} releases",
    ),
    "gpu_compute_capability": (
        "NVIDIA GPU names -> compute capability (desktop, laptop, workstation, datacenter, Jetson; ambiguous names listed)",
        lambda d: f"{sum(len(v) for v in d['gpus'].values())} names, {len(d['ambiguous'])} ambiguous",
    ),
    "cores_per_sm": ("FP32 cores per SM per compute capability", lambda d: f"{len(d['cores_per_sm'])} capabilities"),
    "registers_per_block": (
        "32-bit registers per thread block (cudaDeviceProp.regsPerBlock) per compute capability",
        lambda d: f"{len(d['registers_per_block'])} capabilities",
    ),
    "installers": (
        "where each torch build is published per installer (pip indexes, conda channels, uv)",
        lambda d: "per installer",
    ),
    "containers": (
        "what shows that a process runs in a container (Docker, Podman, Kubernetes and its managed services, Singularity/Apptainer, enroot) in an OS line or a text, read by checks/_containers.py",
        lambda d: f"{len(d['markers'])} markers",
    ),
    "python_wheels": (
        "when each CPython minor first had torch wheels (Linux, Windows) and its patch release dates",
        lambda d: f"{len(d['python'])} Python minors",
    ),
    "cuda_errors": (
        "every CUresult (cuda.h) and cudaError_t (driver_types.h) of CUDA 13.0 with its doc comment and cudaGetErrorString text, the pre-10.1 runtime numbering, and the catalogue code each error means",
        lambda d: (
            f"{len(d['driver'])} CUresult + {len(d['runtime'])} cudaError_t + {len(d['runtime_legacy'])} pre-10.1; {_n(d, 'driver', 'runtime', 'runtime_legacy')} mapped"
        ),
    ),
    "library_errors": (
        "NCCL's ncclResult_t, cuDNN's cudnnStatus_t (9.x and 8.x numbering), cuBLAS's cublasStatus_t and CUPTI's CUptiResult with their messages and catalogue codes",
        lambda d: (
            f"{len(d['nccl'])} NCCL + {len(d['cudnn'])} cuDNN 9 + {len(d['cudnn_legacy'])} cuDNN 8 + {len(d['cublas'])} cuBLAS + {len(d['cupti'])} CUPTI; {_n(d, 'nccl', 'cudnn', 'cudnn_legacy', 'cublas', 'cupti')} mapped"
        ),
    ),
    "xid": (
        "NVIDIA's Xid numbers with the driver's own description and mnemonic, and the catalogue code where one applies",
        lambda d: f"{len(d['xids'])} Xids; {sum(1 for r in d['xids'] if r.get('code'))} mapped",
    ),
    "host_compilers": (
        "the newest GCC and clang and the MSVC range each CUDA release's nvcc accepts (crt/host_config.h)",
        lambda d: f"{len(d['cuda'])} CUDA releases (12.0-{list(d['cuda'])[-1]})",
    ),
    "nvcc_archs": (
        "the sm_/compute_ targets each CUDA release's ptxas accepts, and the first/last release per target",
        lambda d: f"{len(d['releases'])} releases, {len(d['targets'])} targets",
    ),
    "cuda_arch_support": (
        "the first CUDA release whose nvcc builds code for each GPU architecture (what any build made with a CUDA can run)",
        lambda d: f"{len(d['first_cuda'])} architectures",
    ),
    "gpu_video_engines": (
        "NVIDIA GPUs without a hardware video encoder (NVENC), and those sold in a revision without one",
        lambda d: f"{len(d['no_nvenc'])} GPUs without NVENC, {len(d['some_without_nvenc'])} in one revision",
    ),
    "torch_wheels": (
        "which torch releases PyPI has a wheel for, per platform (Linux x86_64/aarch64, Windows, macOS arm64/x86_64) and CPython minor",
        lambda d: f"{sum(len(v) for pf in d['pypi'].values() for v in pf.values())} (platform, Python, release) triples",
    ),
}

TAIL = """
## How the tables taken from NVIDIA's files were made

- `cuda_errors.json`, `library_errors.json`: `benchmarks/kb_from_headers.py` parses every enumerator of `CUresult`
  (`cuda.h`), `cudaError_t` (`driver_types.h`), `ncclResult_t` (`nccl.h`), `cudnnStatus_t` (`cudnn_graph.h`),
  `cublasStatus_t` (`cublas_api.h`) and `CUptiResult` (`cupti_result.h`) from the NVIDIA wheels torch's CUDA 13 build
  installs (nvidia-cuda-runtime 13.0.96, nvidia-nccl-cu13 2.30.7, nvidia-cudnn-cu13 9.24, nvidia-cublas 13.1,
  nvidia-cuda-cupti 13.0.85), with each doc comment, and asks the libraries for their own message texts
  (`cudaGetErrorString`, `ncclGetErrorString`, `cublasGetStatusString`, `cuptiGetErrorMessage`; no GPU needed).
  Spot-checked against NVIDIA's CUDA Runtime/Driver API data-type pages; `tests/test_kb_sources.py`
  re-parses the installed headers and compares.
- The pre-CUDA-10.1 runtime numbering (`runtime_legacy`: 38 no device, 48 no kernel image, 30 unknown...) and
  cuDNN 8's numbering (0-14) are kept because old tools still print them (`cuda runtime error (38)`). A number is
  read by the current headers first; the old numbering only where the current headers do not define it.
- The catalogue code of each error is decided from what the error means (its doc comment) and written with a
  confidence and why; an error with no code (out of memory, illegal address...) names none.
- `xid.json`: transcribed from `nverror.h` of NVIDIA's open GPU kernel modules (the Xid numbers, mnemonics and the
  public description string the driver indexes by Xid). Xids above 125 (NVIDIA's newer catalogue) are not in it yet.
- `host_compilers.json`, `nvcc_archs.json`: `benchmarks/kb_from_nvcc.py` reads `crt/host_config.h` and runs
  `ptxas --help` of the last patch of every CUDA release from 11.7 on (nvidia-cuda-nvcc-cu11 11.7.99 and 11.8.89,
  nvidia-cuda-nvcc-cu12, nvidia-cuda-nvcc and nvidia-cuda-crt wheels). CUDA 11.6 and older have no nvcc wheel on
  PyPI and are not covered (unknown, never guessed).
- `torch_wheels.json`: `benchmarks/kb_torch_wheels.py` asks `pip --isolated index versions torch --only-binary=:all:`
  once per platform and CPython minor with that platform's wheel tags (PyPI's own file list; nothing downloaded).
  The CUDA variants on download.pytorch.org are in `torch_releases.json`.

## Where they are used

- `cudadoctor/errortext/extract.py` finds the errors anywhere in a text (enum names, library messages, a number after a
  CUDA word and "error"/"code"/"returned", `CudaAPIError: [N]`, `(N vs. 0)`), Xid lines and GPU names; it is one of
  the error-text engine's evidence providers, so a warp / CuPy / JAX / numba / TensorFlow / C++ program's words reach
  the same code as torch's sentence.
- `host-compiler-unsupported` names the first CUDA release that accepts the next GCC; `toolkit-arch-unsupported` names
  the nvcc releases that accept the requested `compute_XY`; `python-unsupported` says when PyPI has no wheel of the
  pinned torch for this Python on macOS, Windows or Linux aarch64.
"""


def main() -> None:
    lines = [
        "# Knowledge tables (`cudadoctor/kb/`)",
        "",
        "Facts from outside the project live as data in `cudadoctor/kb/*.json`, each with its source URLs, the date it",
        "was checked and notes on how it was made; `cudadoctor/kb/__init__.py` is the only reader (`cudadoctor kb` lists",
        "them). Written by `benchmarks/kb_tables_doc.py`.",
        "",
        "| table | what it holds | rows | checked | sources |",
        "|---|---|---|---|---|",
    ]
    for n in kb.TABLES:
        d = kb._load(n)
        what, rows = WHAT.get(n, ("(see the table's notes)", lambda d: "-"))
        srcs = "; ".join(f"[{s['title'][:70]}]({s['url']})" for s in d["sources"])
        lines.append(f"| `{n}.json` | {what} | {rows(d)} | {d['checked']} | {srcs} |")
    DOC.write_text("\n".join(lines) + "\n" + TAIL, encoding="utf-8")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
