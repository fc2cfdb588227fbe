"""driver8: the driver older than what is installed, read from facts stated in any form and from other programs' words.

Real texts from public threads (URLs beside each); none from the blind batches. Facts: the driver as Windows numbers
it (31.0.15.3623 -> 536.23), the kernel module's NVRM line, nvidia-smi's CUDA level said in words; wordings: a missing
driver-API / NVML entry point, xmr-stak's and ollama's reports of cudaErrorInsufficientDriver, Windows' 0xC0000139.
"""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

from cudadoctor.readers import prose


def _read(line: str) -> dict:
    return {k: v["value"] for k, v in prose.read([line]).items() if isinstance(v, dict)}


# ---------------------------------------------------------------- the driver version in every form


def test_windows_driver_number_is_read_as_nvidias_release():
    # Device Manager / DxDiag / WMI numbering: the last five digits of the last two fields are NVIDIA's release.
    assert _read("Driver Version: 31.0.15.3623")["driver"] == "536.23"
    assert _read("NVIDIA GeForce RTX 3070 driver 27.21.14.5671")["driver"] == "456.71"
    assert _read("Driver Version: 23.21.13.9135")["driver"] == "391.35"


def test_other_vendors_windows_driver_numbers_are_not_read_as_nvidias():
    assert "driver" not in _read("Intel(R) UHD Graphics driver 31.0.101.4502")
    assert "driver" not in _read("AMD Radeon driver 31.0.21001.45002")


def test_kernel_module_line_gives_the_driver():
    # /proc/driver/nvidia/version and dmesg print the module's version on this line
    assert (
        _read("NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  Wed Oct 27 17:37:10 UTC 2021")["driver"] == "470.82.01"
    )
    assert _read("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build")["driver"] == "535.104.05"


def test_driver_cuda_level_said_in_words():
    assert _read("nvidia-smi shows CUDA Version: 11.4")["driver_cuda"] == "11.4"
    assert _read("my driver supports up to CUDA 12.2")["driver_cuda"] == "12.2"
    assert "driver_cuda" not in _read("CUDA Version: 12.1")  # no word ties it to the driver: the toolkit's


def test_driver_cuda_below_the_builds_cuda_is_driver_too_old(tmp_path):
    text = "nvidia-smi shows CUDA Version: 11.4\ntorch 2.3.0+cu121\ntorch.cuda.is_available() returns False\n"
    assert codes(paste_findings(tmp_path, text))[:1] == ["driver-too-old"]


def test_windows_driver_new_enough_is_not_driver_too_old(tmp_path):
    text = "Driver Version: 31.0.15.3623\ntorch 2.3.0+cu121\ntorch.cuda.is_available() returns False\n"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


def test_windows_driver_too_old_for_the_build(tmp_path):
    # 27.21.14.5671 is 456.71: below CUDA 12's 527.41 floor on Windows
    text = "Driver Version: 27.21.14.5671\ntorch 2.3.0+cu121\ntorch.cuda.is_available() returns False\n"
    assert codes(paste_findings(tmp_path, text))[:1] == ["driver-too-old"]


# ---------------------------------------------------------------- other programs' words


def test_missing_driver_api_entry_point_is_driver_too_old(tmp_path):
    # https://github.com/trexminer/T-Rex/issues/118
    text = "The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the dynamic link library nvcuda.dll\n"
    assert codes(paste_findings(tmp_path, text)) == ["driver-too-old"]
    # https://github.com/nicehash/NiceHashQuickMiner/issues/192
    text = 'Cannot find the entry point "nvmlInitWithFlags" in the "nvml" DLL.\n'
    assert codes(paste_findings(tmp_path, text)) == ["driver-too-old"]


def test_missing_runtime_or_library_symbol_is_not_the_driver(tmp_path):
    # cudaXxx (runtime) and cublasXxx symbols are not the driver's: a library mismatch, not an old driver
    for text in (
        "The procedure entry point cudaGraphInstantiateWithFlags could not be located in the dynamic link library cudart64_110.dll\n",
        "OSError: libcudnn_ops.so.9: undefined symbol: cublasLtGetVersion\n",
        # a C extension built without -lcuda: the driver API is not linked at all, whatever the driver's age
        # (https://stackoverflow.com/questions/66273536/undefined-reference-to-cuctxgetcurrent-while-getting-cuda-context-for-optix)
        "ImportError: ...cpython-311-x86_64-linux-gnu.so: undefined symbol: cuCtxGetCurrent\n",
    ):
        assert "driver-too-old" not in codes(paste_findings(tmp_path, text)), text


def test_ollama_and_xmr_stak_insufficient_driver_wordings(tmp_path):
    # https://github.com/ollama/ollama/issues/6604 (source: gpu/gpu_info_cudart.c)
    text = (
        'level=DEBUG source=gpu.go:537 msg="Unable to load cudart" library=C:\\Users\\asus\\AppData\\Local\\Programs\\Ollama'
        '\\lib\\ollama\\cudart64_12.dll error="your nvidia driver is too old or missing.  If you have a CUDA GPU please '
        'upgrade to run ollama"\n'
    )
    assert codes(paste_findings(tmp_path, text))[:1] == ["driver-too-old"]
    # https://github.com/fireice-uk/xmr-stak/issues/676: CUDA 9.1 build, driver 384.98 (CUDA 9.1 needs 390.46)
    text = (
        "I have installed cuda 9.1 and drivers version 384.98\nAfter updating to 2ae72 i'm getting NVIDIA Insufficient driver!\n"
    )
    found = paste_findings(tmp_path, text)
    assert codes(found)[:1] == ["driver-too-old"]
    f = next(x for x in found if x["code"] == "driver-too-old")
    assert "384.98" in f["title"] and "9.1" in f["title"]


