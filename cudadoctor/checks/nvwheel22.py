"""NVIDIA's pip CUDA wheels of two CUDA majors side by side (session 22, from blind batch b129 and the threads behind it):

- nvidia-wheel-version-conflict: the same CUDA library's wheel installed for two CUDA majors (nvidia-nccl-cu11 beside
  nvidia-nccl-cu12, -cu12 beside -cu13). They install the same files (site-packages/nvidia/nccl/lib/libnccl.so.2 and
  so on), so the one installed last overwrites the other's, and torch loads a library of another version than its
  wheel pins: "libtorch_cuda.so: undefined symbol: ncclMemFree" with nvidia-nccl-cu11 2.14.3 beside -cu12 2.27.3
  (rwth-i6/returnn#1802), "undefined symbol: ncclCommResume" with nvidia-nccl-cu12 beside -cu13 (pytorch/pytorch#186591,
  ptrblck: uninstall the nvidia-nccl-cu12 package), "undefined symbol ncclCommRegister" fixed by removing the cu11
  packages (VichyTong/CodeJudge#2). Read from the installed packages (collect_env's [pip3] lines, pip list): an error
  where torch failed to import or a CUDA library failed, else a warning (the files may still be the right ones).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import torch_cuda
from cudadoctor.interpret.versions import mm
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, search

NVIDIA_WHEEL_VERSION_CONFLICT = Code(
    code="nvidia-wheel-version-conflict",
    title="NVIDIA's CUDA library wheels of two CUDA majors are installed side by side",
    area="packages",
    severity="error",
    explanation={
        "what": "pip lists the same CUDA library's wheel for two CUDA majors (nvidia-nccl-cu11 and nvidia-nccl-cu12, "
        "nvidia-cublas-cu12 and nvidia-cublas-cu13...), typically after a requirements file or another package pulled the "
        "other major's wheels; import torch then fails with an undefined NCCL/cuBLAS/cuDNN symbol, or a library "
        "misbehaves.",
        "why": "Both wheels install the same files under site-packages/nvidia/<library>/lib; the one installed last "
        "overwrites the other's, so torch loads a library of another version than the one its wheel pins.",
        "confirm": "`pip list | grep -i nvidia-` shows one library with two -cuNN suffixes; `ldd $(python -c 'import "
        "torch, os; print(os.path.dirname(torch.__file__))')/lib/libtorch_cuda.so | grep nccl` names the nvidia/ copy.",
        "fix": "Uninstall the wheels of the CUDA major torch was not built with, then reinstall torch so its own pinned "
        "wheels are written again (pip install --force-reinstall torch==<version> from its index).",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/186591",
        "https://github.com/rwth-i6/returnn/issues/1802",
        "https://github.com/VichyTong/CodeJudge/issues/2",
    ),
)

#: nvidia-<library>-cu<major>: the pip wheels of NVIDIA's CUDA libraries (the name before the suffix is the library).
_WHEEL = re.compile(r"^nvidia-([a-z0-9-]+?)-cu(\d{2})$")
#: torch failing to import, or a CUDA library failing to load or resolve a symbol.
_BROKEN = r"undefined symbol|cannot open shared object file|from torch\._C import|version `?lib\w+\.so"


def conflicting_wheels(fx: Facts) -> Dict[str, List[Tuple[str, str]]]:
    """library -> [(major, version)] of the nvidia-*-cuNN distributions installed, for libraries with two majors."""
    by_lib: Dict[str, Dict[str, str]] = {}
    for d in fx.dicts("packages.distributions"):
        m = _WHEEL.match(str(d.get("name") or "").lower().replace("_", "-"))
        if m:
            by_lib.setdefault(m.group(1), {})[m.group(2)] = str(d.get("version") or "?")
    return {lib: sorted(v.items()) for lib, v in by_lib.items() if len(v) > 1}


@check(NVIDIA_WHEEL_VERSION_CONFLICT)
def nvidia_wheel_version_conflict(fx: Facts) -> Iterator[Finding]:
    both = conflicting_wheels(fx)
    if not both:
        return
    own = mm(torch_cuda(fx))
    broken = search(fx, _BROKEN) or (("torch.status", "import-failed") if fx.str("torch.status") == "import-failed" else None)
    listed = "; ".join(f"nvidia-{lib}: " + ", ".join(f"cu{major} {ver}" for major, ver in majors) for lib, majors in both.items())
    foreign = sorted(
        f"nvidia-{lib}-cu{major}" for lib, majors in both.items() for major, _v in majors if own and int(major) != own[0]
    )
    cmds = [f"{PIP} list 2>/dev/null | grep -i nvidia-  # one library, two -cuNN suffixes"]
    if foreign and own:
        cmds.append(f"{PIP} uninstall -y {' '.join(foreign)}  # torch is built with CUDA {own[0]}.{own[1]}")
    else:
        cmds.append(f"{PIP} uninstall -y <the nvidia-*-cuNN wheels of the CUDA major torch is not built with>")
    cmds.append(f"{PIP} install --force-reinstall --no-deps <the nvidia-*-cuNN wheels torch pins>  # or reinstall torch itself")
    evidence: Dict[str, object] = {"installed": listed, "torch.cuda": torch_cuda(fx)}
    if broken:
        evidence[broken[0]] = broken[1][:300]
    yield NVIDIA_WHEEL_VERSION_CONFLICT.finding(
        title=f"NVIDIA's CUDA library wheels of two CUDA majors are installed ({listed}): they overwrite each other's files",
        evidence=evidence,
        fix=Fix(tuple(cmds), "Both majors' wheels write the same library files; only the ones torch pins belong there."),
        severity="error" if broken else "warning",
    )


def register():
    return [nvidia_wheel_version_conflict]
