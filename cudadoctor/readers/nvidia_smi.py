"""Read pasted ``nvidia-smi`` output (the banner table, or ``nvidia-smi -q``) into NVML facts.

The result has the shape the NVML probe writes (``facts["nvml"]``, see
cudadoctor/probes/child/nvml_probe.py), so the health and compatibility checks judge a paste as
they judge a live machine. A pure function of the text, and it never guesses: a cell that reads
``N/A``, ``[N/A]``, ``ERR!``, ``[Not Supported]``, ``Unknown Error`` or that was cut off stays
absent. A name the banner truncated (``Tesla V100S-PCI...``) is kept as printed and flagged.

What the outputs print differs across driver generations (read from real pastes, see
tests/fixtures/pasted/README.md):

* banner header ``Driver Version: X  CUDA Version: Y``; the 610 branch prints ``KMD Version`` and
  ``CUDA UMD Version`` instead;
* the GPU block is two rows (drivers before 450) or three (the third holds ``MIG M.``); on Windows
  the first row ends with ``WDDM`` / ``TCC`` (the driver model) instead of persistence ``On``/``Off``;
* compute mode ``Default``, ``E. Process``, ``E. Thread``, ``Prohibited``;
* ``-q``: see :mod:`.nvidia_smi_q`, which reads it.

This module reads the banner table and the failure messages and merges what both outputs said;
:mod:`._smi_values` says what one printed value means.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ._smi_values import COMPUTE_MODES, MIB, number, value
from .nvidia_smi_q import read_query

#: What nvidia-smi prints when NVML could not start, and the probe's status word for it.
INIT_FAILURES = (
    (re.compile(r"NVIDIA-SMI has failed because it couldn'?t communicate with the NVIDIA driver", re.I), "driver-not-loaded", 9),
    (re.compile(r"Failed to initialize NVML:\s*Driver/library version mismatch", re.I), "driver-library-mismatch", 18),
    (re.compile(r"Failed to initialize NVML:\s*GPU access blocked by the operating system", re.I), "operating-system", 17),
    (re.compile(r"Failed to initialize NVML:\s*Insufficient Permissions", re.I), "no-permission", 4),
    (re.compile(r"Failed to initialize NVML:\s*Unknown Error", re.I), "unknown-error", 999),
    (re.compile(r"NVIDIA-SMI couldn'?t find libnvidia-ml\.so", re.I), "library-missing", 12),
)
_NO_DEVICES = re.compile(r"^\s*No devices were found\s*$", re.I)
_HANDLE_ERR = re.compile(
    r"Unable to determine the device handle for GPU\s*(?:(\d{1,3})\s*:\s*)?"
    r"([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*:\s*(\S.*)$",
    re.I,
)

_HEADER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>\S+)\s+(?:Driver|KMD)\s+Version:\s*(?P<driver>\S+)"
    r"(?:\s+CUDA(?:\s+UMD)?\s+Version:\s*(?P<cuda>\S+))?",
    re.I,
)
_BUS = re.compile(r"^([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+(\S+)$")
_ROW1 = re.compile(r"^(?P<index>\d{1,3})\s+(?P<rest>\S.*)$")
_ROW1_MODES = ("On", "Off", "WDDM", "TCC", "MCDM", "N/A")
_MEM = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")


def _cuda_int(cuda: Optional[str]) -> Optional[int]:
    m = re.fullmatch(r"(\d+)\.(\d+)", cuda or "")
    return int(m.group(1)) * 1000 + int(m.group(2)) * 10 if m else None


def parse(text: str) -> Dict[str, Any]:
    """nvidia-smi text (banner, -q, or both) -> ``{"nvml": {...}}`` in the NVML probe's shape.

    Returns an empty ``nvml`` section when nothing was recognised; the caller decides whether
    that is an error.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    nvml: Dict[str, Any] = {}
    for rx, status, code in INIT_FAILURES:
        m = rx.search(text)
        if m:
            line = next((ln.strip() for ln in lines if rx.search(ln)), m.group(0))
            nvml.update(status=status, error=line[:500], error_code=code, source="nvidia-smi")
            return nvml
    banner = _banner(lines)
    query = read_query(lines)
    devices = _merge_devices(banner.pop("devices", []), query.pop("devices", []))
    for src in (query, banner):
        for k, v in src.items():
            nvml.setdefault(k, v)
    handle_errors = [m for m in (_HANDLE_ERR.search(ln) for ln in lines) if m]
    for m in handle_errors:
        bus, message = m.group(2), m.group(3).strip()
        if not any(_same_bus(d.get("pci_bus_id"), bus) for d in devices):
            code = 15 if "lost" in message.lower() else 999
            lost: Dict[str, Any] = {
                "pci_bus_id": bus,
                "error": {"code": code, "message": message[:200], "call": "nvmlDeviceGetHandleByIndex"},
            }
            if m.group(1):
                lost["index"] = int(m.group(1))  # "for GPU0: 0000:C1:00.0" (newer drivers name the index)
            devices.append(lost)
    no_devices = any(_NO_DEVICES.match(ln) for ln in lines)
    complete = banner.pop("complete", False)
    if devices or no_devices:
        nvml["devices"] = devices
        counted = nvml.pop("attached_gpus", None)
        if isinstance(counted, int):
            nvml["device_count"] = counted
        elif no_devices or complete:
            nvml["device_count"] = len(devices)  # a whole banner lists every GPU; a cut one may not
    nvml.pop("attached_gpus", None)
    nvml.pop("complete", None)
    if nvml:
        nvml.setdefault("status", "ok")
        nvml["source"] = "nvidia-smi " + "+".join(
            s for s, ok in (("banner", banner.get("seen")), ("-q", query.get("seen"))) if ok
        )
        nvml.pop("seen", None)
        cuda = nvml.get("cuda_driver_version")
        if _cuda_int(cuda) is not None:
            nvml["cuda_driver_version_int"] = _cuda_int(cuda)
    return nvml


