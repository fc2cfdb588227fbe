"""Python's C headers missing where something compiles against them (session 24, from blind batch b216 and the threads
of the class: woct0rdho/triton-windows#77, daydreamlive/scope#84):

- python-headers-missing: "fatal error: Python.h: No such file or directory" (gcc) or "fatal error C1083: Cannot open
  include file: 'Python.h'" (MSVC, in any language) while Triton/Inductor JIT-compiles its cuda_utils.c / main.c
  helper or a CUDA extension builds. Triton compiles a small C module against the running interpreter's headers at the
  first kernel launch; a Linux interpreter without its -dev package (Docker's slim images, a distribution's python3
  without python3-dev) or Windows' embeddable Python (ComfyUI portable's python_embeded, uv-managed embedded Pythons)
  has none.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret.environment import os_family
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, text_of

PYTHON_HEADERS_MISSING = Code(
    code="python-headers-missing",
    title="Python's C headers (Python.h) are missing: Triton or an extension cannot compile against this interpreter",
    area="system",
    severity="error",
    explanation={
        "what": "torch.compile / a Triton kernel / an extension build stops at 'fatal error: Python.h: No such file or "
        "directory' (MSVC: 'C1083: Cannot open include file: Python.h'), often while compiling Triton's cuda_utils.c.",
        "why": "Triton compiles a small C helper against the running interpreter's headers the first time it launches a "
        "kernel, and extensions build against them. A Linux Python without its development package (Docker slim images, "
        "a distribution's python3 without python3-dev) or Windows' embeddable Python (ComfyUI portable's python_embeded) "
        "has no include/ directory.",
        "confirm": "python -c \"import sysconfig, os; p = sysconfig.get_paths()['include']; print(p, "
        "os.path.exists(os.path.join(p, 'Python.h')))\"  # False",
        "fix": "Linux: install the interpreter's development package (Debian/Ubuntu python3-dev or python3.X-dev, "
        "Fedora/RHEL python3-devel; in Docker, a non-slim image or that package). Windows embeddable Python: copy the "
        "include and libs folders of a full Python of the same version into the embedded Python's folder.",
    },
    links=(
        "https://github.com/woct0rdho/triton-windows/issues/77",
        "https://github.com/daydreamlive/scope/issues/84",
    ),
)

_EMBEDDED = re.compile(r"python_embed+ed|embeddable|python\d{2,3}\._pth", re.I)


@check(PYTHON_HEADERS_MISSING)
def python_headers_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, PYTHON_HEADERS_MISSING)
    if not said:
        return
    text = text_of(fx)
    windows = os_family(fx) == "windows" or "C1083" in said[1] or re.search(r"[A-Za-z]:\\", text)
    if windows:
        embedded = _EMBEDDED.search(text) or (fx.str("python.executable") or "").lower().find("embed") >= 0
        cmds = (
            "python --version  # the embedded Python's version, e.g. 3.12.7",
            "# copy the 'include' and 'libs' folders of a full Python of exactly that version (python.org's installer) "
            "into the folder that holds the embedded python.exe",
            "# then run the program again (delete %LOCALAPPDATA%\\triton\\cache if the failure was Triton's)",
        )
        title = "This Python has no C headers (Python.h)" + (
            ": the embeddable Python ships without include/ and libs/ — copy them from a full Python of the same version"
            if embedded
            else ": copy include/ and libs/ from a full Python of the same version, or use a full Python"
        )
    else:
        cmds = (
            "sudo apt-get install -y python3-dev  # Debian/Ubuntu; python3.X-dev for another python3.X; Fedora/RHEL: sudo dnf install python3-devel",
            "# in Docker: the same in the image (slim images have no headers), or a non-slim Python image",
            "python -c \"import sysconfig; print(sysconfig.get_paths()['include'])\"  # now holds Python.h",
        )
        title = "This Python has no C headers (Python.h): install its development package"
    yield PYTHON_HEADERS_MISSING.finding(
        title=title,
        evidence={said[0]: said[1]},
        fix=Fix(cmds, "Triton and extensions compile C code against the running interpreter's headers."),
    )


def register():
    return [python_headers_missing]
