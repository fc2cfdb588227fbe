"""Companion packages (mmcv, xformers, flash-attn, vLLM...) against the torch build and the GPU, on real reports.

torch's own arch list decides whether a "no kernel image" is torch's (gpu-arch-unsupported) or a separately
built package's (companion-arch-unsupported); a package's minimum GPU, and the CUDA runtime its compiled module
links, come from kb data (kb/errors/companion.json, kb/torch_arch_lists.json).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cudadoctor import kb
from cudadoctor.cli import cli
from cudadoctor.checks.arch import every_build_runs

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"


def _check(tmp_path, paste: str):
    p = tmp_path / "paste.txt"
    p.write_text(paste, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(p), "--format", "json"], env={"NO_COLOR": "1"})
    assert r.exit_code in (0, 1), r.output
    return {(f["code"], f["severity"]): f for f in json.loads(r.stdout)["findings"]}


# https://github.com/open-mmlab/mmdetection/issues/7742 (mmcv's env report, RTX 3090, torch 1.8.0+cu111 with sm_86)
MMDET_7742 = (
    """sys.platform: linux
CUDA available: True
GPU 0,1,2,3: GeForce RTX 3090
NVCC: Build cuda_11.1.TC455_06.29069683_0
PyTorch: 1.8.0+cu111
"""
    + NO_KERNEL
)

# https://github.com/open-mmlab/mmcv/issues/744 (mmcv's env report; torch 1.7.0+cu110 is built up to sm_80, which runs on 8.6)
MMCV_744 = (
    NO_KERNEL
    + """
Python: 3.7.0 | packaged by conda-forge | (default, Nov 12 2018, 20:15:55) [GCC 7.3.0]
CUDA available: True
GPU 0: GeForce RTX 3070
CUDA_HOME: /usr/local/cuda
NVCC: Build cuda_11.0_bu.TC445_37.28540450_0
GCC: gcc (Ubuntu 7.5.0-6ubuntu2) 7.5.0
PyTorch: 1.7.0+cu110
"""
)


@pytest.mark.parametrize("paste", [MMDET_7742, MMCV_744], ids=["torch-1.8.0-cu111", "torch-1.7.0-cu110"])
def test_no_kernel_image_beside_a_torch_that_has_the_kernels_is_a_companions(tmp_path, paste):
    got = _check(tmp_path, paste)
    assert ("companion-arch-unsupported", "error") in got, sorted(got)
    assert not any(code == "gpu-arch-unsupported" and sev == "error" for code, sev in got), sorted(got)


def test_torch_17_arch_lists_come_from_the_builder_scripts():
    # pytorch/builder manywheel/build.sh (2020-08 .. 2020-11): 3.7;5.0;6.0;7.0 (+7.5 on CUDA 10.x, +7.5;8.0 on 11.0)
    assert kb.arch_list("1.7.1", "cu110") == {"sass": ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80"], "ptx": []}
    assert kb.arch_runs("8.6", kb.arch_list("1.7.0", "cu110")) == "sass"  # sm_80 SASS runs on 8.6
    assert kb.arch_runs("8.6", kb.arch_list("1.7.0", "cu102")) is None  # an RTX 30 on 1.7 cu102: torch's own problem
    assert kb.torch_release("1.7.1")["default_variant"]["linux-x86_64"] == "cu102"


def test_a_gpu_every_official_build_runs():
    assert every_build_runs("7.5")  # Turing: sm_70 or sm_75 SASS in every wheel
    assert not every_build_runs("8.6")  # cu102 wheels (1.7-1.12) stop at sm_75
    assert not every_build_runs("6.1") and not every_build_runs("12.0") and not every_build_runs(None)


# https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/2202: the error and the card, torch unknown
def test_no_kernel_image_on_turing_with_torch_unknown_also_names_a_companion(tmp_path):
    # torch's build is not shown, so gpu-arch-unsupported stands (the bot asks for collect_env: tests/test_bot.py);
    # beside it, the GPU every official build runs points at a separately built package
    paste = NO_KERNEL + "\ngetting this error after git pull\n\nCard is a 1660S\n"
    got = _check(tmp_path, paste)
    f = got.get(("companion-arch-unsupported", "warning"))
    assert f and f["evidence"]["package"] is None and f["evidence"]["capabilities"] == ["7.5"], sorted(got)
    assert any(c.startswith("python -m pip list") for c in f["fix"]["commands"])
    # the same thread names the package on its next line: then the package is the finding's, as an error
    got = _check(
        tmp_path, paste + "running below in the command line argument\n --precision full --no-half --medvram --xformers\n"
    )
    assert got.get(("companion-arch-unsupported", "error"), {}).get("evidence", {}).get("package") == "xformers", sorted(got)


def test_no_kernel_image_on_ampere_with_torch_unknown_stays_torchs(tmp_path):
    # control: the same error with an Ampere card (only the card differs from the thread above): a cu102 torch
    # (PyPI's default for 1.8-1.12) has no sm_86 kernels, so torch stays the suspect
    got = _check(tmp_path, NO_KERNEL + "\nGPU: NVIDIA GeForce RTX 3090\n")
    assert ("gpu-arch-unsupported", "error") in got, sorted(got)
    assert not any(code == "companion-arch-unsupported" for code, _sev in got), sorted(got)


@pytest.mark.parametrize(
    "paste",
    [
        # https://github.com/ATH-MaaS/Ovis/issues/102
        "How to inference on V100 without Flash Attention? I only have V100S GPU",
        # https://github.com/bytedance/Sa2VA/issues/8
        "Running demo code on V100. I only have V100 GPUs available to me. Is there a way to run your "
        "inference/demo code and how (e.g. with no flash attention)?",
    ],
)
def test_flash_attention_named_beside_a_pre_ampere_gpu(tmp_path, paste):
    got = _check(tmp_path, paste)
    f = got.get(("companion-arch-unsupported", "warning"))
    assert f, sorted(got)
    assert f["evidence"]["package"] == "flash-attn" and f["evidence"]["package_minimum"] == "8.0"
    assert any("sdpa" in c for c in f["fix"]["commands"])


def test_flash_attention_on_an_ampere_gpu_is_no_finding(tmp_path):
    got = _check(tmp_path, "How to inference on A100 without Flash Attention? I only have A100 GPU")
    assert not any(code == "companion-arch-unsupported" for code, _sev in got), sorted(got)


# https://github.com/Dao-AILab/flash-attention/issues/631: torch 2.1.0 (CUDA 11.8), flash-attn built for CUDA 12
FA_631 = """2.1.0
11.8
8700
True
Traceback (most recent call last):
  File "/home/jackson/llm_tuner/test.py", line 7, in <module>
    from flash_attn import flash_attn_qkvpacked_func, flash_attn_func
  File "/home/jackson/.conda/envs/llms/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 8, in <module>
    import flash_attn_2_cuda as flash_attn_cuda
