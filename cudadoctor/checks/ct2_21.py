"""CTranslate2 (faster-whisper) on a Blackwell GPU (session 21, from blind batches b94 and b118 and the threads behind them):

CTranslate2 reports a failed cuBLAS call in its own words, "cuBLAS failed with status CUBLAS_STATUS_NOT_SUPPORTED"
(or "cuBLAS failed"). On GeForce RTX 50-series GPUs (Blackwell, compute capability 12.0) the CTranslate2 builds that
faster-whisper, Faster-Whisper-XXL and their front-ends shipped before Blackwell support fail this way with their default
quantised compute type; `--compute_type float16` (or a build with Blackwell support) made it run (whisper-standalone-win
#542, SubtitleEdit#10129; pyvideotrans#824's maintainer: the bundled GPU stack lacked the 50 series). The program's build
lacks this GPU (companion-arch-unsupported), as a warning: the text names the GPU, not which build is installed.
Called by checks/extensions.py's companion-arch-unsupported check (the code's owner) where nothing else names a cause.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import gpus
from cudadoctor.model import Code, Finding, Fix

from ._common import search

#: CTranslate2's own wording (torch says "CUDA error: CUBLAS_STATUS_... when calling ...", not "cuBLAS failed").
_CT2_CUBLAS = r"\bcuBLAS failed(?: with status CUBLAS_STATUS_\w+)?"
#: A Blackwell GeForce/workstation GPU named: RTX 50xx, RTX PRO Blackwell, sm_120, compute capability 12.0.
_BLACKWELL = (
    r"(?i)\bRTX\s*50[5-9]0\b|\b50[5-9]0\s*(?:ti|super)?\b|\bRTX\s+PRO\s+\d{4}\s+Blackwell\b|\bsm_?120\b|capability\s*12\.0"
)
#: The program: faster-whisper / CTranslate2, their front-ends, or CTranslate2's compute-type option.
_CT2 = r"(?i)faster[-_ ]?whisper|ctranslate2|whisper[-_ ]standalone|whisperx|compute[-_]type"


def ctranslate2_on_blackwell(fx: Facts, code: Code) -> Optional[Finding]:
    """``code`` (companion-arch-unsupported) as a warning when CTranslate2's "cuBLAS failed" comes with a Blackwell GPU
    and faster-whisper / CTranslate2 named in the report; else None."""
    failed = search(fx, _CT2_CUBLAS)
    if not failed:
        return None
    said = search(fx, _BLACKWELL)
    card = next((g for g in gpus(fx) if str(g.get("capability") or "").split(".")[0] in ("10", "12")), None)
    gpu = said[1] if said else f"{card['name']} (compute capability {card['capability']})" if card else None
    named = search(fx, _CT2) if gpu else None
    if not (gpu and named):
        return None
    return code.finding(
        title="Likely: the CTranslate2 (faster-whisper) build does not support this Blackwell GPU with its quantised "
        "compute type — use --compute_type float16 or a build with RTX 50-series support",
        evidence={failed[0]: failed[1], "gpu": gpu[:200], "program": named[1][:200]},
        fix=Fix(
            (
                "# faster-whisper / Faster-Whisper-XXL: --compute_type float16 (WhisperModel(..., compute_type='float16'))",
                "pip install -U ctranslate2 faster-whisper  # a CTranslate2 release built with Blackwell (sm_120) support; "
                "for a bundled app, its release for the RTX 50 series",
            ),
            "CTranslate2 builds made before Blackwell fail their int8 cuBLAS calls on RTX 50-series GPUs; float16 avoids them.",
        ),
        severity="warning",
    )
