"""Is there an NVIDIA driver, and can this process see a GPU through it?"""

from __future__ import annotations


import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.errortext import extract
from cudadoctor.facts import Facts
from cudadoctor.interpret import (
    build_kind,
    driver_os,
    driver_version,
    imported_variant,
    is_wsl,
    kernel_module,
    nvidia_gpu_present,
    wsl1_build,
)
from cudadoctor.model import Code, Finding, Fix, check

from . import _containers
from .smi24 import smi_missing_beside_driver
from ._common import error_match, kb, search, text_of
from .kernel_driver import KERNEL_MODULE_MISSING, module_is_machines_own, module_not_loaded

NO_NVIDIA_DRIVER = Code(
    code="no-nvidia-driver",
    title="No NVIDIA driver is loaded",
    area="driver",
    severity="error",
    explanation={
        "what": "No NVIDIA kernel driver or user-space driver library (libcuda, libnvidia-ml) is "
        "present. The report says which of two situations it is: the machine has an NVIDIA GPU "
        "but no driver, or it has no NVIDIA GPU at all.",
        "why": "PyTorch's CUDA build talks to the GPU only through the driver; without it "
        'torch.cuda.is_available() is False and CUDA initialisation says "Found no NVIDIA driver '
        'on your system".',
        "confirm": "`nvidia-smi` is missing or fails; `lspci | grep -i nvidia` shows whether a GPU "
        "is on the PCI bus; `lsmod | grep nvidia` shows whether the kernel module is loaded.",
        "fix": "Install NVIDIA's driver for your OS (new enough for your torch build) and reboot. "
        "If the machine has no NVIDIA GPU, run on one that has, or install the CPU wheel.",
    },
    links=("https://docs.nvidia.com/cuda/cuda-installation-guide-linux/", "https://www.nvidia.com/Download/index.aspx"),
)

NO_GPU_VISIBLE = Code(
    code="no-gpu-visible",
    title="The driver works but no GPU is visible to this process",
    area="gpu",
    severity="error",
    explanation={
        "what": "The NVIDIA driver is present, but zero devices are visible to PyTorch: "
        "CUDA_VISIBLE_DEVICES is empty or names devices that do not exist, a container was "
        "started without GPUs, or NVIDIA_VISIBLE_DEVICES hides them.",
        "why": "CUDA enumerates only the devices the environment exposes; with none, "
        "torch.cuda.is_available() is False and device_count() is 0, and programs silently fall "
        'back to the CPU or fail with "no CUDA-capable device is detected".',
        "confirm": "`echo $CUDA_VISIBLE_DEVICES` and `nvidia-smi -L` (which ignores that variable) "
        "side by side; in a container, `ls /dev/nvidia*`.",
        "fix": "Unset CUDA_VISIBLE_DEVICES or set it to indices or UUIDs that `nvidia-smi -L` lists; "
        "start containers with `--gpus all` (Docker) or a `nvidia.com/gpu` resource limit (Kubernetes).",
    },
    links=(
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
    ),
    # "invalid device ordinal": device-ordinal-invalid; "could not select device driver": container-toolkit-missing
)


def _driver_install_fix(fx: Facts) -> List[str]:
    distro = (fx.str("system.distro") or fx.str("system.os") or "").lower()  # collect_env's OS line names the distro
    if fx.bool("system.wsl"):
        return [
            "# On the Windows host: install the current NVIDIA driver for Windows (it provides CUDA to WSL2)",
            "# Inside WSL do not install a Linux NVIDIA driver",
        ]
    if (fx.str("system.os") or "").lower().startswith("windows"):
        return ["# Download and install the driver for your GPU: https://www.nvidia.com/Download/index.aspx"]
    if "ubuntu" in distro or "pop!_os" in distro or "mint" in distro:
        return ["sudo ubuntu-drivers install", "sudo reboot"]
    if "debian" in distro:
        return ["sudo apt install nvidia-driver firmware-misc-nonfree  # needs the non-free components enabled", "sudo reboot"]
    if "fedora" in distro:
        return ["sudo dnf install akmod-nvidia  # from RPM Fusion", "sudo reboot"]
    if any(x in distro for x in ("red hat", "rocky", "alma", "centos")):
        return ["sudo dnf module install nvidia-driver:latest-dkms  # from NVIDIA's CUDA repository", "sudo reboot"]
    if "arch" in distro:
        return ["sudo pacman -S nvidia", "sudo reboot"]
    return [
        "# Install NVIDIA's driver for your distribution: https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/",
        "sudo reboot",
    ]


