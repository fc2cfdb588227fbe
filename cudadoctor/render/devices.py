"""The device report: deviceQuery's properties, NVML's health and PyTorch's view, per GPU.

``render_devices`` prints the full report of `cudadoctor devices` (text, markdown or json);
``compact_text`` / ``compact_markdown`` are the short Devices section of `cudadoctor check`.
Renderers only read the model built by :func:`cudadoctor.devices.build`.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .. import __version__
from ..devices import DEVICES_KIND
from ..interpret.gpus import BUSY_UTILIZATION, reason_label
from ..document import clean as _clean
from ..document import dumps, envelope

Row = Tuple[str, str, str]  # (section, label, value)


def _unknown(d: Dict[str, Any], *keys: str) -> str:
    for k in keys:
        why = (d.get("unknown") or {}).get(k)
        if why:
            return f"unknown ({why})"
    return "unknown"


def _gib(n: Optional[int]) -> str:
    return f"{n / 2**30:.1f} GiB" if isinstance(n, int) else "?"


def _size(n: Optional[int]) -> str:
    if not isinstance(n, int):
        return "?"
    if n >= 2**20 and n % 2**20 == 0 or n >= 2**24:
        return f"{n / 2**20:g} MiB"
    if n >= 2**10:
        return f"{n / 2**10:g} KiB"
    return f"{n} bytes"


def _v(d: Dict[str, Any], key: str, fmt: Union[str, Callable[[Any], str]] = "{}", unknown_prefix: str = "") -> str:
    """The value of ``key`` shown with ``fmt`` (a format string or a function); its reason when unknown."""
    v = d.get(key)
    if v is None:
        return unknown_prefix + _unknown(d, key)
    return fmt.format(v) if isinstance(fmt, str) else fmt(v)


def _onoff(v: Optional[bool]) -> str:
    return "on" if v else "off"


def arch_text(d: Dict[str, Any]) -> str:
    a = d.get("arch_in_build")
    arch = d.get("architecture") or "?"
    if a == "sass":
        return f"{arch}: yes, native code (SASS) in the build"
    if a == "ptx":
        return f"{arch}: PTX only — JIT-compiled by the driver on first use (slow start, needs a new enough driver)"
    if a == "no":
        lst = " ".join(d.get("arch_list") or [])
        return f"{arch}: NO — not in this build's arch list ({lst}); kernels cannot run here"
    return _unknown(d, "arch_in_build")


def kernel_text(d: Dict[str, Any]) -> str:
    k = d.get("kernel_ok")
    if k is True:
        return "ran and gave the right result"
    if k is False:
        return "FAILED: " + (d.get("kernel_error") or "?").splitlines()[0][:300]
    return _unknown(d, "kernel_ok")


def _ecc_text(d: Dict[str, Any]) -> str:
    if d.get("ecc_enabled") is None:
        return _unknown(d, "ecc_enabled")
    s = _onoff(d["ecc_enabled"])
    if d.get("ecc_pending") is not None and d.get("ecc_pending") != d.get("ecc_enabled"):
        s += f" (pending {_onoff(d['ecc_pending'])} after reset)"
    e = d.get("ecc_errors")
    if e:

        def n(k: str) -> str:
            return str(e.get(k)) if e.get(k) is not None else "?"

        s += (
            f"; errors since driver load: {n('volatile_corrected')} corrected, {n('volatile_uncorrected')} uncorrected;"
            f" lifetime: {n('aggregate_corrected')} corrected, {n('aggregate_uncorrected')} uncorrected"
        )
    elif d.get("ecc_enabled"):
        s += "; error counts " + _unknown(d, "ecc_errors")
    return s


def _repair_text(d: Dict[str, Any]) -> str:
    parts = []
    rr = d.get("remapped_rows")
    if isinstance(rr, dict):
        state = "FAILED" if rr.get("failure") else ("pending (reset due)" if rr.get("pending") else "nothing pending")
        parts.append(
            f"rows remapped: {rr.get('correctable', '?')} correctable, {rr.get('uncorrectable', '?')} uncorrectable — {state}"
        )
    rp = d.get("retired_pages")
    if isinstance(rp, dict):
        parts.append(
            f"retired pages: {rp.get('single_bit', '?')} single-bit, {rp.get('double_bit', '?')} double-bit"
            + (" — retirement pending (reset due)" if rp.get("pending") else "")
        )
    if not parts:
        return _unknown(d, "remapped_rows", "retired_pages")
    return "; ".join(parts)


def _pcie_text(d: Dict[str, Any]) -> str:
    gc, gm, wc, wm = d.get("pcie_gen_current"), d.get("pcie_gen_max"), d.get("pcie_width_current"), d.get("pcie_width_max")
    if gc is None and wc is None:
        return _unknown(d, "pcie_gen_current", "pcie_width_current")
    cur = f"Gen{gc if gc is not None else '?'} x{wc if wc is not None else '?'}"
    mx = f"Gen{gm if gm is not None else '?'} x{wm if wm is not None else '?'}"
    s = f"{cur} (max {mx})"
    util = d.get("utilization_gpu_percent")
    notes = []
    if isinstance(wc, int) and isinstance(wm, int) and wc < wm:
        notes.append("NARROWER than its maximum")
    if isinstance(gc, int) and isinstance(gm, int) and gc < gm:
        if util is None:
            notes.append("lower generation; utilisation unknown, so idle power saving cannot be told from a fault")
        elif util < BUSY_UTILIZATION:
            notes.append(f"lower generation while idle ({util}% utilised): normal power saving")
        else:
            notes.append(f"lower generation while busy ({util}% utilised)")
    ggm = d.get("pcie_gen_gpu_max")
    if isinstance(ggm, int) and isinstance(gm, int) and ggm > gm:
        notes.append(f"the GPU supports Gen{ggm}, the slot or platform only Gen{gm}")
    return s + ("; " + "; ".join(notes) if notes else "")


def _power_text(d: Dict[str, Any]) -> str:
    use, lim, dflt = (
        d.get("power_usage_w"),
        d.get("power_enforced_limit_w") or d.get("power_limit_w"),
        d.get("power_default_limit_w"),
    )
    if use is None and lim is None:
        return _unknown(d, "power_usage_w", "power_limit_w")
    s = f"{use if use is not None else '?'} W drawn, limit {lim if lim is not None else '?'} W"
    if dflt is not None and lim is not None and abs(dflt - lim) >= 1:
        s += f" (default {dflt:g} W: the owner changed the cap)"
    elif dflt is not None:
        s += " (the default)"
    return s


def _temp_text(d: Dict[str, Any]) -> str:
    t = d.get("temperature_c")
    if t is None:
        return _unknown(d, "temperature_c")
    extra = []
    if d.get("temperature_slowdown_c"):
        extra.append(f"slowdown at {d['temperature_slowdown_c']} °C")
    if d.get("temperature_shutdown_c"):
        extra.append(f"shutdown at {d['temperature_shutdown_c']} °C")
    return f"{t} °C" + (f" ({', '.join(extra)})" if extra else "")


def _listed(d: Dict[str, Any], key: str, none: str, show: Callable[[List[Any]], str]) -> str:
    """A list-valued reading: its reason when unknown, ``none`` when empty, else ``show(items)``."""
    items = d.get(key)
    if items is None:
        return _unknown(d, key)
    return show(items) if items else none


def _reasons_text(d: Dict[str, Any]) -> str:
    return _listed(
        d, "clock_event_reasons", "none (running at the clocks it wants)", lambda r: ", ".join(reason_label(x) for x in r)
    )


def _processes(procs: List[Dict[str, Any]]) -> str:
    def one(x: Dict[str, Any]) -> str:
        mem = x.get("used_memory_bytes")
        return f"pid {x.get('pid')}" + (f" ({_gib(mem)})" if isinstance(mem, int) else "")

    return ", ".join(one(x) for x in procs[:8]) + (f" and {len(procs) - 8} more" if len(procs) > 8 else "")


def _procs_text(d: Dict[str, Any]) -> str:
    return _listed(d, "processes", "none", _processes)


def _mig_text(d: Dict[str, Any]) -> List[str]:
    if d.get("mig_enabled") is None:
        return [_unknown(d, "mig_enabled")]
    if not d["mig_enabled"]:
        pend = " (enabled after the next GPU reset)" if d.get("mig_pending") else ""
        return ["disabled" + pend]
    out = ["enabled" + (" (disabled after the next GPU reset)" if d.get("mig_pending") is False else "")]
    inst = d.get("mig_instances")
    if inst is None:
        out[0] += "; instances " + _unknown(d, "mig_instances")
    elif not inst:
        out[0] += "; NO instances: CUDA cannot use this GPU"
    else:
        out[0] += f"; {len(inst)} instance{'s' if len(inst) != 1 else ''}:"
        for m in inst:
            k = m.get("kernel_ok")
            kt = "kernel ran" if k is True else ("kernel FAILED" if k is False else "not used by torch")
            out.append(
                f"  GI {m.get('gpu_instance_id', '?')} CI {m.get('compute_instance_id', '?')}: "
                f"{m.get('multiprocessors') or '?'} SMs, {_gib(m.get('memory_total_bytes'))}"
                + (f", torch cuda:{m['torch_index']}" if m.get("torch_index") is not None else "")
                + f", {kt}"
                + (f" — {m.get('uuid')}" if m.get("uuid") else "")
            )
    return out


def _nvlinks(links: List[Dict[str, Any]]) -> str:
    active = [lk for lk in links if lk.get("active")]
    versions = sorted({lk["version"] for lk in active if isinstance(lk.get("version"), int)})
    switch = sum(1 for lk in active if lk.get("remote_type") == "nvswitch")
    s = f"{len(active)} of {len(links)} links active" + (f" (NVLink {'/'.join(str(v) for v in versions)})" if versions else "")
    if switch:
        s += f", {switch} to NVSwitch"
    down = [lk.get("link") for lk in links if lk.get("active") is False]
    if down and active:
        s += f"; inactive: {', '.join(str(x) for x in down)}"
    return s


def _nvlink_text(d: Dict[str, Any]) -> str:
    return _listed(d, "nvlinks", "no links", _nvlinks)


def _identity_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    torch_index = f"cuda:{d['torch_index']}" if d.get("torch_index") is not None else _unknown(d, "torch_index")
    return [
        ("NVML index / torch index", f"{d.get('index')} / {torch_index}"),
        ("UUID", _v(d, "uuid")),
        ("Serial", "hidden (use --show-serials)" if d.get("serial_hidden") else _v(d, "serial")),
        ("PCI bus id", _v(d, "pci_bus_id")),
    ]


def _compute_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    cap, cps = d.get("compute_capability"), d.get("cores_per_sm")
    sm_src = " (from NVML's core count)" if (d.get("sources") or {}).get("multiprocessors") == "derived" else ""
    cores = (
        f"{d['cuda_cores']}" + (f" ({cps} per multiprocessor)" if cps else "")
        if d.get("cuda_cores") is not None
        else _unknown(d, "cuda_cores", "cores_per_sm")
    )
    return [
        ("CUDA capability", f"{cap} ({d.get('architecture')})" if cap else _unknown(d, "compute_capability")),
        ("Multiprocessors", _v(d, "multiprocessors") + sm_src),
        ("CUDA cores", cores),
        ("SM clock", _v(d, "sm_clock_mhz", "{} MHz now", "now ") + ", " + _v(d, "sm_clock_max_mhz", "max {} MHz", "max ")),
        ("Warp size", _v(d, "warp_size")),
        ("Max threads per block", _v(d, "max_threads_per_block")),
        ("Max threads per multiprocessor", _v(d, "max_threads_per_multiprocessor")),
        ("Registers per block", _v(d, "registers_per_block")),
        ("Registers per multiprocessor", _v(d, "registers_per_multiprocessor")),
    ]


def _memory_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    tot, free, bw = d.get("memory_total_bytes"), d.get("memory_free_bytes"), d.get("memory_bandwidth_gbs")
    clock = _v(d, "memory_clock_max_mhz", "max {} MHz", "max ")
    if d.get("memory_clock_mhz") is not None:
        clock += f", now {d['memory_clock_mhz']} MHz"
    optin = d.get("shared_memory_per_block_optin_bytes")
    return [
        (
            "Total global memory",
            f"{_gib(tot)} ({tot // 2**20} MiB)" if isinstance(tot, int) else _unknown(d, "memory_total_bytes"),
        ),
        ("Free", f"{_gib(free)}" if isinstance(free, int) else _unknown(d, "memory_free_bytes")),
        ("Memory bus width", _v(d, "memory_bus_width_bits", "{}-bit")),
        ("Memory clock", clock),
        (
            "Theoretical bandwidth",
            f"{bw:g} GB/s = 2 × {d.get('memory_clock_max_mhz')} MHz × {d.get('memory_bus_width_bits')} bit / 8"
            if bw is not None
            else _unknown(d, "memory_bandwidth_gbs"),
        ),
        ("L2 cache", _v(d, "l2_cache_bytes", _size)),
        (
            "Shared memory per block",
            _v(d, "shared_memory_per_block_bytes", _size) + (f" (up to {_size(optin)} opt-in)" if optin else ""),
        ),
        ("Shared memory per multiprocessor", _v(d, "shared_memory_per_multiprocessor_bytes", _size)),
    ]


def _health_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    util = d.get("utilization_gpu_percent")
    return [
        ("ECC", _ecc_text(d)),
        ("Memory repair", _repair_text(d)),
        ("Clock event reasons", _reasons_text(d)),
        ("Temperature", _temp_text(d)),
        ("Power", _power_text(d)),
        ("Performance state", _v(d, "performance_state")),
        (
            "Utilisation",
            f"GPU {util}%, memory {d.get('utilization_memory_percent', '?')}%"
            if util is not None
            else _unknown(d, "utilization_gpu_percent"),
        ),
        ("Compute processes", _procs_text(d)),
    ]


def _modes_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    mig = _mig_text(d)
    return [
        ("Compute mode", _v(d, "compute_mode")),
        ("Persistence mode", _v(d, "persistence_mode", _onoff)),
        ("MIG", mig[0]),
        *(("", line) for line in mig[1:]),
    ]


def _links_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    return [("PCIe", _pcie_text(d)), ("NVLink", _nvlink_text(d))]


def _pytorch_rows(d: Dict[str, Any]) -> List[Tuple[str, str]]:
    return [("Architecture in this build", arch_text(d)), ("Test kernel", kernel_text(d))]


#: The sections of a device's report, in order, each with the (label, value) rows it shows.
SECTIONS: Tuple[Tuple[str, Callable[[Dict[str, Any]], List[Tuple[str, str]]]], ...] = (
    ("Identity", _identity_rows),
    ("Compute", _compute_rows),
    ("Memory", _memory_rows),
    ("Health", _health_rows),
    ("Modes", _modes_rows),
    ("Links", _links_rows),
    ("PyTorch", _pytorch_rows),
)


def device_rows(d: Dict[str, Any], show_serials: bool = False) -> List[Row]:
    """One GPU's report as (section, label, value) rows (whether the serial shows is decided by the model)."""
    return [(section, label, value) for section, rows in SECTIONS for label, value in rows(d)]


