"""Session 20 (issue 21), classes found in blind batches b81-b99 after their first sight was frozen, each with real
thread texts (sources beside them; wordings in kb/errors/b20.json): CUDA's error 35 in a container whose host driver runs
the program's CUDA; nvidia-smi finding no device with the nvidia module bound; "no kernel image" and NVRTC's refusal in a
report about another program with its own kernels; the CPU builds of Paddle and onnxruntime; XLA without libdevice;
GFPGAN's CPU warning; pynvml's error 18; RAPIDS's and GROMACS's generation checks; TensorRT's libraries; nvcc missing
at the default CUDA home; error 803 under an NGC image's banner; a terminal/IDE contrast; "runs on the CPU" on Windows."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

# SYSTRAN/faster-whisper#1229 (trimmed): faster-whisper in Docker on Unraid; the host driver 565.77 runs CUDA 12.7.
UNRAID_35 = """CUDA driver version insufficient for CUDA runtime version - error
I am getting the following error:

> RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version

When trying to install/run faster-whisper in a docker on my unraid server which has a P40 GPU.  The GPU information on my install is:

Nvidia Driver Version: 565.77
Open Source Kernel Module: No
Installed GPU(s):
0:
Tesla P40
"""

# SYSTRAN/faster-whisper#1259 (trimmed): the same error in a Kubernetes pod; the host's nvidia-smi banner.
K8S_35 = """CUDA version problem in container
I'm running the linuxserver/faster-whisper:gpu container within my k8s cluster.
Container runtime is nvidia, GPU is correctly attached.

Error:
`RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version`

Driver information on the host:
` NVIDIA-SMI 550.144.03             Driver Version: 550.144.03     CUDA Version: 12.4 `
"""

# e4s2022/e4s#25: a Clevo laptop; nvidia-smi finds nothing while lspci shows the nvidia module bound to the GPU.
CLEVO = """pythorch cuda problem.
/python3.8/site-packages/torch/cuda/__init__.py", line 190, in _lazy_init
    torch._C._cuda_init()
RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/aten/src/THC/THCGeneral.cpp:47
---
~/e4s$ nvidia-smi
No devices were found
(e4s) zzl@zzl-N960Kx:~/e4s$ lspci -k | grep -A 2 -E "(VGA|3D)"
00:02.0 VGA compatible controller: Intel Corporation Device 9bc5 (rev 05)
	Subsystem: CLEVO/KAPOK Computer Device 2112
	Kernel driver in use: i915
--
01:00.0 VGA compatible controller: NVIDIA Corporation Device 249d (rev ff)
	Kernel driver in use: nvidia
	Kernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
