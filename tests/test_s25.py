"""Session 25 (issue 21): classes fixed from blind batches b217 onwards and from earlier misses."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

from cudadoctor.readers import containers

# NVIDIA's data-science-stack diagnostics (https://github.com/NVIDIA/data-science-stack/issues/90, b207-07): its lines say Docker is
# NOT installed; the report is from the host.
DSS_DIAGNOSTICS = """$ ./data-science-stack diagnostics
###NV### Wed Feb 10 12:32:15 UTC 2021 #### Driver detected (0 means not installed): 0
###NV### Wed Feb 10 12:32:15 UTC 2021 #### NVIDIA SMI:
nvidia-smi not found, NVIDIA GPU Driver not installed correctly.
###NV### Wed Feb 10 12:32:15 UTC 2021 #### Docker detected (0 means not installed): 0
$ lsmod | grep nvidia
nvidia_drm             57344  0
nvidia_modeset       1224704  1 nvidia_drm
nvidia              34086912  1 nvidia_modeset
"""


def test_docker_named_as_absent_is_no_container(tmp_path):
    lines = DSS_DIAGNOSTICS.splitlines()
    assert containers.read(lines) is None
    for absent in ("docker: command not found", "I run it without docker, directly on the host", "docker is not installed"):
        assert containers.kind_in(absent) is None, absent
    # Present Docker still reads as a container.
    assert containers.read(["I run it in a docker container"])["kind"] == "docker"
    assert containers.kind_in("no docker compose file here, but inside the docker container it fails") == "docker"
    found = codes(paste_findings(tmp_path, "nvidia-smi not found\n" + DSS_DIAGNOSTICS))
    assert "no-gpu-visible" not in found
    assert "nvidia-smi-not-installed" in found


# NVIDIA's CUDA image banner after a `docker run` shown without a GPU option (b195-02's thread), and alone.
BANNER = """WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.
   Use the NVIDIA Container Toolkit to start this container with GPU support; see
   https://docs.nvidia.com/datacenter/cloud-native/ .
