"""Round 5 of the paste reader: facts a verbatim paste states in a tool's own output (pip show) are read as facts.

The pastes are real reporters' texts kept in the (unsealed) blind batches; each test names the thread."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

from cudadoctor.readers import issue, packages

ROOT = os.path.join(os.path.dirname(__file__), "data", "blind")


def _paste(case: str) -> str:
    path = glob.glob(os.path.join(ROOT, case.split("-")[0], case + "*.paste.txt"))[0]
    with open(path, encoding="utf-8") as f:
        return f.read()


def _dists(text: str) -> dict:
    facts = issue.read(text)["facts"]
    return {d["name"]: d for d in (facts.get("packages") or {}).get("distributions") or []}


def test_pip_show_blocks_give_the_installed_versions():
    # https://github.com/ModelCloud/GPTQModel/issues/1528: `pip show gptqmodel torch transformers ...` on Windows,
    # two blocks separated by "---" after pip's "Package(s) not found" warning.
    got = _dists(_paste("b18-13"))
    assert got["torch"]["version"] == "2.6.0+cu126"
    assert got["transformers"]["version"] == "4.51.0"
    assert "gptqmodel" not in got  # pip said it is not installed
    # https://github.com/ostris/ai-toolkit (b17-40): a `pip show torch` typed at a Windows venv prompt
    assert _dists(_paste("b17-40"))["torch"]["version"] == "2.4.0+cu121"
    # a Colab cell's `pip show torch` cut after its Version line (b16-38)
    assert _dists(_paste("b16-38"))["torch"]["version"] == "1.11.0+cu113"


def test_pip_show_is_not_a_complete_listing():
    facts = issue.read(_paste("b18-13"))["facts"]
    assert not facts["packages"].get("complete")  # pip show names only the packages asked about


def test_pip_show_needs_name_then_version():
    assert packages.read_pip_show(["Name: torch", "Summary: x"]) == []
    assert packages.read_pip_show(["Name: torch", "Version: 2.1.0+cpu"])[0]["version"] == "2.1.0+cpu"


def _codes(text: str, tmp_path: Path) -> dict:
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    r = subprocess.run(
        [sys.executable, "-m", "cudadoctor", "check", "--from-text", str(f), "--format", "json"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return {x["code"]: x["severity"] for x in json.loads(r.stdout)["findings"]}


def test_build_isolation_from_the_paste_alone(tmp_path):
    # torch shown installed by pip show + "No module named torch" while pip installs a source package
    assert "extension-build-isolation" in _codes(_paste("b18-13"), tmp_path)
