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
    r"(?:load|find|open)[^\n]{0,20}libcuda|Found no NVIDIA driver|no CUDA-capable device|is_available\(\)\W+False",
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


@check(CONTAINER_GPU_CAPABILITIES_LACK_COMPUTE)
def container_gpu_capabilities_lack_compute(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    got = _stated(fx, text)
    if not got:
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


def register():
    return [container_gpu_capabilities_lack_compute]
