"""A datacenter GPU in TCC mode under WSL 2 (session 23, from blind batches b71 and b140 and the threads of the class):

- wsl-gpu-in-tcc-mode: WSL 2 reaches the GPU through the Windows driver's WDDM path (/dev/dxg); a GPU the Windows driver
  runs in TCC mode (Tesla and most datacenter boards by default, some only support TCC: the H100 PCIe) is not exposed to
  WSL at all, so nvidia-smi and CUDA inside find nothing. microsoft/WSL#9952 (H100 PCIe, "WSL only supports CUDA when
  running in WDDM mode", quoting NVIDIA's CUDA on WSL guide: "not available on Quadro GPUs in TCC mode or Tesla GPUs");
  microsoft/WSL#12835 (a Tesla P4 with the GRID driver, found in TCC mode). TCC named beside WSL is the cause shown; a
  Tesla/datacenter board named under WSL with no GPU found is a likely one.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret import is_wsl
from cudadoctor.interpret.gpus import gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

WSL_GPU_IN_TCC_MODE = Code(
    code="wsl-gpu-in-tcc-mode",
    title="The GPU runs in TCC mode on Windows, which WSL 2 cannot use",
    area="system",
    severity="error",
    explanation={
        "what": "Inside WSL 2, nvidia-smi fails or torch finds no GPU on a machine whose GPU is a Tesla or datacenter board "
        "(P4, T4, V100, A100, H100 PCIe ...) that Windows drives in TCC mode.",
        "why": "WSL 2 gets the GPU through the Windows driver's WDDM graphics path (/dev/dxg and /usr/lib/wsl/lib). A GPU "
        "in TCC (compute-only) mode is not shared with WSL; datacenter boards default to TCC, and some support nothing else.",
        "confirm": "In Windows: nvidia-smi (the 'TCC/WDDM' column, or `nvidia-smi -q | findstr /C:\"Driver Model\"`): TCC.",
        "fix": "Switch the GPU to WDDM where it supports it (as administrator: nvidia-smi -i <N> -dm 0, then reboot; "
        "GRID/vGPU drivers set it by their profile), or run Linux natively or in a VM with the GPU passed through.",
    },
    links=(
        "https://github.com/microsoft/WSL/issues/9952",
        "https://github.com/microsoft/WSL/issues/12835",
    ),
)

_WSL = re.compile(r"\bWSL\s?2?\b|microsoft-standard-WSL2", re.I)
_TCC = re.compile(r"\bTCC\b(?:\s+(?:mode|driver(?:\s+model)?))?")
#: Boards Windows drives in TCC mode by default (Tesla-branded and NVIDIA datacenter GPUs).
_DATACENTER = re.compile(r"\bTesla\b|\b(?:A100|A30|H100|H200|H800|A800|B200|GH200|V100|P100|P40|K80|M60|M40|T4|L40S?)\b(?![-\w])")
#: Nothing found in the guest: nvidia-smi failing, CUDA or torch seeing no GPU, the GPU "not recognised".
_NOT_SEEN = re.compile(
    r"can ?not use nvidia-smi|nvidia-smi\W{0,20}(?:fails?|failed|not (?:found|work))|couldn't communicate with the NVIDIA driver|"
    r"not (?:be )?(?:recogni[sz]ed|detected|found|visible|available)|no (?:CUDA-capable device|GPUs? (?:found|detected))|"
    r"is_available\(\)\W{0,10}(?:returns?\W{0,3})?False|No devices were found",
    re.I,
)


@check(WSL_GPU_IN_TCC_MODE)
def wsl_gpu_in_tcc_mode(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    if not (is_wsl(fx) or _WSL.search(text)):
        return
    tcc = _TCC.search(text)
    names = " ".join(str(g.get("name") or "") for g in gpus(fx)) + "\n" + text
    board = _DATACENTER.search(names)
    if not tcc and not (board and _NOT_SEEN.search(text)):
        return
    evidence: dict = {"wsl": True}
    if tcc:
        evidence["driver model said"] = tcc.group(0)
    if board:
        evidence["datacenter GPU"] = board.group(0)
    who = f"the {board.group(0)}" if board else "the GPU"
    yield WSL_GPU_IN_TCC_MODE.finding(
        title=("Likely: " + who if not tcc else who[0].upper() + who[1:])
        + " runs in TCC mode on Windows, and WSL 2 only reaches GPUs in WDDM mode: switch it to WDDM or use Linux",
        evidence=evidence,
        fix=Fix(
            (
                'nvidia-smi -q | findstr /C:"Driver Model"  # in Windows (not WSL): Current: TCC',
                "nvidia-smi -i <N> -dm 0  # as administrator: WDDM, where the board supports it; then reboot Windows",
                "# a board that supports only TCC (H100 PCIe): run Linux natively, or in a VM with the GPU passed through",
            ),
            "WSL 2 shares the GPU through the WDDM graphics path; a GPU in TCC mode is not exposed to it.",
        ),
        severity=None if tcc else "warning",
    )


def register():
    return [wsl_gpu_in_tcc_mode]