ImportError: libcudart.so.12: cannot open shared object file: No such file or directory
"""


def test_a_package_linked_to_another_cuda_runtime_is_named(tmp_path):
    got = _check(tmp_path, FA_631)
    f = got.get(("extension-abi-mismatch", "error"))
    assert f, sorted(got)
    assert f["evidence"]["package"] == "flash-attn" and "CUDA 12" in f["title"]
    assert any("whl/cu12" in c for c in f["fix"]["commands"]), f["fix"]["commands"]


def test_the_same_runtime_major_as_torch_is_not_a_build_mismatch(tmp_path):
    # torch built with CUDA 12 and the package wanting libcudart.so.12: the runtime is missing, not mismatched
    paste = (
        "Collecting environment information...\nPyTorch version: 2.1.0+cu121\nIs debug build: False\n\n"
        + FA_631.split("True\n", 1)[1]
    )
    got = _check(tmp_path, paste)
    f = got.get(("extension-abi-mismatch", "error"))
    assert not f or "CUDA 12 (it needs" not in f["title"], f


# https://github.com/AILab-CVC/YOLO-World/issues/346 (mmcv's _ext) and https://github.com/WangLongZJU/DeepAC/issues/26
# (pytorch3d's _C); the class: https://github.com/MCG-NJU/SparseBEV/issues/83 (mmcv-full 1.6.0 beside torch 2.0.0)
@pytest.mark.parametrize(
    "paste, pkg",
    [
        (
            "    ext_module = ext_loader.load_ext(\n"
            '  File "/home/jupyter/til-24-base/vlm/YOLO-World/YOLOvenv/lib/python3.10/site-packages/mmcv/utils/ext_loader.py",'
            " line 13, in load_ext\n"
            "    ext = importlib.import_module('mmcv.' + name)\n"
            '  File "/opt/conda/lib/python3.10/importlib/__init__.py", line 126, in import_module\n'
            "    return _bootstrap._gcd_import(name[level:], package, level)\n"
            "ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n",
            "mmcv",
        ),
        (
            '  File ".../pytorch3d/renderer/blending.py", line 10, in <module>\n    from pytorch3d import _C\n'
            "ImportError: .../torch/lib/libtorch_cuda_cu.so: cannot open shared object file: No such file or directory\n",
            "pytorch3d",
        ),
    ],
)
def test_a_package_built_against_torch_1x_split_libraries(tmp_path, paste, pkg):
    got = _check(tmp_path, paste)
    f = got.get(("extension-abi-mismatch", "error"))
    assert f, sorted(got)
    assert f["evidence"]["package"] == pkg, f["evidence"]
