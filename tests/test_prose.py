"""Facts written as prose (readers/prose.py), on real pastes from real threads, in several languages'
labels and punctuation. Each text is quoted as the reporter wrote it (trimmed to the lines that matter)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.readers import issue, prose


def values(text):
    got = prose.read(text.split("\n"))
    out = {k: v["value"] for k, v in got.items() if isinstance(v, dict) and "value" in v}
    out["gpus"] = [(g["name"], g["compute_capability"]) for g in got.get("gpus", [])]
    out["conflicts"] = got.get("conflicts", {})
    return out


# (source, text, expected subset of values)
REAL = [
    (
        "https://github.com/pytorch/pytorch/issues/99137",  # full-width colons
        "GPU 0: Quadro K620 (UUID: GPU-56622fc6-a9b3-5594-4c6d-b0b231be656a)\npython version：3.8.16\n"
        "cuda version：cuda10.2\ncudnn version:8.7.0",
        {"python": "3.8.16", "cuda": "10.2", "cudnn": "8.7.0", "gpus": [("Quadro K620", "5.0")]},
    ),
    (
        "https://github.com/pytorch/pytorch/issues/85332",  # nvidia-smi's header inline; the version on the next line
        "nvidia-smi:NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0 \n"
        "nvcc -V:Cuda compilation tools, release 10.2, V10.2.89\n"
        "install : pip install torch==1.8.1+cu102 torchvision==0.9.1+cu102 torchaudio==0.8.1 -f "
        "https://download.pytorch.org/whl/torch_stable.html\n\nprint(torch.__version__)\n1.8.1+cu102",
        {"driver": "450.51.05", "driver_cuda": "11.0", "nvcc": "10.2", "torch": "1.8.1+cu102"},
    ),
    (
        "https://github.com/pytorch/pytorch/issues/30071",  # the issue template's "(e.g., 1.0)" hints
        "I have cuda 10 and driver version 410.48 installed followed the instruction of Nividia with a .deb installation.\n"
        " - PyTorch Version (e.g., 1.0): 1.3\n - OS (e.g., Linux): Linux  Ubuntu16.04 kernel 4.4.0.98 \n"
        " - Python version: 3.6.7\n - CUDA/cuDNN version: cuda 10 /  cudnn 7.6.0",
        {"driver": "410.48", "torch": "1.3", "os": "Linux", "distro": "Ubuntu 16.04", "python": "3.6.7", "cudnn": "7.6.0"},
    ),
    (
        "https://github.com/pytorch/pytorch/issues/16936",  # a sentence; the driver as its package name
        "I have 2 GTX 1070 GPUs. Linuxmint 18.3.\nMy latest installation is pytorc 1.0, nvidia-410, cuda 10.0 but I "
        "have tried many combinations.",
        {"driver": "410", "cuda": "10.0", "os": "Linux", "gpus": [("GTX 1070", "6.1")]},
    ),
    (
        "https://github.com/yuhongtian17/Spatial-Transform-Decoupling/issues/15",  # Chinese punctuation
        "GPU3090，\nnvidia-smi：CUDA Version: 12.4，\npytorch：python=3.7 pytorch==1.7.0 cudatoolkit=10.1 torchvision -c pytorch",
        {"torch": "1.7.0", "python": "3.7", "gpus": [("3090", "8.6")]},
    ),
    (
        "https://github.com/mit-han-lab/bevfusion/issues/283",  # a bare list; "GTX 3090" for the RTX 3090
        "Here is my environment:\nGTX 3090\nCUDA 10.1\ntorch==1.8.1+cu101 \ntorchvision==0.9.1+cu101",
        {"cuda": "10.1", "torch": "1.8.1+cu101", "gpus": [("GTX 3090", "8.6")]},
    ),
    (
        "https://github.com/KaihuaTang/Scene-Graph-Benchmark.pytorch/issues/161",  # one sentence, a CPU beside the GPU
        "my computer configuration is RTX3080ti,12700K , my environment is Ubuntu 21.04, Pytorch 1.8.0, cuda 11.1 gcc 10.3.0",
        {"torch": "1.8.0", "cuda": "11.1", "gcc": "10.3.0", "distro": "Ubuntu 21.04", "gpus": [("RTX 3080 ti", "8.6")]},
    ),
    (
        "https://github.com/pytorch/pytorch/issues/60011",  # LibTorch (C++) is not the Python package
        "win10 , VS2019\nnvidia driver:466.77, \nnvidia GeForce RTX3060,\nLibTorch 1.8.1\ncuda 11.1\ncudnn 8.1.1",
        {"os": "Windows", "distro": "Windows 10", "driver": "466.77", "cuda": "11.1", "cudnn": "8.1.1"},
    ),
    (
        "https://github.com/pytorch/pytorch/issues/25581",
        "NVIDIA driver's version:384.130\ncuda version:10.0\npython:3.6",
        {"driver": "384.130", "cuda": "10.0", "python": "3.6"},
    ),
    (
        "https://github.com/pytorch/pytorch/issues/40682",
        "PyTorch version:1.5.0+cu101\nMy cuda version is 10.1 and the nvidia driver version is 442.92.",
        {"torch": "1.5.0+cu101", "driver": "442.92", "cuda": "10.1"},
    ),
]


@pytest.mark.parametrize("source,text,expected", REAL, ids=[r[0].split("github.com/")[1] for r in REAL])
def test_real_prose(source, text, expected):
    got = values(text)
    for k, v in expected.items():
        assert got.get(k) == v, (k, got)


def test_libtorch_and_install_commands_are_not_the_installed_torch():
    assert "torch" not in values(REAL[7][1])  # LibTorch 1.8.1
    got = values("ERROR: Could not find a version that satisfies the requirement torch==1.10.0+cu113 (from versions: none)")
    assert "torch" not in got
    assert "torch" not in values("pip install torch==2.0.0+cu113 torchvision==0.15.0+cu113")


# Chinese labels and full-width colons in real environment notes (public repository files found by exact text
# search in the code corpus: "pytorch版本：").
ZH_BLOG = (
    "配置时间：2021.10.25 以下是我亲测有效的使用 RTX 3060 的各部分安装版本 电脑系统：window 10 python版本：3.6.13 "
    "pytorch版本：1.8.0 CUDA版本：11.2 cuDNN版本：8.2.0.53"
)
ZH_README = " GPU型号：Tesla V100-SXM2-32GB\n \n cuda版本：10.2\n \n Python版本：3.6.13\n \n pytorch版本：1.7.1"
# https://github.com/pytorch/pytorch/issues/100095 (a numbered list)
NUMBERED = "2. Cuda: 10.2\n3. OS: Ubuntu18.04\n4. cuDNN: cuDNNv8.2.2[July 6th.2021]. for CUDA 10.2\n5. Nvidia Driver:525.105.17\n6. GPU: GTX 1050Ti"


def test_real_chinese_labels_and_a_numbered_list():
    got = values(ZH_BLOG)
    assert (got["torch"], got["python"], got["cuda"], got["cudnn"], got["distro"]) == ("1.8.0", "3.6.13", "11.2", "8.2.0", "Windows 10")
    assert got["gpus"] == [("RTX 3060", "8.6")]
    got = values(ZH_README)
    assert (got["torch"], got["python"], got["cuda"]) == ("1.7.1", "3.6.13", "10.2")
    assert got["gpus"] == [("Tesla V100-SXM2-32GB", "7.0")]
    got = values(NUMBERED)
    assert (got["driver"], got["cudnn"], got["distro"], got["cuda"]) == ("525.105.17", "8.2.2", "Ubuntu 18.04", "10.2")
    assert got["gpus"] == [("GTX 1050 Ti", "6.1")]


def test_labels_in_other_languages():
    # Chinese labels with full-width colons (as in a README of https://github.com/ search "显卡：rtx4090"),
    # German labels, a Markdown table.
    got = values("显卡：rtx4090\n操作系统：Ubuntu 22.04.4 LTS\n驱动版本：535.104.05")
    assert got["gpus"] == [("rtx 4090", "8.9")] and got["distro"] == "Ubuntu 22.04.4" and got["driver"] == "535.104.05"
    got = values("Grafikkarte: RTX 3060\nTreiberversion: 470.82\nBetriebssystem: Windows 11 mit WSL2")
    assert got["gpus"] == [("RTX 3060", "8.6")] and got["driver"] == "470.82" and got["os"] == "Linux" and got["wsl"] == "2"
    assert "distro" not in got  # Windows 11 is the host, not the Linux torch runs in
    got = values("| Component | Version |\n|---|---|\n| PyTorch | 2.1.0+cu121 |\n| Driver | 535.54 |\n| GPU | RTX 4090 |")
    assert got["torch"] == "2.1.0+cu121" and got["driver"] == "535.54" and got["gpus"] == [("RTX 4090", "8.9")]


def test_python_banner_is_not_the_system_gcc_and_conflicts_stay_unset():
    got = values("Python 3.7.9 (default, Aug 24 2020, 16:50:14) \n[GCC 9.3.0] on linux\nmy gcc is 13.2.1")
    assert got["python"] == "3.7.9" and got["gcc"] == "13.2.1"
    got = values("torch 1.13.1\nlater I tried torch 2.0.1")
    assert "torch" not in got and got["conflicts"]["torch"] == ["1.13.1", "2.0.1"]


def test_prose_fills_only_what_structured_readers_left_unset():
    text = (
        "PyTorch version:1.5.0+cu101\nMy cuda version is 10.1 and the nvidia driver version is 442.92.\n"
        "GPU: TITAN RTX\ntorch.cuda.is_available() returns False\n"
    )
    facts = issue.read(text)["facts"]
    assert facts["torch"]["version"] == "1.5.0+cu101" and facts["torch"]["cuda"] == "10.1"
    assert facts["torch"]["cuda_available"] is False
    assert facts["nvml"]["driver_version"] == "442.92"
    assert facts["nvml"]["devices"] == [{"index": 0, "name": "TITAN RTX", "compute_capability": "7.5", "from": "prose"}]
    assert set(facts["pasted"]["prose"]["filled"]) >= {"torch.version", "torch.cuda", "nvml.driver_version", "nvml.devices"}
    # The nvidia-smi table's driver wins over a sentence's.
    smi = (
        "my driver is 470\n"
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2     |\n"
        "|-------------------------------+----------------------+----------------------+\n"
    )
    assert issue.read(smi)["facts"]["nvml"]["driver_version"] == "535.54.03"


def test_prose_facts_reach_the_checks():
    """A sentence naming an RTX 3090 and a torch built for CUDA 10.2: the checks see the GPU's sm_86."""
    text = (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n\n"
        "My GPU is RTX 3090, torch 1.8.1+cu102, driver 470.82\n"
    )
    r = CliRunner().invoke(cli, ["check", "--from-text", "-", "--format", "json"], input=text)
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    assert doc["facts"]["nvml"]["devices"][0]["compute_capability"] == "8.6"
    assert "gpu-arch-unsupported" in {f["code"] for f in doc["findings"]}


def test_values_that_agree_are_one_value_and_package_versions_are_not_releases():
    # collect_env's GCC line names the compiler's package ("Ubuntu 7.5.0-3ubuntu1"), not the OS release
    got = values("GCC version: (Ubuntu 7.5.0-3ubuntu1~18.04) 7.5.0\nOS: Ubuntu 18.04.5 LTS")
    assert got["distro"] == "Ubuntu 18.04.5" and got["gcc"] == "7.5.0"
    # the same torch said twice, once more precisely (https://github.com/facebookresearch/detectron2 issues' template)
    assert values("pytorch 1.7\nPyTorch version: 1.7.0+cu110")["torch"] == "1.7.0+cu110"
    assert values("cudnn 8.5.0 ... cuDNN 8.5")["cudnn"] == "8.5.0"
    # torch's own warning names the GPU: the sentence's words after it are not the name
    got = values("NVIDIA GeForce RTX 4090 with CUDA capability sm_89 is not compatible with the current PyTorch installation.")
    assert got["gpus"] == [("NVIDIA GeForce RTX 4090", "8.9")]
