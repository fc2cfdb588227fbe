"""Where a pasted report ran: a container (Docker, Compose, Kubernetes, Podman, Singularity/Apptainer,
enroot/pyxis), and whether the way it was started asked for GPUs.

A paste seldom says "I am in a container" as a field; it shows the command (`docker run ... image`),
a compose file, a pod spec, an `srun --container-image` line, or says "in the docker container". Each
runtime asks for GPUs in its own words, all from the runtimes' documentation:

- Docker / Podman: ``--gpus``, ``--runtime=nvidia`` (nvidia-docker 2), ``nvidia-docker run`` (1.x),
  ``--device nvidia.com/gpu=...`` (CDI), ``-e NVIDIA_VISIBLE_DEVICES=...``
  (https://docs.docker.com/engine/containers/resource_constraints/#gpu,
  https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html);
- Compose: ``deploy.resources.reservations.devices`` with ``driver: nvidia`` / ``capabilities: [gpu]``,
  or ``runtime: nvidia`` (https://docs.docker.com/compose/how-tos/gpu-support/);
- Kubernetes: a ``nvidia.com/gpu`` resource limit (https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/);
- Singularity / Apptainer: ``--nv`` (https://apptainer.org/docs/user/main/gpu.html);
- enroot / pyxis: the NVIDIA hook runs only with ``NVIDIA_VISIBLE_DEVICES`` set
  (https://github.com/NVIDIA/enroot/blob/master/doc/usage.md).

:func:`read` returns what the lines show, or None; :func:`fill` puts it into the facts
(``system.container`` and ``pasted.container``). Pure functions of the text: no I/O, no guessing
beyond what a line says (a docker run line without a GPU flag is "no GPUs asked for"; a compose or
Kubernetes mention without its file is "unknown").
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

MAX_LINE = 2000

_RUN = re.compile(r"(?<![\w-])(?P<tool>nvidia-docker|docker|podman)(?:\s+container)?\s+(?:run|create)\b(?P<args>.*)", re.I)
_RUN_GPU = re.compile(
    r"--gpus\b|--runtime[= ]\s*nvidia\b|--device[= ]\s*nvidia\.com/gpu|(?:-e|--env)[= ]\s*NVIDIA_VISIBLE_DEVICES=(?!void|none)",
    re.I,
)
#: Device nodes passed by hand: the GPUs' /dev files, but not the driver's libraries (only the NVIDIA runtime mounts
#: those: https://github.com/NVIDIA/nvidia-docker/issues/24), so CUDA still finds no libcuda.so.1.
_RUN_DEVICES = re.compile(r"--device[= ]\s*/dev/nvidia", re.I)
_COMPOSE = re.compile(r"(?<![\w-])docker[- ]compose\b|\bcompose\.ya?ml\b|(?<![\w-])compose services?\b", re.I)
_COMPOSE_GPU = re.compile(
    r"^\s*(?:runtime:\s*nvidia\b|-?\s*driver:\s*[\"']?nvidia\b|capabilities:\s*\[[^\]]*\bgpu\b|-?\s*NVIDIA_VISIBLE_DEVICES\s*[=:]\s*[\"']?all)",
    re.I,
)
_KUBE = re.compile(r"(?<![\w-])(?:kubectl|kubernetes|k8s|helm\s+install)\b|^\s*kind:\s*(?:Pod|Deployment|Job)\s*$", re.I)
_KUBE_GPU = re.compile(r"nvidia\.com/gpu\s*:", re.I)
_SINGULARITY = re.compile(r"(?<![\w-])(?P<tool>singularity|apptainer)\s+(?:exec|run|shell|instance\s+start)\b(?P<args>.*)", re.I)
_ENROOT = re.compile(r"(?<![\w-])enroot\s+(?:start|create|import)\b|--container-image[= ]", re.I)
_NVD_SET = re.compile(r"NVIDIA_VISIBLE_DEVICES\s*[=:]\s*[\"']?(?!void|none)\w", re.I)
#: "in a docker container", "inside docker", "the docker image", "Dockerfile", "[Bug] CUDA docker error".
#: A sentence's full stop after the word ("... in my Dockerfile.") still counts; "docker.io", "docker.sock" do not.
_DOCKER_WORD = re.compile(r"(?<![\w./-])docker(?:file)?(?![\w/-])(?!\.\w)", re.I)
#: Docker named as absent ("Docker detected (0 means not installed): 0", "docker: command not found", "docker is not
#: installed", "without docker"): the word then says the report is NOT from a container.
_DOCKER_ABSENT = re.compile(
    r"(?<![\w-])docker\b[^\n]{0,40}?(?:not\s+installed\b[^\n]{0,5}:\s*0\b|:\s*command\s+not\s+found|\bis\s+not\s+installed)"
    r"|\b(?:without|no)\s+docker\b(?![\s-]*(?:compose|container|image|run)\b)",
    re.I,
)
#: A CUDA image named by its tag ("nvidia/cuda:8.0-devel-ubuntu16.04", "pytorch:1.13.1-py3.8.16-cuda11.7.1-devel-ubuntu20.04",
#: "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"): the report is from inside such a container. checks/_containers.py
#: reads error text with the same pattern. https://hub.docker.com/r/nvidia/cuda/tags, https://hub.docker.com/r/pytorch/pytorch/tags
IMAGE_TAG = r"(?<![\w.'\"])(?:[\w.-]+/)?(?:cuda:\d+\.\d+[\w.-]*|[\w.-]+:[\w.-]*cuda[\w.-]*-(?:devel|runtime|base)(?:-[a-z]+\d+(?:\.\d+)?)?)\b"
_IMAGE_TAG = re.compile(IMAGE_TAG)


@functools.lru_cache(maxsize=1)
def markers() -> Tuple[Tuple[str, "re.Pattern[str]"], ...]:
    """(kind, pattern) of every marker of a container in kb/containers.json (with its sources), in its order."""
    from cudadoctor import kb  # the kb's one reader of its tables

    doc: Dict[str, Any] = kb._load("containers")
    return tuple((m["kind"], re.compile(m["regex"], 0 if m.get("case") else re.IGNORECASE)) for m in doc["markers"])


def kind_in(text: str) -> Optional[str]:
    """The container a text shows (kb/containers.json's markers: the first runtime named, else "container" for
    "inside the container"), or None. Docker named as absent ("Docker detected (0 means not installed): 0") is no marker."""
    generic = None
    text = _DOCKER_ABSENT.sub(" ", text)
    for kind, rx in markers():
        if rx.search(text):
            if kind != "container":
                return kind
            generic = kind
    return generic


def read(lines: Iterable[str]) -> Optional[Dict[str, Any]]:
    """The container the pasted lines show, or None: ``{kind, line, text, gpus_requested}``.

    ``gpus_requested``: True when a line asks the runtime for GPUs, False when a `docker run` /
    `singularity exec` line is shown without any GPU option (``devices_only``: it passes /dev/nvidia* by
    hand, which brings no driver libraries), None when the text does not show it."""
    best: Optional[Dict[str, Any]] = None
    rank = 0
    asked = False
    devices_only = False
    shown_without: List[int] = []

    def see(kind: str, n: int, text: str, strength: int) -> None:
        nonlocal best, rank
        if strength > rank:
            best, rank = {"kind": kind, "line": n, "text": text.strip()[:200]}, strength

    for n, line in _logical(lines):
        low = line.lower()
        if "docker" in low or "podman" in low:
            m = _RUN.search(line)
            if m:
                tool = m.group("tool").lower()
                see("podman" if tool == "podman" else "docker", n, line, 5)
                if tool == "nvidia-docker" or _RUN_GPU.search(m.group("args")):
                    asked = True
                else:
                    shown_without.append(n)
                    devices_only = devices_only or bool(_RUN_DEVICES.search(m.group("args")))
            elif _COMPOSE.search(line):
                see("docker", n, line, 4)
            elif _DOCKER_WORD.search(line) and not _DOCKER_ABSENT.search(line):
                see("docker", n, line, 1)
        elif "compose" in low and _COMPOSE.search(line):
            see("docker", n, line, 4)
        elif "cuda" in low and _IMAGE_TAG.search(line):
            see("docker", n, line, 1)
        if ("singularity" in low or "apptainer" in low) and _SINGULARITY.search(line):
            m = _SINGULARITY.search(line)
            see("singularity", n, line, 5)
            if m and re.search(r"(?<![\w-])--nv\b", m.group("args")):
                asked = True
            else:
                shown_without.append(n)
        if ("enroot" in low or "--container-image" in low) and _ENROOT.search(line):
            see("enroot", n, line, 4)
        if _KUBE.search(line):
            see("kubernetes", n, line, 3)
        if rank < 1:
            marked = kind_in(line[:MAX_LINE])  # "using a singularity container", a Docker hostname, "inside the pod"
            if marked:
                see(marked, n, line, 1)
        if _COMPOSE_GPU.search(line) or _KUBE_GPU.search(line) or ("nvidia_visible_devices" in low and _NVD_SET.search(line)):
            asked = True
    if best is None:
        return None
    best["gpus_requested"] = True if asked else (False if shown_without else None)
    if devices_only and not asked:
        best["devices_only"] = True
    return best


def _logical(lines: Iterable[str]) -> List[Tuple[int, str]]:
    """(first line number, line) with shell continuations joined: a `docker run ... \\` command goes on
    over the next lines (a trailing " ^" in cmd.exe, a trailing space and backtick in PowerShell)."""
    out: List[Tuple[int, str]] = []
    pending: Optional[Tuple[int, str]] = None
    for n, raw in enumerate(lines, 1):
        line = raw[:MAX_LINE].rstrip()
        if pending is not None:
            n, line = pending[0], pending[1] + " " + line.strip()
            pending = None
        if line.endswith(("\\", " ^", " `")) and len(line) < 8 * MAX_LINE:  # not a Markdown `code` span's end
            pending = (n, line[:-1])
            continue
        out.append((n, line))
    if pending is not None:
        out.append(pending)
    return out


def fill(facts: Dict[str, Any], got: Optional[Dict[str, Any]]) -> bool:
    """Record ``got`` (from :func:`read`) in ``facts``: ``pasted.container`` always, ``system.container``
    unless a structured part already set it. Returns whether anything was recorded."""
    if not got:
        return False
    facts.setdefault("pasted", {})["container"] = dict(got)
    system = facts.setdefault("system", {})
    if not system.get("container"):
        system["container"] = got["kind"]
    return True
