"""Containers started without GPU access: where the facts or the text show a container, and what to do
in each runtime. Used by checks/driver.py (no-gpu-visible, no-nvidia-driver). Pure: no I/O.

Inside a container the NVIDIA driver's user-space libraries (libcuda.so.1, libnvidia-ml.so.1) and
nvidia-smi are not part of the image: the NVIDIA container runtime mounts them from the host when the
container is started with GPUs (docker run --gpus, a Compose device reservation, a Kubernetes
nvidia.com/gpu limit, singularity --nv, enroot's NVIDIA hook). A container started without them has no
libcuda.so.1 and no nvidia-smi, and every program says what a host without a driver says
("libcuda.so.1: cannot open shared object file", torch's "Found no NVIDIA driver on your system").
Sources: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html,
https://docs.docker.com/compose/how-tos/gpu-support/, https://github.com/NVIDIA/enroot/blob/master/doc/usage.md.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

from cudadoctor.errortext import extract, missing_libraries
from cudadoctor.facts import Facts
from cudadoctor.interpret import driver_version, is_wsl, kernel_module
from cudadoctor.readers.containers import IMAGE_TAG, kind_in

from ._common import search, text_of

#: The dynamic loader's words for a program linked against the driver's CUDA library (glibc's ld.so).
LOADER_LIBCUDA = r"error while loading shared libraries: libcuda\.so(?:\.1)?: cannot open shared object file"


def libcuda_missing(fx: Facts) -> Optional[Tuple[str, str]]:
    """("error text", line) where any tool says the driver's CUDA library libcuda.so.1 could not be loaded: the
    loader's, Python's ImportError, TensorFlow's dso_loader, dlopen's (errortext.missing_libraries, the family
    "driver" of kb/cuda_libraries.json). Only a driver installation (on a host) or the NVIDIA container runtime
    (in a container given GPUs) puts that file on a Linux machine."""
    text = text_of(fx)
    if "libcuda" not in text.lower():
        return None
    for lib in missing_libraries(text):
        # libcuda.so.1, the soname the driver installs; not the unversioned libcuda.so (the development link a
        # driver without its -dev package lacks, which Triton and cuda-python look for: libcuda-not-in-linker-cache)
        if lib.family == "driver" and lib.name.lower().startswith("libcuda.so") and lib.number == "1":
            return "error text", lib.line_text
    return None


#: Driver-absent wordings that, inside a container, mean "started without GPUs". Not the host-side ones:
#: nvidia-container-cli failing to load libnvidia-ml (the host has no driver) or nvidia-smi failing to
#: reach the kernel module (the host's module is not loaded).
_HOST_SIDE = re.compile(r"nvidia-container-cli|NVIDIA-SMI has failed|could not select device driver", re.I)

#: A CUDA container image named by its tag (the reader's pattern, readers/containers.py).
_IMAGE_TAG = IMAGE_TAG


def container_kind(fx: Facts) -> Optional[str]:
    """The container the facts were taken in (or the OS line names: "Ubuntu 20.04 (docker)", "Linux (GKE
    container)"), or the error text names (a runtime, a CUDA image's tag, a Docker container's hostname,
    "inside the container": kb/containers.json); None when nothing shows one."""
    kind = fx.str("system.container")
    if kind:
        return kind
    for where in ("system.distro", "system.os"):
        line = fx.str(where) or ""
        found = kind_in(line) or ("container" if re.search(r"\bcontainers?\b", line, re.I) else None)
        if found:
            return found
    if search(fx, _IMAGE_TAG):
        return "docker"
    return kind_in(text_of(fx)) if text_of(fx) else None


#: A container named in words (where container_kind's facts and patterns show none): Docker, Podman, Kubernetes, the HPC
#: runtimes.
CONTAINER_WORDS = re.compile(r"\b(?:docker|container|podman|kubernetes|k8s|singularity|apptainer)\b", re.I)


def container_named(fx: Facts, text: str, words: "re.Pattern[str]" = CONTAINER_WORDS) -> Optional[str]:
    """container_kind, else the first container word ``words`` finds in ``text``; None when neither shows one."""
    kind = container_kind(fx)
    if kind:
        return kind
    m = words.search(text)
    return m.group(0) if m else None


def gpus_requested(fx: Facts) -> Optional[bool]:
    """Whether the pasted start command asked for GPUs (readers/containers.py); None when not shown."""
    c = fx.dict("pasted.container") or {}
    v = c.get("gpus_requested")
    return v if isinstance(v, bool) else None


def driver_hidden_by_container(fx: Facts, said: Optional[Tuple[str, str]]) -> Optional[str]:
    """The container kind when the driver looks absent only because a container was started without
    GPUs: a container is shown, the driver-absent evidence is from inside it, and nothing says the
    host lacks the driver (its kernel module recorded as not loaded, a host-side error)."""
    kind = container_kind(fx)
    if not kind or kernel_module(fx) is False:
        return None
    if said and _HOST_SIDE.search(said[1]):
        return None
    nvml = fx.str("nvml.status")
    if fx.origin == "live":
        # Live inside a container: the host's module list shows through; it must show the driver.
        return kind if kernel_module(fx) is True and nvml in ("library-missing", "driver-not-loaded") else None
    if said or nvml == "library-missing":
        return kind
    if gpus_requested(fx) is False and search(fx, INSUFFICIENT):
        return kind  # no libcuda.so.1 at all reads as "driver insufficient" to the CUDA runtime
    if gpus_requested(fx) is False and search(fx, NO_GPU_INSIDE):
        return kind  # the start command is shown without a GPU option and the program inside finds no GPU
    # No error text, but the start command is shown without a GPU option and CUDA is unavailable.
    return kind if gpus_requested(fx) is False and fx.bool("torch.cuda_available") is False else None


#: A program inside a container saying it finds no GPU, in its own words (session 22, b135-04: a `docker run` shown
#: without --gpus, the app's "No GPUs detected"; NVIDIA Container Toolkit: GPUs are exposed only when requested).
NO_GPU_INSIDE = (
    r"(?i)\bno (?:nvidia |cuda )?gpus? (?:were |was )?(?:detected|found|available)\b|no CUDA-capable device"
    r"|\bCUDA (?:acceleration )?test failed\b|nvidia-smi: (?:command )?not found"
    # NVIDIA's CUDA/NGC images' entrypoint banner (50-gpu-driver-check.sh; kb/errors/cont6.json): no driver inside.
    r"|The NVIDIA Driver was not detected"
)


#: What the CUDA runtime says when it cannot load libcuda.so.1 at all (cudaErrorInsufficientDriver, 35): in a
#: container started without the NVIDIA runtime (https://github.com/NVIDIA/nvidia-docker/issues/24, /400).
INSUFFICIENT = r"CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver"


def host_driver_runs(fx: Facts) -> Optional[str]:
    """The CUDA release the driver the facts show runs (kb/cuda_drivers.json, minor-version compatibility counted) when
    it runs the program's: torch's CUDA where a torch build is known, else CUDA 12 (what a program that names no CUDA
    was most likely built with). None when the driver is unknown or does not run it."""
    from cudadoctor.interpret import driver_os, torch_cuda

    from ._common import kb

    driver = driver_version(fx)
    if not driver:
        return None
    need = torch_cuda(fx) or "12.0"
    if kb().driver_supports_cuda(driver, need, driver_os(fx)) is not True:
        return None
    return kb().max_cuda_for_driver(driver, driver_os(fx)) or need


def insufficient_in_container(fx: Facts) -> Optional[Tuple[str, str, str]]:
    """(kind, where, line) when the CUDA runtime says "driver insufficient" (error 35) inside a container whose start
    is not shown asking for GPUs and whose driver is not known, or is known to run the program's CUDA (the host's
    driver, read outside the container): without GPU access there is no libcuda.so.1 at all, and cudart reports that
    as error 35 (https://github.com/NVIDIA/nvidia-docker/issues/24). With the driver unknown, the host's driver being
    older than the image's CUDA gives the same error: both are possible."""
    kind = container_kind(fx)
    if not kind or gpus_requested(fx) is True or kernel_module(fx) is False:
        return None
    if driver_version(fx) and not host_driver_runs(fx):
        return None
    hit = next((e for e in extract.errors(text_of(fx)) if e.name == "cudaErrorInsufficientDriver"), None)
    return (kind, "cuda_error", f"{hit.name} (35): {hit.text}") if hit else None


def started_without_gpus(fx: Facts) -> Optional[str]:
    """The container kind when the paste shows its start command without any GPU option."""
    kind = container_kind(fx)
    return kind if kind and gpus_requested(fx) is False and kernel_module(fx) is not False else None


def host_unknown(fx: Facts) -> bool:
    """Nothing in the facts describes the machine's driver side: no driver version, NVML status,
    kernel module list, GPUs; not WSL, not Windows. Where a loader error could come from a host or
    from a container, only then are both told."""
    return (
        not driver_version(fx)
        and fx.str("nvml.status") in (None, "no-nvidia-smi")
        and kernel_module(fx) is None
        and not fx.dicts("nvml.devices")
        and not is_wsl(fx)
        and not (fx.str("system.os") or "").lower().startswith("windows")
    )


def devices_only(fx: Facts) -> bool:
    """The pasted docker run passed /dev/nvidia* by hand (no driver libraries come with them)."""
    return bool((fx.dict("pasted.container") or {}).get("devices_only"))


def compose(fx: Facts) -> bool:
    """The pasted start was Docker Compose's."""
    c = fx.dict("pasted.container") or {}
    return bool(re.search(r"compose", str(c.get("text") or ""), re.I))


def start_with_gpus(
    kind: str, asked: Optional[bool], via_compose: bool = False, devices_only: bool = False
) -> Tuple[Tuple[str, ...], str, str]:
    """(commands, why, how the title names the cause) for a container of ``kind`` whose start command
    asked for GPUs (``asked``: True / False / None unknown); ``via_compose``: started by Docker Compose."""
    if asked:
        return (
            (
                "docker inspect <container> --format '{{json .HostConfig.DeviceRequests}}'  # the GPU request the container got",
                "# the driver's CUDA library is mounted only with the 'compute' capability: "
                "NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all); Compose: capabilities: [gpu] (not only utility)",
                "# Compose files that set runtime: nvidia need it registered: sudo nvidia-ctk runtime configure --runtime=docker",
                "docker run --rm --gpus all ubuntu nvidia-smi  # the toolkit itself works",
            ),
            "The NVIDIA container runtime mounts libcuda.so.1 only for containers that get a GPU with the compute capability.",
            "asked for GPUs, but the driver's CUDA library did not reach it",
        )
    by_kind: Dict[str, Tuple[str, ...]] = {
        "docker": (
            "docker run --gpus all ...  # needs the NVIDIA Container Toolkit on the host",
            "# Compose: under the service, deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}",
            "docker run --rm --gpus all ubuntu nvidia-smi  # check: lists the GPUs",
        ),
        "podman": (
            "podman run --device nvidia.com/gpu=all ...  # CDI: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
        ),
        "kubernetes": (
            "# in the pod spec: resources: {limits: {nvidia.com/gpu: 1}}  (needs the NVIDIA device plugin or GPU Operator)",
            "kubectl describe node <node> | grep -i nvidia.com/gpu  # the node offers GPUs",
        ),
        "singularity": ("singularity exec --nv <image.sif> ...  # apptainer exec --nv: binds the host's driver libraries",),
        "container": (
            "docker run --gpus all ...  # Docker; Compose: deploy.resources.reservations.devices [{driver: nvidia, count: all, capabilities: [gpu]}]",
            "# Kubernetes: resources: {limits: {nvidia.com/gpu: 1}} in the pod spec; Singularity/Apptainer: exec --nv",
            "ls /dev/nvidia* ; nvidia-smi  # inside the container: both present once it has GPU access",
        ),
        "enroot": (
            "export NVIDIA_VISIBLE_DEVICES=all  # enroot's NVIDIA hook runs only with it set (pyxis: srun --container-env=NVIDIA_VISIBLE_DEVICES ...)",
            "# or build the image from an nvidia/cuda base, which sets NVIDIA_VISIBLE_DEVICES",
        ),
    }
    cmds = by_kind.get(kind, by_kind["docker"])
    if kind == "docker" and devices_only:
        cmds = (
            "# --device /dev/nvidia* passes the GPUs' device files but not the driver's libraries: use --gpus instead",
        ) + cmds
    if kind == "docker" and via_compose:
        cmds = (cmds[1], cmds[0], cmds[2])
    why = "The container runtime must mount the GPU devices and the driver's libraries into the container; without a GPU request it mounts none."
    return cmds, why, "started without GPU access" if asked is False else "most likely started without GPU access"


def evidence_of(fx: Facts, kind: str) -> Dict[str, Any]:
    c = fx.dict("pasted.container") or {}
    out: Dict[str, Any] = {"container": kind}
    if c.get("text"):
        out["pasted start"] = c["text"]
    if isinstance(c.get("gpus_requested"), bool):
        out["gpus requested"] = c["gpus_requested"]
    return out
