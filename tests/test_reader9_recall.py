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
    return reader_recall.measure(reader_recall.readable_batches())


def test_recall_and_precision_over_the_blind_batches():
    r = _figures()
    assert r["cases"] >= 781
    f = r["fields"]
    total = {k: sum(s[k] for s in f.values()) for k in ("recorded", "agree", "contradict")}
    assert total["agree"] / total["recorded"] >= 0.57, total
    assert total["agree"] / (total["agree"] + total["contradict"]) >= 0.985, total
    for field, floor in (("python", 0.88), ("os", 0.72), ("torch", 0.69), ("cuda_runtime", 0.70), ("gpus", 0.79)):
        assert f[field]["agree"] / f[field]["recorded"] >= floor, (field, f[field])


def test_what_is_sealed_is_read_from_the_batches_themselves(tmp_path):
    """A batch folder is read once it holds its frozen first-sight score (or train_classifier's allow-list names it);
    a batch being collected (no first-sight file) is never read, whatever its number: unsealing needs no code edit."""
    import json

    names = [p.name for p in reader_recall.readable_batches()]
    assert names[:1] == ["b10"] and {"b24", "b28", "b29"} <= set(names)
    for p in reader_recall.readable_batches():
        assert any(p.glob("first-sight-*.json")) or p.name in reader_recall._allow_list()
    batch = tmp_path / "b97"
    batch.mkdir()
    (batch / "b97-01.json").write_text(json.dumps({"label": "healthy", "facts": {"python": "3.11"}}), encoding="utf-8")
    (batch / "b97-01.paste.txt").write_text("Python 3.11.4\n", encoding="utf-8")
    assert not reader_recall.readable(batch)
    assert reader_recall.cases([batch]) == []
    (batch / "first-sight-0000000.json").write_text("{}", encoding="utf-8")
    assert reader_recall.readable(batch)
    assert [c[0].name for c in reader_recall.cases([batch])] == ["b97-01.paste.txt"]
