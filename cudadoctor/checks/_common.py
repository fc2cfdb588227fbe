"""Small pure helpers shared by the built-in checks: the error texts the facts hold.

What the facts mean lives in :mod:`cudadoctor.interpret`; fix commands in :mod:`._fixes`.
Nothing here does I/O. The knowledge base (``cudadoctor.kb``) is read-only package data.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional, Tuple

from cudadoctor import kb as _kb
from cudadoctor.errortext.signatures import code_pattern
from cudadoctor.errortext.sources import error_texts  # noqa: F401  (re-exported for the checks)
from cudadoctor.facts import Facts

INDEX = "https://download.pytorch.org/whl/"
PIP = "python -m pip"


def kb():
    return _kb


def any_of(patterns: Iterable[str]) -> str:
    """One regex matching any of ``patterns`` (e.g. a code's signatures), for :func:`find_text`."""
    return "|".join(f"(?:{p})" for p in patterns)


def error_match(fx: Facts, code) -> Optional[Tuple[str, str]]:
    """The first error text matching any signature of ``code`` (the engine's data and the Code's own)."""
    pattern = code_pattern(code)
    return find_text(fx, pattern) if pattern else None


def find_text(fx: Facts, pattern: str) -> Optional[Tuple[str, str]]:
    """The first error text matching ``pattern`` (regex, case-insensitive): (where, matched line)."""
    rx = re.compile(pattern, re.IGNORECASE)
    for where, text in error_texts(fx):
        m = rx.search(text) or rx.search(re.sub(r"\s+", " ", text))
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            return where, text[start : end if end != -1 else None].strip()[:400]
    return None