def _title(d: Dict[str, Any]) -> str:
    return f'Device {d.get("index")}: "{_clean(d.get("name") or "unknown GPU")}"'


def _result_line(d: Dict[str, Any]) -> str:
    why = d.get("result_why") or []
    return f"Result = {d.get('result')}" + (f" ({'; '.join(_clean(w) for w in why)})" if why else "")


def _header(model: Dict[str, Any]) -> str:
    parts = []
    if model.get("driver_version"):
        parts.append(
            f"NVIDIA driver {model['driver_version']}"
            + (f" (CUDA ≤ {model['cuda_driver_version']})" if model.get("cuda_driver_version") else "")
        )
    t = model.get("torch") or {}
    if t.get("version"):
        parts.append(f"PyTorch {t['version']}" + (f" (CUDA {t['cuda']})" if t.get("cuda") else ""))
    elif t.get("why_not"):
        parts.append(t["why_not"])
    n = len(model.get("devices") or [])
    parts.append(f"{n} GPU{'s' if n != 1 else ''}")
    return " · ".join(_clean(p) for p in parts)


def _peer_text(model: Dict[str, Any]) -> List[str]:
    p = model.get("peer_access")
    if not p:
        return []
    idx = p["indices"]
    out = ["", f"Peer access (GPU row can access GPU column's memory; source: {p['source']}; * = over NVLink)"]
    out.append("       " + "".join(f"{str(i):>5}" for i in idx))
    for a, row in enumerate(p["access"]):
        cells = []
        for b, v in enumerate(row):
            if a == b:
                cells.append("    -")
            else:
                star = "*" if (p.get("nvlink") or [[None]])[a][b] else ""
                cells.append(f"{ ({'yes': 'Y', 'no': 'N'}.get(v, '?') + star):>5}")
        out.append(f"  {str(idx[a]):>4} " + "".join(cells))
    return out


