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
* ``-q``: ``Clocks Throttle Reasons`` (before 535) / ``Clocks Event Reasons``; ECC counts per
  ``Single Bit`` / ``Double Bit`` location (Kepler..Volta) or ``SRAM`` / ``DRAM`` (Ampere and later);
  ``Retired Pages`` ``Pending`` / ``Pending Page Blacklist``; ``Remapped Rows``.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ..devices import CLOCK_EVENT_REASONS

#: Cell values that mean "no value" (never a reading).
_NONE_VALUES = {
    "n/a",
    "[n/a]",
    "err!",
    "[err!]",
    "[not supported]",
    "not supported",
    "unknown error",
    "[unknown error]",
    "[insufficient permissions]",
    "insufficient permissions",
    "[gpu is lost]",
    "gpu is lost",
    "[requires root]",
    "requires root",
    "unknown",
    "[unknown]",
    "",
}

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
_BANNER_MODES = {
    "default": "Default",
    "e. process": "Exclusive_Process",
    "e. thread": "Exclusive_Thread",
    "prohibited": "Prohibited",
    "exclusive_process": "Exclusive_Process",
    "exclusive_thread": "Exclusive_Thread",
}
_REASON_BITS = {label.lower(): bit for bit, _, label in CLOCK_EVENT_REASONS}
MIB = 1024 * 1024


def value(text: Optional[str]) -> Optional[str]:
    """The cell's value, or None for every spelling of 'no value'."""
    if text is None:
        return None
    v = text.strip()
    return None if v.lower() in _NONE_VALUES else v


def _int(text: Optional[str]) -> Optional[int]:
    v = value(text)
    if v is None:
        return None
    m = re.fullmatch(r"(\d+)\s*(?:x|%|MiB|MHz|C)?", v)
    return int(m.group(1)) if m else None


def _cuda_int(cuda: Optional[str]) -> Optional[int]:
    m = re.fullmatch(r"(\d+)\.(\d+)", cuda or "")
    return int(m.group(1)) * 1000 + int(m.group(2)) * 10 if m else None


def looks_like(text: str) -> bool:
    """Does this text hold nvidia-smi output (banner, -q, or its failure messages)?"""
    return bool(
        _HEADER.search(text)
        or re.search(r"=+\s*NVSMI LOG\s*=+", text)
        or any(rx.search(text) for rx, _, _ in INIT_FAILURES)
        or re.search(r"^\s*Attached GPUs\s*:\s*\d", text, re.M)
    )


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
    query = _query(lines)
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
            util = _int(parts[0])
            if util is not None:
                cur["utilization"] = {"gpu": util}
            mode = _BANNER_MODES.get(parts[1].strip().lower()) if len(parts) > 1 else None
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


# ---------------------------------------------------------------------------------------------
# nvidia-smi -q


_KV = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][A-Za-z0-9 .()/_+-]{0,80}?)\s{0,80}:(?P<value>.*)$")
_GPU_HEAD = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")


def _query(lines: List[str]) -> Dict[str, Any]:
    """Walk -q's indented tree: a path of section names, and key : value leaves."""
    out: Dict[str, Any] = {}
    devices: List[Dict[str, Any]] = []
    cur: Optional[Dict[str, Any]] = None
    stack: List[Tuple[int, str]] = []
    for raw in lines:
        line = raw.rstrip().expandtabs(4)
        if not line.strip():
            continue
        if re.search(r"=+\s*NVSMI LOG\s*=+", line):
            out["seen"] = True
            continue
        g = _GPU_HEAD.match(line.strip()) if len(line) - len(line.lstrip()) < 2 else None
        if g:
            cur = {"pci_bus_id": g.group(1)}
            devices.append(cur)
            stack = []
            continue
        indent = len(line) - len(line.lstrip())
        if cur is None and indent >= 2 and not line.strip().startswith(("|", "+")):
            # A section pasted without its "GPU 0000:..." line (`nvidia-smi -q | grep -A4 ...`).
            cur = {"_implicit": True}
            devices.append(cur)
        m = _KV.match(line)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if m is None:
            if line.strip().startswith(("|", "+")):
                continue
            stack.append((indent, line.strip().lower()))
            continue
        key, val = m.group("key").strip().lower(), m.group("value").strip()
        if val == "" and not _leaf_may_be_empty(key):
            stack.append((indent, key))
            continue
        path = [s for _, s in stack] + [key]
        if cur is None:
            _query_top(out, path, val)
        else:
            _query_device(cur, path, val)
    if devices:
        out["seen"] = True
        for i, d in enumerate(devices):
            if d.pop("_implicit", False):
                if len(devices) > 1:
                    continue
                d["index_assumed"] = True  # one GPU's section with no header: called GPU 0
            d.setdefault("index", i)  # -q lists GPUs in NVML index order
            _finish_device(d)
        devices = [d for d in devices if "index" in d]
        out["devices"] = devices
    return out


