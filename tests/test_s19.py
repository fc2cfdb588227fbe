"""Session 19: the display watchdog's launch timeout (checks/watchdog19.py), cuBLAS refusing a bfloat16 GEMM below
Ampere (gpu-lacks-bf16), and torch.compile finding no Triton on Windows (torch-compile-unsupported-on-windows); the
wordings are in kb/errors/b19.json with their sources."""

from __future__ import annotations

import json
from pathlib import Path

from checkcli import codes, paste_findings, severities

import cudadoctor

# AUTOMATIC1111/stable-diffusion-webui#6790 (trimmed): the webui on Windows, a long attention kernel on the display GPU.
A1111_TIMEOUT = """[Bug]: RuntimeError: CUDA error: the launch timed out and was terminated
  File "C:\\Users\\TCNO\\Desktop\\AI\\stable-diffusion-webui\\venv\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1130, in _call_impl
    return forward_call(*input, **kwargs)
  File "C:\\Users\\TCNO\\Desktop\\AI\\stable-diffusion-webui\\repositories\\stable-diffusion-stability-ai\\ldm\\modules\\attention.py", line 73, in forward
    return self.net(x)
RuntimeError: CUDA error: the launch timed out and was terminated
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
"""

# numba/numba#4351: numba's driver error, by number and enum name.
NUMBA_702 = """  File "/Users/me/dev/numba/numba/cuda/cudadrv/driver.py", line 329, in _check_error
    raise CudaAPIError(retcode, msg)
numba.cuda.cudadrv.driver.CudaAPIError: [702] Call to cuMemcpyDtoH results in CUDA_ERROR_LAUNCH_TIMEOUT
"""


def test_a_launch_timeout_on_windows_is_the_display_watchdog_with_the_tdr_fix(tmp_path):
    got = paste_findings(tmp_path, A1111_TIMEOUT)
    assert codes(got)[0] == "display-gpu-watchdog-timeout", got
    f = next(x for x in got if x["code"] == "display-gpu-watchdog-timeout")
    assert f["severity"] == "error"
    assert "TDR" in f["title"]
    assert any("TdrDelay" in c for c in f["fix"]["commands"])


def test_numbas_enum_name_is_the_same_cause_and_a_linux_os_gets_the_x_fix(tmp_path):
    assert severities(paste_findings(tmp_path, NUMBA_702)).get("display-gpu-watchdog-timeout") == "error"
    linux = "OS: Ubuntu 22.04.3 LTS (x86_64)\n" + NUMBA_702
    f = next(x for x in paste_findings(tmp_path, linux) if x["code"] == "display-gpu-watchdog-timeout")
    assert "X server" in f["title"] and not any("TdrDelay" in c for c in f["fix"]["commands"])


def test_the_kb_maps_the_launch_timeout_numbers_to_the_code():
    kb = json.loads((Path(cudadoctor.__file__).parent / "kb" / "cuda_errors.json").read_text(encoding="utf-8"))
    named = {
        (sec, e["name"]): e.get("code")
        for sec in ("driver", "runtime", "runtime_legacy")
        for e in kb[sec]
        if e["value"] in (6, 702)
    }
    assert named[("driver", "CUDA_ERROR_LAUNCH_TIMEOUT")] == "display-gpu-watchdog-timeout"
    assert named[("runtime", "cudaErrorLaunchTimeout")] == "display-gpu-watchdog-timeout"
    assert named[("runtime_legacy", "cudaErrorLaunchTimeout")] == "display-gpu-watchdog-timeout"


# opendatalab/MinerU#1508: a Tesla M40 (compute capability 5.2), bfloat16 chosen by the program.
MINERU_M40 = """旧显卡如M40出现"RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED"
RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`
因为我使用的显卡是Tesla M40
"""
CUBLAS_BF16 = MINERU_M40.splitlines()[1] + "\n"


def test_cublas_refusing_a_bf16_gemm_on_an_m40_is_the_gpu_lacking_bf16(tmp_path):
    got = paste_findings(tmp_path, MINERU_M40)
    assert severities(got).get("gpu-lacks-bf16") == "error", got


