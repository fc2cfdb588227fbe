"""Session 26 (issue 21): classes fixed from blind batches b250 onwards and from earlier misses."""

from __future__ import annotations

import json

from checkcli import codes, paste_findings, run_check, severities, write

from cudadoctor import kb
from cudadoctor.readers import prose

# ---------------------------------------------------------------- package-not-built-for-platform

# pip on Windows 11 (rapidsai/cucim#330, the reporter's lines).
CUCIM_PIP = """Hello, I have a problem when installing cucim with PYPI or CONDA on Windows 11.

Currently, my PIP Version is 22.1.2, and I have confirmed that it is installed on Ubuntu with the same PIP version.

```
pip install cucim
ERROR: Could not find a version that satisfies the requirement cucim (from versions: none)
ERROR: No matching distribution found for cucim
```
"""
PIP_ONLY = """ERROR: Could not find a version that satisfies the requirement qiskit-aer-gpu (from versions: none)
ERROR: No matching distribution found for qiskit-aer-gpu
"""
# A Linux library loaded on Windows (pytorch/rl#851, trimmed).
WIN193 = """When trying to import Tensordict I get this error : `OSError: [WinError 193] %1 is not a valid Win32 application `
AND a pop-up window saying that file `fbgemm_gpu_py.so is not compatible with Windows`.
"""


def test_linux_only_package_table_is_what_pypi_lists():
    table = json.loads((kb._HERE / "package_platforms.json").read_text(encoding="utf-8"))
    assert table["checked"] and table["sources"] and table["notes"]
    rows = kb.linux_only_packages()
    assert {"cucim", "qiskit-aer-gpu", "fbgemm-gpu", "nvidia-dali-cuda120", "cudf-cu12"} <= set(rows)
    for name, row in rows.items():
        # Linux wheels only: that is what the table asserts of each package
        assert row["platforms"] and all(p.startswith("linux-") for p in row["platforms"]), name
        assert row["source"] == f"https://pypi.org/pypi/{name}/json"
    # triton on Windows has its own code; it is not in this table
    assert "triton" not in rows


def test_pip_refusing_a_linux_only_package_on_windows(tmp_path):
    found = paste_findings(tmp_path, CUCIM_PIP)
    assert "package-not-built-for-platform" in codes(found)
    f = next(f for f in found if f["code"] == "package-not-built-for-platform")
    assert "cucim" in f["title"] and "Windows" in f["title"]
    assert any("wsl" in c.lower() for c in f["fix"]["commands"])
    # The same refusal with the OS stated as a label: certain.
    stated = paste_findings(tmp_path, "OS: Windows 10\n" + PIP_ONLY)
    assert severities(stated)["package-not-built-for-platform"] == "error"
    # Without any OS: a likely cause (it may be an unsupported Python or architecture too).
    assert severities(paste_findings(tmp_path, PIP_ONLY))["package-not-built-for-platform"] == "warning"


def test_macos_and_arm_linux(tmp_path):
    banner = "Python 3.9.12 (main, Apr  5 2022, 01:53:17) \n[Clang 12.0.0 ] :: Anaconda, Inc. on darwin\n"
    mac = paste_findings(tmp_path, banner + PIP_ONLY)
    assert "macOS" in next(f["title"] for f in mac if f["code"] == "package-not-built-for-platform")
    # faiss-gpu publishes x86_64 wheels only: refused on an aarch64 Linux too; cucim-cu12 has aarch64 wheels.
    arm = "OS: Ubuntu 22.04 aarch64\nERROR: No matching distribution found for faiss-gpu-cu12\n"
    assert "package-not-built-for-platform" in codes(paste_findings(tmp_path, arm))
    arm_ok = "OS: Ubuntu 22.04 aarch64\nERROR: No matching distribution found for cucim-cu12\n"
    assert "package-not-built-for-platform" not in codes(paste_findings(tmp_path, arm_ok))


