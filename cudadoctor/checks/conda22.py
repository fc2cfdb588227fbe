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
    # rattler/pixi's newer solver ("└─ __cuda *, for which no candidates were found"), and the words for it in a title
    r"|__cuda\b[^\n]{0,20}?for which no candidates were found"
    r"|\b(?:CUDA|__cuda) virtual package\b[^\n]{0,30}?\b(?:not found|is missing|missing|not (?:detected|available))"
)
#: Session 26 (b275): a report about __cuda / conda's virtual packages where the environment is built without a GPU
#: (a Docker build, a login node, CI, an offline or CPU-only machine): the likely cause, where the solver's words are not
#: quoted.
_VIRTUAL_NAMED = r"(?i)__cuda\b|\bvirtual (?:package|dependenc)\w*\b[^\n]{0,80}?\bcuda\b|\bcuda\b[^\n]{0,40}?\bvirtual package"
_NO_GPU_HERE = (
    r"(?i)\bdocker build\b|\blogin node|\bCI\b|\brunners?\b|\boffline\b|without (?:internet|a GPU|GPUs?|CUDA|an NVIDIA)"
    r"|\bno GPUs?\b|\bCPU[- ]only (?:node|host|machine|runner)|\bbuild (?:node|host|machine)|machines? without"
    r"|\bimage builds?\b|\bCPU nodes?\b|\bGPU (?:is )?(?:not available|unavailable)"
)


@check(CONDA_CUDA_VIRTUAL_PACKAGE_MISSING)
def conda_cuda_virtual_package_missing(fx: Facts) -> Iterator[Finding]:
    said = search(fx, _MISSING)
    likely = False
    if not said:
        named = search(fx, _VIRTUAL_NAMED)
        where = search(fx, _NO_GPU_HERE) if named else None
        if not (named and where):
            return
        said, likely = named, True
    yield CONDA_CUDA_VIRTUAL_PACKAGE_MISSING.finding(
        title=("Likely: " if likely else "")
        + ("the" if likely else "The")
        + " environment needs a CUDA build, and conda/pixi found no NVIDIA driver here (no __cuda virtual package)",
        severity="warning" if likely else None,
        evidence={said[0]: said[1][:300], **({"built_where": where[1][:200]} if likely and where else {})},
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
