"""Session 22 (issue 21), classes found in blind batches b119-b126 after their first sight was frozen, each with real
thread texts (sources beside them; wordings in kb/errors/b22.json): a build whose CUDA predates the GPU seen as a CUDA
library's status failure (kb/cuda_arch_support.json); cuBLAS's INVALID_VALUE on a plain GEMM (another cuBLAS loaded);
a CUDA extension linked against a CPU-only torch; a torch extension imported before torch."""

from __future__ import annotations

from checkcli import codes, paste_findings, run_check, severities, write

from cudadoctor import kb

# AlexeyAB/darknet (b121-03, trimmed): the same build works on a GTX 1050 Ti, fails on an RTX 2070; CUDA 9.0.
DARKNET_2070 = """RTX 2070 cuDNN Error: CUDNN_STATUS_EXECUTION_FAILED
On the setup with GTX 1050Ti, everything works perfectly. Yet, when I switch to RTX 2070 card, I've got the following error:
 cuDNN status Error in: file: d:/tests/darknet/src/convolutional_kernels.cu : forward_convolutional_layer_gpu() : line: 471
 cuDNN Error: CUDNN_STATUS_EXECUTION_FAILED
- Windows 10
- CUDA 9.0.176
- cuDNN 7.2
- Nvidia driver 419.67
"""

# UFold (b121-08, its paste with the GPU the facts record): torch 1.4.0 on an RTX 3090 (written "GTX 3090").
UFOLD_3090 = """RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED
My version information is as below:
GPU: GTX 3090
pytorch=1.4.0
python=3.6.6
"""

# qinzheng93/GeoTransformer (b121-16's class, with the README's environment the reporter followed): torch 1.7.1 cu110.
GEOTR_4080 = """torch 1.7.1+cu110, GPU: NVIDIA GeForce RTX 4080
RuntimeError: CUDA error: operation not supported when calling `cusparseCreate(handle)`
"""

# vllm-project/vllm#35608 (b121-14): solved by `unset LD_LIBRARY_PATH`.
VLLM_GEMMEX = """[Bug]: vllm 0.16.0+image encountered CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx
Encountered RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, opa, opb, m, n, k, alpha_ptr, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, beta_ptr, c, std::is_same_v<C_Dtype, float> ? CUDA_R_32F : CUDA_R_16F, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)` when deploying Qwen3.5-122B
"""
# Fictionarry/TalkingGaussian#14: the same status on cublasSgemm, fixed by unsetting LD_LIBRARY_PATH / matching CUDA.
TALKING_SGEMM = """RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"""
# b51-06 (healthy: a sample's class count was wrong): the bare status, no GEMM named.
BOOK_BARE = "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE\n"

# ashawkey/torch-ngp#200 (b124-11): the extension's link step on Windows; the torch was a CPU build.
NGP_LNK = """compiling shencoder on windows with cuda 12.5 in windows
first error:LINK : fatal error LNK1181: cannot open input file 'c10_cuda.lib'
use Everything to find file, discover it doesn't exist anywhere on the computer
"""
LD_C10_CUDA = "/usr/bin/ld: cannot find -lc10_cuda: No such file or directory\ncollect2: error: ld returned 1 exit status\n"

# pytorch/pytorch#6097 (b126-05) and pytorch/extension-cpp#6 (b18-06): fixed by importing torch first.
THP_6097 = """undefined symbol: THPVariableClass
I followed the tutorial on cpp_extension. After installing, `import lltm` gives
ImportError: /home/user/.local/lib/python3.6/site-packages/lltm.cpython-36m-x86_64-linux-gnu.so: undefined symbol: THPVariableClass
"""
# lufficc/SSD#125's class: another torch symbol, the extension imported first in the snippet.
SSD_ORDER = """>>> import torch_extension
ImportError: torch_extension.so: undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE
"""
# The same symbol with torch imported first: a build for another torch, not the import order.
SSD_AFTER = """>>> import torch
>>> import torch_extension
ImportError: torch_extension.so: undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE
"""


