"""Session 21 (issue 21), classes found in blind batches (b34, b63, b68, b79, b100-b106) after their first sight was
frozen, each with real thread texts (sources beside them; wordings in kb/errors/b21.json): the reporter's own words for
a driver too old; multi-GPU work that hangs while one GPU (or gloo) works; a CPU torch on a machine the report says has
no GPU; Triton's shared-memory refusal; a ptxas (or a Triton release) from another CUDA than the PTX."""

from __future__ import annotations

from checkcli import codes, paste_findings, run_check, severities, write

# NVIDIA/TensorRT-LLM#331: the cluster's driver 470.82; the reporter's paraphrase of the message.
TRTLLM_470 = """Build Sucess，But build model error
In my case，build tensorrtt-llm source code success，but my image runs in a cloud cluster, and the cluster GPU driver is version 470.82. When compiling the model, it prompts that the driver version is too low. I would like to ask, is there any way to make TensorRT-LLM use this version of the driver?
"""

# vllm-project/vllm#14608 (trimmed): driver 510 shown; the reporter's words for the mismatch.
VLLM_510 = """vllm 0.7.3 for cuda 11.8
| NVIDIA-SMI 510.108.03   Driver Version: 510.108.03   CUDA Version: 11.6     |
But if I will install
`vllm==0.7.3`
This installation will install cuda 12 and all will not work anymore due to mismatch between old nvidia drivers and cuda.
"""


def test_the_reporters_words_for_a_driver_too_old_are_read_as_driver_too_old(tmp_path):
    for text in (TRTLLM_470, VLLM_510):
        assert "driver-too-old" in codes(paste_findings(tmp_path, text)), text[:40]


def test_a_driver_named_as_old_in_passing_is_not_a_diagnosis(tmp_path):
    # ollama/ollama (b45-01's class, reworded): the old driver is gone after an upgrade; nothing says CUDA refused it
    text = "GPU not used after driver upgrade\nSo I guess Ollama used the old driver with the GPU until I rebooted.\n"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


# haotian-liu/LLaVA via huggingface/transformers (b63-07, trimmed): 2 or 4 A6000, stuck with nccl, works with gloo.
LLAVA_A6000 = """Struk during training on multi-GPUs with deepspeed, but work with single GPU
- PyTorch version (GPU?): 2.0.1+cu117 (True)
During the training with the offical LLaVA code, it stucks with multi-GPUs (2 or 4 A6000), but works with a single GPU.
tried to run the following code, stuck with backend `nccl`, but works with `gloo`:
"""

# PaddlePaddle/models (b68-07): multi-GPU runs hang, the single-GPU run does not (Chinese).
PADDLE_HANG = """多GPU执行问题，多GPU执行时任务挂起无法完成

以/models-develop/fluid/language_model为例，默认执行fluid train.py，任务长时间挂起，GPU的状态也很奇怪：内存和使用率都满的，但是从功率看，GPU芯片又几乎没有工作。如果改为非并行方式，单GPU时则没有问题。
paddle版本1.0.2
"""

# The same hang on an NVLink (SXM) machine: peer-to-peer does not cross PCIe bridges there.
SXM_HANG = """Training hangs with 8 GPUs
DDP training on 8x A100 SXM4 hangs at the first all_reduce, but works with a single GPU.
"""


def test_multi_gpu_work_that_hangs_while_one_gpu_works_is_the_acs_class(tmp_path):
    for text in (LLAVA_A6000, PADDLE_HANG):
        got = paste_findings(tmp_path, text)
        assert severities(got).get("pcie-acs-blocks-p2p") == "warning", text[:40]
    assert "pcie-acs-blocks-p2p" not in codes(paste_findings(tmp_path, SXM_HANG))


# facebookresearch/detectron2#1416 (trimmed): detectron2 set up on purpose on a machine without a GPU.
DETECTRON2_NO_GPU = """Detectron2 performed on the CPU with a "Torch not compiled with CUDA enabled" error
Configure Detectron2 environment on a computer without GPU graphics card. After the configuration is OK, run the following code.
"""


