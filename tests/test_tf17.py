"""TensorFlow 2.11+ on native Windows has no GPU build (session 17): companion-cpu-only-build, read from the version
the paste states (pip's listing, an issue form's "TensorFlow version" field, prose) and the Windows it names.

The real texts in tests/data/tf17/ are public tensorflow/tensorflow threads (the number is in each file's name) whose
maintainer answer is TensorFlow's install page: "TensorFlow 2.10 was the last TensorFlow release that supported GPU
on native-Windows" (https://www.tensorflow.org/install/pip#windows-native)."""

from __future__ import annotations

from pathlib import Path

import pytest
from checkcli import codes, paste_findings, run_check, severities

from cudadoctor.readers import prose

DATA = Path(__file__).parent / "data" / "tf17"


@pytest.mark.parametrize(
    "name, severity",
    [
        ("tf-60172-win11-tf212-num-gpus-0", "error"),  # "Num GPUs Available:  0"
        ("tf-60269-win11-tf212-device-lib-cpu-only", "error"),  # device_lib lists device_type "CPU" only
        ("tf-62322-win11-tf2121-is-gpu-available-empty", "error"),  # "Is GPU Available: []"
        ("tf-73368-win11-tf217-cant-detect", "warning"),  # the symptom only in the reporter's own sentence
        ("tf-85006-win11-tf218-cpu-device-only", "warning"),
    ],
)
def test_tensorflow_after_2_10_on_native_windows_is_named(name, severity):
    got = run_check("--from-text", str(DATA / f"{name}.txt"))
    assert severities(got).get("companion-cpu-only-build") == severity, codes(got)
    f = next(f for f in got if f["code"] == "companion-cpu-only-build")
    assert "native Windows" in f["title"] and "WSL2" in " ".join(f["fix"]["commands"])


def test_tensorflow_2_1_on_windows_is_not_this_cause():
    # tensorflow#38090: TF 2.1 had Windows GPU builds (its cause was CUDA 10.2 instead of 10.1)
    got = run_check("--from-text", str(DATA / "tf-38090-win10-tf21-cuda102-not-this.txt"))
    assert "companion-cpu-only-build" not in codes(got)


@pytest.mark.parametrize(
    "text",
    [
        # the same words on Linux and in WSL2: TensorFlow's Linux wheels have GPU support
        "OS: Ubuntu 22.04\ntensorflow==2.12.0\nNum GPUs Available:  0\n",
        "Windows 11, WSL2 Ubuntu 22.04\ntensorflow 2.15.0\nNum GPUs Available:  0\n",
        # 2.10 on Windows: the last release with a native GPU build
        "Windows 10\nTensorflow Version: 2.10.1\nNum GPUs Available:  0\n",
    ],
)
def test_not_on_linux_wsl_or_2_10(tmp_path, text):
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, text))


def test_collect_env_listing_gives_a_warning_without_a_symptom(tmp_path):
    text = (DATA.parent / "blind" / "b12" / "b12-18-tf212-native-windows-1050ti-no-gpu.txt").read_text(encoding="utf-8")
    got = paste_findings(tmp_path, text, "--from-collect-env")
    assert severities(got).get("companion-cpu-only-build") == "warning"


@pytest.mark.parametrize(
    "line, version",
    [
        ("Tensorflow Version: v2.12.0-rc1-12-g0db597d0d75 2.12.0", "2.12.0"),
        ("My tensorflow version is 2.12.0.", "2.12.0"),
        ("I've installed TensorFlow-GPU version 2.12.1", "2.12.1"),
        ("tf 2.15", "2.15"),
    ],
)
def test_prose_reads_tensorflow_version(line, version):
    assert prose.read([line])["tensorflow"]["value"] == version


@pytest.mark.parametrize("line", ["tensorflow with CUDA 11.2", "pip install tensorflow==2.12.0", "tflite 3.1"])
def test_prose_does_not_read_other_numbers_as_tensorflow(line):
    assert "tensorflow" not in prose.read([line])
