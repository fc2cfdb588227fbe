"""ptxas's "Unsupported .version X; current version is 'Y'": the PTX ISA versions name two CUDA releases
(kb/ptx_isa.json) — the one that wrote the PTX and the one whose ptxas reads it. Pure helpers; the finding is made by
checks/driver_compat.py (the driver-too-old check) for the driver's own JIT.

Who reads the PTX decides the cause. "ptxas application ptx input" is ptxas run on PTX handed over in memory: the
driver's JIT (cuModuleLoadData / cuLinkAddData; numba, hashcat, OpenPCDet, ILGPU), so the driver is older than the CUDA
that wrote the PTX. "ptxas /tmp/x.ptx" is a ptxas binary run on a file (a toolkit's, chosen by Triton, XLA, tinygrad):
that toolkit is older than the compiler that wrote the PTX, and the driver is not in question — no claim here.
nvJitLink and nvPTXCompiler embed ptxas too and print the in-memory form; when the text names them, the library (not the
driver) is the old reader, so no driver claim either.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

#: ptxas's message (its spacing varies: "fatal   :" in real logs, "fatal :" retyped).
_UNSUPPORTED = re.compile(
    r"ptxas\s+(?P<src>application ptx input|\S[^\n,]*?)\s*,\s*line\s+\d+\s*;\s*fatal\s*:\s*"
    r"Unsupported \.version (?P<want>\d+\.\d+)\s*;\s*current version is '(?P<have>\d+\.\d+)'",
    re.I,
)
#: The libraries that embed ptxas and print the same in-memory form.
_EMBEDDED = re.compile(r"nvJitLink|NVJITLINK_|nvPTXCompiler|NVPTXCOMPILE_", re.I)


class PtxTooNew(NamedTuple):
    want_ptx: str
    want_cuda: str
    have_ptx: str
    have_cuda: str
    line: str


def _cuda_of(ptx: str) -> Optional[str]:
    from cudadoctor.kb import _load

    got = _load("ptx_isa")["ptx_to_cuda"].get(ptx)
    return str(got) if got else None


def _too_new(text: str, jit: bool) -> Optional[PtxTooNew]:
    """The first "Unsupported .version" refusal of the driver's JIT (``jit``) or of a ptxas binary run on a file, with
    both CUDA releases; None for nvJitLink/nvPTXCompiler or a PTX version the table does not know."""
    if _EMBEDDED.search(text):
        return None
    for m in _UNSUPPORTED.finditer(text):
        if (m.group("src").lower() == "application ptx input") != jit:
            continue
        want, have = _cuda_of(m.group("want")), _cuda_of(m.group("have"))
        if want and have:
            line = text[text.rfind("\n", 0, m.start()) + 1 : m.end()].strip()[:400]
            return PtxTooNew(m.group("want"), want, m.group("have"), have, line)
    return None


def driver_jit_too_old(text: str) -> Optional[PtxTooNew]:
    """The driver's JIT refusing PTX newer than it reads, with both CUDA releases (None for a ptxas binary run on a file,
    for nvJitLink/nvPTXCompiler, or a PTX version the table does not know)."""
    return _too_new(text, jit=True)


def ptxas_file_too_old(text: str) -> Optional[PtxTooNew]:
    """A ptxas binary run on a .ptx file (Triton's, XLA's, a toolkit's) refusing PTX newer than it reads, with both CUDA
    releases: the toolkit of that ptxas is older than the compiler that wrote the PTX (checks/triton21.py). None for the
    driver's JIT (driver_jit_too_old), for nvJitLink/nvPTXCompiler, or a PTX version the table does not know."""
    return _too_new(text, jit=False)
