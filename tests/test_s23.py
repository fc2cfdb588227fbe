"""Session 23 (issue 21): causes that had no code, each recurring across blind batches and the public threads of its class
(wordings in kb/errors/b23.json, the checks in checks/build23.py): an extension's source using torch's removed THC
headers; CUDA 13's CCCL headers moved to include/cccl; a path over Windows' 260-character limit."""

from __future__ import annotations

from checkcli import codes, paste_findings, run_check, severities, write

# MVIG-SJTU/AlphAction#84: torch 1.11.0+cu115.
ALPHACTION = """I tried to install the repo with pytorch 1.11.0+cu115 and I got the following error.
AlphAction/alphaction/csrc/cuda/ROIPool3d_cuda.cu:4:10: fatal error: THC/THC.h: No such file or directory
"""
# b142-02 (DetZero on torch 2.0.1), a Chinese-language gcc.
DETZERO = "torch 2.0.1\nfatal error: THC/THC.h: 没有那个文件或目录\n"
# MSVC's wording of the same (a Windows build of a pcdet-style extension).
MSVC_THC = "src\\roi_align_cuda.cpp(3): fatal error C1083: Cannot open include file: 'THC/THC.h': No such file or directory\n"

# b123-06 (DeepGEMM with CUDA 13.0, trimmed) and b123-07 (FlashMLA, its include path naming cuda-13.0).
DEEPGEMM = """nvcc --version
Cuda compilation tools, release 13.0, V13.0.48
third-party/cutlass/include/cutlass/cutlass.h:43:35: fatal error: cuda/std/utility: No such file or directory
"""
FLASHMLA = """-I/usr/local/cuda-13.0/include -c csrc/pybind.cpp
/root/workdir/FlashMLA/csrc/cutlass/include/cutlass/fast_math.h:42:10: fatal error: cuda/std/utility: No such file or directory
"""

# vulncheck-oss/sdk-python#1: pip's own hint (pypa/pip#10046).
PIP_HINT = """ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\Users\\\\<user-name>\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.10_qbz5n2kfra8p0\\\\LocalCache\\\\local-packages\\\\Python310\\\\site-packages\\\\vulncheck_sdk\\\\models\\\\render_response_with_metadata_array_advisory_becton_dickinson_advisory_paginate_pagination.py'
HINT: This error might have occurred since this system does not have Windows Long Path support enabled. You can find information on how to enable this at https://pip.pypa.io/warnings/enable-long-paths
"""
# b124-02 (pip 19 on torch 1.1.0, before pip had the hint): the path alone, 265 characters.
PIP_OLD = (
    "ERROR: Could not install packages due to an EnvironmentError: [Errno 2] No such file or directory: "
    "'C:\\\\Users\\\\[username]\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.7_qbz5n2kfra8p0\\\\"
    "LocalCache\\\\local-packages\\\\Python37\\\\site-packages\\\\caffe2\\\\python\\\\serialized_test\\\\data\\\\"
    "operator_test\\\\collect_and_distribute_fpn_rpn_proposals_op_test.test_collect_and_dist.zip'\n"
)
# b124-16: ninja on PyTorch's Windows CI.
NINJA_260 = "ninja: error: Stat(C:/actions-runner/_work/pytorch/pytorch/test/cpp_extensions/x/build/temp.win-amd64-cpython-310/Release/get_any_data_ptr.obj): Filename longer than 260 characters\n"


def test_an_extension_including_thc_headers_on_torch_1_11_or_newer(tmp_path):
    for text in (ALPHACTION, DETZERO, MSVC_THC):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("extension-source-uses-removed-thc-api") == "error", text[:40]
        fix = " ".join(c for f in found if f["code"] == "extension-source-uses-removed-thc-api" for c in f["fix"]["commands"])
        assert "C10_CUDA_CHECK" in fix and "THC/THC.h" in fix
    # torch 1.8 still ships THC: a missing THC.h there is not this cause
    assert "extension-source-uses-removed-thc-api" not in codes(
        paste_findings(tmp_path, ALPHACTION.replace("1.11.0+cu115", "1.8.1+cu111"))
    )


