"""A module's CPU-only and CUDA distributions installed together (kb/cpu_gpu_twins.json): both write the same import
name, so the CPU files can be the ones imported — read from a package list or from a text that says both are installed,
and not from advice to install only one, nor from TensorFlow 2's tensorflow (the full build)."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

CPU = "companion-cpu-only-build"

# microsoft/onnxruntime#26996 (the reporter's words and onnxruntime's warning)
ORT_BOTH = (
    "When I install both onnxruntime and onnxruntime-gpu packages, I can not use the CUDAExecutionProvider.\n"
    "Specified provider 'CUDAExecutionProvider' is not in available provider names. Available providers: "
    "'AzureExecutionProvider, CPUExecutionProvider'"
)
# tests/data/error_corpus/lib9.jsonl (faiss): the sentence alone, no error of faiss's own
FAISS_BOTH = "Both faiss-cpu and faiss-gpu is installed."


def _env(pip_rows: str) -> str:
    return (
        "Collecting environment information...\nPyTorch version: Could not collect\nOS: Ubuntu 22.04\n"
        "Python version: 3.10.12\nGPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090\n"
        "Nvidia driver version: 550.54.14\n\nVersions of relevant libraries:\n" + pip_rows + "\n[conda] Could not collect\n"
    )


def test_both_named_installed_with_the_provider_missing_is_the_cause(tmp_path):
    f = paste_findings(tmp_path, ORT_BOTH)
    assert CPU in codes(f)
    assert severities(f)[CPU] == "error"
    ours = next(x for x in f if x["code"] == CPU)
    assert "onnxruntime-gpu" in ours["title"] and "pip uninstall -y onnxruntime onnxruntime-gpu" in " ".join(
        ours["fix"]["commands"]
    )


def test_both_named_installed_without_a_failure_is_a_warning(tmp_path):
    f = paste_findings(tmp_path, FAISS_BOTH)
    assert severities(f).get(CPU) == "warning"


@pytest.mark.parametrize(
    "rows",
    [
        "[pip3] paddlepaddle==2.5.1\n[pip3] paddlepaddle-gpu==2.5.1",
        "[pip3] onnxruntime==1.17.1\n[pip3] onnxruntime_gpu==1.17.1",
        "[pip3] tensorflow==1.15.0\n[pip3] tensorflow-gpu==1.15.0",
    ],
)
def test_both_in_the_package_list(tmp_path, rows):
    f = paste_findings(tmp_path, _env(rows), source="--from-collect-env")
    assert CPU in codes(f)


@pytest.mark.parametrize(
    "rows",
    [
        "[pip3] onnxruntime-gpu==1.17.1",  # the GPU package alone
        "[pip3] tensorflow==2.10.0\n[pip3] tensorflow-gpu==2.10.0",  # tensorflow 2.1+ is the full build
        "[pip3] onnxruntime==1.17.1",  # the CPU package alone: nothing shadows anything
    ],
)
def test_no_pair_no_finding(tmp_path, rows):
    assert CPU not in codes(paste_findings(tmp_path, _env(rows), source="--from-collect-env"))


@pytest.mark.parametrize(
    "text",
    [
        # advice, not a state (ssube/onnx-web#19)
        "users should usually only have one of onnxruntime, onnxruntime-gpu, or onnxruntime-directml installed.",
        "pip uninstall onnxruntime and then install onnxruntime-gpu",
        # only the GPU package named
        "I installed onnxruntime-gpu 1.16 and the CUDA provider works.",
    ],
)
def test_advice_or_one_package_is_no_pair(tmp_path, text):
    assert CPU not in codes(paste_findings(tmp_path, text))
