"""Hugging Face ZeroGPU Spaces (session 16): a Space whose GPU is lent per call, only inside functions decorated with
@spaces.GPU, and only with the torch releases the platform provides. Its own messages (kb/errors/cuda16.json):

- zerogpu-cuda-initialized-in-main-process: "CUDA must not be initialized in the main process on Spaces with
  Stateless GPU environment": CUDA touched at start-up (a model moved to the GPU at import, device_map="cuda").
- zerogpu-torch-version-unsupported: "No candidate PyTorch version found for ZeroGPU": the requirements pin a torch
  the platform does not provide.

Pure: no I/O. https://huggingface.co/docs/hub/spaces-zerogpu
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, check

from ._common import text_finding

_DOCS = "https://huggingface.co/docs/hub/spaces-zerogpu"

ZEROGPU_CUDA_INITIALIZED_IN_MAIN_PROCESS = Code(
    code="zerogpu-cuda-initialized-in-main-process",
    title="A ZeroGPU Space touches CUDA at start-up, outside a @spaces.GPU function",
    area="system",
    severity="error",
    explanation={
        "what": 'The Space fails with "CUDA must not be initialized in the main process on Spaces with Stateless GPU '
        'environment".',
        "why": "On ZeroGPU hardware a GPU is attached only while a function decorated with @spaces.GPU runs; the main "
        "process has none. Moving a model to CUDA at import time (model.to('cuda'), from_pretrained(..., "
        "device_map='cuda')), calling torch.cuda functions at start-up, or a library that initialises CUDA on import "
        "(vLLM, some extensions) is refused.",
        "confirm": "The stack trace printed after the message names the line that initialised CUDA.",
        "fix": "Load models on the CPU at start-up and move them to the GPU inside the @spaces.GPU function (or "
        "`model.to('cuda')` at module level, which ZeroGPU intercepts, instead of device_map='cuda'); keep torch.cuda "
        "calls inside decorated functions; libraries that need CUDA at start-up need a Space with dedicated GPU "
        "hardware.",
    },
    links=(_DOCS, "https://github.com/vllm-project/vllm/issues/3510"),
)

ZEROGPU_TORCH_VERSION_UNSUPPORTED = Code(
    code="zerogpu-torch-version-unsupported",
    title="The Space pins a torch release ZeroGPU does not provide",
    area="torch",
    severity="error",
    explanation={
        "what": 'The Space fails to build with "Configuration error: No candidate PyTorch version found for ZeroGPU".',
        "why": "ZeroGPU Spaces run only the torch releases (and Python and Gradio versions) the platform supports; a "
        "requirements.txt pinning another torch has no candidate.",
        "confirm": "requirements.txt's torch line against the supported versions in the ZeroGPU documentation.",
        "fix": "Pin torch to a release the ZeroGPU documentation lists (or leave it unpinned), and rebuild the Space.",
    },
    links=(_DOCS,),
)


@check(ZEROGPU_CUDA_INITIALIZED_IN_MAIN_PROCESS)
def zerogpu_cuda_initialized_in_main_process(fx: Facts) -> Iterator[Finding]:
    yield from text_finding(
        ZEROGPU_CUDA_INITIALIZED_IN_MAIN_PROCESS,
        fx,
        "The ZeroGPU Space initialises CUDA at start-up: the GPU exists only inside @spaces.GPU functions",
        (
            "# load on the CPU at start-up: from_pretrained(..., device_map='cpu') (not 'cuda' / 'auto')",
            "# move to the GPU inside the decorated function (or model.to('cuda') at module level, which ZeroGPU intercepts):",
            "@spaces.GPU\ndef generate(...): model.to('cuda'); ...",
            "# the stack trace after the message names the line that touched CUDA",
        ),
        "ZeroGPU attaches a GPU only while a @spaces.GPU function runs; the main process must not initialise CUDA.",
    )


@check(ZEROGPU_TORCH_VERSION_UNSUPPORTED)
def zerogpu_torch_version_unsupported(fx: Facts) -> Iterator[Finding]:
    yield from text_finding(
        ZEROGPU_TORCH_VERSION_UNSUPPORTED,
        fx,
        "The Space's requirements pin a torch release ZeroGPU does not provide",
        (f"# pin torch to a release listed at {_DOCS} (or unpin it) in requirements.txt, then rebuild the Space",),
        "ZeroGPU runs only the torch releases the platform supports.",
    )


def register():
    return [zerogpu_cuda_initialized_in_main_process, zerogpu_torch_version_unsupported]