def _min_driver_note(fx: Facts) -> Optional[str]:
    k, cuda = kb(), fx.str("torch.cuda")
    if not (k and cuda):
        return None
    floor = k.min_driver_for_cuda(cuda, "windows" if (fx.str("system.os") or "").lower().startswith("windows") else "linux")
    return f"torch {fx.str('torch.version')} (CUDA {cuda}) needs driver >= {floor}" if floor else None


@check(NO_NVIDIA_DRIVER)
def no_nvidia_driver(fx: Facts) -> Iterator[Finding]:
    """No driver: distinguish 'GPU without driver' from 'no GPU at all'."""
    nvml = fx.str("nvml.status")
    module = kernel_module(fx)
    said = error_match(fx, NO_NVIDIA_DRIVER)  # every wording: torch's, the loader's, a missing nvidia-smi
    if module_not_loaded(fx) or (nvml == "driver-not-loaded" and module_is_machines_own(fx)):
        # The user space is there and the module is not loaded: kernel-module-missing, or the more specific
        # reason the text shows (Secure Boot, nouveau, an unsupported GPU), says which fix.
        return
    if not said and not module_is_machines_own(fx):
        # nvidia-smi installed but not reaching a driver on Windows or under WSL: no working driver there
        said = error_match(fx, KERNEL_MODULE_MISSING)
    # Inside a container the host's module list shows through; a missing library there is a
    # container started without GPU support (no-gpu-visible), not a missing driver.
    if fx.str("system.container") and module is True:
        return
    if _containers.driver_hidden_by_container(fx, said):
        return  # a container started without GPUs: no-gpu-visible says so
    if wsl1_build(fx) or fx.get("system.wsl_version") == 1:
        return  # WSL 1 (its kernel, or stated) has no GPU path at all, whatever the driver: wsl-gpu-unsupported
    if smi_missing_beside_driver(fx):
        return  # only nvidia-smi is missing, the driver is loaded: nvidia-smi-not-installed (checks/smi24.py)
    # collect_env prints "No CUDA" for the GPU/driver fields when nvidia-smi gave nothing and a
    # CUDA build of torch could not initialise CUDA: no usable driver.
    no_smi = nvml == "no-nvidia-smi" and not driver_version(fx) and _cuda_build_without_cuda(fx)
    absent = (
        (nvml in ("library-missing", "driver-not-loaded") and module is not True)
        or bool(said and not driver_version(fx))
        or no_smi
    )
    if absent:
        yield _driver_absent(fx, nvml, module, said, no_smi)
    elif _probably_absent(fx, nvml):
        yield _probably_no_driver(fx)


def _cuda_build_without_cuda(fx: Facts) -> bool:
    return build_kind(fx) == "cuda" and fx.bool("torch.cuda_available") is False


def _probably_absent(fx: Facts, nvml: Optional[str]) -> bool:
    """collect_env printed "Could not collect" for the driver and the GPUs (nvidia-smi missing or
    failing) while a CUDA build says CUDA is unavailable: most likely no working driver, but the
    text cannot prove it."""
    return (
        fx.origin == "collect_env"
        and nvml is None
        and not driver_version(fx)
        and not fx.dicts("nvml.devices")
        and _cuda_build_without_cuda(fx)
    )


def _probably_no_driver(fx: Facts) -> Finding:
    return NO_NVIDIA_DRIVER.finding(
        title="Probably no working NVIDIA driver: nvidia-smi reported neither a driver nor a GPU, and CUDA is unavailable",
        evidence={
            "Nvidia driver version": "Could not collect",
            "GPU models and configuration": "Could not collect",
            "Is CUDA available": False,
            "torch.version": fx.str("torch.version"),
        },
        fix=Fix(
            ("nvidia-smi  # does it run, and which driver does it show?",) + tuple(_driver_install_fix(fx)),
            "collect_env asks nvidia-smi for the driver; when nvidia-smi cannot run, the driver is usually missing or broken.",
        ),
        severity="warning",
    )


