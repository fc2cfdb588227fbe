"""A container image built for another CPU architecture than the host's (session 25, from blind batch b239 and the
threads of the class: NVIDIA/nvidia-docker#1116 and #1519, snowzach/doods#64, xorbitsai/inference#4256,
linghu8812/tensorrt_inference#144, t0mer/deepstack-trainer#3):

- container-image-wrong-cpu-arch: Docker's "The requested image's platform (linux/amd64) does not match the detected host
  platform (linux/arm64/v8)", then "exec format error" or an NVIDIA hook failing: an x86-64 image on an ARM host (Jetson,
  GH200/GB200, DGX Spark) or the reverse. NVIDIA's runtime cannot fix the CPU architecture; the image must be one built
  for the host (a multi-arch tag, an L4T/arm64 image, or a local build).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, search

CONTAINER_IMAGE_WRONG_CPU_ARCH = Code(
    code="container-image-wrong-cpu-arch",
    title="The container image is built for another CPU architecture than this host (amd64 on ARM, or the reverse)",
    area="system",
    severity="error",
    explanation={
        "what": "Starting a GPU container prints \"The requested image's platform (linux/amd64) does not match the detected "
        'host platform (linux/arm64/v8)" and fails with "exec format error" (or an NVIDIA hook error).',
        "why": "Images hold binaries for one CPU architecture; an x86-64 image cannot run on an ARM host (Jetson, "
        "Grace-based GH200/GB200, DGX Spark) and the GPU runtime cannot change that.",
        "confirm": "`uname -m` on the host; `docker image inspect <image> --format '{{.Architecture}}'`.",
        "fix": "Use an image built for the host: a multi-arch tag with an arm64 variant (`--platform linux/arm64`), "
        "NVIDIA's L4T/Jetson images on Jetson, or build the image on (or for) the host.",
    },
    links=(
        "https://github.com/NVIDIA/nvidia-docker/issues/1116",
        "https://github.com/NVIDIA/nvidia-docker/issues/1519",
        "https://docs.docker.com/build/building/multi-platform/",
    ),
)

_PLATFORMS = re.compile(r"image's platform \(([\w/]+)\) does not match the detected host platform \(([\w/]+)\)", re.I)
#: "exec format error" where the text shows an ARM host (the program's binary is for x86-64).
_EXEC_FORMAT = r"(?i)\bexec(?: user process caused)?:?[^\n]{0,80}?\bexec format error\b"
_ARM_HOST = r"(?i)\b(?:aarch64|arm64|jetson|tegra|GH200|GB200|GB10|DGX Spark|Grace)\b"


@check(CONTAINER_IMAGE_WRONG_CPU_ARCH)
def container_image_wrong_cpu_arch(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CONTAINER_IMAGE_WRONG_CPU_ARCH)
    likely = None
    if not said:
        fmt = search(fx, _EXEC_FORMAT)
        if not (fmt and search(fx, _ARM_HOST)):
            return
        said, likely = fmt, True
    m = _PLATFORMS.search(said[1])
    image, host = (m.group(1), m.group(2)) if m else ("linux/amd64", "linux/arm64")
    yield CONTAINER_IMAGE_WRONG_CPU_ARCH.finding(
        title=("Likely: the" if likely else "The")
        + f" image is built for {image}, this host is {host}: its binaries cannot run here (exec format error)",
        evidence={said[0]: said[1], "image_platform": image if m else None, "host_platform": host if m else None},
        fix=Fix(
            (
                "uname -m  # the host's CPU architecture",
                "docker image inspect <image> --format '{{.Os}}/{{.Architecture}}'",
                f"docker run --platform {host} ...  # a tag that has a {host} variant; else an image built for this host "
                "(NVIDIA's L4T images on Jetson) or a local build",
            ),
            "An image's binaries are for one CPU architecture; the NVIDIA runtime adds the GPU, not another CPU.",
        ),
        severity="warning" if likely else None,
    )


def register():
    return [container_image_wrong_cpu_arch]
