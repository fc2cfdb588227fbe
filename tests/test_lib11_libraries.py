"""lib11: a cuDNN named without a major is a missing library, not a mismatch; a learned guess about a package's CPU
build needs that package named.

Texts are real (public threads, URLs beside them); none comes from the blind batches.
"""

from __future__ import annotations

from checkcli import codes, paste_findings, run_check, write

from cudadoctor.checks.companions import names_cpu_build_companion

# https://github.com/PaddlePaddle/Paddle/issues/26719 (2020-08-27): paddle 1.8 could not dlopen libcudnn.so
PADDLE_18 = (
    "W0827 11:01:05.964001 21363 device_context.cc:252] Please NOTE: device: 0, CUDA Capability: 75, Driver API Version: "
    "10.2, Runtime API Version: 10.0\n"
    "W0827 11:01:05.964174 21363 dynamic_loader.cc:120] Can not find library: libcudnn.so. The process maybe hang. "
    "Please try to add the lib path to LD_LIBRARY_PATH.\n"
    "W0827 11:01:05.964198 21363 dynamic_loader.cc:179] Failed to find dynamic library: libcudnn.so ( libcudnn.so: "
    "cannot open shared object file: No such file or directory ) \n"
    " Please specify its path correctly using following ways: \n"
    " Method. set environment variable LD_LIBRARY_PATH on Linux or DYLD_LIBRARY_PATH on Mac OS. \n"
)

# https://github.com/PaddlePaddle/Paddle/issues/11068 (2018-05-31): the 0.x loader's CHECK, with CUDA 9.0 stated
PADDLE_0X = (
    "Cuda-9.0\nGPU-TeslaP100\nUbuntu 16.04\n"
    "F0531 03:56:01.989326  2382 DynamicLoader.cpp:104] Check failed: nullptr != *dso_handle Failed to find dynamic "
    "library: libcudnn.so (libcudnn.so: cannot open shared object file: No such file or directory) \n"
    "Please specify its path correctly using following ways: \n"
)


def test_paddle_cannot_find_unversioned_libcudnn_is_missing_not_mismatch(tmp_path):
    for text in (PADDLE_18, PADDLE_0X):
        got = codes(paste_findings(tmp_path, text))
        assert "cuda-library-missing" in got, got
        assert "cudnn-mismatch" not in got, got


def test_paddle_with_cudnn7_stated_beside_unversioned_libcudnn_is_no_mismatch(tmp_path):
    # the bare development name carries no major: a stated cuDNN 7.6.5 is no evidence of another major
    text = PADDLE_18 + "\npaddlepaddle-gpu==1.8.1.post107\nCUDA版本：10.1\ncudnn版本：7.6.5\n"
    got = codes(paste_findings(tmp_path, text))
    assert got and got[0] == "cuda-library-missing", got
    assert "cudnn-mismatch" not in got


def test_paddle_per_directory_attempt_alone_is_not_matched(tmp_path):
    # https://github.com/PaddlePaddle/Paddle/pull/25175 (2020-06-26): the first, per-directory attempt (a full path) is
    # a warning the default path may still satisfy; the unit test ran on
    text = (
        "578: W0626 07:30:14.958109 15314 dynamic_loader.cc:154] Failed to find dynamic library: "
        "/usr/local/cuda/lib64/libcudnn.so (/usr/local/cuda/lib64/libcudnn.so: cannot open shared object file: No such "
        "file or directory)\n"
    )
    f = paste_findings(tmp_path, text)
    assert not any(x["code"] == "cuda-library-missing" and "Failed to find dynamic library" in str(x["evidence"]) for x in f)


# PyTorch's collect_env output when nothing could be collected but is_available (its own 'Could not collect' lines)
COLLECT_ENV_UNKNOWN = """Collecting environment information...
PyTorch version: Could not collect
Is debug build: Could not collect
CUDA used to build PyTorch: Could not collect
ROCM used to build PyTorch: N/A

OS: Could not collect
GCC version: Could not collect
Clang version: Could not collect
CMake version: Could not collect
Libc version: Could not collect

Python version: Could not collect
Python platform: Could not collect
Is CUDA available: True
CUDA runtime version: Could not collect
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
cuDNN version: Could not collect

Versions of relevant libraries:
[pip3] No relevant packages
[conda] Could not collect
"""


def test_learned_guess_of_a_cpu_build_needs_a_package_named(tmp_path):
    # https://github.com/clovaai/bros/issues/14: a cuBLAS execution failure names no library with a CPU build; the
    # learned model read 'CUBLAS_STATUS_EXECUTION_FAILED' alone as companion-cpu-only-build (98 %)
    env = write(tmp_path, COLLECT_ENV_UNKNOWN, "env.txt")
    err = write(tmp_path, "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED\n", "err.txt")
    f = run_check("--from-collect-env", str(env), "--error-file", str(err))
    assert "companion-cpu-only-build" not in codes(f)


def test_names_cpu_build_companion_reads_the_package_names():
    assert names_cpu_build_companion("UserWarning: The installed version of bitsandbytes was compiled without GPU support.")
    assert names_cpu_build_companion("cdfact_pkg_jax")
    assert not names_cpu_build_companion("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED")


