"""The CLI as a user drives it: formats, --facts round trip, bad input, explain, list-checks."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, run_cli, write_json
from cudadoctor.cli import cli

NODRIVER = str(FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json")


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_check_from_facts_text():
    r = invoke("check", "--facts", NODRIVER)
    assert r.exit_code == 1, r.output
    assert "no-nvidia-driver" in r.output
    assert "2.14.1+cu130" in r.output  # shows which torch is installed
    assert r.output.rstrip().splitlines()[-1].startswith("✗ PyTorch cannot use a GPU here")


def test_json_round_trip_gives_same_findings(tmp_path):
    r = invoke("check", "--facts", NODRIVER, "--format", "json")
    assert r.exit_code == 1
    report = json.loads(r.output)
    assert report["kind"] == "cudadoctor-report" and report["schema_version"] == 1
    assert list(report) == sorted(report)  # sorted keys: a stable contract
    p = write_json(tmp_path / "report.json", report)
    again = json.loads(invoke("check", "--facts", str(p), "--format", "json").output)
    assert [(f["code"], f["severity"], f["title"]) for f in again["findings"]] == \
           [(f["code"], f["severity"], f["title"]) for f in report["findings"]]


def test_markdown_has_table_findings_and_collapsible_facts():
    r = invoke("check", "--facts", NODRIVER, "--format", "markdown")
    out = r.output
    assert "| Area | Status | Details |" in out
    assert "`no-nvidia-driver`" in out
    assert "<details><summary>Facts (JSON)</summary>" in out and out.count("</details>") == 1


def test_output_file_and_strict(tmp_path):
    out = tmp_path / "r.json"
    r = invoke("check", "--facts", NODRIVER, "--format", "json", "-o", str(out))
    assert r.exit_code == 1
    assert json.loads(out.read_text())["findings"]


@pytest.mark.parametrize("content,expect", [
    (None, "no such file"),
    ("", "empty"),
    ('{"kind": "cudadoctor-facts", "schema_version": 1, "torch": {', "truncated JSON"),
    ("hello, world", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"kind": "something-else"}', "not a cudadoctor report"),
    ('{"kind": "cudadoctor-facts", "schema_version": 99}', "newer cudadoctor"),
    ('{"kind": "cudadoctor-facts", "schema_version": 1, "torch": "x"}', "section 'torch' should be an object"),
])
def test_bad_facts_file_is_one_line_exit_2(tmp_path, content, expect):
    p = tmp_path / "facts.json"
    if content is not None:
        p.write_text(content)
    r = run_cli("check", "--facts", str(p))
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and expect in r.stderr, r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_binary_garbage_facts(tmp_path):
    p = tmp_path / "f.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    r = run_cli("check", "--facts", str(p))
    assert r.returncode == 2 and "not UTF-8" in r.stderr


def test_explain_known_and_unknown():
    r = invoke("explain", "no-nvidia-driver")
    assert r.exit_code == 0
    for section in ("What it detects", "Why it breaks", "How to confirm", "How to fix"):
        assert section in r.output
    r = run_cli("explain", "no-nvidia-drvier")
    assert r.returncode == 2
    assert r.stderr.strip() == "cudadoctor: error: unknown code 'no-nvidia-drvier'; did you mean 'no-nvidia-driver'?"


def test_list_checks_shows_builtins_with_source():
    r = invoke("list-checks", "--format", "json")
    data = json.loads(r.output)
    sources = {c["source"] for c in data["checks"]}
    assert all(s.startswith("cudadoctor:") for s in sources)
    codes = {k["code"] for c in data["checks"] for k in c["codes"]}
    assert {"no-nvidia-driver", "no-gpu-visible", "cpu-only-torch", "torch-not-installed", "torch-import-failed", "probe-failed"} <= codes


def test_version_and_help():
    assert "cudadoctor, version" in invoke("--version").output
    for cmd in ("check", "collect", "list-checks", "explain"):
        assert invoke(cmd, "--help").exit_code == 0


def test_error_text_is_evidence(tmp_path):
    err = tmp_path / "err.txt"
    err.write_text("RuntimeError: Found no NVIDIA driver on your system. Please check...")
    data = json.loads(invoke("check", "--facts", NODRIVER, "--error-file", str(err), "--format", "json").output)
    assert "Found no NVIDIA driver" in data["facts"]["user_error"]["text"]
