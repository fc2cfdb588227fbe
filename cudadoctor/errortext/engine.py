"""The one error-text engine: from error texts to finding codes, ranked, with evidence.

Used by `check` (through :func:`adjudicate`, called by report.diagnose), `triage`, `report` and
`diff`: they all rank with :func:`rank`, so they never name different top causes for the same text
and facts.

Signatures are data (every cudadoctor/kb/errors/*.json, see :mod:`.signatures`) plus the
``signatures`` a plugin's :class:`~cudadoctor.model.Code` declares. Text is normalised first
(:mod:`.normalize`) and matched once per run (:mod:`.evidence`) with its whitespace collapsed (a
message hard-wrapped over two lines still matches).

Ranking, for each code, takes its best match:

* specificity: how much literal text the signature pins down, times the signature's confidence;
* position: a match on the final exception line (the last ``SomeError: ...`` line and the
  message lines that follow it) counts most, other exception lines less, traceback frames and
  log lines least; later lines slightly more than earlier ones;
* agreement with facts, when facts are given: a check that reports the same code on those facts
  confirms it (a large boost); a check that ran cleanly without reporting it lowers the score a
  little; a fact the signature names as contradicting it halves it.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model import Code, Finding, Fix, severity_rank
from .evidence import catalogue_signatures, of_texts
from .match import Match
from .normalize import line_roles, normalize
from .sources import error_texts

TRIAGE_KIND = "cudadoctor-triage"
TRIAGE_SCHEMA = 1
#: The name findings added by the engine carry as their check.
ENGINE_CHECK = "error-text"


@dataclass
class Candidate:
    code: Code
    matches: List[Match] = field(default_factory=list)
    score: float = 0.0
    confirmed: Optional[bool] = None  # True: the facts agree; False: a check ran and did not report it
    finding: Any = None
    root_cause_of: Optional[str] = None  # a facts-only error in a lower layer that explains this code
    contradicted_by: List[Dict[str, Any]] = field(default_factory=list)  # facts that argue against it

    def to_dict(self) -> Dict[str, Any]:
        c = self.code
        fix: Dict[str, Any]
        if self.finding is not None:
            fix = {"commands": list(self.finding.fix.commands), "why": self.finding.fix.why, "from": "facts"}
        else:
            fix = {"commands": [], "why": c.explanation.get("fix", ""), "from": "catalogue"}
        return {
            "code": c.code,
            "title": self.finding.title if self.finding is not None else c.title,
            "severity": c.severity,
            "area": c.area,
            "score": round(self.score, 3),
            "confidence": confidence(self.score),
            "confirmed_by_facts": self.confirmed,
            "matches": [m.to_dict() for m in self.matches],
            "fix": fix,
            "links": list(c.links),
            "root_cause_of": self.root_cause_of,
            "contradicted_by": list(self.contradicted_by),
        }


def confidence(score: float) -> str:
    return "high" if score >= 0.7 else ("medium" if score >= 0.45 else "low")


#: Causal layers (areas), lowest first: a failure in a lower layer explains failures named in a
#: higher one. CUDA libraries sit below torch (a shadowed or missing library makes `import torch`
#: fail), companion packages above it (torchvision breaks when torch is wrong).
LAYERS = ("system", "driver", "gpu", "libraries", "torch", "packages", "toolkit")


def _promote_root_cause(cands: List[Candidate], findings: Optional[Sequence[Finding]], registry: Any) -> List[Candidate]:
    """Put a lower-layer error the facts show ahead of the text's code when the facts confirm that code.

    The text names the symptom ("operator torchvision::nms does not exist": torchvision does not
    match torch); when the facts confirm it and also show an error in a layer below it (two torch
    installs, the wrong one imported), the lower one is the root cause: fixing it fixes both.
    A code the facts do not confirm is never demoted this way. ``findings``: what the checks reported
    on the facts (None without facts).
    """
    if findings is None or not cands or cands[0].confirmed is not True:
        return cands
    top = cands[0]
    top_layer = LAYERS.index(top.code.area) if top.code.area in LAYERS else len(LAYERS)
    named = {c.code.code for c in cands}
    roots: List[Candidate] = []
    for f in findings:
        code = registry.code(f.code)
        if code is None or f.severity != "error" or f.code in named or code.area not in LAYERS:
            continue
        if LAYERS.index(code.area) < top_layer and f.code not in [r.code.code for r in roots]:
            roots.append(Candidate(code=code, score=top.score + 0.01, confirmed=True, finding=f, root_cause_of=top.code.code))
    roots.sort(key=lambda c: (LAYERS.index(c.code.area), c.code.code))
    for i, r in enumerate(roots):
        r.score = top.score + 0.01 * (len(roots) - i)
    return roots + cands


def _facts_of(report: Any) -> Any:
    from ..facts import Facts

    facts = getattr(report, "facts", None)
    return Facts(facts) if isinstance(facts, dict) else None


def rank(
    texts: Sequence[Tuple[str, str]],
    registry: Any,
    findings: Sequence[Finding] = (),
    runs: Sequence[Any] = (),
    fx: Any = None,
    report: Any = None,
) -> Tuple[List[Candidate], List[str]]:
    """THE ranking: candidates best first for these (where, text) pairs, given the checks' findings.

    ``findings`` and ``runs`` are what the checks said on the facts (none without facts); ``fx``
    the facts (for contradictions). Findings the engine itself added are ignored, so that ranking
    a finished report gives what :func:`adjudicate` gave.
    """
    codes = [c for c, _src in registry.codes.values()]
    ev = of_texts(tuple(texts), catalogue_signatures(codes))  # the run's one evidence pass (cached)
    matches: Dict[str, List[Match]] = {c: list(ms) for c, ms in ev.matches.items() if registry.code(c) is not None}
    problems = list(ev.problems)
    own = [f for f in findings if getattr(f, "check", "") != ENGINE_CHECK]
    by_code = {f.code: f for f in own}
    with_facts = fx is not None or bool(findings) or bool(runs) or report is not None
    ran_ok = set()
    for run in runs:
        if run.status == "ok":
            ran_ok.update(run.codes)
    cands: List[Candidate] = []
    for code_name, ms in matches.items():
        code = registry.code(code_name)
        ms.sort(key=lambda m: -m.score)
        # One match per line of each text: two signatures of a code matching the same line are one piece of evidence.
        all_ms, seen, distinct = list(ms), set(), []
        for m in ms:
            if (m.where, m.line) not in seen:
                seen.add((m.where, m.line))
                distinct.append(m)
        ms = distinct
        best = ms[0].score
        extra = sum(m.score for m in ms[1:4]) * 0.1
        cand = Candidate(code=code, matches=ms[:5], score=best + extra)
        if with_facts:
            if code_name in by_code:
                cand.confirmed, cand.finding = True, by_code[code_name]
                cand.score += 0.6
            else:
                against: List[Dict[str, Any]] = []
                for m in all_ms:  # every matched signature of the code may name a contradicting fact
                    for c in m.sig.contradictions(fx) if (m.sig is not None and fx is not None) else []:
                        if c.to_dict() not in against:
                            against.append(c.to_dict())
                if against:
                    cand.contradicted_by = against
                    cand.score *= 0.5
                if code_name in ran_ok:
                    cand.confirmed = False
                    cand.score *= 0.85
        cands.append(cand)
    cands.sort(key=lambda c: (-c.score, severity_rank(c.code.severity), c.code.code))
    cands = _promote_root_cause(cands, own if with_facts else None, registry)
    return cands, problems


def triage(text: str, registry: Any, report: Any = None, top: int = 5) -> Dict[str, Any]:
    """Rank the registry's codes for ``text``; ``report`` (a Report on facts) confirms or not.

    With a report whose facts hold the user's error, every error text of those facts is ranked
    (as `check` does); otherwise ``text`` alone. Returns a JSON-like dict (kind cudadoctor-triage):
    ``candidates`` best first, each with its matches (the evidence), its fix (the finding's exact
    commands when the facts report it, else the catalogue's fix text); ``facts_findings``: errors
    and warnings the facts show that no signature matched; ``problems``: signatures that could not
    be used.
    """
    fx = _facts_of(report) if report is not None else None
    texts = error_texts(fx) if (fx is not None and fx.user_error()) else [("user_error", text)]
    findings = list(report.findings) if report is not None else []
    runs = list(getattr(report, "checks", []) or []) if report is not None else []
    cands, problems = rank(texts, registry, findings, runs, fx, report)
    norm = normalize(text)
    lines = norm.split("\n")
    roles = line_roles(lines)
    final = [lines[i].strip() for i, r in enumerate(roles) if r == "final"]
    others: List[Dict[str, Any]] = []
    if report is not None:
        matched = {c.code.code for c in cands}  # includes promoted root causes
        for f in report.findings:
            if (
                f.code not in matched
                and f.severity in ("error", "warning")
                and f.code not in [o["code"] for o in others]
                and getattr(f, "check", "") != ENGINE_CHECK
            ):
                others.append(
                    {
                        "code": f.code,
                        "severity": f.severity,
                        "title": f.title,
                        "fix": {"commands": list(f.fix.commands), "why": f.fix.why},
                    }
                )
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


def diagnosis_of(c: Candidate) -> Dict[str, Any]:
    """The top cause as a report records it."""
    m = c.matches[0] if c.matches else None
    return {
        "code": c.code.code,
        "score": round(c.score, 3),
        "confidence": confidence(c.score),
        "confirmed_by_facts": c.confirmed,
        "root_cause_of": c.root_cause_of,
        "contradicted_by": list(c.contradicted_by),
        "matched": m.text if m else None,
        "line": m.line_text if m else None,
        "where": m.where if m else None,
    }


def adjudicate(
    facts: Dict[str, Any], findings: List[Finding], runs: Sequence[Any], registry: Any
) -> Tuple[List[Finding], Optional[Dict[str, Any]]]:
    """What `check` makes of the error texts in ``facts``, given the checks' findings.

    Returns the findings (with one added when the text's top cause is not among them: a
    confident diagnosis the facts do not contradict is a finding of its code's severity (a warning
    when only medium confidence); one the facts contradict is an info that says so; one whose own
    check ran on these facts and did not report it adds nothing, the check being the authority on
    its code) and the diagnosis (the top cause, as triage names it), or None when no text matched.
    """
    from ..facts import Facts

    fx = Facts(facts)
    texts = error_texts(fx)
    if not texts:
        return findings, None
    cands, _problems = rank(texts, registry, findings, runs, fx)
    if not cands:
        return findings, None
    top = cands[0]
    diag = diagnosis_of(top)
    if top.finding is not None or any(f.code == top.code.code for f in findings):
        return findings, diag
    if top.confirmed is False:
        # The code's own check read the same text and facts and did not report it: it is the
        # authority on its code. The diagnosis still says what the text points to.
        return findings, diag
    code, m = top.code, top.matches[0]
    evidence: Dict[str, Any] = {m.where: m.line_text, "matched": m.text, "signature": m.signature}
    if m.sig is not None and m.sig.implies:
        evidence["implies"] = m.sig.implies
    if top.contradicted_by:
        evidence["contradicted_by"] = [f"{c['fact']}: {c['why']}" for c in top.contradicted_by]
        severity = "info"
        title = f"The error text points to {code.code}, but the facts contradict it ({top.contradicted_by[0]['why']})"
    else:
        severity = (
            code.severity if confidence(top.score) == "high" else ("warning" if code.severity == "error" else code.severity)
        )
        title = f"{code.title} (from the error text)"
    fix = Fix((f"cudadoctor explain {code.code}  # how to confirm and fix",), code.explanation.get("fix", ""))
    f = code.finding(title=title, evidence=evidence, fix=fix, severity=severity)
    from dataclasses import replace

    f = replace(f, check=ENGINE_CHECK, source="cudadoctor")
    return findings + [f], diag


def dumps(result: Dict[str, Any]) -> str:
    from ..document import dumps as _dumps, envelope

    return _dumps(envelope(TRIAGE_KIND, result))