# https://github.com/pytorch/pytorch/issues/62350 (2021-07-28, Windows, YoloR): the dispatcher lists CPU, no CUDA
TV_NMS_62350 = (
    "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. This could be because "
    "the operator doesn't exist for this backend, or was omitted during the selective/custom build process (if using "
    "custom build). If you are a Facebook employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
    "possible resolutions. 'torchvision::nms' is only available for these backends: [CPU, QuantizedCPU, BackendSelect, "
    "Named, ADInplaceOrView, AutogradOther, AutogradCPU, AutogradCUDA, AutogradXLA, UNKNOWN_TENSOR_TYPE_ID, AutogradMLC, "
    "Tracer, Autocast, Batched, VmapMode].\n"
)
# https://github.com/mikel-brostrom/boxmot/issues/42 (2020-12-07): torch 1.7.0 / torchvision 0.8.0, the older list
TV_NMS_BOXMOT = (
    "RuntimeError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. 'torchvision::nms' is only "
    "available for these backends: [CPU, BackendSelect, Named, AutogradOther, AutogradCPU, AutogradCUDA, AutogradXLA, "
    "Tracer, Autocast, Batched, VmapMode].\n"
)


def test_torchvision_op_without_its_cuda_kernel_is_a_cpu_torchvision(tmp_path):
    for text in (TV_NMS_62350, TV_NMS_BOXMOT):
        f = paste_findings(tmp_path, text)
        assert codes(f)[:1] == ["companion-cpu-only-build"], codes(f)
        cpu = next(x for x in f if x["code"] == "companion-cpu-only-build")
        assert cpu["title"].startswith("torchvision ")
        assert any("torchvision" in c and "download.pytorch.org" in c for c in cpu["fix"]["commands"])


def test_torchvision_op_missing_altogether_stays_a_mismatch(tmp_path):
    # https://blog.csdn.net/qq_41590635/article/details/112384718 (its title): the operator is not registered at all
    # (torchvision's library did not load beside this torch), not a missing CUDA kernel
    text = "RuntimeError: No such operator torchvision::nms\n"
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, text))


def test_glibcxx_not_found_in_other_wordings_is_libstdcxx_too_old(tmp_path):
    texts = (
        # https://github.com/BGI-Qingdao/TGS-GapCloser/issues/88 (its title)
        "`GLIBCXX_3.4.20' not found\n",
        # https://github.com/cvg/pixel-perfect-sfm/issues/11 (the reporter's prose)
        "As shown below, glibcxx 3.4.29 is required but not found on my system, presumably because conda 4.11.0 does "
        "not include this.\n",
        # https://github.com/YOUNG-bit/OpenGS-Fusion/issues/1 (its title, the opening quote lost)
        "Issue1.0 libstdc++.so.6: version GLIBCXX_3.4.30' not found (required by /usr/local/lib/libpcl_common.so.1.14)\n",
    )
    for text in texts:
        assert "libstdcxx-too-old" in codes(paste_findings(tmp_path, text)), text


def test_glibcxx_listed_by_strings_is_no_error(tmp_path):
    # https://github.com/cvg/pixel-perfect-sfm/issues/11: the nodes a libstdc++ has, listed
    text = "$ strings /usr/lib/libstdc++.so.6 | grep GLIBCXX_3.4.29\nGLIBCXX_3.4.29\nGLIBCXX_3.4.29\n"
    assert "libstdcxx-too-old" not in codes(paste_findings(tmp_path, text))


# cudnn.torch's own message (Lua Torch): the R-number is the cuDNN major its branch loads (libcudnn.so.5)
CUDNN_TORCH_R5 = (
    "torch/install/share/lua/5.1/cudnn/ffi.lua:1603: 'libcudnn (R5) not found in library path.\n"
    "Please install CuDNN from https://developer.nvidia.com/cuDNN\n"
    "Then make sure files named as libcudnn.so.5 or libcudnn.5.dylib are placed in\n"
    "your library load path (for example /usr/local/lib , or manually add a path to LD_LIBRARY_PATH)\n"
)


def test_lua_torch_cudnn_not_in_library_path_is_missing(tmp_path):
    # https://github.com/jcjohnson/neural-style/issues/331: fixed by exporting LD_LIBRARY_PATH (no other cuDNN shown)
    got = codes(paste_findings(tmp_path, CUDNN_TORCH_R5))
    assert got[:1] == ["cuda-library-missing"], got
    assert "cudnn-mismatch" not in got


def test_lua_torch_cudnn_r5_with_cudnn7_installed_is_a_mismatch(tmp_path):
    # https://github.com/jcjohnson/fast-neural-style/issues/151: cuDNN 7.1 installed, cudnn.torch's R5 branch loads
    # libcudnn.so.5 only
    text = (
        "In my GPU(GeForce GTX 1080 with OS: Ubuntu-16.04) I have installed the latest cuda version 9.1 and cudnn 7.1 "
        "from the https://developer.nvidia.com/cuDNN\n\n" + CUDNN_TORCH_R5
    )
    f = paste_findings(tmp_path, text)
    assert "cudnn-mismatch" in codes(f)
    mm = next(x for x in f if x["code"] == "cudnn-mismatch")
    assert mm["evidence"]["cudnn_major_wanted"] == 5