def test_cccl_headers_missing_under_cuda_13(tmp_path):
    for text in (DEEPGEMM, FLASHMLA):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("cuda13-cccl-headers-moved") == "error", text[:40]
        assert any("include/cccl" in c for f in found if f["code"] == "cuda13-cccl-headers-moved" for c in f["fix"]["commands"])
    # the CUDA unknown: a likely cause only
    bare = "fatal error: cuda/std/utility: No such file or directory\n"
    assert severities(paste_findings(tmp_path, bare)).get("cuda13-cccl-headers-moved") == "warning"
    # CUDA 12.4 keeps the headers in include/: not this cause
    cuda12 = DEEPGEMM.replace("release 13.0, V13.0.48", "release 12.4, V12.4.131")
    assert "cuda13-cccl-headers-moved" not in codes(paste_findings(tmp_path, cuda12))


def test_a_path_over_windows_max_path(tmp_path):
    for text in (PIP_HINT, PIP_OLD, NINJA_260):
        assert severities(paste_findings(tmp_path, text)).get("windows-path-too-long") == "error", text[:60]
    # a short path that does not exist is a missing file, not the limit
    short = (
        "ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\x\\\\torch-2.1.0.whl'\n"
    )
    assert "windows-path-too-long" not in codes(paste_findings(tmp_path, short))


# dmlc/decord#71 (b149-14): decord's pip wheel has no CUDA (a maintainer); meta-pytorch/torchcodec#442 (b149-15): the
# PyPI torchcodec is its CPU build; facebookresearch/faiss#1013 (b150-05): faiss's GPU class missing, said in words.
DECORD = "CUDA not enabled. Requested context GPU(0).\n---\nSame question here. Any update or solution?\n"
TORCHCODEC = """with the standard pip install torchcodec version (and either CUDA version of torch 2.5.1), I get this:
  File "/home/u/.venv/lib/python3.10/site-packages/torchcodec/decoders/_video_decoder.py", line 96, in __init__
    core.add_video_stream(
RuntimeError: Unsupported device: cuda
"""
# torchcodec#1043: the same words naming a backend variant, on a CUDA build (a Jetson Thor source build): not this.
TORCHCODEC_BETA = "RuntimeError: Unsupported device: cuda (device type: cuda, variant: beta)\n"
FAISS_WORDS = "conda faiss-gpu install has no `StandardGpuResources` attribute.\n"


def test_video_and_search_libraries_cpu_builds(tmp_path):
    for text, lib in ((DECORD, "decord"), (TORCHCODEC, "torchcodec"), (FAISS_WORDS, "faiss")):
        found = [f for f in paste_findings(tmp_path, text) if f["code"] == "companion-cpu-only-build"]
        assert found and found[0]["title"].startswith(lib), (lib, found)
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, TORCHCODEC_BETA))


def test_the_error_line_alone_names_the_cpu_build_through_the_installed_packages(tmp_path):
    env = (
        "PyTorch version: 2.5.1+cu124\nIs CUDA available: True\nCUDA used to build PyTorch: 12.4\n\n"
        "Versions of relevant libraries:\n[pip3] torch==2.5.1\n[pip3] torchcodec==0.1.1\n"
    )
    cenv, err = write(tmp_path, env, "env.txt"), write(tmp_path, "RuntimeError: Unsupported device: cuda\n", "err.txt")
    found = run_check("--from-collect-env", str(cenv), "--error-file", str(err))
    titles = [f["title"] for f in found if f["code"] == "companion-cpu-only-build"]
    assert titles and titles[0].startswith("torchcodec"), titles


# faiss-wheels#54 (b150-12) and pytorch/pytorch#79304: time spent in the driver's PTX JIT compiler.
FAISS_HANG = (
    "The index_cpu_to_gpu() will hang, spinning a CPU at 100% seemingly forever, mostly in "
    "`libnvidia-ptxjitcompiler.so.510.54`.\n"
)
GDB_JIT = """#12 0x00007f5ee0115e9c in ?? () from /usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1
#13 0x00007f5ee01091ec in __cuda_CallJitEntryPoint () from /usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.1
"""


