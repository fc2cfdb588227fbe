"""Running checks over facts. The runner survives every check and plugin.

Checks run in a daemon thread, one after the other, against one time limit for all. Should one of
them be slow (SLOW_S), every check not yet started gets a thread of its own at once, so a hanging
check delays no other and a few hanging plugins cost one timeout in all, not one each. (Starting a
thread per check up front did the same but cost ~10 ms of thread start-up in every run.)
An exception, an overrun, or a result that is not a list of findings of the check's own declared
codes becomes a ``check-crashed`` finding naming the check, and the other checks still run.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Dict, Iterable, List, Optional

from .core_codes import CHECK_CRASHED
from .facts import Facts
from .model import Finding, Fix, SEVERITIES, severity_rank
from .registry import Registry

CHECK_TIMEOUT_S = 2.0
#: A check running longer than this makes the runner start every remaining check in its own thread.
SLOW_S = 0.1


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
        d = {
            "name": self.name,
            "source": self.source,
            "codes": self.codes,
            "status": self.status,
            "duration_s": round(self.duration_s, 5),
            "findings": self.findings,
        }
        if self.error:
            d["error"] = self.error
        return d


def _crashed(name: str, source: str, phase: str, message: str) -> Finding:
    return CHECK_CRASHED.finding(
        title=f"Check {name} ({source}) {phase}: its diagnosis is missing",
        evidence={"check": name, "source": source, "phase": phase, "error": message[:500]},
        fix=Fix(
            ("CUDADOCTOR_NO_PLUGINS=1 cudadoctor check",) if not source.startswith("cudadoctor:") else (),
            "Report this to the check's authors; the rest of the report is unaffected.",
        ),
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


#: What went wrong while loading a plugin, by the registry's phase, in a finding's words.
_LOAD_PHASES = {
    "load": "failed to load",
    "timeout": "hung while loading",
    "malformed": "registered something that is not a check",
    "duplicate": "declares a code another check owns",
}


def _registry_problems(registry: Registry) -> List[Finding]:
    """A ``check-crashed`` finding for each plugin the registry could not load or accept."""
    return [_crashed(p.source, p.source, _LOAD_PHASES.get(p.phase, p.phase), p.message) for p in registry.problems]


def run_checks(
    registry: Registry, facts: Facts, timeout: float = CHECK_TIMEOUT_S, fallback: bool = False
) -> "tuple[List[Finding], List[CheckRun]]":
    """Run the registry's checks (``fallback``: only the fallback checks, see :func:`run_fallbacks`; else all others)."""
    findings = [] if fallback else _registry_problems(registry)
    runs: List[CheckRun] = []
    checks = [c for c in registry.checks if c.fallback == fallback]
    boxes: List[List[Any]] = [[] for _ in checks]
    lock = threading.Lock()
    unclaimed = [0]  # index of the first check nobody has started

    def claim() -> Optional[int]:
        with lock:
            i = unclaimed[0]
            if i >= len(checks):
                return None
            unclaimed[0] = i + 1
            return i

    def run_one(i: int) -> None:
        t0 = time.perf_counter()
        try:
            boxes[i].append(("ok", checks[i](facts), time.perf_counter() - t0))
        except BaseException as e:
            boxes[i].append(("error", e, time.perf_counter() - t0))

    def in_order() -> None:
        while True:
            i = claim()
            if i is None:
                return
            run_one(i)

    start = time.perf_counter()
    deadline = start + timeout
    worker = threading.Thread(target=in_order, daemon=True, name="checks")
    worker.start()
    threads = [worker]
    worker.join(min(SLOW_S, timeout))
    if worker.is_alive():  # one check is slow: start the ones still waiting, each on its own
        while True:
            i = claim()
            if i is None:
                break
            th = threading.Thread(target=run_one, args=(i,), daemon=True, name=f"check:{checks[i].name}")
            th.start()
            threads.append(th)
    for th in threads:
        th.join(max(0.0, deadline - time.perf_counter()))
    for chk, box in zip(checks, boxes):
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


def run_fallbacks(
    registry: Registry,
    facts: Facts,
    findings: List[Finding],
    runs: List[CheckRun],
    judged: Iterable[str] = (),
    timeout: float = CHECK_TIMEOUT_S,
) -> "tuple[List[Finding], List[CheckRun]]":
    """The fallback checks (a learned guess, checks/learned.py), given what the others found: they run only when no
    other check (nor the error-text engine) made an error or warning finding, and may not make an error themselves.
    Where they do not run, their runs say ok with no findings, as a check whose guard clause does not apply. A fallback's
    run lists only the codes it reported (it may emit any), so that no reader takes it for the owner of the others'.
    ``judged``: codes the rules already judged on these facts (the error-text engine's top cause, which its
    check declined or the facts contradict); like the code of any finding made (an info), a fallback never
    reports them: the rules are the authority on their codes."""
    if not any(c.fallback for c in registry.checks):
        return findings, runs
    decided = any(f.severity in ("error", "warning") and f.code != CHECK_CRASHED.code for f in findings)
    if decided:
        skipped = [CheckRun(c.name, c.source, [], "ok", 0.0) for c in registry.checks if c.fallback]
        return findings, runs + skipped
    more, more_runs = run_checks(registry, facts, timeout, fallback=True)
    # A guess is never an error on its own: a fallback's error finding is reported as a warning.
    more = [replace(f, severity="warning") if f.severity == "error" and f.code != CHECK_CRASHED.code else f for f in more]
    settled = set(judged) | {f.code for f in findings}
    more = [f for f in more if f.code not in settled or f.code == CHECK_CRASHED.code]
    for run in more_runs:
        run.findings = sum(1 for f in more if f.check == run.name)
        run.codes = sorted({f.code for f in more if f.check == run.name})
    out = findings + more
    out.sort(key=lambda f: (severity_rank(f.severity), f.code, f.title))
    return out, runs + more_runs