"""


def test_error_35_in_a_container_whose_host_driver_runs_cuda_12_is_a_container_without_the_gpu(tmp_path):
    for text, driver in ((UNRAID_35, "565.77"), (K8S_35, "550.144.03")):
        got = paste_findings(tmp_path, text)
        assert "driver-too-old" not in codes(got), got
        f = next(x for x in got if x["code"] == "no-gpu-visible")
        assert f["severity"] == "warning"
        assert driver in f["title"] and "without GPU access" in f["title"]


def test_error_35_in_a_container_with_an_old_host_driver_stays_driver_too_old(tmp_path):
    old = UNRAID_35.replace("565.77", "418.87.01")  # CUDA 10.1 at most: the image's CUDA 12 cannot run
    got = paste_findings(tmp_path, old)
    assert severities(got).get("driver-too-old") == "error", got


def test_error_35_outside_a_container_with_a_modern_driver_is_not_called_a_container(tmp_path):
    bare = UNRAID_35.replace("in a docker on my unraid server", "on my server")
    assert "no-gpu-visible" not in codes(paste_findings(tmp_path, bare))


def test_no_devices_with_the_nvidia_module_bound_is_a_gpu_the_driver_cannot_start(tmp_path):
    got = paste_findings(tmp_path, CLEVO)
    f = next(x for x in got if x["code"] == "gpu-init-failed")
    assert f["severity"] == "warning"
    assert "NVIDIA Corporation Device 249d" in f["evidence"]["lspci"]


def test_lspci_bound_to_nouveau_or_nvidia_smi_working_is_not_an_init_failure(tmp_path):
    nouveau = CLEVO.replace("Kernel driver in use: nvidia", "Kernel driver in use: nouveau")
    assert "gpu-init-failed" not in codes(paste_findings(tmp_path, nouveau))
    listed = CLEVO.replace("No devices were found", "GPU 0: NVIDIA GeForce RTX 3070 Laptop GPU (UUID: GPU-1b2c)")
    assert "gpu-init-failed" not in codes(paste_findings(tmp_path, listed))


def test_a_blackwell_gpu_bound_but_not_started_is_left_to_the_open_module_question(tmp_path):
    blackwell = CLEVO.replace("NVIDIA Corporation Device 249d", "NVIDIA Corporation GB202 [GeForce RTX 5090]")
    assert "gpu-init-failed" not in codes(paste_findings(tmp_path, blackwell))


# --- "no kernel image" from a program with its own kernels, torch named nowhere (kb/errors/b20.json own_kernel_programs)

# nanoporetech/dorado#59: dorado (a bundled libtorch of its own), named only in the reporter's sentence.
DORADO = """Error when basecalling
Hello,

when basecalling with dorado I get this error:
no kernel image is available for execution on the device

I really do not know what to do, I've tried to compile it with no luck.
Ubuntu 22.04, 1050gtx ti
"""

# NVIDIA/DIGITS#2146: Caffe in NGC's 19.01 container on a Tesla K80.
CAFFE_K80 = """19.01-caffe container doesn't support Tesla K80
Environment:
OS: CentOS
Driver: 410.79
CUDA Version: 10.0

