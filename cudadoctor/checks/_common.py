"""Small pure helpers shared by the built-in checks: the error texts the facts hold.

What the facts mean lives in :mod:`cudadoctor.interpret`; fix commands in :mod:`._fixes`.
Nothing here does I/O. The knowledge base (``cudadoctor.kb``) is read-only package data.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple

from cudadoctor import kb as _kb
from cudadoctor.facts import Facts

INDEX = "https://download.pytorch.org/whl/"
PIP = "python -m pip"


def kb():
    return _kb


def error_texts(fx: Facts) -> List[Tuple[str, str]]:
    """Every error text the facts hold, as (where, text): the user's error, what torch said."""
    out: List[Tuple[str, str]] = []
    if fx.user_error():
        out.append(("user_error", fx.user_error()))
    for path in ("torch.error.message", "torch.cuda_init_error.message", "torch.cudnn_error.message",
                 "torch.failure.stderr_tail", "torch.stderr_tail"):
        s = fx.str(path)
        if s:
            out.append((path, s))
    for path in ("torch.import_warnings", "torch.cuda_init_warnings"):
        for w in fx.list(path) or []:
            if isinstance(w, str):
                out.append((path, w))
    for name in ("torchvision", "torchaudio"):
        s = fx.str(f"torch.companions.{name}.error.message")
        if s:
            out.append((f"torch.companions.{name}.error", s))
    s = fx.str("nvml.error")
    if s:
        out.append(("nvml.error", s))
    return out


def any_of(patterns: Iterable[str]) -> str:
    """One regex matching any of ``patterns`` (e.g. a code's signatures), for :func:`find_text`."""
    return "|".join(f"(?:{p})" for p in patterns)


def find_text(fx: Facts, pattern: str) -> Optional[Tuple[str, str]]:
    """The first error text matching ``pattern`` (regex, case-insensitive): (where, matched line)."""
    rx = re.compile(pattern, re.IGNORECASE)
    for where, text in error_texts(fx):
        m = rx.search(text)
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            return where, text[start: end if end != -1 else None].strip()[:400]
    return None
