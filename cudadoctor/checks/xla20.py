"""XLA (TensorFlow, JAX) cannot find the CUDA toolkit's libdevice (session 20, from blind batch b88 and the threads behind it):

- xla-libdevice-not-found: XLA compiles GPU kernels itself and links NVIDIA's libdevice bitcode (nvvm/libdevice/libdevice.10.bc)
  from a CUDA toolkit it searches for ("Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice", "libdevice not found at
  ./libdevice.10.bc"; tensorflow#58681, jax#989, jax#4452). pip and conda installs that bring only the CUDA libraries
  (cudatoolkit from conda, nvidia-* wheels) have no nvvm directory where XLA looks; TensorFlow's own install guide for
  Ubuntu 22.04 gives the fix (cuda-nvcc, XLA_FLAGS=--xla_gpu_cuda_data_dir). The GPU and the driver are fine.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

XLA_LIBDEVICE_NOT_FOUND = Code(
    code="xla-libdevice-not-found",
    title="XLA (TensorFlow / JAX) cannot find the CUDA toolkit's libdevice to compile its GPU kernels",
    area="toolkit",
    severity="error",
    explanation={
        "what": "TensorFlow or JAX fails when it first compiles for the GPU: \"Can't find libdevice directory "
        '${CUDA_DIR}/nvvm/libdevice", then "InternalError: libdevice not found at ./libdevice.10.bc" (often with '
        "\"Couldn't invoke ptxas --version\"). The GPU is found; only XLA's compilation fails.",
        "why": "XLA compiles kernels itself and links NVIDIA's libdevice bitcode (nvvm/libdevice/libdevice.10.bc) and "
        "runs ptxas from a CUDA toolkit it searches for in /usr/local/cuda, the paths it was configured with and "
        "XLA_FLAGS=--xla_gpu_cuda_data_dir. A conda cudatoolkit or pip's nvidia-* library wheels bring the CUDA "
        "libraries but not that nvvm directory (or not where XLA looks), and $CUDA_DIR in the message is not a "
        "variable XLA reads.",
        "confirm": "`find / -name 'libdevice.10.bc' 2>/dev/null` (none, or none under <dir>/nvvm/libdevice); "
        "`echo $XLA_FLAGS`; `which ptxas`.",
        "fix": "Install the CUDA compiler package into the environment (conda: `conda install -c nvidia cuda-nvcc`; pip: "
        "`pip install nvidia-cuda-nvcc-cu12`, or jax[cuda12] which brings it) and point XLA at the directory that holds "
        "nvvm/libdevice: `export XLA_FLAGS=--xla_gpu_cuda_data_dir=<that directory>` (TensorFlow's guide for Ubuntu 22.04 "
        "also copies libdevice.10.bc into $CONDA_PREFIX/lib/nvvm/libdevice). A full CUDA toolkit in /usr/local/cuda works "
        "too.",
    },
    links=(
        "https://www.tensorflow.org/install/pip",
        "https://github.com/tensorflow/tensorflow/issues/58681",
        "https://github.com/jax-ml/jax/issues/989",
        "https://github.com/jax-ml/jax/issues/4452",
    ),
)


@check(XLA_LIBDEVICE_NOT_FOUND)
def xla_libdevice_not_found(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, XLA_LIBDEVICE_NOT_FOUND)
    if not said:
        return
    conda = bool(fx.str("environment.conda_prefix") or fx.dict("pasted.conda"))
    cmds = (
        ("conda install -c nvidia cuda-nvcc  # the CUDA compiler package: ptxas and nvvm/libdevice in the environment",)
        if conda
        else (
            "pip install nvidia-cuda-nvcc-cu12  # ptxas and nvvm/libdevice as a wheel, for the CUDA major TensorFlow/jaxlib was "
            "built for (-cu11 for CUDA 11); JAX: pip install -U 'jax[cuda12]'",
        )
    ) + (
        "find / -name 'libdevice.10.bc' 2>/dev/null  # <dir>/nvvm/libdevice/libdevice.10.bc: <dir> is XLA's CUDA data dir",
        "export XLA_FLAGS=--xla_gpu_cuda_data_dir=<dir>  # the directory that contains nvvm/",
        "# TensorFlow's Ubuntu 22.04 guide: mkdir -p $CONDA_PREFIX/lib/nvvm/libdevice && "
        "cp $CONDA_PREFIX/lib/libdevice.10.bc $CONDA_PREFIX/lib/nvvm/libdevice/",
    )
    yield XLA_LIBDEVICE_NOT_FOUND.finding(
        title="XLA cannot find the CUDA toolkit's libdevice (nvvm/libdevice/libdevice.10.bc) to compile its GPU kernels",
        evidence={said[0]: said[1]},
        fix=Fix(
            cmds,
            "XLA links libdevice from a CUDA toolkit it searches for; the environment's CUDA packages do not put one where it looks.",
        ),
    )


def register():
    return [xla_libdevice_not_found]
