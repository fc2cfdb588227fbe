"""Triton not the release the package importing it was built for (session 25, from blind batch b248 and the threads of
the class: pytorch#127271, coreweave/ml-containers#64, deepbeepmeep/Wan2GP#1263, woct0rdho/triton-windows#97):

- triton-version-mismatch: "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'",
  "cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' / 'triton.backends.compiler'": torch's Inductor
  (or another package) imports a Triton internal that the installed Triton does not have. Each torch release pins the
  Triton it was built with (nightlies pair with pytorch-triton from the nightly index); an older or newer Triton
  installed by hand, by another package or in an image breaks torch.compile.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret import torch_version
from cudadoctor.interpret.environment import os_family
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, text_of

TRITON_VERSION_MISMATCH = Code(
    code="triton-version-mismatch",
    title="The installed Triton is not the release torch (or the package importing it) was built with",
    area="packages",
    severity="error",
    explanation={
        "what": "torch.compile (Inductor) or a Triton-based package fails at import: \"cannot import name 'triton_key' "
        "from 'triton.compiler.compiler'\", \"cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler'\".",
        "why": "torch's Inductor imports Triton internals that change between Triton releases; each torch release pins "
        "the Triton it was built with (nightly and pre-release torch pair with pytorch-triton from the nightly index). "
        "A Triton installed separately, pulled by another package or baked into an image does not have them.",
        "confirm": "`pip show torch triton` (or pytorch-triton / triton-windows): the versions; torch's wheel metadata "
        "(`pip show -v torch`, Requires-Dist) names the Triton it wants.",
        "fix": "Install the Triton torch pins: reinstall torch (pip brings its pinned triton), or for a nightly torch "
        "install pytorch-triton from the same nightly index; on Windows the triton-windows release its README pairs "
        "with your torch.",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/127271",
        "https://github.com/woct0rdho/triton-windows",
    ),
)

_NAME = re.compile(r"cannot import name '(\w+)' from '(triton[\w.]*)'")
_INDUCTOR = re.compile(r"torch[/\\._]+_inductor|backend='inductor'|torch\._dynamo", re.I)


@check(TRITON_VERSION_MISMATCH)
def triton_version_mismatch(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TRITON_VERSION_MISMATCH)
    if not said:
        return
    m = _NAME.search(said[1])
    name, module = (m.group(1), m.group(2)) if m else ("a Triton internal", "triton")
    text = text_of(fx)
    inductor = bool(_INDUCTOR.search(text)) or not re.search(r"site-packages[/\\](?!triton|torch)\w+", text)
    tv = torch_version(fx)
    nightly = bool(tv and re.search(r"dev|a0|\+git", tv)) or "nightly" in text.lower()
    windows = os_family(fx) == "windows" or bool(re.search(r"[A-Za-z]:\\", text))
    cmds = [f"{PIP} show torch triton pytorch-triton triton-windows  # which Triton is installed beside which torch"]
    if windows:
        cmds.append(
            f'{PIP} install -U "triton-windows<X.Y"  # the release triton-windows\'s README pairs with torch {tv or "<yours>"}'
        )
    elif nightly:
        cmds.append(
            f"{PIP} install --pre --force-reinstall pytorch-triton --index-url https://download.pytorch.org/whl/nightly/<cuXYZ>  "
            "# the Triton the nightly torch is built with"
        )
    else:
        cmds.append(
            f"{PIP} install --force-reinstall {('torch==' + tv) if tv else 'torch==<your version>'} --index-url "
            "https://download.pytorch.org/whl/<cuXYZ>  # brings the triton it pins"
        )
    yield TRITON_VERSION_MISMATCH.finding(
        title=f"The installed Triton has no {name} ({module}) that "
        + ("torch's Inductor" if inductor else "the importing package")
        + " imports: Triton is not the release "
        + ("torch" if inductor else "that package")
        + " was built with",
        evidence={said[0]: said[1], "name": name, "torch.version": tv},
        fix=Fix(tuple(cmds), "torch pins the Triton it was built with; Inductor imports internals that change between releases."),
    )


def register():
    return [triton_version_mismatch]
