"""Session 18: a stated symptom inside a program's log is error text (readers/issue.py reads the kb rows marked
``stated_symptom``), and the nvcc tables' CUDA 11.7/11.8 rows (tests/test_kb_sources.py has the spot checks)."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

from cudadoctor.errortext import kb_documents
from cudadoctor.readers import issue

# RVC's console when torch.cuda.is_available() is False (its configs/config.py prints the Chinese line), under the
# reporter's prose: a Windows venv, "all requirements are already satisfied", a 3090 the script does not see.
RVC = """3090 GPU not recognised
I cant get 3090 to be recognised by the script

running on windows with virtual enviroment and all requirements are already satisfied

using python 3.10

(myenv) H:\\RVC-beta>python infer-web.py
Use Language: en_US
没有发现支持的N卡, 使用CPU进行推理
Running on local URL:  http://0.0.0.0:7865
"""


def _error_lines(text: str) -> set:
    got = issue.read(text)
    lines = text.splitlines()
    out = set()
    for p in got["parts"]:
        if p["kind"] == "error":
            out.update(lines[i - 1] for i in range(p["lines"][0], p["lines"][1] + 1))
    return out


def test_a_programs_no_gpu_line_in_its_log_is_error_text(tmp_path):
    assert "没有发现支持的N卡, 使用CPU进行推理" in _error_lines(RVC)
    assert "Use Language: en_US" not in _error_lines(RVC)  # the log's other lines stay aside
    got = paste_findings(tmp_path, RVC)
    assert severities(got).get("cpu-only-torch") == "warning"


def test_the_same_log_without_the_symptom_names_no_cause(tmp_path):
    healthy = RVC.replace("没有发现支持的N卡, 使用CPU进行推理\n", "")
    got = paste_findings(tmp_path, healthy)
    assert "cpu-only-torch" not in codes(got), got


def test_the_rows_read_as_stated_symptoms_are_the_statement_rows():
    """Only statements of the symptom are marked (not the Windows or pip-command rows the checks also read)."""
    names = {n for _f, doc in kb_documents() for n, r in (doc.get("symptoms") or {}).items() if r.get("stated_symptom")}
    assert names == {
        "runs_on_cpu",
        "no_gpu_fallback",
        "torch_sees_no_cuda",
        "cpu_build_named",
        "cpu_build_said",
        "tensorflow_lists_no_gpu",  # session 19: TensorFlow's own printed answer
        "slow_cuda_start",  # session 25: the reporter's words for a first CUDA use taking minutes
        "slow_driver_init",  # session 25: the driver's own start said to be slow (cuInit, nvidia-smi)
    }


# --- cuFFT of torch's CUDA <= 11.7 builds on Ada / Hopper (checks/cufft18.py) ----------------------------------------

# pytorch/pytorch#89556 (collect_env trimmed to the fields it has): torch 1.13.0+cu116 on an RTX 4090.
CUFFT_4090_CU116 = """cuFFT error raised after trying FFT
```
RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR
```
I'm using cuda 11.6, nvidia driver version 520.56.06, RTX 4090... with Ubuntu 22.04