def test_a_cpu_torch_on_a_machine_the_report_says_has_no_gpu_is_a_warning_to_run_on_the_cpu(tmp_path):
    got = paste_findings(tmp_path, DETECTRON2_NO_GPU)
    assert severities(got) == {"cpu-only-torch": "warning"}
    (f,) = [f for f in got if f["code"] == "cpu-only-torch"]
    assert "cfg.MODEL.DEVICE" in " ".join(f["fix"]["commands"])
    # the same error with an NVIDIA GPU named: the CPU build is the fault again
    text = DETECTRON2_NO_GPU.replace("on a computer without GPU graphics card", "on my RTX 3060 machine")
    assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "error"


# alipay/PainlessInferenceAcceleration#35, FreeToken#246, triton-lang/triton#384: Triton's OutOfResources.
SHARED_MEMORY = (
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 163842, Hardware limitation: "
    "101376. reducing the block size or `num_stages` may help.",
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
    "Reducing block sizes or `num_stages` may help.",
    "triton.code_gen.OutOfResources: out of resource: shared memoryRequired: 110592Hardware limit: 101376",
)


def test_tritons_shared_memory_refusal_is_the_kernels_configuration_against_the_gpu(tmp_path):
    for text in SHARED_MEMORY:
        got = paste_findings(tmp_path, "Kernel fails on my GPU\n" + text + "\n")
        assert severities(got) == {"kernel-shared-memory-exceeds-gpu": "warning"}, text
        (f,) = got if len(got) == 1 else [x for x in got if x["code"] == "kernel-shared-memory-exceeds-gpu"]
        assert "allowed per block" in f["title"]
    # other resources (registers) are not this code
    text = "triton.runtime.errors.OutOfResources: out of resource: registers, Required: 300, Hardware limit: 255"
    assert "kernel-shared-memory-exceeds-gpu" not in codes(paste_findings(tmp_path, text))


# triton-lang/triton#4576 (trimmed): Triton wrote PTX 8.6 (CUDA 12.7, kb/ptx_isa.json) for the ptxas of CUDA 12.6 (PTX 8.5).
TRITON_126 = """PTX version error with CUDA 12.6
While using Triton with CUDA 12.6, I receive the following error.
E                   RuntimeError: Internal Triton PTX codegen error:
E                   ptxas /tmp/tmpqgu1f9dk.ptx, line 5; fatal   : Unsupported .version 8.6; current version is '8.5'
E                   ptxas fatal   : Ptx assembly aborted due to errors
"""
# triton-lang/triton#5737: Triton 3.2 with CUDA 12.8 present.
TRITON_128 = "RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8\n"
# numba via the driver's JIT (b38-13's form): the driver is the old reader, not a toolkit's ptxas.
DRIVER_JIT = (
    "numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
    "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.1; current version is '7.8'\n"
)


def test_a_ptxas_from_another_cuda_than_the_ptx_is_not_the_driver(tmp_path):
    got = paste_findings(tmp_path, TRITON_126)
    assert severities(got) == {"ptxas-ptx-version-mismatch": "error"}
    (f,) = got if len(got) == 1 else [x for x in got if x["code"] == "ptxas-ptx-version-mismatch"]
    assert f["evidence"]["ptxas reads PTX up to"] == "8.5" and f["evidence"]["ptx needs CUDA"] == "12.7"
    assert codes(paste_findings(tmp_path, TRITON_128)) == ["ptxas-ptx-version-mismatch"]
    got = codes(paste_findings(tmp_path, DRIVER_JIT))
    assert "driver-too-old" in got and "ptxas-ptx-version-mismatch" not in got


