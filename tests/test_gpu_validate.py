"""benchmarks/gpu_validate.py: the one command for a GPU machine keeps going when a step fails and
leaves its results folder complete. Here (no GPU) the GPU steps fail, which is what is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile

from conftest import REPO


def test_validation_runs_every_step_records_and_summarises_without_a_gpu(tmp_path):
    out = tmp_path / "results"
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_validate.py"), "--out", str(out),
                        "--only", "machine,diagnosis", "--budget-s", "240"], capture_output=True, text=True, timeout=400)
    steps = json.loads((out / "steps.json").read_text())
    names = [s["name"] for s in steps]
    # every step ran although the first ones failed (no nvidia-smi here)
    assert names[:3] == ["nvidia-smi", "nvidia-smi-q", "torch-properties"] and "report" in names
    assert steps[0]["verdict"] == "fail" and "nvidia-smi" in steps[0]["note"]
    # no GPU, no driver: check's error finding fails the "healthy machine" step, with the code named
    check = next(s for s in steps if s["name"] == "check-json")
    assert check["verdict"] == "fail" and "no-nvidia-driver" in check["note"]
    assert r.returncode == 1 and "| check-json | fail |" in r.stdout and r.stdout.strip().endswith(str(out))
    for rec in ("check.json", "collect.json", "devices.json"):
        doc = json.loads((out / "recordings" / rec).read_text())
        assert doc.get("kind", "").startswith("cudadoctor-"), rec
    with tarfile.open(out / "results.tar.gz") as tar:
        assert "summary.md" in tar.getnames() and "recordings/collect.json" in tar.getnames()


def test_an_unknown_step_group_is_bad_input(tmp_path):
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_validate.py"), "--out", str(tmp_path), "--only", "nope"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown step group" in r.stderr
