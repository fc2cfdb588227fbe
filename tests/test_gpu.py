"""On a real NVIDIA GPU only (``pytest -m gpu``; benchmarks/gpu_validate.py runs them too).

Everywhere else each test is skipped with the reason: no nvidia-smi, or torch without a usable GPU.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys

import pytest

from conftest import SHARED, run_cli, torch_python

pytestmark = pytest.mark.gpu


@functools.lru_cache(maxsize=1)
def _gpu_reason() -> str:
    """Empty when a GPU is usable from torch, else why not (one line)."""
    if shutil.which("nvidia-smi") is None:
        return "no NVIDIA GPU here: nvidia-smi not found"
    py = torch_python()
    if py is None:
        return "no interpreter with torch (set CUDADOCTOR_TEST_TORCH_PYTHON)"
    r = subprocess.run([py, "-c", "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0 or not r.stdout.strip().isdigit() or int(r.stdout.strip()) == 0:
        return f"torch cannot use a GPU here ({(r.stderr.strip().splitlines() or [r.stdout.strip()])[-1][:120]})"
    return ""


@pytest.fixture
def gpu_python() -> str:
    reason = _gpu_reason()
    if reason:
        pytest.skip(reason)
    return torch_python() or sys.executable


def _torch_props(py: str) -> list:
    code = ("import json, torch; print(json.dumps([dict(name=p.name, total_memory=p.total_memory, cc=f'{p.major}.{p.minor}', "
            "sms=p.multi_processor_count) for p in (torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count()))]))")
    return json.loads(subprocess.run([py, "-c", code], capture_output=True, text=True, check=True, timeout=300).stdout)


def test_check_on_a_healthy_gpu_machine_has_no_error_finding(gpu_python):
    r = run_cli("check", "--format", "json", python=gpu_python)
    report = json.loads(r.stdout)
    errors = [f["code"] for f in report["findings"] if f["severity"] == "error"]
    assert r.returncode == 0 and not errors, (errors, r.stderr[-2000:])
    assert report["facts"]["torch"]["cuda_available"] is True


def test_devices_report_agrees_with_torch_on_every_gpu(gpu_python):
    r = run_cli("devices", "--format", "json", python=gpu_python)
    assert r.returncode == 0, r.stderr[-2000:]
    text = r.stdout
    for p in _torch_props(gpu_python):
        assert p["name"] in text and p["cc"] in text and str(p["sms"]) in text, p


def test_smoke_passes_every_stage_on_the_gpu(gpu_python):
    data = SHARED / "data"
    args = ["--data-dir", str(data)] if (data / "MNIST" / "raw").is_dir() else ["--synthetic"]
    r = run_cli("smoke", "--format", "json", *args, python=gpu_python, timeout=600)
    doc = json.loads(r.stdout)
    failed = [s["name"] for s in doc["stages"] if s["verdict"] not in ("pass", "skip")]
    assert r.returncode == 0 and not failed, (failed, r.stderr[-2000:])


def test_an_empty_cuda_visible_devices_is_no_gpu_visible(gpu_python):
    r = run_cli("check", "--format", "json", python=gpu_python, env={"CUDA_VISIBLE_DEVICES": ""})
    assert "no-gpu-visible" in {f["code"] for f in json.loads(r.stdout)["findings"]}
