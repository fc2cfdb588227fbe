"""Extractors (cudadoctor/errortext/extract.py) on real texts from real threads (tests/data/extract/)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.errortext import extract

ROOT = Path(__file__).resolve().parent.parent
CASES = [json.loads(x) for x in (ROOT / "tests" / "data" / "extract" / "real_texts.jsonl").read_text().splitlines() if x.strip()]


def _ids(c):
    return c["url"].split("github.com/")[-1]


def test_every_case_names_its_thread_and_each_class_has_two_independent_wordings():
    classes = {"number": set(), "name": set(), "xid": set(), "gpu": set(), "versions": set()}
    for c in CASES:
        assert c["url"].startswith("https://github.com/")
        repo = "/".join(c["url"].split("/")[3:5])
        if c.get("numbers"):
            classes["number"].add(repo)
        if c.get("names"):
            classes["name"].add(repo)
        if c.get("xids"):
            classes["xid"].add(repo)
        if c.get("gpus"):
            classes["gpu"].add(repo)
        if c.get("versions"):
            classes["versions"].add(repo)
    assert all(len(v) >= 2 for v in classes.values()), classes


@pytest.mark.parametrize("case", [c for c in CASES if "numbers" in c or "names" in c], ids=_ids)
def test_errors_found_by_number_and_name(case):
    refs = extract.errors(case["text"])
    for n in case.get("numbers", []):
        assert any(r.how == "number" and r.value == n for r in refs), (n, refs)
    for name in case.get("names", []):
        assert any(name in r.name.split(" / ") for r in refs if r.how in ("name", "message")), (name, refs)
    if case.get("code"):
        assert {r.code for r in refs} == {case["code"]}, refs


@pytest.mark.parametrize("case", [c for c in CASES if "xids" in c], ids=_ids)
def test_xids(case):
    refs = extract.xids(case["text"])
    assert [r.xid for r in refs] == case["xids"]
    assert {r.code for r in refs if r.code} == ({case["code"]} if case["code"] else set())


@pytest.mark.parametrize("case", [c for c in CASES if "gpus" in c], ids=_ids)
def test_gpu_names_give_their_capability(case):
    found = extract.gpus(case["text"])
    for name, cc in case["gpus"]:
        assert (name, cc) in found, found


def test_numbers_resolve_by_the_current_headers_first():
    # 34 was cudaErrorNotReady before CUDA 10.1 and is cudaErrorStubLibrary now: the current meaning wins.
    (ref,) = [r for r in extract.errors("Warp CUDA error 34") if r.how == "number"]
    assert ref.code == "stub-libcuda" and "StubLibrary" in ref.name
    # 38 only ever meant cudaErrorNoDevice (pre-10.1 numbering).
    (ref,) = [r for r in extract.errors("cuda runtime error (38)") if r.how == "number"]
    assert ref.code == "no-gpu-visible"
    # A number after words that are not about CUDA is not an error code.
    assert extract.errors("Python error 35 in line 2; exit code 100") == []


def test_number_36_maps_to_no_code():
    (ref,) = extract.errors("Warp CUDA error 36 (in function cuda_driver_version, warp.cu:1721)")
    assert ref.value == 36 and ref.code is None


def test_table_signatures_are_valid_and_name_their_sources():
    sigs = extract.table_signatures()
    assert len(sigs) > 40
    for s in sigs:
        assert s.sources and s.implies and s.checked and s.confidence in ("high", "medium", "low")


def _cli(*args, stdin=None):
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


@pytest.mark.parametrize("case", [c for c in CASES if c.get("code")], ids=_ids)
def test_real_texts_reach_their_code_through_triage(case):
    r = _cli("triage", "-f", "-", "--format", "json", stdin=case["text"])
    assert r.exit_code == 0, r.output
    top = json.loads(r.output)["candidates"][0]
    assert top["code"] == case["code"], r.output


@pytest.mark.parametrize("case", [c for c in CASES if c.get("code")], ids=_ids)
def test_real_texts_reach_their_code_through_check_error_file(case, tmp_path):
    """With the facts of a healthy machine (the text comes from elsewhere), the diagnosis still names the
    text's code (the facts may contradict it: that is said, not hidden)."""
    f = tmp_path / "error.txt"
    f.write_text(case["text"])
    facts = ROOT / "tests" / "fixtures" / "facts" / "hgx-8x-h100-healthy.json"
    r = _cli("check", "--facts", str(facts), "--error-file", str(f), "--format", "json")
    assert r.exit_code in (0, 1), r.output
    diag = json.loads(r.output)["extra"]["diagnosis"]
    assert case["code"] in (diag["code"], diag["root_cause_of"]), diag


@pytest.mark.parametrize("case", [c for c in CASES if "versions" in c], ids=_ids)
def test_versions_beside_labels(case):
    got = extract.versions(case["text"])
    for label, want in case["versions"].items():
        assert got.get(label, [])[: len(want)] == want, got


def test_versions_in_any_label_style():
    # The wordings issue 21 names (full-width colon, "pytorch:", "my gcc is", "driver 535"); never a guess.
    assert extract.versions("CUDA Version：11.3")["cuda"] == ["11.3"]
    assert extract.versions("pytorch:1.10")["torch"] == ["1.10"]
    assert extract.versions("my gcc is 13.2.1")["gcc"] == ["13.2.1"]
    assert extract.versions("driver 535")["driver"] == ["535"]
    assert extract.versions("torch.cuda.is_available() returns False") == {}
    assert "torch" not in extract.versions("CUDA used to build PyTorch: 11.7")