def test_not_said_on_linux_wsl_or_in_a_container(tmp_path):
    linux = "OS: Ubuntu 22.04.3 LTS (x86_64)\n" + PIP_ONLY
    assert "package-not-built-for-platform" not in codes(paste_findings(tmp_path, linux))
    wsl = "Windows 11, inside WSL 2 (Ubuntu 22.04)\n" + PIP_ONLY
    assert "package-not-built-for-platform" not in codes(paste_findings(tmp_path, wsl))
    docker = "On Windows 11 I build the docker image and inside it:\n" + PIP_ONLY
    assert "package-not-built-for-platform" not in codes(paste_findings(tmp_path, docker))
    # A package with Windows wheels (cupy) refused on Windows is another cause.
    cupy = "OS: Windows 11\nERROR: No matching distribution found for cupy-cuda12x\n"
    assert "package-not-built-for-platform" not in codes(paste_findings(tmp_path, cupy))


def test_linux_library_loaded_on_windows(tmp_path):
    found = paste_findings(tmp_path, WIN193)
    assert severities(found)["package-not-built-for-platform"] == "error"
    assert "fbgemm-gpu" in next(f["title"] for f in found if f["code"] == "package-not-built-for-platform")
    assert "dll-load-failure" not in codes(found)  # no DLL is at fault
    # WinError 193 without a Linux library named stays a DLL problem.
    assert "dll-load-failure" in codes(paste_findings(tmp_path, "OSError: [WinError 193] %1 is not a valid Win32 application"))


def test_a_report_of_installing_it_on_windows(tmp_path):
    # cfzd/Ultra-Fast-Lane-Detection-v2#95 and Qiskit/qiskit-aer#929: no error shown, the package and the OS named.
    dali = "windows cant install Nvidia-DALI accelerator module\n---\ni wanna run ufld-v2 on windows, but nvidia-dali seems not installed"
    assert severities(paste_findings(tmp_path, dali))["package-not-built-for-platform"] == "warning"
    aer = "Not able to install qiskit-aer-gpu\n\n- **Python version**: 3.7.6\n- **Operating system**: Windows\n"
    assert severities(paste_findings(tmp_path, aer))["package-not-built-for-platform"] == "warning"
    # "DALI" in capitals only: the painter is not the package.
    dali_art = "On Windows 11, I install a LoRA trained on Dali paintings and torch says CUDA is not available"
    assert "package-not-built-for-platform" not in codes(paste_findings(tmp_path, dali_art))


def test_windows_release_at_the_end_of_a_sentence_is_read():
    got = prose.read(["I have a problem when installing cucim with PYPI or CONDA on Windows 11."])
    assert got["os"]["value"] == "Windows"
    # a build number is not a release
    assert prose.read(["Windows 10.0.19045"]).get("os", {}).get("value") != "Windows 10"


# ---------------------------------------------------------------- CPU-only builds of gradient-boosting libraries, JAX

# LightGBM's own Fatal line (lightgbm-org/LightGBM#3696) and XGBoost's (dmlc/xgboost#7765).
LIGHTGBM = """[LightGBM] [Fatal] GPU Tree Learner was not enabled in this build.
Please recompile with CMake option -DUSE_GPU=1
lightgbm.basic.LightGBMError: GPU Tree Learner was not enabled in this build.
"""


def test_boosting_libraries_cpu_builds_are_companion_builds(tmp_path):
    lgbm = paste_findings(tmp_path, LIGHTGBM)
    assert codes(lgbm) == ["companion-cpu-only-build"]
    assert lgbm[0]["title"].startswith("LightGBM")
    xgb = paste_findings(tmp_path, "xgboost.core.XGBoostError: XGBoost version not compiled with GPU support")
    assert codes(xgb) == ["companion-cpu-only-build"]
    assert xgb[0]["title"].startswith("XGBoost")
    # a torch extension's own words stay extension-built-without-cuda
    assert "extension-built-without-cuda" in codes(paste_findings(tmp_path, "RuntimeError: Not compiled with GPU support"))


def test_jax_without_a_gpu_backend(tmp_path):
    # danijar/dreamerv3#18's words, and old jaxlib's raise shown in a traceback (pyro-ppl/numpyro, b253-02)
    new = "RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present. Platforms present are: cpu"
    old = (
        '  File "/home/u/anaconda3/envs/PYRO/lib/python3.7/site-packages/jaxlib/xla_client.py", line 248, in get_local_backend\n'
        "    raise RuntimeError('Unknown backend {}'.format(name))\n"
    )
    for text in (new, old):
        found = paste_findings(tmp_path, text)
        assert "companion-cpu-only-build" in codes(found), text
        assert "jaxlib" in next(f["title"] for f in found if f["code"] == "companion-cpu-only-build")