def test_the_bare_cublas_line_is_a_likely_bf16_lack(tmp_path):
    got = paste_findings(tmp_path, CUBLAS_BF16)
    f = next(x for x in got if x["code"] == "gpu-lacks-bf16")
    assert f["severity"] == "warning" and f["title"].startswith("Likely")


def test_the_same_line_beside_an_a100_is_not_a_bf16_lack(tmp_path):
    text = "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB\n" + CUBLAS_BF16
    assert "gpu-lacks-bf16" not in codes(paste_findings(tmp_path, text))


def test_cublas_refusing_a_float16_gemm_is_not_read_as_bf16(tmp_path):
    fp16 = CUBLAS_BF16.replace("CUDA_R_16BF", "CUDA_R_16F")
    assert "gpu-lacks-bf16" not in codes(paste_findings(tmp_path, fp16))


# pytorch/pytorch#137689 (collect_env trimmed): torch.compile on native Windows 11, no Triton for Windows.
TRITON_WINDOWS = """Triton Dependancy Error while compiling diffusion model on Windows 10 and torch==2.4.1+cu124
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at https://github.com/openai/triton

Collecting environment information...
PyTorch version: 2.4.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
OS: Microsoft Windows 11 Pro
Python version: 3.10.9 (tags/v3.10.9:1dd9be6, Dec  6 2022, 20:01:21) [MSC v.1934 64 bit (AMD64)] (64-bit runtime)
Is CUDA available: True
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4070
Nvidia driver version: 561.09
"""
# pytorch/pytorch#125093: the same error on Linux (a torch for Python 3.12 without its triton).
TRITON_LINUX = """Triton installation not found.
  File "/home/mfbalin/.venvs/venv/lib/python3.12/site-packages/torch/_inductor/compile_fx.py", line 1450, in compile_fx
    return aot_autograd(
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at https://github.com/openai/triton
"""


def test_no_triton_on_native_windows_is_torch_compile_unsupported_there(tmp_path):
    got = paste_findings(tmp_path, TRITON_WINDOWS)
    assert codes(got)[0] == "torch-compile-unsupported-on-windows", got
    assert severities(got)["torch-compile-unsupported-on-windows"] == "error"


def test_no_triton_on_linux_is_not_called_a_windows_limit(tmp_path):
    assert "torch-compile-unsupported-on-windows" not in codes(paste_findings(tmp_path, TRITON_LINUX))


def test_no_triton_with_the_os_unknown_is_a_likely_windows_limit(tmp_path):
    bare = TRITON_LINUX.splitlines()[-1] + "\n"
    got = paste_findings(tmp_path, bare)
    f = next(x for x in got if x["code"] == "torch-compile-unsupported-on-windows")
    assert f["severity"] == "warning" and "if this is native Windows" in f["title"]


def test_dynamos_own_windows_refusal_still_needs_no_os(tmp_path):
    got = paste_findings(tmp_path, "RuntimeError: Windows not yet supported for torch.compile\n")
    assert severities(got).get("torch-compile-unsupported-on-windows") == "error"


# --- the package tools' words for "no wheel" (kb/errors/b19.json (4)-(6)) --------------------------------------------

# astral-sh/uv#15932: uv's error and its hint for a Python the release has no wheels for.
UV_CP38 = """\u276f uv add torch --exclude-newer 2025-05-01
Using CPython 3.8.20
Creating virtual environment at: .venv
Resolved 46 packages in 659ms
error: Distribution `torch==2.5.1 @ registry+https://pypi.org/simple` can't be installed because it doesn't have a source distribution or wheel for the current platform

hint: You're using CPython 3.8 (`cp38`), but `torch` (v2.5.1) only has wheels with the following Python implementation tags: `cp39`, `cp310`, `cp311`, `cp312`, `cp313`
"""
# drmingler/docling-api#10: Poetry's chooser finding no file for torch.
POETRY = """error poetry
  RuntimeError

  Unable to find installation candidates for torch (2.5.1)

  at ~/.local/pipx/venvs/poetry/lib/python3.13/site-packages/poetry/installation/chooser.py:74 in choose_for
       70\u2502
       71\u2502             links.append(link)
       72\u2502
       73\u2502         if not links:
    \u2192  74\u2502             raise RuntimeError(f"Unable to find installation candidates for {package}")

Cannot install torch.
"""


