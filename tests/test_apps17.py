"""Session 17's classes from blind batch b50 (applications built on torch), each with its real wordings and negatives:
a program's own "no GPU found, using CPU" line (what it prints when torch.cuda.is_available() is False), WSL 1 written
in a collect_env's OS field, and torchvision's missing-operator error quoted without its first word."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, run_check, severities

# --- a program's own line: it found no GPU and chose the CPU ----------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "没有发现支持的N卡, 使用CPU进行推理",  # RVC's configs/config.py, printed when torch.cuda.is_available() is False
        "没有发现支持的N卡，使用CPU进行推理",  # the same with a full-width comma (RVC's older infer-web.py)
        "No GPU found, using CPU instead",  # the MiDaS example's line after torch.cuda.is_available()
        "INFO: No CUDA GPU found, using CPU",  # a service's logger line
        "No GPU found, using CPU for transcription...",
    ],
)
def test_a_programs_no_gpu_using_cpu_line_is_running_on_the_cpu(tmp_path, line):
    text = f"My RTX 3090 is not used.\n(venv) H:\\app>python app.py\n{line}\n"
    assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "warning"


def test_the_line_is_not_torchs_where_another_runtime_decides(tmp_path):
    # TensorFlow decides with its own build: not torch's CPU build
    text = "import tensorflow as tf\ngpus = tf.config.list_physical_devices('GPU')\nNo GPU found, using CPU\n"
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))


def test_the_line_does_not_name_a_cpu_build_where_torch_is_a_cuda_build(tmp_path):
    got = paste_findings(tmp_path, "torch 2.3.1+cu121\nNo GPU found, using CPU\n")
    assert not any(f["code"] == "cpu-only-torch" and "nothing shows which torch" in f["title"] for f in got), codes(got)


# --- WSL written in collect_env's OS field ---------------------------------------------------------------------------

_ENV = """Collecting environment information...
PyTorch version: Could not collect
CUDA used to build PyTorch: Could not collect

OS: {os}
GCC version: Could not collect
Python version: 3.10
Python platform: Could not collect
Is CUDA available: Could not collect
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
"""
_ERR = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
    "driver from http://www.nvidia.com/Download/index.aspx"
)


def test_wsl1_in_the_os_field_is_the_cause_not_a_missing_driver(tmp_path):
    env = tmp_path / "env.txt"
    env.write_text(_ENV.format(os="WSL 1 on Microsoft Windows 10"), encoding="utf-8")
    (tmp_path / "err.txt").write_text(_ERR, encoding="utf-8")
    got = run_check("--from-collect-env", str(env), "--error-file", str(tmp_path / "err.txt"))
    assert codes(got) == ["wsl-gpu-unsupported"]


def test_wsl2_in_the_os_field_keeps_the_driver_question(tmp_path):
    env = tmp_path / "env.txt"
    env.write_text(_ENV.format(os="Ubuntu 22.04 (WSL2)"), encoding="utf-8")
    (tmp_path / "err.txt").write_text(_ERR, encoding="utf-8")
    got = run_check("--from-collect-env", str(env), "--error-file", str(tmp_path / "err.txt"))
    assert "wsl-gpu-unsupported" not in codes(got)


# --- torchvision's missing operator, quoted without "operator" -------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: operator torchvision::nms does not exist",  # torchvision's own words
        "RuntimeError: torchvision::nms does not exist",  # as reporters retype it
        "torchvision::roi_align does not exist",
    ],
)
def test_torchvision_missing_operator(tmp_path, line):
    assert "torchvision-mismatch" in codes(paste_findings(tmp_path, line, "--error-file"))