def _nvlink_lines(model: Dict[str, Any]) -> List[str]:
    nv = model.get("nvlink")
    if not nv:
        return []
    out = ["", "NVLink"]
    for r in nv["devices"]:
        if r.get("active") is None:
            out.append(f"  GPU {r['index']}: no NVLink")
            continue
        peers = ", ".join(f"{n}×GPU {g}" for g, n in sorted(r["to_gpu"].items(), key=lambda kv: int(kv[0])))
        dest = "; ".join(x for x in ((f"{r['to_nvswitch']} to NVSwitch" if r["to_nvswitch"] else ""), peers) if x)
        out.append(
            f"  GPU {r['index']}: {r['active']} of {r['links']} links active"
            + (f" (NVLink {'/'.join(str(v) for v in r['versions'])})" if r["versions"] else "")
            + (f" — {dest}" if dest else "")
            + (f"; inactive links {r['inactive']}" if r["inactive"] and r["active"] else "")
        )
    return out


def render_text(model: Dict[str, Any], show_serials: bool = False) -> str:
    out = [f"cudadoctor {__version__} devices — what each GPU can do, whether it is healthy, whether PyTorch can use it", ""]
    devices = model.get("devices") or []
    if not devices:
        out.append(_clean(model.get("problem") or "No NVIDIA GPU found."))
        t = model.get("torch") or {}
        if t.get("version"):
            out.append(
                f"PyTorch {t['version']}" + (f" (CUDA {t['cuda']})" if t.get("cuda") else " (CPU-only build)") + " is installed."
            )
        out += ["", "Result = FAIL (no NVIDIA GPU). Run `cudadoctor check` for the fix."]
        return "\n".join(out) + "\n"
    out.append(_header(model))
    if model.get("nvml_incomplete"):
        out.append(f"NVML stopped answering during {model['nvml_incomplete']}: what follows is what it said before")
    width = max(len(label) for d in devices for _, label, _ in device_rows(d, show_serials)) + 2
    for d in devices:
        out.append("")
        out.append(_title(d))
        if d.get("handle_error"):
            out.append(
                f"  NVML cannot open this GPU: {_clean(d['handle_error'].get('message'))} (code {d['handle_error'].get('code')})"
            )
        else:
            section = None
            for sec, label, value in device_rows(d, show_serials):
                if sec != section:
                    out.append(f"  {sec}")
                    section = sec
                out.append(f"    {label.ljust(width)}{_clean(value)}")
        if d.get("findings"):
            out.append("  Findings")
            for f in d["findings"]:
                out.append(f"    {f['severity']}: {f['code']}: {_clean(f['title'])}")
        out.append(f"  {_result_line(d)}")
    for t in model.get("torch_only_devices") or []:
        out.append("")
        out.append(f'PyTorch device cuda:{t.get("index")} "{_clean(t.get("name"))}" matches no GPU NVML lists')
    out += _peer_text(model)
    out += _nvlink_lines(model)
    results = [d.get("result") for d in devices]
    out.append("")
    out.append(
        f"Result = {'FAIL' if 'FAIL' in results else ('PASS' if all(r == 'PASS' for r in results) else 'UNKNOWN')}: "
        f"{results.count('PASS')} PASS, {results.count('FAIL')} FAIL, {results.count('UNKNOWN')} UNKNOWN of {len(devices)} GPU{'s' if len(devices) != 1 else ''}"
    )
    return "\n".join(out) + "\n"


