"""Top-1 accuracy of the error-text engine on the corpus of real error texts (tests/data/error_corpus/*.jsonl).

Each line is {"text", "code", "source", "note"}: a verbatim error from a public thread and the code of the
root cause the thread confirmed. The text alone goes through triage (no facts); the first candidate must
be that code. The per-code table is printed in pytest's terminal summary (tests/conftest.py).

CUDADOCTOR_ERROR_CORPUS=DIR reads another directory of *.jsonl files (for a corpus being written).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from cudadoctor import registry
from cudadoctor.errortext import triage

CORPUS = Path(os.environ.get("CUDADOCTOR_ERROR_CORPUS") or Path(__file__).parent / "data" / "error_corpus")
THRESHOLD = 0.95
#: code -> [hits, total]; filled by the test, printed by conftest.pytest_terminal_summary.
TABLE: Dict[str, List[int]] = {}
MISSES: List[Tuple[str, str, str, str]] = []


def corpus() -> List[dict]:
    rows = []
    for f in sorted(CORPUS.glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                d = json.loads(line)
                d["_where"] = f"{f.name}:{n}"
                rows.append(d)
    return rows


def test_every_corpus_line_is_well_formed():
    rows = corpus()
    if not rows:
        pytest.skip(f"no corpus at {CORPUS}")
    reg = registry.load(plugins=False)
    for d in rows:
        assert d.get("text") and d.get("code") and str(d.get("source", "")).startswith("http"), d["_where"]
        assert reg.code(d["code"]) is not None, f"{d['_where']}: code {d['code']!r} is not in the catalogue"


def test_top1_accuracy_per_code_is_at_least_95_percent():
    rows = corpus()
    if not rows:
        pytest.skip(f"no corpus at {CORPUS}")
    reg = registry.load(plugins=False)
    table: Dict[str, List[int]] = defaultdict(lambda: [0, 0])
    MISSES.clear()
    for d in rows:
        res = triage(d["text"], reg)
        top = res["candidates"][0]["code"] if res["candidates"] else "(none)"
        table[d["code"]][1] += 1
        if top == d["code"]:
            table[d["code"]][0] += 1
        else:
            MISSES.append((d["_where"], d["code"], top, d["text"][:120].replace("\n", " / ")))
    TABLE.clear()
    TABLE.update(table)
    hits = sum(h for h, _ in table.values())
    total = sum(t for _, t in table.values())
    assert hits / total >= THRESHOLD, f"top-1 {hits}/{total} = {hits / total:.1%} < {THRESHOLD:.0%}; misses: {MISSES[:20]}"
