"""Issue 21, reader round 9: the paste reader's recall and precision against the facts people recorded from the same
real threads (benchmarks/reader_recall.py over every unsealed blind batch; docs/reader-recall.md has the figures).

Floors a little under the figures measured on the branch that added them (58.5 % recall, 98.9 % precision over 1920
recorded values): a change that makes the reader read less, or read wrong, fails here.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import reader_recall  # noqa: E402


def _figures():
    folders = sorted(p for p in (REPO / "tests/data/blind").glob("b*") if p.is_dir() and p.name not in reader_recall.SEALED)
    return reader_recall.measure(folders)


def test_recall_and_precision_over_the_blind_batches():
    r = _figures()
    assert r["cases"] >= 781
    f = r["fields"]
    total = {k: sum(s[k] for s in f.values()) for k in ("recorded", "agree", "contradict")}
    assert total["agree"] / total["recorded"] >= 0.57, total
    assert total["agree"] / (total["agree"] + total["contradict"]) >= 0.985, total
    for field, floor in (("python", 0.88), ("os", 0.72), ("torch", 0.69), ("cuda_runtime", 0.70), ("gpus", 0.79)):
        assert f[field]["agree"] / f[field]["recorded"] >= floor, (field, f[field])


def test_sealed_batches_are_never_read():
    assert {"b28", "b29"} <= reader_recall.SEALED
    folders = [REPO / "tests/data/blind" / "b28", REPO / "tests/data/blind" / "b29"]
    assert reader_recall.cases(folders) == []
