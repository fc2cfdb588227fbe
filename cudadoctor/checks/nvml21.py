"""A program's NVML query that this GPU does not support (session 21, from blind batch b81 and the threads behind it):

- nvml-query-not-supported: NVML answers NVML_ERROR_NOT_SUPPORTED (3, "The requested operation is not available on
  target device", nvmlReturn_t) for queries a GPU does not implement — power limits, utilisation, fan speeds on many
  GeForce, laptop and some data-centre boards (nvidia-docker#40: "Mobility cards are poorly supported by NVML and most of
  the calls will fail"). pynvml raises it as ``pynvml.NVMLError_NotSupported: Not Supported``; a program that does not
  catch it (cuequivariance_ops' cache manager asking for the power limit: boltz#355, boltzgen#11) stops although the
  GPU, the driver and CUDA work. The program has to tolerate the missing value.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret import gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of

NVML_QUERY_NOT_SUPPORTED = Code(
    code="nvml-query-not-supported",
    title="A program's NVML query is not supported on this GPU (NVML_ERROR_NOT_SUPPORTED): the program must tolerate it",
    area="packages",
    severity="warning",
    explanation={
        "what": 'A program stops with "pynvml.NVMLError_NotSupported: Not Supported" (or NVML_ERROR_NOT_SUPPORTED) raised '
        "from its own NVML query (a power limit, utilisation, a fan speed), while nvidia-smi works and "
        "torch.cuda.is_available() is True.",
        "why": "NVML reports NVML_ERROR_NOT_SUPPORTED for a query the GPU does not implement; which queries a board "
        "answers varies (GeForce and laptop GPUs answer fewer). pynvml turns it into an exception, and a program that "
        "does not catch it stops. The GPU, the driver and CUDA are fine.",
        "confirm": "`nvidia-smi -q -d POWER` (N/A where the board does not report it); the traceback names the "
        "program's NVML call (nvmlDeviceGetPowerManagementLimit...).",
        "fix": "Update the package whose NVML call raised (the traceback's last frame outside pynvml) — maintainers add a "
        "fallback after such reports — or patch that call to catch pynvml.NVMLError_NotSupported and use a default. "
        "Reinstalling the driver or torch does not change what the GPU reports.",
    },
    links=(
        "https://nvidia.github.io/cuda-python/cuda-bindings/latest/module/generated/cuda.bindings.nvml.Return.html",
        "https://github.com/NVIDIA/nvidia-docker/issues/40",
        "https://github.com/jwohlwend/boltz/issues/355",
        "https://github.com/HannesStark/boltzgen/issues/11",
    ),
)


#: NVML's memory query named in the error (kb/errors/b25.json), and GPUs with unified memory (DGX Spark's GB10).
_MEMORY_QUERY = re.compile(r"GetMemoryInfo|device memory|memory info", re.I)
_UNIFIED = re.compile(r"\bGB10\b|DGX Spark|unified memory", re.I)


@check(NVML_QUERY_NOT_SUPPORTED)
def nvml_query_not_supported(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, NVML_QUERY_NOT_SUPPORTED)
    if not said:
        return
    if _MEMORY_QUERY.search(said[1]):
        unified = any(_UNIFIED.search(str(g.get("name") or "")) for g in gpus(fx)) or bool(_UNIFIED.search(text_of(fx)))
        yield NVML_QUERY_NOT_SUPPORTED.finding(
            title="NVML has no memory figures for this GPU (nvmlDeviceGetMemoryInfo: Not Supported)"
            + (": GB10 (DGX Spark) shares the system's unified memory" if unified else "")
            + "; the GPU works, the program that treats it as fatal must be updated",
            evidence={said[0]: said[1]},
            fix=Fix(
                (
                    "nvidia-smi --query-gpu=name,memory.total --format=csv  # [N/A] where the GPU has no memory of its own",
                    "# update the device plugin / operator / monitor to a release that tolerates it (the GPU Operator, "
                    "the DRA driver and HAMi each fixed it after such reports)",
                ),
                "On unified-memory GPUs NVML answers NOT_SUPPORTED for the framebuffer query; CUDA and the GPU work.",
            ),
        )
        return
    yield NVML_QUERY_NOT_SUPPORTED.finding(
        title="A program's NVML query is not supported on this GPU (NVML_ERROR_NOT_SUPPORTED): the GPU works; the "
        "program must tolerate the missing value",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "nvidia-smi -q -d POWER  # N/A: the board does not report it",
                "# update the package whose NVML call raised (the traceback's last frame outside pynvml), or make that "
                "call catch pynvml.NVMLError_NotSupported and use a default",
            ),
            "NVML answers NOT_SUPPORTED for queries a GPU does not implement; the GPU, the driver and CUDA work.",
        ),
    )


def register():
    return [nvml_query_not_supported]
