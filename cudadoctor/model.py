"""The vocabulary shared by checks, the runner and the renderers: codes, findings, checks.

A *code* is a public contract: reports, docs and support macros quote it, so it is never
renamed or reused. A *check* is a small pure function from facts to findings; it declares the
codes it may emit. A *finding* is one diagnosis: code, severity, title, evidence, fix, links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

SEVERITIES = ("error", "warning", "info")
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}

#: Areas group findings into the doctor-style summary lines, in this order.
AREAS = {
    "system": "System",
    "driver": "NVIDIA driver",
    "gpu": "GPUs",
    "torch": "PyTorch",
    "libraries": "CUDA libraries",
    "packages": "Companion packages",
    "toolkit": "CUDA toolkit",
    "tool": "cudadoctor",
}

_CODE_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def severity_rank(severity: str) -> int:
    return _SEVERITY_RANK.get(severity, 3)


@dataclass(frozen=True)
class Fix:
    """Exact commands to run, and one line of why they fix it."""

    commands: Tuple[str, ...] = ()
    why: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"commands": list(self.commands), "why": self.why}


@dataclass(frozen=True)
class Code:
    """A stable finding code with its documentation.

    ``explanation`` has the fixed sections ``what`` (what it detects), ``why`` (why it breaks),
    ``confirm`` (how to confirm by hand) and ``fix`` (how to fix). ``signatures`` are regular
    expressions for error texts users see when this is the cause, for plugins; the built-in codes'
    wordings are signature data with their sources (cudadoctor/kb/errors/*.json).
    """

    code: str
    title: str
    area: str
    severity: str
    explanation: Dict[str, str]
    links: Tuple[str, ...] = ()
    signatures: Tuple[str, ...] = ()

    SECTIONS = ("what", "why", "confirm", "fix")

    def __post_init__(self) -> None:
        if not _CODE_RE.match(self.code):
            raise ValueError(f"finding code {self.code!r} is not kebab-case")
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.code}: severity {self.severity!r} is not one of {SEVERITIES}")
        if self.area not in AREAS:
            raise ValueError(f"{self.code}: area {self.area!r} is not one of {tuple(AREAS)}")
        missing = [s for s in self.SECTIONS if not self.explanation.get(s)]
        if missing:
            raise ValueError(f"{self.code}: explanation lacks section(s) {missing}")

    def finding(
        self,
        title: str,
        evidence: Dict[str, Any],
        fix: Fix,
        severity: Optional[str] = None,
        links: Sequence[str] = (),
    ) -> "Finding":
        """A finding of this code; ``severity`` overrides the code's default when given."""
        return Finding(
            code=self.code,
            severity=severity or self.severity,
            title=title,
            evidence=dict(evidence),
            fix=fix,
            links=tuple(links) or self.links,
        )

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "title": self.title,
            "area": self.area,
            "severity": self.severity,
            "explanation": dict(self.explanation),
            "links": list(self.links),
            "signatures": list(self.signatures),
        }


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    title: str
    evidence: Dict[str, Any]
    fix: Fix
    links: Tuple[str, ...] = ()
    check: str = ""  # filled in by the runner: which check emitted it
    source: str = ""  # filled in by the runner: which plugin/distribution

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "title": self.title,
            "evidence": self.evidence,
            "fix": self.fix.to_dict(),
            "links": list(self.links),
            "check": self.check,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Finding":
        fix = d.get("fix") or {}
        return cls(
            code=str(d.get("code", "")),
            severity=str(d.get("severity", "info")),
            title=str(d.get("title", "")),
            evidence=dict(d.get("evidence") or {}),
            fix=Fix(tuple(str(c) for c in fix.get("commands") or ()), str(fix.get("why", ""))),
            links=tuple(str(x) for x in d.get("links") or ()),
            check=str(d.get("check", "")),
            source=str(d.get("source", "")),
        )


CheckFunc = Callable[[Any], Optional[Iterable[Finding]]]


@dataclass
class Check:
    """A named pure function from facts to findings, with the codes it may emit."""

    name: str
    func: CheckFunc
    codes: Tuple[Code, ...]
    source: str = ""  # set by the registry: the distribution / entry point it came from
    doc: str = ""
    #: A fallback check runs after every other check and the error-text engine, only when none of them made an
    #: error or warning finding; it may emit codes other checks own (it declares them, claims none), never as errors.
    fallback: bool = False

    def __call__(self, facts: Any) -> List[Finding]:
        return list(self.func(facts) or ())


def check(*codes: Code, name: Optional[str] = None, fallback: bool = False) -> Callable[[CheckFunc], Check]:
    """Decorator: ``@check(CODE_A, CODE_B)`` turns a function into a :class:`Check` (``fallback``: see Check)."""
    if not codes:
        raise ValueError("a check declares at least one code")

    def wrap(func: CheckFunc) -> Check:
        return Check(
            name=name or func.__name__.replace("_", "-"),
            func=func,
            codes=tuple(codes),
            doc=(func.__doc__ or "").strip(),
            fallback=fallback,
        )

    return wrap
