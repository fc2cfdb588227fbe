"""On Windows, PyPI's torch is a CPU-only build: the words that say torch sees no CUDA, and a `pip install torch` line
with no wheel index, point at it when nothing shows which build is installed (kb/errors/torch10.json, read by
checks/torch_install.py _windows_pypi_wheel). Real excerpts from public threads, none from the blind batches."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

# https://github.com/THU-MIG/yolov10/issues/218 (title and description, less its sentence about another machine, a
# Linux T4 server where the same install printed True): Windows 10, is_available() False. A maintainer's answer there:
# on Windows `pip install torch` is the CPU build.
YOLOV10_WIN10 = (
    "torch.cuda.is_available()发现是False\n"
    "GPU版本的怎么安装？\n"
    "后来我本地win10机器，本来就有cuda12.2，同样方法安装好后，torch.cuda.is_available() 就是False，不知道怎么办了。\n"
)

# https://github.com/yatengLG/ISAT_with_segment_anything/issues/14: the program shows 'CPU'; the maintainer's answer
# names the cause (Windows + `pip install torch`), and the reporter's is_available() is 'False'.
ISAT_WINDOWS = (
    "While running the main.py, there always shows 'CPU' under the window, I tried to reinstall the torch, but it "
    "still is under 'CPU' mode.\n"
    "If you system platform is windows, you should install torch by 'https://pytorch.org/get-started/locally/', "
    "rather than ```pip install torch```\n"
    "the cuda.is_available() is still 'False'\n"
)

# https://github.com/pytorch/pytorch/issues/51858 (a comment): Windows, is_available() false, but collect_env shows a
# CUDA build (2.0.1+cu117): not a CPU wheel.
PYTORCH_51858_CU117 = """print(torch.cuda.is_available()) return false

python -m torch.utils.collect_env
Collecting environment information...
PyTorch version: 2.0.1+cu117
Is debug build: False
CUDA used to build PyTorch: 11.7
ROCM used to build PyTorch: N/A

OS: Microsoft Windows 11 Pro
Python platform: Windows-10-10.0.22621-SP0
Is CUDA available: True
GPU models and configuration: GPU 0: NVIDIA GeForce GTX 1050 Ti
Nvidia driver version: 535.98
"""

# https://github.com/pytorch/pytorch/issues/85332: Linux, is_available() False with a +cu102 wheel from the CUDA index.
PYTORCH_85332_LINUX = """import torch
print(torch.cuda.is_available())

return False

nvidia-smi:NVIDIA-SMI 450.51.05    Driver Version: 450.51.05    CUDA Version: 11.0
install : pip install torch==1.8.1+cu102 torchvision==0.9.1+cu102 torchaudio==0.8.1 -f https://download.pytorch.org/whl/torch_stable.html
print(torch.__version__)
1.8.1+cu102
"""


def test_is_available_false_in_chinese_on_windows_is_a_likely_cpu_wheel(tmp_path):
    found = paste_findings(tmp_path, YOLOV10_WIN10)
    assert "cpu-only-torch" in codes(found)
    assert severities(found)["cpu-only-torch"] == "warning"  # the build is not shown: a likely cause, not a verdict


def test_plain_pip_install_torch_on_windows_is_named(tmp_path):
    found = paste_findings(tmp_path, ISAT_WINDOWS)
    assert codes(found)[:1] == ["cpu-only-torch"]
    cpu = next(f for f in found if f["code"] == "cpu-only-torch")
    assert any("pip install torch" in str(v) for v in cpu["evidence"].values())


def test_a_cuda_build_shown_is_not_called_cpu(tmp_path):
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, PYTORCH_51858_CU117))


def test_linux_with_a_cuda_wheel_is_not_called_cpu(tmp_path):
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, PYTORCH_85332_LINUX))


def test_a_pip_line_with_the_cuda_index_is_not_pypi(tmp_path):
    text = (
        "Windows 11, RTX 3060\n"
        "pip3 install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu118\n"
        "the model loads\n"
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))


def test_the_same_words_on_linux_do_not_blame_the_wheel(tmp_path):
    text = YOLOV10_WIN10.replace("win10", "ubuntu 22.04")
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))