def test_the_first_cuda_of_each_architecture_bounds_what_a_build_can_run():
    assert kb.first_cuda_of_arch("sm_86") == "11.1" and kb.first_cuda_of_arch("sm_120") == "12.8"
    assert kb.archs_of_cuda("10.1")[-1] == "sm_75" and kb.archs_of_cuda("11.0")[-1] == "sm_80"
    assert kb.archs_of_cuda("6.5") is None and kb.archs_of_cuda("not a version") is None


def test_a_geforce_series_written_with_the_other_prefix_is_read_as_the_series():
    assert kb.compute_capability("GTX 3090") == "8.6" and kb.compute_capability("RTX 1080") == "6.1"
    assert kb.compute_capability("GTX 1650") == "7.5"  # a real GTX of the 16 series stays itself


def test_a_program_built_with_a_cuda_older_than_the_gpu_fails_in_cudnn(tmp_path):
    found = paste_findings(tmp_path, DARKNET_2070)
    assert severities(found).get("companion-arch-unsupported") == "warning"
    title = next(f["title"] for f in found if f["code"] == "companion-arch-unsupported")
    assert "CUDA 9.0" in title and "sm_75" in title and "10.0" in title
    # the GTX 1050 Ti alone (sm_61, CUDA 8.0 on) is not newer than CUDA 9.0: no claim
    assert "companion-arch-unsupported" not in codes(paste_findings(tmp_path, DARKNET_2070.replace("RTX 2070", "GTX 1050 Ti")))


def test_an_old_torch_release_on_a_newer_gpu_is_an_architecture_error(tmp_path):
    assert severities(paste_findings(tmp_path, UFOLD_3090)).get("gpu-arch-unsupported") == "error"


def test_torchs_cuda_libraries_older_than_the_gpu_are_a_likely_cause(tmp_path):
    found = paste_findings(tmp_path, GEOTR_4080)
    assert severities(found).get("gpu-arch-unsupported") == "warning"
    fix = next(f["fix"]["commands"] for f in found if f["code"] == "gpu-arch-unsupported")
    assert "1.7.1" not in " ".join(fix)  # a current build, not the same release again
    # a CUDA 11.8 build on an RTX 4090 (sm_89 is in 11.8): the same status names no architecture cause
    text = "torch 2.1.0+cu118 on RTX 4090\nRuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"
    assert "gpu-arch-unsupported" not in codes(paste_findings(tmp_path, text))


def test_cublas_invalid_value_on_a_gemm_is_a_likely_foreign_cublas(tmp_path):
    for text in (VLLM_GEMMEX, TALKING_SGEMM):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("library-shadowing") == "warning", text[:50]
        assert any("unset LD_LIBRARY_PATH" in c for f in found if f["code"] == "library-shadowing" for c in f["fix"]["commands"])
    assert "library-shadowing" not in codes(paste_findings(tmp_path, BOOK_BARE))


def test_an_extension_link_step_missing_torchs_cuda_libraries_means_a_cpu_torch(tmp_path):
    for text in (NGP_LNK, LD_C10_CUDA):
        assert "cpu-only-torch" in codes(paste_findings(tmp_path, text)), text[:40]


def test_an_extension_imported_before_torch(tmp_path):
    for text in (THP_6097, SSD_ORDER):
        assert severities(paste_findings(tmp_path, text)).get("extension-imported-before-torch") == "warning", text[:40]
    assert "extension-imported-before-torch" not in codes(paste_findings(tmp_path, SSD_AFTER))


# comfyanonymous/ComfyUI (b130-03): the allocator named only in ComfyUI's "Device:" line, in the prose before the error.
COMFY_M40 = """CUDA error: operation not supported

I use M40 graphics card.
```
Device: cuda:0 Tesla M40 24GB : cudaMallocAsync
```
And I met this error.
```
Error occurred when executing KSampler:

CUDA error: operation not supported
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
```
"""
# comfyanonymous/ComfyUI (b130-04, trimmed): at start-up, ComfyUI's default allocator; the report names no allocator.
COMFY_START = """RuntimeError: CUDA error: operation not supported
I am unable to get ComfyUI running on my GPU - it has 16GB VRAM and I am getting the following error:
C:\\ComfyUI>python main.py
  File "C:\\ComfyUI\\main.py", line 74, in <module>
  File "C:\\ComfyUI\\comfy\\model_management.py", line 118, in get_total_memory
    _, mem_total_cuda = torch.cuda.mem_get_info(dev)
RuntimeError: CUDA error: operation not supported
"""