def _driver_absent(
    fx: Facts, nvml: Optional[str], module: Optional[bool], said: Optional[Tuple[str, str]], no_smi: bool
) -> Finding:
    """No driver: on a machine without an NVIDIA GPU, or (as far as the facts tell) with one."""
    gpu = nvidia_gpu_present(fx)
    pci = fx.list("system.pci_nvidia_devices")
    evidence: Dict[str, Any] = {
        "nvml.status": nvml,
        "nvml.error": fx.str("nvml.error"),
        "system.kernel_modules.nvidia": module,
        "system.pci_nvidia_devices": len(pci or []) if pci is not None else "unknown",
        "torch.version": fx.str("torch.version"),
    }
    if said:
        evidence[said[0]] = said[1]
    if gpu is False:
        return _no_nvidia_gpu(fx, evidence)
    cmds = _driver_install_fix(fx)
    if kernel_module(fx, "nouveau"):
        cmds = ["# The open-source nouveau driver is loaded and blocks NVIDIA's: the package below blacklists it"] + cmds
        evidence["system.kernel_modules.nouveau"] = True
    note = _min_driver_note(fx)
    if note:
        cmds.append(f"# {note}")
    if no_smi and gpu is None:
        evidence["collect_env"] = "nvidia-smi gave no driver or GPU, and torch.cuda.is_available() is False"
    title = (
        "An NVIDIA GPU is installed but no NVIDIA driver is loaded"
        if gpu
        else "No NVIDIA driver found (could not tell whether the machine has an NVIDIA GPU)"
    )
    if gpu and module is None and fx.origin == "live":
        title = "No NVIDIA driver found"
    return NO_NVIDIA_DRIVER.finding(
        title=title,
        evidence=evidence,
        fix=Fix(tuple(cmds), "The driver is what lets CUDA, and so PyTorch, reach the GPU."),
    )


def _no_nvidia_gpu(fx: Facts, evidence: Dict[str, Any]) -> Finding:
    variant = imported_variant(fx)
    cmds = ["# Run on a machine with an NVIDIA GPU (in the cloud: a GPU instance type)"]
    if variant and variant != "cpu":
        cmds.append(
            "# For CPU-only work the CPU wheel is ~10x smaller: python -m pip install --force-reinstall "
            + " ".join(["torch"] + [n for n in ("torchvision", "torchaudio") if fx.distribution(n)])  # one build for all
            + " --index-url https://download.pytorch.org/whl/cpu"
        )
    return NO_NVIDIA_DRIVER.finding(
        title="No NVIDIA GPU in this machine, so there is no NVIDIA driver for PyTorch to use",
        evidence=evidence,
        fix=Fix(tuple(cmds), "PyTorch's CUDA build needs an NVIDIA GPU and its driver; the PCI bus shows no NVIDIA device here."),
    )


_INDEX = re.compile(r"^\d+$")


def _visible_entries(value: str) -> List[str]:
    return [p.strip() for p in value.split(",")]


def _cvd_problem(cvd: str, count: Optional[int], uuids: List[str]) -> Optional[str]:
    """Why CUDA_VISIBLE_DEVICES hides every device, or None if it selects at least one.

    CUDA reads the list left to right and stops at the first invalid entry.
    """
    v = cvd.strip()
    if v == "":
        return "CUDA_VISIBLE_DEVICES is set but empty, which hides every GPU"
    if v.lower() in ("-1", "none", "nodevfiles", "void"):
        return f"CUDA_VISIBLE_DEVICES={v} hides every GPU"
    first = _visible_entries(v)[0]
    if _INDEX.match(first):
        if count is not None and int(first) >= count:
            return (
                f"CUDA_VISIBLE_DEVICES={v} starts with device {first}, but this machine has "
                f"{count} GPU{'s' if count != 1 else ''} (indices 0..{count - 1})"
            )
        return None
    if first.startswith("-"):
        return f"CUDA_VISIBLE_DEVICES={v} starts with an invalid index"
    if first.upper().startswith(("GPU-", "MIG-")):
        if uuids and not any(u.upper().startswith(first.upper()) for u in uuids) and not first.upper().startswith("MIG-"):
            return f"CUDA_VISIBLE_DEVICES names {first}, which matches no GPU UUID on this machine"
        return None
    return f"CUDA_VISIBLE_DEVICES={v}: {first!r} is neither an index nor a GPU UUID"


