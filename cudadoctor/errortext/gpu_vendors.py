"""Entities: GPUs that are not NVIDIA's (AMD Radeon / Instinct, Intel Arc / Iris / UHD, Apple M-series and Macs), and
whether an NVIDIA GPU is named at all, in any line of any text (a pasted issue's title and prose included).

Not sentences but names: the vendor table is data (kb/errors/codes5.json ``non_nvidia_gpus``, with its sources). The
readers record what a paste names (``pasted.other_gpus``, ``pasted.nvidia_named``); the checks read it and the error
texts through the same functions. Pure: no I/O (the table is read-only package data).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

from .signatures import kb_document


@functools.lru_cache(maxsize=1)
def _table() -> Tuple[Tuple[Tuple[str, "re.Pattern[str]"], ...], "re.Pattern[str]"]:
    doc: Dict[str, Any] = kb_document("codes5.json")["non_nvidia_gpus"]
    more: Dict[str, Any] = kb_document("gpuid9.json")["more_non_nvidia_gpus"]
    more23: Dict[str, Any] = kb_document("b23.json")["more_non_nvidia_gpus"]
    rows = doc["vendors"] + more["vendors"] + more23["vendors"]
    vendors = tuple((v["vendor"], re.compile(v["regex"], re.I)) for v in rows)
    return vendors, re.compile(doc["nvidia_named"])


@functools.lru_cache(maxsize=1)
def _absent() -> "re.Pattern[str]":
    return re.compile(kb_document("gpuid9.json")["nvidia_absent"]["regex"])


#: Vendor keys of the tables, as the findings name them.
VENDOR_NAMES = {"amd": "AMD", "intel": "Intel", "apple": "Apple", "qualcomm": "Qualcomm", "moorethreads": "Moore Threads"}


def other_gpus(lines: Iterable[str]) -> List[Dict[str, Any]]:
    """{vendor, name, line} of each non-NVIDIA GPU (or Mac) named, first mention per name, line numbers from 1."""
    vendors, _ = _table()
    out: List[Dict[str, Any]] = []
    seen = set()
    for n, line in enumerate(lines, 1):
        low = line[:2000]
        for vendor, rx in vendors:
            for m in rx.finditer(low):
                key = (vendor, m.group(0).lower())
                if key not in seen:
                    seen.add(key)
                    out.append({"vendor": vendor, "name": m.group(0).strip(), "line": n})
        if len(out) >= 16:
            break
    return out


def nvidia_named(lines: Iterable[str]) -> Optional[Tuple[int, str]]:
    """(line number, words) of the first line naming an NVIDIA GPU by its model (GeForce, RTX 3090, Tesla T4, A100 ...)
    or showing nvidia-smi's banner values; "do I need an nvidia GPU?" names none."""
    _, rx = _table()
    for n, line in enumerate(lines, 1):
        m = rx.search(line[:2000])
        if m:
            return n, m.group(0)
    return None


def nvidia_absent(lines: Iterable[str]) -> Optional[Tuple[int, str]]:
    """(line number, words) of the first line where a person says the machine has no NVIDIA GPU ("I don't have an
    NVIDIA GPU", "my GPU is not by nvidia", "non-NVIDIA GPU"); a program's "No NVIDIA GPU found" is not one (it says
    only what that program saw)."""
    rx = _absent()
    for n, line in enumerate(lines, 1):
        m = rx.search(line[:2000])
        if m:
            return n, m.group(0)
    return None


def nvidia_stated(text: str) -> Optional[str]:
    """The words where a person says the machine has an NVIDIA GPU without its model ("I have an NVIDIA GPU"), or None."""
    m = re.compile(kb_document("gpuid9.json")["nvidia_stated"]["regex"], re.M).search(text[:200000])
    return m.group(0) if m else None


def vendor_of(name: str) -> Optional[str]:
    """'amd' / 'intel' / 'apple' / 'qualcomm' / 'moorethreads' for a GPU name of another vendor, None otherwise (an NVIDIA name, or unknown)."""
    vendors, _ = _table()
    return next((v for v, rx in vendors if rx.search(name or "")), None)
