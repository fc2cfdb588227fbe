"""Small pure helpers shared by the built-in checks: the error texts the facts hold.

What the facts mean lives in :mod:`cudadoctor.interpret`; fix commands in :mod:`._fixes`.
Nothing here does I/O. The knowledge base (``cudadoctor.kb``) is read-only package data.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from cudadoctor import kb as _kb
from cudadoctor.errortext.signatures import code_pattern
from cudadoctor.errortext.sources import error_texts  # noqa: F401  (re-exported for the checks)
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix

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


#: A kernel message the log wraps over lines that each start again with "NVRM:" (dmesg, journalctl -k).
_NVRM_WRAP = re.compile(r"\s*\n\s*(?:\[[\d. ]+\]\s*)?(?:\w+ \d+ [\d:]+ \S+ )?(?:kernel: )?NVRM:\s*")


def _unwrapped(text: str) -> str:
    return re.sub(r"\s+", " ", _NVRM_WRAP.sub(" ", text))


def find_text(fx: Facts, pattern: str) -> Optional[Tuple[str, str]]:
    """The first error text matching ``pattern`` (regex, case-insensitive): (where, matched line)."""
    rx = re.compile(pattern, re.IGNORECASE)
    for where, text in error_texts(fx):
        m = rx.search(text) or rx.search(re.sub(r"\s+", " ", text)) or rx.search(_unwrapped(text))
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            return where, text[start : end if end != -1 else None].strip()[:400]
    return None


def text_finding(
    code: Code, fx: Facts, title: str, cmds: Sequence[str], why: str, severity: Optional[str] = None
) -> Iterator[Finding]:
    """The finding ``code`` gives from the user's error text alone (the matched line is the evidence)."""
    said = error_match(fx, code)
    if said:
        yield code.finding(title=title, evidence={said[0]: said[1]}, fix=Fix(tuple(cmds), why), severity=severity)


# ---------------------------------------------------------------- the GPUs NVML lists (health, gpu_state)


def nvml_devices(fx: Facts) -> List[Dict[str, Any]]:
    return [d for d in fx.dicts("nvml.devices") if isinstance(d.get("index"), int)]


def gpu_who(d: Dict[str, Any]) -> Dict[str, Any]:
    return {"gpu": d.get("index"), "name": d.get("name"), "pci_bus_id": d.get("pci_bus_id")}


def gpu_label(d: Dict[str, Any]) -> str:
    name = d.get("name") if isinstance(d.get("name"), str) else "GPU"
    return f"GPU {d.get('index')} ({name})"