def test_uvs_no_wheel_for_this_python_is_python_unsupported_with_its_version(tmp_path):
    got = paste_findings(tmp_path, UV_CP38)
    f = next(x for x in got if x["code"] == "python-unsupported")
    assert f["severity"] == "error"
    assert f["evidence"]["python.version"] == "3.8" and f["evidence"]["requested"] == "2.5.1"


def test_the_version_uv_could_not_install_is_not_read_as_the_installed_torch(tmp_path):
    from cudadoctor.readers import prose

    assert "torch.version" not in prose.read(UV_CP38.splitlines())


def test_uvs_other_platform_hint_is_neither_this_python_nor_the_glibc(tmp_path):
    # astral-sh/uv#1497: the lock chose a build for macOS arm64; the Linux host's glibc is not the question.
    other = (
        "error: Distribution `torch==2.6.0 @ registry+https://download.pytorch.org/whl/cpu` can't be installed because it "
        "doesn't have a source distribution or wheel for the current platform\n\nhint: You're on Linux "
        "(`manylinux_2_35_x86_64`), but `torch` (v2.6.0) only has wheels for the following platform: `macosx_11_0_arm64`\n"
    )
    found = codes(paste_findings(tmp_path, other))
    assert "glibc-too-old" not in found and "python-unsupported" not in found


def test_poetrys_no_candidates_for_torch_is_python_unsupported(tmp_path):
    assert severities(paste_findings(tmp_path, POETRY)).get("python-unsupported") == "error"


# ArtLabss/tennis-tracking#16's pip answer, as pip prints it for a requirements file (ai-forever/ghost#13's form).
PIP_REQUIREMENTS = (
    "ERROR: Could not find a version that satisfies the requirement torch==1.9.0+cu102 (from -r requirements.txt (line 3)) "
    "(from versions: 1.4.0, 1.5.0, 1.5.1, 1.6.0, 1.7.0, 1.7.1, 1.8.0, 1.8.1, 1.9.0, 1.9.1, 1.10.0, 1.10.1, 1.10.2, 1.11.0)\n"
    "ERROR: No matching distribution found for torch==1.9.0+cu102 (from -r requirements.txt (line 3))\n"
)


def test_a_requirements_files_line_does_not_hide_pips_candidate_list(tmp_path):
    got = paste_findings(tmp_path, PIP_REQUIREMENTS)
    f = next(x for x in got if x["code"] == "install-command-names-missing-wheel")
    assert f["severity"] == "error" and "torch 1.9.0 itself is there" in f["title"]


# Jeremy-Harper/chatterboxPro#2 (uv's resolver, wrapped as uv prints it) with a pin the PyTorch index publishes.
UV_UNSATISFIABLE = """  \u00d7 No solution found when resolving dependencies:
  \u2570\u2500\u25b6 Because there is no version of torch==2.4.0+cu121 and you require torch==2.4.0+cu121, we can conclude that your requirements are
      unsatisfiable.
"""


def test_uvs_resolver_output_is_error_text_and_a_local_pin_it_misses_is_read(tmp_path):
    got = paste_findings(tmp_path, UV_UNSATISFIABLE)
    assert "install-command-names-missing-wheel" in codes(got), got


# astral-sh/uv#7015: uv builds flash-attn in isolation; its first build step fails (the traceback cut before its end).
UV_FLASH_ATTN = """# uv pip install --system flash-attn==2.6.1
Resolved 24 packages in 799ms
error: Failed to prepare distributions
  Caused by: Failed to fetch wheel: flash-attn==2.6.1
  Caused by: Build backend failed to determine extra requires with `build_wheel()` with exit status: 1
--- stdout:

--- stderr:
Traceback (most recent call last):
  File "<string>", line 14, in <module>
  File "/root/.cache/uv/builds-v0/.tmpAjfIR6/lib/python3.10/site-packages/setuptools/build_meta.py", line 332, in get_requires_for_build_wheel
    return self._get_build_requires(config_settings, requirements=[])
"""


