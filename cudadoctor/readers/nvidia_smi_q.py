"""Read pasted ``nvidia-smi -q`` into NVML facts (the per-GPU records of ``facts["nvml"]``).

``-q`` prints an indented tree: section names, and ``key : value`` leaves. What it prints differs
across driver generations: ``Clocks Throttle Reasons`` (before 535) / ``Clocks Event Reasons``; ECC
counts per ``Single Bit`` / ``Double Bit`` location (Kepler..Volta) or ``SRAM`` / ``DRAM`` (Ampere
and later); ``Retired Pages`` ``Pending`` / ``Pending Page Blacklist``; ``Remapped Rows``. Called
by :func:`cudadoctor.readers.nvidia_smi.parse`, which merges it with the banner table.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..interpret.gpus import CLOCK_EVENT_REASONS
from ._smi_values import COMPUTE_MODES, mib, number, value, yes

_REASON_BITS = {label.lower(): bit for bit, _, label in CLOCK_EVENT_REASONS}

_KV = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][A-Za-z0-9 .()/_+-]{0,80}?)\s{0,80}:(?P<value>.*)$")
_GPU_HEAD = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")


def read_query(lines: List[str]) -> Dict[str, Any]:
    """Walk -q's indented tree: a path of section names, and key : value leaves.

    Returns the top-level values (``driver_version``, ``cuda_driver_version``, ``attached_gpus``),
    ``devices`` in the NVML probe's shape, and ``seen`` when any of it was -q output.
    """
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
    elif key == "attached gpus" and number(val) is not None:
        out["attached_gpus"] = number(val)
        out["seen"] = True


def _put(d: Dict[str, Any], dotted: str, v: Any) -> None:
    if v is None:
        return
    *parents, last = dotted.split(".")
    for p in parents:
        d = d.setdefault(p, {})
    d[last] = v


def _compute_mode(val: str) -> Optional[str]:
    v = value(val)
    return COMPUTE_MODES.get(v.lower(), v) if v is not None else None


def _pstate(val: str) -> Optional[int]:
    return number((value(val) or "").lstrip("P"))


#: (section, key) -> (the probe's dotted field, how to read the value); section "" is the GPU's top level.
_FIELDS: Dict[Tuple[str, str], Tuple[str, Callable[[str], Any]]] = {
    ("", "product name"): ("name", value),
    ("", "gpu uuid"): ("uuid", value),
    ("", "serial number"): ("serial", value),
    ("", "minor number"): ("minor_number", number),
    ("", "persistence mode"): ("persistence_mode", yes),
    ("", "compute mode"): ("compute_mode", _compute_mode),
    ("", "performance state"): ("performance_state", _pstate),
    ("mig mode", "current"): ("mig_mode.current", yes),
    ("mig mode", "pending"): ("mig_mode.pending", yes),
    ("ecc mode", "current"): ("ecc_mode.current", yes),
    ("ecc mode", "pending"): ("ecc_mode.pending", yes),
    ("fb memory usage", "total"): ("memory.total_bytes", mib),
    ("fb memory usage", "used"): ("memory.used_bytes", mib),
    ("fb memory usage", "reserved"): ("memory.reserved_bytes", mib),
    ("fb memory usage", "free"): ("memory.free_bytes", mib),
    ("utilization", "gpu"): ("utilization.gpu", number),
    ("utilization", "memory"): ("utilization.memory", number),
    ("temperature", "gpu current temp"): ("temperature_c", number),
    ("temperature", "gpu shutdown temp"): ("temperature_shutdown_c", number),
    ("temperature", "gpu slowdown temp"): ("temperature_slowdown_c", number),
    ("clocks", "graphics"): ("clocks.graphics", number),
    ("clocks", "sm"): ("clocks.sm", number),
    ("clocks", "memory"): ("clocks.memory", number),
    ("max clocks", "graphics"): ("max_clocks.graphics", number),
    ("max clocks", "sm"): ("max_clocks.sm", number),
    ("max clocks", "memory"): ("max_clocks.memory", number),
    ("retired pages", "pending"): ("retired_pages.pending", yes),
    ("retired pages", "pending page blacklist"): ("retired_pages.pending", yes),
    ("retired pages", "pending page retirement"): ("retired_pages.pending", yes),
    ("remapped rows", "correctable error"): ("remapped_rows.correctable", number),
    ("remapped rows", "uncorrectable error"): ("remapped_rows.uncorrectable", number),
    ("remapped rows", "pending"): ("remapped_rows.pending", yes),
    ("remapped rows", "remapping failure occurred"): ("remapped_rows.failure", yes),
}


def _query_device(d: Dict[str, Any], path: List[str], val: str) -> None:
    key, sect = path[-1], (path[0] if len(path) > 1 else "")
    where = " / ".join(path[:-1])
    hit = _FIELDS.get((sect, key)) if len(path) <= 2 else None
    if hit:
        dotted, conv = hit
        _put(d, dotted, conv(val))
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
        _put(d, "retired_pages." + key.split()[0] + "_bit", number(val.split()[0] if val.split() else val))
    if key == "processes" and len(path) == 1 and (val.strip().lower() == "none"):
        d["processes"] = []


def _query_pci(d: Dict[str, Any], path: List[str], val: str) -> None:
    key, where = path[-1], " / ".join(path)
    if key == "bus id" and value(val):
        d["pci_bus_id"] = val.strip()
    elif "pcie generation" in where:
        n = number(val)
        target = {"max": "pcie.gen_max", "current": "pcie.gen_current", "device max": "pcie.gen_gpu_max"}.get(key)
        if target:
            _put(d, target, n)
    elif "link width" in where:
        n = number(val)
        target = {"max": "pcie.width_max", "current": "pcie.width_current"}.get(key)
        if target:
            _put(d, target, n)


def _query_reason(d: Dict[str, Any], key: str, val: str) -> None:
    active = yes(val)
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
    n = number(val)
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
        procs.append({"_gi": number(val)})
    elif key == "process id":
        if procs and "pid" not in procs[-1]:
            procs[-1]["pid"] = number(val)
        else:
            procs.append({"pid": number(val)})
    elif key == "compute instance id" and procs:
        procs[-1]["_ci"] = number(val)
    elif key == "type" and procs:
        procs[-1]["_type"] = (value(val) or "").upper()
    elif key == "used gpu memory" and procs:
        procs[-1]["used_memory_bytes"] = mib(val)


def _finish_device(d: Dict[str, Any]) -> None:
    """Fold what -q spreads over several lines into the probe's fields."""
    mem = d.get("memory") or {}
    if isinstance(mem.get("reserved_bytes"), int) and isinstance(mem.get("used_bytes"), int):
        # -q prints the driver's reserved memory apart (R470+); NVML's memory info (what the probe reads) counts it
        # as used: total = used + free there, as here once it is added back
        mem["used_bytes"] += mem["reserved_bytes"]
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
