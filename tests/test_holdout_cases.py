"""The holdout cases: real threads not used to build the catalogue (tests/data/holdout_cases/README.md).

Measured as the shared cases are: `check --from-collect-env X.txt [--error-file X.error.txt] --format json`
is right when the label is the code of an error or warning finding (healthy: no error finding).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli

HOLDOUT = Path(__file__).parent / "data" / "holdout_cases"
IDS = sorted(p.stem for p in HOLDOUT.glob("[he]*.json"))


def _case(case_id: str) -> dict:
    return json.loads((HOLDOUT / f"{case_id}.json").read_text(encoding="utf-8"))


def _params():
    """Every case; a known miss (its json's `known_miss` says why) or an uncatalogued cause is a strict xfail,
    so that fixing one shows up as a pass to record."""
    for case_id in IDS:
        case = _case(case_id)
        why = case.get("known_miss") or ("no code for this cause yet" if case["label"].startswith("uncatalogued:") else None)
        yield pytest.param(case_id, marks=pytest.mark.xfail(reason=why, strict=True)) if why else case_id


def _findings(txt: Path, error_file: Path = None) -> list:
    args = ["check", "--from-collect-env", str(txt), "--format", "json"]
    if error_file is not None and error_file.exists():
        args += ["--error-file", str(error_file)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.output)["findings"]


def test_the_holdout_set_is_there():
    assert len([i for i in IDS if i.startswith("h")]) >= 54 and len([i for i in IDS if i.startswith("e")]) >= 14


@pytest.mark.parametrize("case_id", list(_params()))
def test_holdout_case_label_is_found(case_id):
    case = _case(case_id)
    findings = _findings(HOLDOUT / f"{case_id}.txt", HOLDOUT / f"{case_id}.error.txt")
    got = [(f["severity"], f["code"]) for f in findings]
    if case["label"] == "healthy":
        assert not [c for s, c in got if s == "error"], got
    else:
        assert case["label"] in [c for s, c in got if s in ("error", "warning")], (case["label"], got)


def test_pip_no_matching_distribution_alone_on_the_newest_python_is_python_unsupported(tmp_path):
    """What many users paste is pip's last line only (pytorch/pytorch#114893, Python 3.12.0 in Nov 2023)."""
    err = tmp_path / "error.txt"
    err.write_text("ERROR: No matching distribution found for torch\n")
    findings = _findings(HOLDOUT / "h18-py3120-no-torch-wheel-rtx4080.txt", err)
    assert "python-unsupported" in [f["code"] for f in findings if f["severity"] in ("error", "warning")]


def test_pip_no_matching_distribution_for_a_pin_is_not_the_interpreter(tmp_path):
    """With a pin, pip saw other versions: the pin or the index is wrong, not the Python."""
    err = tmp_path / "error.txt"
    err.write_text("ERROR: No matching distribution found for torch==1.4.0\n")
    txt = tmp_path / "collect_env.txt"  # a Python released after its torch wheels: the dates say nothing
    txt.write_text((HOLDOUT / "h18-py3120-no-torch-wheel-rtx4080.txt").read_text().replace("3.12.0", "3.12.4"))
    findings = _findings(txt, err)
    assert "python-unsupported" not in [f["code"] for f in findings]


def test_an_unexplained_unavailable_cuda_build_is_never_marked_fine():
    """h78: driver and GPU fine, CUDA unavailable (a script's CUDA_VISIBLE_DEVICES): the PyTorch line is !, not ✓."""
    (txt,) = sorted(HOLDOUT.glob("h78-*.txt"))
    r = CliRunner().invoke(cli, ["check", "--from-collect-env", str(txt)])
    line = next(ln for ln in r.output.splitlines() if "PyTorch" in ln and "is_available() = False" in ln)
    assert line.startswith("[!]"), line
