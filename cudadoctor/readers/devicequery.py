"""Read pasted output of the CUDA samples' ``deviceQuery`` into GPU facts.

deviceQuery asks the CUDA runtime, not NVML, so what it gives goes where the NVML probe puts the
same facts (``nvml.devices[i]``: name, compute capability, memory; ``nvml.cuda_driver_version``),
and what only it knows (the runtime it was built with, its verdict, its error) is kept under
``devicequery``. Its "MBytes" are MiB (the bytes in brackets are exact and preferred).

    cudaGetDeviceCount returned 35
    -> CUDA driver version is insufficient for CUDA runtime version
    Result = FAIL
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

_START = re.compile(r"deviceQuery Starting|CUDA Device Query \(Runtime API\)", re.I)
_DEVICE = re.compile(r'^\s*Device\s+(\d+)\s*:\s*"(.+)"\s*$')
_VERSIONS = re.compile(r"CUDA Driver Version\s*/\s*Runtime Version\s+(\d+\.\d+)\s*/\s*(\d+\.\d+)")
_CC = re.compile(r"CUDA Capability Major/Minor version number:\s*(\d+)\.(\d+)")
_MEM = re.compile(r"Total amount of global memory:\s*(\d+)\s*MBytes(?:\s*\((\d+)\s*bytes\))?")
_FAILED = re.compile(r"^\s*(cuda\w+) returned (\d+)\s*$")
_REASON = re.compile(r"^\s*->\s*(.+?)\s*$")
_RESULT = re.compile(r"Result\s*=\s*(PASS|FAIL)")
_COUNT = re.compile(r"Detected\s+(\d+)\s+CUDA Capable device")
_NO_DEVICE = re.compile(r"There (?:are|is) no (?:available )?device\(s\) that support CUDA", re.I)


def parse(text: str) -> Dict[str, Any]:
    """deviceQuery text -> ``{"nvml": {...}, "devicequery": {...}}`` (empty dicts when nothing read)."""
    nvml: Dict[str, Any] = {}
    dq: Dict[str, Any] = {}
    devices: List[Dict[str, Any]] = []
    cur: Optional[Dict[str, Any]] = None
    for line in text.replace("\r\n", "\n").split("\n"):
        m = _DEVICE.match(line)
        if m:
            cur = {"index": int(m.group(1)), "name": m.group(2).strip()}
            devices.append(cur)
            continue
        _line(line, cur, nvml, dq)
    if devices:
        nvml["devices"] = devices
        if isinstance(dq.get("device_count"), int):
            nvml["device_count"] = dq["device_count"]
    if dq.get("device_count") == 0 or dq.get("no_device"):
        nvml.setdefault("devices", [])
    if nvml:
        nvml.setdefault("source", "deviceQuery")
    return {"nvml": nvml, "devicequery": dq}


def _line(line: str, cur: Optional[Dict[str, Any]], nvml: Dict[str, Any], dq: Dict[str, Any]) -> None:
    m = _VERSIONS.search(line)
    if m:
        nvml.setdefault("cuda_driver_version", m.group(1))
        major, minor = m.group(1).split(".")
        nvml.setdefault("cuda_driver_version_int", int(major) * 1000 + int(minor) * 10)
        dq["runtime_version"] = m.group(2)
        return
    m = _CC.search(line)
    if m and cur is not None:
        cur["compute_capability"] = f"{m.group(1)}.{m.group(2)}"
        return
    m = _MEM.search(line)
    if m and cur is not None:
        total = int(m.group(2)) if m.group(2) else int(m.group(1)) * 1024 * 1024
        cur["memory"] = {"total_bytes": total}
        return
    m = _FAILED.match(line)
    if m:
        dq["failed_call"] = m.group(1)
        dq["error_code"] = int(m.group(2))
        return
    m = _REASON.match(line)
    if m and "error_code" in dq and "error" not in dq:
        dq["error"] = m.group(1)
        return
    m = _RESULT.search(line)
    if m:
        dq["result"] = m.group(1)
        return
    m = _COUNT.search(line)
    if m:
        dq["device_count"] = int(m.group(1))
        return
    if _NO_DEVICE.search(line):
        dq["no_device"] = True
