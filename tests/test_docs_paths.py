"""The JSON paths the README and docs/ name (`facts.x.y`) exist in real output: the check recorded on the H100,
this machine's live check, and a check of a real pasted issue (issue 23 item 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import run_cli

import cudadoctor.facts as facts_module

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
PATH = re.compile(r"`(facts(?:\.[A-Za-z_0-9]+)+)`")


def _named() -> set:
    out = set()
    for doc in DOCS:
        for m in PATH.finditer(doc.read_text(encoding="utf-8")):
            p = m.group(1)
            if p == "facts.py" or hasattr(facts_module, p.split(".")[1]):  # the module and its functions, not a path
                continue
            out.add((p, doc.name))
    return out


def _has(doc: dict, path: str) -> bool:
    cur = doc
    for part in path.split("."):
        if not (isinstance(cur, dict) and part in cur):
            return False
        cur = cur[part]
    return True


def test_every_json_path_the_docs_name_is_in_real_output():
    outputs = [json.loads((REPO / "tests" / "fixtures" / "h100" / "check.json").read_text())]
    for args in (["check", "--format", "json"],
                 ["check", "--from-text", str(sorted((REPO / "tests" / "data" / "blind" / "b10").glob("*.paste.txt"))[0]),
                  "--format", "json"]):
        r = run_cli(*args, timeout=300)
        assert r.returncode in (0, 1), r.stderr
        outputs.append(json.loads(r.stdout))
    named = _named()
    assert len(named) >= 5
    missing = sorted((p, d) for p, d in named if not any(_has(o, p) for o in outputs))
    assert not missing, missing