def test_a_process_stuck_in_the_ptx_jit_compiler(tmp_path):
    for text in (FAISS_HANG, GDB_JIT):
        assert "ptx-jit-on-first-cuda-call" in codes(paste_findings(tmp_path, text)), text[:40]
    # the compiler library missing is another cause (ptx-jit-compiler-missing), not a slow JIT
    missing = "CUDA_ERROR_JIT_COMPILER_NOT_FOUND: PTX JIT compiler library not found\n"
    assert "ptx-jit-on-first-cuda-call" not in codes(paste_findings(tmp_path, missing))


# trixi-gpu/TrixiCUDA.jl#16 (b154-15, a GitHub-hosted runner) and JuliaGPU/CUDA.jl#2089: CUDA.jl's words.
def test_cuda_jl_finding_no_driver(tmp_path):
    for text in ("  Got exception outside of a @test\n  CUDA driver not found\n", "No system CUDA driver found\n"):
        assert "no-nvidia-driver" in codes(paste_findings(tmp_path, text)), text


# sgl-project/sglang (b154-10): a B200 whose memory other processes hold; no torch version stated.
B200_HELD = """This has been causing systematic failures on B200 machines where all 4 GPUs show ~156GB used with only ~22GB free.
torch.OutOfMemoryError: CUDA out of memory.
"""


def test_a_gpu_whose_memory_was_allocated_is_no_missing_kernels_guess(tmp_path):
    assert "gpu-arch-unsupported" not in codes(paste_findings(tmp_path, B200_HELD))
    # the same GPU with nothing but an unused GPU said: the newest-builds guess stands
    assert "gpu-arch-unsupported" in codes(
        paste_findings(tmp_path, "My B200 is not used by the program (pip install, python 3.10).\n")
    )


# HandBrake/HandBrake#2204 (b149-19) and #1998 (b149-13): ffmpeg's NVENC refusing the GPU; gyroflow#403 (b149-11):
# an app's words on an MX230.
HANDBRAKE_840M = """No NVENC capable devices found [nvidia geforce 850m]
[h264_nvenc @ 000001b572468100] OpenEncodeSessionEx failed: unsupported device (2)
[h264_nvenc @ 000001b572468100] No NVENC capable devices found
"""
GYRO_MX230 = """GPU: NVIDIA GeForce MX230
No matter which option I select, there is always a message ''GPU encoder failed to initialize..... rendering is done on the CPU.....''.
"""
# an encoder failing on a GPU that has NVENC (a GTX 1650): not this cause
NVENC_1650 = "[hevc_nvenc @ 000001580c1fb7c0] No capable devices found\nI have an Nvidia GTX 1650 GDDR 6\n"


def test_a_gpu_without_nvenc(tmp_path):
    assert severities(paste_findings(tmp_path, HANDBRAKE_840M)).get("gpu-lacks-nvenc") == "error"
    found = paste_findings(tmp_path, GYRO_MX230)
    assert severities(found).get("gpu-lacks-nvenc") == "error"
    assert any("MX230" in f["title"] for f in found if f["code"] == "gpu-lacks-nvenc")
    assert "gpu-lacks-nvenc" not in codes(paste_findings(tmp_path, NVENC_1650))
    # a GT 730 exists with and without NVENC: a likely cause only
    assert (
        severities(paste_findings(tmp_path, "GeForce GT 730\nNo NVENC capable devices found\n")).get("gpu-lacks-nvenc")
        == "warning"
    )


# styler00dollar/VSGAN-tensorrt-docker#42 (b149-02): hevc_nvenc in a Compose container without the video capability.
VSGAN = """docker compose run --rm vsgan_tensorrt
[hevc_nvenc @ 0x55ca461fa380] Cannot load libnvidia-encode.so.1
[hevc_nvenc @ 0x55ca461fa380] The minimum required Nvidia driver for nvenc is (unknown) or newer
"""


