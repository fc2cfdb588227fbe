"""One model per GPU, merging what NVML, PyTorch and the knowledge base say about it.

Pure: reads a facts document (and, when given, the findings of a report), never the system.
Each value is the answer of one source, or ``None`` when no source could give it; ``sources``
names where each came from and ``unknown`` why a value is missing. Nothing unknown is shown as 0.

The theoretical memory bandwidth is ``2 x memory clock x bus width / 8``: the clock is the
driver-reported maximum memory clock (NVML's max memory clock, else CUDA's memoryClockRate as torch
reports it); for those clocks the data rate per pin is twice the clock for every memory type NVIDIA
ships on discrete GPUs (GDDR5/5X/6/6X and HBM2/2e/3/3e: the driver already reports GDDR6's and
GDDR6X's clock scaled to that convention). See docs/devices.md for the check against published
figures. Integrated GPUs (Jetson, which report e.g. a 13 MHz memory clock) get no figure.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from .facts import Facts
from . import kb
from .interpret import arch_runs, cores_per_sm

# What NVML's readings mean lives in interpret.gpus; the ``X as X`` names are re-exported for
# checks/health.py and render/prometheus.py, which import them from here.
from .interpret.gpus import (
    BUSY_UTILIZATION as BUSY_UTILIZATION,
    CLOCK_EVENT_REASONS as CLOCK_EVENT_REASONS,
    LOST_CODES as LOST_CODES,
    THROTTLE_REASONS as THROTTLE_REASONS,
    bus_key,
    lost_error,
    no_device_reason,
    reason_label as reason_label,
    reason_names,
    torch_state,
)

DEVICES_KIND = "cudadoctor-devices"
DEVICES_SCHEMA = 1


def _uuid_key(u: Any) -> Optional[str]:
    if not isinstance(u, str) or not u.strip():
        return None
    s = u.strip().lower()
    for prefix in ("gpu-", "mig-"):
        if s.startswith(prefix):
            s = s[len(prefix) :]
    return s


def _torch_bus(t: Dict[str, Any]) -> Optional[Tuple[int, int, int]]:
    tv = Facts(t)
    b, d, dom = tv.int("pci_bus_id"), tv.int("pci_device_id"), tv.int("pci_domain_id")
    if b is None or d is None:
        return None
    return (dom or 0, b, d)


def match_torch(nvml_devs: List[Dict[str, Any]], torch_devs: List[Dict[str, Any]]) -> Dict[int, List[Dict[str, Any]]]:
    """NVML index -> the torch devices that are this GPU (several for a MIG-partitioned GPU).

    By UUID (a torch device whose UUID is the GPU's or one of its MIG instances'), then by PCI
    address. CUDA orders devices fastest-first and CUDA_VISIBLE_DEVICES reorders and hides them,
    so torch's index is never assumed to be NVML's.
    """
    out: Dict[int, List[Dict[str, Any]]] = {}
    by_uuid: Dict[str, int] = {}
    by_bus: Dict[Tuple[int, int, int], int] = {}
    for d in nvml_devs:
        idx = Facts(d).int("index")
        if idx is None:
            continue
        k = _uuid_key(d.get("uuid"))
        if k:
            by_uuid[k] = idx
        for m in d.get("mig_devices") or []:
            mk = _uuid_key(m.get("uuid")) if isinstance(m, dict) else None
            if mk:
                by_uuid[mk] = idx
        b = bus_key(d.get("pci_bus_id"))
        if b:
            by_bus[b] = idx
    for t in torch_devs:
        idx = by_uuid.get(_uuid_key(t.get("uuid")) or "")
        if idx is None:
            b = _torch_bus(t)
            idx = by_bus.get(b) if b else None
        if idx is not None:
            out.setdefault(idx, []).append(t)
    return out


def bandwidth_gbs(mem_clock_mhz: Optional[float], bus_width_bits: Optional[int]) -> Optional[float]:
    """Theoretical memory bandwidth in GB/s (10^9 bytes/s): 2 x clock x width / 8."""
    if not mem_clock_mhz or not bus_width_bits or mem_clock_mhz <= 0 or bus_width_bits <= 0:
        return None
    return round(2 * mem_clock_mhz * 1e6 * bus_width_bits / 8 / 1e9, 1)


class _Dev:
    """Builds one device's dict with values, their sources and the reasons for unknowns."""

    def __init__(self) -> None:
        self.d: Dict[str, Any] = {"sources": {}, "unknown": {}}

    def put(self, key: str, value: Any, source: str, why_unknown: Optional[str] = None) -> None:
        self.d[key] = value
        if value is not None:
            self.d["sources"][key] = source
        elif why_unknown:
            self.d["unknown"][key] = why_unknown

    def first(self, key: str, *candidates: Tuple[Any, str], why_unknown: Optional[str] = None) -> None:
        for value, source in candidates:
            if value is not None:
                self.put(key, value, source)
                return
        self.put(key, None, "", why_unknown)


