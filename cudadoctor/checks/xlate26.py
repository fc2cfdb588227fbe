"""CUDA code run through a translation layer on a non-NVIDIA GPU (session 26, from blind batches b186 and b174 and the
threads behind them: SCALE's scale-validation issues #27, #39 and their neighbours, ZLUDA#186):

- cuda-translation-layer-gap: the report runs CUDA code through SCALE (Spectral Compute's CUDA compiler for AMD GPUs) or
  ZLUDA (a drop-in CUDA runtime on AMD/Intel GPUs) and a CUDA API, header, library function or inline-PTX instruction
  fails there: the layer does not implement it (yet), or this release of the layer is older than what the program
  uses. The same code builds and runs with NVIDIA's toolkit on an NVIDIA GPU; the fix is the layer's newer release or
  its tracker, not NVIDIA's stack. non-nvidia-gpu stands down here (the reporter runs CUDA on that GPU on purpose).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

CUDA_TRANSLATION_LAYER_GAP = Code(
    code="cuda-translation-layer-gap",
    title="The CUDA translation layer (SCALE, ZLUDA) does not implement what the program uses",
    area="packages",
    severity="warning",
    explanation={
        "what": "CUDA code run on an AMD (or Intel) GPU through SCALE or ZLUDA fails where NVIDIA's toolkit on an NVIDIA "
        "GPU succeeds: an undeclared CUDA identifier or header ('cuda_pipeline.h' file not found, cudaSurfaceObject_t), "
        "a cuSOLVER/cuBLAS function the layer lacks, an inline-PTX instruction it rejects, CUBLAS_STATUS_NOT_SUPPORTED, "
        "'Failed to configure CUDA context' after the application moved on.",
        "why": "Translation layers implement CUDA's APIs, libraries and PTX on another vendor's GPU piece by piece; what "
        "they do not implement yet (or implement wrongly in a release) fails at build or run time, and an older release "
        "of the layer lacks what newer applications use.",
        "confirm": "The layer's version (scale --version / the ZLUDA release); the same code with NVIDIA's nvcc on an "
        "NVIDIA GPU builds and runs; the layer's issue tracker or changelog lists the API.",
        "fix": "Update the layer to its newest release (SCALE's and ZLUDA's changelogs list what each adds), report the "
        "missing API on its tracker, or use the application's native ROCm/HIP (or CPU) build for that GPU.",
    },
    links=(
        "https://github.com/spectral-compute/scale-validation/issues/27",
        "https://github.com/spectral-compute/scale-validation/issues/39",
        "https://github.com/vosen/ZLUDA/issues/186",
    ),
)

#: The layers by name: ZLUDA; SCALE in capitals (a common word otherwise) with its vendor or target beside it.
_ZLUDA = re.compile(r"\bZLUDA\b", re.I)
_SCALE = re.compile(r"(?-i:\bSCALE(?:-AMD|-NVIDIA)?\b)|\bspectral[- ]compute\b|\bscale-validation\b", re.I)
_SCALE_CONTEXT = re.compile(r"SCALE-AMD|spectral|\bgfx\d{3,4}\b|\bAMD\b|\bROCm\b|\bHIP\b", re.I)


def translation_layer(text: str) -> Optional[str]:
    """'ZLUDA' or 'SCALE' when the text runs CUDA through one; None otherwise."""
    if _ZLUDA.search(text):
        return "ZLUDA"
    if _SCALE.search(text) and _SCALE_CONTEXT.search(text):
        return "SCALE"
    return None


_FAILED = re.compile(r"error|fail|not found|not supported|abort", re.I)


def layer_failure(text: str) -> Optional[Tuple[str, str]]:
    """(layer, the first failing line) when the text runs CUDA through a translation layer and shows a failure."""
    layer = translation_layer(text) if text.strip() else None
    failed = next((ln.strip() for ln in text.splitlines() if _FAILED.search(ln)), None) if layer else None
    return (layer, failed) if layer and failed else None


@check(CUDA_TRANSLATION_LAYER_GAP)
def cuda_translation_layer_gap(fx: Facts) -> Iterator[Finding]:
    found = layer_failure(text_of(fx))
    if not found:
        return
    layer, failed = found
    yield CUDA_TRANSLATION_LAYER_GAP.finding(
        title=f"Likely: {layer} (a CUDA translation layer on a non-NVIDIA GPU) does not implement what this code uses: "
        f"update {layer} or report it there",
        evidence={"layer": layer, "failed": failed[:240]},
        fix=Fix(
            (
                f"# the newest {layer} release (its changelog lists the CUDA APIs, libraries and PTX it adds)",
                f"# if it still fails: report the API or instruction on {layer}'s issue tracker with a minimal repro",
                "# or the application's native ROCm/HIP (or CPU) build for this GPU",
            ),
            f"{layer} implements CUDA on another vendor's GPU piece by piece; NVIDIA's toolkit is not involved.",
        ),
    )


def register():
    return [cuda_translation_layer_gap]