Trivial Object Detection model training start results in:
`Caffe: Check failed: error == cudaSuccess (48 vs. 0) no kernel image is available for execution on the device`
"""

# ollama/ollama#12341 (trimmed): ollama 0.11 on a Quadro P2000, the error and the GPUs in the log block.
OLLAMA_P2000 = """With v0.11.x "CUDA error: no kernel image is available for execution on the device" shows up; w/ v0.10.1 not
### Relevant log output
```shell
OS is openSUSE Tumbleweed, ollama is installed from website.
  Model: "nVidia GP106GL [Quadro P2000]"
  Model: "nVidia GA102GL [RTX A5000]"
```
"""


def test_no_kernel_image_from_a_program_with_its_own_kernels_is_that_programs_build(tmp_path):
    for text in (DORADO, CAFFE_K80, OLLAMA_P2000):
        got = paste_findings(tmp_path, text)
        assert "companion-arch-unsupported" in codes(got), got
        assert "gpu-arch-unsupported" not in codes(got)[:1], got


def test_the_same_error_in_a_torch_report_stays_torchs(tmp_path):
    torch_report = OLLAMA_P2000.replace("ollama is installed from website", "torch 2.8.0+cu128 is installed from pip")
    torch_report = torch_report.replace("v0.11.x", "torch 2.8").replace("v0.10.1", "torch 2.7")
    assert codes(paste_findings(tmp_path, torch_report))[0] == "gpu-arch-unsupported"


# ollama/ollama#9124: a Tesla K80 (3.7) under Ollama, which supports compute capability 5.0 and newer.
OLLAMA_K80 = """can i use nvidia tesla k80 gpu run a model?
my server have 4 nvidia tesla k80 24gb gpu and 256gb mem, can i only use gpu run a model? ollama can't find my gpu and use cpu
### OS
Linux
### Ollama version
0.5.11
"""


def test_ollama_on_a_gpu_below_its_documented_minimum(tmp_path):
    f = next(x for x in paste_findings(tmp_path, OLLAMA_K80) if x["code"] == "companion-arch-unsupported")
    assert "ollama" in f["title"] and "5.0" in f["title"]
    newer = OLLAMA_K80.replace("tesla k80 24gb", "rtx 3060 12gb").replace("tesla k80", "rtx 3060")
    assert "companion-arch-unsupported" not in codes(paste_findings(tmp_path, newer))


# --- the CPU builds of Paddle and onnxruntime (kb/errors/b20.json (1), (2); checks/companions.cpu_build_alone) -----

# PaddlePaddle/Paddle#44531 and PaddlePaddle/PaddleGAN#243: Paddle's own refusals.
PADDLE_PYBIND = """E0721 22:36:11.350354 24760 pybind.cc:2342] Cannot use GPU because you have installed CPU version PaddlePaddle.
If you want to use GPU, please try to install GPU version PaddlePaddle by: pip install paddlepaddle-gpu
If you only have CPU, please change CUDAPlace(0) to be CPUPlace().
"""
PADDLE_SET_DEVICE = """  File "/Users/ming/.virtualenvs/padganvenv/lib/python3.8/site-packages/paddle/device.py", line 131, in set_device
    raise ValueError(
ValueError: The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA
"""
# YaoFANGUK/video-subtitle-extractor#207: the inference API's log line.
PADDLE_ENABLE_GPU = """(videoEnv) D:\\repos>python gui.py
Your Paddle Fluid is installed successfully! Let's start deep Learning with Paddle Fluid now
E0419 01:11:52.367136 14576 analysis_config.cc:91] Please compile with gpu to EnableGpu()
"""


def test_paddles_own_words_for_its_cpu_package(tmp_path):
    for text in (PADDLE_PYBIND, PADDLE_SET_DEVICE, PADDLE_ENABLE_GPU):
        assert "companion-cpu-only-build" in codes(paste_findings(tmp_path, text)), text


# facefusion/facefusion#118: the CUDA provider gone from the application's list.
FACEFUSION = """Can't find cuda or tensorrt in the execution provider tab
Cuda or Tensorrt are no more available as the execution providers after the latest update. I do have pytorch compiled with cuda 11.8 installed.
"""


def test_the_cuda_execution_provider_missing_in_the_reporters_words(tmp_path):
    assert codes(paste_findings(tmp_path, FACEFUSION))[0] == "companion-cpu-only-build"


# PaddlePaddle/PaddleOCR#16093 (trimmed): the CPU package pinned, a V100, inference on the CPU.
PADDLEOCR_CPU = """why paddleocr_v5 does not use gpu to inference???
paddleocr==3.1.0
paddlepaddle==3.1.0
use cpu for inference , has someone same problem? how to solve it?
Driver Version: 525.60.13
V100/16GB
"""


def test_the_cpu_package_alone_and_the_gpu_unused_is_the_cpu_build(tmp_path):
    f = next(x for x in paste_findings(tmp_path, PADDLEOCR_CPU) if x["code"] == "companion-cpu-only-build")
    assert f["severity"] == "warning" and "paddlepaddle-gpu" in f["title"]
    gpu = PADDLEOCR_CPU.replace("paddlepaddle==3.1.0", "paddlepaddle-gpu==3.1.0")
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, gpu))
    quiet = PADDLEOCR_CPU.replace("why paddleocr_v5 does not use gpu to inference???", "PaddleOCR versions").replace(
        "use cpu for inference , has someone same problem? how to solve it?", "inference is slow on long pages"
    )
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, quiet))


# --- NVRTC of another program's toolkit; GROMACS's own architecture check --------------------------------------------

# openmm/openmm#3756 (trimmed): OpenMM 7.7 from conda on a Quadro K2000 (Kepler), CUDA 11.4.
OPENMM_NVRTC = """CUDA platform error
Hi! Im trying to install openmm using conda in ubuntu 20.04 with nvidia graphic card Quadro K2000. Have installed cuda 11.4.
OpenMM Version: 7.7
3 CUDA - Error computing forces with CUDA platform
CUDA platform error: Error compiling program: nvrtc: error: invalid value for --gpu-architecture (-arch)
nvidia-smi gives the following:
NVIDIA-SMI 470.141.03   Driver Version: 470.141.03   CUDA Version: 11.4
"""

# gromacs/gromacs#4132: mdrun's message on a compute capability 3.0 GPU.
GROMACS = """Mdrun message about cuda compute capability
The gmx mdrun binary does not include support for the CUDA architecture of the GPU ID #0 (compute capability 3.0) detected during detection. By default, GROMACS supports all architectures of compute capability >= 3.0, so your GPU might be rare, or some architectures were disabled in the build.
"""


def test_nvrtc_refusing_the_gpu_in_a_program_other_than_torch_is_its_toolkits(tmp_path):
    got = paste_findings(tmp_path, OPENMM_NVRTC)
    assert codes(got)[0] == "toolkit-arch-unsupported", got
    assert "gpu-arch-unsupported" not in codes(got)
    f = got[0]
    assert "openmm" in f["title"].lower() and "NVRTC" in f["title"]


def test_the_same_nvrtc_line_in_a_torch_report_stays_torchs_build(tmp_path):
    torch_report = OPENMM_NVRTC.replace("OpenMM Version: 7.7", "torch 1.10.0+cu113").replace("openmm", "pytorch")
    assert codes(paste_findings(tmp_path, torch_report))[0] == "gpu-arch-unsupported"


def test_gromacs_own_architecture_check_names_gromacs_not_torch(tmp_path):
    f = paste_findings(tmp_path, GROMACS)[0]
    assert f["code"] == "companion-arch-unsupported" and f["title"].startswith("GROMACS")
    assert "3.0" in f["title"] and not any("TORCH_CUDA_ARCH_LIST" in c for c in f["fix"]["commands"])


def test_a_programs_own_libtorch_is_named_by_the_program(tmp_path):
    # nanoporetech/dorado#215 (trimmed): dorado 0.3.0's bundled libtorch on a Quadro P4000
    dorado = """CUDA error: no kernel image is available for execution on the device using Quadro P4000
