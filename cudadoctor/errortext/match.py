"""Matching signatures in normalised text: every match with its line, its role in the traceback and its score.

Ranking, for each code, takes its best match (see :mod:`.engine`):

* specificity: how much literal text the signature pins down, times the signature's confidence;
* position: a match on the final exception line (the last ``SomeError: ...`` line and the
  message lines that follow it) counts most, other exception lines less, traceback frames and
  log lines least; later lines slightly more than earlier ones.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..model import Code

from .extract import table_signatures
from .normalize import ROLE_WEIGHT, line_roles, normalize
from .signatures import Signature, compiled, kb_signatures, prefilter

# --- matching --------------------------------------------------------------------------------

_REGEX_SYNTAX = re.compile(r"\\[dDwWsSbBAZ]|\\.|\[[^\]]*\]|\(\?[:!=<]*|[.*+?(){}|^$]|\{\d*,?\d*\}")


def specificity(signature: str, matched: str) -> float:
    """0.3 .. 1.0: how much literal text the signature pins down."""
    literal = len(_REGEX_SYNTAX.sub("", signature))
    n = min(literal, len(matched.strip()))
    return 0.3 + 0.7 * min(n, 60) / 60


def for_codes(codes: Iterable[Any]) -> List[Signature]:
    """The signatures of these codes: the knowledge base's (error_signatures.json, then those made from the error
    and Xid tables by errortext/extract.py), then each Code's own (not repeated)."""
    codes = list(codes)
    names = {c.code for c in codes}
    out = [s for s in (*kb_signatures(), *table_signatures()) if s.code in names]
    seen = {(s.code, s.regex) for s in out}
    for c in codes:
        for rx in c.signatures:
            if (c.code, rx) not in seen:
                seen.add((c.code, rx))
                out.append(Signature(code=c.code, regex=rx, confidence="high", origin="catalogue"))
    return out


def of_code(code: Any) -> List[Signature]:
    return for_codes([code])


def code_pattern(code: Any) -> Optional[str]:
    """One regex for every signature of ``code`` (for a check's own look-up), None when it has none."""
    sigs = of_code(code)
    return "|".join(f"(?:{s.regex})" for s in sigs) or None


def code_matches(code: Code, text: str) -> List[str]:
    """The signatures of ``code`` (its signature data in kb/errors/ and its own) found in ``text``,
    normalised by the error-text engine: the matched substrings."""
    norm = normalize(text)
    flat = re.sub(r"\s+", " ", norm)
    hits = []
    for sig in of_code(code):
        m = compiled(sig.regex).search(norm) or compiled(sig.regex).search(flat)
        if m:
            hits.append(m.group(0))
    return hits


@dataclass
class Match:
    signature: str
    text: str
    line: int  # 1-based, in the normalised text
    line_text: str
    role: str
    score: float
    where: str = "user_error"  # which error text of the facts: user_error, torch.error.message, ...
    sig: Optional[Signature] = None

    def to_dict(self) -> Dict[str, Any]:
        d = {
            "signature": self.signature,
            "text": self.text,
            "line": self.line,
            "line_text": self.line_text,
            "role": self.role,
            "score": round(self.score, 3),
            "where": self.where,
        }
        if self.sig is not None:
            d["confidence"] = self.sig.confidence
            if self.sig.implies:
                d["implies"] = self.sig.implies
            if self.sig.sources:
                d["sources"] = list(self.sig.sources)
        return d


def _line_index(flat_starts: List[int], pos: int) -> int:
    lo, hi = 0, len(flat_starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if flat_starts[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


#: Matching reads at most this much of one line, and of the whole text (its head and its tail).
MAX_LINE = 4096
MAX_MATCHED = 96 * 1024


def _head_tail_lines(lines: Sequence[str]) -> set:
    """Indices of the lines that are matched: all of them, or for a huge paste its first 16 KB and last 80 KB."""
    total = sum(min(len(x), MAX_LINE) + 1 for x in lines)
    if total <= MAX_MATCHED:
        return set(range(len(lines)))
    keep, size = set(), 0
    for i, x in enumerate(lines):
        if size > 16 * 1024:
            break
        keep.add(i)
        size += min(len(x), MAX_LINE) + 1
    size = 0
    for i in range(len(lines) - 1, -1, -1):
        if size > MAX_MATCHED - 16 * 1024:
            break
        keep.add(i)
        size += min(len(lines[i]), MAX_LINE) + 1
    return keep


def find_matches(
    codes: Sequence[Code], text: str, where: str = "user_error", sigs: Optional[Sequence[Signature]] = None
) -> Tuple[Dict[str, List[Match]], List[str]]:
    """Every signature match of every code in the normalised text. Returns (matches, problems)."""
    lines = text.split("\n")
    roles = line_roles(lines)
    # Position counts among the lines with content, so blank lines a wrapper adds or removes
    # (a fence, a <details> block) do not move a match.
    content = [0] * len(lines)
    for k in range(len(lines)):
        content[k] = (content[k - 1] if k else 0) + (1 if lines[k].strip() else 0)
    n = max(content[-1] if content else 0, 1)
    # The whitespace-collapsed text, with where each line starts in it.
    starts, parts, pos = [], [], 0
    budget = _head_tail_lines(lines)
    for k, line in enumerate(lines):
        piece = re.sub(r"\s+", " ", line.strip()) if k in budget else ""
        if len(piece) > MAX_LINE:  # a line this long is a blob; its ends carry the message
            piece = piece[: MAX_LINE // 2] + " … " + piece[-MAX_LINE // 2 :]
        starts.append(pos)
        parts.append(piece)
        pos += len(piece) + 1
    flat = " ".join(parts)
    out: Dict[str, List[Match]] = {}
    problems: List[str] = []
    low = flat.lower()
    for sig in for_codes(codes) if sigs is None else sigs:
        need = prefilter(sig.regex)
        if need is not None and not any(lit in low for lit in need):
            continue
        try:
            rx = compiled(sig.regex)
        except re.error as e:
            problems.append(f"{sig.code}: signature {sig.regex!r} is not a valid regular expression ({e})")
            continue
        best: Dict[int, Match] = {}
        for m in rx.finditer(flat):
            if not m.group(0).strip():
                continue
            i = _line_index(starts, m.start())
            w = ROLE_WEIGHT[roles[i]]
            # A match spanning into the final exception counts as final.
            j = _line_index(starts, max(m.end() - 1, m.start()))
            if any(roles[k] == "final" for k in range(i, j + 1)):
                w, role = ROLE_WEIGHT["final"], "final"
            else:
                role = roles[i]
            s = specificity(sig.regex, m.group(0)) * w * sig.weight * (1 + 0.1 * (content[j] - 1) / n)
            if i not in best or s > best[i].score:
                # The line it is on; a match running over several lines (a wrapped message) quotes them all.
                said = " ".join(x.strip() for x in lines[i : j + 1] if x.strip())[:400]
                best[i] = Match(sig.regex, m.group(0).strip()[:300], i + 1, said, role, s, where, sig)
        if best:
            out.setdefault(sig.code, []).extend(best.values())
    return out, problems
