"""Triton's kernels against the GPU and the ptxas that assembles them (session 21, from blind batch b102 and the threads
behind it):

- kernel-shared-memory-exceeds-gpu: Triton compiled a kernel whose configuration (block sizes, ``num_stages``) needs more
  shared memory per block than this GPU has, and refuses it: "out of resource: shared memory, Required: N, Hardware
  limit: M. Reducing block sizes or `num_stages` may help." (Triton's OutOfResources, python/triton/runtime/errors.py).
  The configurations were tuned on data-centre GPUs with more shared memory per block (A100, H100) than GeForce and
  workstation cards or Turing have; the program's kernel, not the install, has to change (smaller blocks, fewer stages:
  what the maintainers did in PainlessInferenceAcceleration#35, DEST3D#2, triton#384) or another GPU is needed.
- ptxas-ptx-version-mismatch: the ptxas that assembles a kernel is from another CUDA release than the PTX the compiler
  wrote — a ptxas binary run on a .ptx file (Triton's, XLA's, or the user's own nvcc) refusing it with "Unsupported
  .version X; current version is 'Y'" (kb/ptx_isa.json names both releases), or a Triton release whose CUDA-to-PTX
  table does not know the CUDA its ptxas comes from ("Triton only support CUDA 10.0 or higher, but got CUDA version:
  12.8", triton#5737; triton#4576, triton#5385). Not the driver: the driver's own JIT ("ptxas application ptx input") is
  driver-too-old (checks/ptx11.py, driver_compat.py).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match
from .ptx11 import ptxas_file_too_old

KERNEL_SHARED_MEMORY_EXCEEDS_GPU = Code(
    code="kernel-shared-memory-exceeds-gpu",
    title="A Triton kernel's configuration needs more shared memory per block than this GPU has",
    area="gpu",
    severity="warning",
    explanation={
        "what": "A program's Triton kernel fails to launch with \"triton.runtime.errors.OutOfResources: out of resource: "
        'shared memory, Required: 163842, Hardware limit: 101376. Reducing block sizes or `num_stages` may help." '
        "torch, CUDA and the driver work.",
        "why": "Each Triton kernel configuration (block sizes, num_stages: how many tiles are staged in shared memory) "
        "needs a fixed amount of shared memory per thread block. GPUs differ: data-centre Ampere and Hopper (A100, H100) "
        "allow far more per block than GeForce/workstation Ampere, Ada and Blackwell cards or Turing. A configuration "
        "written and tested on the larger GPUs does not fit the smaller ones, and Triton refuses to launch it.",
        "confirm": "The message's two numbers: Required is what the kernel asks, Hardware limit what this GPU allows "
        'per block (`python -c "import torch; print(torch.cuda.get_device_properties(0))"` names the GPU). The '
        "program's kernel (its triton.Config / num_stages / BLOCK sizes) is in the traceback.",
        "fix": "Use a configuration that fits: lower num_stages (often 2 or 1) or the block sizes in the program's "
        "kernel, or an option the program offers for smaller GPUs; smaller model settings where they size the kernel's "
        "tiles (a head dimension of 512 fits no GPU's shared memory in some kernels); update the program (maintainers "
        "add configurations for consumer GPUs after such reports); or run on a GPU with more shared memory per block "
        "(A100, H100). Reinstalling torch, Triton or the driver does not change it. A warning: the install works; the "
        "program's kernel (or the model's settings) must change.",
    },
    links=(
        "https://github.com/triton-lang/triton/blob/main/python/triton/runtime/errors.py",
        "https://github.com/triton-lang/triton/issues/384",
        "https://github.com/alipay/PainlessInferenceAcceleration/issues/35",
        "https://github.com/OpenSpaceAI/DEST3D/issues/2",
    ),
)

PTXAS_PTX_VERSION_MISMATCH = Code(
    code="ptxas-ptx-version-mismatch",
    title="The ptxas assembling a kernel and the PTX it is given come from different CUDA releases",
    area="toolkit",
    severity="error",
    explanation={
        "what": 'Compiling a kernel (Triton, XLA, or PTX assembled by hand) fails in ptxas: "ptxas /tmp/x.ptx, line 5; '
        "fatal   : Unsupported .version 8.6; current version is '8.5'\", or Triton refuses the CUDA it found: "
        '"Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8".',
        "why": "Each CUDA release's compiler writes, and its ptxas reads, PTX up to one ISA version. Triton picks the "
        "PTX version from the CUDA version of the ptxas it uses (its bundled one, or TRITON_PTXAS_PATH), with a table "
        "of known releases: a ptxas from an older CUDA than the PTX (a system nvcc on Triton's PTX, an older toolkit "
        "put first) refuses it, and a Triton release older than the CUDA of its ptxas does not know that CUDA. The "
        "driver is not involved (the driver's JIT says 'ptxas application ptx input': driver-too-old).",
        "confirm": "`ptxas --version` of the ptxas that ran (the path in the message; `echo $TRITON_PTXAS_PATH`); "
        '`python -c "import triton; print(triton.__version__)"`; NVIDIA\'s PTX ISA release notes give the CUDA '
        "release of each .version.",
        "fix": "Let one CUDA release do both: use Triton's bundled ptxas (unset TRITON_PTXAS_PATH) or point it at a ptxas "
        "from a CUDA at least as new as the PTX; upgrade Triton to a release that knows this CUDA (with torch, the "
        "Triton that torch release pins); assemble a hand-exported .ptx with a CUDA toolkit at least that new.",
    },
    links=(
        "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#release-notes",
        "https://github.com/triton-lang/triton/issues/5737",
        "https://github.com/triton-lang/triton/issues/4576",
        "https://github.com/triton-lang/triton/issues/5385",
    ),
)

_SHARED = re.compile(r"Required:\s*(?P<req>\d+)\s*,?\s*Hardware limit(?:ation)?:\s*(?P<lim>\d+)", re.I)


@check(KERNEL_SHARED_MEMORY_EXCEEDS_GPU)
def kernel_shared_memory_exceeds_gpu(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, KERNEL_SHARED_MEMORY_EXCEEDS_GPU)
    if not said:
        return
    m = _SHARED.search(said[1])
    need = f" ({m.group('req')} bytes asked, {m.group('lim')} allowed per block)" if m else ""
    yield KERNEL_SHARED_MEMORY_EXCEEDS_GPU.finding(
        title=f"A Triton kernel's configuration needs more shared memory per block than this GPU has{need}",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "# in the program's Triton kernel: lower num_stages (2, then 1) or the BLOCK sizes of its triton.Config",
                "# or the model settings that size the kernel's tiles (head dimension, block size); update the program / "
                "use its option for smaller GPUs; or run on a GPU with more shared memory per block (A100, H100)",
            ),
            "The kernel's configuration was tuned for GPUs with more shared memory per block; reinstalling does not change it.",
        ),
    )


@check(PTXAS_PTX_VERSION_MISMATCH)
def ptxas_ptx_version_mismatch(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, PTXAS_PTX_VERSION_MISMATCH)
    if not said:
        return
    evidence: Dict[str, str] = {said[0]: said[1]}
    got = ptxas_file_too_old(said[1])
    if got:
        title = (
            f"The ptxas that ran reads PTX ISA up to {got.have_ptx} (CUDA {got.have_cuda} or a later minor) but was "
            f"given PTX {got.want_ptx}, which needs the ptxas of CUDA {got.want_cuda} or newer"
        )
        evidence["ptx needs CUDA"] = got.want_cuda
        evidence["ptxas reads PTX up to"] = got.have_ptx
    elif "ptxas" in said[1].lower():
        title = "The ptxas that assembled the kernel is older than the PTX it was given"
    else:
        title = "This Triton release does not know the CUDA version of the ptxas it found"
    yield PTXAS_PTX_VERSION_MISMATCH.finding(
        title=title,
        evidence=evidence,
        fix=Fix(
            (
                "echo $TRITON_PTXAS_PATH  # set: unset it to use Triton's own ptxas, or point it at a newer CUDA's ptxas",
                'python -c "import triton; print(triton.__version__)"  # upgrade Triton to a release that knows this CUDA',
                "ptxas --version  # a hand-exported .ptx: assemble it with a CUDA toolkit at least as new as its .version",
            ),
            "The PTX and the ptxas that reads it must come from the same CUDA release or the ptxas from a newer one.",
        ),
    )


def register():
    return [kernel_shared_memory_exceeds_gpu, ptxas_ptx_version_mismatch]
