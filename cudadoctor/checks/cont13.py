"""A container given the GPU without the compute capability (round 13): the NVIDIA Container Toolkit mounts only the
driver libraries of the capabilities asked for (NVIDIA_DRIVER_CAPABILITIES, or Compose's device `capabilities`), and
libcuda.so.1 belongs to `compute`. With `utility` alone (or video, graphics) nvidia-smi works in the container while
every CUDA program fails to load libcuda.

- container-gpu-capabilities-lack-compute: the capabilities are stated (the environment recorded, a Compose file, a
  docker run line, docker inspect's "Capabilities") and include neither compute nor all.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

CONTAINER_GPU_CAPABILITIES_LACK_COMPUTE = Code(
    code="container-gpu-capabilities-lack-compute",
    title="The container is given the GPU without the compute capability: libcuda.so.1 is not mounted",
    area="system",
    severity="error",
    explanation={
        "what": "In a container nvidia-smi works, but CUDA programs fail to load the driver: "
        '"libcuda.so.1: cannot open shared object file", "Found no NVIDIA driver on your system", '
        "torch.cuda.is_available() is False. The container was started with driver capabilities that leave out "
        "compute (NVIDIA_DRIVER_CAPABILITIES=utility or video,utility; Compose `capabilities: [gpu, utility]`).",
        "why": "The NVIDIA Container Toolkit mounts only the driver libraries of the capabilities requested: "
        "`utility` brings nvidia-smi and libnvidia-ml (NVML), `compute` brings libcuda and the PTX JIT, `video` "
        "the NVENC/NVDEC libraries. Without compute (or all) there is no libcuda.so.1 in the container, though the "
        "GPU's device nodes are there and NVML sees it.",
        "confirm": "`docker inspect CONTAINER` (HostConfig.DeviceRequests[].Capabilities, and Config.Env for "
        "NVIDIA_DRIVER_CAPABILITIES); in the container `ldconfig -p | grep libcuda` lists nothing while "
        "`nvidia-smi` works.",
        "fix": "Ask for compute: `-e NVIDIA_DRIVER_CAPABILITIES=compute,utility` (or `all`) on docker run, and in "
        "Compose `capabilities: [gpu]` (the toolkit's defaults) or `capabilities: [gpu, compute, utility]`; then "
        "recreate the container.",
    },
    links=(
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html#driver-capabilities",
        "https://docs.docker.com/compose/how-tos/gpu-support/",
        "https://github.com/AbdBarho/stable-diffusion-webui-docker/issues/348",
    ),
)

#: The toolkit's driver capabilities (docker-specialized.html): compute is the one with libcuda; all includes it.
_CAPS = {"compute", "compat32", "graphics", "utility", "video", "display", "all"}
#: NVIDIA_DRIVER_CAPABILITIES as an assignment (env, -e, Compose's mapping or list form, docker inspect's Env).
_ENV_RX = re.compile(r"NVIDIA_DRIVER_CAPABILITIES\s*[=:]\s*[\"']?(?P<v>[a-z0-9_, ]+)", re.I)
#: Compose's device request, one line or a YAML list; docker inspect's "Capabilities":[["gpu","utility"]].
_COMPOSE_RX = re.compile(r"capabilities\s*:\s*\[(?P<v>[^\]\n]*)\]|\"Capabilities\"\s*:\s*\[\[(?P<i>[^\]\n]*)\]\]", re.I)
_COMPOSE_LIST = re.compile(r"capabilities\s*:\s*\n(?P<v>(?:[ \t#]*-\s*[\"']?\w+[\"']?[ \t]*\n?)+)", re.I)
#: What shows the CUDA driver library missing (as opposed to any other failure).
_NO_LIBCUDA = re.compile(
    r"libcuda\.so(?:\.1)?[^\n]{0,60}(?:cannot open|not found|no such file)|(?:cannot|could not|unable to|failed to) "
    r"(?:load|find|open)[^\n]{0,20}libcuda|Found no NVIDIA driver|no CUDA-capable device|is_available\(\)[^\n]{0,24}?\bFalse\b",
    re.I,
)


def _caps(raw: str) -> List[str]:
    return [c for c in (w.strip().strip("\"'").lower() for w in re.split(r"[,\s]+", raw)) if c]


def _stated(fx: Facts, text: str) -> Optional[Tuple[str, List[str]]]:
    """(where, capabilities) of the first capability list that names driver capabilities without compute/all."""
    found: List[Tuple[str, List[str]]] = []
    env = fx.env("NVIDIA_DRIVER_CAPABILITIES")
    if env is not None:
        found.append(("environment: NVIDIA_DRIVER_CAPABILITIES", _caps(env)))
    for m in _ENV_RX.finditer(text):
        found.append((m.group(0).strip(), _caps(m.group("v"))))
    for m in _COMPOSE_RX.finditer(text):
        found.append((m.group(0).strip(), _caps(m.group("v") or m.group("i") or "")))
    for m in _COMPOSE_LIST.finditer(text):
        items = re.findall(r"-\s*[\"']?(\w+)", m.group("v"))
        found.append((" ".join(m.group(0).split())[:120], [i.lower() for i in items]))
    for where, caps in found:
        named = [c for c in caps if c in _CAPS]
        if named and not {"compute", "all"} & set(named) and set(named) - {"gpu"}:
            return where, named
    return None


#: nvidia-smi's banner "CUDA Version: N/A", or the reporter saying so: nvidia-smi ran but could not load libcuda.
_CUDA_NA = re.compile(
    r"CUDA Version:?\s*N/?A\b|\bcuda version (?:was|is|shows?|showed|says|said|reads?|displays?)\s+(?:as\s+)?[`'\"]?n/?a\b",
    re.I,
)
#: The reporter saying nvidia-smi works in the container (it needs only the utility capability).
_SMI_WORKS = re.compile(
    r"nvidia-smi[^.\n]{0,60}?\b(?:works?|working|worked|runs? fine|ran fine|(?:seems to )?shows? everything fine|displays)\b"
    r"|\b(?:able to|can|could|managed to)\s+(?:open|run|use|get)\s+nvidia-smi",
    re.I,
)
#: A docker run that asks for the GPUs through the runtime's environment (nvidia-docker 2's --runtime=nvidia, or
#: NVIDIA_VISIBLE_DEVICES) rather than --gpus: the toolkit then mounts the capabilities NVIDIA_DRIVER_CAPABILITIES
#: names, and with it unset only "utility" (nvidia-container-runtime's README: "empty or unset: use default driver
#: capability: utility"); NVIDIA's CUDA images set it, other images often do not.
_ENV_PATH_RUN = re.compile(r"--runtime[= ]\s*nvidia\b|NVIDIA_VISIBLE_DEVICES\s*=", re.I)


def _inferred(fx: Facts, text: str) -> Optional[Tuple[str, str]]:
    """(what shows it, the line) when no capability list is stated but the container's state says compute is missing:
    in a container, CUDA finds no driver while nvidia-smi works and either shows "CUDA Version: N/A" or the container
    was started through the runtime's environment without NVIDIA_DRIVER_CAPABILITIES."""
    if not fx.str("system.container") or not _NO_LIBCUDA.search(text):
        return None
    na = _CUDA_NA.search(text)
    if na:
        return "nvidia-smi in the container shows no CUDA version", na.group(0)
    run = str((fx.dict("pasted.container") or {}).get("text") or "")
    if (
        _SMI_WORKS.search(text)
        and _ENV_PATH_RUN.search(run)
        and not re.search(r"--gpus\b|NVIDIA_DRIVER_CAPABILITIES", run + "\n" + text, re.I)
    ):
        return "started through the NVIDIA runtime without NVIDIA_DRIVER_CAPABILITIES (default: utility)", run.strip("` ")
    return None


