"""Round 6 of pastes and thin facts: facts read from the reporter's words (torch.version.cuda, is_available without
its brackets), the GPU's architecture against the torch releases that run it when torch is not stated, a Jetson
with a generic aarch64 torch, and pip's words for an install command naming a build its index lacks.

The pastes are real reporters' texts kept in the (unsealed) blind batches; the pip texts come from the threads named
in tests/data/error_corpus/paste6.jsonl."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

from cudadoctor.checks.torch_install import _local_pin_missing
from cudadoctor.readers import prose

ROOT = os.path.join(os.path.dirname(__file__), "data", "blind")
CORPUS = os.path.join(os.path.dirname(__file__), "data", "error_corpus", "paste6.jsonl")


def _paste(case: str) -> str:
    path = glob.glob(os.path.join(ROOT, case.split("-")[0], case + "*.paste.txt"))[0]
    with open(path, encoding="utf-8") as f:
        return f.read()


def _codes(text: str, tmp_path: Path, *extra: str) -> dict:
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    r = subprocess.run(
        [sys.executable, "-m", "cudadoctor", "check", "--from-text", str(f), "--format", "json", *extra],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return {x["code"]: x["severity"] for x in json.loads(r.stdout)["findings"] if x["severity"] in ("error", "warning")}


def test_torch_version_cuda_in_a_sentence_is_torchs_cuda():
    # https://github.com/rusty1s/pytorch_scatter/issues/45: "my torch.version.cuda is 9.0.176, but my nvcc --version is 10.0"
    got = prose.read(_paste("b21-31").splitlines())
    assert got["torch_cuda"]["value"] == "9.0.176"
    assert got["nvcc"]["value"] == "10.0"
    # a value that is not a version is no fact ("torch.version.cuda is 13.x" in a project's notes)
    assert "torch_cuda" not in prose.read(["check 6 verifies torch.version.cuda is 13.x"])


def test_torch_version_cuda_against_nvcc_gives_the_toolkit_mismatch(tmp_path):
    assert "cuda-toolkit-mismatch" in _codes(_paste("b21-31"), tmp_path)


def test_is_available_without_brackets_and_a_comma():
    # https://github.com/dusty-nv/jetson-inference/issues/1932: 'when I checked "torch.cuda.is_available", it returned false'
    got = prose.read(_paste("b20-23").splitlines())
    assert got["cuda_available"]["value"] == "false"


def test_jetson_with_pip_torch_is_likely_a_build_without_cuda(tmp_path):
    # jetson-inference#1932 (JetPack 5.1.2, pip3 install torch) and b17-44 (Pinokio on an AGX Orin, JetPack 5.1.2)
    for case in ("b20-23", "b17-44"):
        assert _codes(_paste(case), tmp_path).get("cpu-only-torch") == "warning", case


def test_blackwell_named_with_torch_unknown_is_likely_an_old_bundled_torch(tmp_path):
    # https://github.com/Anjok07/ultimatevocalremovergui/issues/2005: "my gpu is an rtx 5060", no OS, no torch
    got = _codes(_paste("b20-29"), tmp_path)
    assert got.get("gpu-arch-unsupported") == "warning"
    assert "open-kernel-module-required" not in got  # no Linux stated: no kernel-module flavour to choose
    # Linux and the driver side in the text (Debian 13, the proprietary 575 driver): the open modules stay the answer
    got = _codes(_paste("b13-15"), tmp_path)
    assert "open-kernel-module-required" in got and "gpu-arch-unsupported" not in got


def test_pip_list_with_the_release_but_not_the_build():
    with open(CORPUS, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    assert len(rows) >= 2
    for row in rows:
        got = _local_pin_missing(row["text"])
        assert got is not None, row["source"]
        assert got[4] == []  # PyPI's list: plain versions only
    # pytorch/pytorch#54172 (b21-06): the list has 1.8.0 as +cpu, +cu101, +cu111, not the +cu102 the command asked for
    got = _local_pin_missing(_paste("b21-06"))
    assert got is not None and got[2:] == ("1.8.0", "cu102", ["cpu", "cu101", "cu111"])
    # the release itself missing from the list (Python 3.11, torch 1.13.1): the interpreter's question, not this one
    assert _local_pin_missing(_paste("b20-45")) is None


def test_install_command_names_missing_wheel_from_the_paste(tmp_path):
    assert _codes(_paste("b21-06"), tmp_path).get("install-command-names-missing-wheel") == "error"
    got = _codes(_paste("b20-45"), tmp_path)
    assert "python-unsupported" in got and "install-command-names-missing-wheel" not in got


def test_a_script_comment_in_a_code_block_is_its_result(tmp_path):
    # https://github.com/pytorch/pytorch/issues/13207: a source build with TORCH_CUDA_ARCH_LIST=5.2 on a TITAN X (Pascal);
    # the REPL's result is written as a comment under torch's own call: torch's kernels lack sm_61, not a package's
    from cudadoctor.readers import issue

    parts = issue.read(_paste("b21-57"))["parts"]
    assert any(p["kind"] == "error" and p["lines"][0] <= 15 <= p["lines"][1] for p in parts)
    got = _codes(_paste("b21-57"), tmp_path)
    assert "gpu-arch-unsupported" in got and "companion-arch-unsupported" not in got
    # a Markdown heading outside a code block stays boilerplate
    assert not any(p["kind"] == "error" for p in issue.read("## Error\nsome words\n")["parts"])


def test_windows_cuda_not_detected_in_words_is_likely_pypis_cpu_wheel(tmp_path):
    # https://github.com/hiyouga/LlamaFactory/issues/3545: "有CUDA环境，却显示未检测到" ... "系统是WIN11,pytorch有,cuda12.2"
    assert _codes(_paste("b20-34"), tmp_path).get("cpu-only-torch") == "warning"
    from cudadoctor.checks.torch_install import _CUDA_NOT_SEEN

    assert _CUDA_NOT_SEEN.search("torch says CUDA is not available")
    assert not _CUDA_NOT_SEEN.search("CUDA toolkit not found")  # a build's missing toolkit is another question