def test_comfyuis_async_allocator_read_from_its_device_line_or_its_default(tmp_path):
    for text in (COMFY_M40, COMFY_START):
        assert severities(paste_findings(tmp_path, text)).get("cuda-malloc-async-unsupported") == "warning", text[:40]
    # the same error with another program and no allocator named: not this class
    other = COMFY_START.replace("ComfyUI", "myapp")
    assert "cuda-malloc-async-unsupported" not in codes(paste_findings(tmp_path, other))


# rwth-i6/returnn#1802 (b129-12): the CI's collect_env after the failure, and the error.
RETURNN_ENV = """Collecting environment information...
PyTorch version: Could not collect
OS: Linux
Python version: 3.10
Versions of relevant libraries:
[pip3] nvidia-nccl-cu11==2.14.3
[pip3] nvidia-nccl-cu12==2.27.3
[pip3] torch==2.9.1
"""
RETURNN_ERR = (
    "ImportError: /home/runner/.local/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree\n"
)


def test_nvidia_wheels_of_two_cuda_majors_explain_an_undefined_nccl_symbol(tmp_path):
    env = write(tmp_path, RETURNN_ENV, "env.txt")
    err = write(tmp_path, RETURNN_ERR, "err.txt")
    found = run_check("--from-collect-env", str(env), "--error-file", str(err))
    assert severities(found).get("nvidia-wheel-version-conflict") == "error"
    assert "library-shadowing" not in codes(found)  # the conflict explains the symbol: one cause, one fix
    title = next(f["title"] for f in found if f["code"] == "nvidia-wheel-version-conflict")
    assert "cu11 2.14.3" in title and "cu12 2.27.3" in title
    # one major only: nothing to say; the undefined symbol alone stays library-shadowing's
    one = write(tmp_path, RETURNN_ENV.replace("[pip3] nvidia-nccl-cu11==2.14.3\n", ""), "one.txt")
    found = run_check("--from-collect-env", str(one), "--error-file", str(err))
    assert "nvidia-wheel-version-conflict" not in codes(found) and "library-shadowing" in codes(found)


# triton-lang/triton#1955 (b128-02): CUDA's words without Triton's prefix; Triton named only in the clone command.
TRITON_SOURCE = """After build from source, Error occured "device kernel image is invalid"
I tried on V100, cuda 11.7.
```
git clone https://github.com/openai/triton.git;
cd triton/python;
pip install .
```
After Installing, I tried to run [06-fused-attention.py] and I met error in **runtime** `device kernel image is invalid ~`
"""


def test_an_invalid_kernel_image_in_a_triton_report_is_tritons_ptxas_against_the_driver(tmp_path):
    assert severities(paste_findings(tmp_path, TRITON_SOURCE)).get("driver-too-old") == "warning"
    # the same words with no Triton anywhere: CUDA's generic message names no cause
    plain = "RuntimeError: CUDA error: device kernel image is invalid\n"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, plain))


# NVIDIA/k8s-device-plugin#23 (b119-03): fixed by making nvidia the default runtime; #194: the plugin's own hint.
K8S_NVML = """Failed to start nvml with error
I install nvidia-docker2, and deploment device plugin in kubernetes 1.8, but kubectl describe pods, I get the error.
loading NVML
Failed to start nvml with error:  could not load NVML library
"""
K8S_NVML_194 = """2020/09/06 06:36:14 Loading NVML
2020/09/06 06:36:14 Failed to initialize NVML: could not load NVML library.
2020/09/06 06:36:14 If this is a GPU node, did you set the docker default runtime to `nvidia`?
"""