dorado basecaller -b 64 -x cuda:all --min-qscore 7 --emit-fastq dna_r9.4.1_e8_hac@v3.3 pod5
[2023-05-31 20:49:50.930] [error] CUDA error: no kernel image is available for execution on the device
Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f31868a34d7 in /home/david/sources/dorado-0.3.0-linux-x64/bin/../lib/libc10.so)
"""
    f = next(x for x in paste_findings(tmp_path, dorado) if x["code"] == "companion-arch-unsupported")
    assert f["title"].startswith("dorado's build")


# --- GFPGAN's RealESRGAN warning (kb/errors/cpu8.json program_on_cpu; readers/issue.py keeps the warning's source line) --

# sczhou/CodeFormer#34: the warning and the source line Python's warnings module prints under it.
CODEFORMER = """RuntimeWarning: The unoptimized RealESRGAN is slow on CPU
When running codeformer I get this error. Not sure how to fix it.

inference_codeformer.py:22: RuntimeWarning: The unoptimized RealESRGAN is slow on CPU. We do not use it. If you really want to use it, please modify the corresponding codes.
  warnings.warn('The unoptimized RealESRGAN is slow on CPU. We do not use it. '
"""


def test_gfpgans_cpu_warning_is_torch_without_cuda(tmp_path):
    f = next(x for x in paste_findings(tmp_path, CODEFORMER) if x["code"] == "cpu-only-torch")
    assert f["severity"] == "warning"


def test_a_scripts_own_warn_call_is_still_not_a_printed_warning(tmp_path):
    script = """my script
```python
import warnings
warnings.warn('The unoptimized RealESRGAN is slow on CPU. We do not use it. ')
```
"""
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, script))


# --- XLA without libdevice (checks/xla20.py) ---------------------------------------------------------------------------

# jax-ml/jax#4452 (trimmed): jaxlib's XLA on its first compilation.
JAX_LIBDEVICE = """RuntimeError: Internal: libdevice not found at ./libdevice.10.bc
2020-10-05 16:30:40.039587: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:70] Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice. This may result in compilation or runtime failures, if the program we try to run uses routines from libdevice.
2020-10-05 16:30:40.039604: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:71] Searched for CUDA in the following directories:
2020-10-05 16:30:40.039611: W external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:74]   /usr/local/cuda-10.1
"""
# tensorflow/tensorflow#60790 (trimmed): TensorFlow 2.12's wording.
TF_LIBDEVICE = """could not run GPU on jupyter
2023-06-06 21:40:11.673259: W tensorflow/compiler/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:274] libdevice is required by this HLO module but was not found at ./libdevice.10.bc
2023-06-06 21:40:11.673658: W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at xla_ops.cc:362 : INTERNAL: libdevice not found at ./libdevice.10.bc
"""


def test_xla_without_libdevice_is_its_own_cause_with_the_xla_flags_fix(tmp_path):
    for text in (JAX_LIBDEVICE, TF_LIBDEVICE):
        got = paste_findings(tmp_path, text)
        assert codes(got)[0] == "xla-libdevice-not-found", got
        assert any("xla_gpu_cuda_data_dir" in c for c in got[0]["fix"]["commands"])


# --- NVML's error 18 in pynvml's words; RAPIDS's own generation check (kb/errors/b20.json (6)) ------------------------

# rapidsai/dask-cuda#949: the title and first line of the report (dask-cuda built for ppc64le on Summit).
PYNVML_18 = """pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.
Hi dask-cuda team,
"""

# cuDF's import-time warning on a Kepler GPU, as an HPC site's RAPIDS page quotes it (found by text search in the public
# code index; NVIDIA/cudf#5776 is the same warning on a K80).
CUDF_KEPLER = """>>> import cudf
/scratch/11568881/miniconda3/lib/python3.8/site-packages/cudf/utils/gpu_utils.py:92: UserWarning: You will need a GPU with NVIDIA Pascal™ or newer architecture
Detected GPU 0: Tesla K20m
Detected Compute Capability: 3.5
"""


def test_pynvml_rm_version_mismatch_is_the_driver_mismatch(tmp_path):
    assert codes(paste_findings(tmp_path, PYNVML_18))[0] == "nvml-driver-mismatch"


def test_rapids_generation_check_is_its_own_kernels_not_torchs(tmp_path):
    got = paste_findings(tmp_path, CUDF_KEPLER)
    assert codes(got)[0] == "companion-arch-unsupported", got
    assert not any("TORCH_CUDA_ARCH_LIST" in c for c in got[0]["fix"]["commands"])  # no rebuild makes RAPIDS run on Kepler


# --- TensorRT's own libraries (kb/errors/b20.json (7)) ------------------------------------------------------------------


def test_a_loader_failing_on_tensorrt_is_tensorrt_missing(tmp_path):
    # galliot-us/neuralet#72: a Jetson container built for another JetPack
    got = paste_findings(tmp_path, "ImportError: libnvinfer.so.6: cannot open shared object file: No such file or directory\n")
    assert codes(got)[0] == "cuda-library-missing" and "TensorRT 6" in got[0]["title"]


def test_tensorflows_notice_that_tf_trt_is_unavailable_is_not_a_fault(tmp_path):
    # TensorFlow's dso_loader notice in its own format (the corpora under tests/data hold it for libcudart and libcuda),
    # for the libnvinfer that TF-TRT probes
    tf = (
        "2023-01-01 12:00:00.000000: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not "
        "load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or "
        "directory\n"
    )
    assert "cuda-library-missing" not in codes(paste_findings(tmp_path, tf))


# --- the report's words that a GPU is unsupported, about another program (checks/arch.program_not_torch) ---------------

# lmstudio-ai/lmstudio-bug-tracker#2316 (trimmed): LM Studio's CUDA backend dropped sm_61.
LMSTUDIO = """Recent LM Studio versions no longer support NVIDIA Quadro P4000 (sm_61)
LM Studio 0.4.21
On Windows 11
The NVIDIA Quadro P4000 is no longer usable with recent versions of LM Studio.
The P4000 is based on the Pascal architecture and has CUDA Compute Capability 6.1 (sm_61).
The error reported is similar to: "No supported CUDA GPUs found on device."
"""


def test_a_program_said_to_drop_the_gpu_is_not_torchs_build(tmp_path):
    got = paste_findings(tmp_path, LMSTUDIO)
    assert "gpu-arch-unsupported" not in codes(got), got
    f = next(x for x in got if x["code"] == "companion-arch-unsupported")
    assert f["severity"] == "warning" and "LM Studio" in f["title"]
    torch_said = LMSTUDIO.replace("LM Studio", "PyTorch")
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, torch_said))


# --- the shell's nvcc at the default /usr/local/cuda (kb/errors/b20.json (8)) -------------------------------------------


def test_nvcc_missing_at_the_default_cuda_home_is_cuda_home_not_set(tmp_path):
    # tianzhi0549/FCOS#21: `python setup.py build develop` on a CUDA 9.0 machine whose toolkit is not at /usr/local/cuda
    got = paste_findings(tmp_path, "something wrong when install\n/usr/local/cuda/bin/nvcc: no such file or directory\n")
    assert codes(got)[0] == "cuda-home-not-set"
    # NVIDIA/apex#368's colon-joined CUDA_HOME is the malformed variable, not a missing toolkit
    colon = "FileNotFoundError: [Errno 2] No such file or directory: ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc': ':/usr/local/cuda:/usr/local/cuda-10.1/bin/nvcc'\n"
    assert codes(paste_findings(tmp_path, colon))[0] == "cuda-home-malformed"


# --- works in the terminal, not in the notebook / IDE (checks/ide20.py) --------------------------------------------------

# pytorch/pytorch#6989: PyCharm's project interpreter.
PYCHARM = """Pytorch4.0 in win10
My system is win10, python3.5.2,  cuda8.0, cudnn6.0
Just install the newest pytorch4.0
I use pycharm to import torch, cannot use it.
But I use cmd to import torch, it can work.
What happened?
"""
# tensorflow/tensorflow#60790 (trimmed): JupyterLab's kernel without the shell's environment.
JUPYTER = """could not run GPU on jupyter
### Current Behaviour?
I could not get Tensorflow to run on GPUs.
TF sees the GPUs on terminal, but not on jupyter lab.
"""


def test_works_in_the_terminal_not_in_the_ide_names_the_other_environment(tmp_path):
    for text in (PYCHARM, JUPYTER):
        f = next(x for x in paste_findings(tmp_path, text) if x["code"] == "ide-uses-another-environment")
        assert f["severity"] == "warning"
        assert any("sys.executable" in c for c in f["fix"]["commands"])


def test_working_in_both_is_no_contrast(tmp_path):
    both = "GPU question\nIt works in the terminal and in jupyter, but training is slow.\n"
    assert "ide-uses-another-environment" not in codes(paste_findings(tmp_path, both))


# --- error 803 under an NGC image's CUDA check (checks/drv10.NGC_BANNER) ------------------------------------------------


def test_error_803_under_the_ngc_banner_is_the_images_compat_libraries(tmp_path):
    # NVIDIA/NeMo#9334 (NVIDIA-NeMo/Speech): nvcr.io/nvidia/nemo:24.03.01.framework on an RTX A6000
    ngc = """Nvidia GPU is Not accessing in my Docker Container
