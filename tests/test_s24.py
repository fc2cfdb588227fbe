"""Session 24 (issue 21): causes that had no code, each recurring across blind batches and the public threads of its
class."""

from __future__ import annotations

import json

from checkcli import codes, paste_findings, run_check, severities, write

from cudadoctor.facts import new_facts

# numba#10166 (Windows 11, Game Ready 580.88, numba 0.61.2), as the reporter wrote it.
NUMBA_INDEXERROR = """GeForce Game Ready Driver version 580.88 is breaking Numba
I am using Numba version 0.61.2 with Python 3.10.11 on Windows 11 24H2. After updating to version 580.88 of the GeForce Game Ready Driver, executing code that includes the following function declaration results in an exception:

@cuda.jit("void(float32[:,:], float32[:,:])", cache=True)
def interp_kernel_f32(input, output):

Traceback (most recent call last):
...
File "devices.py", line 40, in getitem
return self.lst[devnum]
IndexError: list index out of range
"""
# numba#10188: a segfault in numba's cudadrv after an upgrade to 580.65.06 (trimmed).
NUMBA_SEGFAULT = """System has recently been upgraded to the below drivers
| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |
Fatal Python error: Segmentation fault
  File "/home/u/.conda/envs/CLIC/lib/python3.13/site-packages/numba/cuda/cudadrv/driver.py", line 327 in safe_cuda_api_call
  File "/home/u/.conda/envs/CLIC/lib/python3.13/site-packages/numba/cuda/cudadrv/devices.py", line 120 in _get_or_create_context
"""


def _facts(tmp_path, driver, *dists):
    fx = new_facts("live")
    fx["nvml"] = {"status": "ok", "driver_version": driver}
    fx["packages"] = {
        "complete": True,
        "distributions": [{"name": n, "version": v, "installer": "pip", "listed_by": "pip"} for n, v in dists],
        "listings": {"pip": "listed", "conda": "not-collected"},
    }
    return write(tmp_path, json.dumps(fx), "facts.json")


def test_numba_builtin_cuda_target_on_an_r580_driver(tmp_path):
    for text in (NUMBA_INDEXERROR, NUMBA_SEGFAULT):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("numba-cuda-target-crashes-on-r580") == "error", text[:40]
    # the same crash under driver 576: not this cause
    older = NUMBA_SEGFAULT.replace("580.65.06", "576.57")
    assert "numba-cuda-target-crashes-on-r580" not in codes(paste_findings(tmp_path, older))
    # numba 0.63 has the fix
    fixed = NUMBA_INDEXERROR.replace("Numba version 0.61.2", "Numba version 0.63.1")
    assert "numba-cuda-target-crashes-on-r580" not in codes(paste_findings(tmp_path, fixed))


def test_numba_and_an_r580_driver_installed_with_nothing_failing_is_a_warning(tmp_path):
    found = run_check("--facts", str(_facts(tmp_path, "580.95.05", ("numba", "0.61.2"))))
    assert severities(found).get("numba-cuda-target-crashes-on-r580") == "warning"
    fix = " ".join(c for f in found if f["code"] == "numba-cuda-target-crashes-on-r580" for c in f["fix"]["commands"])
    assert "numba>=0.63" in fix and "numba-cuda" in fix
    # numba-cuda installed beside it, numba 0.63, or a 57x driver: nothing to say
    for facts in (
        _facts(tmp_path, "580.95.05", ("numba", "0.61.2"), ("numba-cuda", "0.20.0")),
        _facts(tmp_path, "580.95.05", ("numba", "0.63.1")),
        _facts(tmp_path, "575.64.05", ("numba", "0.61.2")),
    ):
        assert "numba-cuda-target-crashes-on-r580" not in codes(run_check("--facts", str(facts)))


# Nsight Compute's refusal (ThunderKittens on a rented GPU) and nvprof's (a shared server), verbatim.
NCU_PERM = (
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the "
    "target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
)
NVPROF_PERM = (
    "==708142== Warning: ERR_NVGPUCTRPERM - The user does not have permission to profile on the target device. See the "
    "following link for instructions to enable permissions and get more information: https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
)
# geoffxy/habitat#5 (in a container) and likwid's NVMON (CUPTI's number only).
HABITAT_CUPTI = (
    "/home/ubuntu/home/habitat/cpp/src/cuda/cupti_tracer.cpp:120: error: function cuptiActivityRegisterCallbacks("
    "cuptiBufferRequested, cuptiBufferCompleted) failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.\n"
)
LIKWID_35 = "Error: function (*cuptiProfilerBeginSessionPtr)(&beginSessionParams) failed with error 35.\n"