def test_uvs_isolated_build_of_flash_attn_is_extension_build_isolation(tmp_path):
    f = next(x for x in paste_findings(tmp_path, UV_FLASH_ATTN) if x["code"] == "extension-build-isolation")
    assert f["evidence"]["package"] == "flash-attn" and "uv builds it" in f["title"]


# --- a pasted script's messages are not what it printed (readers/issue.py, "code" parts) -----------------------------

# pytorch/pytorch (b68-08's thread): a debug script pasted under the report; its except branch would print nvidia-smi
# missing, which never happened (the report's error is the MIG INTERNAL ASSERT in its title).
DEBUG_SCRIPT = """"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" with torch 2.5.0.dev20240705+cu121 on 2 GPU NVIDIA-A100-SXM4-80GB-MIG-3g.40gb

Debug script which mostly prints out version info:

```python
import subprocess

def print_nvidia_smi_output():
    try:
        result = subprocess.run(['nvidia-smi'], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            print("Error running nvidia-smi:", result.stderr)
        else:
            print(result.stdout)
    except FileNotFoundError:
        print("nvidia-smi command not found. Please make sure NVIDIA drivers are installed and nvidia-smi is in your PATH.")
```
"""


def test_a_scripts_print_of_a_failure_is_not_the_failure(tmp_path):
    from cudadoctor.readers import issue

    got = issue.read(DEBUG_SCRIPT)
    assert "nvidia-smi command not found" not in got["error_text"]
    assert any(p["kind"] == "code" and not p["used"] for p in got["parts"])
    assert "no-nvidia-driver" not in codes(paste_findings(tmp_path, DEBUG_SCRIPT))


def test_the_same_message_printed_by_the_program_is_still_error_text():
    from cudadoctor.readers import issue

    printed = "$ python debug.py\nnvidia-smi command not found. Please make sure NVIDIA drivers are installed.\n"
    assert "nvidia-smi command not found" in issue.read(printed)["error_text"]


def test_a_raise_line_of_a_cut_traceback_stays_error_text():
    # the source line of torch's frame, pasted without its message line (whisper-vits-svc's Windows NCCL report)
    from cudadoctor.readers import issue

    cut = 'raise RuntimeError("Distributed package doesn' + "'" + 't have NCCL " "built in")\n'
    assert "NCCL" in issue.read(cut)["error_text"]


# --- WSL in its own words (readers/prose.py kernel releases, checks/wsl.py, checks/wslctk18.py) -----------------------

# microsoft/DirectML#18: /proc/version under WSL 1, then TensorFlow failing to find libcuda.
WSL1_PROC_VERSION = """Linux version 4.4.0-20150-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1000-Microsoft Thu Jun 12 17:34:00 PST 2020
Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory
failed call to cuInit: UNKNOWN ERROR (303)
"""
# microsoft/WSL#2363: installing a Linux driver inside WSL 1 asks for the headers of a kernel that does not exist.
WSL1_HEADERS = "E: Unable to locate package linux-headers-4.4.0-43-Microsoft\n"


def test_a_wsl1_kernel_named_anywhere_is_wsl1(tmp_path):
    f = next(x for x in paste_findings(tmp_path, WSL1_PROC_VERSION) if x["code"] == "wsl-gpu-unsupported")
    assert f["severity"] == "error" and "Windows build 20150" in f["title"]
    f = next(x for x in paste_findings(tmp_path, WSL1_HEADERS) if x["code"] == "wsl-gpu-unsupported")
    assert "kernel 4.4.0-43-Microsoft" in f["title"]  # the first WSL 1 kernels named no Windows build


# NVIDIA/nvidia-docker#1400: nvidia-container-cli's debug log under WSL 2 on a Windows without WSL GPU support.
DXCORE = """I want to run docker TensorFlow on the WSL 2 environment and these errors occur:
I1016 13:14:28.960528 24446 nvc.c:299] attempting to load dxcore to see if we are running under Windows Subsystem for Linux (WSL)
I1016 13:14:28.960625 24446 nvc.c:301] dxcore initialization failed, continuing assuming a non-WSL environment
nvidia-container-cli: initialization error: driver error: failed to process request
"""


