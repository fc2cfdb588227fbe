"""CUDA tensors shared between processes on Windows (session 19, from blind batch b76 and its class's threads):

- windows-cuda-ipc-unsupported: "cuda runtime error (801) : operation not supported at ...\\StorageSharing.cpp" (older
  builds: "OS call failed or operation not supported on this OS"): a CUDA tensor was sent to another process (DataLoader
  workers returning CUDA tensors, a Dataset that moves data to the GPU, torch.multiprocessing / A3C workers). CUDA's
  inter-process sharing does not exist on Windows; PyTorch's Windows notes say so ("CUDA IPC operations"), and the
  maintainers answer "You cannot share CUDA tensors across processes on Windows" (pytorch#36037).

- jetson-cuda-ipc-unsupported (session 23, b155): the same failure on a Jetson ("cuda runtime error (71) : operation
  not supported at .../StorageSharing.cpp" on a TX2): CUDA's IPC functions are not supported on Tegra platforms
  either (the CUDA runtime API's cudaIpcGetMemHandle: "IPC functionality is not supported on Tegra platforms"). The
  Windows code's wordings are read; a Jetson named gives this code instead.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_finding, text_of
from .jetson18 import _jetson

WINDOWS_CUDA_IPC_UNSUPPORTED = Code(
    code="windows-cuda-ipc-unsupported",
    title="CUDA tensors cannot be shared between processes on Windows",
    area="system",
    severity="error",
    explanation={
        "what": "Training or prediction on Windows stops with 'cuda runtime error (801) : operation not supported at "
        "...\\torch/csrc/generic/StorageSharing.cpp' (or 'OS call failed or operation not supported on this OS'), raised "
        "while a CUDA tensor is pickled for another process: DataLoader workers (num_workers > 0) returning CUDA tensors, a "
        "Dataset or collate function that moves data to the GPU, torch.multiprocessing workers (A3C and other RL code).",
        "why": "Sharing a CUDA tensor with another process uses CUDA IPC (cudaIpcGetMemHandle), which CUDA does not "
        "support on Windows; PyTorch documents it as unsupported there. The install and the GPU are fine.",
        "confirm": "The traceback passes through torch/multiprocessing/reductions.py (reduce_tensor, storage._share_cuda_) "
        "or a DataLoader worker; the same code with num_workers=0 runs.",
        "fix": "Keep tensors on the CPU in worker processes and move them to the GPU in the main process (in the training "
        "loop, or with pin_memory=True); or set num_workers=0 (fastai: DataLoaders(..., num_workers=0)); or run the "
        "program under WSL 2 or Linux, where CUDA IPC exists.",
    },
    links=(
        "https://pytorch.org/docs/stable/notes/windows.html#cuda-ipc-operations",
        "https://github.com/pytorch/pytorch/issues/36037",
        "https://github.com/fastai/fastbook/issues/85",
    ),
)


JETSON_CUDA_IPC_UNSUPPORTED = Code(
    code="jetson-cuda-ipc-unsupported",
    title="CUDA tensors cannot be shared between processes on a Jetson (Tegra)",
    area="system",
    severity="error",
    explanation={
        "what": "On a Jetson (Nano, TX2, Xavier, Orin) a program stops with 'cuda runtime error (71) : operation not "
        "supported at .../StorageSharing.cpp' (or 'operation not supported' from a DataLoader worker or a "
        "torch.multiprocessing queue) while a CUDA tensor is sent to another process.",
        "why": "Sharing a CUDA tensor with another process uses CUDA IPC (cudaIpcGetMemHandle); IPC functionality is not "
        "supported on Tegra platforms. The install and the GPU are fine.",
        "confirm": "The traceback passes through StorageSharing.cpp or torch/multiprocessing/reductions.py; the same code "
        "with num_workers=0 (or the program's single-process option) runs.",
        "fix": "Keep tensors on the CPU in worker processes and move them to the GPU in the main process, or run with "
        "num_workers=0 / the program's single-process mode (AlphaPose: --sp).",
    },
    links=(
        "https://docs.rs/rcudnn/latest/rcudnn/fn.cudaIpcGetMemHandle.html",
        "https://pytorch.org/docs/stable/multiprocessing.html",
    ),
)

#: Boards and prompts checks/jetson18.py's Jetson entity does not name: the TX1/TX2 modules, L4T's default shell prompt.
_TEGRA_EXTRA = re.compile(r"\bTX[12]\b|nvidia@nvidia-desktop", re.I)


def _on_jetson(fx: Facts) -> bool:
    """A Jetson named in the facts or the text: jetson18's entity (OS, kernel, text, container, NVML names), plus the
    boards it does not list."""
    text = text_of(fx)
    return bool(_jetson(fx, text) or _TEGRA_EXTRA.search(text))


@check(JETSON_CUDA_IPC_UNSUPPORTED)
def jetson_cuda_ipc_unsupported(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, WINDOWS_CUDA_IPC_UNSUPPORTED)  # the same failure's words (kb wordings of the Windows code)
    if not said or not _on_jetson(fx):
        return
    yield JETSON_CUDA_IPC_UNSUPPORTED.finding(
        title="A CUDA tensor was sent to another process, which CUDA does not support on a Jetson (Tegra): keep worker "
        "data on the CPU",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "# DataLoader(..., num_workers=0), or return CPU tensors from the Dataset and call .to('cuda') in the main process",
                "# or the program's single-process option (AlphaPose: --sp)",
            ),
            "CUDA IPC is not supported on Tegra platforms (CUDA runtime API, cudaIpcGetMemHandle).",
        ),
    )


@check(WINDOWS_CUDA_IPC_UNSUPPORTED)
def windows_cuda_ipc_unsupported(fx: Facts) -> Iterator[Finding]:
    if _on_jetson(fx):
        return  # the same words on a Jetson: jetson-cuda-ipc-unsupported
    yield from text_finding(
        WINDOWS_CUDA_IPC_UNSUPPORTED,
        fx,
        "A CUDA tensor was sent to another process, which CUDA does not support on Windows: keep worker data on the CPU",
        (
            "# DataLoader(..., num_workers=0), or return CPU tensors from the Dataset and call .to('cuda') in the training loop",
            "# fastai: DataLoaders / dls = ...(..., num_workers=0); torch.multiprocessing workers: pass CPU tensors",
            "# or run the program under WSL 2 or Linux, where CUDA IPC exists",
        ),
        "CUDA's inter-process memory sharing (IPC) does not exist on Windows; PyTorch documents it as unsupported there.",
    )


def register():
    return [windows_cuda_ipc_unsupported, jetson_cuda_ipc_unsupported]