def test_a_container_without_the_video_capability(tmp_path):
    found = paste_findings(tmp_path, VSGAN)
    assert severities(found).get("container-gpu-capabilities-lack-video") == "error"
    cmds = " ".join(c for f in found if f["code"] == "container-gpu-capabilities-lack-video" for c in f["fix"]["commands"])
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,video,utility" in cmds
    # no container in sight: a likely cause, with the host's package as the other fix
    bare = "[h264_cuvid @ 0x3a46360] Cannot load libnvcuvid.so.1\n"
    assert severities(paste_findings(tmp_path, bare)).get("container-gpu-capabilities-lack-video") == "warning"


# myshell-ai/MeloTTS#40 (b158-04), Zheng-Chong/CatVTON#23 (b158-07), vladmandic/sdnext#1923 (b158-05).
MELO_M1 = """docker build successfully. my macbookpro is M1 chip.
`sudo docker run --gpus all -it -p 8888:8888 melotts`
docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
"""
CATVTON_MAC = """OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.
Hello, I am using macOS with silicone chip. I followed installing guide in both comfyui and catvton.
"""
SDNEXT_IPEX = "[issue]: IPEX: Torch not compiled with CUDA enabled\nAssertionError: Torch not compiled with CUDA enabled\n"


def test_macs_and_intel_gpus_asked_for_nvidia_software(tmp_path):
    for text in (MELO_M1, CATVTON_MAC):
        found = paste_findings(tmp_path, text)
        assert "non-nvidia-gpu" in codes(found), text[:40]
        assert any("Mac" in f["title"] for f in found if f["code"] == "non-nvidia-gpu")
    found = paste_findings(tmp_path, SDNEXT_IPEX)
    assert severities(found).get("non-nvidia-gpu") == "error"
    assert any("xpu" in c for f in found if f["code"] == "non-nvidia-gpu" for c in f["fix"]["commands"])
    # an M-series chip named beside an NVIDIA GPU (a remote box): not this cause
    both = "I develop on an M1 chip MacBook and run on a server with an RTX 4090\nTorch not compiled with CUDA enabled\n"
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, both))


# pytorch/pytorch#84803 (b156-02) and the A100-PCIE report beside it (b156-03): a GPU-to-GPU copy silently wrong.
COPY_ZEROS = """Moving a tensor across CUDA devices gets zero tensor, CUDA 11.0
- GPU: A100-PCIE-40GB X 4
>>> a = torch.tensor([1., 2.]).to('cuda:0')
>>> a.to('cuda:1')
tensor([0., 0.], device='cuda:1')        # zeros, which is wrong
However, if I move the tensor once to CPU and then to `cuda:1`, it works correctly.
"""


def test_a_gpu_to_gpu_copy_that_returns_zeros(tmp_path):
    found = paste_findings(tmp_path, COPY_ZEROS)
    assert "pcie-acs-blocks-p2p" in codes(found)


# NVIDIA/Megatron-LM (b156-07): ENOSPC in an NGC container started without --shm-size; XPK (b156-08): a pod without a
# /dev/shm volume failing at torch.distributed.broadcast.
MEGATRON = """[QUESTION] OSError: [Errno 28] No space left on device
yes, I run it in docker.
`docker run -it --name m -v /data:/home/u --gpus all nvcr.io/nvidia/pytorch:23.09-py3`
"""
TITAN = """    torch.distributed.broadcast(seed_tensor, src=0)
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, unhandled system error
Last error:
Error while creating shared memory segment /dev/shm/nccl-x (size 9637888), No space left on device
"""


def test_no_space_left_in_shared_memory(tmp_path):
    for text in (MEGATRON, TITAN):
        assert "shm-exhausted" in codes(paste_findings(tmp_path, text)), text[:40]
    # a pip install filling the disk: not shared memory
    pip_full = "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device\n"
    assert "shm-exhausted" not in codes(paste_findings(tmp_path, pip_full))
    run_ok = MEGATRON.replace("--gpus all", "--gpus all --ipc=host")
    assert "shm-exhausted" not in codes(paste_findings(tmp_path, run_ok))


