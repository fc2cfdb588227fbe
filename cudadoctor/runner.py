"""Running checks over facts. The runner survives every check and plugin.

Each check runs in a daemon thread; all start together against one time limit. An exception, an overrun, or a result
that is not a list of findings of the check's own declared codes becomes a ``check-crashed``
finding naming the check, and the other checks still run.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional

from .core_codes import CHECK_CRASHED
from .facts import Facts
from .model import Finding, Fix, SEVERITIES, severity_rank
from .registry import Registry

CHECK_TIMEOUT_S = 2.0


@dataclass
class CheckRun:
    name: str
    source: str
    codes: List[str]
    status: str  # ok | crashed | timeout | malformed
    duration_s: float
    findings: int = 0
    error: str = ""

    def to_dict(self) -> Dict[str, Any]:
        d = {"name": self.name, "source": self.source, "codes": self.codes, "status": self.status,
             "duration_s": round(self.duration_s, 5), "findings": self.findings}
        if self.error:
            d["error"] = self.error
        return d


def _crashed(name: str, source: str, phase: str, message: str) -> Finding:
    return CHECK_CRASHED.finding(
        title=f"Check {name} ({source}) {phase}: its diagnosis is missing",
        evidence={"check": name, "source": source, "phase": phase, "error": message[:500]},
        fix=Fix(("CUDADOCTOR_NO_PLUGINS=1 cudadoctor check",) if not source.startswith("cudadoctor:") else (),
                "Report this to the check's authors; the rest of the report is unaffected."),
    )


def _valid(f: Any, allowed: set) -> Optional[str]:
    if not isinstance(f, Finding):
        return f"returned a {type(f).__name__}, not a Finding"
    if f.code not in allowed:
        return f"emitted code {f.code!r}, which it does not declare"
    if f.severity not in SEVERITIES:
        return f"finding {f.code} has severity {f.severity!r}"
    if not isinstance(f.title, str) or not f.title or not isinstance(f.evidence, dict) or not isinstance(f.fix, Fix):
        return f"finding {f.code} lacks a title, evidence dict or Fix"
    return None


def run_checks(registry: Registry, facts: Facts, timeout: float = CHECK_TIMEOUT_S) -> "tuple[List[Finding], List[CheckRun]]":
    findings: List[Finding] = []
    runs: List[CheckRun] = []
    for p in registry.problems:
        findings.append(_crashed(p.source, p.source, {"load": "failed to load", "timeout": "hung while loading",
                                                        "malformed": "registered something that is not a check",
                                                        "duplicate": "declares a code another check owns"}.get(p.phase, p.phase), p.message))
    # All checks start at once (they are pure and quick); each gets the same deadline, so a
    # few hanging plugins cost one timeout in all, not one each.
    boxes: List[List[Any]] = []
    threads = []
    start = time.perf_counter()
    for chk in registry.checks:
        box: List[Any] = []

        def target(chk=chk, box=box) -> None:
            t0 = time.perf_counter()
            try:
                box.append(("ok", chk(facts), time.perf_counter() - t0))
            except BaseException as e:
                box.append(("error", e, time.perf_counter() - t0))

        th = threading.Thread(target=target, daemon=True, name=f"check:{chk.name}")
        th.start()
        boxes.append(box)
        threads.append(th)
    deadline = start + timeout
    for th in threads:
        th.join(max(0.0, deadline - time.perf_counter()))
    for chk, box in zip(registry.checks, boxes):
        allowed = {c.code for c in chk.codes}
        run = CheckRun(chk.name, chk.source, sorted(allowed), "ok", timeout)
        runs.append(run)
        if not box:
            run.status, run.error = "timeout", f"did not finish within {timeout:g} s"
            findings.append(_crashed(chk.name, chk.source, "timed out", run.error))
            continue
        status, value, run.duration_s = box[0]
        if status == "error":
            run.status, run.error = "crashed", f"{type(value).__name__}: {value}"
            findings.append(_crashed(chk.name, chk.source, "raised an exception", run.error))
            continue
        problems = [msg for msg in (_valid(f, allowed) for f in value) if msg]
        if problems:
            run.status, run.error = "malformed", problems[0]
            findings.append(_crashed(chk.name, chk.source, "returned a malformed finding", problems[0]))
            continue
        run.findings = len(value)
        findings.extend(replace(f, check=chk.name, source=chk.source) for f in value)
    findings.sort(key=lambda f: (severity_rank(f.severity), f.code, f.title))
    return findings, runs