# pyg-team/pytorch_geometric#1958 (trimmed): no torch-scatter wheel for torch 1.7.1 yet; pip built it with MSVC.
SCATTER_C1083 = """Torch-scatter installation error: fatal error C1083: Cannot open compiler generated file: '': Invalid argument
pip install torch-scatter -f https://pytorch-geometric.com/whl/torch-1.7.1+cu110.html
... segment_coo_cpu.cpp : fatal error C1083: Cannot open compiler generated file: '': Invalid argument
... cl.exe' failed with exit status 1
  ERROR: Failed building wheel for torch-scatter
* PyTorch version: 1.7.1
"""
# pyg-team/pyg-lib#676: no pyg-lib wheels for torch 2.12 yet.
PYG_LIB = """pyg-lib wheels not available
Wheels for `pyg-lib` not available for `torch-2.12.0` for any cuda runtime version from 12.6 to 13.2
"""


def test_a_pyg_extension_built_from_source_or_without_a_wheel_points_at_pygs_index(tmp_path):
    got = paste_findings(tmp_path, SCATTER_C1083)
    assert severities(got) == {"pyg-wheel-missing": "error"}
    (f,) = [x for x in got if x["code"] == "pyg-wheel-missing"]
    assert "torch-scatter" in f["title"] and "data.pyg.org/whl/" in " ".join(f["fix"]["commands"])
    assert codes(paste_findings(tmp_path, PYG_LIB)) == ["pyg-wheel-missing"]
    # a collect_env with torch 2.5.1+cu124 names the page to use
    env = run_check(
        "--from-collect-env",
        str(write(tmp_path, "PyTorch version: 2.5.1+cu124\nCUDA used to build PyTorch: 12.4\nOS: Ubuntu 22.04\n", "env.txt")),
        "--error-file",
        str(write(tmp_path, "ERROR: Failed building wheel for torch-sparse\n", "err.txt")),
    )
    (f,) = [x for x in env if x["code"] == "pyg-wheel-missing"]
    assert f["evidence"]["pyg_index_page"] == "https://data.pyg.org/whl/torch-2.5.0+cu124.html"
    # torch-scatter imported fine and something else failed: not this code
    assert "pyg-wheel-missing" not in codes(paste_findings(tmp_path, "import torch_scatter\nRuntimeError: CUDA out of memory.\n"))


# Comfy-Org/ComfyUI#4539: ComfyUI --fast on Windows with torch 2.3.0.
SCALED_MM = """--fast: _scaled_mm_out_cuda is not compiled for this platform.
torch 2.3.0+cu121 on Windows 11
RuntimeError: _scaled_mm_out_cuda is not compiled for this platform.
"""


def test_scaled_mm_not_compiled_is_a_windows_torch_before_2_4(tmp_path):
    got = paste_findings(tmp_path, SCALED_MM)
    assert severities(got).get("torch-windows-lacks-scaled-mm") == "error"
    # with torch 2.5 the message has another cause: no claim about the build
    newer = SCALED_MM.replace("torch 2.3.0+cu121", "torch 2.5.1+cu124")
    assert "torch-windows-lacks-scaled-mm" not in codes(paste_findings(tmp_path, newer))


# Nerogar/OneTrainer (b102-18, trimmed): the GPUs named are a comparison, not the reporter's.
ONETRAINER_FP8 = """Z-Image LoRA presets fail on pre-Ada/Hopper GPUs: FLOAT_8 transformer weight dtype incompatible with torch.compile
The presets crash on GPUs older than Ada Lovelace (RTX 4000) / Hopper (H100) when `compile=true` is set.
triton.compiler.errors.CompilationError: at 1:0:
ValueError("type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')")
"""


def test_gpus_named_as_a_comparison_are_not_the_reporters(tmp_path):
    from cudadoctor.readers import prose

    got = prose.read(ONETRAINER_FP8.splitlines())
    assert not got.get("gpus")
    assert [g["name"] for g in prose.read(["I have an RTX 3060, slower than a 4090."])["gpus"]] == ["RTX 3060"]
    assert severities(paste_findings(tmp_path, ONETRAINER_FP8)).get("gpu-lacks-fp8") == "error"