@check(NO_GPU_VISIBLE)
def no_gpu_visible(fx: Facts) -> Iterator[Finding]:
    """Driver fine, zero devices for this process: CUDA_VISIBLE_DEVICES, containers, NVML count."""
    nvml = fx.str("nvml.status")
    devices = fx.dicts("nvml.devices")
    count = fx.int("nvml.device_count")
    if count is None and devices:
        count = len(devices)
    torch_count = fx.int("torch.device_count")
    said = error_match(fx, NO_GPU_VISIBLE)
    driver_ok = nvml == "ok" or bool(driver_version(fx)) or (kernel_module(fx) is True and nvml not in ("library-missing",))
    evidence = {"nvml.status": nvml, "nvml.device_count": count, "torch.device_count": torch_count}
    if said:
        evidence[said[0]] = said[1]
    kind = _containers.driver_hidden_by_container(fx, error_match(fx, NO_NVIDIA_DRIVER))
    if kind:
        yield _container_without_gpus(fx, kind, evidence)
        return
    if not (_cvd_hides(fx, count, [], {}) or _nvd_hides(fx, {})):
        inside = _container_insufficient(fx, evidence) or _container_sees_no_device(fx, said, evidence)
        if inside:
            yield inside
            return
    loader = _containers.libcuda_missing(fx) or search(fx, _containers.LOADER_LIBCUDA)
    if loader and _containers.host_unknown(fx):
        yield _loader_in_container_maybe(loader, evidence)
        return
    if not driver_ok:
        # What the variables say hides every GPU whatever the driver does (its syntax, "void"); where nothing
        # tells the driver's state (a pasted report), that is the finding.
        unknown = not nvml and kernel_module(fx) is None
        found = (
            (unknown and (_cvd_hides(fx, None, [], evidence) or _nvd_hides(fx, evidence)))
            or _ordinal_without_driver(fx, nvml, evidence)
            or (unknown and _no_device_driver_unknown(fx, evidence))
            or (unknown and _container_cuda_unavailable(fx, evidence))
        )
    else:
        uuids = [d["uuid"] for d in devices if isinstance(d.get("uuid"), str)]
        found = (
            _cvd_hides(fx, count, uuids, evidence)
            or _nvd_hides(fx, evidence)
            or _slurm_without_gpus(fx, count, torch_count, evidence)
            or _driver_sees_none(nvml, count, evidence)
            or _cuda_sees_none(said, torch_count, evidence)
            or _unavailable_unexplained(fx, devices, evidence)
        )
    found = found or _cvd_past_unknown_count(fx, count, evidence)
    if found:
        yield found


def _container_without_gpus(fx: Facts, kind: str, evidence: Dict[str, Any]) -> Finding:
    """A container on a GPU host, started without GPU access: the driver's user-space libraries were
    never mounted in (checks/_containers.py)."""
    evidence.update(_containers.evidence_of(fx, kind))
    said = error_match(fx, NO_NVIDIA_DRIVER) or search(fx, _containers.INSUFFICIENT)
    if said:
        evidence[said[0]] = said[1]
    asked = _containers.gpus_requested(fx)
    cmds, why, how = _containers.start_with_gpus(kind, asked, _containers.compose(fx), _containers.devices_only(fx))
    host = " (the host has the NVIDIA driver)" if kernel_module(fx) is True else ""
    return NO_GPU_VISIBLE.finding(
        title=f"This {kind} container was {how}{host}: the driver's libcuda.so.1 is mounted only into containers given GPUs",
        evidence=evidence,
        fix=Fix(cmds, why),
    )


def _container_insufficient(fx: Facts, evidence: Dict[str, Any]) -> Optional[Finding]:
    """CUDA's error 35 inside a container whose start is not shown asking for GPUs, the driver's version unknown:
    a container without GPU access has no libcuda.so.1, which cudart reports as "driver insufficient"; the host's
    driver older than the image's CUDA says the same. A warning naming both (driver-too-old reads the second)."""
    got = _containers.insufficient_in_container(fx)
    if not got:
        return None
    kind, where, line = got
    evidence.update(_containers.evidence_of(fx, kind))
    evidence[where] = line
    cmds, why, _how = _containers.start_with_gpus(kind, None, _containers.compose(fx), _containers.devices_only(fx))
    driver, runs = driver_version(fx), _containers.host_driver_runs(fx)
    if driver and runs:
        evidence["nvml.driver_version"], evidence["driver_cuda"] = driver, runs
        title = (
            f"CUDA says the driver is insufficient (error 35) inside this {kind} container, but driver {driver} runs CUDA "
            f"{runs}: the container was most likely started without GPU access (then it has no libcuda.so.1, which cudart "
            "reports as error 35)"
        )
    else:
        title = (
            f"CUDA says the driver is insufficient (error 35) inside this {kind} container: if it was started without GPU "
            "access there is no libcuda.so.1 in it at all (cudart reports that as error 35); otherwise the host's driver "
            "is older than the image's CUDA"
        )
    return NO_GPU_VISIBLE.finding(
        title=title,
        evidence=evidence,
        fix=Fix(
            ("ls /dev/nvidia* ; nvidia-smi  # inside the container: both missing when it has no GPU access",)
            + cmds
            + ("nvidia-smi  # on the host: the driver version, to compare with the image's CUDA",),
            why,
        ),
        severity="warning",
    )