def test_the_device_plugin_without_nvml_is_the_nodes_default_runtime(tmp_path):
    for text in (K8S_NVML, K8S_NVML_194):
        found = paste_findings(tmp_path, text)
        assert "container-toolkit-missing" in codes(found), text[:40]
        fix = " ".join(c for f in found if f["code"] == "container-toolkit-missing" for c in f["fix"]["commands"])
        assert "--set-as-default" in fix


# conda/conda#13129 (b133-02) and ultralytics/ultralytics#4335 (b130-07): a conda install swapped torch's CUDA build out.
OPENCV_SWAP = """Installing opencv by conda makes pytorch CUDA not available
After installing opencv by this command though conda, pytorch cuda is not available anymore:
conda install -c conda-forge opencv
This command replaced the CUDA-enabled pytorch with CPU-enabled-only pytroch:
(mouse) $ python -c "import torch; print(torch.cuda.is_available())"
False
"""
ULTRA_SWAP = """Conda Install Bug
Installing ultralytics with conda leads to an error where torch's CUDA is no longer enabled, even if it was previously downloaded with CUDA enabled (also using conda).
"""


def test_a_conda_install_that_swapped_torchs_cuda_build_out_is_a_cpu_torch(tmp_path):
    for text in (OPENCV_SWAP, ULTRA_SWAP):
        assert "cpu-only-torch" in codes(paste_findings(tmp_path, text)), text[:40]


# conda-forge/pytorch-cpu-feedstock#364 (b136-12) and fieldsoftheworld/ftw-baselines#117 (b136-13).
MICROMAMBA_NO_CUDA = """I am trying to install pytorch with CUDA supports on the login node of our cluster (without any GPUs) using `micromamba install -c conda-forge pytorch "libtorch=*=cuda12*"`, where I encounter a huge trace, but my hunch for the most important error raised while solving the installation is this tiny line `__cuda =* *, which is missing on the system;`
"""
PIXI_NO_CUDA = """Virtual package '__cuda' does not match any of the available virtual packages
    ╰─▶ Virtual package '__cuda' does not match any of the available virtual packages on your machine: [__archspec=1=zen2, __glibc=2.39=0, __unix=0=0, __linux=6.11.0=0]
    help:  You can mock the virtual package by overriding the environment variable, e.g.: '`CONDA_OVERRIDE_CUDA=12.0`'
"""


def test_condas_missing_cuda_virtual_package_is_named_with_its_override(tmp_path):
    for text in (MICROMAMBA_NO_CUDA, PIXI_NO_CUDA):
        found = paste_findings(tmp_path, text)
        assert "conda-cuda-virtual-package-missing" in codes(found), text[:40]
        fix = " ".join(c for f in found if f["code"] == "conda-cuda-virtual-package-missing" for c in f["fix"]["commands"])
        assert "CONDA_OVERRIDE_CUDA=" in fix


# stevezzau/plex_generate_vid_previews (b135-04): the documented command without --gpus; the app finds no GPU.
PLEX_NO_GPUS = """Docker command to check GPUs is missing the `--gpus all` flag
```
❯ docker run --rm stevezzau/plex_generate_vid_previews:latest --list-gpus
2025/12/23 15:39:05 | ℹ  -     Testing CUDA acceleration...
2025/12/23 15:39:05 | ⚠  -   ⚠  card1: NVIDIA CUDA test failed
2025/12/23 15:39:05 | ℹ  - ❌ No GPUs detected
```
"""


def test_a_container_started_without_gpus_whose_program_finds_none(tmp_path):
    assert "no-gpu-visible" in codes(paste_findings(tmp_path, PLEX_NO_GPUS))
    with_gpus = PLEX_NO_GPUS.replace("docker run --rm", "docker run --rm --gpus all")
    assert "no-gpu-visible" not in codes(paste_findings(tmp_path, with_gpus))