def test_a_non_cuda_torch_in_the_reporters_words_is_the_cpu_build(tmp_path):
    # zhongpei/Comfyui_image2prompt#79: a custom node's requirements replaced the CUDA torch
    text = "Forcing Downgrade to Non-CUDA Torch\nHey, I had an issue today where after adding this to ComfyUI, it broke my installation\n"
    assert "cpu-only-torch" in codes(paste_findings(tmp_path, text))
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, "The non-CUDA parts of the model run fine.\n"))


def test_an_engine_whose_version_reads_0_0_0_is_not_one_built_by_another_tensorrt(tmp_path):
    # NVIDIA/TensorRT#574: a plan written and read back at once on Windows without std::ios::binary
    zero = (
        "ERROR: The engine plan file is not compatible with this version of TensorRT, expecting library version 5.1.5 "
        "got 0.0.0, please rebuild.\n"
    )
    assert "tensorrt-engine-built-with-other-version" not in codes(paste_findings(tmp_path, zero))
    other = zero.replace("got 0.0.0", "got 5.0.6")  # jetson-inference#426: an upgraded JetPack reading an older engine
    assert severities(paste_findings(tmp_path, other)).get("tensorrt-engine-built-with-other-version") == "error"


def test_a_programs_own_kernels_missing_the_gpu_are_the_programs_build(tmp_path):
    # LostRuins/koboldcpp#610: ggml's device-side bad_arch() after an update dropped Pascal
    kobold = "Koboldcpp 1.55: ERROR: ggml-cuda was compiled without support for the current GPU architecture.\n"
    assert severities(paste_findings(tmp_path, kobold)).get("companion-arch-unsupported") == "error"
    # mit-han-lab/llm-awq#204: the AWQ kernels use mma.m16n8k16, built on a Tesla T4 (sm_75)
    awq = (
        "ptxas /tmp/tmpxft_0000f5ba_00000000-6_gemm_cuda_gen.ptx, line 709; error   : Feature '.m16n8k16' requires "
        ".target sm_80 or higher\n"
    )
    assert "companion-arch-unsupported" in codes(paste_findings(tmp_path, awq))
    # unslothai/unsloth#501: the bf16 form is the GPU lacking bf16, not the package's kernels
    bf16 = "ptxas /tmp/compile-ptx-src-38292b, line 336; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    got = codes(paste_findings(tmp_path, bf16))
    assert "gpu-lacks-bf16" in got and "companion-arch-unsupported" not in got


def test_further_wordings_of_known_classes(tmp_path):
    cases = {
        # open-mmlab/mmdetection#10841: mmcv compiled on a GPU-less login node
        "RuntimeError: ms_deform_attn_impl_forward: implementation for device cuda:0 not found.": "extension-built-without-cuda",
        # dmlc/dgl#7809: DGL 2.2.1 on Windows with torch 2.4.1
        "There is no such file `graphbolt_pytorch_2.4.1.dll`.": "extension-abi-mismatch",
        # NVIDIA/TransformerEngine#1159: fp8_autocast on an RTX 3090
        "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.": "gpu-lacks-fp8",
        # kohya-ss/sd-scripts#362: a third-party xformers wheel whose ops did not load
        "NotImplementedError: No such operator xformers::efficient_attention_forward_cutlass - did you forget to build "
        "xformers with `python setup.py develop`?": "extension-abi-mismatch",
    }
    for line, code in cases.items():
        assert code in codes(paste_findings(tmp_path, line + "\n")), line


# A Debian write-up (b106-02, trimmed): a Fermi GT 620 beside the distribution's 560 driver.
FERMI_560 = """debian 12 安装 NVIDIA 390驱动记录
问题:老显卡 GT620 新驱动不支持
我的显卡是 04:00.0 VGA compatible controller: NVIDIA Corporation GF119 [GeForce GT 620 OEM] (rev a1)
飞牛默认安装 nvidia-560版本并不支持该型号,nvidia-smi 提示失败
"""


