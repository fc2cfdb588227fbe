"""Task build11 (issue 21, round 11): a package with its own GPU kernels refusing a GPU below the compute capability
it supports at all, in its own words (kb/errors/build11.json): companion-arch-unsupported whose fix is not a rebuild.
Real texts (URL on each); none from the blind batches."""

from __future__ import annotations

from checkcli import codes, paste_findings

# https://github.com/sgl-project/sglang/issues/14116 (two Quadro RTX 5000, compute capability 7.5)
SGLANG_14116 = """I am unable to run the Qwen3-VL-32B-Instruct-AWQ-4bit model due to a CUDA compute capability requirement. My hardware consists of two NVIDIA QUADRO RTX 5000 cards (16GB each, 32GB total) with a compute capability of 7.5. The software framework raises an error:

"GPUs with compute capability < 8.0 are not supported."
"""

# https://github.com/huggingface/text-generation-inference/issues/533 (a V100: TGI's flash-attention import check)
TGI_533 = """ImportError: GPU with CUDA capability 7 0 is not supported
| NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4     |
|   0  Tesla V100-SXM2...  Off  | 00000000:00:04.0 Off |                    0 |
"""


def _finding(tmp_path, text):
    found = paste_findings(tmp_path, text)
    assert "companion-arch-unsupported" in codes(found), codes(found)
    return next(f for f in found if f["code"] == "companion-arch-unsupported")


def test_a_packages_own_minimum_capability_refusal(tmp_path):
    f = _finding(tmp_path, SGLANG_14116)
    assert "refuses this GPU" in f["title"] and "7.5" in f["title"], f["title"]
    assert not any("TORCH_CUDA_ARCH_LIST" in c for c in f["fix"]["commands"]), f["fix"]  # no rebuild gives it kernels


def test_tgis_capability_check_is_the_same_class(tmp_path):
    f = _finding(tmp_path, TGI_533)
    assert not any("--no-binary" in c for c in f["fix"]["commands"]), f["fix"]


def test_torchs_own_too_old_message_is_not_this_class(tmp_path):
    # torch/cuda/__init__.py (_check_capability, v1.13.1): torch's own refusal is gpu-arch-unsupported's
    text = (
        "Found GPU0 Tesla K40c which is of cuda capability 3.5.\n    PyTorch no longer supports this GPU because it is too old.\n"
        "    The minimum cuda capability supported by this library is 3.7.\n"
    )
    assert "companion-arch-unsupported" not in codes(paste_findings(tmp_path, text))
