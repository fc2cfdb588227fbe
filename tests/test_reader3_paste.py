"""The verbatim paste (`check --from-text`) keeps what the facts form has: facts glued to other words or written
in other tools' forms, error lines in one-line code spans, and a CPU-only torch named in any words (issue 21,
task reader3). Real pastes from the blind batches (tests/data/blind, with their threads' URLs in each case's json)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudadoctor.readers import issue, prose
from cudadoctor.readers._text import is_fence

BLIND = Path(__file__).parent / "data" / "blind"
ROOT = Path(__file__).resolve().parents[1]


def _paste(cid: str) -> str:
    batch = cid.split("-")[0]
    (path,) = sorted((BLIND / batch).glob(f"{cid}-*.paste.txt"))
    return path.read_text(encoding="utf-8")


def _codes(text: str, tmp_path: Path) -> dict:
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [sys.executable, "-m", "cudadoctor", "check", "--from-text", str(f), "--format", "json"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return {x["code"]: x["severity"] for x in json.loads(r.stdout)["findings"]}


def test_one_line_code_span_is_content_not_a_fence():
    assert is_fence("```") and is_fence("```python") and is_fence("```Collecting environment information...")
    assert not is_fence("```libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent```")
    got = issue.read(_paste("b15-95"))
    assert "undefined symbol: iJIT_NotifyEvent" in got["error_text"]


def test_facts_glued_to_cjk_text_are_read():
    # "我的系统ubuntu20.04+nvidia530.30+cuda12.1+cudnn12.X" (LLMDet issue 32)
    got = issue.read(_paste("b13-36"))["facts"]
    assert got["system"]["distro"] == "Ubuntu 20.04"
    assert got["nvml"]["driver_version"] == "530.30"
    assert got["toolkit"]["nvcc_version"] == "12.1"  # the CUDA the user installed, as collect_env's runtime line


def test_dashed_versions_of_a_program_banner():
    # Ultralytics' banner: "Ultralytics YOLOv8.1.3 🚀 Python-3.10.11 torch-2.1.0+cpu"
    got = prose.read(["Ultralytics YOLOv8.1.3 🚀 Python-3.10.11 torch-2.1.0+cpu"])
    assert got["torch"]["value"] == "2.1.0+cpu" and got["python"]["value"] == "3.10.11"
    # a wheel's file name says what was downloaded, not what is installed
    assert "torch" not in prose.read(["torch-2.0.0+cu118-cp310-cp310-linux_x86_64.whl is not a supported wheel"])


def test_built_for_version_is_not_the_installed_one():
    lines = _paste("b15-108").splitlines()
    got = prose.read(lines)
    assert got["torch"]["value"] == "2.1.2+cpu"  # "(you have 2.1.2+cpu)", not xFormers' "built for: PyTorch 2.1.2+cu121"


def test_windows_from_a_bare_word_a_drive_path_or_a_dll():
    assert prose.read(["On a clean windows install, starting OneTrainer fails"])["os"]["value"] == "Windows"
    assert prose.read(["[Bug]: error loading fbgemm.dll"])["os"]["value"] == "Windows"
    assert prose.read([r"(pia) PS E:\PIA> python inference.py"])["os"]["value"] == "Windows"
    # a line naming the OS wins over the weaker signs
    assert prose.read(["Ubuntu 22.04", "error loading fbgemm.dll"])["os"]["value"] == "Linux"
    assert "os" not in prose.read(["Windows Subsystem"]) or prose.read(["Windows Subsystem"])["os"]["value"] != "Windows"


@pytest.mark.parametrize(
    "cid",
    [
        "b13-24",  # ">> Using device_type cpu" (InvokeAI's log)
        "b13-28",  # "grabs the CPU version of pytorch", "the CPU-only build of `pytorch`"
        "b13-29",  # conda's plan: "cpu-only-1.0-0", "pytorch-nightly-1.2.0.dev20190805+cpu-py3.7_cpu_0"
        "b14-03",  # "installed Torch without the CUDA version"
        "b14-05",  # "torch-2.1.0+cpu" in Ultralytics' banner
        "b14-16",  # "the torch is actually installed with the cpu version"
        "b15-105",  # "it gets replaced by torch 2.8.0+cpu now"
        "b15-108",  # xFormers: "(you have 2.1.2+cpu)"
    ],
)
def test_a_cpu_build_named_in_any_words_is_proposed(cid, tmp_path):
    codes = _codes(_paste(cid), tmp_path)
    assert "cpu-only-torch" in codes, codes


def test_no_cpu_build_proposed_where_the_build_is_cuda(tmp_path):
    text = "torch 2.1.0+cu121\nI had the CPU version of pytorch before, now torch.cuda.is_available() returns True\n"
    assert "cpu-only-torch" not in _codes(text, tmp_path)


def test_paste_only_misses_now_found(tmp_path):
    assert "mkl-incompatible" in _codes(_paste("b15-95"), tmp_path)
    assert "extension-abi-mismatch" in _codes(_paste("b13-36"), tmp_path)


def test_word_size_beside_an_os_or_python():
    # '"torch.cuda.is_available()" returns "False'. How to make it true for 32 bit windows 7 system ?' (escaped quotes)
    got = prose.read(_paste("b14-27").splitlines())
    assert got["bits"]["value"] == "32" and got["cuda_available"]["value"] == "false"
    assert "bits" not in prose.read(["a 32-bit float tensor"])  # no OS or Python on the line


def test_word_size_makes_python_unsupported(tmp_path):
    assert _codes(_paste("b14-27"), tmp_path).get("python-unsupported") == "error"


def test_torchs_dll_loader_message_quoted_short(tmp_path):
    # torch/__init__.py: 'Error loading "<dll>" or one of its dependencies.'; quoted shortened in an issue title
    # (OneTrainer issue 487) and in code comments ("Error loading fbgemm.dll").
    assert "dll-load-failure" in _codes(_paste("b15-49"), tmp_path)
    assert "dll-load-failure" in _codes('OSError: [WinError 126] Error loading "fbgemm.dll"\n', tmp_path)
    assert "dll-load-failure" not in _codes("error loading config.yaml\n", tmp_path)
