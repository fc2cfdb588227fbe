"""GPUs and the driver: name, compute capability and its source, from torch, NVML or the GPU's name.

torch's view (``torch.devices``) wins over NVML's (``nvml.devices``); a capability neither gives is
looked up by GPU name in the kb (``kb (by GPU name)``), and stays None when the name is ambiguous.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

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
            out[("n", idx)] = {
                "index": idx,
                "name": _name(d.get("name")),
                "capability": cap,
                "capability_source": "nvml" if cap else None,
            }
    for g in out.values():
        if g["capability"] is None and g.get("name"):
            cap = _kb().compute_capability(str(g["name"]))
            if cap:
                g["capability"], g["capability_source"] = cap, "kb (by GPU name)"
    return list(out.values())


def nvidia_gpu_present(fx: Facts) -> Optional[bool]:
    """Does this machine have an NVIDIA GPU? None when the facts cannot tell."""
    if fx.int("nvml.device_count") or fx.dicts("nvml.devices") or fx.int("torch.device_count"):
        return True
    pci = fx.list("system.pci_nvidia_devices")
    if pci is not None:
        return len(pci) > 0
    return None


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
