"""NVIDIA's Vulkan driver absent where a Vulkan program runs (session 24, from blind batches b193 and b177 and the
threads of the class: nihui/realsr-ncnn-vulkan#48, NVIDIA/libnvidia-container#55, ollama/ollama#17549,
selkies-project/docker-selkies-glx-desktop#27):

- nvidia-vulkan-driver-missing: the Vulkan loader finds no driver for the NVIDIA GPU: VK_ERROR_INCOMPATIBLE_DRIVER
  ("vkCreateInstance failed -9", vulkaninfo's "Cannot create Vulkan instance", the loader's "Found no drivers").
  NVIDIA's Vulkan driver is its ICD manifest (nvidia_icd.json) and the driver's GL/Vulkan user-space libraries
  (libGLX_nvidia, libnvidia-gl*, libnvidia-glvkspirv). CUDA needs neither, so CUDA can work where Vulkan does not: in a
  container given only the compute/utility capabilities (the NVIDIA Container Toolkit mounts the graphics pieces only
  for the "graphics" capability), in an image or VM that installed only the compute part of the driver (Colab's image
  after an update, a RunPod container).

The wordings are signatures (kb/errors/b24.json). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Tuple

from cudadoctor.errortext import gpu_vendors
from cudadoctor.facts import Facts
from cudadoctor.interpret.environment import os_family
from cudadoctor.interpret.gpus import driver_version, gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of
from ._containers import container_named

NVIDIA_VULKAN_DRIVER_MISSING = Code(
    code="nvidia-vulkan-driver-missing",
    title="No NVIDIA Vulkan driver where the program runs (its ICD and GL/Vulkan libraries are missing)",
    area="driver",
    severity="error",
    explanation={
        "what": "A Vulkan program (ncnn-vulkan upscalers, llama.cpp/Ollama's Vulkan backend, vulkaninfo, a simulator) "
        "fails with VK_ERROR_INCOMPATIBLE_DRIVER ('vkCreateInstance failed -9', 'Cannot create Vulkan instance', "
        "'Found no drivers') on a machine whose NVIDIA GPU works with CUDA.",
        "why": "NVIDIA's Vulkan driver is an ICD manifest (nvidia_icd.json) plus the driver's GL/Vulkan user-space "
        "libraries (libGLX_nvidia, libnvidia-gl*, libnvidia-glvkspirv). CUDA needs neither: a container started with only "
        "the compute/utility capabilities gets none of them (the NVIDIA Container Toolkit mounts them for the 'graphics' "
        "capability), and an image that installed only the driver's compute part has none.",
        "confirm": "vulkaninfo --summary  # no NVIDIA device; ls /usr/share/vulkan/icd.d/ /etc/vulkan/icd.d/  # no "
        "nvidia_icd.json",
        "fix": "In a container: start it with NVIDIA_DRIVER_CAPABILITIES including graphics (or all) and have the "
        "Vulkan loader (libvulkan1) in the image. On a Linux host or VM image: install the driver's GL/Vulkan package for "
        "the same driver version (Ubuntu: libnvidia-gl-<branch>) and libvulkan1. On Windows, where the driver always "
        "ships its Vulkan ICD, a broken install: a clean reinstall of the NVIDIA driver.",
    },
    links=(
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
        "https://github.com/nihui/realsr-ncnn-vulkan/issues/48",
        "https://github.com/NVIDIA/libnvidia-container/issues/55",
        "https://github.com/ollama/ollama/issues/17549",
    ),
)

#: A container named in the text (LXC, Docker, Kubernetes) when the facts do not say.
_CONTAINER_WORDS = re.compile(r"\b(?:docker|container|lxc|podman|kubernetes|k8s|runpod)\b", re.I)


@check(NVIDIA_VULKAN_DRIVER_MISSING)
def nvidia_vulkan_driver_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, NVIDIA_VULKAN_DRIVER_MISSING)
    if not said:
        return
    text = text_of(fx)
    names = [str(g.get("name") or "") for g in gpus(fx) if g.get("name")]
    other = [n for n in names if gpu_vendors.vendor_of(n)]
    if other and len(other) == len(names) and not driver_version(fx):
        return  # only an Intel/AMD GPU named: not NVIDIA's driver (non-nvidia-gpu says what it is)
    nvidia = bool(
        (names and len(other) < len(names))
        or driver_version(fx)
        or fx.get("pasted.nvidia_named")
        or gpu_vendors.nvidia_named(text.splitlines())
    )
    where = container_named(fx, text, _CONTAINER_WORDS)
    evidence = {said[0]: said[1]}
    cmds: Tuple[str, ...]
    if where:
        evidence["container"] = where
        cmds = (
            "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all ...  # or graphics,compute,utility: the toolkit then "
            "mounts nvidia_icd.json and the GL/Vulkan libraries",
            "apt-get install -y libvulkan1  # the Vulkan loader, in the image",
            "vulkaninfo --summary  # lists the NVIDIA GPU",
        )
        title = "The container has no NVIDIA Vulkan driver: give it the graphics capability (NVIDIA_DRIVER_CAPABILITIES)"
    elif os_family(fx) == "windows" or re.search(r"[A-Za-z]:\\|\.exe\b", text):
        cmds = (
            "# a clean reinstall of the NVIDIA driver (NVIDIA's installer: Custom > Perform a clean installation) restores its Vulkan ICD",
            "vulkaninfo --summary  # lists the NVIDIA GPU (from the Vulkan SDK or runtime)",
        )
        title = "NVIDIA's Vulkan driver is missing or broken: reinstall the NVIDIA driver (clean install)"
    else:
        cmds = (
            "nvidia-smi  # the driver's version, e.g. 580.95.05",
            "sudo apt install libnvidia-gl-<branch> libvulkan1  # the GL/Vulkan part of the same driver branch (Ubuntu)",
            "vulkaninfo --summary  # lists the NVIDIA GPU",
        )
        title = "NVIDIA's Vulkan driver is not installed: install the driver's GL/Vulkan package and the Vulkan loader"
    yield NVIDIA_VULKAN_DRIVER_MISSING.finding(
        title=title if nvidia else "Likely (if the GPU is NVIDIA's): " + title[0].lower() + title[1:],
        severity=None if nvidia else "warning",
        evidence=evidence,
        fix=Fix(cmds, "Vulkan needs the driver's ICD and GL/Vulkan libraries, which CUDA does not."),
    )


def register():
    return [nvidia_vulkan_driver_missing]