def test_a_legacy_gpu_named_in_prose_beside_a_current_driver_needs_the_legacy_branch(tmp_path):
    got = paste_findings(tmp_path, FERMI_560)
    assert severities(got).get("gpu-needs-legacy-driver") == "error"
    (f,) = [x for x in got if x["code"] == "gpu-needs-legacy-driver"]
    assert str(f["evidence"]["legacy_branch"]) == "390"


def test_nvcc_without_arch_native_names_the_gpus_architecture(tmp_path):
    # ggml-org/whisper.cpp#876: Pop!_OS's nvcc 11.5 and a Makefile passing -arch=native, on a GTX 1080
    text = (
        "whisper.cpp WHISPER_CUBLAS=1 make fails on my GTX 1080\n"
        "nvcc fatal   : Value 'native' is not defined for option 'gpu-architecture'\n"
    )
    got = paste_findings(tmp_path, text)
    (f,) = [x for x in got if x["code"] == "toolkit-arch-unsupported"]
    assert f["severity"] == "error" and "-arch=native" in f["title"]
    assert "sm_61" in " ".join(f["fix"]["commands"])


def test_open3ds_torch_version_check_is_an_extension_built_for_another_torch(tmp_path):
    # isl-org/Open3D-ML#430
    text = "Exception: Version mismatch: Open3D needs PyTorch version 1.7.*, but version 1.8.2 is installed!\n"
    assert severities(paste_findings(tmp_path, text)).get("extension-abi-mismatch") == "error"


# rusty1s/pytorch_scatter (b101-07, trimmed): torch printed CUDA tensors, then torch_scatter's scatter_mul failed and the
# asynchronous error surfaced in the next torch call.
SCATTER_MUL = """Error when use scatter_mul on cuda
I install the torch_scatter 2.0.6 and I meet this error when I use scatter_mul on cuda. Here is my test script:
```
import torch
from torch_scatter import scatter
print(torch.arange(4, device=device))
scatter(src, index, reduce='mul')
print(torch.arange(4, device=device))
```
Here is the output:
```
cuda:0
tensor([0, 1, 2, 3], device='cuda:0')
tensor([0, 1, 2, 3], device='cuda:0')
Traceback (most recent call last):
  File "test.py", line 11, in <module>
    print(torch.arange(4, device=device))
RuntimeError: CUDA error: invalid device function
```
"""


def test_a_kernel_failing_after_torch_printed_cuda_tensors_is_another_packages(tmp_path):
    got = codes(paste_findings(tmp_path, SCATTER_MUL))
    assert "companion-arch-unsupported" in got and "gpu-arch-unsupported" not in got
    # without the printed tensors the failing call is torch's own: torch's build
    alone = "\n".join(line for line in SCATTER_MUL.splitlines() if "device='cuda:0')" not in line)
    assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, alone))


# NixOS/nixpkgs#127146: the hook's own message on a cgroup v2 host.
CGROUP_MSG = (
    "docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux.go:380: "
    "starting container process caused: process_linux.go:545: container init caused: Running hook #1:: error running "
    "hook: exit status 1, stdout: , stderr: nvidia-container-cli: container error: cgroup subsystem devices not found: "
    "unknown.\n"
)
# NVIDIA/nvidia-docker#1486 (trimmed): libnvidia-container 1.3.3 on Arch, the hook's message cut off.
CLI_133 = """Error response from daemon: OCI runtime create failed: container_linux.go:367

nvidia-container-cli -V
```
version: 1.3.3
build date: 2021-04-09T17:24+00:00
```
"""
# NVIDIA/k8s-device-plugin#235 (trimmed): the device plugin's pod after the node moved to cgroups v2.
K3S = """Nvidia pod does not run when using cgroupsv2
I have been using kubernetes on a debian system with nvidia k8s device plugin just fine. I was testing changes to use cgroups v2, and saw that nvidia pod fails to deploy.
  Warning  Failed   kubelet   Error: failed to start container "nvidia-device-plugin-ctr": Error response from daemon: OCI runtime create failed: container_linux.go:367: starting container process caused: process_linux.go:495: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: container error:
"""