# microsoft/DeepSpeed (b156-05): two nodes, ncclRemoteError; PaddleFleetX (b156-14): multi-machine training stuck after
# "init nccl", in Chinese.
DS_2NODE = """torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, remote process exited or there was a network error, NCCL version 2.18.6
deepspeed --num_gpus 2 --num_nodes 2 --master_addr 192.168.3.100 --hostfile hostfile cifar10_deepspeed.py
"""
FLEET = """多机多卡分布式训练卡住
发现两个节点都卡在了init nccl后
I0302 02:01:36.274989 31267 nccl_context.cc:83] init nccl context nranks: 4 local rank: 0/1 gpu id: 0/1 ring id: 0/1
"""


def test_nccl_across_machines(tmp_path):
    for text in (DS_2NODE, FLEET):
        assert "nccl-wrong-network-interface" in codes(paste_findings(tmp_path, text)), text[:40]
    one_node = DS_2NODE.replace("--num_nodes 2", "--num_nodes 1").replace(" --hostfile hostfile", "")
    assert "nccl-wrong-network-interface" not in codes(paste_findings(tmp_path, one_node))


# tensorflow/tensorrt#206 (b155-04): TensorRT 7's header check; open-mmlab/mmdeploy#1231 (b155-03): another GPU.
TRT7 = "E tensorflow/compiler/tf2tensorrt/utils/trt_logger.cc:42] DefaultLogger coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Version tag does not match)\n"


def test_a_tensorrt_engine_from_elsewhere(tmp_path):
    for text in (TRT7, "[Bug] Engine file generatedd on an incompatible device.\n"):
        assert "tensorrt-engine-built-with-other-version" in codes(paste_findings(tmp_path, text)), text[:40]


# MVIG-SJTU/AlphaPose (b155-05): CUDA IPC on a Jetson TX2.
TX2_IPC = """nvidia@nvidia-desktop:~/AlphaPose$ python3 demo.py --indir examples/demo/ --outdir examples/result
RuntimeError: cuda runtime error (71) : operation not supported at /home/nvidia/pytorch/torch/csrc/generic/StorageSharing.cpp:245
can you give me some advice ,my tools is nvidia jeston tx2
"""


def test_cuda_ipc_on_a_jetson(tmp_path):
    found = codes(paste_findings(tmp_path, TX2_IPC))
    assert "jetson-cuda-ipc-unsupported" in found and "windows-cuda-ipc-unsupported" not in found
    windows = TX2_IPC.replace("nvidia@nvidia-desktop:~/AlphaPose$ ", "C:\\AlphaPose> ").replace("nvidia jeston tx2", "windows 10")
    found = codes(paste_findings(tmp_path, windows))
    assert "windows-cuda-ipc-unsupported" in found and "jetson-cuda-ipc-unsupported" not in found


# comfyui-mcp (b160-01): a RunPod host whose driver runs CUDA 12.6 given a CUDA 12.8 image.
RUNPOD = (
    "The stock comfyui-mcp RunPod image is a CUDA 12.8 build and explicitly requires a host driver compatible with "
    "CUDA 12.8. In the observed incident the assigned host supported CUDA 12.6 and the stock container refused to start.\n"
)


def test_a_program_needing_a_newer_cuda_than_the_driver_runs(tmp_path):
    found = paste_findings(tmp_path, RUNPOD)
    assert severities(found).get("driver-too-old") == "warning"
    assert any("12.8" in f["title"] and "12.6" in f["title"] for f in found if f["code"] == "driver-too-old")
    # the driver runs more than the image needs: nothing to say
    assert "driver-too-old" not in codes(paste_findings(tmp_path, RUNPOD.replace("supported CUDA 12.6", "supported CUDA 12.9")))


