"""Does an error text agree with the facts it is judged against?

An error pasted from another machine, or from before a change, names a cause the facts may rule out:
an sm_120 kernel-image error judged against a machine with no NVIDIA GPU at all, "driver too old" against
a machine with no NVIDIA driver. Such a cause is never "confirmed by the facts"; :func:`disagreements`
names the fact that disagrees and why.

Only facts a probe observed on a machine count (origin ``live``, or a saved report of one): a pasted
collect_env's "No CUDA" or a missing PCI list says what a report did not show, not what the machine lacks.
Pure: facts in, a list out.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ..facts import Facts
from .gpus import nvidia_gpu_present

#: Codes whose cause is on an NVIDIA GPU of the machine: ruled out where a probe saw no NVIDIA device.
#: (gpu-lost is not here: a GPU that fell off the bus leaves the PCI bus too.)
NEEDS_GPU = frozenset(
    {
        "gpu-arch-unsupported",
        "companion-arch-unsupported",
        "driver-too-old",
        "nvml-driver-mismatch",
        "cuda-forward-compat",
        "cuda-compat-driver-mismatch",
        "fabric-manager-missing",
        "gpu-throttled",
        "pcie-link-degraded",
        "gpu-compute-mode-restricted",
        "gpu-memory-occupied",
        "gpu-ecc-errors",
        "gpu-memory-remap",
        "mig-no-instances",
        "nouveau-bound",
        "open-kernel-module-required",
        "open-kernel-module-unsupported",
        "device-ordinal-invalid",
        "nvidia-uvm-stale",
    }
)
#: Codes whose cause is the version or state of a loaded NVIDIA driver: ruled out where a probe found none.
NEEDS_DRIVER = frozenset(
    {
        "driver-too-old",
        "cuda-forward-compat",
        "gpu-throttled",
        "gpu-compute-mode-restricted",
        "gpu-memory-occupied",
        "gpu-ecc-errors",
        "gpu-memory-remap",
        "mig-no-instances",
        "fabric-manager-missing",
    }
)
#: NVML statuses that say no NVIDIA driver is there to answer.
_NO_DRIVER = ("library-missing", "driver-not-loaded")


def observed(fx: Facts) -> bool:
    """Were these facts probed on a machine (not read from a paste)?"""
    return fx.str("origin") == "live"


def disagreements(fx: Facts, code: str) -> List[Dict[str, Any]]:
    """The facts that rule out ``code``'s cause on this machine: ``[{"fact", "value", "why"}]``."""
    if not observed(fx):
        return []
    out: List[Dict[str, Any]] = []
    if code in NEEDS_GPU and nvidia_gpu_present(fx) is False:
        out.append(
            {
                "fact": "system.pci_nvidia_devices",
                "value": [],
                "why": "this machine has no NVIDIA GPU (none on its PCI bus, none from NVML or torch)",
            }
        )
    status = fx.str("nvml.status")
    if (
        code in NEEDS_DRIVER
        and status in _NO_DRIVER
        and not fx.str("nvml.driver_version")
        and not fx.str("system.nvidia_kernel_driver")
    ):
        out.append(
            {
                "fact": "nvml.status",
                "value": status,
                "why": "no NVIDIA driver is loaded here (NVML: "
                + ("library not found" if status == "library-missing" else "driver not loaded")
                + "), so no driver version or state can be the cause",
            }
        )
    return out