# ---------------------------------------------------------------- CUDA 7.5 and glibc 2.23's string.h

MEMCPY = """/usr/include/string.h: In function 'void* __mempcpy_inline(void*, const void*, size_t)':
/usr/include/string.h:652:42: error: 'memcpy' was not declared in this scope
   return (char *) memcpy (__dest, __src, __n) + __n;
"""


def test_cuda75_string_h_memcpy(tmp_path):
    found = paste_findings(tmp_path, MEMCPY)
    assert codes(found) == ["host-compiler-unsupported"]
    assert "_FORCE_INLINES" in found[0]["title"]
    assert any("_FORCE_INLINES" in c for c in found[0]["fix"]["commands"])


# ---------------------------------------------------------------- a driver stated by its branch alone


def test_driver_branch_alone_is_not_older_than_its_own_branch():
    # CUDA 9.2 needs 396.26: "396" may be 396.24 or 396.54 - unknown, not older
    assert kb.driver_supports_cuda("396", "9.2") is None
    assert kb.driver_supports_cuda("396.24", "9.2") is False
    assert kb.driver_supports_cuda("396.26", "9.2") is True
    # a branch below or above the one needed still decides
    assert kb.driver_supports_cuda("390", "9.2") is False
    assert kb.driver_supports_cuda("410", "9.2") is True
    # CUDA 12.x minor-version compatibility floor (525.60.13 on Linux): "525" alone is unknown, "520" too old
    assert kb.driver_supports_cuda("525", "12.4") is None
    assert kb.driver_supports_cuda("520", "12.4") is False


# ---------------------------------------------------------------- CUDA asked for on a Mac


def test_cuda_on_a_mac_in_programs_words(tmp_path):
    # Cellpose's message (cellpose#..., b260), torch refusing a CUDA checkpoint (Easy-Wav2Lip, b261), a CUDA error
    for text in (
        "Im running cell pose locally on my Mac laptop (CPU)\nTORCH CUDA version not installed/working.",
        "I have a MacBook air M1\nI'm facing this error: TORCH CUDA version not installed/working.",
        "MacBook Pro M1 Pro\nRuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.",
        "CUDA error when run on Mac with cpu",
    ):
        assert "non-nvidia-gpu" in codes(paste_findings(tmp_path, text)), text
    # A Mac named, nothing about CUDA failing: nothing to say
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, "On my Mac the training loss is NaN after 3 epochs"))


def test_mac_signs_in_prose():
    assert prose.read(["I run it on Mac with the CPU"])["os"]["value"] == "Darwin"
    assert "os" not in prose.read(["the MAC address of the node changed"])
    # a macOS home folder is a sign, read where no line names an OS
    got = prose.read(
        ["/Users/sukai/Documents/ai/MuseTalk/musetalk/whisper/transcribe.py:79: UserWarning: FP16 is not supported on CPU"]
    )
    assert got["os"]["value"] == "Darwin"
    both = prose.read(["/Users/me/x.py", "OS: Ubuntu 22.04"])
    assert both["os"]["value"] == "Linux"


# ---------------------------------------------------------------- nvidia-egl-unavailable

NVDIFFRAST_EGL = """  File "/opt/conda/lib/python3.10/site-packages/nvdiffrast/torch/ops.py", line 184, in __init__
    self.cpp_wrapper = _get_plugin(gl=True).RasterizeGLStateWrapper(output_db, mode == 'automatic', cuda_device_idx)
[F glutil.cpp:338] eglInitialize() failed
Aborted (core dumped)
"""
MUJOCO_EGL = (
    "ImportError: Cannot initialize a EGL device display. This likely means that your EGL driver does not support the "
    "PLATFORM_DEVICE extension, which is required for creating a headless rendering context."
)


