"""GPUs and the driver: name, compute capability and its source, from torch, NVML or the GPU's name.

torch's view (``torch.devices``) wins over NVML's (``nvml.devices``); a capability neither gives is
looked up by GPU name in the kb (``kb (by GPU name)``), and stays None when the name is ambiguous.

Also what NVML's per-GPU readings mean (clock-event reason bits, a lost GPU, PCI addresses), which
the health checks, the nvidia-smi reader, the device model and the renderers share, and why no GPU
is usable (:func:`torch_state`, :func:`no_device_reason`).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from cudadoctor.facts import Facts


def _kb():
    """The knowledge base, imported on first use: kb reads interpret.versions, so a top-level import
    here is a cycle (harmless in one thread, a half-initialised module when two threads import)."""
    from cudadoctor import kb

    return kb


def cap_str(v: Any) -> Optional[str]:
    """A compute capability as '8.6' from '8.6' or [8, 6]; None for anything else."""
    if isinstance(v, str) and re.fullmatch(r"\d{1,4}\.\d{1,4}", v.strip()):
        return v.strip()
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return f"{v[0]}.{v[1]}"
    return None


def cap_number(cap: Optional[str]) -> Optional[int]:
    """'8.6' -> 86 (the number in sm_86)."""
    m = re.fullmatch(r"(\d{1,4})\.(\d{1,4})", cap or "") if isinstance(cap, str) or cap is None else None
    return int(m.group(1)) * 10 + int(m.group(2)) if m else None


def split_by_capability(cards: List[Tuple[str, Any]], floor: int) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
    """(below, at_or_above) of (name, capability) pairs against ``floor`` (80 for 8.0); a card without a capability
    string is in neither."""
    known = [(n, c) for n, c in cards if isinstance(c, str)]
    return [x for x in known if (cap_number(x[1]) or 0) < floor], [x for x in known if (cap_number(x[1]) or 0) >= floor]


def _name(v: Any) -> Optional[str]:
    return v.strip() if isinstance(v, str) and v.strip() else None


def gpus(fx: Facts) -> List[Dict[str, Any]]:
    """Every GPU the facts name: {index, name, capability, capability_source}; capability may be None."""
    out: Dict[Any, Dict[str, Any]] = {}
    for i, d in enumerate(fx.dicts("torch.devices")):
        idx = d.get("index") if isinstance(d.get("index"), int) else i
        cap = cap_str(d.get("capability"))
        if cap is None and isinstance(d.get("major"), int) and isinstance(d.get("minor"), int):
            cap = f"{d['major']}.{d['minor']}"
        out[("t", idx)] = {
            "index": idx,
            "name": _name(d.get("name")),
            "capability": cap,
            "capability_source": "torch" if cap else None,
        }
    if not out:
        for i, d in enumerate(fx.dicts("nvml.devices")):
            idx = d.get("index") if isinstance(d.get("index"), int) else i
            cap = cap_str(d.get("compute_capability"))
            # a GPU a report names in its prose (readers/prose.py: "from": "prose") or writes by hand in collect_env's
            # GPU field (not nvidia-smi -L's form) carries the kb's capability for its name, not one NVML measured: the
            # driver need not drive it (a legacy GPU beside a current driver)
            stated = str(d.get("from") or "").startswith(("prose", "collect_env GPU field, not"))
            out[("n", idx)] = {
                "index": idx,
                "name": _name(d.get("name")),
                "capability": cap,
                "capability_source": ("kb (by GPU name)" if stated else "nvml") if cap else None,
            }
    for g in out.values():
        if g["capability"] is None and g.get("name"):
            cap = _kb().compute_capability(str(g["name"]))
            if cap:
                g["capability"], g["capability_source"] = cap, "kb (by GPU name)"
            else:
                cands = capability_candidates(str(g["name"]))
                if cands:
                    g["capability_candidates"] = cands
    return list(out.values())


def capability_candidates(name: str) -> List[str]:
    """Every compute capability an ambiguous GPU name is sold with ('TITAN X' -> ['5.2', '6.1']); [] otherwise.
    From kb/gpu_compute_capability.json ``ambiguous_candidates``: use them only where all give one verdict."""
    kb = _kb()
    table = kb._load("gpu_compute_capability").get("ambiguous_candidates") or {}
    key = kb._norm_gpu(name)
    for n, caps in table.items():
        if kb._norm_gpu(n) == key:
            return [str(c) for c in caps]
    return []


def nvidia_gpu_present(fx: Facts) -> Optional[bool]:
    """Does this machine have an NVIDIA GPU? None when the facts cannot tell."""
    if fx.int("nvml.device_count") or fx.dicts("nvml.devices") or fx.int("torch.device_count"):
        return True
    pci = fx.list("system.pci_nvidia_devices")
    if pci is not None:
        return len(pci) > 0
    return None


def no_gpu_stated(fx: Facts, text: str) -> Optional[str]:
    """The person's words when a report says the machine has no GPU at all (readers/nogpu.py: ``pasted.no_gpu_said``)
    and nothing shows an NVIDIA GPU or driver (NVML, torch, lspci, a GPU named in the prose or in ``text``); else None.
    Read by checks/plat10.py (no-nvidia-driver's fallback) and checks/torch_install.py (a CPU torch is then expected)."""
    from cudadoctor.errortext import gpu_vendors

    said = fx.dict("pasted.no_gpu_said") or {}
    if not said.get("text") or nvidia_gpu_present(fx) or driver_version(fx):
        return None
    if fx.list("system.pci_nvidia_devices") or fx.get("pasted.nvidia_named") or (fx.get("pasted.prose") or {}).get("gpus"):
        return None
    if any(g.get("name") for g in gpus(fx)) or gpu_vendors.nvidia_named(text.splitlines()):
        return None
    return str(said["text"])


def driver_version(fx: Facts) -> Optional[str]:
    """The NVIDIA driver version NVML (or nvidia-smi) reported."""
    return fx.str("nvml.driver_version")


def kernel_module(fx: Facts, name: str = "nvidia") -> Optional[bool]:
    """Is the kernel module loaded? None when not recorded."""
    mods = fx.dict("system.kernel_modules")
    if mods is None:
        return None
    v = mods.get(name)
    return v if isinstance(v, bool) else None


def arch_runs(capability: Optional[str], arch_list: Optional[List[str]]) -> Optional[str]:
    """How a GPU of ``capability`` runs a build of ``arch_list``: 'sass', 'ptx' or None (no / unknown)."""
    if not (capability and arch_list):
        return None
    return _kb().arch_runs(capability, arch_list)


def cores_per_sm(capability: Optional[str]) -> Optional[int]:
    return _kb().cores_per_sm(capability) if capability else None


# ---------------------------------------------------------------- NVML's health readings


#: NVML clock-event (throttle) reason bits (nvml.h, nvmlClocksEventReason*).
CLOCK_EVENT_REASONS = (
    (0x1, "gpu_idle", "Idle"),
    (0x2, "applications_clocks_setting", "Applications Clocks Setting"),
    (0x4, "sw_power_cap", "SW Power Cap"),
    (0x8, "hw_slowdown", "HW Slowdown"),
    (0x10, "sync_boost", "Sync Boost"),
    (0x20, "sw_thermal_slowdown", "SW Thermal Slowdown"),
    (0x40, "hw_thermal_slowdown", "HW Thermal Slowdown"),
    (0x80, "hw_power_brake_slowdown", "HW Power Brake Slowdown"),
    (0x100, "display_clock_setting", "Display Clock Setting"),
)
#: Reasons that mean the GPU is being slowed against the user's wish (see gpu-throttled).
THROTTLE_REASONS = ("hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown")
#: NVML error codes that mean the GPU is gone (GPU_IS_LOST) or answers nothing sensible (UNKNOWN).
LOST_CODES = (15, 999)
#: Utilisation (percent) from which a GPU counts as busy for judging its PCIe generation.
BUSY_UTILIZATION = 20


def reason_names(mask: Optional[int]) -> Optional[List[str]]:
    """The names of the clock-event reason bits set in ``mask`` (None when unknown)."""
    if not isinstance(mask, int) or isinstance(mask, bool):
        return None
    return [key for bit, key, _ in CLOCK_EVENT_REASONS if mask & bit]


def reason_label(key: str) -> str:
    """nvidia-smi's label of a clock-event reason ('hw_slowdown' -> 'HW Slowdown')."""
    for _, k, label in CLOCK_EVENT_REASONS:
        if k == key:
            return label
    return key


def lost_error(dev: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The NVML error saying this GPU (an ``nvml.devices[]`` record) is lost: GPU_IS_LOST, or
    Unknown Error on its handle."""
    err = dev.get("error")
    if isinstance(err, dict) and err.get("code") in LOST_CODES:
        return {"call": "nvmlDeviceGetHandleByIndex", "code": err.get("code"), "message": err.get("message")}
    errors = dev.get("errors")
    if isinstance(errors, dict):
        for field, e in errors.items():
            if isinstance(e, dict) and e.get("code") == 15:
                return {"call": field, "code": 15, "message": e.get("message")}
    return None


def bus_key(bus_id: Any) -> Optional[Tuple[int, int, int]]:
    """'00000000:65:00.0' -> (0, 0x65, 0): domain, bus, device (function ignored)."""
    if not isinstance(bus_id, str):
        return None
    m = re.match(r"^\s*(?:([0-9a-fA-F]+):)?([0-9a-fA-F]+):([0-9a-fA-F]+)(?:\.[0-9a-fA-F]+)?\s*$", bus_id)
    if not m:
        return None
    return (int(m.group(1) or "0", 16), int(m.group(2), 16), int(m.group(3), 16))


# ---------------------------------------------------------------- can anything use them


def torch_state(fx: Facts) -> Tuple[Optional[bool], str]:
    """(could torch see GPUs?, one line of why not) from the torch section."""
    status = fx.str("torch.status")
    if status is None:
        return None, "PyTorch was not examined"
    if status == "not-installed":
        return None, "PyTorch is not installed in this environment"
    if status == "skipped":
        return None, "PyTorch was not imported (--quick)"
    if status == "import-failed":
        return False, "import torch failed: " + (fx.str("torch.error.message") or "?").splitlines()[0][:200]
    if status in ("crashed", "timed-out"):
        return False, f"the torch probe {status} during {fx.str('torch.failed_stage') or '?'}"
    if fx.str("torch.version") and not fx.str("torch.cuda") and not fx.str("torch.hip") and "cuda" in (fx.dict("torch") or {}):
        return False, f"torch {fx.str('torch.version')} is a CPU-only build"
    if fx.bool("torch.cuda_available") is False:
        msg = fx.str("torch.cuda_init_error.message") or "torch.cuda.is_available() is False"
        return False, msg.splitlines()[0][:200]
    if fx.bool("torch.cuda_available"):
        return True, ""
    return None, "PyTorch's view of CUDA is unknown"


def _nvml_failure(fx: Facts) -> Optional[str]:
    """What NVML's status says about a machine that lists no GPU (None when it says nothing)."""
    status = fx.str("nvml.status")
    if status == "library-missing":
        return "the NVIDIA driver is not installed (NVML: %s)" % (fx.str("nvml.error") or "library not found")
    if status == "driver-not-loaded":
        return "the NVIDIA kernel driver is not loaded (NVML: Driver Not Loaded)"
    if status == "ok" and fx.int("nvml.device_count") == 0:
        return f"the NVIDIA driver {driver_version(fx) or ''} is loaded but reports no GPU".replace("  ", " ")
    if status == "bindings-missing":
        return "NVML could not be asked: " + (fx.str("nvml.error") or "nvidia-ml-py is missing")
    if status in ("running", None) and fx.str("nvml.probe_status") == "timeout":
        return f"the NVIDIA driver did not answer in time (NVML blocked during {fx.str('nvml.stage') or '?'})"
    if status:
        return f"NVML failed: {status}" + (f" ({fx.str('nvml.error')})" if fx.str("nvml.error") else "")
    return None


def no_device_reason(fx: Facts) -> str:
    """Why this machine shows no NVIDIA GPU, in one or two plain sentences, from the facts."""
    pci = fx.list("system.pci_nvidia_devices")
    container = fx.str("system.container")
    parts = []
    where = f"this {container} container" if container else "this machine"
    if pci is not None and not pci:
        parts.append(f"{where} has no NVIDIA device on its PCI bus")
    elif pci:
        parts.append(f"{len(pci)} NVIDIA device(s) are on the PCI bus but none is usable through the driver")
    nvml = _nvml_failure(fx)
    if nvml:
        parts.append(nvml)
    if kernel_module(fx) is False and fx.str("nvml.status") != "ok":
        parts.append("the nvidia kernel module is not loaded")
    if not parts:
        return "No NVIDIA GPU was found (the probes could not tell why)."
    return "No NVIDIA GPU: " + "; ".join(parts) + "."