# NVIDIA/nvidia-docker#973 (b135-09): nvidia-docker2 without libnvidia-container-tools.
NO_CONTAINER_CLI = """couldn't find binary nvidia-container-cli
I installed nvidia-docker2, but when run 'docker run --runtime=nvidia --rm nvidia/cuda:9.0-base nvidia-smi', it says can't find nvidia-container-cli.
where can i get nvidia-container-cli?
"""
# NVIDIA/k8s-driver-manager#37 (b135-08, trimmed): the GPU Operator's driver container on a machine running nouveau.
NOUVEAU_STATED = """RedHat9.2 exec k8s-driver-manager error
I use `gpu-operator:v23.9.0` to install nvidia gpu driver, but `nvidia-driver-daemonset` pod start after, the machine will kernel crash.
machine is install `nouveau` driver, and i use `dmesg` command to look kernel log, found having many error about `nouveau`
"""


def test_a_partial_container_toolkit_and_a_machine_running_nouveau(tmp_path):
    assert "container-toolkit-missing" in codes(paste_findings(tmp_path, NO_CONTAINER_CLI))
    assert "nouveau-bound" in codes(paste_findings(tmp_path, NOUVEAU_STATED))
    # nouveau named only as something removed: not a claim that it holds the GPU
    removed = "I blacklisted nouveau and rebooted; nvidia-smi: command not found\n"
    assert "nouveau-bound" not in codes(paste_findings(tmp_path, removed))


# negativo17/nvidia-driver#97 (b139-02): after a distribution upgrade, the module built for the old kernel.
VERSION_MAGIC = """Magic is not identical to kernel version
I upgraded to Fedora 31 today, and the nvidia driver did not follow the journey with me. Trying to load the module resulted in
````
could not insert 'nvidia': Exec format error
````
dmesg reported
````
nvidia: version magic '5.4.18-100.fc30.x86_64 SMP mod_unload ' should be '5.4.18-200.fc31.x86_64 SMP mod_unload '
````
"""
# ollama/ollama#1888 (b138-06, trimmed): NVML's "Driver Not Loaded" under WSL, stated in prose.
OLLAMA_WSL_NVML = """nvmlInit_v2 unable to detect Nvidia GPU in WSL
Ollama has switched to using NVML to detect the Nvidia environment. However, this method failed on WSL.
The `nvmlReturn_t` returns 9 [NVML_ERROR_DRIVER_NOT_LOADED = 9]. This may make sense according to the implementation of Nvidia in WSL as it use the driver from Windows host.
"""


def test_a_module_built_for_another_kernel_and_a_linux_driver_inside_wsl(tmp_path):
    assert "kernel-module-missing" in codes(paste_findings(tmp_path, VERSION_MAGIC))
    assert "wsl-driver-in-guest" in codes(paste_findings(tmp_path, OLLAMA_WSL_NVML))
    # the same NVML status on a Linux host (no WSL named): not a WSL guest driver
    host = OLLAMA_WSL_NVML.replace(" in WSL", " on Ubuntu 22.04").replace("failed on WSL", "failed").replace(" in WSL as", " as")
    assert "wsl-driver-in-guest" not in codes(paste_findings(tmp_path, host))


# microsoft/WSL (b140-06): the issue template's `ver` line without a space, Windows 10 21H1 (19043) with WSL 2.
WSL_19043 = """can not find GPU by lspci
### Windows Build Number

Microsoft Windows [version10.0.19043.1200]

### WSL Version

- [X] WSL 2
- [ ] WSL 1
"""


def test_the_windows_build_from_ver_in_any_spacing_or_language(tmp_path):
    assert "wsl-gpu-unsupported" in codes(paste_findings(tmp_path, WSL_19043))
    zh = WSL_19043.replace("[version10.0.19043.1200]", "[版本 10.0.19043.1200]")
    assert "wsl-gpu-unsupported" in codes(paste_findings(tmp_path, zh))
    new = WSL_19043.replace("19043", "19045")  # 22H2: GPU support in WSL
    assert "wsl-gpu-unsupported" not in codes(paste_findings(tmp_path, new))


