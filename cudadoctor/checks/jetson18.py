"""Jetson failures that are not torch's build (session 18, from blind batch b62):

- jetpack-container-mismatch: in a container on a Jetson, torch (or another program) cannot load the CUDA libraries
  (libcurand.so.10, libcublas.so.10, libcudart.so.10.2 ...) or CUDA fails to initialise. On JetPack 4 (L4T r32) the
  l4t containers carry no CUDA: the NVIDIA runtime (--runtime nvidia) mounts the host's JetPack libraries into them
  (dusty-nv/jetson-containers#222: "on JetPack 4, the CUDA/cuDNN/TensorRT libraries get mounted into container by
  --runtime nvidia from the host device"), so the container's L4T tag must match the host's release
  (/etc/nv_tegra_release), and the container must run with the NVIDIA runtime.
- numpy-openblas-illegal-instruction-on-jetson: "Illegal instruction (core dumped)" on a Jetson (Nano, TX2, Xavier)
  when numpy (or torch, which imports it) loads: pip's numpy 1.19.5 OpenBLAS misdetects the Jetson's CPU
  (numpy/numpy#18131); OPENBLAS_CORETYPE=ARMV8 or numpy 1.19.4 avoids it. A warning: other packages built for a newer
  ARM CPU also crash so.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search, text_of

JETPACK_CONTAINER_MISMATCH = Code(
    code="jetpack-container-mismatch",
    title="A Jetson container cannot load CUDA: its L4T release does not match the host's, or it lacks the NVIDIA runtime",
    area="system",
    severity="error",
    explanation={
        "what": "In an l4t-base / l4t-pytorch / jetson-containers image on a Jetson, import torch fails with "
        "'libcurand.so.10: cannot open shared object file' (or libcublas, libcudart), or deviceQuery fails with "
        "'cudaGetDeviceCount returned 3 -> initialization error', while CUDA works on the host.",
        "why": "On JetPack 4 (L4T r32) the containers carry no CUDA: the NVIDIA runtime mounts the host's JetPack CUDA, "
        "cuDNN and TensorRT into them. A container for another L4T release expects other library versions (JetPack "
        "5 hosts have CUDA 11.4, not 10.2), and a container started without --runtime nvidia gets none.",
        "confirm": "cat /etc/nv_tegra_release on the host (R32 REVISION 6.1 = L4T r32.6.1) against the image tag "
        "(l4t-pytorch:r32.6.1-...); ls /usr/local/cuda/lib64 in the container shows only stubs when nothing was mounted.",
        "fix": "Run the image whose L4T tag matches the host's release (e.g. l4t-pytorch:r32.7.1-* on L4T R32.7.1; "
        "r35.x images on JetPack 5), with docker run --runtime nvidia (or the nvidia default-runtime in "
        "/etc/docker/daemon.json).",
    },
    links=(
        "https://github.com/dusty-nv/jetson-containers/issues/222",
        "https://catalog.ngc.nvidia.com/orgs/nvidia/containers/l4t-base",
    ),
)

NUMPY_OPENBLAS_ILLEGAL_INSTRUCTION_ON_JETSON = Code(
    code="numpy-openblas-illegal-instruction-on-jetson",
    title="Illegal instruction on a Jetson: pip's numpy OpenBLAS misdetects the CPU",
    area="packages",
    severity="warning",
    explanation={
        "what": "On a Jetson Nano, TX2 or Xavier, python dies with 'Illegal instruction (core dumped)' when numpy, or "
        "torch (which imports numpy), is imported: YOLOv5, torch2trt's setup.py, any script.",
        "why": "numpy 1.19.5's wheels for aarch64 bundle an OpenBLAS whose CPU detection picks code the Jetson's "
        "cores do not have (numpy/numpy#18131).",
        "confirm": 'python3 -c "import numpy"  # crashes the same; OPENBLAS_CORETYPE=ARMV8 python3 -c "import numpy" does not',
        "fix": "export OPENBLAS_CORETYPE=ARMV8 (in ~/.bashrc), or pip install numpy==1.19.4, or the distribution's "
        "python3-numpy.",
    },
    links=(
        "https://github.com/numpy/numpy/issues/18131",
        "https://github.com/numpy/numpy/issues/18175",
    ),
)

#: A Jetson named: the board, JetPack, L4T (an l4t image tag), the Tegra kernel or release file.
_JETSON = re.compile(r"\bjetson\b|\bjetpack\b|\bl4t\b|-l4t-|\btegra\b|nv_tegra_release|\b(?:AGX\s+)?Xavier\b|\bOrin\b", re.I)
_CONTAINER = re.compile(r"\bdocker\b|\bcontainer\b|--runtime[= ]nvidia|\bl4t-(?:base|pytorch|ml|tensorflow)\b|dustynv/", re.I)
#: The CUDA libraries the runtime mounts on JetPack 4, missing; or CUDA's start failing.
_NO_CUDA_LIB = (
    r"lib(?:curand|cublas|cublasLt|cudart|cufft|cusparse|cusolver|cudnn|nvinfer|nvrtc)\.so\.\d+(?:\.\d+)?: cannot open shared object file"
    r"|cudaGetDeviceCount returned 3\b|CUDA driver version is insufficient"
)


def _jetson(fx: Facts, text: str) -> Optional[str]:
    where = " ".join(x for x in (fx.str("system.os"), fx.str("system.distro"), fx.str("system.kernel")) if x)
    m = (
        _JETSON.search(where)
        or _JETSON.search(text)
        or _JETSON.search(str((fx.dict("pasted.container") or {}).get("text") or ""))
    )
    if m:
        return m.group(0)
    names = " ".join(str(d.get("name") or "") for d in fx.dicts("nvml.devices"))
    m = re.search(r"\b(?:Orin|Xavier|Tegra|Jetson)\b", names, re.I)
    return m.group(0) if m else None


@check(JETPACK_CONTAINER_MISMATCH)
def jetpack_container_mismatch(fx: Facts) -> Iterator[Finding]:
    said = search(fx, _NO_CUDA_LIB)
    if not said:
        return
    text = text_of(fx)
    jetson = _jetson(fx, text)
    in_box = _CONTAINER.search(text)
    box = fx.str("system.container") or (in_box.group(0) if in_box else None)
    if not jetson or not box:
        return
    yield JETPACK_CONTAINER_MISMATCH.finding(
        title="A Jetson container without the host's CUDA: its L4T release must match the host's, run with --runtime nvidia",
        evidence={said[0]: said[1], "jetson": jetson, "container": box},
        fix=Fix(
            (
                "cat /etc/nv_tegra_release  # on the host: R32 (release), REVISION: 6.1 = L4T r32.6.1",
                "docker run --runtime nvidia -it --rm nvcr.io/nvidia/l4t-pytorch:<tag for that L4T release>",
                "ls /usr/local/cuda/lib64  # in the container: only stubs means the runtime mounted nothing",
            ),
            "On JetPack 4 the NVIDIA runtime mounts the host's CUDA into l4t containers; the container must be built "
            "for the host's L4T release.",
        ),
    )


@check(NUMPY_OPENBLAS_ILLEGAL_INSTRUCTION_ON_JETSON)
def numpy_openblas_illegal_instruction_on_jetson(fx: Facts) -> Iterator[Finding]:
    said = search(fx, r"\bIllegal instruction\b")
    if not said:
        return
    jetson = _jetson(fx, text_of(fx))
    if not jetson or not re.search(r"jetson|nano|tx[12]|xavier|l4t|jetpack|tegra", jetson, re.I):
        return
    yield NUMPY_OPENBLAS_ILLEGAL_INSTRUCTION_ON_JETSON.finding(
        title="Likely: numpy's OpenBLAS crashes on this Jetson's CPU (Illegal instruction): set OPENBLAS_CORETYPE=ARMV8",
        evidence={said[0]: said[1], "jetson": jetson},
        fix=Fix(
            (
                'OPENBLAS_CORETYPE=ARMV8 python3 -c "import numpy, torch"  # no crash: this is the cause',
                "echo 'export OPENBLAS_CORETYPE=ARMV8' >> ~/.bashrc",
                "# or: pip3 install numpy==1.19.4, or the distribution's python3-numpy",
            ),
            "numpy 1.19.5's aarch64 OpenBLAS misdetects the Jetson's CPU and runs instructions it lacks.",
        ),
    )


def register():
    return [jetpack_container_mismatch, numpy_openblas_illegal_instruction_on_jetson]