def _container_sees_no_device(fx: Facts, said: Optional[Tuple[str, str]], evidence: Dict[str, Any]) -> Optional[Finding]:
    """Inside a container whose start is not shown asking for GPUs, CUDA finds no device (error 100 in any tool's
    words, torch's "No CUDA GPUs are available", onnxruntime failing its device count while parsing device_id:
    kb/errors/container8.json) and nvidia-smi is not shown working there: the container was most likely started
    without GPU access. Shown without a GPU option: an error; not shown: a warning."""
    kind = _containers.container_kind(fx)
    asked = _containers.gpus_requested(fx)
    if not kind or asked is True or kernel_module(fx) is False or fx.str("nvml.status") == "ok":
        return None
    hit = next((e for e in extract.errors(text_of(fx)) if e.value == 100 and e.code == NO_GPU_VISIBLE.code), None)
    line = said or (("cuda_error", f"{hit.name} (100): {hit.text}") if hit else None)
    if not line:
        return None
    evidence.update(_containers.evidence_of(fx, kind))
    evidence[line[0]] = line[1]
    cmds, why, how = _containers.start_with_gpus(kind, asked, _containers.compose(fx), _containers.devices_only(fx))
    return NO_GPU_VISIBLE.finding(
        title=f"No GPU inside this {kind} container: it was {how}",
        evidence=evidence,
        fix=Fix(("ls /dev/nvidia* ; nvidia-smi  # inside the container: both missing when it has no GPU access",) + cmds, why),
        severity=None if asked is False else "warning",
    )


def _container_cuda_unavailable(fx: Facts, evidence: Dict[str, Any]) -> Optional[Finding]:
    """A report from inside a container (its OS line or text says so) where torch's CUDA is unavailable and nothing
    shows the driver or a GPU from inside it, nor a CPU build: the container most likely has no GPU access. A warning:
    a container that got the GPU's NVML but not its compute part (NVIDIA_DRIVER_CAPABILITIES without compute, device
    nodes passed by hand without /dev/nvidia-uvm) looks the same, and the fix names those too."""
    kind = _containers.container_kind(fx)
    if not (
        kind
        and fx.bool("torch.cuda_available") is False
        and _containers.gpus_requested(fx) is not True
        and build_kind(fx) != "cpu"
        and not driver_version(fx)
        and not fx.dicts("nvml.devices")
        and not is_wsl(fx)
    ):
        return None
    evidence.update(_containers.evidence_of(fx, kind))
    evidence["torch.cuda_available"] = False
    cmds, why, how = _containers.start_with_gpus(kind, None, _containers.compose(fx), _containers.devices_only(fx))
    return NO_GPU_VISIBLE.finding(
        title=f"CUDA is unavailable inside this {kind} container and nothing shows a GPU there: it was {how}",
        evidence=evidence,
        fix=Fix(
            ("ls /dev/nvidia* ; nvidia-smi  # inside the container: both missing when it has no GPU access",)
            + cmds
            + (
                "# nvidia-smi works inside but CUDA does not: NVIDIA_DRIVER_CAPABILITIES=compute,utility (libcuda.so.1 "
                "is mounted only with 'compute'); devices passed by hand need --device /dev/nvidia-uvm too",
            ),
            why,
        ),
        severity="warning",
    )


def _loader_in_container_maybe(loader: Tuple[str, str], evidence: Dict[str, Any]) -> Finding:
    """A program linked against libcuda.so.1 cannot start, and nothing tells a host from a container."""
    evidence[loader[0]] = loader[1]
    cmds, why, _how = _containers.start_with_gpus("docker", None)
    return NO_GPU_VISIBLE.finding(
        title="If this program runs in a container (where this loader error usually comes from), the container was started "
        "without GPU access; on a host, no NVIDIA driver is installed",
        evidence=evidence,
        fix=Fix(("ls /dev/nvidia* ; nvidia-smi  # inside the container: both missing when it has no GPU access",) + cmds, why),
        severity="warning",
    )


