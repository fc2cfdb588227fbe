"""PyTorch's asynchronous CUDA allocator where the GPU or driver does not support it (session 21, from blind batches b30
and b78 and the threads behind them):

- cuda-malloc-async-unsupported: a program (ComfyUI's --cuda-malloc default, Fooocus's launcher, a one-click
  launcher's allocator setting) switches torch to the stream-ordered allocator (PYTORCH_CUDA_ALLOC_CONF=
  backend:cudaMallocAsync, which calls cudaMallocAsync); where the device or driver has no memory-pool support, CUDA
  answers cudaErrorNotSupported and torch raises "CUDA error: operation not supported" at the first allocation.
  Switching the allocator back to torch's native one fixed it (Fooocus#96: the maintainer removed cuda_malloc;
  ComfyUI-LTXVideo#108: the launcher's allocator set to native). A warning: the same message has other causes (CUDA
  IPC on Windows: windows-cuda-ipc-unsupported), so it is given only where the text shows the async allocator in use.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.errortext import ASYNC_ALLOCATOR, ASYNC_ALLOCATOR_DEFAULT
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import said_or_pasted, search

CUDA_MALLOC_ASYNC_UNSUPPORTED = Code(
    code="cuda-malloc-async-unsupported",
    title="torch's asynchronous allocator (cudaMallocAsync) is not supported on this GPU or driver",
    area="torch",
    severity="warning",
    explanation={
        "what": 'The program stops at its first CUDA allocation with "RuntimeError: CUDA error: operation not supported" '
        "after it switched torch to the cudaMallocAsync allocator (ComfyUI's device line ends in ': cudaMallocAsync'; "
        "--cuda-malloc; PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync).",
        "why": "With backend:cudaMallocAsync torch allocates through CUDA's stream-ordered memory pools. A device or "
        "driver without memory-pool support answers cudaErrorNotSupported, which torch reports as 'operation not "
        "supported'. torch's native caching allocator does not need them.",
        "confirm": "`echo $PYTORCH_CUDA_ALLOC_CONF` (backend:cudaMallocAsync) or the program's start-up line; the same "
        "script with the native allocator runs.",
        "fix": "Use torch's native allocator: ComfyUI `--disable-cuda-malloc`; a launcher's 'CUDA memory allocator' set "
        "to native; unset PYTORCH_CUDA_ALLOC_CONF's backend (or backend:native). Updating the driver can add memory-pool "
        "support on GPUs that have it.",
    },
    links=(
        "https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf",
        "https://github.com/lllyasviel/Fooocus/issues/96",
        "https://github.com/Lightricks/ComfyUI-LTXVideo/issues/108",
    ),
)

_NOT_SUPPORTED = r"CUDA error: operation not supported(?![^\n]{0,200}StorageSharing)|\bcudaErrorNotSupported\b"


@check(CUDA_MALLOC_ASYNC_UNSUPPORTED)
def cuda_malloc_async_unsupported(fx: Facts) -> Iterator[Finding]:
    failed = search(fx, _NOT_SUPPORTED)
    # the allocator named (also in a ComfyUI "Device:" line of the prose), else ComfyUI, which turns it on by default
    allocator = said_or_pasted(fx, ASYNC_ALLOCATOR.pattern, "allocator") if failed else None
    comfy = said_or_pasted(fx, ASYNC_ALLOCATOR_DEFAULT.pattern, "allocator_default") if failed and not allocator else None
    if comfy:
        allocator = (comfy[0], "ComfyUI (cudaMallocAsync by default): " + comfy[1][:200])
    if not (failed and allocator):
        return
    yield CUDA_MALLOC_ASYNC_UNSUPPORTED.finding(
        title="Likely: torch's asynchronous allocator (cudaMallocAsync) is not supported here — use the native allocator",
        evidence={failed[0]: failed[1], "allocator": allocator[1]},
        fix=Fix(
            (
                "# ComfyUI: start with --disable-cuda-malloc; a launcher: set its CUDA memory allocator to native",
                "unset PYTORCH_CUDA_ALLOC_CONF  # or: export PYTORCH_CUDA_ALLOC_CONF=backend:native",
            ),
            "cudaMallocAsync needs CUDA memory-pool support from the device and driver; torch's native allocator does not.",
        ),
    )


def register():
    return [cuda_malloc_async_unsupported]