PyTorch version: 1.13.0+cu116
Is debug build: False
CUDA used to build PyTorch: 11.6
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.1 LTS (x86_64)
Python version: 3.9.15 (main, Oct 12 2022, 19:14:37)  [GCC 11.2.0] (64-bit runtime)
Is CUDA available: True
CUDA runtime version: 11.6.124
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090
Nvidia driver version: 520.56.06
"""


def test_cufft_internal_error_with_a_cu116_torch_on_an_rtx_4090_is_the_cufft_of_that_build(tmp_path):
    got = paste_findings(tmp_path, CUFFT_4090_CU116)
    assert severities(got).get("cufft-cu117-ada-unsupported") == "error", got
    f = next(f for f in got if f["code"] == "cufft-cu117-ada-unsupported")
    assert "11.6" in f["title"] and "4090" in f["title"] and any("cu118" in c for c in f["fix"]["commands"])


def test_cufft_internal_error_alone_is_a_likely_warning(tmp_path):
    # pytorch/pytorch#88038's first post: the error and the conda command with pytorch-cuda=11.7, no GPU in the text
    text = (
        ">>> import torch\n>>> torch.fft.rfft(torch.randn(1000).cuda())\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\nRuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n'
    )
    assert severities(paste_findings(tmp_path, text)).get("cufft-cu117-ada-unsupported") == "warning"


def test_cufft_internal_error_on_an_older_gpu_or_a_cu118_torch_is_not_this(tmp_path):
    older = CUFFT_4090_CU116.replace("RTX 4090", "RTX 3080")
    assert "cufft-cu117-ada-unsupported" not in codes(paste_findings(tmp_path, older))
    newer = CUFFT_4090_CU116.replace("1.13.0+cu116", "2.0.1+cu118").replace("build PyTorch: 11.6", "build PyTorch: 11.8")
    assert "cufft-cu117-ada-unsupported" not in codes(paste_findings(tmp_path, newer))


# --- torch that sees no GPU, in a library's words; a CPU build in a conda listing ------------------------------------


def test_lightnings_empty_gpu_list_is_torch_seeing_no_cuda(tmp_path):
    """Lightning's "You requested GPUs: [0] But your machine only has: []" is torch.cuda.device_count() == 0: on
    Windows with no build shown, PyPI's CPU wheel is the likely cause (as for is_available() False); elsewhere the
    line alone does not tell a CPU build from a driver problem, and nothing is claimed."""
    where = (
        '  File "C:\\Users\\me\\miniconda3\\envs\\ln2\\lib\\site-packages\\pytorch_lightning\\trainer\\trainer.py", line 530\n'
    )
    for msg in (  # pytorch_lightning 0.7's form (quoted in many threads), and the newer "gpu" form
        "pytorch_lightning.utilities.debugging.MisconfigurationException: \n            You requested GPUs: [0]\n"
        "            But your machine only has: []\n",
        "lightning.fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [0, 1]\n"
        "But your machine only has: []\n",
    ):
        got = paste_findings(tmp_path, "Trainer fails\n```\n" + where + msg + "```\n")
        assert severities(got).get("cpu-only-torch") == "warning", msg
        assert "cpu-only-torch" not in codes(paste_findings(tmp_path, "Trainer fails\n```\n" + msg + "```\n"))
    # one GPU visible of two asked for: a count or CUDA_VISIBLE_DEVICES mismatch, not torch without CUDA
    fewer = "MisconfigurationException: You requested gpu: [0, 1]\nBut your machine only has: [0]\n"
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, "Trainer fails\n```\n" + where + fewer + "```\n"))


def test_anacondas_cpu_pytorch_select_in_a_conda_listing_is_a_cpu_build(tmp_path):
    listing = (
        "# Name                    Version                   Build  Channel\n"
        "_libgcc_mutex             0.1                        main  \n"
        "_pytorch_select           0.1                       cpu_0  \n"
        "pytorch                   1.3.1           cpu_py37h62f834f_0  \n"
    )
    got = paste_findings(tmp_path, "Training uses no GPU\n```\n" + listing + "```\n")
    assert "cpu-only-torch" in codes(got)
    gpu = listing.replace("0.1                       cpu_0", "0.2                       gpu_0").replace(
        "cpu_py37h62f834f_0", "cuda100py37h53c1284_0"
    )
    assert "cpu-only-torch" not in codes(paste_findings(tmp_path, "Training uses no GPU\n```\n" + gpu + "```\n"))


def test_dgl_graphbolt_that_cannot_be_loaded_is_dgl_built_for_another_torch(tmp_path):
    # dmlc/dgl#7450 (torch 2.3.1+cu121, DGL's torch-2.3 wheel) and #7623 (the traceback's last frames)
    text = (
        "ImportError: Cannot load Graphbolt C++ library\n\nPyTorch version: 2.3.1+cu121\n"
        '  File "/opt/conda/lib/python3.10/site-packages/dgl/graphbolt/__init__.py", line 33, in load_graphbolt\n'
        '    raise ImportError("Cannot load Graphbolt C++ library")\n'
    )
    assert "extension-abi-mismatch" in codes(paste_findings(tmp_path, text))


# --- containers: the toolkit too old for a Windows 555+ driver; compute missing, inferred (checks/wslctk18.py, cont13) --

ERR_500 = (
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 500: named symbol not found"
)


def test_error_500_at_cuda_start_in_docker_on_windows_is_the_container_toolkit(tmp_path):
    # NVIDIA/nvidia-container-toolkit#520: Windows drivers 555+ need libnvdxgdmal.so.1 mapped into the container
    text = "ComfyUI in Docker Desktop on Windows 11\n```\n" + ERR_500 + "\n```\nnvidia-smi works on Windows.\n"
    got = paste_findings(tmp_path, text)
    assert severities(got).get("container-toolkit-too-old-for-wsl-driver") == "error", got
    f = next(f for f in got if f["code"] == "container-toolkit-too-old-for-wsl-driver")
    assert any("4.31" in c for c in f["fix"]["commands"]) and any("nvidia-container-toolkit" in c for c in f["fix"]["commands"])
    # ollama's form of the same failure, WSL named, no container word: a warning
    ollama = 'time=... level=INFO msg="cuda driver library init failure: 500"\nrunning ollama under WSL2\n'
    assert severities(paste_findings(tmp_path, ollama)).get("container-toolkit-too-old-for-wsl-driver") == "warning"


def test_error_500_with_nothing_pointing_at_wsl_or_a_container_is_not_this(tmp_path):
    assert "container-toolkit-too-old-for-wsl-driver" not in codes(paste_findings(tmp_path, ERR_500 + "\n"))


def test_nvidia_smi_showing_cuda_na_in_a_container_is_compute_left_out(tmp_path):
    text = (
        "torch in my container\nnvidia-smi works inside the docker container but shows CUDA Version: N/A, and "
        "torch.cuda.is_available() returns False.\n"
    )
    got = paste_findings(tmp_path, text)
    assert severities(got).get("container-gpu-capabilities-lack-compute") == "warning", got
    assert "container-gpu-capabilities-lack-compute" not in codes(paste_findings(tmp_path, text.replace("N/A", "12.2")))


def test_nvidia_docker_2_without_driver_capabilities_is_utility_only(tmp_path):
    # nvidia-container-runtime: NVIDIA_DRIVER_CAPABILITIES "empty or unset: use default driver capability: utility"
    text = (
        "Found no NVIDIA driver on your system\nnvidia-smi seems to show everything fine inside the container.\n"
        "`docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all -it --rm allennlp/allennlp`\n"
        "AssertionError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed "
        "a driver from http://www.nvidia.com/Download/index.aspx\n"
    )
    assert "container-gpu-capabilities-lack-compute" in codes(paste_findings(tmp_path, text))
    with_gpus = text.replace("--runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all", "--gpus all")
    assert "container-gpu-capabilities-lack-compute" not in codes(paste_findings(tmp_path, with_gpus))


# --- kb/errors/b18.json: ptxas refusing bf16 below sm_80; bitsandbytes 0.38-0.42 without a binary for its CUDA -------


def test_ptxas_refusing_bf16_is_a_gpu_without_bf16(tmp_path):
    # InternLM/lmdeploy#1266 (Triton on a pre-Ampere GPU)
    text = (
        "RuntimeError: Internal Triton PTX codegen error: \n"
        "ptxas /tmp/compile-ptx-src-74ccbe, line 344; error   : Feature '.bf16' requires .target sm_80 or higher\n"
    )
    assert "gpu-lacks-bf16" in codes(paste_findings(tmp_path, text))
    # an extension's Ampere-only MMA shape is not bf16 (llm-awq's kernels on a T4)
    mma = "ptxas /tmp/tmpxft_0000f5ba-6_gemm_cuda_gen.ptx, line 709; error   : Feature '.m16n8k16' requires .target sm_80 or higher\n"
    assert "gpu-lacks-bf16" not in codes(paste_findings(tmp_path, mma))


def test_bitsandbytes_without_a_binary_for_its_cuda_runs_its_cpu_library(tmp_path):
    text = (
        "CUDA SETUP: PyTorch settings found: CUDA_VERSION=117, Highest Compute Capability: 3.7.\n"
        "CUDA SETUP: Required library version not found: libbitsandbytes_cuda117_nocublaslt.so. Maybe you need to "
        "compile it from source?\nCUDA SETUP: Defaulting to libbitsandbytes_cpu.so...\n"
    )
    assert "companion-cpu-only-build" in codes(paste_findings(tmp_path, text))


# --- distributed: no NCCL on Windows, all ranks on one GPU, a job across machines (checks/dist18.py) -----------------


def test_no_nccl_built_in_is_windows_torch_without_nccl(tmp_path):
    text = 'File "...\\\\torch\\\\distributed\\\\distributed_c10d.py", line 1003\nRuntimeError: Distributed package doesn\'t have NCCL built in\n'
    got = paste_findings(tmp_path, text)
    assert severities(got).get("nccl-unavailable-on-windows") == "error", got
    assert any("gloo" in c for f in got if f["code"] == "nccl-unavailable-on-windows" for c in f["fix"]["commands"])


def test_duplicate_gpu_is_every_rank_on_one_gpu(tmp_path):
    # NCCL's init.cc: "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx"
    text = "torch.distributed.DistBackendError: NCCL error ... invalid usage\nLast error:\nDuplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000\n"
    assert "program-pins-all-ranks-to-one-gpu" in codes(paste_findings(tmp_path, text))


def test_a_two_node_job_that_fails_in_nccl_is_the_network_interface(tmp_path):
    run = "torchrun --nproc_per_node=8 --nnodes=2 --node_rank=1 --master_addr=10.1.1.20 --master_port=29500 train.py\n"
    err = "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n"
    got = paste_findings(tmp_path, "DDP training fails\n```\n" + run + "```\n```\n" + err + "```\n")
    assert severities(got).get("nccl-wrong-network-interface") == "warning", got
    single = run.replace("--nnodes=2 --node_rank=1", "--nnodes=1 --node_rank=0")
    assert "nccl-wrong-network-interface" not in codes(
        paste_findings(tmp_path, "DDP training fails\n```\n" + single + "```\n```\n" + err + "```\n")
    )


# --- Jetson: a container without the host's CUDA; numpy's OpenBLAS illegal instruction (checks/jetson18.py) -----------


def test_libcurand_missing_in_an_l4t_container_on_a_jetson_is_the_container_release(tmp_path):
    # dusty-nv/jetson-containers#126 (AGX Xavier, host L4T R32.3.1, image for r32.5.0)
    text = (
        "dustynv/ros:foxy-pytorch-l4t-r32.5.0 is missing libcurand.so.10 etc\n"
        "docker run --gpus all --runtime nvidia -it --rm dustynv/ros:foxy-pytorch-l4t-r32.5.0\n"
        '  File "/usr/local/lib/python3.6/dist-packages/torch/__init__.py", line 188, in <module>\n'
        "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\n"
    )
    assert "jetpack-container-mismatch" in codes(paste_findings(tmp_path, text))
    x86 = "OSError: libcurand.so.10: cannot open shared object file: No such file or directory\nin my docker container\n"
    assert "jetpack-container-mismatch" not in codes(paste_findings(tmp_path, x86))


def test_illegal_instruction_on_a_jetson_is_numpys_openblas(tmp_path):
    # numpy/numpy#18175 (Jetson Xavier NX, pip's numpy 1.19.5)
    text = "Illegal instruction\nI'm working on a Jetson Xavier NX (arm64) device\n>>> import numpy\nIllegal instruction (core dumped)\n"
    assert severities(paste_findings(tmp_path, text)).get("numpy-openblas-illegal-instruction-on-jetson") == "warning"
    assert "numpy-openblas-illegal-instruction-on-jetson" not in codes(
        paste_findings(tmp_path, ">>> import torch\nIllegal instruction (core dumped)\non my Ryzen desktop\n")
    )


def test_windows_status_dll_not_found_before_main_is_a_dll_load_failure(tmp_path):
    # LaurentMazare/tch-rs#128: a Rust program linked against libtorch, its DLLs not on PATH
    text = (
        "error: process didn't exit successfully: `target\\\\debug\\\\main.exe` (exit code: 0xc0000135, STATUS_DLL_NOT_FOUND)\n"
    )
    assert "dll-load-failure" in codes(paste_findings(tmp_path, text))


def test_docker_without_the_nvidia_runtime_is_the_container_toolkit_missing(tmp_path):
    # NVIDIA/nvidia-docker#838 (daemon.json written, dockerd not reloaded)
    text = "$ docker run --runtime=nvidia --rm nvidia/cuda nvidia-smi\ndocker: Error response from daemon: Unknown runtime specified nvidia.\n"
    assert "container-toolkit-missing" in codes(paste_findings(tmp_path, text))


def test_apt_without_the_toolkits_repository_is_the_container_toolkit_missing(tmp_path):
    # NVIDIA/nvidia-container-toolkit#97 (WSL Ubuntu 22.04): the APT repository was never configured
    text = "sudo apt install nvidia-container-toolkit\nReading package lists... Done\nE: Unable to locate package nvidia-container-toolkit\n"
    assert "container-toolkit-missing" in codes(paste_findings(tmp_path, text))


def test_the_driver_installer_without_kernel_headers_is_no_kernel_module(tmp_path):
    text = (
        "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure you have "
        "installed the kernel source files for your kernel and that they are properly configured\n"
    )
    got = paste_findings(tmp_path, text)
    assert "kernel-module-missing" in codes(got)
    assert any("linux-headers" in c for f in got if f["code"] == "kernel-module-missing" for c in f["fix"]["commands"])


def test_a_build_missing_cusparse_h_is_cuda_home_at_no_full_toolkit(tmp_path):
    # facebookresearch/maskrcnn-benchmark#685 (apex's build)
    text = (
        "/usr/local/lib/python3.6/dist-packages/torch/include/ATen/cuda/CUDAContext.h:6:22: fatal error: cusparse.h: "
        "No such file or directory\ncompilation terminated.\nerror: command '/usr/local/cuda/bin/nvcc' failed with exit status 1\n"
    )
    assert "cuda-home-not-set" in codes(paste_findings(tmp_path, text))


def test_torch_compile_refused_on_windows(tmp_path):
    # Stability-AI/StableCascade#33 and tloen/alpaca-lora#80
    text = (
        "File ~\\anaconda3\\envs\\casada\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py:375, in check_if_dynamo_supported\n"
        'raise RuntimeError("Windows not yet supported for torch.compile")\nRuntimeError: Windows not yet supported for torch.compile\n'
    )
    assert "torch-compile-unsupported-on-windows" in codes(paste_findings(tmp_path, text))


def test_ninja_missing_for_a_jit_extension(tmp_path):
    # zhanghang1989/PyTorch-Encoding#167
    text = (
        '  File "/home/u/.local/lib/python3.5/site-packages/torch/utils/cpp_extension.py", line 875, in verify_ninja_availability\n'
        '    raise RuntimeError("Ninja is required to load C++ extensions")\nRuntimeError: Ninja is required to load C++ extensions\n'
    )
    got = paste_findings(tmp_path, text)
    assert "ninja-missing" in codes(got)
    assert not any(c in codes(got) for c in ("cuda-home-not-set", "extension-abi-mismatch")), got
