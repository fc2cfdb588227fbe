"""A torch build without a kernel a program asks for (session 21, from blind batch b100 and the threads behind it):

- torch-windows-lacks-scaled-mm: torch's fp8 matrix multiply (torch._scaled_mm, used by ComfyUI's --fast, fp8 model
  wrappers) was compiled out of Windows builds before torch 2.4: aten/src/ATen/native/cuda/Blas.cpp guarded it with
  ``#if !defined(USE_ROCM) && !defined(_MSC_VER)`` and raised "_scaled_mm_out_cuda is not compiled for this platform."
  otherwise. Updating torch to 2.4 or later fixed it in ComfyUI#4539 and ComfyUI-CogVideoXWrapper#160.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Dict, Iterator, Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret import release_of, torch_version
from cudadoctor.interpret.versions import mm
from cudadoctor.model import Code, Finding, Fix, check

from ._common import INDEX, PIP, error_match

TORCH_WINDOWS_LACKS_SCALED_MM = Code(
    code="torch-windows-lacks-scaled-mm",
    title="This torch build has no fp8 matrix multiply (torch._scaled_mm): Windows builds before torch 2.4 left it out",
    area="torch",
    severity="error",
    explanation={
        "what": 'An fp8 path (ComfyUI --fast, an fp8 model wrapper) fails with "_scaled_mm_out_cuda is not compiled for '
        'this platform." while the rest of the GPU work runs.',
        "why": "torch._scaled_mm multiplies fp8 matrices with cuBLASLt. Up to torch 2.3 its CUDA kernel was compiled "
        "only where the compiler was not MSVC (aten/src/ATen/native/cuda/Blas.cpp: `#if !defined(USE_ROCM) && "
        "!defined(_MSC_VER)`), so every Windows build raised this error instead; torch 2.4 and later have it on "
        "Windows too. (fp8 itself also needs an Ada or newer GPU: gpu-lacks-fp8.)",
        "confirm": '`python -c "import torch, platform; print(torch.__version__, platform.system())"`: a release before '
        "2.4 on Windows.",
        "fix": "Install torch 2.4 or later in the environment the program uses (pip install --upgrade torch torchvision "
        "--index-url https://download.pytorch.org/whl/cu124, or the CUDA variant for your driver; ComfyUI portable: its "
        "update script for the dependencies), or turn the fp8 option off.",
    },
    links=(
        "https://github.com/pytorch/pytorch/blob/v2.3.0/aten/src/ATen/native/cuda/Blas.cpp",
        "https://github.com/Comfy-Org/ComfyUI/issues/4539",
        "https://github.com/kijai/ComfyUI-CogVideoXWrapper/issues/160",
    ),
)


def _before_24(version: Optional[str]) -> Optional[bool]:
    t = mm(release_of(version))
    return t < (2, 4) if t else None


@check(TORCH_WINDOWS_LACKS_SCALED_MM)
def torch_windows_lacks_scaled_mm(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCH_WINDOWS_LACKS_SCALED_MM)
    if not said:
        return
    version = torch_version(fx)
    if _before_24(version) is False:
        return  # torch 2.4 or later has the kernel on Windows: this message has another cause
    evidence: Dict[str, Optional[str]] = {said[0]: said[1], "torch.version": version}
    yield TORCH_WINDOWS_LACKS_SCALED_MM.finding(
        title=(f"torch {version}" if version else "This torch")
        + " has no fp8 matrix multiply (torch._scaled_mm): Windows builds before torch 2.4 left it out",
        evidence=evidence,
        fix=Fix(
            (
                'python -c "import torch, platform; print(torch.__version__, platform.system())"  # before 2.4 on Windows',
                f"{PIP} install --upgrade torch torchvision --index-url {INDEX}cu124  # 2.4 or later; the cuXYZ for your driver",
                "# or turn the program's fp8 option off (ComfyUI: drop --fast)",
            ),
            "torch 2.4 and later compile _scaled_mm into their Windows builds too.",
        ),
    )


def register():
    return [torch_windows_lacks_scaled_mm]