def _ordinal_without_driver(fx: Facts, nvml: Optional[str], evidence: Dict[str, Any]) -> Optional[Finding]:
    """No driver facts, but the program asked for a device index this process cannot see."""
    ordinal = search(fx, r"invalid device ordinal|No CUDA GPUs are available")
    if not (ordinal and nvml not in ("library-missing", "driver-not-loaded", "no-nvidia-smi") and kernel_module(fx) is not False):
        return None
    evidence[ordinal[0]] = ordinal[1]
    return NO_GPU_VISIBLE.finding(
        title='The program asked for a GPU this process cannot see ("' + ordinal[1][:80] + '")',
        evidence=evidence,
        fix=Fix(
            (
                "nvidia-smi -L  # the GPUs the driver has",
                "echo $CUDA_VISIBLE_DEVICES  # the ones this process may use",
                "unset CUDA_VISIBLE_DEVICES  # or use an index below torch.cuda.device_count()",
            ),
            "CUDA numbers only the devices CUDA_VISIBLE_DEVICES exposes; an index past them is invalid.",
        ),
        severity="warning",
    )


def _no_device_driver_unknown(fx: Facts, evidence: Dict[str, Any]) -> Optional[Finding]:
    """CUDA's error 100 (its driver library answered: no device) where nothing tells the driver's state (a pasted
    error alone): the GPUs are hidden from this process (CUDA_VISIBLE_DEVICES, a container's device list, a scheduler)
    or the kernel module did not load. A warning naming both; nvidia-smi tells them apart. Error 100 in any tool's words
    (cudaErrorNoDevice's message, CUDA_ERROR_NO_DEVICE, "cuda runtime error (100)", numba's "[100]") is read by the kb's
    CUDA error table (errortext.extract.errors, kb/cuda_errors.json)."""
    hit = next((e for e in extract.errors(text_of(fx)) if e.value == 100 and e.code == NO_GPU_VISIBLE.code), None)
    if not hit or is_wsl(fx) or search(fx, r"\bWSL\s?2?\b|microsoft-standard"):  # WSL has its own causes (platform checks)
        return None
    evidence["cuda_error"] = f"{hit.name} (100): {hit.text}"
    return _hidden(
        "CUDA finds no device (error 100): the GPUs are hidden from this process (CUDA_VISIBLE_DEVICES, a container started "
        "without GPUs, a job without a GPU allocation) or the NVIDIA kernel module is not loaded",
        evidence,
        (
            "nvidia-smi -L  # lists GPUs: they are hidden from the process; fails: the driver/kernel module is the problem",
            "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES",
            "lsmod | grep nvidia; ls /dev/nvidia*  # the kernel module and the device nodes",
        ),
        "CUDA's driver library loaded and reported zero devices: either nothing exposes the GPUs to this process or the "
        "kernel module behind /dev/nvidia* is missing.",
        severity="warning",
    )


def _hidden(title: str, evidence: Dict[str, Any], commands: Tuple[str, ...], why: str, severity: Optional[str] = None) -> Finding:
    """A no-gpu-visible finding: what hides the GPUs, and the commands that show or undo it."""
    return NO_GPU_VISIBLE.finding(title=title, evidence=evidence, fix=Fix(commands, why), severity=severity)


#: A visibility variable's value as a text states it: an assignment (``X=v``, ``X: v``, ``os.environ["X"] = "v"``,
#: ``-e X=v``) or a sentence ("X (is|was|forcibly ...) set to v", "overwrites X to v"). {name} is the variable.
_STATED = (
    r"\b{name}(?:['\"]\s*\])?\s*(?:==?|:)\s*(?P<v>\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|\[[^\]\n]*\]|[^\s\"'`;&|)]+)",
    r"\b{name}[`'\"]?\s+(?:(?:is|was|were|gets?|got|being|been|forcibly|always|now|then|automatically|systematically|"
    r"explicitly|silently|still)\s+)*(?:set|overwritten|forced|changed|reset)\s+to\s+(?P<v>[`'\"]?[\w,\[\]-]+)",
    r"\b(?:sets?|setting|overwrites?|overwriting|forces?|forcing|changes?|changing)\s+[`'\"]?{name}[`'\"]?\s+to\s+"
    r"(?P<v>[`'\"]?[\w,\[\]-]+)",
)
#: Values that stand for another value (a shell or template variable, an ellipsis): not a value CUDA reads.
#: ("[n]", "[GPUs to USE]", "[0-9]*" in a README or a sed command are placeholders or patterns, "[1,2,3]" a value).
_PLACEHOLDER = re.compile(r"^[$<{%]|\.\.\.|\b(?:x+|n|id|ids|idx|your|gpu_?ids?)\b|>$|^\[.*(?:[A-Za-z]|\d-\d)", re.I)


#: The values of these variables that are words (NVIDIA container runtime: all, none, void; CUDA: none of them).
_WORD_VALUES = ("all", "none", "void", "nodevfiles")