ERROR: The NVIDIA Driver is present, but CUDA failed to initialize. GPU functionality will not be available.
   [[ System has unsupported display driver / cuda driver combination (error 803) ]]
"""
    got = paste_findings(tmp_path, ngc)
    assert codes(got)[0] == "cuda-compat-driver-mismatch", got
    assert "nvml-driver-mismatch" not in codes(got)
    bare = "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination (error 803)\n"
    assert "cuda-compat-driver-mismatch" not in codes(paste_findings(tmp_path, bare))


# --- the reporter's "runs on the CPU" on Windows with an untagged torch version (checks/torch_install) ------------------


def test_runs_on_cpu_on_windows_with_an_untagged_torch_is_pypis_cpu_wheel(tmp_path):
    # SWivid/F5-TTS#140 (trimmed): Windows 10, an RTX 2070, torch==2.3.0, inference 45 minutes
    f5 = """Inference takes 45 minutes on a 2070 RTX GPU
I've run TTS inference several times and it consistently takes about 45 minutes to generate output. Is there a way to check if the app is running on CPU instead of GPU? My setup: Windows 10, NVidia RTX 2070, CUDA 11.8, torch==2.3.0.
"""
    f = next(x for x in paste_findings(tmp_path, f5) if x["code"] == "cpu-only-torch")
    assert f["severity"] == "warning" and f["title"].startswith("The program runs on the CPU on Windows")
    tagged = f5.replace("torch==2.3.0", "torch==2.3.0+cu118")
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, tagged))
    linux = f5.replace("Windows 10", "Ubuntu 22.04")
    assert "PyPI's torch" not in " ".join(x["title"] for x in paste_findings(tmp_path, linux))


# --- torch's "not compiled with CUDA" in the reporter's words (kb/errors/b20.json (10)) ---------------------------------


def test_the_reporters_words_for_torchs_cpu_build_assertion(tmp_path):
    # Comfy-Org/ComfyUI#4845: the title and the reporter's sentence (the traceback's last line was cut off)
    said = (
        "Torch not being compiled with CUDA enabled\nErrors-out with something about Torch not being compiled with CUDA enabled\n"
    )
    assert codes(paste_findings(tmp_path, said))[0] == "cpu-only-torch"
    got = codes(paste_findings(tmp_path, "torch is not compiled with CUDA enabled\n"))
    assert got[0] == "cpu-only-torch" and "extension-built-without-cuda" not in got
    # a CUDA version after the words is another statement (which CUDA it was built with), not a CPU build
    version = codes(paste_findings(tmp_path, "my torch is not compiled with CUDA 11.8 but with 12.1\n"))
    assert "cpu-only-torch" not in version and "extension-built-without-cuda" not in version


# --- "no kernel image" on an older GPU, torch's build not shown (checks/arch._dropped_by_some_current_builds) ----------


def test_no_kernel_image_on_an_older_gpu_with_torch_unknown_names_both_hypotheses(tmp_path):
    # TheLastBen/fast-stable-diffusion#2628 (trimmed): a Colab notebook on a V100 (its prebuilt xformers wheel was made
    # for T4/A100)
    v100 = """CUDA error
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
---
I only tried with V100... it's the GPU I usually use.
"""
    got = paste_findings(tmp_path, v100)
    sev = severities(got)
    assert sev.get("gpu-arch-unsupported") == "warning" and sev.get("companion-arch-unsupported") == "warning", got
    assert "V100" in next(x["title"] for x in got if x["code"] == "gpu-arch-unsupported")
    # a GPU newer than old builds (an RTX 5090) stays torch's build without question
    new = v100.replace("V100", "RTX 5090")
    assert severities(paste_findings(tmp_path, new)).get("gpu-arch-unsupported") == "error"