def test_dxcore_missing_under_wsl2_is_the_missing_gpu_bridge(tmp_path):
    assert severities(paste_findings(tmp_path, DXCORE)).get("wsl-gpu-unsupported") == "error"


def test_the_dxcore_line_on_a_plain_linux_host_is_not_wsl(tmp_path):
    plain = DXCORE.replace(
        "I want to run docker TensorFlow on the WSL 2 environment and these errors occur:\n", "OS: Ubuntu 22.04.4 LTS (x86_64)\n"
    )
    plain = plain.replace(" to see if we are running under Windows Subsystem for Linux (WSL)", "")
    assert "wsl-gpu-unsupported" not in codes(paste_findings(tmp_path, plain))


def test_dev_dxg_missing_in_wsl2_is_the_missing_gpu_bridge(tmp_path):
    # microsoft/WSL#6617 / #6809: an Insider build whose WSL 2 had no /dev/dxg
    text = "Cannot use GPU support in Windows 10 preview build 21327\nThe /dev/dxg device is not available in WSL2 distros.\n"
    f = next(x for x in paste_findings(tmp_path, text) if x["code"] == "wsl-gpu-unsupported")
    assert "/dev/dxg" in f["title"]


def test_tensorflows_cuinit_500_in_docker_desktop_is_the_old_container_toolkit(tmp_path):
    # tensorflow/tensorflow#68711: Docker Desktop (WSL 2 backend) after a 555 Windows driver
    text = (
        "tensorflow/tensorflow:latest-gpu on Docker Desktop, Windows 11 + WSL2\n"
        "E external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NOT_FOUND: named symbol not found\n"
    )
    assert severities(paste_findings(tmp_path, text)).get("container-toolkit-too-old-for-wsl-driver") == "error"


# --- the GSP firmware of another driver version (kb/errors/b19.json (8)); a black screen is no black image ------------

GSP_MISMATCH = """NVRM: GPU0 _kgspFwContainerVerifyVersion: GSP firmware image version mismatch:
got version 595.71.05, expected version 595.58.03
NVRM: GPU0 kgspInitRm_IMPL: Error preparing GSP-RM image
NVRM: GPU0 RmInitAdapter: Cannot initialize GSP firmware RM
"""


def test_a_gsp_firmware_of_another_version_is_a_driver_version_mismatch(tmp_path):
    assert "nvml-driver-mismatch" in codes(paste_findings(tmp_path, GSP_MISMATCH))


def test_a_black_screen_on_a_gtx_1660_is_not_its_fp16_nan(tmp_path):
    text = "Black screen after kernel update 6.14.0-123037-tuxedo due to broken NVIDIA DKMS state\nGPU: NVIDIA GeForce GTX 1660\n"
    assert "gtx16-fp16-cudnn-nan" not in codes(paste_findings(tmp_path, text))


# --- LibTorch's C++ side (checks/libtorch19.py) and CMake without nvcc ----------------------------------------------

# pytorch/pytorch#133293: torch's CMake before 2.5 with a CUDA 12.6 toolkit on Windows.
NVTOOLSEXT = """-- Found CUDAToolkit: C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.6/include (found version "12.6.20")
CMake Error at cmake/public/cuda.cmake:70 (message):
  Failed to find nvToolsExt
Call Stack (most recent call first):
  cmake/Dependencies.cmake:43 (include)
"""
# LaurentMazare/tch-rs#806: a tch-rs binary started without LibTorch's lib/ on the loader path.
TCH_LOADER = """     Running `target/debug/table-extractor`
target/debug/table-extractor: error while loading shared libraries: libtorch_cpu.so: cannot open shared object file: No such file or directory
"""
# CMake's own message when no nvcc is found (Modules/CMakeDetermineCUDACompiler.cmake).
CMAKE_NO_NVCC = """CMake Error at CMakeLists.txt:2 (project):
  No CMAKE_CUDA_COMPILER could be found.

  Tell CMake where to find the compiler by setting either the environment
  variable "CUDACXX" or the CMake cache entry CMAKE_CUDA_COMPILER to the full
  path to the compiler, or to the compiler name if it is in the PATH.
"""