def render_markdown(model: Dict[str, Any], show_serials: bool = False) -> str:
    from .mdtext import md_escape

    out = ["## cudadoctor devices", ""]
    devices = model.get("devices") or []
    if not devices:
        out += [f"**❌ {md_escape(model.get('problem') or 'No NVIDIA GPU found.')}**", ""]
        return "\n".join(out) + "\n"
    out += [md_escape(_header(model)), ""]
    for d in devices:
        out += [f"### {md_escape(_title(d))}", "", f"**{md_escape(_result_line(d))}**", ""]
        out += ["| | Property | Value |", "|---|---|---|"]
        for sec, label, value in device_rows(d, show_serials):
            out.append(f"| {md_escape(sec)} | {md_escape(label)} | {md_escape(value)} |")
        out.append("")
        for f in d.get("findings") or []:
            out.append(f"- `{f['code']}` ({f['severity']}): {md_escape(f['title'])}")
        if d.get("findings"):
            out.append("")
    p = _peer_text(model)
    n = _nvlink_lines(model)
    if p or n:
        from .mdtext import fence

        out += ["### Multi-GPU", "", fence("\n".join(x for x in (p + n) if x is not None).strip()), ""]
    out.append(f"<sub>cudadoctor {__version__}</sub>")
    return "\n".join(out) + "\n"


