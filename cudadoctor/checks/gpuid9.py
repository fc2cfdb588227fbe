"""Which GPU the process can see (round 9, gpuid9): nvidia-smi that Windows cannot find by name.

- nvidia-smi-not-on-path: on Windows the NVIDIA driver puts nvidia-smi.exe in C:\\Windows\\System32 (older drivers in
  C:\\Program Files\\NVIDIA Corporation\\NVSMI, never on PATH). With the driver and an NVIDIA GPU there, "'nvidia-smi'
  is not recognized as an internal or external command" means PATH lacks that folder; programs that find GPUs by
  running nvidia-smi (chaiNNer, GPUtil, exporters: a table with their sources) then see no GPU and fall back to the CPU.

Wordings and the program table: kb/errors/gpuid9.json (``nvidia_smi_not_on_path``). Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.errortext import gpu_vendors
from cudadoctor.errortext import kb_document
from cudadoctor.facts import Facts
from cudadoctor.interpret import os_key
from cudadoctor.interpret.gpus import driver_version, gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of
from .driver import NO_NVIDIA_DRIVER

NVIDIA_SMI_NOT_ON_PATH = Code(
    code="nvidia-smi-not-on-path",
    title="Windows cannot find nvidia-smi by name (its folder is not on PATH), so programs that run it see no NVIDIA GPU",
    area="system",
    severity="error",
    explanation={
        "what": "\"'nvidia-smi' is not recognized as an internal or external command, operable program or batch file\" "
        "(or FileNotFoundError [WinError 2] from a program running nvidia-smi) on a Windows machine that has an NVIDIA "
        "GPU and driver; or a program that finds GPUs by running nvidia-smi (chaiNNer, GPUtil, nvidia_gpu_exporter) "
        "lists no GPU and runs on the CPU.",
        "why": "The Windows driver installs nvidia-smi.exe into C:\\Windows\\System32 (DCH drivers keep it under "
        "System32\\DriverStore\\FileRepository\\nv*\\ too; drivers before about 2019 used C:\\Program Files\\NVIDIA "
        "Corporation\\NVSMI, which is never on PATH). A PATH edited by an installer or by hand that lost "
        "%SystemRoot%\\System32 hides it, and with it `where` and `wmic`. CUDA itself (nvcuda.dll, loaded by the DLL "
        "search order) keeps working: torch may still see the GPU while such programs do not.",
        "confirm": "`where nvidia-smi` (fails), `dir C:\\Windows\\System32\\nvidia-smi.exe` (exists), "
        "`C:\\Windows\\System32\\nvidia-smi.exe` (lists the GPU), `echo %PATH%` (no C:\\Windows\\System32).",
        "fix": "Add C:\\Windows\\System32 (and C:\\Windows, C:\\Windows\\System32\\Wbem) back to the system PATH "
        "(System Properties > Environment Variables), or for an old driver add C:\\Program Files\\NVIDIA Corporation\\"
        "NVSMI; then restart the program (and the terminal) so it reads the new PATH.",
    },
    links=(
        "https://github.com/pytorch/pytorch/pull/49021",
        "https://learn.microsoft.com/en-us/azure/virtual-machines/windows/n-series-driver-setup#verify-driver-installation",
        "https://github.com/chaiNNer-org/chaiNNer/blob/129378ca497e15809593c65f798bc0ad3382cc27/src/main/nvidiaSmi.ts",
    ),
)


@functools.lru_cache(maxsize=1)
def _kb() -> Dict[str, Any]:
    doc: Dict[str, Any] = kb_document("gpuid9.json")["nvidia_smi_not_on_path"]
    return doc


@functools.lru_cache(maxsize=8)
def _rx(key: str) -> "re.Pattern[str]":
    return re.compile(_kb()[key], re.M)


def _first_line(rx: "re.Pattern[str]", text: str) -> Optional[str]:
    m = rx.search(text)
    if not m:
        return None
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return text[start : end if end != -1 else None].strip()[:300]


def _nvidia_there(fx: Facts, text: str) -> Optional[str]:
    """What shows an NVIDIA GPU or driver on this machine (a driver version, an NVIDIA GPU's name), or None."""
    if driver_version(fx):
        return f"driver {driver_version(fx)}"
    for g in gpus(fx):
        name = str(g.get("name") or "")
        if name and not gpu_vendors.vendor_of(name):
            return name
    named = gpu_vendors.nvidia_named(text.splitlines())
    if named:
        return named[1]
    prose = fx.get("pasted.prose") or {}
    if isinstance(prose, dict) and prose.get("gpus"):
        return str(prose["gpus"][0] if isinstance(prose["gpus"], list) else prose["gpus"])
    return gpu_vendors.nvidia_stated(text)


def _windows(fx: Facts, text: str) -> bool:
    return os_key(fx) == "windows" or re.search(r"\bWindows\b|\bwin(?:32|10|11)\b|\b[A-Z]:\\", text) is not None


def _app(text: str) -> Optional[Tuple[str, str]]:
    for a in _kb()["apps"]:
        if re.search(a["regex"], text):
            return a["name"], a["how"]
    return None


_FIX = (
    "where nvidia-smi  # fails when its folder is not on PATH",
    "C:\\Windows\\System32\\nvidia-smi.exe  # runs and lists the GPU: the driver is fine",
    "echo %PATH%  # C:\\Windows\\System32 missing",
    "# System Properties > Environment Variables > Path: add C:\\Windows\\System32, C:\\Windows, C:\\Windows\\System32\\Wbem",
    "# (a driver older than ~2019: add C:\\Program Files\\NVIDIA Corporation\\NVSMI); restart the program and terminal",
)
_WHY = "The driver installs nvidia-smi.exe into C:\\Windows\\System32; programs run it by name, so that folder must be on PATH."


@check(NVIDIA_SMI_NOT_ON_PATH)
def nvidia_smi_not_on_path(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    if not text.strip():
        return
    said = _first_line(_rx("not_found"), text)
    if not said and _rx("win_file_not_found").search(text) and _rx("popen_nvidia_smi").search(text):
        said = _first_line(_rx("win_file_not_found"), text)
    there = _nvidia_there(fx, text)
    evidence: Dict[str, Any] = {}
    if said and there:
        evidence.update({"nvidia_smi_not_found": said, "nvidia_gpu_or_driver": there})
        yield NVIDIA_SMI_NOT_ON_PATH.finding(
            title=f"nvidia-smi is not found by name although this machine has an NVIDIA GPU/driver ({there}): its folder "
            "(C:\\Windows\\System32) is not on PATH",
            evidence=evidence,
            fix=Fix(_FIX, _WHY),
        )
        return
    app = _app(text)
    sees_none = _first_line(_rx("app_sees_no_gpu"), text)
    if app and sees_none and there and _windows(fx, text):
        # A program that finds GPUs only by running nvidia-smi lists none on Windows while an NVIDIA GPU is named: the
        # first thing to rule out is nvidia-smi missing from PATH (a hypothesis: the text does not show the lookup).
        evidence.update({"program": app[0], "how_it_finds_gpus": app[1], "says": sees_none, "nvidia_gpu": there})
        yield NVIDIA_SMI_NOT_ON_PATH.finding(
            title=f"Likely: {app[0]} finds GPUs by running nvidia-smi, and on this Windows machine it cannot find it "
            f"although an NVIDIA GPU ({there}) is there: check that C:\\Windows\\System32 is on PATH",
            evidence=evidence,
            fix=Fix(_FIX, _WHY),
            severity="warning",
        )


# ---------------------------------------------------------------- a hosted notebook without a GPU attached (fallback)


def _cpu_notebook(fx: Facts, text: str) -> Optional[Tuple[str, str]]:
    """(platform words, CUDA failure line) when a hosted notebook or a CPU instance type is named, CUDA is reported
    unavailable, and nothing shows an NVIDIA GPU or driver there."""
    kb = kb_document("gpuid9.json")["cpu_notebooks"]
    where = re.search(kb["cpu_instance"], text) or re.search(kb["platform"], text, re.M)
    failed = _first_line(re.compile(kb["cuda_unavailable"]), text)
    if not failed and fx.get("torch.cuda_available") is False:
        failed = "torch.cuda.is_available() = False"
    if not (where and failed) or _nvidia_there(fx, text) or fx.int("nvml.device_count"):
        return None
    if re.search(r"(?i)\b(?:T4|P100|V100|A100|L4|TPU)\b|GPU\s+(?:runtime|accelerator)\s+(?:is\s+)?(?:on|enabled|selected)", text):
        return None  # a GPU runtime is named: then it is not a CPU runtime
    return where.group(0), failed


@check(NO_NVIDIA_DRIVER, name="cpu-notebook-runtime", fallback=True)  # driver.py owns the code
def cpu_notebook_runtime(fx: Facts) -> Iterator[Finding]:
    """Where nothing else found a cause: a hosted notebook (Colab, Kaggle, SageMaker) or a CPU instance type named,
    CUDA unavailable, no GPU shown: most likely the runtime has no GPU attached (no-nvidia-driver's class)."""
    text = text_of(fx)
    got = _cpu_notebook(fx, text) if text.strip() else None
    if not got:
        return
    yield NO_NVIDIA_DRIVER.finding(
        title=f"Likely: this hosted runtime ({got[0]}) has no GPU attached, so there is no NVIDIA GPU or driver for CUDA",
        evidence={"platform": got[0], "cuda": got[1], "nvidia_gpu_shown": False},
        fix=Fix(
            (
                "# Colab: Runtime > Change runtime type > Hardware accelerator: GPU (T4), then re-run the notebook",
                "# Kaggle: Settings > Accelerator > GPU; SageMaker: an ml.g*/ml.p* instance type (ml.t*/m*/c*/r* have none)",
                "!nvidia-smi  # in the notebook: lists the GPU once one is attached",
            ),
            "Hosted notebooks start on a CPU runtime unless a GPU accelerator is chosen.",
        ),
        severity="warning",
    )


def register() -> List[Any]:
    return [nvidia_smi_not_on_path, cpu_notebook_runtime]