def test_gpu_performance_counters_restricted_to_admins(tmp_path):
    for text in (NCU_PERM, NVPROF_PERM, HABITAT_CUPTI, LIKWID_35):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("gpu-perf-counters-restricted") == "error", text[:50]
    fix = " ".join(
        c for f in paste_findings(tmp_path, NCU_PERM) if f["code"] == "gpu-perf-counters-restricted" for c in f["fix"]["commands"]
    )
    assert "NVreg_RestrictProfilingToAdminUsers=0" in fix
    # in a container the host's driver decides: the fix is the container's capability
    docker = "$ docker run --gpus all -it nvcr.io/nvidia/pytorch:24.01-py3\n" + NCU_PERM
    fix = " ".join(
        c for f in paste_findings(tmp_path, docker) if f["code"] == "gpu-perf-counters-restricted" for c in f["fix"]["commands"]
    )
    assert "--cap-add SYS_ADMIN" in fix
    # error 35 from CUDA itself (cudaErrorInsufficientDriver), not CUPTI: not this cause
    assert "gpu-perf-counters-restricted" not in codes(paste_findings(tmp_path, "CUDA error 35: failed with error 35\n"))


# brucefan1983/CUDA-Programming#37 (RTX 3070 Laptop) and undertherain/benchmarker#168 (nvprof's metrics on 7.5+).
NVPROF_80 = """E:\\Code\\chapter5>nvprof .\\add3memory.exe
======== Warning: nvprof is not supported on devices with compute capability 8.0 and higher.
                  Use NVIDIA Nsight Systems for GPU tracing and CPU sampling and NVIDIA Nsight Compute for GPU profiling.
GPU: NVIDIA GeForce RTX 3070 Laptop GPU
"""
NVPROF_75 = "Warning: Skipping profiling on device 0 since profiling is not supported on devices with compute capability 7.5 and higher.\n"


def test_profiler_that_does_not_support_the_gpu(tmp_path):
    for text in (NVPROF_80, NVPROF_75):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("profiler-unsupported-gpu") == "error", text[:50]
        # the profiler's words are not torch's or a package's missing kernels
        assert not {"gpu-arch-unsupported", "companion-arch-unsupported"} & set(codes(found)), codes(found)
        assert any("nsys profile" in c for f in found if f["code"] == "profiler-unsupported-gpu" for c in f["fix"]["commands"])
    # Nsight Compute profiles nothing on Pascal (dropped in 2020.1); on an Ampere GPU the same line means something else
    pascal = "GPU: NVIDIA GeForce GTX 1080 Ti\n==PROF== No kernels were profiled.\n"
    assert severities(paste_findings(tmp_path, pascal)).get("profiler-unsupported-gpu") == "error"
    ampere = "GPU: NVIDIA GeForce RTX 3090\n==PROF== No kernels were profiled.\n"
    assert "profiler-unsupported-gpu" not in codes(paste_findings(tmp_path, ampere))


def test_two_cupti_subscribers(tmp_path):
    # rapidsai/rapidsmpf#500 (under compute-sanitizer) and the enum's name
    for text in (
        'C++ exception with description "Failed to initialize CUPTI: 39" thrown in the test body.\n',
        "cuptiSubscribe failed with error CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED\n",
    ):
        assert severities(paste_findings(tmp_path, text)).get("cupti-multiple-subscribers") == "error", text[:40]


