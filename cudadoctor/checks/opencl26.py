"""NVIDIA's OpenCL driver not registered where an OpenCL program runs (session 26, from blind batch b278 and the same
class in b182: KataGo's and Leela Zero's OpenCL backends, LightGBM's GPU (OpenCL) learner in Docker and after a Windows
update):

- nvidia-opencl-icd-missing: the OpenCL ICD loader finds no platform (CL_PLATFORM_NOT_FOUND_KHR, clinfo's "Number of
  platforms 0", "No OpenCL device found", OpenCL.dll missing on Windows). NVIDIA's OpenCL is the driver's
  libnvidia-opencl.so.1, registered for the loader by /etc/OpenCL/vendors/nvidia.icd; a container image without that
  file, a driver installed without its OpenCL part or replaced by a toolkit's packages has none. CUDA can still work.
  Where only another vendor's GPU is named, that is non-nvidia-gpu's.

The wordings are signatures (kb/errors/b26.json). Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator, List

from cudadoctor.facts import Facts
from cudadoctor.interpret.environment import os_family
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of
from ._containers import container_named
from .codes5 import only_other_gpus

NVIDIA_OPENCL_ICD_MISSING = Code(
    code="nvidia-opencl-icd-missing",
    title="No OpenCL platform: NVIDIA's OpenCL driver is not installed or not registered where the program runs",
    area="driver",
    severity="error",
    explanation={
        "what": "An OpenCL program (KataGo's or Leela Zero's OpenCL backend, LightGBM's GPU learner, a miner) finds no "
        "platform or device: CL_PLATFORM_NOT_FOUND_KHR (-1001), clinfo's 'Number of platforms 0', 'No OpenCL device "
        "found', or on Windows OpenCL.dll missing - on a machine with an NVIDIA GPU, where CUDA may work.",
        "why": "OpenCL programs load the ICD loader (libOpenCL.so.1 / OpenCL.dll), which loads each vendor's driver listed "
        "in /etc/OpenCL/vendors/*.icd. NVIDIA's is libnvidia-opencl.so.1 (nvidia.icd), part of the driver's compute "
        "libraries. A container image without nvidia.icd, a driver installed without its OpenCL part, distribution "
        "packages of a CUDA toolkit that replaced the driver's, or a Windows update that removed OpenCL.dll leave the "
        "loader with no platform.",
        "confirm": "clinfo  # 'Number of platforms 0'; ls /etc/OpenCL/vendors/  # no nvidia.icd; ldconfig -p | grep "
        "libnvidia-opencl",
        "fix": "Linux: install the driver's OpenCL/compute package of the same branch (Ubuntu: libnvidia-compute-<branch> "
        "and ocl-icd-libopencl1) so that /etc/OpenCL/vendors/nvidia.icd names libnvidia-opencl.so.1. Docker: add that "
        "file to the image (echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd) and start it with the compute "
        "capability. Windows: reinstall the NVIDIA driver (it installs OpenCL.dll and its ICD).",
    },
    links=(
        "https://github.com/lightgbm-org/LightGBM/issues/1998",
        "https://github.com/leela-zero/leela-zero/issues/1590",
        "https://github.com/lightvector/KataGo/issues/517",
    ),
)


@check(NVIDIA_OPENCL_ICD_MISSING)
def nvidia_opencl_icd_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, NVIDIA_OPENCL_ICD_MISSING)
    if not said or only_other_gpus(fx):
        return
    text = text_of(fx)
    where = container_named(fx, text)
    windows = os_family(fx) == "windows" or "OpenCL.dll" in said[1]
    cmds: List[str]
    if windows:
        cmds = [
            "# a clean reinstall of the NVIDIA driver (Custom > Perform a clean installation) restores OpenCL.dll and its ICD",
            "clinfo  # (or GPU Caps Viewer) lists the NVIDIA platform",
        ]
    else:
        cmds = [
            "clinfo | head -5; ls /etc/OpenCL/vendors/  # 'Number of platforms 0', no nvidia.icd",
            "sudo apt-get install libnvidia-compute-<branch> ocl-icd-libopencl1  # the driver's OpenCL part, same branch "
            "as nvidia-smi's driver (Ubuntu/Debian)",
            "echo libnvidia-opencl.so.1 | sudo tee /etc/OpenCL/vendors/nvidia.icd  # where the library is there but not registered",
        ]
        if where:
            cmds.insert(
                0,
                "# in the image: RUN mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > "
                "/etc/OpenCL/vendors/nvidia.icd; start it with --gpus all (the compute capability mounts the library)",
            )
    evidence = {said[0]: said[1]}
    if where:
        evidence["container"] = where
    yield NVIDIA_OPENCL_ICD_MISSING.finding(
        title="OpenCL finds no platform: NVIDIA's OpenCL driver is not installed or registered here"
        + (" (the container image has no nvidia.icd)" if where and not windows else "")
        + (" (OpenCL.dll: reinstall the NVIDIA driver)" if windows else ""),
        evidence=evidence,
        fix=Fix(tuple(cmds), "OpenCL programs reach the GPU only through a registered vendor ICD; CUDA does not need one."),
    )


def register():
    return [nvidia_opencl_icd_missing]
