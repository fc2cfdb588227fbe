"""Session 16's classes from blind batches b39 and b40 (kb/errors/cuda16.json and the checks that read it): Triton's
rejected cubin on an old driver, CuPy's NVRTC older than the GPU, a compute capability of 1.0 from a stray cudart, a
torch patch release that never existed, a CUDA pin on macOS, and "GPU not utilized" in English."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, run_check, severities, write

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


# --- OptiX's optixInit() on an older driver (kb/optix_drivers.json) ---------------------------------------------------


def test_kb_optix_floors():
    assert kb.optix_min_driver("7.7.0") == "530.41"
    assert kb.optix_min_driver("7.4", "windows") == "496.49"
    assert kb.optix_min_driver("7.3.0") is None  # no source read for 7.3: unknown, not guessed


def test_optix_abi_error_with_the_sdk_and_driver(tmp_path):
    # zju3dv/EnvGS#4: OptiX SDK 7.7.0 on driver 470.161.03
    text = (
        "Driver Version: 470.161.03\nOptiX SDK 7.7.0\n"
        "/root/code/EnvGS/submodule/diff-surfel-tracing/optix_tracer/optix_wrapper.cpp:175 Optix Error: 'Unsupported ABI version'"
    )
    f = [x for x in paste_findings(tmp_path, text) if x["code"] == "driver-too-old"]
    assert f and f[0]["severity"] == "error" and f[0]["evidence"]["optix_min_driver"] == "530.41"


def test_optix_7801_alone(tmp_path):
    # owl-project/NVISII#40
    f = severities(paste_findings(tmp_path, "Optix call (optixInit()) failed with code 7801 (line 150)"))
    assert f.get("driver-too-old") == "error"


def test_bare_optixinit_failure_is_a_warning(tmp_path):
    # NVlabs/instant-ngp#35
    f = severities(paste_findings(tmp_path, "Uncaught exception: Optix call 'optixInit()' failed."))
    assert f.get("driver-too-old") == "warning"


def test_optix_with_a_driver_above_the_floor_is_not_the_driver(tmp_path):
    text = "Driver Version: 535.104.05\nNVIDIA-OptiX-SDK-7.4.0-linux64-x86_64\nOptix call 'optixInit()' failed."
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


# --- a TensorRT engine built elsewhere (checks/trt16.py) --------------------------------------------------------------


@pytest.mark.parametrize(
    "text, engine",
    [
        # NVIDIA/retinanet-examples#314, wang-xinyu/tensorrtx#664: an 8.0.1 engine read by TensorRT 8.0.0
        (
            "6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.0.0 "
            "got 8.0.1, please rebuild.\n4: [runtime.cpp::deserializeCudaEngine::74] Error Code 4: Internal Error "
            "(Engine deserialization failed.)",
            "8.0.1",
        ),
        # GeekAlexis/FastMOT#127 (TensorRT 7's wording)
        (
            "[TensorRT] ERROR: coreReadArchive.cpp (41) - Serialization Error in verifyHeader: 0 (Version tag does not "
            "match. Note: Current Version: 96, Serialized Engine Version: 97)",
            None,
        ),
    ],
)
def test_tensorrt_engine_from_another_release(tmp_path, text, engine):
    f = [x for x in paste_findings(tmp_path, text) if x["code"] == "tensorrt-engine-built-with-other-version"]
    assert f and f[0]["severity"] == "error"
    assert f[0]["evidence"].get("engine_tensorrt") == engine


def test_engine_deserialization_alone_is_not_this(tmp_path):
    text = "[TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)"
    assert "tensorrt-engine-built-with-other-version" not in codes(paste_findings(tmp_path, text))


# --- whose kernel lacked the architecture: ggml, CTranslate2, RAPIDS --------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # arcana6264/whisper_desktop#8 (ggml's CUDA backend on an RTX 4080 SUPER)
        "GPU: NVIDIA GeForce RTX 4080 SUPER\nggml_cuda_compute_forward: IM2COL failed\n"
        "CUDA error: no kernel image is available for execution on the device\n"
        "current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2397",
        # OpenNMT/CTranslate2#1765 (a GTX 960M)
        "RuntimeError: parallel_for failed: cudaErrorNoKernelImageForDevice: no kernel image is available for execution "
        "on the device",
        # NVIDIA/cuml#5484, NVIDIA/cudf#12812
        "RuntimeError: This cuDF installation is missing the necessary PTX files that are <=50.",
    ],
)
def test_another_programs_kernels(tmp_path, text):
    got = codes(paste_findings(tmp_path, text))
    assert "companion-arch-unsupported" in got and "gpu-arch-unsupported" not in got


def test_torchs_own_no_kernel_image_stays_torchs(tmp_path):
    text = (
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, text))


# --- Taichi's unversioned libcuda.so, and ollama on the CPU -----------------------------------------------------------


def test_taichi_libcuda_so(tmp_path):
    # taichi-dev/taichi-nerfs#94: other CUDA programs work
    text = (
        "[W 03/03/24 17:05:31.950 2179169] [cuda_driver.cpp:load_lib@36] libcuda.so lib not found.\n"
        "[W 03/03/24 17:05:31.950 2179169] [misc.py:adaptive_arch_select@758] Arch=[<Arch.cuda: 3>] is not supported, "
        "falling back to CPU"
    )
    assert "libcuda-not-in-linker-cache" in codes(paste_findings(tmp_path, text))


def test_ollama_on_the_cpu_on_windows_is_not_a_torch_wheel(tmp_path):
    # ollama/ollama#4396
    text = (
        "In Windows, if a new version comes, Ollama widget will ask user to restart Ollama.\n"
        "I noticed that after I upgraded my Nvidia GPU driver, Ollama ran very slow. Then I found that the GPU was not "
        "working and Ollama only used the CPU.\nIt fell back to the CPU."
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text))


# --- PyPI's aarch64 torch before 2.11 is a CPU build ------------------------------------------------------------------

_AARCH64_ENV = """Collecting environment information...
PyTorch version: 2.10.0
Is debug build: No
CUDA used to build PyTorch: Could not collect

