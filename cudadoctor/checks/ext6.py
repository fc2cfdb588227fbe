"""Causes that had no code (round 6, task ext6), reasoned from the facts beside the sentence:

- torch-compile-unsupported-on-python-version: torch refuses torch.compile/Dynamo on the running Python (its own version
  gate); the first torch release that accepts each Python is a table (kb/errors/ext6.json ``torch_compile_python``,
  from torch's eval_frame.py / __init__.py of each release), so the fix names the release to install.

Wordings: kb/errors/ext6.json. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, Optional, Tuple

from cudadoctor.errortext import kb_document
from cudadoctor.facts import Facts
from cudadoctor.interpret.build import torch_version
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match

# --- round 6: ext6 ---

TORCH_COMPILE_UNSUPPORTED_PYTHON = Code(
    code="torch-compile-unsupported-on-python-version",
    title="torch.compile (Dynamo) refuses this Python version: the installed torch predates support for it",
    area="torch",
    severity="error",
    explanation={
        "what": "torch.compile (or anything that calls it: a library's @torch.compile, torch._dynamo) raised "
        "'Python 3.N+ not yet supported for torch.compile', 'Dynamo is not supported on Python 3.N+' or "
        "'torch.compile is not supported on Python 3.N+' before compiling anything.",
        "why": "Dynamo rewrites CPython bytecode, so each Python minor needs explicit support; every torch release gates "
        "the Pythons it supports (torch/_dynamo/eval_frame.py check_if_dynamo_supported, torch/__init__.py compile). "
        "Support arrives a release or more after the Python itself: torch.compile accepts 3.11 from torch 2.1, 3.12 "
        "from 2.4, 3.13 from 2.6, 3.14 from 2.10. The GPU, driver and CUDA are not involved; eager mode works.",
        "confirm": 'python -c "import sys, torch; print(sys.version, torch.__version__)"  then '
        'python -c "import torch; torch.compile(lambda x: x + 1)(torch.ones(1))"  (raises the same RuntimeError).',
        "fix": "Upgrade torch to the first release that supports this Python (the same CUDA variant), or run on an older "
        "Python (a venv/conda env with Python 3.N-1), or turn compilation off in the program (most have a flag: "
        "compile=False, --no-compile, TORCHDYNAMO_DISABLE=1).",
    },
    links=(
        "https://github.com/pytorch/pytorch/blob/main/torch/_dynamo/eval_frame.py",
        "https://github.com/pytorch/pytorch/issues/144048",
        "https://pytorch.org/get-started/locally/",
    ),
)

_PY_IN_SAID = re.compile(r"Python (3\.\d+)")


def _first_torch() -> Dict[str, str]:
    table: Dict[str, str] = kb_document("ext6.json")["torch_compile_python"]["first_torch"]
    return table


def _mm(v: Optional[str]) -> Optional[Tuple[int, int]]:
    m = re.match(r"(\d+)\.(\d+)", v or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@check(TORCH_COMPILE_UNSUPPORTED_PYTHON)
def torch_compile_unsupported_python(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCH_COMPILE_UNSUPPORTED_PYTHON)
    if not said:
        return
    m = _PY_IN_SAID.search(said[1])
    gate = m.group(1) if m else None
    running = _mm(fx.str("python.version"))
    python = f"{running[0]}.{running[1]}" if running else gate
    need = _first_torch().get(python or "")
    tv = torch_version(fx)
    evidence: Dict[str, Any] = {said[0]: said[1], "python.version": fx.str("python.version"), "torch.version": tv}
    if need:
        evidence["first_torch_compiling_this_python"] = need
    cmds = []
    if need:
        cmds.append(
            f'{PIP} install -U "torch>={need}"  # the first release whose torch.compile accepts Python {python} '
            "(take the install line for your CUDA variant from https://pytorch.org/get-started/locally/)"
        )
    older = f"3.{int(python.split('.')[1]) - 1}" if python and python.startswith("3.") else None
    if older:
        cmds.append(f"# or: a Python {older} environment (conda create -n py{older.replace('.', '')} python={older})")
    cmds.append("# or: run without compiling (the program's compile=False / --no-compile, or TORCHDYNAMO_DISABLE=1)")
    title = (
        "torch.compile refuses Python "
        + (python or "this version")
        + (f": torch {tv} predates its support" if tv else ": the installed torch predates its support")
    )
    if need:
        title += f" (torch {need}+ compiles on it)"
    yield TORCH_COMPILE_UNSUPPORTED_PYTHON.finding(
        title=title,
        evidence=evidence,
        fix=Fix(tuple(cmds), "Dynamo supports each Python minor only from a given torch release on; eager mode is unaffected."),
    )


def register():
    return [torch_compile_unsupported_python]
