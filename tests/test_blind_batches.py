"""The blind batches (tests/data/blind/bNN/): real threads collected before anyone fixing the code saw them.

This checks each case's *format* only, never its diagnosis (a batch's first-sight score is frozen in its
README.md and scored by benchmarks/score_blind.py): the json keys, a label the catalogue knows (or `healthy`,
or `uncatalogued:<name>` for a confirmed cause without a code), the verbatim paste, and a source URL used once
across all batches and the other corpora (shared cases, holdout cases, error corpus).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cudadoctor import registry

DATA = Path(__file__).parent / "data"
BLIND = DATA / "blind"
KEYS = {"id", "source", "label", "secondary", "resolution", "facts", "error", "signal", "layout", "confidence", "notes"}
FACT_KEYS = {
    "os",
    "python",
    "torch",
    "torch_cuda",
    "is_cuda_available",
    "cuda_runtime",
    "gpus",
    "driver",
    "cudnn",
    "packages",
    "conda_packages",
    "env",
}
# A batch folder also holds its scoring output (first-sight.json): a case is a json whose stem names its batch.
CASES = sorted(p for batch in BLIND.glob("b*/") for p in batch.glob("*.json") if p.stem.startswith(batch.name))
CODES = set(registry.load(plugins=False).codes)


def _case(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _label_ok(label: str) -> bool:
    return label == "healthy" or label in CODES or re.fullmatch(r"uncatalogued:[a-z0-9]+(-[a-z0-9]+)*", label) is not None


def _canonical(url: str) -> str:
    """github.com/o/r/issues/N and .../pull/N are one thread; case, a trailing slash or a fragment don't matter."""
    u = url.strip().lower().split("#")[0].rstrip("/")
    return re.sub(r"^https?://(www\.)?", "", u).replace("/pull/", "/issues/")


def _other_corpora_urls() -> set:
    found = set()
    shared = Path(__file__).resolve().parents[2] / "shared" / "cases"  # as tests/casefacts.py finds them
    for folder in (DATA / "holdout_cases", shared):
        for p in folder.glob("*.json"):
            src = _case(p).get("source")
            if isinstance(src, str):
                found.add(_canonical(src))
    # Not the error corpus: once a batch is scored and unsealed, its threads' wordings may join the corpus (as the
    # sources of signatures fixed from it); a batch's novelty was checked against the corpus when it was collected.
    return found


def test_there_are_blind_batches():
    assert CASES, "no blind batch under tests/data/blind/"


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_blind_case_format(path):
    case = _case(path)
    assert set(case) >= KEYS, KEYS - set(case)
    assert case["id"] == path.stem
    assert case["source"].startswith("https://"), case["source"]
    assert _label_ok(case["label"]), case["label"]
    assert all(_label_ok(s) and s != "healthy" for s in case["secondary"]), case["secondary"]
    assert case["confidence"] in ("high", "medium", "low")
    assert case["resolution"].strip()
    assert set(case["facts"]) >= FACT_KEYS, FACT_KEYS - set(case["facts"])
    assert isinstance(case["facts"]["gpus"], list)
    # the collect_env text and the reporter's verbatim paste (title first) are always there
    assert (path.parent / f"{path.stem}.txt").read_text(encoding="utf-8").startswith("Collecting environment information")
    paste = (path.parent / f"{path.stem}.paste.txt").read_text(encoding="utf-8")
    assert paste.strip() and paste.splitlines()[0].strip()
    err = path.parent / f"{path.stem}.error.txt"
    if case["error"]:
        assert err.read_text(encoding="utf-8").strip() == case["error"].strip()
    else:
        assert not err.exists()


def test_blind_sources_are_unique_across_batches_and_corpora():
    seen: dict = {}
    for path in CASES:
        seen.setdefault(_canonical(_case(path)["source"]), []).append(path.stem)
    assert not {u: ids for u, ids in seen.items() if len(ids) > 1}
    assert not sorted(set(seen) & _other_corpora_urls())