def test_torch_cmake_without_nvtoolsext_is_named(tmp_path):
    got = paste_findings(tmp_path, NVTOOLSEXT)
    assert codes(got)[0] == "libtorch-cmake-nvtoolsext-missing", got


def test_a_libtorch_program_started_without_its_lib_dir_is_the_loader_path_not_an_extension(tmp_path):
    got = codes(paste_findings(tmp_path, TCH_LOADER))
    assert got[0] == "torch-lib-dir-not-on-loader-path" and "extension-abi-mismatch" not in got


def test_python_importing_an_extension_without_libtorch_is_not_the_loader_path(tmp_path):
    # timy90022/One-Shot-Object-Detection#15: the same library missing under Python is an extension's problem
    text = 'File "lib/model/roi_layers/nms.py", line 3, in <module>\n    from model import _C\nImportError: libtorch.so: cannot open shared object file: No such file or directory\n'
    assert "torch-lib-dir-not-on-loader-path" not in codes(paste_findings(tmp_path, text))


def test_cmake_finding_no_nvcc_is_cuda_home_not_set(tmp_path):
    f = next(x for x in paste_findings(tmp_path, CMAKE_NO_NVCC) if x["code"] == "cuda-home-not-set")
    assert f["severity"] == "error" and any("CUDACXX" in c for c in f["fix"]["commands"])


# --- who has the GPU and whose kernels (kb/errors/b19.json (12), (13)) ------------------------------------------------

# AUTOMATIC1111/stable-diffusion-webui (b73-13's thread): lspci shows the NVIDIA dGPU beside an AMD iGPU.
LSPCI_BOTH = """`lspci 2>/dev/null | grep VGA`:
```
01:00.0 VGA compatible controller: NVIDIA Corporation Device 2684 (rev a1)
12:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Device 164e (rev c1)
```
AssertionError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable this check
"""


def test_lspcis_nvidia_line_means_the_amd_igpu_beside_it_is_not_the_gpu(tmp_path):
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, LSPCI_BOTH))


def test_an_apple_m_chip_in_chinese_is_a_mac(tmp_path):
    # GLM-TTS (b73-05's thread): "I use an Apple M1 chip"
    text = "Inference failed: Torch not compiled with CUDA enabled\n我用的是苹果M1芯片，已经将前面问题都跑通了。\n"
    assert "non-nvidia-gpu" in codes(paste_findings(tmp_path, text))


# tensorflow/tensorflow#42467: TensorFlow 2.3 on a GTX 960M (compute capability 5.0); torch is named nowhere.
TF_NO_KERNEL = """no kernel image is available for execution on the device
I've installed TensorFlow 2.3.0 on windows 10 but cant run any python scrips contain TensorFlow codes!
GPU card : NVIDIA 960m
2020-08-18 21:20:00.194181: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1716] Found device 0 with properties:
pciBusID: 0000:01:00.0 name: GeForce GTX 960M computeCapability: 5.0
"""


def test_no_kernel_image_in_a_tensorflow_report_is_tensorflows_build_not_torchs(tmp_path):
    got = codes(paste_findings(tmp_path, TF_NO_KERNEL))
    assert "companion-arch-unsupported" in got and "gpu-arch-unsupported" not in got


def test_the_same_with_torchs_own_warning_is_still_torchs(tmp_path):
    warn = "UserWarning: GeForce GTX 960M with CUDA capability sm_50 is not compatible with the current PyTorch installation.\n"
    text = warn + TF_NO_KERNEL
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, text))


# --- a Blackwell GPU the report shows served (checks/kernel_driver.py) ------------------------------------------------

