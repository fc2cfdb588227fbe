"""CUDA's error 100 (cudaErrorNoDevice / CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected") in any tool's words,
with nothing telling the driver's state: a no-gpu-visible WARNING naming the two causes (GPUs hidden from the process, or
the kernel module not loaded) — never silence, never an error (checks/driver.py _no_device_driver_unknown)."""

from __future__ import annotations

import pytest
from checkcli import paste_findings, severities

# Real lines, each from a public thread (the error corpus holds the first two with their threads' resolutions).
NO_DEVICE = {
    # https://github.com/yongxinw/GSDT/issues/6 (CUDA_VISIBLE_DEVICES hid the GPU)
    "torch-thc": "RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at "
    "/opt/conda/conda-bld/pytorch_1579022060824/work/aten/src/THC/THCGeneral.cpp:50",
    # https://github.com/triton-inference-server/tensorrtllm_backend/issues/336 (docker without --gpus)
    "trtllm": "runtime error in cudaGetDeviceCount(&deviceCount): no CUDA-capable device is detected",
    # TensorFlow/XLA's driver wrapper, its message as logged (tensorflow/third_party/xla/.../cuda_driver.cc at v2.16.1,
    # kb/errors/srcb7.json; the timestamp and line number are illustrative)
    "xla": "2024-03-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to "
    "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    # numba's driver (numba/cuda/cudadrv/driver.py)
    "numba": "numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE",
}


@pytest.mark.parametrize("name", sorted(NO_DEVICE))
def test_error_100_alone_is_a_no_gpu_visible_warning(tmp_path, name):
    sev = severities(paste_findings(tmp_path, NO_DEVICE[name]))
    assert sev.get("no-gpu-visible") == "warning", sev
    assert "error" not in sev.values(), sev


def test_error_100_on_wsl_is_left_to_the_wsl_checks(tmp_path):
    text = "Ubuntu 22.04 on WSL2 (5.15.90.1-microsoft-standard-WSL2)\n" + NO_DEVICE["numba"]
    assert "no-gpu-visible" not in severities(paste_findings(tmp_path, text))


def test_a_lost_gpu_keeps_its_own_code(tmp_path):
    # https://github.com/AlexeyAB/darknet/issues/86: nvidia-smi says the GPU is lost; the program saw no device
    text = (
        "no CUDA-capable device is detected\n"
        "Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Reboot the system to recover this GPU"
    )
    sev = severities(paste_findings(tmp_path, text))
    assert sev.get("gpu-lost") == "error", sev
