"""The check runner: one thread while checks are quick, a thread each once one is slow."""

from __future__ import annotations

import threading
import time

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Fix, check
from cudadoctor.registry import Registry
from cudadoctor.runner import run_checks

EXPL = {"what": "w", "why": "y", "confirm": "c", "fix": "f"}


def _registry(*checks):
    reg = Registry()
    for c in checks:
        c.source = "test:" + c.name
        reg.checks.append(c)
        for code in c.codes:
            reg.codes[code.code] = (code, c.source)
    return reg


def _code(name):
    return Code(name, "t", "torch", "warning", EXPL)


def _quick(name, seen=None):
    code = _code(name)

    @check(code, name=name)
    def f(facts):
        if seen is not None:
            seen.append(threading.current_thread().name)
        return [code.finding(title=name, evidence={}, fix=Fix((), "none"))]

    return f


def _hang(name, release):
    @check(_code(name), name=name)
    def f(facts):
        release.wait(30)
        return []

    return f


def test_quick_checks_share_one_thread():
    seen = []
    reg = _registry(*[_quick(f"quick-{i}", seen) for i in range(20)])
    findings, runs = run_checks(reg, Facts({}))
    assert [r.status for r in runs] == ["ok"] * 20
    assert len(findings) == 20
    assert set(seen) == {"checks"}  # the one worker, no thread per check


def test_hanging_checks_cost_one_timeout_and_delay_no_other():
    release = threading.Event()
    try:
        reg = _registry(_quick("before"), _hang("hang-a", release), _quick("between"), _hang("hang-b", release),
                        _quick("after"))
        start = time.monotonic()
        findings, runs = run_checks(reg, Facts({}), timeout=1.0)
        took = time.monotonic() - start
    finally:
        release.set()
    status = {r.name: r.status for r in runs}
    assert status == {"before": "ok", "hang-a": "timeout", "between": "ok", "hang-b": "timeout", "after": "ok"}
    assert took < 1.8, took  # one timeout for both hangs, not two
    assert {f.title for f in findings if f.code != "check-crashed"} == {"before", "between", "after"}