"""


def test_image_banner_after_a_start_without_gpus_is_no_gpu_visible(tmp_path):
    shown = paste_findings(tmp_path, "$ docker run my_image\n\n==========\n== CUDA ==\n==========\n\n" + BANNER)
    assert severities(shown) == {"no-gpu-visible": "error", "container-toolkit-missing": "warning"}
    alone = paste_findings(tmp_path, BANNER)
    assert codes(alone) == ["container-toolkit-missing"]
    assert "--gpus" in alone[[f["code"] for f in alone].index("container-toolkit-missing")]["title"]
    # The toolkit's own refusal of --gpus stays the toolkit, an error.
    refused = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'
    assert severities(paste_findings(tmp_path, "$ docker run --gpus all my_image\n" + refused)) == {
        "container-toolkit-missing": "error"
    }


# Triton's launcher helper build failing with only the CalledProcessError shown (ComfyUI-WanVideoWrapper#1168, trimmed).
TRITON_HELPER = (
    "torch._inductor.exc.InductorError: CalledProcessError: Command '['/root/miniconda3/envs/comfyui2/bin/"
    "x86_64-conda-linux-gnu-cc', '/tmp/tmp178vl5vy/cuda_utils.c', '-O3', '-shared', '-fPIC', '-Wno-psabi', '-o', "
    "'/tmp/tmp178vl5vy/cuda_utils.cpython-311-x86_64-linux-gnu.so', '-lcuda', '-L/root/miniconda3/envs/comfyui2/lib/"
    "python3.11/site-packages/triton/backends/nvidia/lib', '-L/lib/x86_64-linux-gnu', '-I/tmp/tmp178vl5vy', "
    "'-I/root/miniconda3/envs/comfyui2/include/python3.11']' returned non-zero exit status 1.\n"
)


def test_triton_helper_build_failure_is_a_likely_libcuda_link(tmp_path):
    found = paste_findings(tmp_path, TRITON_HELPER)
    assert severities(found) == {"libcuda-not-in-linker-cache": "warning"}
    assert found[0]["title"].startswith("Likely: Triton could not build its launcher helper")
    # With the compiler's Python.h line shown, the headers are the cause, not libcuda.
    headers = "/tmp/tmpx/cuda_utils.c:6:10: fatal error: Python.h: No such file or directory\n" + TRITON_HELPER
    assert codes(paste_findings(tmp_path, headers)) == ["python-headers-missing"]
    # ld's own line above it: the cause as said, an error.
    ld = "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\n" + TRITON_HELPER
    assert severities(paste_findings(tmp_path, ld))["libcuda-not-in-linker-cache"] in ("error", "warning")


def test_libcuda_so_named_not_found_in_words(tmp_path):
    for said in (
        "SDPA Tutorial - libcuda.so not found error for torch compile on Google Colab",
        "CUDA SETUP: WARNING! libcuda.so not found! Do you have a CUDA driver installed? If you are on a cluster, make "
        "sure you are on a CUDA machine!",
    ):
        assert "libcuda-not-in-linker-cache" in codes(paste_findings(tmp_path, said)), said
    # The versioned library missing is another matter (no driver in reach), not this code.
    assert "libcuda-not-in-linker-cache" not in codes(
        paste_findings(tmp_path, "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory")
    )


# glibc 2.41's refusal, as WhisperX#1038 and open-webui#10575 quote it, and a non-CUDA library's (libffi#898).
EXECSTACK = (
    "ImportError: libctranslate2-d3638643.so.4.4.0: cannot enable executable stack as shared object requires: Invalid argument"
)


def test_executable_stack_refused_by_new_glibc(tmp_path):
    found = paste_findings(tmp_path, EXECSTACK)
    assert codes(found) == ["library-requires-executable-stack"]
    f = found[0]
    assert f["evidence"]["library"] == "libctranslate2-d3638643.so.4.4.0"
    assert any("patchelf --clear-execstack" in c for c in f["fix"]["commands"])
    assert any("ctranslate2" in c for c in f["fix"]["commands"])
    ffi = "ImportError: libffi.so.8: cannot enable executable stack as shared object requires: Invalid argument"
    other = paste_findings(tmp_path, ffi)
    assert codes(other) == ["library-requires-executable-stack"]
    assert not any("ctranslate2" in c for c in other[0]["fix"]["commands"])


def test_windows_cudnn_dll_not_found_outside_torch_is_a_missing_library(tmp_path):
    for said in (
        "Additional information: Unable to load DLL 'cudnn64_6.dll': The specified module could not be found. "
        "(Exception from HRESULT: 0x8007007E)",
        "Message=[ErrorCode:NoSuchFile] kernel32.LoadLibrary():'cudnn64_7.dll' not found. CUDA is required for GPU execution.",
    ):
        found = codes(paste_findings(tmp_path, said))
        assert found == ["cuda-library-missing"], (said, found)


# isaac-sim/IsaacSim#646's form (trimmed) and #517's Windows crash after a driver update.
ISAAC_595 = """Issac Sim crashing at start - Driver version 595.71.05
### Isaac Sim version

5.1.0

### GPU Driver and CUDA versions