# NVIDIA/cuda-samples#281 (VS 2022, the project pins CUDA 12.4, CUDA 12.5 installed) and CESNET/GPUJPEG#79 (CMake).
PROPS_124 = (
    "C:\\Users\\u\\cuda-samples\\Samples\\6_Performance\\UnifiedMemoryPerf\\UnifiedMemoryPerf_vs2022.vcxproj : error  : "
    'The imported project "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\MSBuild\\Microsoft\\VC\\v170\\'
    'BuildCustomizations\\CUDA 12.4.props" was not found. Confirm that the expression in the Import declaration is '
    "correct, and that the file exists on disk.\n"
)
NVCC_125 = "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.5, V12.5.40\n"
# dlunion/tensorRTIntegrate#15, in Visual Studio's Chinese.
MSB4019_ZH = (
    "错误\tMSB4019\t未找到导入的项目“C:\\Program Files (x86)\\Microsoft Visual Studio\\2017\\Community\\Common7\\IDE\\VC\\"
    "VCTargets\\BuildCustomizations\\CUDA 10.0.props”。请确认 <Import> 声明中的路径正确，且磁盘上存在该文件。\tTensorRT\n"
)
CMAKE_NO_TOOLSET = """-- Selecting Windows SDK version 10.0.22621.0 to target Windows 10.0.19045.
CMake Error at C:/Program Files/CMake/share/cmake-3.27/Modules/CMakeDetermineCompilerId.cmake:753 (message):
  No CUDA toolset found.
"""


def test_visual_studio_without_the_cuda_build_integration(tmp_path):
    for text in (PROPS_124, MSB4019_ZH, CMAKE_NO_TOOLSET):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("vs-cuda-integration-missing") == "error", text[:40]
    fix = " ".join(
        c
        for f in paste_findings(tmp_path, CMAKE_NO_TOOLSET)
        if f["code"] == "vs-cuda-integration-missing"
        for c in f["fix"]["commands"]
    )
    assert "visual_studio_integration\\MSBuildExtensions" in fix
    # the project pins 12.4 while nvcc is 12.5: retarget the project (or install 12.4), not a copy of 12.4's files
    found = paste_findings(tmp_path, NVCC_125 + PROPS_124)
    f = next(f for f in found if f["code"] == "vs-cuda-integration-missing")
    assert "12.5" in f["title"] and "12.4" in f["title"] and "Build Customizations" in " ".join(f["fix"]["commands"])


# phoronix-test-suite/test-profiles#337 (vllm 0.10 on Debian 13's Python 3.13), pip's own words.
VLLM_313 = """Python 3.13.5
ERROR: Ignored the following versions that require a different python version: 0.10.0 Requires-Python <3.13,>=3.9; 0.10.1 Requires-Python <3.13,>=3.9
ERROR: Could not find a version that satisfies the requirement vllm==0.10.0 (from versions: 0.11.0)
ERROR: No matching distribution found for vllm==0.10.0
"""
# visualbruno/comfyui-trellis2#127: a cp311 wheel into ComfyUI portable's Python 3.13.
CP311 = "Python 3.13\nERROR: cumesh-0.0.1-cp311-cp311-win_amd64.whl is not a supported wheel on this platform.\n"
# NVIDIA's TensorRT apt repository on Ubuntu 24.04.
APT_PY = "The following packages have unmet dependencies:\n python3-libnvinfer : Depends: python3 (< 3.11) but 3.12.3-0ubuntu1 is to be installed\n"
# paddle/paddle#57872: paddlepaddle-gpu 2.5.1 on Windows' Python 3.12 (before Paddle 2.6 built for it).
PADDLE_312 = """python 3.12.0
ERROR: Could not find a version that satisfies the requirement paddlepaddle-gpu==2.5.1.post120 (from versions: none)
ERROR: No matching distribution found for paddlepaddle-gpu==2.5.1.post120
"""


def test_a_package_with_no_build_for_this_python(tmp_path):
    for text in (VLLM_313, CP311, APT_PY):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("package-wheel-missing-for-python") == "error", text[:40]
    f = next(f for f in paste_findings(tmp_path, VLLM_313) if f["code"] == "package-wheel-missing-for-python")
    assert f["title"].startswith("vllm has no build for Python 3.13")
    # "from versions: none" on a new Python: a likely cause only; on Python 3.10 nothing (a typo, a private index...)
    assert severities(paste_findings(tmp_path, PADDLE_312)).get("package-wheel-missing-for-python") == "warning"
    old = PADDLE_312.replace("python 3.12.0", "python 3.10.4")
    assert "package-wheel-missing-for-python" not in codes(paste_findings(tmp_path, old))
    # the matching wheel, or torch's own wheels (python-unsupported's): not this
    assert "package-wheel-missing-for-python" not in codes(paste_findings(tmp_path, CP311.replace("3.13", "3.11")))
    torch = PADDLE_312.replace("paddlepaddle-gpu==2.5.1.post120", "torch")
    assert "package-wheel-missing-for-python" not in codes(paste_findings(tmp_path, torch))