def stated_values(text: str, name: str) -> List[str]:
    """Every value the text gives the environment variable ``name`` (quotes a shell or Python would strip
    removed; placeholders such as ``$GPU`` or ``<id>`` left out), in order."""
    out: List[Tuple[int, str]] = []
    for pat in _STATED:
        for m in re.finditer(pat.format(name=re.escape(name)), text):
            v = m.group("v").strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'`":
                v = v[1:-1]
            elif v[:1] in "\"'`":
                v = v[1:]
            if not v.startswith("["):
                v = v.rstrip(".,;:")
            if _PLACEHOLDER.search(v) or (re.fullmatch(r"[A-Za-z]+", v) and v.lower() not in _WORD_VALUES):
                continue  # a placeholder, or a word of the sentence ("set it to the MIG slice's UUID")
            out.append((m.start(), v))
    return [v for _, v in sorted(out)]


def visible_value(fx: Facts, name: str) -> Tuple[Optional[str], str]:
    """(value, where) of a visibility variable: as recorded in the environment, else as the error texts state
    it (one value, or the same value every time they state it)."""
    v = fx.env(name)
    if v is not None:
        return v, "environment"
    stated = set(stated_values(text_of(fx), name))
    if len(stated) == 1:
        return stated.pop(), "stated in the text"
    return None, ""


def _cvd_hides(fx: Facts, count: Optional[int], uuids: List[str], evidence: Dict[str, Any]) -> Optional[Finding]:
    cvd, where = visible_value(fx, "CUDA_VISIBLE_DEVICES")
    problem = _cvd_problem(cvd, count, uuids) if cvd is not None else None
    if not problem:
        return None
    evidence["CUDA_VISIBLE_DEVICES"] = cvd
    if where != "environment":
        evidence["CUDA_VISIBLE_DEVICES (from)"] = where
    good = ",".join(str(i) for i in range(count)) if count else "0"
    cmds: Tuple[str, ...] = (
        "unset CUDA_VISIBLE_DEVICES",
        f"# or choose from `nvidia-smi -L`, e.g.: export CUDA_VISIBLE_DEVICES={good}",
    )
    if (cvd or "").strip() == "":
        # Schedulers set it empty for work that asked for no GPU: fix the request, not the variable.
        cmds += _SLURM_REQUEST if fx.env("SLURM_JOB_ID") else ()
        cmds += ("# under Ray, a task or actor without num_gpus gets CUDA_VISIBLE_DEVICES='': @ray.remote(num_gpus=1)",)
    return _hidden(
        problem,
        evidence,
        cmds,
        "CUDA only sees the devices that CUDA_VISIBLE_DEVICES names, up to its first invalid entry.",
    )


#: How a Slurm job asks for GPUs (Slurm exposes to a job only the GPUs it was allocated).
_SLURM_REQUEST = (
    "#SBATCH --gres=gpu:1  # or srun --gpus=1 ...: a Slurm job sees only the GPUs it requests",
    "scontrol show job $SLURM_JOB_ID | grep -i -E 'tres|gres'  # what this job was given",
)


def _slurm_without_gpus(
    fx: Facts, count: Optional[int], torch_count: Optional[int], evidence: Dict[str, Any]
) -> Optional[Finding]:
    """A Slurm job that was allocated no GPU: the node has them, the job's cgroup hides them."""
    job = fx.env("SLURM_JOB_ID")
    if not job or fx.env("SLURM_JOB_GPUS") or fx.env("SLURM_STEP_GPUS") or not (count == 0 or torch_count == 0):
        return None
    evidence["SLURM_JOB_ID"] = job
    return _hidden(
        f"This Slurm job ({job}) was allocated no GPU (no SLURM_JOB_GPUS): request GPUs for the job",
        evidence,
        _SLURM_REQUEST,
        "Slurm confines a job to the GPUs it requested (--gres/--gpus); without a request it sees none.",
    )


def _nvd_hides(fx: Facts, evidence: Dict[str, Any]) -> Optional[Finding]:
    nvd, where = visible_value(fx, "NVIDIA_VISIBLE_DEVICES")
    if nvd is None or nvd.strip().lower() not in ("void", "none", ""):
        return None
    evidence["NVIDIA_VISIBLE_DEVICES"] = nvd
    if where != "environment":
        evidence["NVIDIA_VISIBLE_DEVICES (from)"] = where
    return _hidden(
        f"NVIDIA_VISIBLE_DEVICES={nvd or '(empty)'} hides every GPU from this container",
        evidence,
        ("# start the container with NVIDIA_VISIBLE_DEVICES=all, or docker run --gpus all ...",),
        "The NVIDIA container runtime exposes only the devices this variable names.",
    )