Driver 595.71.05, CUDA 13.2
Fatal Python error: Segmentation fault
"""


def test_isaac_sim_on_a_driver_branch_newer_than_validated(tmp_path):
    found = paste_findings(tmp_path, ISAAC_595)
    sev = severities(found)
    assert sev.get("driver-regression") == "warning"
    f = next(f for f in found if f["code"] == "driver-regression")
    assert "580.65.06" in f["title"] and f["evidence"]["driver"] == "595.71.05"
    # Windows (a .dll in the crash) gets the Windows validated driver.
    win = paste_findings(tmp_path, "Isaac Sim 5.1 driver 595.79\n000: rtx.scenedb.plugin.dll!carbOnPluginStartup+0x252db\n")
    assert "580.88" in next(f for f in win if f["code"] == "driver-regression")["title"]
    # The validated branch itself, or an Isaac Sim release the table does not list, says nothing of the kind.
    assert "driver-regression" not in codes(paste_findings(tmp_path, ISAAC_595.replace("595.71.05", "580.65.06")))
    assert "driver-regression" not in codes(paste_findings(tmp_path, ISAAC_595.replace("5.1.0", "6.0.0")))


def test_a_crash_after_updating_the_nvidia_drivers_is_a_likely_regression(tmp_path):
    found = paste_findings(tmp_path, "Crash after updating the nvidia drivers\n012: omni.usd.dll!gpu::realm+0x731e\n")
    assert severities(found).get("driver-regression") == "warning"


def test_tf_nightly_named_without_a_version_is_read(tmp_path):
    # b232-05's paste crashed the prose reader: "tf-nightly" matched TensorFlow's pattern with no version (a TypeError).
    text = "TensorFlow 2.2: loading the SavedModel takes 10 minutes on the GPU.\nI will give the tf-nightly a try.\n"
    found = paste_findings(tmp_path, text)
    assert "check-crashed" not in codes(found, ("error", "warning", "info"))


def test_a_slow_first_cuda_use_in_words_is_a_likely_ptx_jit(tmp_path):
    for said in (
        "invoking cuda() takes a long time",
        "Takes 5 minutes to get back from .cuda()",
        "NCCL uses old(?) CUDA ARCH, causing very slow startup",
        "First load time in Nvidia Jetson AGX Xavier and Orin is more than 10 minutes",
        "index_cpu_to_all_gpus is very slow for the first time",
    ):
        found = paste_findings(tmp_path, said)
        assert severities(found).get("ptx-jit-on-first-cuda-call") == "warning", said
    # A slow CPU job is no JIT; a slow driver start is persistence (below), not JIT.
    assert "ptx-jit-on-first-cuda-call" not in codes(paste_findings(tmp_path, "pip install takes a long time"))


def test_a_slow_driver_start_is_likely_persistence_off(tmp_path):
    for said in (
        "nvidia-container-cli: initialization error: driver error: timed out",
        "this function call takes **cuInit time: 6557046 us**. this call should be about 500ms",
        "nvidia-smi takes forever without it",
    ):
        found = paste_findings(tmp_path, said)
        assert severities(found).get("persistence-mode-off") == "warning", said
        assert "ptx-jit-on-first-cuda-call" not in codes(found)
    # Windows has no persistence mode to turn on.
    assert "persistence-mode-off" not in codes(paste_findings(tmp_path, "OS: Windows 11\nnvidia-smi takes forever to run"))


def test_torchao_skipping_its_extensions_names_torchao_and_the_pair(tmp_path):
    old = (
        "Skipping import of cpp extensions due to incompatible torch version 2.7.1+cu128 for torchao version 0.15.0 "
        "Please see https://github.com/pytorch/ao/issues/2919 for more info"
    )
    f = next(x for x in paste_findings(tmp_path, old) if x["code"] == "extension-abi-mismatch")
    assert f["title"].startswith("torchao 0.15.0 was built for another torch") and "2.7.1+cu128" in f["title"]
    assert any('"torchao<0.15.0"' in c for c in f["fix"]["commands"])
    new = "Skipping import of cpp extensions due to incompatible torch version. Please upgrade to torch >= 2.11.0 (found 2.9.1+cu128)."
    f = next(x for x in paste_findings(tmp_path, new) if x["code"] == "extension-abi-mismatch")
    assert "(2.9.1+cu128)" in f["title"] and "needs torch >= 2.11.0" in f["title"]


def test_nvml_memory_query_unsupported_on_unified_memory_gpus(tmp_path):
    text = "Hardware: NVIDIA DGX Spark (GB10)\nerror getting device memory: Not Supported\n"
    found = paste_findings(tmp_path, text)
    sev = severities(found)
    assert sev.get("nvml-query-not-supported") == "warning"
    assert "unified memory" in next(f for f in found if f["code"] == "nvml-query-not-supported")["title"]
    # NVML answered a query: the driver serves the GPU, so no open-module doubt; no torch in the report, no torch claim.
    assert "open-kernel-module-required" not in sev and "gpu-arch-unsupported" not in sev
    for said in ("nvmlDeviceGetMemoryInfo() returns Not Supported", 'GetMemoryInfo returns "Not Supported"'):
        assert "nvml-query-not-supported" in codes(paste_findings(tmp_path, said)), said


def test_dch_drivers_have_no_nvsmi_folder(tmp_path):
    for said in (
        "Windows10 DCH drivers don't contain nvsmi",
        "NVSMI/nvml is missing with latest nvidia drivers - Bminer fix",
        "'C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe' is not recognized as an internal or external "
        "command, operable program or batch file.",
    ):
        assert codes(paste_findings(tmp_path, said)) == ["nvsmi-folder-missing"], said
    # nvidia-smi itself failing is another matter.
    assert "nvsmi-folder-missing" not in codes(
        paste_findings(tmp_path, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    )


# docker/for-win#13332 (4.17.1) and #11409 (3.3.3), trimmed.
DD_4171 = """4.17.1 bug with --gpus=all
docker run --gpus=all hello-world hangs, without --gpus it runs.
  - Windows Version: 11
  - Docker Desktop Version: 4.17.1
