"""Task build10 (issue 21, round 10): extensions and builds that do not fit the torch they meet, reasoned from the
tool that raises each message (torch's loader, Windows' loader, AutoGPTQ, torchaudio, nvcc) and from the entities in
the text (a wheel's tag naming the torch it was built for; NVIDIA's own torch builds). Real texts from public threads
(tests/data/error_corpus/build10.jsonl and the excerpts below, each with its URL); none from the blind batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import codes, paste_findings

from cudadoctor.readers import issue

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "build10.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("row", ROWS, ids=[r["source"].split("github.com/")[-1] for r in ROWS])
def test_each_real_text_pasted_gives_its_class(tmp_path, row):
    got = codes(paste_findings(tmp_path, row["text"]))
    assert row["code"] in got, (row["source"], got)


def test_torchaudio_failing_on_torchs_split_library_is_the_companion_not_an_extension(tmp_path):
    # icefall #1283: torchaudio's _load_lib -> "libtorch_cuda_cpp.so: cannot open": the companion is not torch's pair
    row = next(r for r in ROWS if r["source"].endswith("icefall/issues/1283"))
    got = codes(paste_findings(tmp_path, row["text"]))
    assert "torchvision-mismatch" in got and "extension-abi-mismatch" not in got, got


# https://github.com/Dao-AILab/flash-attention/issues/1327 (title, then the report): a flash-attn wheel whose tag
# names torch 2.4 installed beside torch 2.5.1.
FA_1327 = (
    "CUDA 12.1 Python 3.10 PyTorch 2.5.1 安装版本\n"
    "没有CUDA 12.1的对应版本\n"
    "安装了 flash_attn-2.6.3+cu123torch2.4cxx11abiTRUE-cp310-cp310-linux_x86_64.whl\n"
    "但是报错 ImportError: FlashAttention-2 is not installed correctly. Please check the usage in "
    "https://github.com/Dao-AILab/flash-attention for more details.\n"
)


def test_a_wheel_tag_naming_another_torch_is_an_abi_mismatch(tmp_path):
    found = [f for f in paste_findings(tmp_path, FA_1327) if f["code"] == "extension-abi-mismatch"]
    assert found and found[0]["severity"] == "error"
    ev = found[0]["evidence"]
    assert ev["built_for_torch"] == "2.4" and ev["torch.version"] == "2.5.1" and ev["package"] == "flash-attn"


# https://github.com/Dao-AILab/causal-conv1d/issues/9 (apoorvkh's comment): the wheel whose tag names the installed
# torch (2.2), no failure shown: nothing to say about it.
CC_9 = (
    "My conda environment (on a Linux system) has Python 3.11, CUDA 11.8, PyTorch 2.2, and gcc/g++ 11.2.0. "
    "Accordingly, I am running `pip install https://github.com/Dao-AILab/causal-conv1d/releases/download/v1.1.1/"
    'causal_conv1d-1.1.1+cu118torch2.2cxx11abiFALSE-cp311-cp311-linux_x86_64.whl`. (Not really sure what "abi" is, '
    "but tried this with both True and False).\n"
)


def test_a_wheel_tag_naming_the_installed_torch_says_nothing(tmp_path):
    assert "extension-abi-mismatch" not in codes(paste_findings(tmp_path, CC_9))


def test_the_same_tag_says_nothing_without_a_failure(tmp_path):
    # FA_1327 without its error line: a version difference alone is not a failure
    quiet = "\n".join(FA_1327.splitlines()[:3]) + "\n"
    assert "extension-abi-mismatch" not in codes(paste_findings(tmp_path, quiet))


# https://github.com/AutoGPTQ/AutoGPTQ/issues/203 is a case of kernels that were never built; a build for another
# torch shows the loader's words beside the warning (Dao-AILab/flash-attention#975's symbol): not 'built without CUDA'.
def test_autogptq_warning_with_a_loader_error_is_not_built_without_cuda(tmp_path):
    text = (
        "CUDA extension not installed.\n"
        "ImportError: /home/linjl/anaconda3/envs/sd/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-"
        "linux-gnu.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\n"
    )
    got = codes(paste_findings(tmp_path, text))
    assert "extension-abi-mismatch" in got and "extension-built-without-cuda" not in got, got


# https://github.com/pytorch/audio/issues/3335: `pip list | grep torch` rows without pip's header.
AUDIO_3335 = """all libraries related to pytorch are:
```
pip list | grep torch

pytorch-lightning         1.6.5
pytorch-metric-learning   1.7.3
torch                     1.13.1
torch-audiomentations     0.11.0
torch-pitch-shift         1.2.4
torchaudio                0.13.1+b90d798
torchmetrics              0.11.4
torchvision               0.14.1
```
"""


def test_headerless_pip_list_rows_are_read_as_packages_not_as_a_complete_listing():
    facts = issue.read(AUDIO_3335)["facts"]
    dists = {d["name"]: d["version"] for d in facts["packages"]["distributions"]}
    assert dists["torch"] == "1.13.1" and dists["torchaudio"] == "0.13.1+b90d798" and dists["torchvision"] == "0.14.1"
    assert not facts["packages"].get("complete")  # grep kept only some rows: nothing is 'not installed' from it
    assert facts["torch"]["version"] == "1.13.1"


def test_one_name_version_line_is_not_a_listing():
    facts = issue.read("torch  2.1\nI tried the driver  535 as well\nRuntimeError: CUDA error: no kernel image\n")["facts"]
    assert not (facts.get("packages") or {}).get("distributions")


# LibTorch as PyTorch's get-started page links it (https://pytorch.org/get-started/locally/, "LibTorch", C++/Java) and
# nvcc where NVIDIA's installation guide puts it (https://docs.nvidia.com/cuda/cuda-installation-guide-linux/,
# /usr/local/cuda-X.Y/bin): the C++ torch a program links and the toolkit a build uses, each with its version.
def test_a_libtorch_archive_names_torch_and_its_cuda():
    facts = issue.read(
        "wget https://download.pytorch.org/libtorch/cu118/libtorch-cxx11-abi-shared-with-deps-2.1.0%2Bcu118.zip\n"
        "unzip libtorch-cxx11-abi-shared-with-deps-2.1.0+cu118.zip\n"
    )["facts"]
    assert facts["torch"]["version"] == "2.1.0+cu118" and facts["torch"]["cuda"] == "11.8"


def test_nvcc_by_its_versioned_path_is_the_toolkit():
    facts = issue.read('set(CMAKE_CUDA_COMPILER "/usr/local/cuda-12.1/bin/nvcc")\n')["facts"]
    assert facts["toolkit"]["nvcc_version"] == "12.1"
    assert "nvcc_version" not in (issue.read("/usr/local/cuda/bin/nvcc\n")["facts"].get("toolkit") or {})
