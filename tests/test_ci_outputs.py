"""CI-native outputs: `check --format junit` (read back with junitparser, a real JUnit reader) and
GitHub Actions annotations under GITHUB_ACTIONS=true (cudadoctor/render/junit.py, render/github.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from conftest import FIXTURES, REPO
import casefacts
from casefacts import case_ids, facts_from_case

from cudadoctor import registry
from cudadoctor.model import Fix
from cudadoctor.privacy import shareable
from cudadoctor.render import render
from cudadoctor.render.github import annotations, escape_data, escape_property
from cudadoctor.report import diagnose

junitparser = pytest.importorskip("junitparser")

# The shared cases sit beside the main checkout; a worktree (…/wt/NAME) finds them one level up.
for _up in (REPO.parent, REPO.parent.parent):
    if not casefacts.CASES.is_dir() and (_up / "shared" / "cases").is_dir():
        casefacts.CASES = _up / "shared" / "cases"

FACTS = sorted((FIXTURES / "facts").glob("*.json"))
REG = registry.load()


def report_for(facts: dict):
    return shareable(diagnose(facts, REG), False, live=False)


def parse(xml: str, tmp_path):
    p = tmp_path / "report.xml"
    p.write_text(xml, encoding="utf-8")
    return junitparser.JUnitXml.fromfile(str(p))


def cases_of(xml):
    return [c for suite in xml for c in suite]


def outcome(case) -> str:
    kinds = {type(r).__name__ for r in case.result}
    return "failure" if "Failure" in kinds else "error" if "Error" in kinds else "skipped" if "Skipped" in kinds else "pass"


@pytest.mark.parametrize("path", FACTS, ids=[p.stem for p in FACTS])
def test_junit_one_case_per_check_failures_for_errors(path, tmp_path):
    report = report_for(json.loads(path.read_text()))
    xml = parse(render(report, "junit"), tmp_path)
    cases = cases_of(xml)
    assert [c.name for c in cases][: len(report.checks)] == [r.name for r in report.checks]
    failed = {c.name for c in cases if outcome(c) == "failure"}
    assert failed == {f.code for f in report.findings if f.severity == "error"}
    suite = next(iter(xml))
    assert (suite.tests, suite.failures, suite.errors) == (len(cases), len(failed), 0)
    assert suite.skipped == sum(outcome(c) == "skipped" for c in cases)
    props = {p.name: p.value for p in suite.properties()}
    assert props["verdict"] == report.verdict()["state"]
    for c in cases:
        if outcome(c) == "failure":
            f = next(f for f in report.findings if f.code == c.name)
            assert c.result[0].message == f.title and f.fix.commands[0] in c.result[0].text


def test_junit_skips_what_has_nothing_to_judge(tmp_path):
    report = report_for(json.loads((FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json").read_text()))
    cases = {c.name: c for c in cases_of(parse(render(report, "junit"), tmp_path))}
    assert outcome(cases["gpu-ecc-errors"]) == "skipped"  # no GPU: GPU health has nothing to judge
    assert cases["gpu-ecc-errors"].result[0].message == "not applicable: gpu: none visible"
    assert outcome(cases["no-gpu-visible"]) == "pass"  # its subject is the absence: it did judge
    assert outcome(cases["no-nvidia-driver"]) == "failure"
    healthy = report_for(json.loads((FIXTURES / "facts" / "hgx-8x-h100-healthy.json").read_text()))
    cases = {c.name: c for c in cases_of(parse(render(healthy, "junit"), tmp_path))}
    assert outcome(cases["gpu-ecc-errors"]) == "pass"  # eight GPUs read: judged, and fine
    # that recording has no loaded-library list: those checks had nothing to judge
    assert cases["stub-libcuda"].result[0].message == "not applicable: libraries: unknown"


@pytest.mark.parametrize("case", case_ids())
def test_junit_parses_for_every_shared_case(case, tmp_path):
    report = report_for(facts_from_case(case))
    xml = parse(render(report, "junit"), tmp_path)
    errors = {f.code for f in report.findings if f.severity == "error"}
    assert {c.name for c in cases_of(xml) if outcome(c) == "failure"} == errors


def test_junit_survives_hostile_text(tmp_path):
    report = report_for(json.loads((FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json").read_text()))
    evil = "bad ]]> <x> & \x01\x1b[31m \"quoted\" 'single' \ufffe"
    f = report.findings[0]
    report = replace(report, findings=[replace(f, title=evil, fix=Fix((evil,), evil))])
    xml = render(report, "junit")
    ET.fromstring(xml.encode("utf-8"))  # well-formed XML 1.0
    case = next(c for c in cases_of(parse(xml, tmp_path)) if c.name == f.code)
    assert case.result[0].message == "bad ]]> <x> & \ufffd\ufffd[31m \"quoted\" 'single' \ufffd"


def run_check(*args, env=None):
    e = dict(os.environ)
    e.pop("GITHUB_ACTIONS", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "cudadoctor", "check", *args], capture_output=True, text=True,
                          env=e, cwd=REPO, timeout=120)


def test_cli_format_junit_and_exit_code(tmp_path):
    r = run_check("--facts", str(FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"), "--format", "junit")
    assert r.returncode == 1, r.stderr
    cases = cases_of(parse(r.stdout, tmp_path))
    assert [c.name for c in cases if outcome(c) == "failure"] == ["no-nvidia-driver"]
    out = tmp_path / "out" / "cudadoctor.xml"
    r = run_check("--facts", str(FIXTURES / "facts" / "hgx-8x-h100-healthy.json"), "--format", "junit", "-o", str(out))
    assert r.returncode == 0 and r.stdout == "" and "wrote" in r.stderr
    assert not [c for c in cases_of(parse(out.read_text(), tmp_path)) if outcome(c) in ("failure", "error")]
    # the other commands keep their own formats
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "devices", "--format", "junit"], capture_output=True,
                       text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "junit" in r.stderr


def unescape(s: str) -> str:
    return s.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def test_github_escaping_round_trips():
    raw = "100% sure: a, b\r\nnext line %0A literal"
    assert escape_data(raw) == "100%25 sure: a, b%0D%0Anext line %250A literal"
    assert escape_property(raw) == "100%25 sure%3A a%2C b%0D%0Anext line %250A literal"
    assert unescape(escape_property(raw)) == raw and "\n" not in escape_data(raw)


def test_github_annotations_only_under_github_actions():
    facts = str(FIXTURES / "facts" / "hgx-8x-h100-ecc.json")
    plain = run_check("--facts", facts, "--format", "json")
    assert not [ln for ln in plain.stderr.splitlines() if ln.startswith("::")]
    gha = run_check("--facts", facts, "--format", "json", env={"GITHUB_ACTIONS": "true"})
    assert gha.returncode == plain.returncode == 1
    assert json.loads(gha.stdout)["findings"] == json.loads(plain.stdout)["findings"]  # stdout untouched
    lines = [ln for ln in gha.stderr.splitlines() if ln.startswith("::")]
    report = json.loads(plain.stdout)
    want = [("error" if f["severity"] == "error" else "warning" if f["severity"] == "warning" else "notice", f["code"])
            for f in report["findings"]]
    got = [(ln[2:].split(" ", 1)[0], ln.split("title=", 1)[1].split("::", 1)[0]) for ln in lines]
    assert got == want and ("error", "gpu-ecc-errors") in got
    msg = unescape(lines[0].split("::", 2)[2])
    ecc = next(f for f in report["findings"] if f["code"] == "gpu-ecc-errors")
    assert msg.splitlines()[0] == ecc["title"] and ecc["fix"]["commands"][0] in msg


def test_github_annotations_are_redacted():
    facts = json.loads((FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json").read_text())
    facts.setdefault("system", {})["hostname"] = "gpu-box-17"
    report = diagnose(facts, REG)
    f = report.findings[0]
    raw = replace(report, findings=[replace(f, title="on gpu-box-17: " + f.title)])
    lines = annotations(shareable(raw, False, live=False))
    assert lines and "gpu-box-17" not in "".join(lines)
