"""One line per area, derived from the report: shared by the text and Markdown renderers."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ..facts import Facts
from ..model import AREAS, severity_rank
from ..report import Report

# status words: ok | error | warning | info | unknown | crashed
SYMBOLS = {"ok": "✓", "error": "✗", "warning": "!", "info": "✓", "unknown": "?", "crashed": "☠", "none": "–"}


def _gib(n: Optional[float]) -> str:
    return f"{n / 2**30:.1f} GiB" if n else "?"


def system_line(fx: Facts) -> Optional[str]:
    parts = []
    osname = " ".join(x for x in (fx.str("system.os"), fx.str("system.kernel"), fx.str("system.arch")) if x)
    if osname:
        parts.append(osname)
    distro = fx.str("system.distro")
    if distro:
        parts.append(distro)
    py = fx.str("python.version")
    if py:
        kind = "conda" if fx.bool("python.conda") else ("venv" if fx.bool("python.venv") else None)
        bits = fx.int("python.bits")
        parts.append(f"Python {py}" + (f" ({kind})" if kind else "") + (f" {bits}-bit" if bits and bits != 64 else ""))
    if fx.str("system.container"):
        parts.append(f"container: {fx.str('system.container')}")
    if fx.bool("system.wsl"):
        parts.append("WSL")
    chosen = interpreter_note(fx)
    if chosen:
        parts.append(chosen)
    return " · ".join(parts) or None


def interpreter_note(fx: Facts) -> Optional[str]:
    """'diagnosing ~/proj/.venv/bin/python (the active virtual environment ...)' when cudadoctor chose
    an interpreter other than its own by itself (see probes/interpreter.py); None otherwise."""
    path, reason = fx.str("tool.interpreter.path"), fx.str("tool.interpreter.reason")
    if not path or reason in (None, "own", "option"):
        return None
    why = fx.str("tool.interpreter.why")
    return f"diagnosing {path}" + (f" ({why})" if why else "")


def driver_line(fx: Facts) -> Optional[str]:
    ver = fx.str("nvml.driver_version")
    if ver:
        cuda = fx.str("nvml.cuda_driver_version")
        return f"{ver}" + (f" (supports CUDA ≤ {cuda})" if cuda else "")
    status = fx.str("nvml.status")
    if status in (None, "running"):
        return None
    if status == "ok":  # NVML answered (or a collect_env text listed GPUs) but no driver version was recorded
        return "version unknown (not reported)"
    pci = fx.list("system.pci_nvidia_devices")
    where = ""
    if pci is not None:
        where = f" · {len(pci)} NVIDIA device(s) on the PCI bus" if pci else " · no NVIDIA GPU on the PCI bus"
    return f"not available (NVML: {status}){where}"


def gpu_line(fx: Facts) -> Optional[str]:
    devs = fx.dicts("nvml.devices") or fx.dicts("torch.devices")
    if devs:
        names: Dict[str, int] = {}
        for d in devs:
            n = str(d.get("name") or "unknown GPU")
            cc = d.get("compute_capability") or d.get("capability")
            key = f"{n}" + (f" (sm_{str(cc).replace('.', '')})" if cc else "")
            names[key] = names.get(key, 0) + 1
        return ", ".join(f"{c} × {k}" for k, c in names.items())
    if fx.int("nvml.device_count") == 0 or fx.int("torch.device_count") == 0:
        return "none visible"
    return None


def torch_line(fx: Facts) -> Optional[str]:
    status = fx.str("torch.status")
    if status == "not-installed":
        return "not installed"
    if status == "import-failed":
        return f"{fx.str('torch.version') or ''} import failed".strip()
    ver = fx.str("torch.version")
    if not ver:
        return None
    parts = [ver]
    if fx.str("torch.cuda"):
        parts.append(f"CUDA {fx.str('torch.cuda')}")
    elif fx.str("torch.hip"):
        parts.append(f"ROCm/HIP {fx.str('torch.hip')}")
    elif "cuda" in (fx.dict("torch") or {}):
        parts.append("CPU-only build")
    cudnn = fx.int("torch.cudnn_version")
    if cudnn:
        parts.append(
            f"cuDNN {cudnn // 10000 if cudnn >= 10000 else cudnn // 1000}.{(cudnn % 10000) // 100 if cudnn >= 10000 else (cudnn % 1000) // 100}.{cudnn % 100}"
        )
    avail = fx.bool("torch.cuda_available")
    if avail is not None:
        parts.append(f"cuda.is_available() = {avail}")
    if fx.num("torch.import_s") is not None:
        parts.append(f"imported in {fx.num('torch.import_s'):.1f} s")
    if fx.str("torch.status") == "skipped":
        parts.append("not imported (--quick)")
    return " · ".join(parts)


def packages_line(fx: Facts) -> Optional[str]:
    parts = []
    for name in ("torchvision", "torchaudio", "numpy", "triton"):
        d = fx.distribution(name)
        if d:
            parts.append(f"{name} {d.get('version')}")
    return " · ".join(parts) or ("none of torchvision, torchaudio, numpy" if fx.dicts("packages.distributions") else None)


def toolkit_line(fx: Facts) -> Optional[str]:
    if fx.str("toolkit.nvcc_version"):
        where = fx.str("toolkit.nvcc")
        return f"nvcc {fx.str('toolkit.nvcc_version')}" + (f" ({where})" if where else "")
    if "nvcc" in (fx.dict("toolkit") or {}) and fx.get("toolkit.nvcc") is None:
        return "no nvcc (pip wheels do not need one)"
    return None


def libraries_line(fx: Facts) -> Optional[str]:
    libs = fx.dicts("torch.loaded_libraries.libraries")
    if libs:
        return f"{len(libs)} CUDA-related libraries loaded"
    return None


LINES = {
    "system": system_line,
    "driver": driver_line,
    "gpu": gpu_line,
    "torch": torch_line,
    "packages": packages_line,
    "libraries": libraries_line,
    "toolkit": toolkit_line,
}


#: Words that say an area's subject is missing or broken: never beside ✓ (see coherent()).
FAILURE_WORDS = re.compile(
    r"\b(?:not available|not installed|import failed|failed|crashed|timed out|not found|missing|"
    r"unknown|error)\b",
    re.I,
)


def coherent(key: str, status: str, detail: Optional[str], fx: Facts) -> str:
    """The area's status, made to agree with its words: a line that says its subject is missing,
    broken or unknown is never marked fine (✓) just because no check raised a finding about it."""
    if status not in ("ok", "info") or not detail or not FAILURE_WORDS.search(detail):
        return status
    if key == "driver" and fx.list("system.pci_nvidia_devices") == []:
        return "none"  # no NVIDIA device on the bus: nothing there, rather than unknown
    return "unknown"


def _cuda_unavailable_unexplained(fx: Facts, worst: Dict[str, str]) -> bool:
    return bool(fx.str("torch.cuda")) and fx.bool("torch.cuda_available") is False and "error" not in worst.values()


def areas(report: Report) -> List[Tuple[str, str, str, str]]:
    """[(area key, area label, status, detail)] in display order."""
    fx = Facts(report.facts)
    worst: Dict[str, str] = {}
    for f in report.findings:
        a = report.area_of(f)
        st = "crashed" if f.code == "check-crashed" else f.severity
        if a not in worst or (st == "crashed") or severity_rank(st) < severity_rank(worst[a]):
            if worst.get(a) != "crashed":
                worst[a] = st
    out = []
    for key, label in AREAS.items():
        fn = LINES.get(key)
        detail = None
        try:
            detail = fn(fx) if fn else None
        except Exception:  # a renderer never dies on odd facts
            detail = None
        if key == "tool" and key not in worst:
            continue
        status = worst.get(key) or ("ok" if detail else "unknown")
        if status == "ok" and key == "gpu" and detail == "none visible":
            status = "none"
        status = coherent(key, status, detail or "unknown", fx)
        if key == "torch" and status in ("ok", "info") and _cuda_unavailable_unexplained(fx, worst):
            status = "warning"  # a CUDA build that cannot use CUDA, and no other area says why: not fine
        if key == "tool":
            n = sum(1 for f in report.findings if report.area_of(f) == "tool")
            detail = f"{n} problem{'s' if n != 1 else ''} in cudadoctor's own probes or checks"
        out.append((key, label, status, detail or "unknown"))
    return out