def _leaf_may_be_empty(key: str) -> bool:
    return key in ("reserved", "used", "free")  # "Reserved :" under a MIG paste


def _query_top(out: Dict[str, Any], path: List[str], val: str) -> None:
    key = path[-1]
    if key in ("driver version", "kmd version") and value(val):
        out["driver_version"] = val.strip()
        out["seen"] = True
    elif key in ("cuda version", "cuda umd version") and value(val):
        out["cuda_driver_version"] = val.strip()
    elif key == "attached gpus" and _int(val) is not None:
        out["attached_gpus"] = _int(val)
        out["seen"] = True


def _put(d: Dict[str, Any], dotted: str, v: Any) -> None:
    if v is None:
        return
    *parents, last = dotted.split(".")
    for p in parents:
        d = d.setdefault(p, {})
    d[last] = v


def _yes(val: str) -> Optional[bool]:
    v = (value(val) or "").lower()
    return True if v in ("yes", "enabled", "active", "on") else False if v in ("no", "disabled", "not active", "off") else None


def _query_device(d: Dict[str, Any], path: List[str], val: str) -> None:
    key, sect = path[-1], (path[0] if len(path) > 1 else "")
    where = " / ".join(path[:-1])
    simple = {
        ("", "product name"): ("name", value),
        ("", "gpu uuid"): ("uuid", value),
        ("", "serial number"): ("serial", value),
        ("", "minor number"): ("minor_number", _int),
        ("", "persistence mode"): ("persistence_mode", _yes),
        ("", "compute mode"): ("compute_mode", lambda v: value(v)),
        ("", "performance state"): ("performance_state", lambda v: _int((value(v) or "").lstrip("P"))),
        ("mig mode", "current"): ("mig_mode.current", _yes),
        ("mig mode", "pending"): ("mig_mode.pending", _yes),
        ("ecc mode", "current"): ("ecc_mode.current", _yes),
        ("ecc mode", "pending"): ("ecc_mode.pending", _yes),
        ("fb memory usage", "total"): ("memory.total_bytes", _mib),
        ("fb memory usage", "used"): ("memory.used_bytes", _mib),
        ("fb memory usage", "free"): ("memory.free_bytes", _mib),
        ("utilization", "gpu"): ("utilization.gpu", _int),
        ("utilization", "memory"): ("utilization.memory", _int),
        ("temperature", "gpu current temp"): ("temperature_c", _int),
        ("temperature", "gpu shutdown temp"): ("temperature_shutdown_c", _int),
        ("temperature", "gpu slowdown temp"): ("temperature_slowdown_c", _int),
        ("clocks", "graphics"): ("clocks.graphics", _int),
        ("clocks", "sm"): ("clocks.sm", _int),
        ("clocks", "memory"): ("clocks.memory", _int),
        ("max clocks", "graphics"): ("max_clocks.graphics", _int),
        ("max clocks", "sm"): ("max_clocks.sm", _int),
        ("max clocks", "memory"): ("max_clocks.memory", _int),
        ("retired pages", "pending"): ("retired_pages.pending", _yes),
        ("retired pages", "pending page blacklist"): ("retired_pages.pending", _yes),
        ("retired pages", "pending page retirement"): ("retired_pages.pending", _yes),
        ("remapped rows", "correctable error"): ("remapped_rows.correctable", _int),
        ("remapped rows", "uncorrectable error"): ("remapped_rows.uncorrectable", _int),
        ("remapped rows", "pending"): ("remapped_rows.pending", _yes),
        ("remapped rows", "remapping failure occurred"): ("remapped_rows.failure", _yes),
    }
    hit = simple.get((sect if len(path) == 2 else "" if len(path) == 1 else None, key))
    if hit:
        dotted, conv = hit
        v = conv(val)
        if dotted == "compute_mode" and v is not None:
            v = _BANNER_MODES.get(v.lower(), v)
        _put(d, dotted, v)
        return
    if sect == "pci":
        _query_pci(d, path, val)
    elif sect in ("clocks throttle reasons", "clocks event reasons", "clocks_event_reasons"):
        _query_reason(d, key, val)
    elif sect == "ecc errors":
        _query_ecc(d, path, val)
    elif sect in ("power readings", "gpu power readings"):
        _query_power(d, key, val)
    elif sect == "processes" or where.startswith("processes"):
        _query_process(d, key, val)
    elif sect == "retired pages" and key in ("single bit ecc", "double bit ecc") and len(path) == 2:
        _put(d, "retired_pages." + key.split()[0] + "_bit", _int(val.split()[0] if val.split() else val))
    if key == "processes" and len(path) == 1 and (val.strip().lower() == "none"):
        d["processes"] = []


