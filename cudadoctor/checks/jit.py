"""The driver's PTX JIT and the nvidia-uvm device (issue 21, round 5: helper jit5).

A CUDA binary carries SASS for some architectures and PTX for others; on a GPU with no matching SASS the driver
JIT-compiles the PTX when the module loads (CUDA C Programming Guide, "Just-in-Time Compilation"), keeps the result
in its compute cache (~/.nv/ComputeCache; CUDA_CACHE_DISABLE / CUDA_CACHE_MAXSIZE / CUDA_CACHE_PATH), and needs the
driver's libnvidia-ptxjitcompiler.so.1 to do it (CUresult 221 without it). CUDA also needs /dev/nvidia-uvm, the node
of the nvidia_uvm module, which nvidia-modprobe creates on the first CUDA use.

Codes: ptx-jit-compiler-missing, ptx-jit-on-first-cuda-call, cuda-jit-cache-disabled,
nvidia-uvm-not-loaded-after-reboot. Wordings: kb/errors/jit5.json.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional

from cudadoctor.errortext import kb_document
from cudadoctor.facts import Facts
from cudadoctor.interpret import gpus
from cudadoctor.interpret.build import build_arch_list
from cudadoctor.interpret.gpus import arch_runs
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, search, text_finding
from .plat10 import uvm_not_loaded_entities

_JIT_GUIDE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#just-in-time-compilation"
_ENV_VARS = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables"

# --- round 5: jit5 ---
PTX_JIT_COMPILER_MISSING = Code(
    code="ptx-jit-compiler-missing",
    title="The driver's PTX JIT compiler library (libnvidia-ptxjitcompiler) is missing",
    area="driver",
    severity="error",
    explanation={
        "what": "Loading PTX fails with CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221) / cudaErrorJitCompilerNotFound, "
        '"PTX JIT compiler library not found".',
        "why": "libcuda hands PTX to the driver's JIT compiler, libnvidia-ptxjitcompiler.so.1, which ships with the "
        "driver's compute libraries. An install that carries libcuda without it (a container without the compute "
        "driver capability, a distribution's split driver packages, Jetson's l4t-cuda without l4t-3d-core) can run "
        "SASS but not PTX: every kernel the program has only as PTX for this GPU fails.",
        "confirm": "`ldconfig -p | grep ptxjitcompiler` (or `LD_DEBUG=libs python ...` showing the search for "
        "libnvidia-ptxjitcompiler.so.1 fail); its version must be the driver's (`nvidia-smi`).",
        "fix": "Install the driver's compute libraries of the same driver version (Ubuntu: libnvidia-compute-<branch>; "
        "Jetson: nvidia-l4t-3d-core; containers: NVIDIA_DRIVER_CAPABILITIES including compute), or use a build with "
        "SASS for this GPU so no JIT is needed.",
    },
    links=(
        "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html",
        "https://github.com/anduril/jetpack-nixos/issues/184",
        "https://github.com/jax-ml/jax/issues/9644",
    ),
)
PTX_JIT_ON_FIRST_CUDA_CALL = Code(
    code="ptx-jit-on-first-cuda-call",
    title="The first CUDA call JIT-compiles PTX: the build has no SASS for this GPU",
    area="gpu",
    severity="warning",
    explanation={
        "what": "The first CUDA call (the first .cuda(), session or kernel) takes minutes; later calls are fast.",
        "why": "The program (torch, a package or an extension) carries compiled SASS only for other architectures and "
        "PTX the driver can compile for this GPU. The driver JIT-compiles every kernel when the module loads and caches "
        "the result in ~/.nv/ComputeCache, so the delay returns whenever the cache is missing, too small or disabled.",
        "confirm": '`python -c "import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())"`: '
        "no sm_XY for your GPU's X.Y, only compute_XY; a second run with the cache kept is fast.",
        "fix": "Install a build that has SASS for your GPU (a current torch wheel for its CUDA), or build with your "
        "architecture in TORCH_CUDA_ARCH_LIST / -gencode; meanwhile keep the JIT cache (CUDA_CACHE_MAXSIZE large "
        "enough, CUDA_CACHE_DISABLE unset).",
    },
    links=(_JIT_GUIDE, "https://github.com/pytorch/pytorch/issues/537"),
)
CUDA_JIT_CACHE_DISABLED = Code(
    code="cuda-jit-cache-disabled",
    title="The CUDA JIT cache is disabled or unusable, so PTX is compiled again at every start",
    area="system",
    severity="warning",
    explanation={
        "what": "A program that JIT-compiles PTX takes minutes at every start, not only the first.",
        "why": "The driver keeps JIT-compiled kernels in ~/.nv/ComputeCache (CUDA_CACHE_PATH). With CUDA_CACHE_DISABLE=1, "
        "a cache smaller than the compiled code (CUDA_CACHE_MAXSIZE) or a cache directory the user cannot write "
        "(created by root with sudo, a read-only home in a container), every process compiles everything again.",
        "confirm": "`env | grep CUDA_CACHE`; `ls -ld ~/.nv ~/.nv/ComputeCache` (owner and permissions); `du -sh "
        "~/.nv/ComputeCache` after a run.",
        "fix": "`unset CUDA_CACHE_DISABLE` (or export CUDA_CACHE_DISABLE=0), raise CUDA_CACHE_MAXSIZE (up to 4 GiB), "
        "point CUDA_CACHE_PATH at a writable directory, or remove a root-owned cache: `sudo rm -rf ~/.nv`.",
    },
    links=(_ENV_VARS, "https://github.com/FORTH-ModelBasedTracker/HandTracker/issues/7"),
)
NVIDIA_UVM_NOT_LOADED = Code(
    code="nvidia-uvm-not-loaded-after-reboot",
    title="/dev/nvidia-uvm does not exist: the nvidia_uvm module is not loaded",
    area="driver",
    severity="error",
    explanation={
        "what": "Something needs /dev/nvidia-uvm (or /dev/nvidia-uvm-tools) and it is absent: a container whose spec names "
        'the node fails to start ("lstat /dev/nvidia-uvm: no such file or directory"), or CUDA cannot initialise.',
        "why": "CUDA needs the nvidia_uvm module and its device nodes. They are usually created on the first CUDA use by "
        "nvidia-modprobe (setuid); after a reboot nothing has done that yet, and a container started with explicit "
        "--device entries, or a process without the right to load modules, cannot create them itself.",
        "confirm": "`ls -l /dev/nvidia-uvm*`; `lsmod | grep nvidia_uvm`.",
        "fix": "`sudo nvidia-modprobe -u -c=0` (loads nvidia_uvm and creates the nodes) or `sudo modprobe nvidia_uvm`; "
        "to keep it after reboots, load it at boot (a modules-load.d entry or nvidia-persistenced).",
    },
    links=("https://github.com/NVIDIA/nvidia-docker/issues/288", "https://github.com/NVIDIA/nvidia-modprobe"),
)


@check(PTX_JIT_COMPILER_MISSING)
def ptx_jit_compiler_missing(fx: Facts) -> Iterator[Finding]:
    cmds = [
        "ldconfig -p | grep ptxjitcompiler  # must list libnvidia-ptxjitcompiler.so.1 of the driver's version",
        "nvidia-smi  # the driver version the library must match",
        "# install the driver's compute libraries (Ubuntu: libnvidia-compute-<branch>; Jetson: nvidia-l4t-3d-core;"
        " containers: NVIDIA_DRIVER_CAPABILITIES=compute,utility)",
    ]
    yield from text_finding(
        PTX_JIT_COMPILER_MISSING,
        fx,
        "The driver's PTX JIT compiler (libnvidia-ptxjitcompiler.so.1) is missing: PTX cannot be loaded",
        cmds,
        "libcuda needs the driver's JIT compiler library to load PTX; it ships with the driver's compute libraries.",
    )


def _ptx_only(fx: Facts) -> Optional[Dict[str, object]]:
    """Evidence that the torch build has only PTX for a GPU the facts name (kb arch lists vs capability)."""
    archs, source = build_arch_list(fx)
    if not archs:
        return None
    for g in gpus(fx):
        cap = g.get("capability")
        if isinstance(cap, str) and arch_runs(cap, archs) == "ptx":
            return {
                "gpu": g.get("name"),
                "compute_capability": cap,
                "torch_arch_list": archs,
                "arch_list_source": source,
                "runs_as": "PTX (JIT-compiled by the driver at the first CUDA call)",
            }
    return None


def _symptom(name: str) -> str:
    """The reporters' words for slow starts (kb/errors/b25.json symptoms): a slow first CUDA use, the driver's own."""
    return str(kb_document("b25.json")["symptoms"][name]["regex"])


@check(PTX_JIT_ON_FIRST_CUDA_CALL)
def ptx_jit_on_first_cuda_call(fx: Facts) -> Iterator[Finding]:
    ev: Dict[str, object] = {}
    facts = _ptx_only(fx)
    said = error_match(fx, PTX_JIT_ON_FIRST_CUDA_CALL)
    if facts:
        ev.update(facts)
    if said:
        ev[said[0]] = said[1]
    slow = None if ev or search(fx, _symptom("slow_driver_init")) else search(fx, _symptom("slow_cuda_start"))
    if slow:
        ev[slow[0]] = slow[1]  # the reporter's words for a slow first CUDA use (kb/errors/b25.json symptoms.slow_cuda_start)
    if not ev:
        return
    cmds: List[str] = [
        'python -c "import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())"'
        "  # no sm_XY for your GPU: only PTX",
        "ls -ld ~/.nv/ComputeCache; env | grep CUDA_CACHE  # the JIT cache must be kept for later starts to be fast",
        "# install a build with SASS for this GPU (a current torch wheel), or build with its arch in TORCH_CUDA_ARCH_LIST",
    ]
    title = (
        f"torch has only PTX for the {facts['gpu']} (compute {facts['compute_capability']}): the first CUDA call "
        "JIT-compiles every kernel"
        if facts
        else "Likely: the first CUDA use is slow because the driver JIT-compiles PTX: the program (torch, a library, an "
        "extension) has no SASS for this GPU"
        if slow
        else "Likely: the first CUDA call JIT-compiles PTX because the build has no SASS for this GPU"
    )
    yield PTX_JIT_ON_FIRST_CUDA_CALL.finding(
        title=title,
        evidence=ev,
        fix=Fix(tuple(cmds), "A build with SASS for the GPU needs no JIT; the JIT cache makes only the first start slow."),
    )


@check(CUDA_JIT_CACHE_DISABLED)
def cuda_jit_cache_disabled(fx: Facts) -> Iterator[Finding]:
    ev: Dict[str, object] = {}
    if (fx.env("CUDA_CACHE_DISABLE") or "").strip() == "1":
        ev["CUDA_CACHE_DISABLE"] = "1"
    said = error_match(fx, CUDA_JIT_CACHE_DISABLED)
    if said:
        ev[said[0]] = said[1]
    if not ev:
        return
    cmds = [
        "env | grep CUDA_CACHE  # CUDA_CACHE_DISABLE must not be 1",
        "export CUDA_CACHE_DISABLE=0 CUDA_CACHE_MAXSIZE=4294967296",
        "ls -ld ~/.nv ~/.nv/ComputeCache  # owned by you and writable; if root owns it: sudo rm -rf ~/.nv",
    ]
    yield CUDA_JIT_CACHE_DISABLED.finding(
        title="The CUDA JIT cache is disabled or unusable: PTX is compiled again at every start",
        evidence=ev,
        fix=Fix(
            tuple(cmds), "The driver reuses JIT-compiled kernels only from a cache that is enabled, large enough and writable."
        ),
    )


@check(NVIDIA_UVM_NOT_LOADED)
def nvidia_uvm_not_loaded(fx: Facts) -> Iterator[Finding]:
    cmds = [
        "ls -l /dev/nvidia-uvm*; lsmod | grep nvidia_uvm",
        "sudo nvidia-modprobe -u -c=0  # loads nvidia_uvm and creates /dev/nvidia-uvm*",
        "echo nvidia-uvm | sudo tee /etc/modules-load.d/nvidia-uvm.conf  # load it at every boot",
    ]
    found = list(
        text_finding(
            NVIDIA_UVM_NOT_LOADED,
            fx,
            "/dev/nvidia-uvm does not exist: the nvidia_uvm module is not loaded (nothing has used CUDA since the reboot)",
            cmds,
            "CUDA and containers that name the node need nvidia_uvm loaded and its device nodes created.",
        )
    )
    yield from found or uvm_not_loaded_entities(fx, NVIDIA_UVM_NOT_LOADED)  # lsmod, boot vs suspend (checks/plat10.py)


def register():
    return [ptx_jit_compiler_missing, ptx_jit_on_first_cuda_call, cuda_jit_cache_disabled, nvidia_uvm_not_loaded]
