"""Error signatures as data: every cudadoctor/kb/errors/*.json (sorted by name), plus the ``signatures`` a Code declares.

Each signature: the code it points to, a regular expression (matched case-insensitively over the
normalised text, whitespace collapsed), a confidence (high | medium | low), what it implies, which
facts would contradict it, the public threads its wording was taken from, and when it was checked.
A Code's own ``signatures`` (plugins, older built-ins) join them with confidence "high"
(:func:`cudadoctor.errortext.match.for_codes`).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

CONFIDENCE_WEIGHT = {"high": 1.0, "medium": 0.85, "low": 0.65}
_MISSING = object()


@dataclass(frozen=True)
class Contradiction:
    """A fact that, when it has this value, argues against the signature's code."""

    fact: str
    equals: Any = _MISSING
    one_of: Tuple[Any, ...] = ()
    why: str = ""
    present: Optional[bool] = None  # True: the fact having any value contradicts

    def holds(self, fx: Any) -> bool:
        v = fx.get(self.fact)
        if v is None or v == "":
            return False  # unknown is never evidence
        if self.present:
            return True
        if self.equals is not _MISSING:
            return v == self.equals
        return v in self.one_of

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"fact": self.fact, "why": self.why}
        if self.present:
            d["present"] = True
        elif self.equals is not _MISSING:
            d["equals"] = self.equals
        else:
            d["one_of"] = list(self.one_of)
        return d


@dataclass(frozen=True)
class Signature:
    code: str
    regex: str
    confidence: str = "high"
    implies: str = ""
    contradicted_by: Tuple[Contradiction, ...] = ()
    sources: Tuple[str, ...] = ()
    checked: str = ""
    origin: str = "kb"  # kb | catalogue (Code.signatures)

    @property
    def weight(self) -> float:
        return CONFIDENCE_WEIGHT.get(self.confidence, 0.85)

    def contradictions(self, fx: Any) -> List[Contradiction]:
        return [c for c in self.contradicted_by if c.holds(fx)] if fx is not None else []


class SignatureError(ValueError):
    pass


def parse(doc: Dict[str, Any]) -> Tuple[Signature, ...]:
    """The signatures of a document shaped like error_signatures.json; raises SignatureError."""
    out = []
    for i, s in enumerate(doc.get("signatures") or []):
        where = f"signature #{i} ({s.get('code')!r})"
        for key in ("code", "regex", "confidence", "implies", "sources", "checked"):
            if not s.get(key):
                raise SignatureError(f"{where}: lacks {key!r}")
        if s["confidence"] not in CONFIDENCE_WEIGHT:
            raise SignatureError(f"{where}: confidence {s['confidence']!r} is not one of {tuple(CONFIDENCE_WEIGHT)}")
        try:
            re.compile(s["regex"])
        except re.error as e:
            raise SignatureError(f"{where}: regex {s['regex']!r} does not compile ({e})") from None
        cons = []
        for c in s.get("contradicted_by") or []:
            if c.get("present"):
                cons.append(Contradiction(c["fact"], present=True, why=c.get("why", "")))
            elif "equals" in c:
                cons.append(Contradiction(c["fact"], equals=c["equals"], why=c.get("why", "")))
            else:
                cons.append(Contradiction(c["fact"], one_of=tuple(c.get("one_of") or ()), why=c.get("why", "")))
        out.append(
            Signature(
                code=s["code"],
                regex=s["regex"],
                confidence=s["confidence"],
                implies=s["implies"],
                contradicted_by=tuple(cons),
                sources=tuple(s["sources"]),
                checked=s["checked"],
            )
        )
    return tuple(out)


#: Where the signature data lives: every ``*.json`` file there is read, in sorted order.
ERRORS_DIR = Path(__file__).parent.parent / "kb" / "errors"


@functools.lru_cache(maxsize=None)
def kb_documents() -> Tuple[Tuple[str, Dict[str, Any]], ...]:
    """Every signature document in kb/errors/, as (file name, document), sorted by name."""
    # Plain paths (see kb._load: importlib.resources imported from two threads could deadlock).
    return tuple((f.name, json.loads(f.read_text(encoding="utf-8"))) for f in sorted(ERRORS_DIR.glob("*.json")))


