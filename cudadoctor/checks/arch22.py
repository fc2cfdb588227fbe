"""A build whose CUDA predates the GPU, seen as a CUDA library's status failure (session 22, from blind batch b121).

cuDNN, cuBLAS, cuRAND and cuSPARSE of a CUDA release carry kernels for the GPU architectures that release knows. A
program (or torch) built with an older CUDA fails on a newer GPU at its first library call, in the library's words
rather than "no kernel image": CUDNN_STATUS_EXECUTION_FAILED (darknet with CUDA 9.0 on an RTX 2070, AlexeyAB/darknet;
torch 1.4 on an RTX 3090, UFold), CUBLAS_STATUS_NOT_INITIALIZED / INTERNAL_ERROR at cublasCreate (a CUDA 10 torch on an
RTX 30), CURAND_STATUS_LAUNCH_FAILURE (DyNet on a Pascal GPU with a CUDA before 8.0), "operation not supported when
calling cusparseCreate" (torch 1.7.1 with CUDA 11.0 on an RTX 4080). The first CUDA per architecture is
kb/cuda_arch_support.json (clang's MinVersionForCudaArch, nvcc's targets). Where the text shows such a failure, the
CUDA of the build is stated and the GPU's architecture is newer than that CUDA, the build lacks the GPU: a warning (the
library's status names the symptom, the versions the cause), for torch (gpu-arch-unsupported, called by checks/arch.py)
or for another program (companion-arch-unsupported, called by checks/extensions.py), the codes' owners.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Optional, Tuple

from cudadoctor import kb
from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import gpus
from cudadoctor.interpret.versions import mm
from cudadoctor.model import Code, Finding, Fix

from ._common import search

#: A CUDA library's failure at its first calls, in its own status words (cuDNN, cuBLAS, cuRAND, cuSPARSE), or the
#: runtime's pre-CUDA-11 "invalid device function". Out of memory (ALLOC_FAILED) and a data type the GPU lacks
#: (NOT_SUPPORTED beside bf16/fp8) are other classes and are not read here.
LIB_FAILED = (
    r"CUDNN_STATUS_(?:NOT_INITIALIZED|EXECUTION_FAILED|ARCH_MISMATCH|INTERNAL_ERROR)"
    r"|CUBLAS_STATUS_(?:NOT_INITIALIZED|EXECUTION_FAILED|ARCH_MISMATCH|INTERNAL_ERROR)"
    r"|CURAND_STATUS_LAUNCH_FAILURE|CURAND failure\b[^\n]{0,80}\n?\s*201\b"
    r"|operation not supported when calling `?cusparseCreate|invalid device function"
)
_DTYPE = re.compile(r"bf16|bfloat16|fp8|float8", re.I)


def _arch(cap: str) -> Optional[str]:
    """'8.6' -> 'sm_86', '12.0' -> 'sm_120'."""
    m = re.fullmatch(r"(\d{1,2})\.(\d)", cap or "")
    return f"sm_{m.group(1)}{m.group(2)}" if m else None


def newer_gpu(fx: Facts, cuda: Optional[str]) -> Optional[Tuple[Dict[str, Any], str, str]]:
    """(GPU, its architecture, the first CUDA that builds for it) for the first GPU of the facts whose architecture
    came after ``cuda`` (7.0 or later); None when every GPU's is older or unknown, or ``cuda`` is not known."""
    have = mm(cuda) if cuda else None
    if have is None or have < (7, 0):
        return None
    for g in gpus(fx):
        arch = _arch(str(g.get("capability") or ""))
        first = kb.first_cuda_of_arch(arch) if arch else None
        if first and (mm(first) or (0, 0)) > have:
            return g, str(arch), first
    return None


def library_failure(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, line) of a CUDA library's first-call failure in the facts' texts; None when absent or beside a data
    type the GPU may lack."""
    said = search(fx, LIB_FAILED)
    return None if not said or _DTYPE.search(said[1]) else said


def predates(
    fx: Facts, code: Code, cuda: Optional[str], whose: str, fix: Callable[[Dict[str, Any], str], Tuple[str, ...]]
) -> Optional[Finding]:
    """``code`` as a warning when a CUDA library failed at its first calls and the GPU's architecture came after
    ``cuda``, the CUDA that ``whose`` (torch's build, the program) was built with; ``fix(gpu, first_cuda)`` gives
    the commands."""
    said = library_failure(fx)
    newer = newer_gpu(fx, cuda) if said else None
    if not said or not newer:
        return None
    g, arch, first = newer
    name = g.get("name") or "the GPU"
    return code.finding(
        title=f"Likely: {whose} was built with CUDA {cuda}, older than {name} ({arch}, first built by CUDA {first}): "
        "its CUDA libraries have no kernels for this GPU",
        evidence={
            said[0]: said[1][:300],
            "cuda": f"{cuda} ({whose})",
            "gpu": f"{name} (compute capability {g.get('capability')}, {arch}: CUDA {first} or newer; kb/cuda_arch_support.json)",
        },
        fix=Fix(
            fix(g, first),
            f"cuDNN, cuBLAS and cuRAND of CUDA {cuda} predate {arch}; a build made with CUDA {first} or newer has its kernels.",
        ),
        severity="warning",
    )
