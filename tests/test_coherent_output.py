"""Coherent output: an area's mark never disagrees with its words (no ✓ beside a failure), over every
shared real case and every recorded fixture; and a command whose report goes to a file still says
on stderr why it failed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import casefacts
from conftest import FIXTURES, REPO

from cudadoctor import registry
from cudadoctor.readers.collect_env import parse_collect_env
from cudadoctor.commands._shared import failure_reason
from cudadoctor.privacy import shareable
from cudadoctor.render import render
from cudadoctor.report import diagnose

for _up in (REPO.parent, REPO.parent.parent):  # the shared cases beside main; a worktree looks one up
    if not casefacts.CASES.is_dir() and (_up / "shared" / "cases").is_dir():
        casefacts.CASES = _up / "shared" / "cases"

REG = registry.load()
# Independent of render/summary.py's own list: words that say the subject is missing or broken.
FAILURE = re.compile(r"not available|not installed|import failed|\bfailed\b|crashed|timed out|not found|missing|"
                     r"\bunknown\b|\berror", re.I)
LINE = re.compile(r"^\[(?P<mark>[^\]]+)\] (?P<label>.+?)  +(?P<detail>.*)$")


def text_of(facts: dict) -> tuple[str, object]:
    report = shareable(diagnose(facts, REG), False, live=False)
    return render(report, "text"), report


def sources():
    out = []
    if casefacts.CASES.is_dir():
        for p in sorted(casefacts.CASES.glob("*.txt")):
            if not p.name.endswith(".error.txt"):
                out.append(("case-collect-env", p))
        for case in casefacts.case_ids():
            out.append(("case-facts", case))
    out += [("fixture-facts", p) for p in sorted((FIXTURES / "facts").glob("*.json"))]
    out += [("fixture-collect-env", p) for p in sorted((FIXTURES / "collect_env").glob("*.txt"))]
    return out


def load(kind, src) -> dict:
    if kind.endswith("collect-env"):
        return parse_collect_env(src.read_text(encoding="utf-8", errors="replace"))
    if kind == "case-facts":
        return casefacts.facts_from_case(src)
    return json.loads(src.read_text())


SOURCES = sources()


def test_the_shared_cases_are_all_here():
    if not casefacts.CASES.is_dir():
        pytest.skip("shared cases not found")
    assert len([s for s in SOURCES if s[0] == "case-collect-env"]) >= 15


@pytest.mark.parametrize("kind,src", SOURCES, ids=[f"{k}:{getattr(s, 'name', s)}" for k, s in SOURCES])
def test_no_tick_beside_a_failure(kind, src):
    text, report = text_of(load(kind, src))
    lines = [m for m in map(LINE.match, text.splitlines()) if m]
    assert lines, text
    errors_by_area = {report.area_of(f) for f in report.findings if f.severity == "error"}
    for m in lines:
        if m["mark"] == "✓":
            assert not FAILURE.search(m["detail"]), f"✓ beside a failure: {m.group(0)!r}"
        if m["mark"] == "✗":  # a cross always has an error finding behind it
            from cudadoctor.model import AREAS

            area = next(k for k, v in AREAS.items() if v == m["label"].strip())
            assert area in errors_by_area, m.group(0)


def test_driver_line_of_a_collect_env_text_without_a_driver_version():
    """The issue's example: '[✓] NVIDIA driver  not available (NVML: ok)'."""
    if not casefacts.CASES.is_dir():
        pytest.skip("shared cases not found")
    facts = load("case-collect-env", casefacts.CASES / "047-k40m-sm35-torch13-conda-cu101.txt")
    text, _ = text_of(facts)
    assert "[?] NVIDIA driver       version unknown (not reported)" in text.splitlines()


def run(*args):
    return subprocess.run([sys.executable, "-m", "cudadoctor", *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def test_failed_check_and_devices_say_why_on_stderr_with_o(tmp_path):
    out = tmp_path / "r.txt"
    r = run("check", "--facts", str(FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"), "-o", str(out))
    assert r.returncode == 1 and out.exists()
    assert r.stderr.strip().splitlines()[-1] == (
        f"cudadoctor: wrote {out} — PyTorch cannot use a GPU here: 1 error (no-nvidia-driver) — "
        "no-nvidia-driver: No NVIDIA GPU in this machine, so there is no NVIDIA driver for PyTorch to use")
    r = run("devices", "--facts", str(FIXTURES / "facts" / "hgx-8x-h100-ecc.json"), "-o", str(out))
    assert r.returncode == 1
    assert r.stderr.strip().endswith("— 8 GPUs, some FAIL — GPU 3: gpu-ecc-errors: GPU 3 (NVIDIA H100 80GB HBM3) has had "
                                     "2 uncorrectable ECC errors since the driver loaded"), r.stderr
    r = run("check", "--facts", str(FIXTURES / "facts" / "hgx-8x-h100-healthy.json"), "-o", str(out))
    assert r.returncode == 0 and r.stderr.count("—") == 1  # no reason when nothing failed


def test_failure_reason_of_a_real_smoke_result(tmp_path):
    """The reason smoke -o should print (commands/smoke.py: see written() in commands/_shared.py)."""
    r = run("smoke", "--device", "cpu", "--offline", "--data-dir", str(tmp_path / "nothing"), "--format", "json")
    result = json.loads(r.stdout)
    assert r.returncode == 2 and result["status"] == "error"
    reason = failure_reason(result)
    assert reason and "MNIST" in reason and "\n" not in reason
    ok = json.loads((FIXTURES / "smoke" / "single-cpu-synthetic-pass.json").read_text())
    assert failure_reason(ok) is None