def _same_bus(a: Any, b: Any) -> bool:
    """'00000000:07:00.0' (banner, -q) and '0000:07:00.0' (error lines) name the same GPU."""
    return isinstance(a, str) and isinstance(b, str) and len(b) >= 7 and a.lower()[-7:] == b.lower()[-7:]


def _merge_devices(banner: List[Dict[str, Any]], query: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """-q is the fuller source; the banner fills what -q did not print (same GPU by bus id or index)."""
    if not query:
        return banner
    out = []
    for q in query:
        b = next((d for d in banner if _same_bus(q.get("pci_bus_id"), d.get("pci_bus_id"))), None)
        for k, v in (b or {}).items():
            if k == "name" and q.get("name"):
                continue  # -q prints the whole name; the banner may have cut it
            q.setdefault(k, v)
        out.append(q)
    return out


# ---------------------------------------------------------------------------------------------
# The banner table.


def _cells(line: str) -> Optional[List[str]]:
    s = line.strip()
    if not s.startswith("|"):
        return None
    return [c.strip() for c in s.strip("|").split("|")]


def _banner(lines: List[str]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    devices: List[Dict[str, Any]] = []
    section = "gpus"
    cur: Optional[Dict[str, Any]] = None
    row = 0
    for line in lines:
        m = _HEADER.search(line)
        if m:
            out["seen"] = True
            out["driver_version"] = m.group("driver")
            if value(m.group("cuda")):
                out["cuda_driver_version"] = m.group("cuda")
            section, cur = "gpus", None
            continue
        cells = _cells(line)
        if cells is None:
            if not line.strip().startswith("+"):
                cur = None  # the table ended (or a blank line between pastes)
            else:
                row = 0
            continue
        joined = " ".join(cells)
        if re.match(r"^Processes\s*:", joined):
            section = "processes"
            out["complete"] = bool(devices)  # the GPU table ended before the process table began
            continue
        if re.match(r"^MIG devices\s*:", joined):
            section = "mig"
            for d in devices:
                if (d.get("mig_mode") or {}).get("current") is True:
                    d["mig_devices"] = []
            continue
        if section == "gpus":
            cur, row = _banner_gpu_row(cells, cur, row, devices)
        elif section == "processes":
            _banner_process(joined, devices)
        elif section == "mig":
            _banner_mig(cells, devices)
    if devices:
        out["seen"] = True
        out["devices"] = devices
    return out


def _banner_gpu_row(
    cells: List[str], cur: Optional[Dict[str, Any]], row: int, devices: List[Dict[str, Any]]
) -> Tuple[Optional[Dict[str, Any]], int]:
    if len(cells) < 3:
        return cur, row
    m = _ROW1.match(cells[0])
    if m and _BUS.match(cells[1]) or (m and value(cells[1]) is None and cells[0][:1].isdigit()):
        d: Dict[str, Any] = {"index": int(m.group("index"))}
        words = m.group("rest").rsplit(None, 1)
        mode = words[1] if len(words) == 2 and words[1] in _ROW1_MODES else None
        name = value(words[0] if mode else m.group("rest"))
        if name:
            d["name"] = name
            if name.endswith("..."):
                d["name_truncated"] = True
        if mode in ("On", "Off"):
            d["persistence_mode"] = mode == "On"
        elif mode in ("WDDM", "TCC", "MCDM"):
            d["driver_model"] = mode
        b = _BUS.match(cells[1])
        if b:
            d["pci_bus_id"] = b.group(1)
        ecc = value(cells[2])
        if ecc is not None and ecc.isdigit():
            d["ecc_errors"] = {"volatile": {"uncorrected": int(ecc)}}
            d["ecc_mode"] = {"current": True}
        elif ecc in ("Off", "On"):
            d["ecc_mode"] = {"current": ecc == "On"}  # under MIG the column reads On
        devices.append(d)
        return d, 1
    if cur is None:
        return cur, row
    if row == 1:
        mem = _MEM.search(cells[1])
        if mem:
            used, total = int(mem.group(1)) * MIB, int(mem.group(2)) * MIB
            cur["memory"] = {"used_bytes": used, "total_bytes": total, "free_bytes": max(total - used, 0)}
        _banner_row2_left(cells[0], cur)
        parts = cells[2].split(None, 1)
        if parts:
            util = number(parts[0])
            if util is not None:
                cur["utilization"] = {"gpu": util}
            mode = COMPUTE_MODES.get(parts[1].strip().lower()) if len(parts) > 1 else None
            if mode:
                cur["compute_mode"] = mode
        return cur, 2
    if row == 2:
        mig = value(cells[2])
        if mig in ("Enabled", "Disabled"):
            cur["mig_mode"] = {"current": mig == "Enabled"}
        return cur, 3
    return cur, row


def _banner_row2_left(cell: str, cur: Dict[str, Any]) -> None:
    """'N/A   50C    P0   219W / 250W': fan, temperature, performance state, power."""
    t = re.search(r"(?<!\S)(\d+)C\b", cell)
    if t:
        cur["temperature_c"] = int(t.group(1))
    p = re.search(r"\bP(\d{1,2})\b", cell)
    if p:
        cur["performance_state"] = int(p.group(1))
    w = re.search(r"(\d+)W\s*/\s*(\d+)W", cell)
    if w:
        cur["power"] = {"usage_mw": int(w.group(1)) * 1000, "enforced_limit_mw": int(w.group(2)) * 1000}


_PROC = re.compile(r"^(?P<gpu>\d+)\s+(?:(?P<gi>\d+|N/A)\s+(?P<ci>\d+|N/A)\s+)?(?P<pid>\d+)\s+(?P<type>C\+G|C|G)\s+\S")
_PROC_MEM = re.compile(r"^(?:\d+MiB|N/A)$")


def _banner_process(joined: str, devices: List[Dict[str, Any]]) -> None:
    if re.match(r"^No running processes found", joined, re.I):
        for d in devices:
            d.setdefault("processes", [])
        return
    m = _PROC.match(joined)
    mem = joined.rsplit(None, 1)[-1] if m else ""
    if not m or not _PROC_MEM.match(mem):
        return
    dev = next((d for d in devices if d.get("index") == int(m.group("gpu"))), None)
    if dev is None:
        return
    procs = dev.setdefault("processes", [])
    if "C" not in m.group("type"):
        return  # a graphics-only process: NVML's compute list does not hold it
    item: Dict[str, Any] = {"pid": int(m.group("pid")), "used_memory_bytes": int(mem[:-3]) * MIB if mem.endswith("MiB") else None}
    for key, k in (("gi", "gpu_instance_id"), ("ci", "compute_instance_id")):
        if m.group(key) and m.group(key).isdigit():
            item[k] = int(m.group(key))
    procs.append(item)


def _banner_mig(cells: List[str], devices: List[Dict[str, Any]]) -> None:
    m = re.match(r"^(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$", cells[0]) if cells else None
    if not m:
        return
    dev = next((d for d in devices if d.get("index") == int(m.group(1))), None)
    if dev is None:
        return
    mig: Dict[str, Any] = {"index": int(m.group(4)), "gpu_instance_id": int(m.group(2)), "compute_instance_id": int(m.group(3))}
    mem = _MEM.search(cells[1]) if len(cells) > 1 else None
    if mem:
        mig["memory"] = {"used_bytes": int(mem.group(1)) * MIB, "total_bytes": int(mem.group(2)) * MIB}
    dev.setdefault("mig_devices", []).append(mig)
