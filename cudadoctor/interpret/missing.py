"""What the facts do not show, and what to paste next to show it.

A support engineer's answer to a paste that shows no cause is not "nothing found": it is "send me the
output of X", chosen from what is missing in *these* facts. :func:`unknowns` lists what is not known
(torch, its CUDA build, the driver, the GPU, a kernel run, the error itself); :func:`next_pastes` the
commands (or parts of a log) whose output would show it, most useful first. Pure: facts in, lists out.
"""

from __future__ import annotations

import re
from typing import Dict, List

from ..facts import Facts
from .gpus import gpus, nvidia_gpu_present

#: An error that says the driver or its kernel module is not working (in anyone's words): the kernel log tells why.
_DRIVER_TROUBLE = re.compile(
    r"nvidia-smi\W+(?:has failed|cannot|can'?t|couldn'?t|fails?|failed|not found|command not found)|"
    r"(?:driver|module)\W+(?:\w+\W+){0,3}(?:not (?:loaded|installed|found)|failed to load|not installing|cannot be loaded)|"
    r"can'?t install (?:the )?(?:nvidia )?drivers?|\bNVRM\b|modprobe|\bdkms\b",
    re.IGNORECASE,
)

#: What collect_env shows: torch, its CUDA build, CUDA availability, the driver, the GPUs, the packages.
COLLECT_ENV = "python -m torch.utils.collect_env"


def unknowns(fx: Facts) -> List[Dict[str, str]]:
    """``[{"what", "why"}]``: each thing the verdict needs that the facts do not show."""
    out: List[Dict[str, str]] = []
    torch = fx.dict("torch") or {}
    status = fx.str("torch.status")
    if not fx.str("torch.version") and status not in ("not-installed", "import-failed", "crashed", "timed-out"):
        out.append({"what": "torch", "why": "which PyTorch is installed, and whether it imports"})
    elif fx.str("torch.version") and "cuda" not in torch and not fx.str("torch.hip"):
        out.append({"what": "torch build", "why": "which CUDA this torch was built with (or whether it is a CPU build)"})
    if fx.str("torch.version") and fx.bool("torch.cuda_available") is None and status not in ("import-failed", "skipped"):
        out.append({"what": "torch.cuda", "why": "whether torch.cuda.is_available() is True"})
    if not fx.str("nvml.driver_version") and not fx.str("nvml.status") and not fx.str("system.nvidia_kernel_driver"):
        out.append({"what": "driver", "why": "the NVIDIA driver's version, and whether it is loaded"})
    if not gpus(fx) and nvidia_gpu_present(fx) is None:
        out.append({"what": "GPU", "why": "which NVIDIA GPU the machine has"})
    kernels = [d.get("kernel_ok") for d in fx.dicts("torch.devices")]
    if not any(k is not None for k in kernels):
        out.append({"what": "kernel", "why": "whether a CUDA kernel runs on the GPU"})
    parts = fx.list("pasted.parts")
    shown = [p for p in parts or [] if isinstance(p, dict) and p.get("kind") in ("error", "traceback") and p.get("used")]
    if not fx.user_error().strip() or (parts is not None and not shown):
        # No error at all, or a paste none of whose lines reads like one.
        out.append({"what": "error", "why": "the error the user saw"})
    return out


def next_pastes(fx: Facts, missing: List[Dict[str, str]]) -> List[Dict[str, str]]:
    """``[{"run" or "paste", "why"}]``: what to paste next, chosen from ``missing`` and the facts."""
    what = {m["what"] for m in missing}
    out: List[Dict[str, str]] = []
    linux = (fx.str("system.os") or "Linux") == "Linux"
    if what & {"torch", "torch build", "torch.cuda"} or (what & {"driver", "GPU"} and not fx.str("torch.version")):
        out.append(
            {
                "run": COLLECT_ENV,
                "why": "torch's version and CUDA build, whether it sees a GPU, the driver, the GPUs and the packages",
            }
        )
    nvml_failed = fx.str("nvml.status") not in (None, "ok") or bool(_DRIVER_TROUBLE.search(fx.user_error()[-20000:]))
    if what & {"driver", "GPU"} or nvml_failed:
        out.append({"run": "nvidia-smi", "why": "the driver, the highest CUDA it supports and the GPUs, or the error it gives"})
    if nvml_failed and linux and not fx.bool("system.wsl"):
        out.append(
            {
                "run": "sudo dmesg | grep -i -E 'nvrm|nvidia|xid'",
                "why": "the kernel's messages about the NVIDIA module: why it did not load or why the GPU failed",
            }
        )
        out.append(
            {
                "run": "uname -r; dkms status; lsmod | grep -E 'nvidia|nouveau'",
                "why": "the running kernel, the kernels the module was built for, and which module is loaded",
            }
        )
    if nvml_failed and out and out[0].get("run") == COLLECT_ENV:
        out.append(out.pop(0))  # the driver is the trouble: its own output and the kernel's log first
    status = fx.str("torch.status")
    if status == "import-failed" and not fx.list("packages.distributions"):
        out.append(
            {
                "run": "python -m pip list | grep -i -E 'torch|nvidia|cuda'",
                "why": "which torch and CUDA packages are installed in the environment that fails",
            }
        )
    if "error" in what:
        out.append(
            {
                "paste": "the full error: from 'Traceback (most recent call last):' to its last line",
                "why": "the error names the failing layer; a version list alone rarely does",
            }
        )
    return out
