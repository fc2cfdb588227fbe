"""python-unsupported from the dates alone: a pasted report of a Python released well before torch had
wheels for its minor (kb/python_wheels.json), with no torch importable."""

from __future__ import annotations

from cudadoctor import kb
from cudadoctor.checks.platform import python_unsupported
from cudadoctor.facts import Facts, new_facts


def test_kb_knows_when_each_python_first_had_torch_wheels():
    # Python 3.10.1 (2021-12-06) before torch 1.11.0 (2022-03-10); 3.10.3 (2022-03-16) after it
    assert kb.python_predates_torch("3.10.1")["first_torch"] == "1.11.0"
    assert kb.python_predates_torch("3.10.3") is None
    # Windows got Python 3.11 wheels with torch 2.0.0, Linux with 1.13.0
    assert kb.python_predates_torch("3.11.0", "windows")["first_torch"] == "2.0.0"
    assert kb.python_predates_torch("3.11.0")["first_torch"] == "1.13.0"
    assert kb.python_predates_torch("3.11.9") is None and kb.python_predates_torch("3.7") is None


def _fx(py, origin="collect_env", status="not-installed", os_name="Linux"):
    f = new_facts(origin)
    f["python"]["version"] = py
    f["system"].update({"os": os_name, "arch": "x86_64"})
    if status:
        f["torch"]["status"] = status
    return Facts(f)


def test_a_pasted_python_older_than_its_wheels_is_a_warning_with_the_dates():
    (f,) = list(python_unsupported(_fx("3.12.0")))
    assert f.severity == "warning" and "3.12.0 came out on 2023-10-02" in f.title and "2.2.0" in f.title
    assert any('"torch>=2.2.0"' in c for c in f.fix.commands)


def test_no_era_claim_live_or_when_torch_imports_or_the_gap_is_days():
    assert not list(python_unsupported(_fx("3.12.0", origin="live")))  # today's wheels are known here
    assert not list(python_unsupported(_fx("3.12.0", status="ok")))
    assert not list(python_unsupported(_fx("3.12.2")))  # released after torch 2.2.0
    assert not list(python_unsupported(_fx("3.9.1")))  # 3 days before torch 1.7.1: says nothing
