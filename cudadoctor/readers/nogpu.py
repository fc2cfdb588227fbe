"""A person's statement that the machine has no GPU at all (round 11, plat11): "I don't have a GPU", "I didn't have a
graphics card on my work computer", "my laptop which does not contain a graphics card". With CUDA asked for and
unavailable, and no NVIDIA GPU shown anywhere, that is no-nvidia-driver's "no NVIDIA GPU at all" form
(checks/plat10.py no_gpu_said). The wording lives in kb/errors/plat11.json (``no_gpu_said``) with its sources.

:func:`read` returns ``{line, text, said}`` of the first such line, or None. Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, Iterable, Optional

from cudadoctor.errortext import kb_document

MAX_LINE = 2000


@functools.lru_cache(maxsize=1)
def _said() -> "re.Pattern[str]":
    return re.compile(kb_document("plat11.json")["no_gpu_said"]["regex"])


def read(lines: Iterable[str]) -> Optional[Dict[str, Any]]:
    """The first line where a person says the machine has no GPU, or None."""
    rx = _said()
    for n, raw in enumerate(lines, 1):
        line = raw[:MAX_LINE]
        m = rx.search(line)
        if m:
            return {"line": n, "text": line.strip()[:300], "said": m.group(0)}
    return None


def fill(facts: Dict[str, Any], got: Optional[Dict[str, Any]]) -> bool:
    """Record ``got`` as ``pasted.no_gpu_said``; returns whether anything was recorded."""
    if not got:
        return False
    facts.setdefault("pasted", {})["no_gpu_said"] = dict(got)
    return True