def _driver_sees_none(nvml: Optional[str], count: Optional[int], evidence: Dict[str, Any]) -> Optional[Finding]:
    if not (nvml == "ok" and count == 0):
        return None
    return _hidden(
        "The NVIDIA driver is loaded but reports no GPU",
        evidence,
        ("nvidia-smi -L", "sudo dmesg | grep -i -E 'nvrm|xid'  # look for a GPU that failed to initialise"),
        "With the driver up and no device, the GPU is hidden (container, VM passthrough) or failed to initialise.",
    )


def _cuda_sees_none(said: Optional[Tuple[str, str]], torch_count: Optional[int], evidence: Dict[str, Any]) -> Optional[Finding]:
    if not (
        said
        and torch_count in (0, None)
        and (
            "no CUDA-capable device" in said[1] or "No CUDA GPUs are available" in said[1] or "invalid device ordinal" in said[1]
        )
    ):
        return None
    return _hidden(
        "CUDA reports no CUDA-capable device although the driver is present",
        evidence,
        ("unset CUDA_VISIBLE_DEVICES", "nvidia-smi -L"),
        "Usually CUDA_VISIBLE_DEVICES or the container hides the devices the driver sees.",
    )


def _cvd_past_unknown_count(fx: Facts, count: Optional[int], evidence: Dict[str, Any]) -> Optional[Finding]:
    """CUDA_VISIBLE_DEVICES starts past GPU 0 while CUDA is unavailable and the GPU count is unknown (a paste
    with the environment but no nvidia-smi): on a machine with fewer GPUs than that index, it hides them all."""
    cvd = fx.env("CUDA_VISIBLE_DEVICES")
    first = _visible_entries(cvd.strip())[0] if cvd and cvd.strip() else None
    if count is not None or not first or not _INDEX.match(first) or int(first) == 0:
        return None
    if fx.bool("torch.cuda_available") is not False:
        return None
    evidence.update({"CUDA_VISIBLE_DEVICES": cvd, "torch.cuda_available": False})
    return _hidden(
        f"CUDA_VISIBLE_DEVICES={cvd} selects GPU {first} and CUDA finds none: on a machine with {first} GPU"
        f"{'s' if int(first) != 1 else ''} or fewer, it hides every one",
        evidence,
        (
            "nvidia-smi -L  # the indices that exist",
            "export CUDA_VISIBLE_DEVICES=0  # or unset it; look for where a script or service sets it",
        ),
        "CUDA numbers GPUs from 0 and ignores the list from its first index that does not exist.",
        severity="warning",
    )


def _unavailable_unexplained(fx: Facts, devices: List[Dict[str, Any]], evidence: Dict[str, Any]) -> Optional[Finding]:
    """A CUDA build says CUDA is unavailable while the driver runs its CUDA and lists a GPU: nothing in the
    build or the driver explains it, and what hides a GPU from one process only (CUDA_VISIBLE_DEVICES set by
    a script, a container's device list) is the usual cause. A warning: the facts do not show the variable."""
    driver, cuda = driver_version(fx), fx.str("torch.cuda")
    k = kb()
    if not (
        build_kind(fx) == "cuda"
        and fx.bool("torch.cuda_available") is False
        and devices
        and driver
        and cuda
        and not is_wsl(fx)
        and not fx.env_recorded()  # where the variables were recorded, _cvd_hides has read them
        and k.driver_supports_cuda(driver, cuda, driver_os(fx)) is True
    ):
        return None
    evidence.update({"torch.cuda_available": False, "nvml.driver_version": driver, "torch.cuda": cuda})
    return _hidden(
        f"torch (CUDA {cuda}) finds no usable GPU although driver {driver} runs it and lists "
        f"{devices[0].get('name') or 'a GPU'}: most often CUDA_VISIBLE_DEVICES (set by a script or the shell) hides it",
        evidence,
        (
            'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"  # in the shell and in the script that runs (grep -r CUDA_VISIBLE_DEVICES .)',
            "nvidia-smi -L  # the indices and UUIDs that exist",
            'python -c "import torch; torch.cuda.init()"  # prints the error CUDA gives',
        ),
        "A GPU hidden from one process (CUDA_VISIBLE_DEVICES naming an index that does not exist, a container's device list) "
        "leaves the driver and nvidia-smi working while torch sees none.",
        severity="warning",
    )


def register():
    return [no_nvidia_driver, no_gpu_visible]