# isaac-sim/IsaacSim (b75-03's thread): the reporter's open flavour named as the installed package.
ISAAC_OPEN = """Isaac Sim 5.0 crashes after app ready on RTX 5070 Blackwell with nvidia-driver-580-open
Ubuntu 24.04.4 LTS Kernel: 6.17.0-29-generic
NVIDIA GeForce RTX 5070 Blackwell / sm_120  VRAM: 12227 MiB
NVIDIA driver package: nvidia-driver-580-open NVIDIA driver version: 580.159.03 CUDA version shown by nvidia-smi: 13.0 Graphics API: Vulkan
createDLSSContext error: unable to initialize context. Optional DLSS feature is disabled.
"""
COLLECT_ENV_5070 = """Collecting environment information...
OS: Ubuntu 24.04.4 LTS (x86_64)
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5070
Nvidia driver version: 580.159.03
"""


def test_a_blackwell_report_naming_the_open_package_installed_is_not_told_to_install_it(tmp_path):
    assert "open-kernel-module-required" not in codes(paste_findings(tmp_path, ISAAC_OPEN))


def test_a_collect_env_listing_the_blackwell_gpu_and_driver_shows_the_driver_serving_it(tmp_path):
    got = paste_findings(tmp_path, COLLECT_ENV_5070, source="--from-collect-env")
    assert "open-kernel-module-required" not in codes(got)
    stated = COLLECT_ENV_5070.replace("580.159.03", "575")  # a branch a person typed is not nvidia-smi's banner
    assert "open-kernel-module-required" in codes(paste_findings(tmp_path, stated, source="--from-collect-env"))


# --- CUDA IPC on Windows (checks/windows19.py); NCCL's watchdog across machines (checks/dist18.py) -------------------

# pytorch/pytorch#36037 and vietnh1009/Super-mario-bros-A3C-pytorch#18: the two wordings of the same refusal.
IPC_801 = (
    "Runtime Error(801) operation not supported at C:\\w\\1\\s\\windows\\pytorch\\torch/csrc/generic/StorageSharing.cpp:245\n"
)
IPC_THC = """THCudaCheck FAIL file=..\\torch/csrc/generic/StorageSharing.cpp line=253 error=801 : operation not supported
  File "C:\\Users\\Aarush\\Documents\\env38\\lib\\site-packages\\torch\\multiprocessing\\reductions.py", line 240, in reduce_tensor
    event_sync_required) = storage._share_cuda_()
RuntimeError: cuda runtime error (801) : operation not supported at ..\\torch/csrc/generic/StorageSharing.cpp:253
"""


def test_sharing_a_cuda_tensor_between_processes_on_windows_is_named(tmp_path):
    for text in (IPC_801, IPC_THC):
        f = next(x for x in paste_findings(tmp_path, text) if x["code"] == "windows-cuda-ipc-unsupported")
        assert f["severity"] == "error" and any("num_workers=0" in c for c in f["fix"]["commands"])


# karpathy/nanoGPT (b76-13's thread): two nodes, each fine alone; NCCL's watchdog ends the job.
MULTINODE_TIMEOUT = """DDP on multinode [not yet working]
Everything works fine on an individual node, but multinode crashing immediately before the training is about to start.
$ torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 --master_port=1234 train.py
[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
"""


def test_nccls_watchdog_timeout_across_machines_is_the_network_interface(tmp_path):
    assert "nccl-wrong-network-interface" in codes(paste_findings(tmp_path, MULTINODE_TIMEOUT))


def test_the_same_timeout_on_one_machine_is_not_read_as_the_network(tmp_path):
    one = MULTINODE_TIMEOUT.replace(" --nnodes=2 --node_rank=0 --master_addr=10.0.0.1 --master_port=1234", "").replace(
        "multinode", "training"
    )
    one = one.replace("DDP on training [not yet working]", "DDP [not yet working]").replace("on an individual node, but ", "")
    assert "nccl-wrong-network-interface" not in codes(paste_findings(tmp_path, one))


# --- builds without CUDA in other words (kb/errors/b19.json (15); checks/torch_install.py) ----------------------------