"""


def test_docker_desktop_release_known_to_break_gpu_containers(tmp_path):
    found = paste_findings(tmp_path, DD_4171)
    f = next(f for f in found if f["code"] == "docker-desktop-gpu-regression")
    assert "4.17.1" in f["title"] and "4.17.0" in f["title"]
    old = "docker desktop with wsl2 and nvidia cuda dose not work\nworks with version 3.3.0 but not with 3.3.3\n"
    assert "docker-desktop-gpu-regression" in codes(paste_findings(tmp_path, old))
    # A release not listed, or no GPU in the report, says nothing.
    assert "docker-desktop-gpu-regression" not in codes(paste_findings(tmp_path, DD_4171.replace("4.17.1", "4.18.0")))
    assert "docker-desktop-gpu-regression" not in codes(
        paste_findings(tmp_path, "Docker Desktop 4.17.1: the volume mount is read-only\n")
    )


def test_colmap_built_without_cuda_and_programs_finding_no_cuda_device(tmp_path):
    for said in (
        "WARNING: Skipping dense reconstruction because CUDA is not available",
        "WARNING: Skipping patch match stereo because CUDA is not available.",
        "Dense stereo reconstruction requires CUDA, which is not available on your system",
    ):
        f = next(x for x in paste_findings(tmp_path, said) if x["code"] == "companion-cpu-only-build")
        assert f["title"].startswith("COLMAP is its CPU-only build"), said
    # COLMAP's device check on a Mac: no CUDA there at all (the title does not talk of torch).
    mac = "F0409 extraction.cc:132] Check failed: num_cuda_devices > 0 (0 vs. 0)\n- OS : macOS Mojave version 10.14.6\n"
    f = next(x for x in paste_findings(tmp_path, mac) if x["code"] == "non-nvidia-gpu")
    assert "torch" not in f["title"]


def test_cdi_spec_stale_after_a_driver_update(tmp_path):
    text = (
        "After the NVIDIA driver upgrade the container does not start:\n"
        "Error: crun: cannot stat `/lib64/libEGL_nvidia.so.550.54.14`: No such file or directory: OCI runtime attempted "
        "to invoke a command that was not found\n"
    )
    found = paste_findings(tmp_path, text)
    f = next(x for x in found if x["code"] == "cdi-spec-stale")
    assert "libEGL_nvidia.so.550.54.14" in f["title"]
    assert any("nvidia-ctk cdi generate" in c for c in f["fix"]["commands"])
    assert "driver-regression" not in codes(found)  # the update's effect is the stale spec, not a driver bug


def test_cdi_spec_newer_than_the_engine_reads(tmp_path):
    said = (
        'failed to load CDI Spec failed to parse CDI Spec "/etc/cdi/nvidia.yaml": failed to unmarshal CDI Spec: error '
        'unmarshaling JSON: while decoding JSON: json: unknown field "additionalGids"'
    )
    f = next(x for x in paste_findings(tmp_path, said) if x["code"] == "cdi-spec-version-unsupported")
    assert "additionalGids" in f["title"]


def test_triton_not_the_release_torch_was_built_with(tmp_path):
    key = (
        '  File "/usr/local/lib/python3.10/dist-packages/torch/_inductor/codecache.py", line 166, in get_system\n'
        "    from triton.compiler.compiler import triton_key\n"
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
        "(/usr/local/lib/python3.10/dist-packages/triton/compiler/compiler.py)\n"
    )
    f = next(x for x in paste_findings(tmp_path, key) if x["code"] == "triton-version-mismatch")
    assert "triton_key" in f["title"] and "torch's Inductor" in f["title"]
    win = (
        "ImportError: cannot import name 'AttrsDescriptor' from 'triton.compiler.compiler' "
        "(G:\\pinokio\\api\\wan.git\\app\\env\\lib\\site-packages\\triton\\compiler\\compiler.py)\n"
    )
    f = next(x for x in paste_findings(tmp_path, win) if x["code"] == "triton-version-mismatch")
    assert any("triton-windows" in c for c in f["fix"]["commands"])
    # Triton missing altogether is not this.
    assert "triton-version-mismatch" not in codes(paste_findings(tmp_path, "ModuleNotFoundError: No module named 'triton'"))


def test_a_driver_call_followed_by_its_status_number(tmp_path):
    # hashcat on NixOS (NixOS/nixpkgs#310234): the driver API call and the CUresult it returned, 34 = CUDA_ERROR_STUB_LIBRARY.
    assert "stub-libcuda" in codes(paste_findings(tmp_path, "cuDriverGetVersion(): 34\n"))
    assert "stub-libcuda" not in codes(paste_findings(tmp_path, "cuDriverGetVersion(): 12040\n"))  # a version, not a status


def test_implicit_without_its_cuda_extension(tmp_path):
    said = "raise ValueError(\"No CUDA extension has been built, can't train on GPU.\")\nValueError: No CUDA extension has been built, can't train on GPU.\n"
    f = next(x for x in paste_findings(tmp_path, said) if x["code"] == "companion-cpu-only-build")
    assert f["title"].startswith("implicit is its CPU-only build")
    assert any("implicit-proc=*=gpu" in c for c in f["fix"]["commands"])


def test_autogptq_kernels_missing_at_the_first_matmul(tmp_path):
    said = "NameError: name 'autogptq_cuda_256' is not defined"
    assert "extension-built-without-cuda" in codes(paste_findings(tmp_path, said))


def test_an_amd64_image_on_an_arm64_host(tmp_path):
    said = (
        "WARNING: The requested image's platform (linux/amd64) does not match the detected host platform (linux/arm64/v8) "
        "and no specific platform was requested\nexec /usr/local/bin/xinference-local: exec format error\n"
    )
    f = next(x for x in paste_findings(tmp_path, said) if x["code"] == "container-image-wrong-cpu-arch")
    assert f["severity"] == "error" and "linux/arm64/v8" in f["title"]
    jetson = "Jetson Xavier NX\nstandard_init_linux.go:219: exec user process caused: exec format error\n"
    assert severities(paste_findings(tmp_path, jetson)).get("container-image-wrong-cpu-arch") == "warning"
    # exec format error with no ARM host in sight is something else (a script without its interpreter line, ...)
    assert "container-image-wrong-cpu-arch" not in codes(
        paste_findings(tmp_path, "standard_init_linux.go:219: exec user process caused: exec format error\n")
    )


def test_mps_daemon_out_of_reach(tmp_path):
    e805 = (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 805: MPS client failed to connect to the MPS "
        "control daemon or the MPS server."
    )
    assert severities(paste_findings(tmp_path, e805)).get("mps-connection-failed") == "error"
    enroot = (
        "Enroot with NVIDIA MPS?\nnvidia-cuda-mps-control -d\n"
        "ERROR: The NVIDIA Driver is present, but CUDA failed to initialize.  GPU functionality will not be available.\n"
        "   [[ Mapping of buffer object failed (error 205) ]]\n"
    )
    assert severities(paste_findings(tmp_path, enroot)).get("mps-connection-failed") == "warning"
    assert "mps-connection-failed" not in codes(paste_findings(tmp_path, enroot.replace("nvidia-cuda-mps-control -d\n", "")))
