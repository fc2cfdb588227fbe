"""Session 17's classes from blind batch b49 (GitHub threads), each with real wordings and negatives: NVIDIA's container
banner naming the host driver below the image's floor (driver-too-old, not the compat libraries), and a GTX 16xx card
giving NaN in half precision (gtx16-fp16-cudnn-nan, checks/fp16_17.py)."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.readers import prose

# --- NVIDIA's container banner: the image's driver floor and the host's driver ---------------------------------------


@pytest.mark.parametrize(
    "banner, driver",
    [
        (  # yolov5's 20.06 image on a Quadro P2000 (the banner with cuInit's 804)
            "ERROR: This container was built for NVIDIA Driver Release 450.36 or later, but\n"
            "       version 440.100 was detected and compatibility mode is UNAVAILABLE.\n"
            "       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n",
            "440.100",
        ),
        (  # TensorRT 20.03 on driver 418 (a tutorial's log)
            "ERROR: This container was built for NVIDIA Driver Release 440.33 or later, but\n"
            "       version 418.67 was detected and compatibility mode is UNAVAILABLE.\n\n"
            "       [[CUDA Driver UNAVAILABLE (cuInit(0) returned 804)]]\n",
            "418.67",
        ),
        (  # NVIDIA's vLLM 26.03 image on a DGX Spark (a deployment's notes)
            "ERROR: This container was built for NVIDIA Driver Release 595.45 or later, but\n"
            "       version 580.159.03 was detected and compatibility mode is UNAVAILABLE.\n",
            "580.159.03",
        ),
    ],
)
def test_the_banner_names_the_host_driver_and_the_cause_is_the_driver(tmp_path, banner, driver):
    assert prose.read(banner.splitlines())["driver"]["value"] == driver
    got = paste_findings(tmp_path, "Using the Docker image, only CPU is used:\n" + banner)
    assert "driver-too-old" in codes(got)
    assert "cuda-forward-compat" not in codes(got)


def test_error_804_with_compat_libraries_on_a_geforce_is_still_forward_compat(tmp_path):
    text = (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
        "supported HW\nLD_LIBRARY_PATH=/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64\nGPU: NVIDIA GeForce RTX 3090\n"
    )
    assert "cuda-forward-compat" in codes(paste_findings(tmp_path, text))


# --- GTX 16xx: NaN in half precision ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, severity",
    [
        (  # pytorch/pytorch#77955 (yolov5 on a GTX 1660 Ti)
            "I used yolov5 to test with the demo dataset (coco128) and found that box and obj are nan. Also, there are no "
            "detections appear on validation images. This only happens on GTX1660ti devices (GPU mode)\n"
            "- Nvidia GTX 1660 TI, 6 GB\n",
            "warning",
        ),
        (  # pytorch/pytorch#58123
            "FP16 inference with Cuda 11.1 returns NaN on Nvidia GTX 1660\nHalf precision inference returns NaNs for a "
            "number of models when run on a 1660 with Cuda 11.1\n",
            "warning",
        ),
        (  # Stable Diffusion web UI's own exception, on a GTX 1650
            "modules.devices.NansException: A tensor with all NaNs was produced in Unet. This could be either because "
            "there's not enough precision to represent the picture, or because your video card does not support half "
            "type.\nGPU: NVIDIA GeForce GTX 1650\n",
            "warning",
        ),
        (  # ultralytics/yolov5: training that makes no progress on a 1660 SUPER
            "the network doesn't show any kind of training advance. I'm using pytorch==1.9.0 with cuda=11.1, and a 1660 super.\n",
            "warning",
        ),
    ],
)
def test_gtx16_nan_in_half_precision(tmp_path, text, severity):
    assert severities(paste_findings(tmp_path, text)).get("gtx16-fp16-cudnn-nan") == severity


@pytest.mark.parametrize(
    "text",
    [
        # the same NaN on another GPU: not this card's fp16 problem
        "found that box and obj are nan during training\nGPU: NVIDIA GeForce RTX 3090\n",
        # a GTX 1660 with no wrong numbers described
        "torch.cuda.is_available() returns False\nGPU: NVIDIA GeForce GTX 1660 SUPER\n",
    ],
)
def test_gtx16_needs_both_the_card_and_the_wrong_numbers(tmp_path, text):
    assert "gtx16-fp16-cudnn-nan" not in codes(paste_findings(tmp_path, text))


# --- from b48: an old GPU whose first kernels fail, the torch unstated -------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # AUTOMATIC1111 after an update, on a Tesla K80 (sm_37): cuDNN cannot initialise
        "Tesla K80, driver 470.161.03\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n",
        # a Pascal card (sm_61): torch 2.15's CUDA 13 builds start at sm_75
        "GPU 0: NVIDIA GeForce GTX 1080\nRuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
        "`cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n",
    ],
)
def test_an_old_gpu_with_failing_first_kernels_is_likely_the_architecture(tmp_path, text):
    got = paste_findings(tmp_path, text)
    assert severities(got).get("gpu-arch-unsupported") == "warning", codes(got)
    assert any(f["code"] == "gpu-arch-unsupported" and f["title"].startswith("Likely:") for f in got)


@pytest.mark.parametrize(
    "text",
    [
        # a current GPU: every build runs it, the cuDNN failure is something else
        "GPU: NVIDIA GeForce RTX 3090\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n",
        # the torch stated is one that has sm_37 kernels (1.12.1+cu113): the kb's own verdict applies, not a guess
        "torch 1.12.1+cu113\nTesla K80\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n",
        # a data type the GPU lacks (bf16 on a Maxwell Tesla M40), not its architecture
        "Tesla M40\nRuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, "
        "opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, ...)` with dtype=torch.bfloat16\n",
    ],
)
def test_no_architecture_guess_for_a_current_gpu_or_a_stated_torch_that_runs_it(tmp_path, text):
    got = paste_findings(tmp_path, text)
    assert not any(f["code"] == "gpu-arch-unsupported" for f in got if f["severity"] in ("error", "warning")), codes(got)


# --- from b48: the CPU used instead of the GPU, Apple silicon named without "Apple" ----------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Work going by default to my cpu instead of my gpu\nhow can i make that imaginairy use my RTX 2070 instead of my cpu ?\n",
        "It uses the CPU instead of the GPU, my card is a GTX 1080\n",
    ],
)
def test_cpu_instead_of_gpu_is_running_on_the_cpu(tmp_path, text):
    assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "warning"


@pytest.mark.parametrize(
    "line, mac",
    [
        ("Would be good if there was a check for cuda (else mps, for those of us on an M1) in the code.", True),
        ("I run it on my M2 Max", True),
        ("an M3 chip laptop", True),
        ("my M2 SSD is full", False),
        ("an m.2 drive", False),
    ],
)
def test_apple_silicon_named_without_apple(line, mac):
    assert (prose.read([line]).get("os", {}).get("value") == "Darwin") is mac


def test_torch_not_compiled_with_cuda_on_an_m1_is_the_mac(tmp_path):
    text = (
        "`AssertionError: Torch not compiled with CUDA enabled`\nWould be good if there was a check for cuda "
        "(else mps, for those of us on an M1) in the code.\n"
    )
    got = paste_findings(tmp_path, text)
    assert "non-nvidia-gpu" in codes(got) and "cpu-only-torch" not in codes(got)


# --- from b52/b53: bitsandbytes under WSL, DeepSpeed's build, tiny-cuda-nn's import, pip's uninstall lines -------------

_BNB = (
    "===================================BUG REPORT===================================\n"
    "Welcome to bitsandbytes. For bug reports, please submit your error trace to: https://github.com/TimDettmers/bitsandbytes/issues\n"
    "/home/u/miniconda3/envs/textgen/lib/python3.10/site-packages/bitsandbytes/cuda_setup/main.py:136: UserWarning: "
    "/home/u/miniconda3/envs/textgen did not contain libcudart.so as expected! Searching further paths...\n"
)


@pytest.mark.parametrize("where", ["CUDA not found on WSL\n", "I recently installed WSL for the webui.\n"])
def test_bitsandbytes_setup_under_wsl_is_likely_the_wsl_libcuda(tmp_path, where):
    got = paste_findings(tmp_path, where + "python server.py --load-in-8bit\n" + _BNB)
    assert severities(got).get("libcuda-not-in-linker-cache") == "warning"


def test_bitsandbytes_setup_outside_wsl_is_not_the_wsl_libcuda(tmp_path):
    got = paste_findings(tmp_path, "Ubuntu 22.04 host\npython server.py --load-in-8bit\n" + _BNB)
    assert "libcuda-not-in-linker-cache" not in codes(got)


@pytest.mark.parametrize(
    "text",
    [
        "AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting to pre-compile ops.\n",
        "      [WARNING] Unable to import torch, pre-compiling ops will be disabled.\n      DS_BUILD_OPS=1\n"
        "      AssertionError: Unable to pre-compile ops without torch installed. Please install torch before attempting to "
        "pre-compile ops.\nERROR: Failed to build 'deepspeed' when getting requirements to build wheel\n",
    ],
)
def test_deepspeed_without_torch_in_its_build_is_build_isolation(tmp_path, text):
    assert "extension-build-isolation" in codes(paste_findings(tmp_path, text, "--error-file"))


def test_pips_uninstall_lines_are_not_the_installed_torch():
    lines = [
        "Attempting uninstall: torch",
        "    Found existing installation: torch 1.13.1+cu117",
        "    Uninstalling torch-1.13.1+cu117:",
        "      Successfully uninstalled torch-1.13.1+cu117",
    ]
    assert "torch" not in prose.read(lines)
    assert prose.read(["My torch is 1.13.1+cu117"])["torch"]["value"] == "1.13.1+cu117"


def test_tiny_cuda_nn_unknown_compute_capability_on_windows_is_a_cpu_torch(tmp_path):
    # nerfstudio on Windows: pip replaced the CUDA torch; tinycudann raises this when torch.cuda.is_available() is False
    text = (
        "I am setting up nerfstudio for Windows with CUDA 11.7. pip install nerfstudio seems to uninstall PyTorch:\n"
        "Attempting uninstall: torch\n    Found existing installation: torch 1.13.1+cu117\n"
        "    Uninstalling torch-1.13.1+cu117:\n      Successfully uninstalled torch-1.13.1+cu117\n"
        "OSError: Unknown compute capability. Ensure PyTorch with CUDA support is installed.\n"
    )
    assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "warning"


# --- the conda environment's cudatoolkit pairing libraries of different builds ---------------------------------------


@pytest.mark.parametrize(
    "line, code",
    [
        # ld.so's form names the sibling file that lacks the version: both in the environment's lib (cudatoolkit 11.0.221)
        (
            "ImportError: /home/u/anaconda3/envs/x/lib/libcublas.so.11: symbol free_gemm_select version libcublasLt.so.11 "
            "not defined in file libcublasLt.so.11 with link time reference",
            "conda-cudatoolkit-broken-build",
        ),
        # dlopen's form does not say which libcublasLt was loaded: a conda libcublas beside a pip torch's own cuBLAS
        # reads exactly so (b17-11, fixed by removing cudatoolkit), so it stays library-shadowing
        (
            "OSError: /data/app/anaconda3/envs/f/lib/python3.10/site-packages/torch/lib/../../../../libcublas.so.11: "
            "undefined symbol: cublasLtBIIMatmulAlgoGetHeuristic, version libcublasLt.so.11",
            "library-shadowing",
        ),
    ],
)
def test_cublas_versioned_symbol_failures(tmp_path, line, code):
    assert code in codes(paste_findings(tmp_path, line, "--error-file"))