# pytorch/torchtune (b162-01, healthy for the install): an AMD GPU under ROCm is no CUDA-on-AMD mix-up.
TORCHTUNE_ROCM = """utils/precision.py checks for cuda package version so AMD GPU training seems to throw an error about not supporting bf16
Can't train on my 7900xtx because i get the error:
`RuntimeError: bf16 precision was requested but not available on this hardware. Please use fp32 precision instead.`
It appears the bf16 check is verifing cuda packaging which won't be true for rocm?
"""


def test_an_amd_gpu_under_rocm_is_not_called_a_cuda_mix_up(tmp_path):
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, TORCHTUNE_ROCM))
    no_rocm = TORCHTUNE_ROCM.replace(" for rocm?", "?") + "RuntimeError: Torch not compiled with CUDA enabled\n"
    assert "non-nvidia-gpu" in codes(paste_findings(tmp_path, no_rocm))


# state-spaces/mamba's causal-conv1d in NetMamba (b163-06): the symbol's underscores rendered as Markdown emphasis.
def test_a_mangled_symbol_whose_underscores_became_emphasis(tmp_path):
    text = (
        "ImportError: /home/xx/miniconda3/envs/NetMamba/lib/python3.10/site-packages/causal_conv1d_cuda.cpython-310-x86_64"
        "-linux-gnu.so: undefined symbol: *ZNK3c1017SymbolicShapeMeta18init*is_contiguousEv\n"
    )
    assert "extension-abi-mismatch" in codes(paste_findings(tmp_path, text))


# python-poetry/poetry#7902 (b161-05) and Garden-AI/garden#213: Poetry's torch 2.0.1 without its nvidia-* wheels.
POETRY_7902 = """Poetry seems to ignore dependencies of pytorch 2.0.1 but correctly installs them from local whl file
[tool.poetry.dependencies]
python = "^3.11"
torch = "2.0.1"  # does NOT install nvidia-cublas-cu11
"""
GARDEN = """torch 2.0.1 fails to install dependent cuda libraries with poetry
`ValueError: libnvrtc.so.*[0-9].*[0-9] not found in the system path`
"""


def test_poetry_installing_torch_2_0_1_without_its_cuda_wheels(tmp_path):
    for text in (POETRY_7902, GARDEN):
        found = paste_findings(tmp_path, text)
        titles = [f["title"] for f in found if f["code"] == "cuda-library-missing"]
        assert titles and titles[0].startswith("Poetry installed torch 2.0.1"), (text[:40], titles)
    # pip and torch 2.0.1: not this cause
    assert not any(
        f["title"].startswith("Poetry")
        for f in paste_findings(
            tmp_path, "pip install torch==2.0.1\nValueError: libnvrtc.so.*[0-9].*[0-9] not found in the system path\n"
        )
    )


# NVlabs/nvdiffrec#39 and turboderp/exllama#225: torch's lock warning, file_baton's wait in a Ctrl+C traceback;
# NVIDIA/Megatron-LM#1050 (b162-04) and OpenRLHF#208: a hang beside the JIT build's own lines.
NVDIFFREC = """Warning: Lock file exists in build directory: 'C:\\\\Users\\\\AppData\\\\Local\\\\torch_extensions\\\\torch_extensions\\\\Cache\\\\py39_cu113\\\\renderutils_plugin\\\\lock'
Using C:\\\\Users\\\\AppData\\\\Local\\\\torch_extensions\\\\torch_extensions\\\\Cache\\\\py39_cu113 as PyTorch extensions root...
"""
EXLLAMA = """  File "###\\\\Lib\\\\site-packages\\\\torch\\\\utils\\\\cpp_extension.py", line 1538, in _jit_compile
    baton.wait()
  File "###\\\\Lib\\\\site-packages\\\\torch\\\\utils\\\\file_baton.py", line 42, in wait
    time.sleep(self.wait_seconds)
KeyboardInterrupt
"""
MEGATRON_HANG = "The program got stuck in \\u201dcompiling and loading fused kernels ...\\u201c and timed out after ten minutes\n"
OPENRLHF = """Got stuck when using PyTorch extensions root during multi-slurm node SFT and cannot continue
Using  .cache/torch_extensions/py310_cu118 as PyTorch extensions root...
"""