# NVIDIA/TensorRT#2727 (8.4 on an RTX 4080), wang-xinyu/tensorrtx#819 (7.0 on an RTX 3080), and TensorRT 10's wording
# (DDTRobot/tita_rl_sim2sim2real#7: 10.7 on an RTX 5070 Ti).
TRT_SM = (
    "GPU: NVIDIA GeForce RTX 4080\n[12/12/2024-10:15:17] [E] [TRT] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: "
    "Internal Error (Unsupported SM: 0x809)\n",
    "[11/15/2021-17:51:03] [E] [TRT] ../rtSafe/cuda/caskUtils.cpp (80) - Assertion Error in trtSmToCask: 0 (Unsupported SM.)\n",
    "[07/19/2025-23:34:55] [E] Error[9]: IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Target GPU SM 120 "
    "is not supported by this TensorRT release.)\n",
)


def test_tensorrt_release_older_than_the_gpu(tmp_path):
    for text in TRT_SM:
        found = paste_findings(tmp_path, text)
        assert severities(found).get("companion-arch-unsupported") == "error", text[:60]
        f = next(f for f in found if f["code"] == "companion-arch-unsupported")
        assert f["evidence"].get("package") == "tensorrt" or "trtexec" in f["title"], f
    f = next(f for f in paste_findings(tmp_path, TRT_SM[0]) if f["code"] == "companion-arch-unsupported")
    fix = " ".join(f["fix"]["commands"])
    assert "TensorRT release" in fix and "TORCH_CUDA_ARCH_LIST" not in fix  # closed source: a newer release, not a rebuild


# NVIDIA/data-science-stack#90 (RHEL 8: the modules loaded, nvidia-smi never installed), trimmed.
SMI_RHEL = """$ ./data-science-stack diagnostics
nvidia-smi not found, NVIDIA GPU Driver not installed correctly.
$ lsmod | grep nvidia
nvidia_drm             57344  0
nvidia_modeset       1224704  1 nvidia_drm
nvidia              34086912  1 nvidia_modeset
"""
# Quansight/open-gpu-server#85: a VM image built with ubuntu-drivers' --gpgpu (no nvidia-utils).
SMI_GPGPU = (
    "sudo ubuntu-drivers install --gpgpu nvidia:580-server\n$SRC_DIR/conda_build.sh: line 9: nvidia-smi: command not found\n"
)


def test_nvidia_smi_missing_beside_a_loaded_driver(tmp_path):
    found = paste_findings(tmp_path, SMI_RHEL)
    assert severities(found).get("nvidia-smi-not-installed") == "error"
    assert "no-nvidia-driver" not in codes(found)  # the driver is loaded: not "no driver"
    assert any("nvidia-driver-cuda" in c for f in found if f["code"] == "nvidia-smi-not-installed" for c in f["fix"]["commands"])
    found = paste_findings(tmp_path, SMI_GPGPU)
    assert severities(found).get("nvidia-smi-not-installed") == "error"
    assert any("nvidia-utils" in c for f in found if f["code"] == "nvidia-smi-not-installed" for c in f["fix"]["commands"])
    # nvidia-smi missing and nothing showing a driver: no driver, as before
    bare = paste_findings(tmp_path, "$ nvidia-smi\nbash: nvidia-smi: command not found\n")
    assert "nvidia-smi-not-installed" not in codes(bare) and "no-nvidia-driver" in codes(bare)


# triton-lang/triton#5741: a requirements file with triton on Windows (pip's own words and the win_amd64 wheel it took).
TRITON_WIN = """Collecting torch==2.4.1 (from -r requirements.txt (line 1))
Using cached torch-2.4.1-cp311-cp311-win_amd64.whl.metadata (27 kB)
ERROR: Could not find a version that satisfies the requirement triton>=2.0.0 (from versions: none)
ERROR: No matching distribution found for triton>=2.0.0
"""


