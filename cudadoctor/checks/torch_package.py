"""Is the torch package whole? Half-installed, half-uninstalled or mixed torch trees.

Code: torch-install-incomplete.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret import torch_version
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match

TORCH_INSTALL_INCOMPLETE = Code(
    code="torch-install-incomplete",
    title="The torch package is half-present (an interrupted install or uninstall left a broken tree)",
    area="torch",
    severity="error",
    explanation={
        "what": "`import torch` finds a torch directory, but not a whole package: `No module named 'torch._C'`, "
        "`cannot import name '_C' from 'torch' (unknown location)`, `module 'torch' has no attribute "
        "'__version__'`, or torch's own libraries (libtorch*, libc10*) missing or from two versions.",
        "why": "An interrupted `pip install`/`uninstall`, two installers writing the same site-packages (pip over "
        "conda), or an upgrade that failed half-way leaves files of one version, or an empty `torch/` directory "
        "that Python imports as a namespace package.",
        "confirm": "`python -c \"import torch, sys; print(torch.__file__, getattr(torch, '__version__', None))\"` "
        "(None or no file means a leftover directory); `python -m pip show -f torch | head`; "
        "`ls $(python -c 'import site; print(site.getsitepackages()[0])')/torch`.",
        "fix": "Uninstall torch until pip says it is not installed, delete the leftover `torch/` directory, and "
        "install it again with one installer.",
    },
    links=("https://pytorch.org/get-started/locally/",),
)


@check(TORCH_INSTALL_INCOMPLETE)
def torch_install_incomplete(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCH_INSTALL_INCOMPLETE)
    if not said:
        return
    where = fx.str("torch.location") or '$(python -c "import site; print(site.getsitepackages()[0])")/torch'
    version = torch_version(fx)
    cmds = [
        f"{PIP} uninstall -y torch  # repeat until it says 'not installed'",
        f"rm -rf {where}  # the leftover directory (check the path first)",
        f"{PIP} install --no-cache-dir torch"
        + (f"=={version.split('+')[0]}" if version else "")
        + "  # from the index for your CUDA: https://pytorch.org/get-started/locally/",
    ]
    yield TORCH_INSTALL_INCOMPLETE.finding(
        title="torch is half-installed: its package directory is incomplete or mixed",
        evidence={said[0]: said[1], "torch.location": fx.str("torch.location"), "torch.version": version},
        fix=Fix(tuple(cmds), "A clean tree from one installer replaces the leftover files of an interrupted install."),
    )


def register():
    return [torch_install_incomplete]
