"""A user's own words for a program that runs on the CPU, with nothing showing which torch is installed:
a warning naming the most common cause (a CPU-only torch build) and the command that settles it; nothing when
the facts show the build, when an error names another cause, or when the program is another runtime."""

from __future__ import annotations


import pytest
from checkcli import paste_findings


def _findings(tmp_path, text: str, source: str = "--from-text"):
    """``check SOURCE FILE --format json`` on ``text``: (code, severity, finding) for each finding."""
    return [(f["code"], f["severity"], f) for f in paste_findings(tmp_path, text, source, env={"NO_COLOR": "1"})]


@pytest.mark.parametrize(
    "paste",
    [
        # https://github.com/sczhou/CodeFormer/issues/307 (fixed by installing torch from the cu121 index)
        "Use CPU\nWhen running on my own computer, I use the CPU for calculations throughout the entire process, "
        "rather than the GPU. May I ask how to solve this problem",
        # https://github.com/simonw/til/issues/69 (fixed by installing torch==1.12.1+cu113)
        "Dolly not using GPU\nI ran into the issue you hit where the GPU isn't being used by pytorch.",
    ],
)
def test_runs_on_the_cpu_with_torch_unknown_is_a_cpu_build_warning(tmp_path, paste):
    got = [(c, s, f) for c, s, f in _findings(tmp_path, paste) if c == "cpu-only-torch"]
    assert got and got[0][1] == "warning", got
    assert "torch.version.cuda" in got[0][2]["fix"]["commands"][0]


def test_a_cuda_build_in_the_facts_is_no_cpu_build(tmp_path):
    paste = (
        "Collecting environment information...\nPyTorch version: 2.1.0+cu121\nIs debug build: False\n"
        "CUDA used to build PyTorch: 12.1\n\nIt is not using my GPU, everything runs on the CPU."
    )
    assert not [c for c, _s, _f in _findings(tmp_path, paste) if c == "cpu-only-torch"]


def test_another_runtime_is_not_torchs_build(tmp_path):
    # https://github.com/ollama/ollama/issues/13423: ollama ships its own CUDA runners; torch is not involved
    paste = (
        "Ollama doesn't run on GPU and it runs on CPU\nWhen I try using Ollama with qwen3:30b model, I found that my GPU "
        "havn't any usage and I can't found ollama on `nvidia-smi` command. However, I found that Ollama has a high CPU usage."
    )
    assert not [c for c, _s, _f in _findings(tmp_path, paste) if c == "cpu-only-torch"]


def _collect_env(tmp_path, text: str):
    return _findings(tmp_path, text, "--from-collect-env")


# https://github.com/zyddnys/manga-image-translator/issues/210: requirements.txt pulled torch from PyPI on Windows
# (its facts as collect_env renders them: tests/data/holdout_cases/h90-win-manga-translator-requirements-cpu.txt)
MANGA_210 = """Collecting environment information...
PyTorch version: Could not collect
Is debug build: Could not collect
CUDA used to build PyTorch: Could not collect
ROCM used to build PyTorch: N/A

OS: Windows
Is CUDA available: False
"""


def test_windows_with_cuda_unavailable_and_the_build_unknown_is_pypis_cpu_wheel(tmp_path):
    got = [(c, s, f) for c, s, f in _collect_env(tmp_path, MANGA_210) if c == "cpu-only-torch"]
    assert got and got[0][1] == "warning", got
    assert any("download.pytorch.org/whl/" in c for c in got[0][2]["fix"]["commands"])


def test_linux_with_cuda_unavailable_is_not_blamed_on_the_wheel(tmp_path):
    # the same report from Linux, where PyPI's torch is a CUDA build: nothing says which cause
    got = _collect_env(tmp_path, MANGA_210.replace("OS: Windows", "OS: Ubuntu 22.04.3 LTS (x86_64)"))
    assert not [c for c, _s, _f in got if c == "cpu-only-torch"], got


# https://github.com/pytorch/pytorch/issues/23778: conda planned the cpu-only selector and a +cpu pytorch-nightly
CONDA_23778 = """Collecting environment information...
PyTorch version: Could not collect
Is debug build: No

OS: Linux

Versions of relevant libraries:
[pip3] No relevant packages
[conda] cpu-only                  1.0-0
[conda] pytorch-nightly           1.2.0.dev20190805+cpu
"""


def test_a_cpu_build_named_by_the_package_lists(tmp_path):
    got = [(c, s, f) for c, s, f in _collect_env(tmp_path, CONDA_23778) if c == "cpu-only-torch"]
    assert got and "1.2.0.dev20190805+cpu" in got[0][2]["title"], got
