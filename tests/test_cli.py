"""The CLI as a user drives it: formats, --facts round trip, bad input, explain, list-checks."""

from __future__ import annotations

import json
import re

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


# --- issue 23 item 10: the conventions a user expects of a command-line tool -------------------

import os  # noqa: E402
import pty  # noqa: E402
import select  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from conftest import REPO  # noqa: E402
from cudadoctor.cli import COMMANDS  # noqa: E402
from cudadoctor.project import REPO_URL  # noqa: E402

PASTED = REPO / "tests" / "fixtures" / "pasted"
ESC = "\x1b["


def test_bare_cudadoctor_shows_help_and_succeeds():
    r = run_cli()
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Usage: cudadoctor") and "check" in r.stdout and r.stderr == ""
    assert "_CUDADOCTOR_COMPLETE=bash_source cudadoctor" in r.stdout  # completion is documented where users look


@pytest.mark.parametrize("args,expect", [
    (("chek",), "no such command 'chek'; did you mean 'check'?"),
    (("devcies",), "did you mean 'devices'?"),
    (("frobnicate",), "no such command 'frobnicate'; the commands are check, collect"),
    (("check", "--formt", "json"), "No such option '--formt'"),
    (("check", "--format", "yaml"), "Invalid value for '--format'"),
    (("explain",), "Missing argument 'CODE'"),
    (("--colour", "never"), "No such option '--colour'"),
])
def test_usage_errors_are_one_line_exit_2(args, expect):
    r = run_cli(*args)
    assert r.returncode == 2, r.stdout
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("cudadoctor: error: ") and expect in r.stderr, r.stderr
    assert "--help`)" in r.stderr and r.stdout == ""


def test_every_help_lists_exit_codes_3_and_130_and_points_at_the_web_not_docs():
    for cmd in [(), *((c,) for c in COMMANDS)]:
        r = invoke(*cmd, "--help")
        assert r.exit_code == 0, r.output
        flat = " ".join(r.output.split())
        assert "3 on an internal error" in flat and "130 when interrupted" in flat, cmd
        # an installed cudadoctor has no docs/ folder: every document is a web address
        assert not any(w.startswith("docs/") or w.startswith("(docs/") for w in flat.split()), (cmd, flat)
    assert f"\n    {REPO_URL}/blob/main/docs/collect-env.md\n" in invoke("check", "--help").output  # whole, on its own line


def test_every_document_the_help_links_exists():
    import re

    pages = set()
    for cmd in [(), *((c,) for c in COMMANDS)]:
        pages |= set(re.findall(re.escape(REPO_URL) + r"/blob/main/docs/([\w.-]+\.md)", invoke(*cmd, "--help").output))
    assert {"install.md", "collect-env.md", "smoke.md", "cluster.md", "support.md"} <= pages
    assert all((REPO / "docs" / p).is_file() for p in pages), pages


def test_short_version_flag():
    assert invoke("-V").output == invoke("--version").output == f"cudadoctor, version {__import__('cudadoctor').__version__}\n"