def test_egl_unavailable(tmp_path):
    nv = paste_findings(tmp_path, NVDIFFRAST_EGL)
    assert codes(nv) == ["nvidia-egl-unavailable"]
    assert "CUDA" in nv[0]["title"] and any("RasterizeCudaContext" in c for c in nv[0]["fix"]["commands"])
    in_docker = paste_findings(tmp_path, "inside the docker container:\n" + NVDIFFRAST_EGL)
    assert any("NVIDIA_DRIVER_CAPABILITIES" in c for c in in_docker[0]["fix"]["commands"])
    mj = paste_findings(tmp_path, MUJOCO_EGL)
    assert codes(mj) == ["nvidia-egl-unavailable"]
    assert any("MUJOCO_GL=osmesa" in c for c in mj[0]["fix"]["commands"])


# ---------------------------------------------------------------- companion-wheel-missing-for-torch

KAOLIN_PIP = """pip install kaolin==0.13.0 -f https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-2.0.0_cu118.html
ERROR: Could not find a version that satisfies the requirement kaolin==0.13.0 (from versions: 0.0)
ERROR: No matching distribution found for kaolin==0.13.0
"""


def test_kaolin_without_a_wheel_for_this_torch(tmp_path):
    found = paste_findings(tmp_path, KAOLIN_PIP)
    assert severities(found) == {"companion-wheel-missing-for-torch": "error"}
    assert "2.0.0+cu118" in found[0]["title"]
    placeholder = "Kaolin does not support pytorch version: 2.6.0+cu126"
    assert "2.6.0+cu126" in paste_findings(tmp_path, placeholder)[0]["title"]
    said = "it prompts me to install Kaolin, but the Torch version is newer and NVIDIA didn't compile and provide a whl file."
    assert severities(paste_findings(tmp_path, said))["companion-wheel-missing-for-torch"] == "warning"
    # PyG's extensions keep their own code
    pyg = "pip install torch-scatter -f https://data.pyg.org/whl/torch-2.0.0+cu118.html\nERROR: No matching distribution found for torch-scatter"
    assert "companion-wheel-missing-for-torch" not in codes(paste_findings(tmp_path, pyg))


# ---------------------------------------------------------------- the GPU series in Chinese; ENOKEY alone


def test_chinese_series_claim_names_the_architecture(tmp_path):
    # MonkeyOCR's reporter (b258-03): "pytorch cu124 does not support 50-series cards"
    found = paste_findings(tmp_path, "pytorchCU124不支持50系显卡")
    assert "gpu-arch-unsupported" in codes(found)
    assert "sm_120" in next(f["title"] for f in found if f["code"] == "gpu-arch-unsupported")


def test_required_key_not_available_alone_is_secure_boot(tmp_path):
    text = "Ubuntu 16.04 kernel 4.4.0-21 not loading nvidia/vboxdrv modules anymore (Required key not available)"
    assert "secure-boot-module-blocked" in codes(paste_findings(tmp_path, text))


# ---------------------------------------------------------------- a program's own GPU floor; Kepler and a silent driver

# PG-Strom disabling itself on a GTX 650 (heterodb/pg-strom#226): the program's floor, not torch's.
PGSTROM = """OS: CentOS 7
GPU models and configuration: GeForce GTX 650
Nvidia driver version: 352.39
FATAL:  No CUDA devices, PG-Strom was disabled
"""


def test_a_programs_own_gpu_floor_is_not_torchs(tmp_path):
    found = paste_findings(tmp_path, PGSTROM)
    assert "companion-arch-unsupported" in codes(found)
    assert "PG-Strom" in next(f["title"] for f in found if f["code"] == "companion-arch-unsupported")
    assert "gpu-arch-unsupported" not in codes(found)


SMI_FAILED = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."


