"""Session 16's classes from blind batches b39 and b40 (kb/errors/cuda16.json and the checks that read it): Triton's
rejected cubin on an old driver, CuPy's NVRTC older than the GPU, a compute capability of 1.0 from a stray cudart, a
torch patch release that never existed, a CUDA pin on macOS, and "GPU not utilized" in English."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor import kb
from cudadoctor.readers import prose

# --- Triton's cubin rejected ------------------------------------------------------------------------------------------

_TRITON = (
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n"
)


def test_triton_image_invalid_points_at_the_driver(tmp_path):
    # pytorch/pytorch#119054: fixed by TRITON_PTXAS_PATH (the driver was 470); triton#3001: fixed by driver 535
    f = [x for x in paste_findings(tmp_path, _TRITON) if x["code"] == "driver-too-old"]
    assert f and f[0]["severity"] == "warning"
    assert any("TRITON_PTXAS_PATH" in c for c in f[0]["fix"]["commands"])


def test_triton_image_invalid_with_an_old_driver_stated(tmp_path):
    # triton-lang/triton#2971: driver 470.182.03
    text = _TRITON + "NVIDIA-SMI 470.182.03   Driver Version: 470.182.03   CUDA Version: 11.4\n"
    f = [x for x in paste_findings(tmp_path, text) if x["code"] == "driver-too-old"]
    assert f and f[0]["evidence"]["driver"] == "470.182.03"


def test_triton_image_invalid_with_a_cuda12_driver_is_not_the_driver(tmp_path):
    text = _TRITON + "NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2\n"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


# --- CuPy's NVRTC and torch's ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "NVRTC compilation error: nvrtc: error: invalid value for --gpu-architecture (-arch)",  # cupy/cupy#1048
        "cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture (-arch)",
    ],
)
def test_cupys_nvrtc_older_than_the_gpu_is_the_toolkit(tmp_path, text):
    got = codes(paste_findings(tmp_path, text))
    assert "toolkit-arch-unsupported" in got and "gpu-arch-unsupported" not in got


def test_torchs_own_nvrtc_is_still_torchs_build(tmp_path):
    # torch's jiterator (srca8.json): the torch build is older than the GPU
    text = "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\n\nnvrtc compilation failed:"
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, text))


# --- a compute capability no GPU has ----------------------------------------------------------------------------------


def test_capability_one_point_zero_is_a_stray_cudart(tmp_path):
    # ollama/ollama#4008: PhysX's cudart on PATH
    text = "Previously: CUDART CUDA Compute Capability detected: 5.2\nNow: CUDA GPU is too old. Compute Capability detected: 1.0"
    assert "library-shadowing" in codes(paste_findings(tmp_path, text))


def test_a_real_old_capability_is_not_shadowing(tmp_path):
    # ollama/ollama#1992: a GTX 970 really is 5.2
    text = "gpu.go:138: CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: 5.2"
    assert "library-shadowing" not in codes(paste_findings(tmp_path, text))


# --- a torch release that never existed, and CUDA on macOS ------------------------------------------------------------


def test_kb_knows_each_series_patches():
    assert kb.torch_patches("1.11.1") == ["1.11.0"]
    assert kb.torch_patches("2.1") == ["2.1.0", "2.1.1", "2.1.2"]
    assert kb.torch_patches("0.0.1") is None


def test_a_patch_that_never_existed(tmp_path):
    # a README's torch==1.11.1+cu111 (the experiments used 1.10.1+cu111)
    f = [
        x
        for x in paste_findings(tmp_path, "ERROR: No matching distribution found for torch==1.11.1+cu111\n")
        if x["code"] == "install-command-names-missing-wheel"
    ]
    assert f and f[0]["severity"] == "error" and f[0]["evidence"]["released_patches"] == ["1.11.0"]
    assert "torch==1.11.0+cu115" in f[0]["fix"]["commands"][0]  # 1.11 has no cu111 build: its newest CUDA one


def test_a_patch_that_exists_is_not_never_published(tmp_path):
    f = paste_findings(tmp_path, "ERROR: No matching distribution found for torch==2.1.2+cu121\n")
    assert not any("never published" in x["title"] for x in f)


_MAC_PIN = """ERROR: Could not find a version that satisfies the requirement torch==2.1.2+cu118 (from versions: 1.11.0, 1.12.0, 1.12.1, 1.13.0, 1.13.1, 2.0.0, 2.0.1, 2.1.0, 2.1.1, 2.1.2, 2.2.0, 2.2.1)
ERROR: No matching distribution found for torch==2.1.2+cu118

