"""benchmarks/score_blind.py: a label `uncatalogued:NAME` frozen before the catalogue had a code NAME is
matched by a finding with code NAME once it has one, and such cases are listed in a note."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("score_blind", REPO / "benchmarks" / "score_blind.py")
assert _spec and _spec.loader
score_blind = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(score_blind)

CASE = "b10-13-dgl-101-cpu-build-torch111-cu115"  # https://github.com/dmlc/dgl/issues/5427 (frozen uncatalogued)


def test_an_uncatalogued_label_is_its_code_once_the_catalogue_has_it():
    codes = score_blind._codes()
    assert "companion-cpu-only-build" in codes
    assert score_blind.effective_label("uncatalogued:companion-cpu-only-build") == "companion-cpu-only-build"
    assert score_blind.effective_label("uncatalogued:no-such-cause-yet") == "uncatalogued:no-such-cause-yet"
    assert score_blind.effective_label("driver-too-old") == "driver-too-old"
    finding = [{"severity": "warning", "code": "companion-cpu-only-build"}]
    assert score_blind._judge("uncatalogued:companion-cpu-only-build", finding)[:2] == (True, True)
    assert score_blind._judge("uncatalogued:no-such-cause-yet", finding)[:2] == (False, False)


def test_the_batch_score_counts_it_and_says_so(tmp_path, capsys, monkeypatch):
    src = REPO / "tests" / "data" / "blind" / "b10"
    for f in src.glob(CASE + ".*"):
        shutil.copy(f, tmp_path / f.name)
    assert json.loads((tmp_path / f"{CASE}.json").read_text(encoding="utf-8"))["label"] == "uncatalogued:companion-cpu-only-build"
    monkeypatch.setattr(sys, "argv", ["score_blind.py", str(tmp_path), "--json", str(tmp_path / "out.json")])
    assert score_blind.main() == 0
    out = capsys.readouterr().out
    assert f"{CASE}: uncatalogued:companion-cpu-only-build -> companion-cpu-only-build" in out
    (row,) = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert row["catalogued_since"] == "companion-cpu-only-build"
    assert row["facts_right"] and row["paste_right"], row


def test_an_alias_maps_an_uncatalogued_name_to_the_code_its_cause_got():
    """tests/data/blind/label_aliases.json: a name frozen as uncatalogued whose cause later got a code under another
    name is scored against that code; every alias points at a catalogue code and is used by some frozen label."""
    doc = json.loads((REPO / "tests" / "data" / "blind" / "label_aliases.json").read_text(encoding="utf-8"))
    codes = score_blind._codes()
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in (REPO / "tests" / "data" / "blind").glob("b*/*.json")]
    labels = {d["label"] for d in docs if isinstance(d, dict) and "label" in d}
    for name, a in doc["aliases"].items():
        assert a["code"] in codes and name not in codes and a["why"], name
        assert f"uncatalogued:{name}" in labels, name
        assert score_blind.effective_label(f"uncatalogued:{name}") == a["code"]
    assert score_blind._judge("uncatalogued:system-libstdcxx-too-old", [{"severity": "error", "code": "libstdcxx-too-old"}])[
        :2
    ] == (True, True)
    # without the code in the catalogue the alias does not apply
    assert score_blind.effective_label("uncatalogued:system-libstdcxx-too-old", codes=frozenset()) == (
        "uncatalogued:system-libstdcxx-too-old"
    )