def test_kepler_with_a_silent_driver(tmp_path):
    def check(gpu_and_driver: str):
        env = write(tmp_path, "PyTorch version: N/A\nIs CUDA available: N/A\n" + gpu_and_driver, "env.txt")
        return run_check("--from-collect-env", str(env), "--error-file", str(write(tmp_path, SMI_FAILED, "err.txt")))

    # collect_env's GPU field written by hand (not nvidia-smi -L's form) is a stated GPU, not one NVML saw
    stated = check("GPU models and configuration: Tesla K80\nNvidia driver version: 510\n")
    assert severities(stated)["gpu-needs-legacy-driver"] == "error"
    # the driver's version not stated: likely a current driver ignoring the Kepler GPU
    assert severities(check("GPU models and configuration: Tesla K80\n"))["gpu-needs-legacy-driver"] == "warning"
    # a GPU current drivers drive: no such guess
    assert "gpu-needs-legacy-driver" not in codes(check("GPU models and configuration: NVIDIA A100-SXM4-40GB\n"))


# ---------------------------------------------------------------- extension builds and kernels (b268's classes)

STD_FUNCTION = """/usr/include/c++/11/bits/std_function.h:435:145: error: parameter packs not expanded with '...':
  435 |         function(_Functor&& __f)
/usr/include/c++/11/bits/std_function.h:435:145: note:         '_ArgTypes'
"""


def test_nvcc_and_gcc11_headers(tmp_path):
    found = paste_findings(tmp_path, STD_FUNCTION)
    assert codes(found) == ["host-compiler-unsupported"]
    assert "std_function.h" in found[0]["title"]
    assert any("g++-10" in c for c in found[0]["fix"]["commands"])


def test_nvcc_too_old_for_cpp17(tmp_path):
    found = paste_findings(tmp_path, "nvcc fatal   : Value 'c++17' is not defined for option 'std'")
    assert codes(found) == ["cuda-toolkit-mismatch"]
    assert "C++17" in found[0]["title"]


def test_bf16_ptx_below_ampere_in_short_forms(tmp_path):
    for text in ("'.bf16' requires .target sm_80 or higher", "Feature 'cvt with .f32.bf16' requires .target sm_80 or higher"):
        assert codes(paste_findings(tmp_path, text)) == ["gpu-lacks-bf16"], text


def test_torch_library_missing_when_the_extension_is_imported_first(tmp_path):
    first = 'Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\nImportError: libc10.so: cannot open shared object file: No such file or directory'
    found = paste_findings(tmp_path, first)
    assert codes(found) == ["extension-imported-before-torch"]
    # inside torch's own import: not this
    own = (
        'Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
        '  File "/usr/lib/python3/site-packages/torch/__init__.py", line 237, in <module>\n'
        "ImportError: libc10.so: cannot open shared object file: No such file or directory"
    )
    assert "extension-imported-before-torch" not in codes(paste_findings(tmp_path, own))


def test_torchs_own_arch_warning_tail_alone(tmp_path):
    # comfy-cli#397 quoted only the last line of torch's warning; torch 2.10+ words it per release
    for text in (
        "Please follow the instructions at https://pytorch.org/get-started/locally/ to install a PyTorch release that "
        "supports one of these CUDA versions: 12.8, 13.0",
        "Your installed torch==2.9.0+cu126 does not include kernels for this GPU. Reinstall the same version against a "
        "CUDA build that does, e.g.:",
        "No published PyTorch CUDA builds for release 2.9.0+cu126 support this GPU.",
    ):
        assert codes(paste_findings(tmp_path, text)) == ["gpu-arch-unsupported"], text


def test_a_blackwell_gpu_the_report_says_works_is_served(tmp_path):
    # Jan's report (b272-03): the driver and nvidia-smi work; only an app's backend fails - no open-module guess
    works = (
        "On a clean Debian Trixie install with a working NVIDIA driver (580.126.18), the app reports 'No devices found' "
        "even though nvidia-smi, vulkaninfo, and the system CUDA stack all work correctly. The GPU is an RTX 5070 Ti."
    )
    assert "open-kernel-module-required" not in codes(paste_findings(tmp_path, works))
    fails = "OS: Ubuntu 24.04\nnvidia-smi shows no devices. GPU: RTX 5090"
    assert "open-kernel-module-required" in codes(paste_findings(tmp_path, fails))


def test_bf16_named_beside_a_failing_first_kernel_is_no_old_build_guess():
    from cudadoctor.checks import arch

    # the regex was written with backspace characters for \b once (never matching 'bf16' as a word): it must match now
    assert arch._DTYPE_NAMED.search("CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx with bf16 inputs")
    assert not arch._DTYPE_NAMED.search("abf16x")