def _nvml_why(dev: Dict[str, Any], field: str) -> Optional[str]:
    e = (dev.get("errors") or {}).get(field)
    if isinstance(e, dict):
        return f"NVML: {e.get('message') or 'error ' + str(e.get('code'))}"
    return dev.get("_default_why")


def build_device(dev: Dict[str, Any], torch_matches: List[Dict[str, Any]], fx: Facts, show_serials: bool) -> Dict[str, Any]:
    """One GPU's properties from NVML and torch, each with its source or why it is unknown."""
    b = _Dev()
    nv = Facts(dev)
    t = torch_matches[0] if len(torch_matches) == 1 else {}
    mig_torch = torch_matches if len(torch_matches) > 1 or nv.get("mig_mode.current") else []
    if mig_torch:
        t = {}
    tv = Facts(t)
    torch_ok, torch_why = torch_state(fx)
    no_torch = torch_why or "PyTorch does not see this GPU"
    if torch_ok and not torch_matches:
        no_torch = "PyTorch does not see this GPU (CUDA_VISIBLE_DEVICES, or another GPU ordering)"
    b.put("index", nv.int("index"), "nvml")
    b.put("torch_index", tv.int("index") if t else None, "torch", no_torch)
    b.first("name", (nv.str("name"), "nvml"), (tv.str("name"), "torch"), why_unknown=_nvml_why(dev, "name"))
    b.put("uuid", nv.str("uuid"), "nvml", _nvml_why(dev, "uuid"))
    serial = nv.str("serial")
    if serial and not show_serials:
        b.d["serial_hidden"] = True
        serial = None
    b.put("serial", serial, "nvml", None if b.d.get("serial_hidden") else _nvml_why(dev, "serial"))
    b.put("pci_bus_id", nv.str("pci_bus_id"), "nvml", _nvml_why(dev, "pci_bus_id"))
    cap = nv.str("compute_capability") or tv.str("capability")
    b.first(
        "compute_capability",
        (nv.str("compute_capability"), "nvml"),
        (tv.str("capability"), "torch"),
        why_unknown=_nvml_why(dev, "compute_capability"),
    )
    b.put("architecture", f"sm_{cap.replace('.', '')}" if cap else None, "derived")
    _compute_and_memory(b, nv, tv, dev, cap, no_torch, bool(t.get("is_integrated") is True))
    _clocks_and_modes(b, nv, tv, dev)
    migs = _mig_instances(b, nv, dev, mig_torch)
    _link_power_thermal(b, nv, dev)
    _framework_view(b, fx, tv if t else None, cap, migs, no_torch)
    b.d["lost"] = lost_error(dev)
    return b.d