def test_a_jit_extension_build_waiting_on_a_stale_lock(tmp_path):
    for text in (NVDIFFREC, EXLLAMA):
        assert severities(paste_findings(tmp_path, text)).get("stale-extension-build-lock") == "error", text[:40]
    for text in (MEGATRON_HANG, OPENRLHF):
        assert severities(paste_findings(tmp_path, text)).get("stale-extension-build-lock") == "warning", text[:40]
    # the build's lines with an error, not a hang: not this cause
    failed = "Using /root/.cache/torch_extensions/py310_cu118 as PyTorch extensions root...\nRuntimeError: Error building extension 'fused_adam'\n"
    assert "stale-extension-build-lock" not in codes(paste_findings(tmp_path, failed))


# facefusion/facefusion-docker#8 (b168-06): docker logs' timestamps before the loader's line. cuDNN loading and libnvrtc
# missing stays cudnn-mismatch with its nvrtc fix (tests/test_sigs_classes.py, holdout h71).
FACEFUSION = """2023-10-12T14:55:40.727010349Z download_path: /root/.insightface/models/buffalo_l
2023-10-12T15:26:03.891534028Z Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or directory
"""


def test_a_loader_line_under_docker_timestamps_is_read(tmp_path):
    assert "cudnn-mismatch" in codes(paste_findings(tmp_path, FACEFUSION))


# TencentARC/GFPGAN#5, XPixelGroup/BasicSR#416 (b168-05's class): BasicSR's ops not compiled.
def test_basicsr_without_its_compiled_ops(tmp_path):
    for name in ("fused_act_ext", "deform_conv_ext", "upfirdn2d_ext"):
        found = paste_findings(tmp_path, f"NameError: name '{name}' is not defined\n")
        titles = [f["title"] for f in found if f["code"] == "extension-built-without-cuda"]
        assert titles and titles[0].startswith("BasicSR"), (name, titles)


# huggingface/text-embeddings-inference#34 (b127-01) and PaddlePaddle/Paddle#76037 (b80-05): the programs' own checks.
def test_programs_that_name_the_architectures_they_were_built_for(tmp_path):
    tei = "Error: Could not create backend\nCould not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80\n"
    paddle = (
        "Mismatched GPU Architecture: The installed PaddlePaddle package was compiled for 60 61 70 75 80 86 ,but your "
        "current GPU is 120 Solution: Install the correct wheel package\n"
    )
    for text in (tei, paddle):
        assert severities(paste_findings(tmp_path, text)).get("companion-arch-unsupported") == "error", text[:40]


# opencv/opencv-python#398 (b172-03), shimat/opencvsharp#123 (b172-01): OpenCV without CUDA.
OPENCV_216 = (
    "cv2.error: OpenCV(4.4.0) C:\\\\Users\\\\appveyor\\\\AppData\\\\Local\\\\Temp\\\\1\\\\pip-req-build-52oirelq\\\\opencv\\\\modules"
    "\\\\core\\\\include\\\\opencv2/core/private.cuda.hpp:106: error: (-216:No CUDA support) The library is compiled without "
    "CUDA support in function 'throw_no_cuda'\n"
)
OPENCVSHARP = (
    "int count = Cv2Gpu.GetCudaEnabledDeviceCount();\nit always returns 0. on the other side cudafy gives me the count 1.\n"
)


def test_opencv_without_cuda(tmp_path):
    for text in (OPENCV_216, OPENCVSHARP):
        found = paste_findings(tmp_path, text)
        titles = [f["title"] for f in found if f["code"] == "companion-cpu-only-build"]
        assert titles and titles[0].startswith("OpenCV"), (text[:40], titles)
    # a count of 1: nothing to say
    assert "companion-cpu-only-build" not in codes(paste_findings(tmp_path, OPENCVSHARP.replace("always returns 0", "returns 1")))