@check(CONTAINER_GPU_CAPABILITIES_LACK_COMPUTE)
def container_gpu_capabilities_lack_compute(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    got = _stated(fx, text)
    if not got:
        yield from _likely(fx, text)
        return
    where, caps = got
    symptom = _NO_LIBCUDA.search(text)
    evidence: Dict[str, Any] = {"capabilities": f"{where} (no compute)"}
    if symptom:
        evidence["error text"] = symptom.group(0)
    cmds = (
        "docker inspect CONTAINER | grep -i -A3 -E 'Capabilities|NVIDIA_DRIVER_CAPABILITIES'  # what the container was given",
        "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ...  # or =all",
        "# Compose: deploy.resources.reservations.devices: - driver: nvidia, capabilities: [gpu]  (or [gpu, compute, utility])",
        "docker compose up -d --force-recreate  # the capabilities apply when the container is created",
    )
    yield CONTAINER_GPU_CAPABILITIES_LACK_COMPUTE.finding(
        title=f"The container's GPU capabilities are {', '.join(caps)} without compute: libcuda.so.1 is not mounted, "
        "so CUDA cannot start (nvidia-smi still works)",
        evidence=evidence,
        fix=Fix(cmds, "The NVIDIA Container Toolkit mounts libcuda only for the compute capability."),
        severity=None if symptom else "warning",
    )


def _likely(fx: Facts, text: str) -> Iterator[Finding]:
    got = _inferred(fx, text)
    if not got:
        return
    symptom = _NO_LIBCUDA.search(text)
    yield CONTAINER_GPU_CAPABILITIES_LACK_COMPUTE.finding(
        title="Likely: the container has the GPU without the compute capability (nvidia-smi works, CUDA finds no "
        "driver): libcuda.so.1 is not mounted",
        evidence={got[0]: got[1], "error text": symptom.group(0) if symptom else None},
        fix=Fix(
            (
                "ldconfig -p | grep libcuda  # in the container: nothing listed confirms it",
                "docker inspect CONTAINER | grep -i -A3 -E 'Capabilities|NVIDIA_DRIVER_CAPABILITIES'  # what it was given",
                "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ...  # or =all; or an nvidia/cuda base image, which sets it",
            ),
            "The NVIDIA Container Toolkit mounts libcuda only for the compute capability; nvidia-smi needs only utility.",
        ),
        severity="warning",
    )


def register():
    return [container_gpu_capabilities_lack_compute]