def _compute_and_memory(
    b: "_Dev", nv: Facts, tv: Facts, dev: Dict[str, Any], cap: Optional[str], no_torch: str, integrated: bool
) -> None:
    # Compute resources.
    cps = cores_per_sm(cap)
    b.put(
        "cores_per_sm",
        cps,
        "kb",
        "the knowledge base does not know this compute capability" if cap else "compute capability unknown",
    )
    sms = tv.int("multi_processor_count")
    nvml_cores = nv.int("num_cores")
    if sms is None and nvml_cores and cps and nvml_cores % cps == 0:
        b.put("multiprocessors", nvml_cores // cps, "derived")
    else:
        b.put("multiprocessors", sms, "torch", no_torch)
    m = b.d["multiprocessors"]
    if m and cps:
        b.put("cuda_cores", m * cps, "kb")
    else:
        b.put("cuda_cores", nvml_cores, "nvml", "needs the multiprocessor count and the cores per SM")

    # Memory.
    total = nv.int("memory.total_bytes")
    b.first("memory_total_bytes", (total, "nvml"), (tv.int("total_memory"), "torch"), why_unknown=_nvml_why(dev, "memory"))
    b.put("memory_free_bytes", nv.int("memory.free_bytes"), "nvml", _nvml_why(dev, "memory") or "only NVML reports free memory")
    b.put("memory_used_bytes", nv.int("memory.used_bytes"), "nvml", _nvml_why(dev, "memory"))
    b.first(
        "memory_bus_width_bits",
        (nv.int("memory_bus_width"), "nvml"),
        (tv.int("memory_bus_width"), "torch"),
        why_unknown=_nvml_why(dev, "memory_bus_width"),
    )
    torch_mem_clock = tv.num("memory_clock_rate")
    b.first(
        "memory_clock_max_mhz",
        (nv.int("max_clocks.memory"), "nvml"),
        (round(torch_mem_clock / 1000) if torch_mem_clock else None, "torch"),
        why_unknown=_nvml_why(dev, "max_clocks.memory"),
    )
    b.put("memory_clock_mhz", nv.int("clocks.memory"), "nvml", _nvml_why(dev, "clocks.memory"))
    if integrated:
        b.put("memory_bandwidth_gbs", None, "", "integrated GPU: its reported memory clock does not give the bandwidth")
    else:
        b.put(
            "memory_bandwidth_gbs",
            bandwidth_gbs(b.d["memory_clock_max_mhz"], b.d["memory_bus_width_bits"]),
            "derived",
            "needs the maximum memory clock and the bus width",
        )
    b.put("l2_cache_bytes", tv.int("L2_cache_size"), "torch", no_torch)
    b.put("shared_memory_per_block_bytes", tv.int("shared_memory_per_block"), "torch", no_torch)
    b.put("shared_memory_per_block_optin_bytes", tv.int("shared_memory_per_block_optin"), "torch", no_torch)
    b.put("shared_memory_per_multiprocessor_bytes", tv.int("shared_memory_per_multiprocessor"), "torch", no_torch)
    b.put("registers_per_multiprocessor", tv.int("regs_per_multiprocessor"), "torch", no_torch)
    regs = kb.registers_per_block(cap) if cap else None
    b.put("registers_per_block", regs, "kb", "neither NVML nor torch.cuda reports it, and the architecture is unknown")
    b.put("warp_size", tv.int("warp_size"), "torch", no_torch)
    b.put("max_threads_per_block", tv.int("max_threads_per_block"), "torch", no_torch)
    b.put("max_threads_per_multiprocessor", tv.int("max_threads_per_multi_processor"), "torch", no_torch)


def _clocks_and_modes(b: "_Dev", nv: Facts, tv: Facts, dev: Dict[str, Any]) -> None:
    # Clocks.
    torch_sm_clock = tv.num("clock_rate")
    b.put("sm_clock_mhz", nv.int("clocks.sm"), "nvml", _nvml_why(dev, "clocks.sm"))
    b.first(
        "sm_clock_max_mhz",
        (nv.int("max_clocks.sm"), "nvml"),
        (round(torch_sm_clock / 1000) if torch_sm_clock else None, "torch"),
        why_unknown=_nvml_why(dev, "max_clocks.sm"),
    )

    # Modes.
    ecc_cur = nv.bool("ecc_mode.current")
    b.put("ecc_enabled", ecc_cur, "nvml", _nvml_why(dev, "ecc_mode"))
    b.put("ecc_pending", nv.bool("ecc_mode.pending"), "nvml", _nvml_why(dev, "ecc_mode"))
    errs = {}
    for c in ("volatile", "aggregate"):
        for k in ("corrected", "uncorrected"):
            errs[f"{c}_{k}"] = nv.int(f"ecc_errors.{c}.{k}")
    b.put(
        "ecc_errors",
        errs if any(v is not None for v in errs.values()) else None,
        "nvml",
        "ECC is off: no error counts are kept"
        if ecc_cur is False
        else (_nvml_why(dev, "ecc_errors.volatile.uncorrected") or _nvml_why(dev, "ecc_mode")),
    )
    rp = nv.dict("retired_pages") or {}
    b.put(
        "retired_pages",
        {k: rp.get(k) for k in ("pending", "single_bit", "double_bit")} if rp.get("pending") is not None else None,
        "nvml",
        _nvml_why(dev, "retired_pages.pending"),
    )
    b.put("remapped_rows", nv.dict("remapped_rows"), "nvml", _nvml_why(dev, "remapped_rows"))
    b.put("compute_mode", nv.str("compute_mode"), "nvml", _nvml_why(dev, "compute_mode"))
    b.put("persistence_mode", nv.bool("persistence_mode"), "nvml", _nvml_why(dev, "persistence_mode"))
    b.put("mig_enabled", nv.bool("mig_mode.current"), "nvml", _nvml_why(dev, "mig_mode"))
    b.put("mig_pending", nv.bool("mig_mode.pending"), "nvml", _nvml_why(dev, "mig_mode"))


def _mig_instances(b: "_Dev", nv: Facts, dev: Dict[str, Any], mig_torch: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    migs = []
    for mdev in dev.get("mig_devices") or []:
        if not isinstance(mdev, dict):
            continue
        mt = next(
            (x for x in mig_torch if _uuid_key(x.get("uuid")) and _uuid_key(x.get("uuid")) == _uuid_key(mdev.get("uuid"))), None
        )
        migs.append(
            {
                "uuid": Facts(mdev).str("uuid"),
                "gpu_instance_id": Facts(mdev).int("gpu_instance_id"),
                "compute_instance_id": Facts(mdev).int("compute_instance_id"),
                "multiprocessors": Facts(mdev).int("attributes.multiprocessor_count"),
                "memory_total_bytes": Facts(mdev).int("memory.total_bytes"),
                "memory_free_bytes": Facts(mdev).int("memory.free_bytes"),
                "torch_index": Facts(mt).int("index") if mt else None,
                "torch_name": Facts(mt).str("name") if mt else None,
                "kernel_ok": Facts(mt).bool("kernel_ok") if mt else None,
                "kernel_error": Facts(mt).str("kernel_error") if mt else None,
            }
        )
    b.put(
        "mig_instances",
        migs if dev.get("mig_devices") is not None else None,
        "nvml",
        "MIG is not enabled"
        if nv.get("mig_mode.current") is False
        else _nvml_why(dev, "mig_devices") or _nvml_why(dev, "mig_mode"),
    )
    return migs


def _link_power_thermal(b: "_Dev", nv: Facts, dev: Dict[str, Any]) -> None:
    # Link, power, thermal.
    for key, field in (
        ("pcie_gen_current", "gen_current"),
        ("pcie_gen_max", "gen_max"),
        ("pcie_gen_gpu_max", "gen_gpu_max"),
        ("pcie_width_current", "width_current"),
        ("pcie_width_max", "width_max"),
    ):
        b.put(key, nv.int("pcie." + field), "nvml", _nvml_why(dev, "pcie." + field))
    b.put("utilization_gpu_percent", nv.int("utilization.gpu"), "nvml", _nvml_why(dev, "utilization"))
    b.put("utilization_memory_percent", nv.int("utilization.memory"), "nvml", _nvml_why(dev, "utilization"))
    for key, field in (
        ("power_limit_w", "limit_mw"),
        ("power_default_limit_w", "default_limit_mw"),
        ("power_enforced_limit_w", "enforced_limit_mw"),
        ("power_usage_w", "usage_mw"),
    ):
        mw = nv.num("power." + field)
        b.put(key, round(mw / 1000, 1) if mw is not None else None, "nvml", _nvml_why(dev, "power." + field))
    b.put("temperature_c", nv.int("temperature_c"), "nvml", _nvml_why(dev, "temperature_c"))
    b.put("temperature_slowdown_c", nv.int("temperature_slowdown_c"), "nvml", _nvml_why(dev, "temperature_slowdown_c"))
    b.put("temperature_shutdown_c", nv.int("temperature_shutdown_c"), "nvml", _nvml_why(dev, "temperature_shutdown_c"))
    ps = nv.int("performance_state")
    b.put("performance_state", f"P{ps}" if ps is not None and 0 <= ps < 32 else None, "nvml", _nvml_why(dev, "performance_state"))
    mask = nv.int("clock_event_reasons.mask")
    b.put("clock_event_reasons", reason_names(mask), "nvml", _nvml_why(dev, "clock_event_reasons"))
    procs = dev.get("processes")
    b.put(
        "processes",
        [p for p in procs if isinstance(p, dict)] if isinstance(procs, list) else None,
        "nvml",
        _nvml_why(dev, "processes"),
    )
    links = dev.get("nvlinks")
    if isinstance(links, list):
        b.put("nvlinks", [lk for lk in links if isinstance(lk, dict)], "nvml")
    else:
        b.put(
            "nvlinks",
            None,
            "",
            "NVML answers Not Supported for NVLink 0: none is exposed here — a GPU without NVLink, or one passed alone into a VM"
            if ((dev.get("errors") or {}).get("nvlinks") or {}).get("code") == 3
            else _nvml_why(dev, "nvlinks"),
        )


def _framework_view(
    b: "_Dev", fx: Facts, tv: Optional[Facts], cap: Optional[str], migs: List[Dict[str, Any]], no_torch: str
) -> None:
    # The framework's view.
    arch_list = fx.list("torch.arch_list")
    runs = arch_runs(cap, [str(a) for a in arch_list] if arch_list else None)
    if arch_list and cap:
        b.put("arch_in_build", runs or "no", "kb")
    else:
        b.put("arch_in_build", None, "", "torch's arch list is unknown" if not arch_list else "compute capability unknown")
    b.d["arch_list"] = [str(a) for a in arch_list] if arch_list else None
    if tv is not None:
        b.put("kernel_ok", tv.bool("kernel_ok"), "torch", "the test kernel was not run")
        b.d["kernel_error"] = tv.str("kernel_error")
    elif migs and any(mi.get("kernel_ok") is not None for mi in migs):
        oks = [mi.get("kernel_ok") for mi in migs if mi.get("kernel_ok") is not None]
        b.put("kernel_ok", all(oks), "torch")
        b.d["kernel_error"] = next((mi.get("kernel_error") for mi in migs if mi.get("kernel_ok") is False), None)
    else:
        b.put("kernel_ok", None, "", no_torch)
        b.d["kernel_error"] = None


def _lost_stub(dev: Dict[str, Any]) -> Dict[str, Any]:
    err = Facts(dev).dict("error") or {}
    return {
        "index": Facts(dev).int("index"),
        "name": None,
        "sources": {},
        "unknown": {"*": f"NVML: {err.get('message') or '?'}"},
        "lost": lost_error(dev),
        "handle_error": err,
    }


def verdict(d: Dict[str, Any], findings: List[Dict[str, Any]]) -> Tuple[str, List[str]]:
    """deviceQuery's closing line for one GPU: PASS, FAIL or UNKNOWN, with why."""
    fails: List[str] = []
    notes: List[str] = []
    if d.get("lost"):
        fails.append("the GPU is lost (NVML: %s)" % (d["lost"].get("message") or d["lost"].get("code")))
    if d.get("nvml_hung"):
        fails.append(f"NVML did not answer for this GPU (blocked in {d['nvml_hung']}): the driver or the GPU is hung")
    for f in findings:
        if f.get("severity") == "error":
            fails.append(f"{f.get('code')}: {f.get('title')}")
        elif f.get("severity") == "warning":
            notes.append(f"{f.get('code')}")
    if d.get("arch_in_build") == "no":
        fails.append(f"{d.get('architecture')} is not in this PyTorch build's arch list")
    if d.get("kernel_ok") is False:
        fails.append("the test kernel failed: " + (d.get("kernel_error") or "?").splitlines()[0][:200])
    if fails:
        return "FAIL", fails
    if d.get("kernel_ok") is True:
        return "PASS", (["a test kernel ran"] + ([f"warnings: {', '.join(notes)}"] if notes else []))
    why = d.get("unknown", {}).get("kernel_ok") or "PyTorch did not run a kernel here"
    return "UNKNOWN", [f"no health problem found, but: {why}"] + ([f"warnings: {', '.join(notes)}"] if notes else [])


def _findings_for(index: Optional[int], findings: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    out = []
    for f in findings:
        ev = f.get("evidence") or {}
        if index is not None and ev.get("gpu") == index:
            out.append(f)
    return out


def _nvml_pairs(matrix: Optional[List[Any]], idx: List[Any]) -> List[List[Optional[str]]]:
    """An NVML P2P status matrix (rows and columns by NVML index) laid out in the order of ``idx``:
    the status word of each pair, None on the diagonal and where NVML gave none."""
    out: List[List[Optional[str]]] = [[None] * len(idx) for _ in idx]
    for a, ia in enumerate(idx):
        for b, ib in enumerate(idx):
            try:
                v = matrix[ia][ib] if matrix is not None else None
            except (IndexError, TypeError):
                v = None
            if a != b and isinstance(v, str):
                out[a][b] = v
    return out


def peer_matrix(fx: Facts, devices: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """Who can access whose memory, by NVML index: torch's answer where it gave one, else NVML's P2P read status."""
    n = len(devices)
    if n < 2:
        return None
    idx: List[Any] = [d.get("index") for d in devices]
    torch_m = fx.list("torch.peer_access")
    tindex = {d.get("torch_index"): i for i, d in enumerate(devices) if d.get("torch_index") is not None}
    nvml_read = fx.list("nvml.p2p.read")
    cells: List[List[Optional[str]]] = [[None] * n for _ in range(n)]
    if isinstance(torch_m, list) and len(tindex) >= 2:
        source = "torch.cuda.can_device_access_peer"
        for ti, row in enumerate(torch_m):
            if not isinstance(row, list) or ti not in tindex:
                continue
            for tj, v in enumerate(row):
                if tj in tindex and tindex[ti] != tindex[tj] and isinstance(v, bool):
                    cells[tindex[ti]][tindex[tj]] = "yes" if v else "no"
    elif isinstance(nvml_read, list):
        source = "NVML P2P status (read)"
        cells = [[None if v is None else "yes" if v == "ok" else "no" for v in row] for row in _nvml_pairs(nvml_read, idx)]
    else:
        return None
    links = _nvml_pairs(fx.list("nvml.p2p.nvlink"), idx)
    via_nvlink = [[None if v is None else v == "ok" for v in row] for row in links]
    return {"source": source, "indices": idx, "access": cells, "nvlink": via_nvlink}


def nvlink_summary(devices: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """Active NVLink links per GPU and, between GPUs, how many links join each pair directly."""
    if not any(d.get("nvlinks") for d in devices):
        return None
    by_bus = {bus_key(d.get("pci_bus_id")): d.get("index") for d in devices if bus_key(d.get("pci_bus_id"))}
    rows = []
    for d in devices:
        links = d.get("nvlinks") or []
        active = [lk for lk in links if lk.get("active")]
        peers: Dict[str, int] = {}
        switch = 0
        for lk in active:
            if lk.get("remote_type") == "nvswitch":
                switch += 1
                continue
            peer = by_bus.get(bus_key(lk.get("remote_pci_bus_id")))
            if peer is not None:
                peers[str(peer)] = peers.get(str(peer), 0) + 1
        versions = sorted({lk.get("version") for lk in active if isinstance(lk.get("version"), int)})
        rows.append(
            {
                "index": d.get("index"),
                "links": len(links) if d.get("nvlinks") is not None else None,
                "active": len(active) if d.get("nvlinks") is not None else None,
                "inactive": [lk.get("link") for lk in links if lk.get("active") is False],
                "versions": versions,
                "to_nvswitch": switch,
                "to_gpu": peers,
            }
        )
    return {"devices": rows}


def _gpus_and_torch(fx: Facts, torch_devs: List[Dict[str, Any]]) -> Tuple[List[Dict[str, Any]], Dict[int, List[Dict[str, Any]]]]:
    """The GPUs NVML lists, and NVML index -> the torch devices that are that GPU.

    When NVML could not list the GPUs (permission, a broken library) but CUDA can, PyTorch's view
    alone: one stand-in record per torch device, each saying why NVML's readings are missing.
    """
    nvml_devs = fx.dicts("nvml.devices")
    if nvml_devs or not torch_devs:
        return nvml_devs, match_torch(nvml_devs, torch_devs)
    why = f"NVML could not be asked ({fx.str('nvml.status') or 'not examined'})"
    stand_ins: List[Dict[str, Any]] = [
        {"index": t.get("index"), "errors": {}, "_default_why": why, "_torch_only": True}
        for t in torch_devs
        if isinstance(t.get("index"), int)
    ]
    return stand_ins, {t["index"]: [t] for t in torch_devs if isinstance(t.get("index"), int)}


def _judged_device(
    dev: Dict[str, Any],
    matches: Dict[int, List[Dict[str, Any]]],
    fx: Facts,
    findings: List[Dict[str, Any]],
    incomplete: Optional[str],
    show_serials: bool,
) -> Dict[str, Any]:
    """One GPU's entry in the model: its properties, the findings that name it and its verdict."""
    if "error" in dev and "name" not in dev:
        d = _lost_stub(dev)
    else:
        if incomplete:
            dev = dict(dev, _default_why=f"NVML stopped answering (during {incomplete}) before this was asked")
        index = Facts(dev).int("index")
        d = build_device(dev, matches.get(index, []) if index is not None else [], fx, show_serials)
    m = re.match(r"device:(\d+):(.+)$", incomplete or "")
    if m and int(m.group(1)) == d.get("index"):
        d["nvml_hung"] = m.group(2)
    d["findings"] = [
        {"code": f.get("code"), "severity": f.get("severity"), "title": f.get("title")}
        for f in _findings_for(d.get("index"), findings)
    ]
    d["result"], d["result_why"] = verdict(d, d["findings"])
    return d


def build(facts: Dict[str, Any], findings: Optional[List[Any]] = None, show_serials: bool = False) -> Dict[str, Any]:
    """The devices model: every GPU NVML lists, merged with torch's view, plus the multi-GPU links.

    ``findings`` are the report's findings (Finding objects or dicts); those whose evidence names
    a GPU (``evidence["gpu"]`` = NVML index) are attached to it and decide its verdict.
    """
    fx = Facts(facts)
    fl = [f.to_dict() if hasattr(f, "to_dict") else dict(f) for f in (findings or [])]
    torch_devs = fx.dicts("torch.devices")
    nvml_devs, matches = _gpus_and_torch(fx, torch_devs)
    incomplete = fx.str("nvml.stage") if fx.str("nvml.probe_status") == "timeout" else None
    devices = [_judged_device(dev, matches, fx, fl, incomplete, show_serials) for dev in nvml_devs]
    matched = {id(t) for ts in matches.values() for t in ts}
    unmatched_torch = [t for t in torch_devs if id(t) not in matched]
    torch_ok, torch_why = torch_state(fx)
    model: Dict[str, Any] = {
        "kind": DEVICES_KIND,
        "schema_version": DEVICES_SCHEMA,
        "driver_version": fx.str("nvml.driver_version"),
        "cuda_driver_version": fx.str("nvml.cuda_driver_version"),
        "nvml_status": fx.str("nvml.status"),
        "torch": {
            "version": fx.str("torch.version"),
            "cuda": fx.str("torch.cuda"),
            "usable": torch_ok,
            "why_not": torch_why or None,
            "arch_list": fx.list("torch.arch_list"),
            "device_count": fx.int("torch.device_count"),
        },
        "devices": devices,
        "torch_only_devices": [
            {"index": t.get("index"), "name": t.get("name"), "capability": t.get("capability"), "kernel_ok": t.get("kernel_ok")}
            for t in unmatched_torch
        ],
        "peer_access": peer_matrix(fx, devices),
        "nvlink": nvlink_summary(devices),
        "problem": None if devices else no_device_reason(fx),
        "nvml_incomplete": incomplete,
    }
    return model


# `cudadoctor.devices()` (the notebook API) is this module's name too: make the module callable.
from ._callable import make_callable as _make_callable  # noqa: E402

_make_callable(__name__)