def test_triton_on_native_windows(tmp_path):
    found = paste_findings(tmp_path, TRITON_WIN)
    assert severities(found).get("triton-unavailable-on-windows") == "error"
    assert any(
        'sys_platform == "linux"' in c
        for f in found
        if f["code"] == "triton-unavailable-on-windows"
        for c in f["fix"]["commands"]
    )
    # the same refusal on Linux (an old Python, an index without triton): not this cause
    linux = TRITON_WIN.replace("win_amd64", "manylinux1_x86_64")
    assert "triton-unavailable-on-windows" not in codes(paste_findings(tmp_path, linux))
    # typed by hand, nothing else depending on it (StableTuner's optional triton): a warning, not a failure
    hand = "(ST) E:\\StableTuner>pip install triton==1.1.1\nERROR: Could not find a version that satisfies the requirement triton==1.1.1 (from versions: none)\n"
    assert severities(paste_findings(tmp_path, hand)).get("triton-unavailable-on-windows") == "warning"
    # pytorch-triton, triton-windows: other packages
    other = TRITON_WIN.replace("triton>=2.0.0", "triton-windows>=9.9")
    assert "triton-unavailable-on-windows" not in codes(paste_findings(tmp_path, other))


# nihui/realsr-ncnn-vulkan#48 (Colab T4 after its image lost libnvidia-gl) and NVIDIA/libnvidia-container#55 (LXC).
VK_COLAB = "GPU 0: Tesla T4 (UUID: GPU-x)\n[0 Tesla T4]  queueC=2[8]  queueG=0[16]  queueT=1[2]\nvkCreateInstance failed -9\ninvalid gpu device\n"
VK_LXC = (
    "$ lxc exec c1 -- vulkaninfo\nCannot create Vulkan instance.\n/build/vulkan-tools-1.1.101.0+dfsg1/vulkaninfo/vulkaninfo.c:884: "
    "failed with VK_ERROR_INCOMPATIBLE_DRIVER\nnvidia-smi works in the container: NVIDIA GeForce RTX 2080\n"
)


def test_nvidia_vulkan_driver_missing(tmp_path):
    found = paste_findings(tmp_path, VK_COLAB)
    assert severities(found).get("nvidia-vulkan-driver-missing") == "error"
    assert any("libnvidia-gl" in c for f in found if f["code"] == "nvidia-vulkan-driver-missing" for c in f["fix"]["commands"])
    found = paste_findings(tmp_path, VK_LXC)
    f = next(f for f in found if f["code"] == "nvidia-vulkan-driver-missing")
    assert "NVIDIA_DRIVER_CAPABILITIES" in " ".join(f["fix"]["commands"])
    # the same refusal with only an Intel GPU named: not NVIDIA's driver
    env = "PyTorch version: N/A\nIs CUDA available: N/A\nGPU models and configuration: GPU 0: Intel(R) HD Graphics 5500\n"
    err = write(tmp_path, "vkCreateInstance failed -9\n", "error.txt")
    found = run_check("--from-collect-env", str(write(tmp_path, env, "env.txt")), "--error-file", str(err))
    assert "nvidia-vulkan-driver-missing" not in codes(found)


# daydreamlive/scope#84 (a Docker image without python3-dev) and woct0rdho/triton-windows#77 (an embedded Python, MSVC in
# Russian).
PYH_LINUX = "/tmp/tmpbe9ryx74/cuda_utils.c:5:10: fatal error: Python.h: No such file or directory\ncompilation terminated.\n"
PYH_WIN = (
    "C:\\Users\\u\\AppData\\Local\\Temp\\tmp4v27vhss\\cuda_utils.c(12): fatal error C1083: Не удается открыть файл "
    "включение: Python.h: No such file or directory\nE:\\fish-speech\\python_embeded\\python.exe\n"
)


def test_python_headers_missing(tmp_path):
    found = paste_findings(tmp_path, PYH_LINUX)
    assert severities(found).get("python-headers-missing") == "error"
    assert any("python3-dev" in c for f in found if f["code"] == "python-headers-missing" for c in f["fix"]["commands"])
    found = paste_findings(tmp_path, PYH_WIN)
    f = next(f for f in found if f["code"] == "python-headers-missing")
    assert "include/ and libs/" in f["title"] and any("include" in c and "libs" in c for c in f["fix"]["commands"])