def _mib(val: str) -> Optional[int]:
    m = re.fullmatch(r"(\d+)\s*MiB", value(val) or "")
    return int(m.group(1)) * MIB if m else None


def _query_pci(d: Dict[str, Any], path: List[str], val: str) -> None:
    key, where = path[-1], " / ".join(path)
    if key == "bus id" and value(val):
        d["pci_bus_id"] = val.strip()
    elif "pcie generation" in where:
        n = _int(val)
        target = {"max": "pcie.gen_max", "current": "pcie.gen_current", "device max": "pcie.gen_gpu_max"}.get(key)
        if target:
            _put(d, target, n)
    elif "link width" in where:
        n = _int(val)
        target = {"max": "pcie.width_max", "current": "pcie.width_current"}.get(key)
        if target:
            _put(d, target, n)


def _query_reason(d: Dict[str, Any], key: str, val: str) -> None:
    active = _yes(val)
    seen = d.setdefault("_reasons", {})
    if active is None:
        return
    bit = _REASON_BITS.get(re.sub(r"\s+", " ", key))
    if bit is None:
        if key == "unknown" and active:
            seen["unknown_active"] = True
        return
    seen[bit] = active


def _query_ecc(d: Dict[str, Any], path: List[str], val: str) -> None:
    if len(path) < 3:
        return
    counter = path[1]
    if counter not in ("volatile", "aggregate"):
        return
    n = _int(val)
    keys = " ".join(path[2:])
    if "total" in keys and ("single bit" in keys or "double bit" in keys):
        kind = "corrected" if "single bit" in keys else "uncorrected"
    elif re.search(r"\b(?:sram|dram)\b.*\bcorrectable\b", keys) and "uncorrectable" not in keys:
        kind = "corrected"
    elif re.search(r"\b(?:sram|dram)\b.*\buncorrectable\b", keys):
        kind = "uncorrected"
    else:
        return
    d.setdefault("_ecc", {}).setdefault((counter, kind), {})[keys] = n


def _query_power(d: Dict[str, Any], key: str, val: str) -> None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*W", value(val) or "")
    if not m:
        return
    mw = round(float(m.group(1)) * 1000)
    target = {
        "power draw": "power.usage_mw",
        "instantaneous power draw": None,
        "average power draw": "power.usage_mw",
        "power limit": "power.limit_mw",
        "current power limit": "power.limit_mw",
        "default power limit": "power.default_limit_mw",
        "enforced power limit": "power.enforced_limit_mw",
    }.get(key)
    if target and _dig(d, target) is None:
        _put(d, target, mw)


def _dig(d: Any, dotted: str) -> Any:
    for p in dotted.split("."):
        d = d.get(p) if isinstance(d, dict) else None
    return d


def _query_process(d: Dict[str, Any], key: str, val: str) -> None:
    procs = d.setdefault("_procs", [])
    if key == "gpu instance id":
        procs.append({"_gi": _int(val)})
    elif key == "process id":
        if procs and "pid" not in procs[-1]:
            procs[-1]["pid"] = _int(val)
        else:
            procs.append({"pid": _int(val)})
    elif key == "compute instance id" and procs:
        procs[-1]["_ci"] = _int(val)
    elif key == "type" and procs:
        procs[-1]["_type"] = (value(val) or "").upper()
    elif key == "used gpu memory" and procs:
        procs[-1]["used_memory_bytes"] = _mib(val)


def _finish_device(d: Dict[str, Any]) -> None:
    """Fold what -q spreads over several lines into the probe's fields."""
    reasons = d.pop("_reasons", None)
    if reasons:
        bits = {k: v for k, v in reasons.items() if isinstance(k, int)}
        if bits:
            d["clock_event_reasons"] = {"mask": sum(b for b, on in bits.items() if on), "api": "nvidia-smi -q"}
            if reasons.get("unknown_active"):
                d["clock_event_reasons"]["unknown_active"] = True
    ecc = d.pop("_ecc", None)
    if ecc:
        for (counter, kind), by_key in ecc.items():
            if "sram uncorrectable" in by_key:  # a total printed beside its parts: count it once
                by_key = {k: n for k, n in by_key.items() if not k.startswith("sram uncorrectable ")}
            known = [n for n in by_key.values() if n is not None]
            if known:
                _put(d, f"ecc_errors.{counter}.{kind}", sum(known))
    procs = d.pop("_procs", None)
    if procs is not None:
        out = []
        for p in procs:
            if not isinstance(p.get("pid"), int) or "C" not in p.get("_type", "C"):
                continue
            item = {"pid": p["pid"], "used_memory_bytes": p.get("used_memory_bytes")}
            for k, key in (("_gi", "gpu_instance_id"), ("_ci", "compute_instance_id")):
                if isinstance(p.get(k), int):
                    item[key] = p[k]
            out.append(item)
        d["processes"] = out