def render_json(model: Dict[str, Any]) -> str:
    return dumps(envelope(DEVICES_KIND, model))


def render_devices(model: Dict[str, Any], fmt: str, show_serials: bool = False) -> str:
    if fmt == "json":
        return render_json(model)
    if fmt == "markdown":
        return render_markdown(model, show_serials)
    if fmt == "prometheus":
        from .prometheus import devices_metrics

        return devices_metrics(model)
    return render_text(model, show_serials)


# ---------------------------------------------------------------- the Devices section of `check`


def _compact(d: Dict[str, Any]) -> str:
    parts = [_clean(d.get("name") or "unknown GPU")]
    if d.get("handle_error"):
        return parts[0] + f" · NVML: {_clean(d['handle_error'].get('message'))} → {d.get('result')}"
    a = d.get("arch_in_build")
    if d.get("architecture"):
        parts.append(d["architecture"] + {"sass": " (in build)", "ptx": " (PTX only)", "no": " (NOT in build)"}.get(a or "", ""))
    if d.get("multiprocessors"):
        parts.append(f"{d['multiprocessors']} SMs")
    if isinstance(d.get("memory_total_bytes"), int):
        free = d.get("memory_free_bytes")
        parts.append(_gib(d["memory_total_bytes"]) + (f" ({_gib(free)} free)" if isinstance(free, int) else ""))
    if d.get("pcie_gen_current") is not None and d.get("pcie_width_current") is not None:
        parts.append(f"PCIe Gen{d['pcie_gen_current']} x{d['pcie_width_current']}")
    if d.get("temperature_c") is not None:
        parts.append(f"{d['temperature_c']} °C")
    if d.get("mig_enabled"):
        parts.append(f"MIG: {len(d.get('mig_instances') or [])} instance(s)")
    k = d.get("kernel_ok")
    parts.append("kernel ok" if k is True else ("kernel FAILED" if k is False else "kernel not run"))
    warn = [f["code"] for f in d.get("findings") or [] if f.get("severity") in ("error", "warning")]
    return " · ".join(parts) + f" → {d.get('result')}" + (f" ({', '.join(dict.fromkeys(warn))})" if warn else "")


def compact_text(model: Optional[Dict[str, Any]]) -> List[str]:
    """The Devices section of `check`'s text report: one line per GPU ([] when NVML listed none)."""
    devices = (model or {}).get("devices") or []
    if not devices:
        return []
    lines = ["Devices (details: cudadoctor devices):"]
    for d in devices:
        lines.append(f"  GPU {d.get('index')}  {_compact(d)}")
    return lines


def compact_markdown(model: Optional[Dict[str, Any]]) -> List[str]:
    from .mdtext import md_escape

    devices = (model or {}).get("devices") or []
    if not devices:
        return []
    out = ["### Devices", "", "| GPU | Device | Result |", "|---|---|---|"]
    for d in devices:
        out.append(f"| {d.get('index')} | {md_escape(_compact(d).rsplit(' → ', 1)[0])} | {md_escape(d.get('result'))} |")
    out.append("")
    return out


def check_section(report: Any, fmt: str = "text") -> List[str]:
    """The hook the `check` renderers call: never raises (a report renders without it)."""
    try:
        from ..devices import build

        model = build(report.facts, report.findings)
        return compact_markdown(model) if fmt == "markdown" else compact_text(model)
    except Exception:  # a renderer never dies on odd facts
        return []
