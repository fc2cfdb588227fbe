"""conda's __cuda virtual package missing where a CUDA build is asked for (session 22, from blind batch b136 and the
threads behind it):

- conda-cuda-virtual-package-missing: conda, mamba, micromamba and pixi describe the NVIDIA driver to their solver as the
  virtual package __cuda ("Maximum version of CUDA supported by the display driver", conda's Managing virtual
  packages). Where no driver is found (an HPC login node, a CI runner, a machine whose driver does not load) there is
  no __cuda, and a CUDA build asked for explicitly cannot be solved: micromamba's "__cuda =* *, which is missing on the
  system" (conda-forge/pytorch-cpu-feedstock#364, a GPU-less login node) and pixi's "Virtual package '__cuda' does not
  match any of the available virtual packages" (fieldsoftheworld/ftw-baselines#117, CI runners). conda-forge's CUDA
  page says how to install such packages without a GPU: CONDA_OVERRIDE_CUDA (honoured by pixi/rattler too,
  conda/rattler#818). On a machine that should have a GPU, the driver is what to fix.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search

CONDA_CUDA_VIRTUAL_PACKAGE_MISSING = Code(
    code="conda-cuda-virtual-package-missing",
    title="conda (or pixi) found no NVIDIA driver (__cuda) on this machine, and the packages asked for need one",
    area="packages",
    severity="error",
    explanation={
        "what": "Solving a conda, mamba, micromamba or pixi environment fails on the virtual package __cuda ('__cuda =* *, "
        "which is missing on the system'; 'Virtual package __cuda does not match any of the available virtual "
        "packages'): a CUDA build of pytorch, libtorch or jaxlib, or a cuda system requirement, was asked for.",
        "why": "The solver learns the driver's CUDA version from the __cuda virtual package, which exists only where an "
        "NVIDIA driver is detected. A login node, a CI runner or a machine whose driver does not load has none.",
        "confirm": "`conda info` (or `pixi info`): the virtual packages list has no __cuda; `nvidia-smi` fails or finds no GPU.",
        "fix": "On a machine without a GPU that prepares the environment for GPU nodes: CONDA_OVERRIDE_CUDA=12.x (the "
        "CUDA the GPU nodes' driver supports) before the install. On a machine that should have a GPU: fix its NVIDIA "
        "driver first (nvidia-smi must work).",
    },
    links=(
        "https://docs.conda.io/projects/conda/en/stable/user-guide/tasks/manage-virtual.html",
        "https://conda-forge.org/docs/user/cuda/",
        "https://github.com/conda/rattler/pull/818",
        "https://github.com/conda-forge/pytorch-cpu-feedstock/issues/364",
        "https://github.com/fieldsoftheworld/ftw-baselines/issues/117",
    ),
)

#: The solvers' words: micromamba/mamba (libsolv) and conda list the missing __cuda; pixi/rattler name it as a virtual
#: package that matches none on the machine.
_MISSING = (
    r"__cuda\b[^\n]{0,40}?which is missing on the system"
    r"|Virtual package ['`\"]?__cuda['`\"]? does not match any of the available virtual packages"
    r"|nothing provides (?:the requested )?__cuda\b"
)


@check(CONDA_CUDA_VIRTUAL_PACKAGE_MISSING)
def conda_cuda_virtual_package_missing(fx: Facts) -> Iterator[Finding]:
    said = search(fx, _MISSING)
    if not said:
        return
    yield CONDA_CUDA_VIRTUAL_PACKAGE_MISSING.finding(
        title="The environment needs a CUDA build, and conda/pixi found no NVIDIA driver here (no __cuda virtual package)",
        evidence={said[0]: said[1][:300]},
        fix=Fix(
            (
                "nvidia-smi  # a machine that should have a GPU: its driver must work first",
                "CONDA_OVERRIDE_CUDA=12.6 conda install ...  # no GPU here (login node, CI): the CUDA the GPU nodes' "
                "driver supports (pixi: CONDA_OVERRIDE_CUDA=12.6 pixi install)",
                "conda info  # the virtual packages: __cuda=12.x once a driver is found or overridden",
            ),
            "The solver reads the driver's CUDA version from __cuda, which only exists where an NVIDIA driver is found.",
        ),
    )


def register():
    return [conda_cuda_virtual_package_missing]