def test_shell_completion_completes_commands():
    env = dict(os.environ, _CUDADOCTOR_COMPLETE="bash_complete", COMP_WORDS="cudadoctor dev", COMP_CWORD="1")
    r = subprocess.run([sys.executable, "-m", "cudadoctor"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split() == ["plain,devices"], r.stdout + r.stderr


def on_a_terminal(args, env_update, stdin_text=None, timeout=60.0):
    """Run the CLI with stdout (and stdin, when text is given) on a pseudo-terminal: (stdout, stderr, rc)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    env.update(env_update)
    out_m, out_s = pty.openpty()
    in_m = in_s = None
    if stdin_text is not None:
        in_m, in_s = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "cudadoctor", *args], stdout=out_s, stdin=in_s if in_s else subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env)
    os.close(out_s)
    if in_s is not None:
        os.close(in_s)
    chunks, end = [], time.monotonic() + timeout
    sent = False
    while time.monotonic() < end:
        if in_m is not None and not sent:
            time.sleep(0.5)
            os.write(in_m, stdin_text.encode() + b"\n\x04")  # the text, then Ctrl-D on a new line
            sent = True
        ready, _, _ = select.select([out_m], [], [], 0.2)
        if ready:
            try:
                data = os.read(out_m, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif p.poll() is not None:
            break
    p.wait(timeout=30)
    os.close(out_m)
    if in_m is not None:
        os.close(in_m)
    return b"".join(chunks).decode("utf-8", "replace"), p.stderr.read().decode(), p.returncode


@pytest.mark.parametrize("env,args,colour", [
    ({}, (), True),  # a terminal: colour
    ({"NO_COLOR": "1"}, (), False),
    ({"NO_COLOR": ""}, (), True),  # no-color.org: only a non-empty NO_COLOR turns colour off
    ({"TERM": "dumb"}, (), False),
    ({}, ("--color", "never"), False),
    ({"NO_COLOR": "1"}, ("--color", "always"), True),
])
def test_colour_on_a_terminal(env, args, colour):
    out, err, rc = on_a_terminal(["check", "--facts", NODRIVER, *args], env)
    assert rc == 1, err
    assert "no-nvidia-driver" in out and (ESC in out) == colour, out[:400]


def test_colour_always_into_a_pipe_and_as_a_group_option():
    plain = run_cli("check", "--facts", NODRIVER, env={"NO_COLOR": ""})
    assert ESC not in plain.stdout  # a pipe: no colour
    for args in (("check", "--facts", NODRIVER, "--color", "always"), ("--color", "always", "check", "--facts", NODRIVER)):
        r = run_cli(*args)
        assert r.returncode == 1 and ESC in r.stdout, r.stderr


def test_from_text_dash_on_a_terminal_says_it_is_waiting():
    text = (PASTED / "nvidia-smi-460-v100x8-banner.txt").read_text()
    out, err, rc = on_a_terminal(["check", "--from-text", "-", "--format", "json"], {"NO_COLOR": "1"}, stdin_text=text)
    assert err.startswith("cudadoctor: reading a pasted issue or ticket text from standard input: paste it, then press Ctrl-D")
    assert rc in (0, 1), err
    doc = json.loads(out[out.index("{"):])
    assert doc["facts"]["nvml"]["driver_version"] == "460.32.03"
    piped = run_cli("check", "--from-text", "-", input=text)  # not a terminal: nothing said
    assert "reading" not in piped.stderr


@pytest.mark.parametrize("cmd", ["devices", "report"])
def test_report_and_devices_take_from_text(cmd, tmp_path):
    issue = str(PASTED / "issue-pytorch-150733-rtx5090d.md")
    if cmd == "devices":
        r = run_cli("devices", "--from-text", issue, "--format", "json")
        assert r.returncode in (0, 1), r.stderr
        doc = json.loads(r.stdout)
        assert [d["name"] for d in doc["devices"]] == ["NVIDIA GeForce RTX 5090 D"]
    else:
        r = run_cli("report", "--from-text", issue, "-o", str(tmp_path / "t"))
        assert r.returncode == 0, r.stderr
        doc = json.loads((tmp_path / "t.json").read_text())
        check = json.loads(run_cli("check", "--from-text", issue, "--format", "json").stdout)
        # check's reader, the same parts (home directories are pseudonymised per report: compare them as one)
        def same(pasted):
            return json.loads(re.sub(r"user-[0-9a-f]{8}", "user-*", json.dumps(pasted, sort_keys=True)))

        assert same(doc["facts"]["pasted"]) == same(check["facts"]["pasted"])
        assert "gpu-arch-unsupported" in {f["code"] for f in doc["findings"]}
    bad = run_cli(cmd, "--from-text", issue, "--facts", NODRIVER)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--from-text" in bad.stderr