# ---------------------------------------------------------------- conda's __cuda in more words (b275)


def test_conda_virtual_package_in_rattlers_and_reporters_words(tmp_path):
    rattler = (
        "Cannot solve the request because of: jaxlib >=0.4.23,<0.5.0 *cuda12* cannot be installed because there are no "
        "viable options:\n└─ __cuda *, for which no candidates were found."
    )
    assert severities(paste_findings(tmp_path, rattler))["conda-cuda-virtual-package-missing"] == "error"
    assert "conda-cuda-virtual-package-missing" in codes(
        paste_findings(tmp_path, "CUDA virtual package not found in docker build")
    )
    built_on_cpu = (
        "some of the more recent GPU conda packages include a virtual dependency on __cuda. The virtual package detects "
        "the cuda version, and is used by the conda/mamba solver. Since our image builds run on CPU nodes, this does not work."
    )
    assert severities(paste_findings(tmp_path, built_on_cpu))["conda-cuda-virtual-package-missing"] == "warning"
    # __cuda named where a GPU is present and nothing says the build runs without one: no guess
    assert "conda-cuda-virtual-package-missing" not in codes(paste_findings(tmp_path, "virtual packages : __cuda=12.4=0"))


def test_scs_without_its_gpu_extension(tmp_path):
    # cvxpy#902: SCS's pip build has no GPU solver
    found = paste_findings(tmp_path, "ModuleNotFoundError: No module named '_scs_gpu'")
    assert codes(found) == ["companion-cpu-only-build"]
    assert found[0]["title"].startswith("SCS")


# ---------------------------------------------------------------- nvidia-opencl-icd-missing


def test_opencl_without_nvidias_icd(tmp_path):
    katago = (
        "terminate called after throwing an instance of 'StringError'\n  what():  OpenCL error at "
        "/home/u/KataGo/cpp/neuralnet/openclhelpers.cpp, func err, line 263, error CL_PLATFORM_NOT_FOUND_KHR"
    )
    assert codes(paste_findings(tmp_path, "GPU: RTX 3060\n" + katago)) == ["nvidia-opencl-icd-missing"]
    docker = "Inside a docker container on a Tesla V100:\nLightGBMError: No OpenCL device found"
    found = paste_findings(tmp_path, docker)
    assert codes(found) == ["nvidia-opencl-icd-missing"]
    assert any("nvidia.icd" in c for c in found[0]["fix"]["commands"])
    # only an AMD GPU named: not NVIDIA's ICD
    amd = "GPU: AMD Radeon RX 6800\n" + katago
    assert "nvidia-opencl-icd-missing" not in codes(paste_findings(tmp_path, amd))


# ---------------------------------------------------------------- cuda-translation-layer-gap


def test_cuda_through_a_translation_layer(tmp_path):
    scale = "Compiling for gfx1100 with SCALE-AMD 1.7.1:\nrepro.cu:2:11: error: unknown type name 'cudaSurfaceObject_t'"
    found = paste_findings(tmp_path, scale)
    assert "cuda-translation-layer-gap" in codes(found)
    assert "non-nvidia-gpu" not in codes(found)  # CUDA on that GPU on purpose
    zluda = "Blender 4.1 with ZLUDA on an AMD Radeon RX 570: Failed to configure CUDA context (Invalid context)"
    assert "cuda-translation-layer-gap" in codes(paste_findings(tmp_path, zluda))
    # 'scale' as a word is no layer
    assert "cuda-translation-layer-gap" not in codes(paste_findings(tmp_path, "error: loss scale overflow on AMD GPU"))


def test_thc_functions_and_candles_bf16_kernels(tmp_path):
    thc = 'dcn_v2_cuda.cu(86): error: identifier "THCState_getCurrentStream" is undefined'
    assert codes(paste_findings(tmp_path, thc)) == ["extension-source-uses-removed-thc-api"]
    candle = 'An error occurred: DriverError(CUDA_ERROR_NOT_FOUND, "named symbol not found") when loading cast_bf16_f16'
    assert "gpu-lacks-bf16" in codes(paste_findings(tmp_path, "GPU: Tesla T4\n" + candle))
