"""Triage: from the error text a user saw to the likely finding codes, ranked, with evidence.

The knowledge lives in one place: each :class:`~cudadoctor.model.Code` declares the regular
expressions of the error texts it recognises (``Code.signatures``) next to its check; triage
reads them from the registry and never keeps a list of its own.

Pasted text is normalised first (ANSI colour codes, Markdown fences and quotes, HTML entities,
full-width punctuation, JSON-escaped notebook output), and matched both line by line and with
its whitespace collapsed (so a message hard-wrapped over two lines still matches).

Ranking, for each code, takes its best match:

* specificity: how much literal text the signature pins down (a long exact message beats a
  generic ``CUDA error``);
* position: a match on the final exception line (the last ``SomeError: ...`` line and the
  message lines that follow it) counts most, other exception lines less, traceback frames and
  log lines least; later lines slightly more than earlier ones;
* agreement with facts, when facts are given (``--live``, ``--facts``): a check that reports the
  same code on those facts confirms it (a large boost); a check that ran cleanly without
  reporting it lowers the score a little.

Pure: no I/O. The command in commands/triage.py gathers the text and the facts.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .document import clean, envelope
from .document import dumps as _dumps
from .model import Code, severity_rank

TRIAGE_KIND = "cudadoctor-triage"
TRIAGE_SCHEMA = 1
#: The tail of the text that is read (tracebacks end with what matters).
MAX_TEXT = 256 * 1024

# --- normalising pasted text -----------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Colour codes whose ESC was lost in a copy-paste ("[31mRuntimeError[0m") or written as ^[.
_ANSI_REMNANT = re.compile(r"(?:\^\[|\\x1b|\\033|\\u001b|\\e)?\[(?:\d{1,3}(?:;\d{1,3})*)?m")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})[\w+-]*\s*$")
_HTML_TAG = re.compile(r"</?(?:details|summary|code|pre|br|p|div|span|b|i|em|strong|kbd|samp|sub|sup)\b[^>]*>", re.I)
_BOX = re.compile(r"[│┃┆┊║]")  # rich / box-drawing tracebacks


def _unescape_json_blob(text: str) -> str:
    """Notebook outputs pasted as JSON ("stack": "...\\n...") carry escaped newlines and quotes."""
    if text.count("\\n") >= 3 and text.count("\n") < text.count("\\n"):
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
        text = re.sub(r"\\\\", r"\\", text)
    return text


def normalize(text: str) -> str:
    """Pasted error text as plain lines: what the signatures are matched against."""
    t = text[-MAX_TEXT:]
    t = t.replace("\r\n", "\n").replace("\r", "\n")
    t = _ANSI.sub("", t)
    t = _ANSI_REMNANT.sub("", t)
    t = _unescape_json_blob(t)
    t = unicodedata.normalize("NFKC", t)
    t = _HTML_TAG.sub("", t)
    if "&" in t and re.search(r"&(?:[a-z]{2,6}|#\d{2,5}|#x[0-9a-f]{2,4});", t, re.I):
        t = html.unescape(t)
    lines = []
    for line in t.split("\n"):
        line = re.sub(r"^\s*(?:>\s?)+", "", line)  # Markdown / e-mail quotes
        if _FENCE.match(line):
            continue
        line = _BOX.sub(" ", line)
        line = line.replace("\\_", "_").replace("\\*", "*").replace("`", "")
        line = clean(line, keep_tabs=True)
        lines.append(line.rstrip())
    return "\n".join(lines).strip("\n")


# --- where in the traceback -----------------------------------------------------------------

_EXC_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning)|AssertionError|KeyboardInterrupt)"
    r"(?:\s*\[[^\]]*\])?\s*:"  # Python: "RuntimeError: ...", "torch.cuda.OutOfMemoryError: ...", "OSError [WinError]:"
    r"|^\s*(?:E\s+)?(?:ERROR|Error|error|FATAL|Fatal|fatal|CUDA error|THCudaCheck FAIL|terminate called|"
    r"Segmentation fault|Illegal instruction|Aborted|ImportError|ModuleNotFoundError)\b"
)
# An exception named mid-line: a log prefix or an issue title before it ("[Issue]: OSError: [WinError 126] ...").
_EXC_INLINE = re.compile(r"(?:^|[\s:\]])(?:[A-Za-z_][\w.]{0,80}\.)?[A-Z]\w{0,60}(?:Error|Exception)(?:\s*\[[^\]]{0,40}\])?:\s")
_WARNING_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*Warning\s*:|^\s*(?:WARNING|Warning|warning)\b")
_FRAME_LINE = re.compile(r'^\s*(?:File\s+["\']?|File\s+~|at\s+|#\d+\s|\d+\s+0x|[-=]+>\s*\d+|\d+\s{2,}|Cell In\[)')
_TRACEBACK_HEAD = re.compile(r"^\s*(?:\w+\s+)?Traceback \(most recent call last\)|^\s*During handling of the above exception|"
                             r"^\s*The above exception was the direct cause")

#: Weights of where a match is.
ROLE_WEIGHT = {"final": 1.0, "exception": 0.75, "warning": 0.65, "context": 0.55, "frame": 0.4}


def line_roles(lines: Sequence[str]) -> List[str]:
    """For each line: final | exception | warning | frame | context.

    The final exception is the last error line (not a warning) and the message lines that
    follow it up to the next frame or traceback header; when there is no error line, the last
    warning line plays that part; when there is neither, the text is the message itself and
    every plain line is final.
    """
    roles: List[str] = []
    for line in lines:
        if _TRACEBACK_HEAD.match(line) or _FRAME_LINE.match(line):
            roles.append("frame")
        elif roles and roles[-1] == "frame" and re.match(r"\s+\S", line) and re.match(r"\s*File\b", lines[len(roles) - 1]):
            roles.append("frame")  # the source line printed under a frame: `    raise AssertionError(...)`
        elif _WARNING_LINE.match(line):
            roles.append("warning")
        elif _EXC_LINE.match(line) or _EXC_INLINE.search(line[:400]):
            roles.append("exception")
        else:
            roles.append("context")
    last = max((i for i, r in enumerate(roles) if r == "exception"), default=None)
    if last is None:
        last = max((i for i, r in enumerate(roles) if r == "warning"), default=None)
    if last is None:
        # No recognisable exception: the text is the message itself ("Failed to initialize NVML: ...").
        return ["final" if r == "context" else r for r in roles]
    roles[last] = "final"
    # The message continues on the following plain lines (up to a blank line, a frame or
    # another exception): "AssertionError:\nThe NVIDIA driver on your system is too old...".
    for j in range(last + 1, min(len(roles), last + 16)):
        if not lines[j].strip() or roles[j] != "context":
            break
        roles[j] = "final"
    return roles


# --- matching --------------------------------------------------------------------------------

_REGEX_SYNTAX = re.compile(r"\\[dDwWsSbBAZ]|\\.|\[[^\]]*\]|\(\?[:!=<]*|[.*+?(){}|^$]|\{\d*,?\d*\}")


def specificity(signature: str, matched: str) -> float:
    """0.3 .. 1.0: how much literal text the signature pins down."""
    literal = len(_REGEX_SYNTAX.sub("", signature))
    n = min(literal, len(matched.strip()))
    return 0.3 + 0.7 * min(n, 60) / 60


@dataclass
class Match:
    signature: str
    text: str
    line: int  # 1-based, in the normalised text
    line_text: str
    role: str
    score: float

    def to_dict(self) -> Dict[str, Any]:
        return {"signature": self.signature, "text": self.text, "line": self.line, "line_text": self.line_text,
                "role": self.role, "score": round(self.score, 3)}


@dataclass
class Candidate:
    code: Code
    matches: List[Match] = field(default_factory=list)
    score: float = 0.0
    confirmed: Optional[bool] = None  # True: the facts agree; False: a check ran and did not report it
    finding: Any = None
    root_cause_of: Optional[str] = None  # a facts-only error in a lower layer that explains this code

    def to_dict(self) -> Dict[str, Any]:
        c = self.code
        fix: Dict[str, Any]
        if self.finding is not None:
            fix = {"commands": list(self.finding.fix.commands), "why": self.finding.fix.why, "from": "facts"}
        else:
            fix = {"commands": [], "why": c.explanation.get("fix", ""), "from": "catalogue"}
        return {
            "code": c.code, "title": self.finding.title if self.finding is not None else c.title,
            "severity": c.severity, "area": c.area, "score": round(self.score, 3),
            "confidence": confidence(self.score), "confirmed_by_facts": self.confirmed,
            "matches": [m.to_dict() for m in self.matches], "fix": fix, "links": list(c.links),
            "root_cause_of": self.root_cause_of,
        }


def confidence(score: float) -> str:
    return "high" if score >= 0.7 else ("medium" if score >= 0.45 else "low")


def _line_index(flat_starts: List[int], pos: int) -> int:
    lo, hi = 0, len(flat_starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if flat_starts[mid] <= pos:
            lo = mid
        else:
            hi = mid - 1
    return lo


def find_matches(codes: Sequence[Code], text: str) -> Tuple[Dict[str, List[Match]], List[str]]:
    """Every signature match of every code in the normalised text. Returns (matches, problems)."""
    lines = text.split("\n")
    roles = line_roles(lines)
    n = max(len(lines), 1)
    # The whitespace-collapsed text, with where each line starts in it.
    starts, parts, pos = [], [], 0
    for line in lines:
        piece = re.sub(r"\s+", " ", line.strip())
        starts.append(pos)
        parts.append(piece)
        pos += len(piece) + 1
    flat = " ".join(parts)
    out: Dict[str, List[Match]] = {}
    problems: List[str] = []
    for code in codes:
        for sig in code.signatures:
            try:
                rx = re.compile(sig, re.IGNORECASE)
            except re.error as e:
                problems.append(f"{code.code}: signature {sig!r} is not a valid regular expression ({e})")
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
                s = specificity(sig, m.group(0)) * w * (1 + 0.1 * i / n)
                if i not in best or s > best[i].score:
                    best[i] = Match(sig, m.group(0).strip()[:300], i + 1, lines[i].strip()[:300], role, s)
            if best:
                out.setdefault(code.code, []).extend(best.values())
    return out, problems


#: Causal layers (areas), lowest first: a failure in a lower layer explains failures named in a
#: higher one. CUDA libraries sit below torch (a shadowed or missing library makes `import torch`
#: fail), companion packages above it (torchvision breaks when torch is wrong).
LAYERS = ("system", "driver", "gpu", "libraries", "torch", "packages", "toolkit")


def _promote_root_cause(cands: List[Candidate], report: Any, registry: Any) -> List[Candidate]:
    """Put a lower-layer error the facts show ahead of the text's code when the facts confirm that code.

    The text names the symptom ("operator torchvision::nms does not exist": torchvision does not
    match torch); when the facts confirm it and also show an error in a layer below it (two torch
    installs, the wrong one imported), the lower one is the root cause: fixing it fixes both.
    A code the facts do not confirm is never demoted this way.
    """
    if report is None or not cands or cands[0].confirmed is not True:
        return cands
    top = cands[0]
    top_layer = LAYERS.index(top.code.area) if top.code.area in LAYERS else len(LAYERS)
    named = {c.code.code for c in cands}
    roots = []
    for f in report.findings:
        code = registry.code(f.code)
        if code is None or f.severity != "error" or f.code in named or code.area not in LAYERS:
            continue
        if LAYERS.index(code.area) < top_layer and f.code not in [r.code.code for r in roots]:
            roots.append(Candidate(code=code, score=top.score + 0.01, confirmed=True, finding=f, root_cause_of=top.code.code))
    roots.sort(key=lambda c: (LAYERS.index(c.code.area), c.code.code))
    for i, r in enumerate(roots):
        r.score = top.score + 0.01 * (len(roots) - i)
    return roots + cands


def triage(text: str, registry: Any, report: Any = None, top: int = 5) -> Dict[str, Any]:
    """Rank the registry's codes for ``text``; ``report`` (a Report on facts) confirms or not.

    Returns a JSON-like dict (kind cudadoctor-triage): ``candidates`` best first, each with its
    matches (the evidence), its fix (the finding's exact commands when the facts report it,
    else the catalogue's fix text); ``facts_findings``: errors and warnings the facts show that
    no signature matched; ``problems``: signatures that could not be used.
    """
    norm = normalize(text)
    codes = [c for c, _src in registry.codes.values()]
    matches, problems = find_matches(codes, norm)
    findings = {f.code: f for f in (report.findings if report is not None else [])}
    ran_ok = set()
    if report is not None:
        for run in report.checks:
            if run.status == "ok":
                ran_ok.update(run.codes)
    cands: List[Candidate] = []
    for code_name, ms in matches.items():
        code = registry.code(code_name)
        ms.sort(key=lambda m: -m.score)
        best = ms[0].score
        extra = sum(m.score for m in ms[1:4]) * 0.1
        cand = Candidate(code=code, matches=ms[:5], score=best + extra)
        if report is not None:
            if code_name in findings:
                cand.confirmed, cand.finding = True, findings[code_name]
                cand.score += 0.6
            elif code_name in ran_ok:
                cand.confirmed = False
                cand.score *= 0.85
        cands.append(cand)
    cands.sort(key=lambda c: (-c.score, severity_rank(c.code.severity), c.code.code))
    cands = _promote_root_cause(cands, report, registry)
    lines = norm.split("\n")
    roles = line_roles(lines)
    final = [lines[i].strip() for i, r in enumerate(roles) if r == "final"]
    others = []
    if report is not None:
        matched = {c.code.code for c in cands}  # includes promoted root causes
        for f in report.findings:
            if f.code not in matched and f.severity in ("error", "warning") and f.code not in [o["code"] for o in others]:
                others.append({"code": f.code, "severity": f.severity, "title": f.title,
                               "fix": {"commands": list(f.fix.commands), "why": f.fix.why}})
    return {
        "kind": TRIAGE_KIND,
        "schema_version": TRIAGE_SCHEMA,
        "input": {"lines": len(lines), "chars": len(text), "final_exception": " ".join(final)[:500] or None},
        "with_facts": report is not None,
        "candidates": [c.to_dict() for c in cands[:top]],
        "more_candidates": max(0, len(cands) - top),
        "facts_findings": others,
        "problems": problems,
    }


def dumps(result: Dict[str, Any]) -> str:
    return _dumps(envelope(TRIAGE_KIND, result))