def kb_document(name: str = "error_signatures.json") -> Dict[str, Any]:
    """One signature document of kb/errors/ (by default the first and largest)."""
    for n, doc in kb_documents():
        if n == name:
            return doc
    raise KeyError(name)


@functools.lru_cache(maxsize=None)
def program_patterns() -> Tuple["re.Pattern[str]", "re.Pattern[str]", "re.Pattern[str]"]:
    """(any program with its own CUDA code, a program that ships its own kernels, torch named): the other frameworks
    (b19.json other_frameworks: TensorFlow, JAX, Paddle, MXNet) and the programs with their own kernels or libtorch
    (b20.json own_kernel_programs: Ollama, dorado, Caffe, OpenMM...), and how a text names torch. Compiled once; the
    issue reader and the architecture checks read reports with them."""
    fw, own = kb_document("b19.json")["other_frameworks"], kb_document("b20.json")["own_kernel_programs"]
    return (
        re.compile(f"{fw['regex']}|{own['regex']}", re.I),
        re.compile(own["regex"], re.I),
        re.compile(fw["torch_named"], re.I),
    )


@functools.lru_cache(maxsize=None)
def kb_signatures() -> Tuple[Signature, ...]:
    """The signatures of every kb/errors/*.json, file by file in sorted order."""
    out: List[Signature] = []
    for name, doc in kb_documents():
        try:
            out.extend(parse(doc))
        except SignatureError as e:
            raise SignatureError(f"kb/errors/{name}: {e}") from None
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def compiled(regex: str) -> "re.Pattern[str]":
    return re.compile(regex, re.IGNORECASE)


_META = set(".^$*+?{}[]()|")
_CLASS_ESC = set("dDwWsSbBAZzGnrtfv0123456789")


@functools.lru_cache(maxsize=4096)
def prefilter(regex: str) -> Optional[Tuple[str, ...]]:
    """Lower-case literals of which the text must contain at least one for ``regex`` to match, or None.

    One literal per top-level alternative: its longest run of plain characters outside any group,
    character class or quantified atom. None when an alternative has no run of 4 or more (then the
    regex is always run). Lets the engine skip most signatures on a long paste with a substring test.
    """
    alts, depth, cur, i = [], 0, "", 0
    while i < len(regex):  # split at top-level |
        ch = regex[i]
        if ch == "\\":
            cur += regex[i : i + 2]
            i += 2
            continue
        if ch == "[":
            j = i + 1
            if j < len(regex) and regex[j] == "^":
                j += 1
            if j < len(regex) and regex[j] == "]":
                j += 1
            while j < len(regex) and regex[j] != "]":
                j += 2 if regex[j] == "\\" else 1
            cur += regex[i : j + 1]
            i = j + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "|" and depth == 0:
            alts.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    alts.append(cur)
    lits = []
    for alt in alts:
        best, run, depth, i = "", "", 0, 0
        while i < len(alt):
            ch = alt[i]
            if ch == "\\" and i + 1 < len(alt):
                nxt = alt[i + 1]
                i += 2
                if depth == 0 and nxt not in _CLASS_ESC and not nxt.isalpha():
                    run += nxt
                    continue
                best, run = max(best, run, key=len), ""
                continue
            if ch == "[":
                j = i + 1
                while j < len(alt) and alt[j] != "]":
                    j += 2 if alt[j] == "\\" else 1
                best, run = max(best, run, key=len), ""
                i = j + 1
                continue
            if ch in "?*{" and depth == 0:
                run = run[:-1]  # the quantified atom is optional
                if ch == "{":
                    i = alt.find("}", i) + 1 or len(alt)
                    best, run = max(best, run, key=len), ""
                    continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            if ch in _META or depth > 0:
                best, run = max(best, run, key=len), ""
            else:
                run += ch
            i += 1
        best = max(best, run, key=len)
        if len(best.strip()) < 4:
            return None
        lits.append(best.lower())
    return tuple(lits)