def test_the_nvidia_container_library_before_1_8_on_a_cgroup_v2_host(tmp_path):
    assert severities(paste_findings(tmp_path, CGROUP_MSG)) == {"container-toolkit-cgroupv2-unsupported": "error"}
    for text in (CLI_133, K3S):
        assert severities(paste_findings(tmp_path, text)).get("container-toolkit-cgroupv2-unsupported") == "warning", text[:40]
    # the same message with libnvidia-container 1.11 (cgroup v2 supported): another cause, no claim (nvidia-docker#1660)
    newer = CGROUP_MSG + "cli-version: 1.11.0\nlib-version: 1.11.0\n"
    assert "container-toolkit-cgroupv2-unsupported" not in codes(paste_findings(tmp_path, "nvidia-container-cli -V\n" + newer))
    # an old library with a container that started fine: nothing
    fine = CLI_133.replace("Error response from daemon: OCI runtime create failed: container_linux.go:367", "GPU works")
    assert "container-toolkit-cgroupv2-unsupported" not in codes(paste_findings(tmp_path, fine))


def test_barks_no_gpu_warning_is_the_program_on_the_cpu(tmp_path):
    # suno-ai/bark#173 and JonathanFly/bark#14: Bark logs it when torch.cuda.is_available() is False
    fork = "I can't get it to run on the GPU\nLoading Bark models...\nNo GPU being used. Careful, Inference might be extremely slow!\nI have a 2080 TI\n"
    win = (
        "Windows: No GPU being used. Careful, inference might be very slow!\nI installed torch 2.0.0 and CUDA 11.7 from "
        "PyTorch website. But Bark displays a `Windows: No GPU being used. Careful, inference might be very slow!` message.\n"
        "I'm on Windows 10.\n"
    )
    for text in (fork, win):
        assert severities(paste_findings(tmp_path, text)).get("cpu-only-torch") == "warning", text[:40]


def test_a_programs_nvml_query_the_gpu_does_not_support_is_the_programs_to_tolerate(tmp_path):
    # jwohlwend/boltz#355 (trimmed): cuequivariance_ops asks NVML for the power limit
    text = """boltz predict crashes: pynvml.NVMLError_NotSupported
  File ".../cuequivariance_ops/triton/cache_manager.py", line 40, in get_gpu_information
    power_limit = pynvml.nvmlDeviceGetPowerManagementLimit(handle)
  File ".../pynvml.py", line 1061, in _nvmlCheckReturn
    raise NVMLError(ret)
pynvml.NVMLError_NotSupported: Not Supported
"""
    assert severities(paste_findings(tmp_path, text)) == {"nvml-query-not-supported": "warning"}
    # pynvml's other errors are other causes (error 18: nvml-driver-mismatch)
    got = codes(paste_findings(tmp_path, "pynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.\n"))
    assert "nvml-query-not-supported" not in got and "nvml-driver-mismatch" in got


def test_a_source_build_linking_without_cudnn(tmp_path):
    # facebookarchive/caffe2#549, NVIDIA/caffe#25, davisking/dlib#786
    for line, symbol in (
        ("../lib/libCaffe2_GPU.so: undefined reference to `cudnnSetLRNDescriptor'", "cudnnSetLRNDescriptor"),
        (
            ".build_release/lib/libcaffe-nv.so: undefined reference to `cudnnConvolutionBackwardData_v3'",
            "cudnnConvolutionBackwardData_v3",
        ),
        ("cudnn_dlibapi.cpp:-1: error: undefined reference to `cudnnDestroyTensorDescriptor'", "cudnnDestroyTensorDescriptor"),
    ):
        got = paste_findings(tmp_path, "Build fails at link time\n" + line + "\ncollect2: error: ld returned 1 exit status\n")
        (f,) = [x for x in got if x["code"] == "build-cudnn-not-linked"]
        assert f["severity"] == "error" and f["evidence"]["symbol"] == symbol
    # a runtime loader failure for libcudnn is a missing library, not a link step
    got = codes(paste_findings(tmp_path, "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory\n"))
    assert "build-cudnn-not-linked" not in got