def test_ollama_too_old_line_for_one_runtime_while_another_found_the_gpu(tmp_path):
    # ollama tries each bundled runtime; one that the driver cannot run is no fault when another reports the GPU
    text = (
        'time=2025-10-03T13:16:39.335+02:00 level=DEBUG source=gpu.go:593 msg="Unable to load cudart library '
        "/usr/lib/ollama/cuda_v13/libcudart.so.13.0.88: your nvidia driver is too old or missing.  If you have a CUDA GPU "
        'please upgrade to run ollama"\n'
        'time=2025-10-03T13:16:40.101+02:00 level=INFO source=types.go:131 msg="inference compute" '
        'id=GPU-6ccc095a-61cb-a3f8-99a0-1a09a42f8770 library=cuda variant=v12 compute=8.6 driver=12.2 name="NVIDIA GeForce RTX 3060"\n'
    )
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


def test_entrypoint_not_found_exit_status_is_a_warning(tmp_path):
    # Windows NTSTATUS 0xC0000139 from ollama's CUDA runner (https://github.com/ollama/ollama/issues/6604's title):
    # most often nvcuda.dll older than the runner's CUDA, but ollama#5643 had the same status from ollama's own DLLs
    text = "Error: llama runner process has terminated: exit status 0xc0000139\nGPU: NVIDIA GeForce GTX 1080 Ti\n"
    assert severities(paste_findings(tmp_path, text)).get("driver-too-old") == "warning"


def test_entrypoint_not_found_on_an_amd_stack_is_not_nvidias_driver(tmp_path):
    # https://github.com/likelovewant/ollama-for-amd/issues/8: an AMD card under ROCm
    text = "运行模型报错：llama runner process has terminated: exit status 0xc0000139\nGPU: AMD Radeon RX 570\nROCm 5.7\n"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


# ---------------------------------------------------------------- a driver version printed by another program, no verdict


def test_kb_a_driver_older_than_the_toolkits_first_in_the_same_branch_does_not_run_it():
    from cudadoctor import kb

    # NVIDIA's release notes: CUDA 9.0.76 needs 384.81; 384.69 is an R384 driver from before it
    assert kb.driver_supports_cuda("384.69", "9.0") is False
    assert kb.driver_supports_cuda("384.81", "9.0") is True and kb.driver_supports_cuda("384.111", "9.0") is True
    assert kb.driver_supports_cuda("387.26", "9.0") is True


def test_tensorflow_possibly_insufficient_driver_is_a_version_not_a_verdict(tmp_path):
    # TensorFlow's cuda_dnn.cc prints the driver after any failed cuDNN handle; it is the fault only when the driver
    # is below the CUDA's minimum. https://github.com/tensorflow/tensorflow/issues/30254: 387.26 with CUDA 9.0, another cause
    text = (
        "Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\n"
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:381] Possibly insufficient driver version: 387.26.0\n"
        "tensorflow-gpu 1.8.0, CUDA 9.0\n"
    )
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))
    # https://github.com/amirbar/speech2gesture/issues/3: a cuDNN install, no CUDA stated beside the line
    text = "E tensorflow/stream_executor/cuda/cuda_dnn.cc:340] possibly insufficient driver version: 410.79.0\n"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))
    # the same line with a driver below CUDA 9.0's first driver (384.81): the driver is the fault
    text = (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\n"
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:393] possibly insufficient driver version: 384.59.0\n"
        "CUDA: 9.0\n"
    )
    assert "driver-too-old" in codes(paste_findings(tmp_path, text))


def test_xla_driver_older_than_ptxas_is_not_an_error(tmp_path):
    # XLA's nvptx_compiler.cc warning: it only disables parallel compilation; the program runs on the GPU
    text = (
        "W external/xla/xla/service/gpu/nvptx_compiler.cc:930] The NVIDIA driver's CUDA version is 12.4 which is older "
        "than the PTX compiler version 12.6.77. Because the driver is older than the PTX compiler version, XLA is "
        "disabling parallel compilation, which may slow down compilation.\n"
    )
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text), ("error",))


# ---------------------------------------------------------------- a GPU only a legacy branch drives


def test_insufficient_driver_on_a_gpu_only_a_legacy_branch_drives(tmp_path):
    # https://github.com/xmrig/xmrig-cuda/issues/105: GeForce 9500 GT (Tesla generation, 1.1; newest driver 340.xx)
    text = (
        "the procedure entry point cuDevicePrimeryCtxRetain not be located in the dynamic link library xmrig-cuda.dll\n"
        "my gpu is GeForce 9500 GT\n"
    )
    got = codes(paste_findings(tmp_path, text))
    assert "gpu-needs-legacy-driver" in got and "driver-too-old" not in got


def test_insufficient_driver_on_a_current_gpu_stays_driver_too_old(tmp_path):
    # https://github.com/fireice-uk/xmr-stak/issues/928 (GTX 770 is Kepler: its 470.xx branch runs CUDA 9.1) and a Pascal card
    for text in (
        "WARNING: NVIDIA Insufficient driver!\nGeForce GTX 770, Driver Version: 384.111, Cuda compilation tools, release 9.1, V9.1.85\n",
        "WARNING: NVIDIA Insufficient driver!\nGPU: GeForce GTX 1060, driver 384.111, nvcc release 9.1\n",
    ):
        got = codes(paste_findings(tmp_path, text))
        assert got[:1] == ["driver-too-old"] and "gpu-needs-legacy-driver" not in got, (text, got)
