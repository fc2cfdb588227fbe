"""The evidence pass: the error texts of a facts document, normalised and matched once per run.

Every reader of error text goes through here: the checks (:func:`said`, :func:`search`,
:func:`text_of`), `check`'s adjudication, `triage`, `report` and `check --from-text` (through
:func:`cudadoctor.errortext.rank`). The pass is cached on the texts themselves, so the checks of
one run and the ranking after them share one normalisation and one match of every signature.

:data:`PROVIDERS` is THE list of evidence providers, run in order over the normalised texts: the
signature matcher first (kb/errors/*.json and the codes' own signatures). A provider is a
function ``(texts, extra) -> (matches by code, problems)`` where ``texts`` are (where,
normalised text) pairs and ``extra`` the catalogue signatures of the codes asked about.

Pure: no I/O (the signature data is read-only package data).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from .entities import entity_find
from .extract import table_signatures
from .match import Match, find_matches
from .memfigures import figures_find
from .normalize import normalize
from .signatures import Signature, compiled, kb_signatures
from .sources import error_texts

Texts = Tuple[Tuple[str, str], ...]
Found = Tuple[Dict[str, List[Match]], List[str]]


Provider = Callable[[Texts, Tuple[Signature, ...]], Found]


def each_text(find: Callable[[str, str], Found]) -> Provider:
    """A provider from a matcher of one normalised text: ``find(text, where) -> (matches by code, problems)``."""

    def provider(texts: Texts, extra: Tuple[Signature, ...] = ()) -> Found:
        out: Dict[str, List[Match]] = {}
        problems: List[str] = []
        for where, text in texts:
            found, probs = find(text, where)
            for code, ms in found.items():
                out.setdefault(code, []).extend(ms)
            problems += [p for p in probs if p not in problems]
        return out, problems

    provider.__name__ = getattr(find, "__name__", "provider")
    return provider


def signature_matches(texts: Texts, extra: Tuple[Signature, ...] = ()) -> Found:
    """Every signature (kb/errors/*.json, then ``extra``: the codes' own) matched in every normalised text."""
    sigs = list(kb_signatures())
    seen = {(s.code, s.regex) for s in sigs}
    sigs += [s for s in extra if (s.code, s.regex) not in seen]
    return each_text(lambda text, where: find_matches((), text, where, sigs))(texts, extra)


def table_matches(texts: Texts, extra: Tuple[Signature, ...] = ()) -> Found:
    """The signatures made from the kb's error and Xid tables (CUresult/cudaError_t, NCCL, cuDNN,
    cuBLAS, Xid: errortext/extract.py, kbsrc's) matched in every normalised text."""
    sigs = list(table_signatures())
    return each_text(lambda text, where: find_matches((), text, where, sigs))(texts, extra)


#: THE evidence providers, run in this order on every run's normalised error texts: the signature
#: data first, then the kb tables. Another provider joins with one line here, e.g. a matcher of one
#: text: ``each_text(lambda text, where: ...)``.
PROVIDERS: Tuple[Provider, ...] = (signature_matches, table_matches, each_text(entity_find), each_text(figures_find))


@dataclass(frozen=True)
class Evidence:
    """What one pass found: the normalised texts, and every provider's matches by code."""

    texts: Texts  # (where, normalised text), in error_texts order
    matches: Dict[str, List[Match]]
    problems: Tuple[str, ...]

    def of(self, code: str) -> List[Match]:
        return self.matches.get(code, [])

    def first(self, code: str) -> Optional[Match]:
        """The code's first match in reading order (the first text that has one, its first line)."""
        order = {w: i for i, (w, _t) in enumerate(self.texts)}
        ms = self.of(code)
        return min(ms, key=lambda m: (order.get(m.where, len(order)), m.line)) if ms else None

    def search(self, pattern: str) -> Optional[Tuple[str, str]]:
        """(where, line) of the first normalised text line matching ``pattern`` (case-insensitive;
        matched over the text with whitespace collapsed, so a wrapped message matches)."""
        rx = compiled(pattern)
        for where, text in self.texts:
            m = rx.search(text)
            if m:
                return where, _line_at(text, m)[:400]
            m = rx.search(_flat(text))
            if m:
                return where, _line_of(text, m.group(0))[:400]
        return None

    def text(self) -> str:
        """Every normalised text, one after another."""
        return "\n".join(t for _w, t in self.texts)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _line_at(text: str, m: "re.Match[str]") -> str:
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return text[start : end if end != -1 else None].strip()


def _line_of(text: str, matched: str) -> str:
    """The line where a match over the collapsed text begins (its first word located in the text)."""
    head = matched.split(" ", 1)[0]
    i = text.find(head)
    if i < 0:
        return matched.strip()
    start = text.rfind("\n", 0, i) + 1
    end = text.find("\n", i)
    return text[start : end if end != -1 else None].strip()


@functools.lru_cache(maxsize=64)
def of_texts(texts: Texts, extra: Tuple[Signature, ...] = ()) -> Evidence:
    """THE pass: normalise each (where, text) once, run every provider once; cached per texts."""
    norm: Texts = tuple((w, normalize(t)) for w, t in texts)
    matches: Dict[str, List[Match]] = {}
    problems: List[str] = []
    for provider in PROVIDERS:
        found, probs = provider(norm, extra)
        for code, ms in found.items():
            matches.setdefault(code, []).extend(ms)
        problems += [p for p in probs if p not in problems]
    return Evidence(norm, matches, tuple(problems))


def catalogue_signatures(codes: Iterable[Any]) -> Tuple[Signature, ...]:
    """The signatures codes declare themselves (plugins' ``Code.signatures``), as data."""
    return tuple(Signature(code=c.code, regex=rx, confidence="high", origin="catalogue") for c in codes for rx in c.signatures)


def of_facts(fx: Any, codes: Iterable[Any] = ()) -> Evidence:
    """The evidence of a facts document's error texts (see :func:`error_texts`)."""
    return of_texts(tuple(error_texts(fx)), catalogue_signatures(codes))


def said(fx: Any, code: Any) -> Optional[Tuple[str, str]]:
    """(where, line) of the first error text line that a signature of ``code`` matches, or None."""
    m = of_facts(fx, [code] if code.signatures else ()).first(code.code)
    return (m.where, m.line_text) if m else None


def search(fx: Any, pattern: str) -> Optional[Tuple[str, str]]:
    """(where, line) of the first normalised error text line matching ``pattern``, or None."""
    return of_facts(fx).search(pattern)


def text_of(fx: Any) -> str:
    """Every error text of the facts, normalised, one after another (for a check reading values in it)."""
    return of_facts(fx).text()