# castorini/howl#34 (b143-11) and Akegarasu/lora-scripts#375 (b143-10): pip's words for a pair that is not a release pair.
PIP_POST_CHECK = "ERROR: torchvision 0.6.1 has requirement torch==1.5.1, but you'll have torch 1.5.0 which is incompatible.\n"
PIP_RESOLVER = (
    "ERROR: Cannot install torch==2.2.1+cu118 and torchvision==0.16.1+cu118 because these package versions have "
    "conflicting dependencies.\n"
)
# pytorch/audio#2610 (b143-19): macOS's words for torchaudio's undefined torch symbol.
MAC_TORCHAUDIO = (
    "OSError: dlopen(/Users/me/miniforge3/lib/python3.9/site-packages/torchaudio/lib/libtorchaudio.so, 0x0006): "
    "Symbol not found: __ZN2at14RecordFunctionC1ENS_11RecordScopeEb\n"
)
# pytorch/pytorch#21477 (b143-04): torchvision's _C built for CUDA 9.0 beside a CUDA 10 torch.
TV_CUDART = """  File "/scratch/env/lib/python3.7/site-packages/torchvision/ops/boxes.py", line 2, in <module>
    from torchvision import _C
ImportError: libcudart.so.9.0: cannot open shared object file: No such file or directory
"""
# xuhuisheng/rocm-gfx803#15 and Comfy-Org/ComfyUI#2775 (b143-15, b143-16): torchvision's own image-extension warning.
TV_IMAGE = "UserWarning: Failed to load image Python extension: 'dlopen(image.so, 0x0006): Symbol not found'\n"


def test_companions_not_paired_with_torch_in_pips_macos_and_torchvisions_words(tmp_path):
    for text in (PIP_POST_CHECK, PIP_RESOLVER, MAC_TORCHAUDIO, TV_CUDART, TV_IMAGE):
        assert "torchvision-mismatch" in codes(paste_findings(tmp_path, text)), text[:50]
    # torchvision's missing cudart is torchvision's build, not a CUDA library to install
    assert "cuda-library-missing" not in codes(paste_findings(tmp_path, TV_CUDART))
    # a pip conflict between other packages names no torch companion
    other = (
        "ERROR: Cannot install numpy==1.24.0 and scipy==1.13.0 because these package versions have conflicting dependencies.\n"
    )
    assert "torchvision-mismatch" not in codes(paste_findings(tmp_path, other))


# dsymbol/decipher#8 (b148-09) and effusiveperiscope/so-vits-svc#22 (b148-07): the programs' own words for running on the CPU.
WHISPER_CPU = "decipher on my RTX 3060\nUserWarning: FP16 is not supported on CPU; using FP32 instead\n"
SOVITS_CPU = "Training on Windows 10 with CUDA 12.1 installed fails:\nAssertionError: CPU training is not allowed.\n"


def test_programs_saying_they_run_on_the_cpu(tmp_path):
    for text in (WHISPER_CPU, SOVITS_CPU):
        assert "cpu-only-torch" in codes(paste_findings(tmp_path, text)), text[:40]


# shirayu/whispering (b29-19, healthy): the same warning with the program started on the CPU on purpose.
WHISPERING_CHOSEN = """FP16-fp32 argument for using --device cpu
Got error :
transcriber._set_dtype:35 WARNING -> FP16 is not supported on CPU; using FP32 instead
when running :
whispering --language fr --model tiny --device cpu
"""


def test_a_program_on_the_cpu_by_the_users_choice_is_not_a_cpu_torch(tmp_path):
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, WHISPERING_CHOSEN))


# thezveroboy/ComfyUI-CSM-Nodes#4 (b146-03) and PierrunoYT/Kokoro-TTS-Local#17 (b148-08): the reporters' words.
CSM_REPLACED = "installing dependencies broke my comfy\ni installed on my audio focused comfy, and its replaced torch with one that isnt compiled with cuda\n"
KOKORO_REQS = "However, I noticed it had torch listed in requirements.txt, but it doesn't install support for CUDA.\n"


def test_the_reporters_words_for_a_torch_without_cuda(tmp_path):
    for text in (CSM_REPLACED, KOKORO_REQS):
        assert "cpu-only-torch" in codes(paste_findings(tmp_path, text)), text[:40]
    # CUDA named as what a package does support: no claim
    fine = "torch 2.5 installs with CUDA support on this machine; is_available() is True\n"
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, fine))