OS: Linux aarch64
GPU models and configuration: GPU 0: NVIDIA GB10 (DGX Spark)

Versions of relevant libraries:
[pip3] torch==2.10.0
"""


def test_pypi_aarch64_torch_is_a_cpu_build(tmp_path):
    # hanyeol/model-compose#24: a DGX Spark got PyPI's torch==2.10.0, the CPU build on aarch64
    f = [x for x in paste_findings(tmp_path, _AARCH64_ENV, "--from-collect-env") if x["code"] == "cpu-only-torch"]
    assert f and f[0]["severity"] == "warning" and "--index-url https://download.pytorch.org/whl/cu" in f[0]["fix"]["commands"][1]


def test_aarch64_torch_from_211_on_pypi_has_cuda(tmp_path):
    text = _AARCH64_ENV.replace("2.10.0", "2.14.1")
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, text, "--from-collect-env"))


def test_x86_64_torch_from_pypi_is_not_this(tmp_path):
    text = _AARCH64_ENV.replace("OS: Linux aarch64", "OS: Ubuntu 22.04.4 LTS (x86_64)")
    f = paste_findings(tmp_path, text, "--from-collect-env")
    assert not any(x["code"] == "cpu-only-torch" and "aarch64" in x["title"] for x in f)


@pytest.mark.parametrize(
    "line, arch",
    [("OS: Linux aarch64", "aarch64"), ("torch-2.4.0-cp312-cp312-manylinux_2_28_aarch64.whl", "aarch64"), ("Ubuntu 22.04", None)],
)
def test_prose_reads_the_arm_architecture(line, arch):
    got = prose.read([line])
    assert (got.get("arch") or {}).get("value") == arch


# --- torch's own cuDNN missing, torch named by its CUDA build ---------------------------------------------------------


def test_torchs_cudnn_missing_with_torchs_cuda_known(tmp_path):
    # w-m/ffsplat#29: `uv sync` removed torch's nvidia-* wheels; torch (CUDA 12.6) then cannot load libcudnn.so.9
    env = _AARCH64_ENV.replace("OS: Linux aarch64", "OS: Ubuntu 22.04 (x86_64)").replace(
        "CUDA used to build PyTorch: Could not collect", "CUDA used to build PyTorch: 12.6"
    )
    err = write(tmp_path, "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n", "e.txt")
    f = run_check("--from-collect-env", str(write(tmp_path, env)), "--error-file", str(err))
    assert "cudnn-mismatch" in codes(f)
