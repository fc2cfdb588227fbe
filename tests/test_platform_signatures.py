"""Windows DLL and /dev/shm classes (issue 21, platform classes 2 and 3): kb/errors/platform2.json and
the real texts of tests/data/error_corpus/platform2.jsonl through triage and `check`, and what they must
not claim."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

import pytest
from click.testing import CliRunner

from cudadoctor import registry
from cudadoctor.cli import cli
from cudadoctor.errortext import triage
from cudadoctor.errortext.normalize import normalize
from cudadoctor.errortext.signatures import kb_documents, parse
from cudadoctor.facts import new_facts

ROOT = Path(__file__).resolve().parents[1]
REG = registry.load(plugins=False)


def _rows() -> List[dict]:
    out = []
    for n, line in enumerate(
        (ROOT / "tests" / "data" / "error_corpus" / "platform2.jsonl").read_text(encoding="utf-8").splitlines(), 1
    ):
        if line.strip():
            d = json.loads(line)
            d["_where"] = f"platform2.jsonl:{n}"
            out.append(d)
    return out


ROWS = _rows()
SIGS = parse(dict(kb_documents())["platform2.json"])


def _flat(text: str) -> str:
    return " ".join(re.sub(r"\s+", " ", line.strip()) for line in normalize(text).split("\n"))


def _findings(r) -> Dict[str, str]:
    assert r.exit_code in (0, 1), r.output
    return {f["code"]: f["severity"] for f in json.loads(r.stdout)["findings"] if f["severity"] in ("error", "warning")}


@pytest.fixture(scope="module")
def empty_facts(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("facts") / "empty.json"
    p.write_text(json.dumps(new_facts()), encoding="utf-8")
    return p


def test_every_signature_has_sources_and_a_real_wording():
    assert SIGS
    for s in SIGS:
        assert len(s.sources) >= 2 and all(u.startswith("https://") for u in s.sources), s.regex
        assert REG.code(s.code) is not None, s.code
        rx = re.compile(s.regex, re.IGNORECASE)
        proved = {d["source"] for d in ROWS if d["code"] == s.code and rx.search(_flat(d["text"]))}
        assert proved, f"{s.code} {s.regex[:60]!r} has no real wording in the corpus"
        assert proved <= set(s.sources), f"{s.code}: corpus sources {sorted(proved - set(s.sources))} missing from the signature"
    # every class has two independent threads
    for code in {s.code for s in SIGS}:
        assert len({d["source"] for d in ROWS if d["code"] == code}) >= 2, code


@pytest.mark.parametrize("d", ROWS, ids=[d["_where"] for d in ROWS])
def test_triage_names_the_code_first(d):
    res = triage(d["text"], REG)
    assert res["candidates"] and res["candidates"][0]["code"] == d["code"], (d["_where"], res["candidates"][:2])


@pytest.mark.parametrize("d", ROWS, ids=[d["_where"] for d in ROWS])
def test_check_error_file_and_from_text_report_the_code(d, tmp_path, empty_facts):
    err = tmp_path / "error.txt"
    err.write_text(d["text"], encoding="utf-8")
    runner = CliRunner()
    got = _findings(runner.invoke(cli, ["check", "--facts", str(empty_facts), "--error-file", str(err), "--format", "json"]))
    assert d["code"] in got, (d["_where"], got)
    got = _findings(runner.invoke(cli, ["check", "--from-text", str(err), "--format", "json"]))
    assert d["code"] in got, (d["_where"], got)


def test_zlib_and_shm_permission_are_not_claimed_by_the_neighbouring_codes(tmp_path, empty_facts):
    """cuDNN 8 without zlibwapi.dll is a missing DLL, not a cuDNN version mismatch; a refused /dev/shm is not a full one."""
    runner = CliRunner()
    zlib = 0
    for d in ROWS:
        err = tmp_path / "e.txt"
        err.write_text(d["text"], encoding="utf-8")
        got = _findings(runner.invoke(cli, ["check", "--facts", str(empty_facts), "--error-file", str(err), "--format", "json"]))
        if "zlibwapi" in d["note"].lower() or "zlib" in d["note"].lower():
            zlib += 1
            assert got.get("dll-load-failure") and "cudnn-mismatch" not in got, (d["_where"], got)
        if d["code"] == "dev-shm-permission-denied":
            assert "shm-exhausted" not in got, (d["_where"], got)
    assert zlib >= 4


def test_zlib_finding_names_zlib_and_the_sub_library(tmp_path):
    err = tmp_path / "e.txt"
    err.write_text(next(d for d in ROWS if "cudnn_cnn_infer64_8" in d["text"])["text"], encoding="utf-8")
    res = CliRunner().invoke(cli, ["check", "--from-text", str(err), "--format", "json"])
    f = next(f for f in json.loads(res.stdout)["findings"] if f["code"] == "dll-load-failure")
    assert "cudnn_cnn_infer64_8.dll" in f["title"] and "zlibwapi.dll" in f["title"]
    assert f["fix"]["commands"][0].startswith("where zlibwapi.dll")


@pytest.mark.parametrize(
    "text",
    [
        # the driver's own DLL missing is no driver, not a broken DLL (Langchain-Chatchat/Langchain-Chatchat#87, title)
        "FileNotFoundError: Could not find module 'nvcuda.dll' (or one of its dependencies). Try using the full path with constructor syntax.",
        # Paddle wanting another cuDNN major (PaddlePaddle/Paddle#50588): cudnn-mismatch's, not a generic DLL failure
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_7.dll) that Paddle depends on is not "
        "configured correctly. (error code is 126)",
        # the sub-library itself not found ("Could not locate"), not error 126 (PaddlePaddle/Paddle#52865's title)
        "Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!",
    ],
)
def test_what_the_platform_signatures_must_not_claim(text):
    codes = {c["code"] for c in triage(text, REG)["candidates"]}
    assert "dll-load-failure" not in codes, (text, codes)


@pytest.mark.parametrize(
    "text",
    [
        # NVIDIA/nccl#111: between nodes, the socket connect was refused
        "*server name* [0] include/socket.h:185 WARN Call to connect failed : Connection refused\n"
        "NCCL failure *MyProgram*.cu:110 'unhandled system error'",
        # NVIDIA/nccl-tests#166 (its network part)
        "ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : "
        "Software caused connection abort\nubuntu: Test NCCL failure common.cu:958 'unhandled system error'",
    ],
)
def test_nccl_system_error_from_the_network_is_not_shm(text, tmp_path, empty_facts):
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--facts", str(empty_facts), "--error-file", str(err), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    # the rules do not call it /dev/shm (the learned fallback may still guess, as a labelled guess: learned2's)
    ruled = [(f["code"], f["check"]) for f in json.loads(r.stdout)["findings"] if f["check"] != "learned-cause"]
    assert not any(c == "shm-exhausted" for c, _ in ruled), ruled


def test_store_python_is_named_in_the_dll_fix(tmp_path, empty_facts):
    # pytorch/pytorch#112955: its title and a path of its log (the Microsoft Store's Python)
    text = (
        "972320 INFO: Loading module hook 'hook-torchvision.ops.py' from 'C:\\\\Users\\\\flydog\\\\AppData\\\\Local\\\\Packages\\\\"
        "PythonSoftwareFoundation.Python.3.11_qbz5n2kfra8p0\\\\LocalCache\\\\local-packages\\\\Python311\\\\site-packages\\\\"
        "_pyinstaller_hooks_contrib\\\\hooks\\\\stdhooks'...\n"
        'Error loading "AppData\\Local\\Temp\\_MEI136882\\torch\\lib\\cufft64_10.dll" or one of its dependencies.'
    )
    err = tmp_path / "e.txt"
    err.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--facts", str(empty_facts), "--error-file", str(err), "--format", "json"])
    f = next(f for f in json.loads(r.stdout)["findings"] if f["code"] == "dll-load-failure")
    assert f["evidence"]["store_python"].startswith("PythonSoftwareFoundation.Python.3.11")
    assert any("Microsoft Store" in c for c in f["fix"]["commands"])