def test_operation_not_supported_with_the_async_allocator(tmp_path):
    # lllyasviel/Fooocus#96: Fooocus switched torch to cudaMallocAsync (the reporter asks for --disable-cuda-malloc)
    text = (
        "Is it possible to support --disable-cuda-malloc?\n`RuntimeError: CUDA error: operation not supported\n"
        "CUDA kernel errors might be asynchronously reported at some other API call\n"
    )
    assert severities(paste_findings(tmp_path, text)) == {"cuda-malloc-async-unsupported": "warning"}
    # the same error with no sign of the allocator (ComfyUI-LTXVideo#108's paste): no claim
    bare = "CUDA error: operation not supported\npytorch version: 2.4.0+cu124\n"
    assert "cuda-malloc-async-unsupported" not in codes(paste_findings(tmp_path, bare))


def test_ctranslate2s_cublas_failure_on_a_blackwell_gpu_is_its_build(tmp_path):
    # Purfview/whisper-standalone-win#542: Faster-Whisper-XXL on an RTX 5080, fixed by --compute_type float16
    text = (
        "RTX 50 series fix\nI recently got this Error since I bought an RTX 5080:\n"
        "RuntimeError: cuBLAS failed with status CUBLAS_STATUS_NOT_SUPPORTED\n"
        "this Is getting fixed by adding the argument\n--compute_type float16\n"
    )
    got = paste_findings(tmp_path, text)
    assert severities(got).get("companion-arch-unsupported") == "warning"
    # the same failure on an RTX 3090: not this class
    older = text.replace("RTX 5080", "RTX 3090")
    assert "companion-arch-unsupported" not in codes(paste_findings(tmp_path, older))


def test_mmcvs_ext_loader_missing_an_op_is_mmcv_without_its_compiled_ops(tmp_path):
    # open-mmlab/mmpretrain#748: 'pip install mmcv' (lite) over mmcv-full 1.3.17
    text = "AssertionError: active_rotated_filter_forward miss in module _ext\n"
    assert "mmcv-without-compiled-ops" in codes(paste_findings(tmp_path, text))


def test_cuda_home_not_set_while_the_report_says_it_is_set_is_the_isolated_build(tmp_path):
    # facebookresearch/sam2 (b103-07, trimmed): CUDA_HOME set, `pip install -e .` says it is not
    text = (
        "CUDA_PATH error despite having it set up\n"
        "`OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.`\n"
        "Not sure if this is a windows-specific issue or something, but CUDA_HOME is definitely in my environment variables.\n"
    )
    got = paste_findings(tmp_path, text)
    assert severities(got).get("extension-build-isolation") == "warning"
    (f,) = [x for x in got if x["code"] == "extension-build-isolation"]
    assert "--no-build-isolation" in " ".join(f["fix"]["commands"])
    # the same error with nothing said about CUDA_HOME: cuda-home-not-set alone
    bare = "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
    assert "extension-build-isolation" not in codes(paste_findings(tmp_path, bare))


def test_onnxruntimes_cuda_path_message_is_not_the_reporter_saying_cuda_home_is_set():
    from cudadoctor.readers import issue

    ort = "CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. Please install the correct version"
    assert not issue.read(ort + "\n")["facts"]["pasted"].get("cuda_home_said_set")
    said = issue.read("CUDA_HOME is correctly set.\n")["facts"]["pasted"]["cuda_home_said_set"]
    assert said["line"] == 1