# ai4d-iasc/trixie#92 (b15-71): one cluster node fails to allocate, the same job runs on the others.
def test_out_of_memory_on_one_node_while_the_same_job_runs_elsewhere(tmp_path):
    node = (
        "cn119 fails to allocate GPU memory\neach time I submit a job on `cn119` I get an CUDA error about failing to "
        "allocate memory. The same job on a different node works fine.\n"
    )
    gpu = "RuntimeError: CUDA error: out of memory\nThe same script on another GPU runs fine.\n"
    for text in (node, gpu):
        assert "gpu-memory-occupied" in codes(paste_findings(tmp_path, text)), text[:40]
    # the failure without the contrast: nothing says the memory is held elsewhere
    alone = "each time I submit a job on `cn119` I get an CUDA error about failing to allocate memory.\n"
    assert "gpu-memory-occupied" not in codes(paste_findings(tmp_path, alone))


# ethereum-mining/ethminer#1138 (b179-10): the miner's own driver check (9010 = the driver's CUDA 9.1).
def test_ethminers_insufficient_cuda_driver(tmp_path):
    text = "[0.15.0.dev11] Error: Insufficient CUDA driver: 9010.\n| NVIDIA-SMI 390.48                 Driver Version: 390.48                    |\n"
    assert severities(paste_findings(tmp_path, text)).get("driver-too-old") == "error"


# microsoft/WSL#9952 (b71-09): H100 PCIe, TCC only; microsoft/WSL#12835 (b140-07): a Tesla P4 under WSL 2.
WSL_H100 = """WSL/CUDA unsupported on H100
Specifically for a PCIe  H100 cards the GPUs are not recognized by WSL even though the latest NVIDA drivers are installed.
- WSL only supports CUDA when running in WDDM mode.
- H100 PCIe cards do not support WDDM mode, only TCC mode (nvidia-smi refuses to switch into TCC mode)
"""
WSL_P4 = """WSL2 GPU bug on tesla series
- [x] WSL 2
GPU: NV Tesla p4
however when i first update wsl.exe and NV driver. i find i can not use nvidia-smi in wsl2 linux os
"""


def test_a_datacenter_gpu_in_tcc_mode_under_wsl(tmp_path):
    assert severities(paste_findings(tmp_path, WSL_H100)).get("wsl-gpu-in-tcc-mode") == "error"
    assert severities(paste_findings(tmp_path, WSL_P4)).get("wsl-gpu-in-tcc-mode") == "warning"
    # a GeForce under WSL that nvidia-smi cannot reach: another cause
    geforce = WSL_P4.replace("NV Tesla p4", "RTX 3060").replace("tesla series", "my laptop")
    assert "wsl-gpu-in-tcc-mode" not in codes(paste_findings(tmp_path, geforce))


# citra-emu (b180-08), mitsuba-renderer/drjit (b174-07), mmp/pbrt-v4 (b174-09), llama.cpp (b180-10): the failure tied
# to a driver release in the reporter's words.
REGRESSIONS = (
    "System crashes after updating to nvidia driver 470.86\nAfter updating to NVIDIA driver 470.86 when launching a game the system crashes.\n",
    'Hello. Got this error after updating NVIDIA driver to latest version 565.90 even with "Hello World"\n',
    "pbrt_exe (debug) crashes after driver upgrade\nFollowing an upgrade of Nvidia driver to 511.65, pbrt_exe crashes\n",
    "Eval bug: Performance degradation (t/s drops from 70 to 50) with NVIDIA driver versions above 576.33\n",
)


def test_a_failure_that_started_with_a_driver_release(tmp_path):
    for text in REGRESSIONS:
        assert severities(paste_findings(tmp_path, text)).get("driver-regression") == "warning", text[:50]
    found = paste_findings(tmp_path, REGRESSIONS[0])
    assert any("470.86" in f["title"] for f in found if f["code"] == "driver-regression")
    # a driver updated without a reboot: the library/module mismatch, not a regression
    mismatch = (
        "After updating to nvidia driver 535.54 nvidia-smi says: Failed to initialize NVML: Driver/library version mismatch\n"
    )
    assert "driver-regression" not in codes(paste_findings(tmp_path, mismatch))
