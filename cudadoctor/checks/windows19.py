"""CUDA tensors shared between processes on Windows (session 19, from blind batch b76 and its class's threads):

- windows-cuda-ipc-unsupported: "cuda runtime error (801) : operation not supported at ...\\StorageSharing.cpp" (older
  builds: "OS call failed or operation not supported on this OS"): a CUDA tensor was sent to another process (DataLoader
  workers returning CUDA tensors, a Dataset that moves data to the GPU, torch.multiprocessing / A3C workers). CUDA's
  inter-process sharing does not exist on Windows; PyTorch's Windows notes say so ("CUDA IPC operations"), and the
  maintainers answer "You cannot share CUDA tensors across processes on Windows" (pytorch#36037).

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, check

from ._common import text_finding

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


@check(WINDOWS_CUDA_IPC_UNSUPPORTED)
def windows_cuda_ipc_unsupported(fx: Facts) -> Iterator[Finding]:
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
    return [windows_cuda_ipc_unsupported]
