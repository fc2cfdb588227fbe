"""A shared library that asks for an executable stack, refused by glibc 2.41 and later (session 25, from blind batch
b223 and the threads of the class: CTranslate2 under WhisperX/faster-whisper, libffi on HPPA, InspireFace, Valve's
engine.so, libpdbg, melonDS):

- library-requires-executable-stack: "<lib>.so: cannot enable executable stack as shared object requires: Invalid
  argument". Since glibc 2.41, dlopen no longer makes the stack executable for a library whose GNU_STACK header asks for
  it (or that has none), when the program's stack is not already executable; loading it fails instead (glibc 2.41's
  NEWS, https://lists.gnu.org/archive/html/info-gnu/2025-01/msg00014.html). Python imports extension modules and their
  bundled libraries with dlopen, so a wheel built with that flag (CTranslate2 4.4-4.5's bundled libctranslate2) stops
  importing after a distribution moves to glibc 2.41 (Arch/Artix, Debian 13, Fedora 42).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

LIBRARY_REQUIRES_EXECUTABLE_STACK = Code(
    code="library-requires-executable-stack",
    title="A shared library asks for an executable stack, which glibc 2.41 and later refuse to grant at load time",
    area="system",
    severity="error",
    explanation={
        "what": "Importing a package fails with '<lib>.so: cannot enable executable stack as shared object requires: "
        "Invalid argument' (CTranslate2 under WhisperX or faster-whisper is the common one), after the system's glibc "
        "was updated.",
        "why": "glibc 2.41 stopped making the stack executable when dlopen loads a library whose GNU_STACK header asks "
        "for it (or that has no GNU_STACK header); the load fails instead. Python loads extension modules and the "
        "libraries they bundle with dlopen, so a wheel linked with an executable-stack flag no longer imports.",
        "confirm": "`ldd --version` (2.41 or later); `patchelf --print-execstack <the .so named>` (or `readelf -lW <lib> "
        "| grep GNU_STACK`: RWE) shows the flag.",
        "fix": "Upgrade the package to a release built without the flag; or clear the flag on the named library "
        "(`patchelf --clear-execstack <lib>`, or `execstack -c <lib>`), which is safe when the library does not really "
        "execute code on its stack; or, as a stopgap, GLIBC_TUNABLES=glibc.rtld.execstack=2 for that program "
        "(Debian's glibc 2.41 changelog).",
    },
    links=(
        "https://lists.gnu.org/archive/html/info-gnu/2025-01/msg00014.html",
        "https://github.com/ValveSoftware/Source-1-Games/issues/6978",
        "https://github.com/HyperInspire/InspireFace/issues/229",
    ),
)

#: The library the loader names before the message ("ImportError: libctranslate2-d3638643.so.4.4.0: cannot enable ...").
_LIB = re.compile(r"([\w.+-]+\.so(?:\.[\w.]+)?): cannot enable executable stack")


@check(LIBRARY_REQUIRES_EXECUTABLE_STACK)
def library_requires_executable_stack(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, LIBRARY_REQUIRES_EXECUTABLE_STACK)
    if not said:
        return
    m = _LIB.search(said[1])
    lib = m.group(1) if m else "<the .so named in the error>"
    ct2 = "ctranslate2" in lib.lower()
    cmds = [
        "ldd --version | head -1  # glibc 2.41 or later refuses such libraries",
        f'find "$(python -c "import site; print(site.getsitepackages()[0])")" -name "{lib}"  # where the library is',
        f"patchelf --clear-execstack <path to {lib}>  # or: execstack -c <path>; the flag is seldom really needed",
    ]
    if ct2:
        cmds.insert(1, "pip install -U ctranslate2  # a release built without the flag, if one supports your CUDA")
    yield LIBRARY_REQUIRES_EXECUTABLE_STACK.finding(
        title=f"{lib} asks for an executable stack, which this system's glibc (2.41 or later) refuses at load time: "
        "clear the flag or use a release built without it",
        evidence={said[0]: said[1], "library": lib},
        fix=Fix(
            tuple(cmds),
            "glibc 2.41 no longer makes the stack executable when dlopen loads a library that asks for it; Python "
            "imports extension modules and their bundled libraries with dlopen.",
        ),
    )


def register():
    return [library_requires_executable_stack]