Python 3.10.13
Apple M2
"""


def test_a_cuda_pin_on_a_mac_is_the_platform(tmp_path):
    # Nerogar/OneTrainer: requirements pin a CUDA build, the machine is an Apple M2
    got = codes(paste_findings(tmp_path, _MAC_PIN))
    assert "python-unsupported" in got and "install-command-names-missing-wheel" not in got


@pytest.mark.parametrize(
    "line, named", [("Apple M2", True), ("MacBook Pro 14 (M3 Max)", True), ("macOS 14.2", True), ("NVIDIA A100", False)]
)
def test_apple_machines_name_macos(line, named):
    assert bool([o for o in prose._os_of(line) if o[0] == "Darwin"]) is named


# --- "GPU not utilized" -----------------------------------------------------------------------------------------------


def test_gpu_not_utilized_in_english(tmp_path):
    # ilnehc96/HKU-DASC7606-A1 (b39-13)
    text = (
        "GPU not utilized during model training, resulting in slow performance\n"
        "during automatic model training, the CPU is being used, leading to extremely slow training."
    )
    assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "warning"


# --- bfloat16 attention below Ampere ----------------------------------------------------------------------------------


def test_cutlassf_on_a_v100_is_bf16(tmp_path):
    # google/gemma-2b-it discussion 32: a V100, torch_dtype=torch.bfloat16; float16 ran
    text = "GPU: NVIDIA V100\nRuntimeError: cutlassF: no kernel found to launch!"
    f = severities(paste_findings(tmp_path, text))
    assert f.get("gpu-lacks-bf16") == "error"


def test_cutlassf_without_a_gpu_shown_is_a_warning(tmp_path):
    # QwenLM/Qwen3#710 (the GPU only in prose the reader may not know), huggingface/transformers#28731 (a T4)
    f = severities(paste_findings(tmp_path, "RuntimeError: cutlassF: no kernel found to launch!"))
    assert f.get("gpu-lacks-bf16") == "warning"


def test_cutlassf_on_an_a100_is_not_bf16(tmp_path):
    text = "GPU 0: NVIDIA A100-SXM4-80GB\nRuntimeError: cutlassF: no kernel found to launch!"
    assert "gpu-lacks-bf16" not in codes(paste_findings(tmp_path, text))


# --- Hugging Face ZeroGPU Spaces --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # vllm-project/vllm#3510, antgroup/echomimic#148
        "RuntimeError: CUDA must not be initialized in the main process on Spaces with Stateless GPU environment.\n"
        "You can look at this Stacktrace to find out which part of your code triggered a CUDA init",
        # lenML/Speech-AI-Forge#143 (title, in Chinese around it)
        "[BUG:API] 部署到HF Space 调用接口报错 RuntimeError: CUDA must not be initialized in the main process on Spaces "
        "with Stateless GPU environment.",
    ],
)
def test_zerogpu_main_process_cuda(tmp_path, text):
    assert codes(paste_findings(tmp_path, text))[0] == "zerogpu-cuda-initialized-in-main-process"


def test_zerogpu_torch_pin(tmp_path):
    # zero-gpu-explorers/README discussion 37
    got = codes(paste_findings(tmp_path, "Configuration error: No candidate PyTorch version found for ZeroGPU"))
    assert got == ["zerogpu-torch-version-unsupported"]


def test_cuda_initialised_in_a_forked_worker_is_not_zerogpu(tmp_path):
    text = "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method"
    assert "zerogpu-cuda-initialized-in-main-process" not in codes(paste_findings(tmp_path, text))
