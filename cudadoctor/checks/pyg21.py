"""PyG's compiled extensions without a prebuilt wheel (session 21, from blind batch b101 and the threads behind it):

- pyg-wheel-missing: torch-scatter, torch-sparse, torch-cluster, torch-spline-conv and pyg-lib carry their own CPU and
  CUDA kernels; PyG publishes them as wheels per torch release and CUDA variant on its own index
  (https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html, PyG's installation guide), not on PyPI. Without that index
  (pip install torch-scatter), or for a torch release the index does not have yet, pip builds the package from source
  — which fails without a matching compiler and CUDA toolkit (MSVC's C1083, nvcc missing) or builds against whatever
  CUDA the machine has — or finds nothing (pytorch_scatter#200, pytorch_geometric#1958, pyg-lib#676).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret import release_of, torch_version, variant
from cudadoctor.interpret.versions import mm_str
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match

PYG_INDEX = "https://data.pyg.org/whl/"

PYG_WHEEL_MISSING = Code(
    code="pyg-wheel-missing",
    title="No prebuilt PyG extension wheel (torch-scatter, torch-sparse, pyg-lib...) matched this torch and CUDA",
    area="packages",
    severity="error",
    explanation={
        "what": "Installing torch-scatter, torch-sparse, torch-cluster, torch-spline-conv or pyg-lib compiles it "
        '("Building wheel for torch-scatter (setup.py)", "Failed building wheel for torch-scatter", MSVC\'s '
        '"fatal error C1083", nvcc errors) or finds no wheel at all ("pyg-lib wheels not available").',
        "why": "These packages carry their own CPU and CUDA kernels, built for one torch release and CUDA variant. PyG "
        "publishes the wheels on its own index, one page per torch release and CUDA "
        "(https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html), not on PyPI. Without `-f` and that page, or for a "
        "torch release (or CUDA variant) the index does not have yet, pip falls back to the source distribution and "
        "builds it with whatever compiler and CUDA toolkit the machine has — or has nothing to install.",
        "confirm": '`python -c "import torch; print(torch.__version__, torch.version.cuda)"`; then open '
        "https://data.pyg.org/whl/ and look for torch-<that release>+cu<that CUDA>: the page lists the wheels for each "
        "Python and OS.",
        "fix": "Install from the page for your torch and CUDA: `pip install torch-scatter -f "
        "https://data.pyg.org/whl/torch-2.5.0+cu124.html` (the release with .0, the CUDA of your torch). When no page "
        "or no wheel exists for your torch, use a torch release the index has (or an older package version built for "
        "yours), or wait for the next PyG release. PyG 2.3 and later need none of these packages for basic use: "
        "`pip install torch_geometric` alone.",
    },
    links=(
        "https://pytorch-geometric.readthedocs.io/en/2.8.0/install/installation.html",
        "https://data.pyg.org/whl/",
        "https://github.com/rusty1s/pytorch_scatter/issues/200",
        "https://github.com/pyg-team/pyg-lib/issues/676",
    ),
)

_NAME = re.compile(r"torch[-_](?:scatter|sparse|cluster|spline[-_]conv)|pyg[-_]lib", re.I)


def _page(fx: Facts) -> Optional[str]:
    """PyG's index page for the torch in use: torch-X.Y.0+cuNNN.html (the release's .0, the CUDA variant)."""
    release, var = release_of(torch_version(fx)), variant(fx)
    if not release or not var or not (var.startswith("cu") or var == "cpu"):
        return None
    return f"{PYG_INDEX}torch-{mm_str(release)}.0+{var}.html"


@check(PYG_WHEEL_MISSING)
def pyg_wheel_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, PYG_WHEEL_MISSING)
    if not said:
        return
    m = _NAME.search(said[1])
    name = m.group(0).lower().replace("_", "-") if m else "torch-scatter"
    page = _page(fx)
    evidence: Dict[str, Optional[str]] = {said[0]: said[1], "torch.version": torch_version(fx)}
    if page:
        evidence["pyg_index_page"] = page
    install = f"{PIP} install {name} -f {page or PYG_INDEX + 'torch-<release>.0+<cuNNN or cpu>.html'}"
    yield PYG_WHEEL_MISSING.finding(
        title=f"No prebuilt {name} wheel matched this torch and CUDA: pip built it from source (or found nothing)",
        evidence=evidence,
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__, torch.version.cuda)"  # the page to use: '
                "torch-<release>.0+cu<CUDA without the dot>",
                install + "  # no such page or no wheel for your Python/OS there: a torch release the index has",
                f"{PIP} install torch_geometric  # PyG 2.3+ runs without these packages for basic use",
            ),
            "PyG publishes these packages' wheels per torch release and CUDA on its own index, not on PyPI; without "
            "a matching wheel pip compiles them from source.",
        ),
    )


def register():
    return [pyg_wheel_missing]
