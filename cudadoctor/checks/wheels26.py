"""A package published as one prebuilt wheel per torch release and CUDA variant, with none for the torch in use
(session 26, from blind batch b264 - NVIDIA Kaolin for torch 2.0.0+cu118, 2.6.0+cu126 and a newer torch in an image -
and the same class in b86: pyg-lib for torch 2.0.0):

- companion-wheel-missing-for-torch: Kaolin's own words ("Kaolin does not support pytorch version: 2.6.0+cu126", its
  PyPI placeholder wheel "This is the kaolin placeholder wheel"), or pip finding no version of a package on a find-links
  page named for one torch build ("-f https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-2.0.0_cu118.html"); or, as a
  likely cause, a report that no wheel of Kaolin exists for its (newer) torch. PyG's extension packages are
  pyg-wheel-missing's (checks/pyg21.py).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret.build import torch_version
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP_REFUSED, text_of

COMPANION_WHEEL_MISSING_FOR_TORCH = Code(
    code="companion-wheel-missing-for-torch",
    title="The package has no prebuilt wheel for this torch release and CUDA variant",
    area="packages",
    severity="error",
    explanation={
        "what": "Installing a package that is built against torch (NVIDIA Kaolin, pyg-lib) finds nothing: pip's 'Could "
        "not find a version that satisfies the requirement kaolin==0.13.0 (from versions: 0.0)' on the page for one torch "
        "build, Kaolin's 'Kaolin does not support pytorch version: 2.6.0+cu126', or its PyPI placeholder wheel's 'This is "
        "the kaolin placeholder wheel'.",
        "why": "Such packages carry C++/CUDA code compiled against one torch release's ABI and one CUDA variant, so they "
        "publish one wheel per pair on their own index (Kaolin: https://nvidia-kaolin.s3.us-east-2.amazonaws.com/"
        "torch-<X.Y.Z>_cu<NNN>.html, with a table of the pairs in its installation notes). A torch release newer than the "
        "package's last build, or a CUDA variant it skipped, has no wheel; PyPI holds only a placeholder.",
        "confirm": 'python -c "import torch; print(torch.__version__)"; then look for that release and CUDA variant in the '
        "package's compatibility table (Kaolin: https://kaolin.readthedocs.io/en/latest/notes/installation.html).",
        "fix": "Install a torch release and CUDA variant the package publishes wheels for (in a fresh environment if "
        "other packages need the newer torch), then the package from the page for that pair; or build the package from "
        "source against the torch you have (its installation notes' 'from source' steps, a CUDA toolkit matching torch's).",
    },
    links=(
        "https://kaolin.readthedocs.io/en/latest/notes/installation.html",
        "https://github.com/NVIDIAGameWorks/kaolin/blob/v0.13.0/docs/notes/installation.rst",
    ),
)

#: Kaolin's own refusals: its setup's version check and its PyPI placeholder.
_KAOLIN_SAYS = re.compile(
    r"Kaolin does not support pytorch version:?\s*(?P<torch>[\w.+]+)?|This is the kaolin placeholder wheel", re.I
)
#: A find-links page named for one torch build.
_TORCH_PAGE = re.compile(r"https?://\S+?/(?:whl/)?torch-(?P<torch>\d+\.\d+(?:\.\d+)?)[_+](?P<var>cu\d+|cpu)\.html", re.I)
_PYG = re.compile(r"^(?:torch[-_](?:scatter|sparse|cluster|spline[-_]conv|geometric)|pyg[-_]lib)$", re.I)
_TORCH_FAMILY = re.compile(r"^(?:torch|torchvision|torchaudio|pytorch)$", re.I)
#: A report that no wheel exists for its torch (Kaolin named).
_NO_WHEEL_SAID = re.compile(
    r"\bkaolin\b[^\n]{0,200}?(?:(?:\b(?:no|not|never)\b|n't\b)[^\n]{0,60}?\b(?:whl|wheels?)\b|\b(?:whl|wheels?)\b[^\n]{0,40}?"
    r"\b(?:not (?:available|provided|published)|missing)\b)",
    re.I,
)


@check(COMPANION_WHEEL_MISSING_FOR_TORCH)
def companion_wheel_missing_for_torch(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    if not text:
        return
    found = _evidence(fx, text)
    if found is None:
        return
    pkg, torch, evidence, sure = found
    build = f"torch {torch}" if torch else "this torch"
    yield COMPANION_WHEEL_MISSING_FOR_TORCH.finding(
        title=("" if sure else "Likely: ")
        + f"{pkg} publishes no wheel for {build}: use a torch release it lists, or build {pkg} from source",
        evidence=evidence,
        severity=None if sure else "warning",
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__)"  # the release and CUDA variant the wheel must match',
                f"# {pkg}'s compatibility table: "
                + (
                    "https://kaolin.readthedocs.io/en/latest/notes/installation.html"
                    if pkg.lower() == "kaolin"
                    else "its installation notes"
                ),
                f"# a torch release + CUDA variant listed there (a fresh venv if other packages need this torch), then: "
                f"pip install {pkg} -f <the page for that pair>",
                f"# or build {pkg} from source against this torch (its installation notes; a CUDA toolkit matching "
                "torch.version.cuda)",
            ),
            f"{pkg} ships compiled code built against one torch release and CUDA variant per wheel.",
        ),
    )


def _base(requirement: str) -> str:
    """The distribution's name in a requirement: 'kaolin==0.13.0' and 'kaolin[all]' are 'kaolin'."""
    return re.split(r"[=<>!~\[]", requirement)[0]


def _evidence(fx: Facts, text: str) -> Optional[Tuple[str, Optional[str], dict, bool]]:
    m = _KAOLIN_SAYS.search(text)
    if m:
        return "kaolin", m.group("torch") or torch_version(fx), {"kaolin": m.group(0)}, True
    page = _TORCH_PAGE.search(text)
    on_page = f"{page.group('torch')}+{page.group('var')}" if page else None
    for r in PIP_REFUSED.finditer(text):
        pkg = _base(r.group("pkg"))
        if pkg.lower() == "kaolin":
            # Kaolin is published per torch build only (PyPI holds a placeholder): refused, it has none for this torch
            return "kaolin", on_page or torch_version(fx), {"pip": r.group(0)}, True
    if page:
        for r in PIP_REFUSED.finditer(text):
            pkg = _base(r.group("pkg"))
            if _PYG.match(pkg) or _TORCH_FAMILY.match(pkg):
                continue
            return pkg, on_page, {"pip": r.group(0), "page": page.group(0)}, True
    said = _NO_WHEEL_SAID.search(text)
    if said:
        return "kaolin", torch_version(fx), {"said": said.group(0)[:200]}, False
    return None


def register():
    return [companion_wheel_missing_for_torch]
