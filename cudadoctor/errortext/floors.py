"""A minimum NVIDIA driver stated in words — a program's documentation, a release note, a container's banner, quoted by
the reporter: "driver 546.33 and later", "NVIDIA driver 530 or newer", "driver version >= 525.60.13", "requires NVIDIA
driver 535", "minimum driver version: 450.80.02", "built for NVIDIA Driver Release 530.30 or later".

Read by the prose reader (readers/prose.py: such a number is a requirement, not the installed driver) and by the
driver-too-old check (checks/drv10.py: the driver shown against it). Pure.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

_VER = r"(?P<v>[1-9]\d{2}(?:\.\d{1,3}){0,2})(?![\d.]*\d)"
STATED_FLOOR = re.compile(
    r"\bdrivers?(?:\s+release)?(?:\s+version)?\s*(?:of\s+|is\s+|:\s*)?(?:>=|≥|at least\s+)?\s*v?"
    + _VER.replace("?P<v>", "?P<a>")
    + r"(?:\+(?![\w.])|\s*(?:and|or)\s+(?:any\s+)?(?:later|newer|above|higher|greater|up)\b)"  # "530+", not "530 + CUDA"
    + r"|\bdrivers?(?:\s+version)?\s*(?:>=|≥)\s*v?"
    + _VER.replace("?P<v>", "?P<b>")
    + r"|(?:\brequires?|\brequired|\bneeds?|\bminimum|\bat least)\s+(?:an?\s+|the\s+)?(?:nvidia\s+)?(?:gpu\s+|graphics\s+)?"
    + r"drivers?(?:\s+version)?\s*(?:of\s+|is\s+|:\s*)?(?:>=|≥|at least\s+)?\s*v?"
    + _VER.replace("?P<v>", "?P<c>"),
    re.I,
)


def stated_floor(text: str) -> Optional[Tuple[str, str]]:
    """(minimum driver, the line) of the first minimum driver the text states in words (STATED_FLOOR), or None."""
    m = STATED_FLOOR.search(text)
    if not m:
        return None
    v = m.group("a") or m.group("b") or m.group("c")
    start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
    return v, text[start : len(text) if end < 0 else end].strip()[:300]


def floor_spans(line: str) -> Iterator[Tuple[int, int]]:
    """The (start, end) of each stated minimum driver in the line."""
    for m in STATED_FLOOR.finditer(line):
        yield m.start(), m.end()
