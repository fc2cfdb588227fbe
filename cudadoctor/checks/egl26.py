"""Headless OpenGL (EGL) that cannot start where a CUDA program renders (session 26, from blind batch b264 and the same
class in b145: nvdiffrast's OpenGL rasterizer in DreamCraft3D, Deep3DFaceRecon and stable-dreamfusion; MuJoCo's EGL
backend under Gymnasium and robosuite):

- nvidia-egl-unavailable: "eglInitialize() failed" (nvdiffrast's glutil.cpp) or "Cannot initialize a EGL device
  display" (MuJoCo). EGL is OpenGL without a display; NVIDIA's implementation is the driver's libEGL_nvidia, registered
  for glvnd by /usr/share/glvnd/egl_vendor.d/10_nvidia.json. CUDA needs neither, so CUDA can work where EGL does not: a
  container given only the compute/utility capabilities (the NVIDIA Container Toolkit mounts the GL libraries for the
  "graphics" capability), a server or image with the driver's compute part only, a node without a GPU. nvdiffrast can
  rasterize with CUDA instead (RasterizeCudaContext); MuJoCo can render on the CPU (MUJOCO_GL=osmesa).

The wordings are signatures (kb/errors/b26.json). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, List

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of
from ._containers import container_named

NVIDIA_EGL_UNAVAILABLE = Code(
    code="nvidia-egl-unavailable",
    title="Headless OpenGL (EGL) cannot start: NVIDIA's EGL driver is missing where the program runs",
    area="driver",
    severity="error",
    explanation={
        "what": "A program that renders without a display fails to start EGL: nvdiffrast's OpenGL rasterizer "
        "('[F glutil.cpp:338] eglInitialize() failed', then an abort), MuJoCo / dm_control with MUJOCO_GL=egl ('Cannot "
        "initialize a EGL device display. This likely means that your EGL driver does not support the PLATFORM_DEVICE "
        "extension'), while CUDA itself works.",
        "why": "EGL is OpenGL without a display. NVIDIA's EGL is the driver's libEGL_nvidia plus the glvnd vendor file "
        "/usr/share/glvnd/egl_vendor.d/10_nvidia.json; CUDA needs neither. A container started with only the "
        "compute/utility capabilities gets no GL libraries (the NVIDIA Container Toolkit mounts them for the 'graphics' "
        "capability), a server or image may carry only the driver's compute part, and a node without a GPU has no "
        "device EGL can use (Mesa's EGL then answers without PLATFORM_DEVICE).",
        "confirm": "ls /usr/share/glvnd/egl_vendor.d/  # 10_nvidia.json present?; ldconfig -p | grep libEGL_nvidia; "
        "in a container: echo $NVIDIA_DRIVER_CAPABILITIES  # needs graphics (or all)",
        "fix": "nvdiffrast: use its CUDA rasterizer (dr.RasterizeCudaContext() instead of RasterizeGLContext, or the "
        "program's option for it). MuJoCo: MUJOCO_GL=osmesa renders on the CPU. To make EGL work: in a container, "
        "NVIDIA_DRIVER_CAPABILITIES=all (or graphics,compute,utility) and libegl1 in the image; on a host or image with "
        "the compute part only, the driver's GL package of the same version (Ubuntu: libnvidia-gl-<branch>).",
    },
    links=(
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
        "https://github.com/deepseek-ai/DreamCraft3D/issues/28",
        "https://github.com/ashawkey/stable-dreamfusion/issues/131",
        "https://github.com/Farama-Foundation/Gymnasium/issues/726",
    ),
)

_NVDIFFRAST = re.compile(r"nvdiffrast|glutil\.cpp|RasterizeGLContext", re.I)
_MUJOCO = re.compile(r"mujoco|dm_control|robosuite|PLATFORM_DEVICE", re.I)


@check(NVIDIA_EGL_UNAVAILABLE)
def nvidia_egl_unavailable(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, NVIDIA_EGL_UNAVAILABLE)
    if not said:
        return
    text = text_of(fx)
    where = container_named(fx, text)
    cmds: List[str] = []
    if _NVDIFFRAST.search(text) or "eglInitialize" in said[1]:
        cmds.append(
            "# nvdiffrast: rasterize with CUDA instead of OpenGL - dr.RasterizeCudaContext() in place of "
            "dr.RasterizeGLContext() (or the program's option for it, e.g. context_type=cuda)"
        )
    if _MUJOCO.search(text):
        cmds.append("export MUJOCO_GL=osmesa PYOPENGL_PLATFORM=osmesa  # MuJoCo renders on the CPU, no EGL needed")
    if where:
        cmds.append(
            "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=all ...  # or graphics,compute,utility: the toolkit then "
            "mounts libEGL_nvidia and 10_nvidia.json"
        )
    cmds += [
        "ls /usr/share/glvnd/egl_vendor.d/  # 10_nvidia.json registers NVIDIA's EGL; ldconfig -p | grep libEGL_nvidia",
        "sudo apt install libnvidia-gl-<branch> libegl1  # the GL part of the same driver branch (Ubuntu), where only "
        "the compute part is installed",
    ]
    evidence = {said[0]: said[1]}
    if where:
        evidence["container"] = where
    yield NVIDIA_EGL_UNAVAILABLE.finding(
        title="Headless OpenGL (EGL) cannot start here"
        + (" (in a container: give it the graphics capability)" if where else "")
        + (": nvdiffrast can rasterize with CUDA instead" if _NVDIFFRAST.search(text) else "")
        + (": MuJoCo can render with MUJOCO_GL=osmesa" if _MUJOCO.search(text) and not _NVDIFFRAST.search(text) else ""),
        evidence=evidence,
        fix=Fix(tuple(cmds), "EGL needs NVIDIA's GL libraries and vendor file, which CUDA does not."),
    )


def register():
    return [nvidia_egl_unavailable]
