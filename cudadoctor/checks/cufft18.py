"""cuFFT of torch's CUDA 11.7-and-older builds on Ada and Hopper GPUs (session 18): torch.stft / torch.fft on an RTX
40xx, L4, L40 or H100 fail with "cuFFT error: CUFFT_INTERNAL_ERROR" when torch was built with CUDA 11.7 or older: that
cuFFT has no code for sm_89/sm_90 and, unlike torch's own kernels, does not run through forward compatibility
(pytorch/pytorch#88038: "cufft library doesn't support forward compatibility guarantee"; CUDA 11.8 added the
architectures; a torch built with CUDA 11.8 or newer fixes it). Audio code meets it first (spectrograms:
whisper front ends, TTS, voice conversion, AudioLDM, NeMo).

- cufft-cu117-ada-unsupported: the error text has CUFFT_INTERNAL_ERROR, and nothing shows a torch built with CUDA 11.8
  or newer or a GPU older than Ada. An error when an Ada/Hopper GPU and a torch built with CUDA <= 11.7 are both
  shown; a warning ("Likely") when either is unknown.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator, Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret import cap_number, gpus, torch_cuda
from cudadoctor.interpret.versions import mm
from cudadoctor.model import Code, Finding, Fix, check

from ._common import INDEX, PIP, search

CUFFT_CU117_ADA_UNSUPPORTED = Code(
    code="cufft-cu117-ada-unsupported",
    title="cuFFT of a torch built with CUDA 11.7 or older fails on an Ada or Hopper GPU (CUFFT_INTERNAL_ERROR)",
    area="torch",
    severity="error",
    explanation={
        "what": "torch.stft, torch.fft.* (spectrograms in speech and audio code) raise 'RuntimeError: cuFFT error: "
        "CUFFT_INTERNAL_ERROR' on an RTX 40xx, RTX 6000 Ada, L4, L40 or H100, while the rest of the model runs on "
        "the GPU.",
        "why": "torch's CUDA 11.7-and-older builds ship a cuFFT with no code for sm_89 (Ada) and sm_90 (Hopper); torch's "
        "own kernels run there through PTX, cuFFT does not (pytorch/pytorch#88038). CUDA 11.8 added both "
        "architectures; torch's cu118 and newer builds work.",
        "confirm": 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0)); '
        'print(torch.fft.rfft(torch.randn(1000).cuda()).shape)"  # 11.7 or older and the error: this',
        "fix": f"Install a torch built with CUDA 11.8 or newer: {PIP} install --force-reinstall torch torchvision "
        f"torchaudio --index-url {INDEX}cu118 (or a newer cuXYZ your driver runs); with conda, pytorch-cuda=11.8 or "
        "newer instead of 11.7.",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/88038",
        "https://forums.developer.nvidia.com/t/bug-ubuntu-on-wsl2-rtx4090-related-cufft-runtime-error/230883",
        "https://docs.nvidia.com/cuda/archive/11.8.0/cuda-toolkit-release-notes/index.html",
    ),
)

_SAID = r"\bcuFFT error:?\s*[`'\"]?CUFFT_INTERNAL_ERROR\b|\bCUFFT_INTERNAL_ERROR\b"


def _ada_or_newer(fx: Facts) -> Optional[bool]:
    """True if a GPU of compute capability 8.9 or 9.0 is named, False if only older or newer ones are (Blackwell
    fails earlier, in torch's own kernels), None if no GPU's capability is known."""
    caps = [cap_number(g.get("capability")) for g in gpus(fx)]
    known = [c for c in caps if c is not None]
    if not known:
        return None
    return any(c in (89, 90) for c in known)


@check(CUFFT_CU117_ADA_UNSUPPORTED)
def cufft_cu117_ada_unsupported(fx: Facts) -> Iterator[Finding]:
    said = search(fx, _SAID)
    if not said:
        return
    ada = _ada_or_newer(fx)
    cuda = torch_cuda(fx)
    got = mm(cuda) if cuda else None
    old = got < (11, 8) if got else None
    if ada is False or old is False:
        return  # a GPU cuFFT 11.7 knows, or a torch whose cuFFT knows Ada: another cause
    gpu = next((str(g.get("name")) for g in gpus(fx) if cap_number(g.get("capability")) in (89, 90)), None)
    both = bool(ada and old)
    title = (
        f"torch built with CUDA {cuda} has a cuFFT that fails on the {gpu}: install a cu118 or newer build"
        if both
        else "Likely: cuFFT of a torch built with CUDA 11.7 or older on an Ada/Hopper GPU (RTX 40xx, L4, L40, H100)"
    )
    yield CUFFT_CU117_ADA_UNSUPPORTED.finding(
        title=title,
        evidence={said[0]: said[1], "torch.cuda": cuda, "gpu": gpu},
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"'
                "  # CUDA 11.7 or older with an RTX 40xx / L4 / L40 / H100: this",
                f"{PIP} install --force-reinstall torch torchvision torchaudio --index-url {INDEX}cu118"
                "  # or a newer cuXYZ your driver runs; conda: pytorch-cuda=11.8 or newer",
            ),
            "The cuFFT in torch's CUDA 11.7-and-older builds has no code for Ada and Hopper GPUs; CUDA 11.8's has.",
        ),
        severity="error" if both else "warning",
    )


def register():
    return [cufft_cu117_ada_unsupported]