# mlverse/torch#272: R's torch with its CPU lantern asked for a CUDA tensor.
R_TORCH_CPU = """> torch_tensor(1, device = "cuda")
Error in cpp_torch_tensor(data, rev(dimension), options$ptr, requires_grad,  :
  PyTorch is not linked with support for cuda devices (getDeviceGuardImpl at ../c10/core/impl/DeviceGuardImplInterface.h:216)
"""
# microsoft/onnxruntime#21769: onnxruntime-gpu 1.19 without the CUDA 12 / cuDNN 9 it was built for.
ORT_PROVIDER = (
    "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 onnxruntime::python::CreateExecutionProviderInstance] "
    "Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime. Please install "
    "all dependencies as mentioned in the GPU requirements page\n"
)
ROCM_ON_NVIDIA = """Collecting environment information...
PyTorch version: 2.3.0+rocm6.0
Is debug build: False
CUDA used to build PyTorch: N/A
ROCM used to build PyTorch: 6.0.32830-d62f6a171

OS: Ubuntu 22.04.4 LTS (x86_64)
Is CUDA available: False
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090
Nvidia driver version: 550.54.14
"""


def test_a_libtorch_without_a_cuda_backend_is_a_cpu_build(tmp_path):
    assert "cpu-only-torch" in codes(paste_findings(tmp_path, R_TORCH_CPU))


def test_onnxruntimes_failed_cuda_provider_is_its_missing_cuda_libraries(tmp_path):
    assert "cuda-library-missing" in codes(paste_findings(tmp_path, ORT_PROVIDER))


def test_a_rocm_torch_on_an_nvidia_machine_is_a_build_without_cuda(tmp_path):
    got = paste_findings(tmp_path, ROCM_ON_NVIDIA, source="--from-collect-env")
    f = next(x for x in got if x["code"] == "cpu-only-torch")
    assert "ROCm" in f["title"] and any("download.pytorch.org/whl/cu" in c for c in f["fix"]["commands"])


def test_a_rocm_torch_on_an_amd_machine_is_not_called_wrong(tmp_path):
    amd = ROCM_ON_NVIDIA.replace("GPU 0: NVIDIA GeForce RTX 4090", "GPU 0: AMD Radeon RX 7900 XTX").replace(
        "Nvidia driver version: 550.54.14\n", ""
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, amd, source="--from-collect-env"))


# --- FP8 below Ada (checks/fp8_19.py) ----------------------------------------------------------------------------------

SCALED_MM = (
    "RuntimeError: torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, or ROCm MI300+\n"
)
# woct0rdho/triton-windows#3: torch.compile of fp8 weights on an RTX 30xx.
TRITON_FP8 = """  File "C:\\NeuroAI\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\triton\\language\\semantic.py", line 759, in cast
    assert builder.options.allow_fp8e4nv, "fp8e4nv data type is not supported on CUDA arch < 89"
AssertionError: fp8e4nv data type is not supported on CUDA arch < 89
"""


def test_fp8_on_a_gpu_before_ada_is_named_with_the_gpu(tmp_path):
    text = "GPU: NVIDIA GeForce RTX 3090 Ti\n" + SCALED_MM
    f = next(x for x in paste_findings(tmp_path, text) if x["code"] == "gpu-lacks-fp8")
    assert f["severity"] == "error" and "8.6" in f["title"]
    assert severities(paste_findings(tmp_path, TRITON_FP8)).get("gpu-lacks-fp8") == "error"


def test_the_fp8_refusal_beside_an_h100_is_not_this(tmp_path):
    text = "GPU models and configuration: GPU 0: NVIDIA H100 80GB HBM3\n" + SCALED_MM
    assert "gpu-lacks-fp8" not in codes(paste_findings(tmp_path, text))


# thu-ml/SageAttention#173 / woct0rdho/SageAttention#97: SageAttention's build without this GPU's kernels.
SAGE = """  File "/home/user/anaconda3/envs/ComfyUI-Env/lib/python3.12/site-packages/sageattention/core.py", line 666, in sageattn_qk_int8_pv_fp8_cuda
    assert SM89_ENABLED, "SM89 kernel is not available. Make sure you GPUs with compute capability 8.9."
AssertionError: SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.
"""


def test_sageattentions_missing_kernel_is_its_own_build(tmp_path):
    f = next(x for x in paste_findings(tmp_path, SAGE) if x["code"] == "companion-arch-unsupported")
    assert "sageattention" in f["title"] and any("sageattention" in c for c in f["fix"]["commands"])
