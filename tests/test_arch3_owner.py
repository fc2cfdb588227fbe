"""Who raised "no kernel image": torch's own kernels (gpu-arch-unsupported) or another package's or program's
(companion-arch-unsupported), reasoned from the text's entities (the error's form, a source file, a frame, a kernel
package, a local build) and the facts (torch's arch lists in kb/torch_arch_lists.json, the GPU's capability, every
chip an ambiguous name is sold with), on real texts from public threads (none written from these texts alone)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.interpret.gpus import capability_candidates


def _check(tmp_path, paste: str):
    p = tmp_path / "paste.txt"
    p.write_text(paste, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(p), "--format", "json"], env={"NO_COLOR": "1"})
    assert r.exit_code in (0, 1), r.output
    return [(f["code"], f["severity"]) for f in json.loads(r.stdout)["findings"] if f["severity"] in ("error", "warning")]


OTHER = [
    # https://github.com/rowanz/neural-motifs/issues/6 (a Faster R-CNN-style op's own check)
    "Was attempting to run: `bash scripts/pretrain_detector.sh` and rain into the following:\n"
    "`cudaCheckError() failed : no kernel image is available for execution on the device`\n",
    # https://github.com/NVIDIA/cuda-samples/issues/170 (a CUDA sample's own launch check)
    "Failed to launch vectorAdd kernel (error code no kernel image is available for execution on the device)!\n"
    "hello, I have a problem with the kernel image.",
    # https://github.com/scale-snu/ckks-gpu-core/issues/2 (a program's .cu file and line)
    "[ RUN      ] Params/FusionTest.ModUp/0\n"
    "Cuda failure /home/fsy/fhe/ckks-gpu-core/src/public/Context.cu:361: 'no kernel image is available for execution on the device'",
    # https://github.com/enazoe/yolo-tensorrt/issues/13 (a TensorRT plugin's own check, its .cpp file and line)
    "After executing the compiled binaries on Ubuntu, I hit this error :\n"
    "Cuda failure: no kernel image is available for execution on the device in file "
    "/home/path/to//TensorRT/yolo-tensorrt/modules/plugin_factory.cpp at line 155\nAborted (core dumped)",
]


@pytest.mark.parametrize("paste", OTHER, ids=["cudaCheckError", "cuda-samples", "cu-file-line", "cpp-at-line"])
def test_another_programs_kernel_is_not_torchs(tmp_path, paste):
    got = _check(tmp_path, paste)
    assert any(c == "companion-arch-unsupported" for c, _s in got), got
    assert "gpu-arch-unsupported" not in [c for c, _s in got], got


# https://github.com/swz30/Restormer/issues (b12-19 class): the last frame is torch's own functional.py
TORCH_FRAME = """Traceback (most recent call last): File "demo.py", line 127, in <module>
input_ = F.pad(input_, (0,padw,0,padh), 'reflect')
File "/hdd2/x/restormer/lib/python3.7/site-packages/torch/nn/functional.py", line 4017, in _pad
return torch._C._nn.reflection_pad2d(input, pad)
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""


def test_torchs_own_frame_keeps_it_torchs(tmp_path):
    got = _check(tmp_path, TORCH_FRAME)
    assert ("gpu-arch-unsupported", "error") in got, got
    assert "companion-arch-unsupported" not in [c for c, _s in got], got


def test_nothing_known_gives_both_hypotheses_as_warnings(tmp_path):
    # https://github.com/csuhan/ReDet/issues/49: only the title survives; neither torch nor the GPU is stated
    got = _check(tmp_path, "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert ("gpu-arch-unsupported", "warning") in got and ("companion-arch-unsupported", "warning") in got, got
    assert not any(s == "error" for _c, s in got), got


def test_ambiguous_titan_x_both_chips_run_torch_17(tmp_path):
    # https://github.com/thomasbrandon/mish-cuda/issues/10: TITAN X is Maxwell 5.2 or Pascal 6.1; every torch 1.7
    # wheel has sm_50 and sm_60, so either chip runs torch's kernels and the extension's lack it
    assert capability_candidates("TITAN X") == ["5.2", "6.1"]
    got = _check(
        tmp_path,
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "Built with pytorch 1.7, cuda 10.2, TITAN X, got this error.\n",
    )
    assert ("companion-arch-unsupported", "error") in got, got
    assert "gpu-arch-unsupported" not in [c for c, _s in got], got


@pytest.mark.parametrize(
    "paste",
    [
        # https://github.com/pytorch/pytorch/issues/14681 (GT 740M: GK107 3.0 or GK208 3.5; no torch version)
        "pytorch for NVIDIA GeForce GT 740M with the old CUDA\nI can use pytorch just with CPU features.",
        # https://github.com/pytorch/pytorch/issues/6529 class: a Kepler laptop part named in prose, torch unnamed
        "My laptop has a GeForce GT 730M and torch.cuda.is_available() returns True but nothing runs on it.",
    ],
    ids=["gt740m", "gt730m"],
)
def test_a_gpu_no_wheel_has_kernels_for_is_named_with_torch_unknown(tmp_path, paste):
    got = _check(tmp_path, paste)
    assert ("gpu-arch-unsupported", "warning") in got, got


def test_a_gpu_every_recent_wheel_runs_gives_no_finding(tmp_path):
    got = _check(tmp_path, "GPU: NVIDIA GeForce RTX 3060\nEverything works fine.")
    assert "gpu-arch-unsupported" not in [c for c, _s in got], got


def test_the_one_arch_a_text_names_against_the_named_torch_build(tmp_path):
    # https://github.com/EutropicAI/vs-playground/pull/59: torch 2.7.1+cu128 is built from sm_75 (kb/torch_arch_lists.json)
    got = _check(tmp_path, "torch 2.7.1+cu128 not support `sm_70`, so bump version to 2.8.0+cu128\n")
    assert ("gpu-arch-unsupported", "warning") in got, got


def test_an_arch_in_a_compiler_flag_is_not_the_gpu():
    from cudadoctor.checks.arch import _lone_arch

    # https://github.com/enazoe/yolo-tensorrt/issues/13 (the fix's CMake flag) and torch's own list of archs
    assert _lone_arch("-gencode arch=compute_72,code=sm_72") is None
    assert _lone_arch("The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75") is None


def test_torchs_own_source_on_the_error_line_keeps_it_torchs(tmp_path):
    # https://github.com/pytorch/pytorch/issues/6529 class (torch 0.x's THC check names its own .cu file)
    got = _check(
        tmp_path,
        "THCudaCheck FAIL file=/pytorch/torch/lib/THC/generic/THCTensorMath.cu line=15 error=8 : invalid device function\n"
        "RuntimeError: cuda runtime error (8) : invalid device function at /pytorch/torch/lib/THC/generic/THCTensorMath.cu:15\n",
    )
    assert "companion-arch-unsupported" not in [c for c, _s in got], got
    assert "gpu-arch-unsupported" in [c for c, _s in got], got
