"""Issue 21, facts area (round 5): what the facts state, read for what it means.

Texts are real, from public threads (URL beside each); the collect_env renderings follow collect_env.py's own output.
"""

from __future__ import annotations

from cudadoctor import registry
from cudadoctor.commands.check import attach_error
from cudadoctor.readers.collect_env import parse_collect_env
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _codes(env: str, error: str = ""):
    facts = parse_collect_env(env)
    attach_error(facts, error)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


# collect_env as torch 1.x prints it when the CUDA build's version was read but nothing else was collected.
ENV_TORCH13 = """Collecting environment information...
PyTorch version: 1.3.0
Is debug build: No
CUDA used to build PyTorch: Could not collect

OS: Could not collect
GCC version: Could not collect
CMake version: Could not collect

Python version: 3.6
Is CUDA available: No
CUDA runtime version: 10.1
GPU models and configuration: Could not collect
Nvidia driver version: Could not collect
cuDNN version: Could not collect

Versions of relevant libraries:
[pip3] torch==1.3.0
[conda] Could not collect
"""

# https://github.com/hhaAndroid/mmdetection-mini/issues/30 (torch 1.3.0 + CUDA 10.1 on a driver offering 10.0)
MMDET_MINI_30 = "AssertionError: The NVIDIA driver on your system is too old (found version 10000)."
# https://github.com/wuhuikai/FastFCN/issues/37 (the title, without torch's leading "The")
FASTFCN_37 = "NVIDIA driver on your system is too old"


def test_found_version_outweighs_a_build_read_from_could_not_collect():
    got = _codes(ENV_TORCH13, MMDET_MINI_30)
    assert "driver-too-old" in got
    assert got["driver-too-old"].evidence["driver_cuda"] == "10.0"


def test_torch_message_without_its_leading_the():
    assert "driver-too-old" in _codes(ENV_TORCH13, FASTFCN_37)


def test_cpu_tagged_build_still_never_blamed_on_the_driver_without_the_number():
    env = ENV_TORCH13.replace("1.3.0", "1.3.0+cpu")
    assert "driver-too-old" not in _codes(env, "")


def test_version_na_with_cuda_available_true_is_not_torch_missing():
    env = (
        "PyTorch version: N/A\nIs debug build: N/A\nCUDA used to build PyTorch: N/A\nROCM used to build PyTorch: N/A\n\n"
        "OS: Could not collect\nIs CUDA available: True\nGPU models and configuration: GPU 0: NVIDIA GeForce GTX 1050 Ti\n"
        "Nvidia driver version: Could not collect\n\nVersions of relevant libraries:\n[pip3] numpy==1.24.0\n[conda] Could not collect\n"
    )
    facts = parse_collect_env(env)
    assert facts["torch"].get("status") != "not-installed"
    assert "torch-not-installed" not in _codes(env)
    # torch's own N/A (import failed or absent) with availability N/A stays torch-not-installed
    absent = env.replace("Is CUDA available: True", "Is CUDA available: N/A")
    assert parse_collect_env(absent)["torch"].get("status") == "not-installed"


# ---------------------------------------------------------------- a container named in the prose of a paste

# https://github.com/NVIDIA/nvidia-docker/issues/341 (the container was run with plain `docker run`: no driver injected)
NVD_341 = (
    "I'm using `FROM nvidia/cuda:8.0-devel-ubuntu16.04` in my Dockerfile.\n"
    "After the build and run I'm getting\n\n```bash\n$ nvidia-smi\nbash: nvidia-smi: command not found\n```\n"
)


def _paste(text: str):
    from cudadoctor.readers import issue

    facts = issue.read(text)["facts"]
    rep = diagnose(facts, REG)
    return facts, {f.code for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def test_dockerfile_at_a_sentence_end_names_the_container():
    facts, codes = _paste(NVD_341)
    assert facts["system"].get("container") == "docker"
    assert "no-gpu-visible" in codes and "no-nvidia-driver" not in codes


def test_a_cuda_image_tag_alone_names_the_container():
    from cudadoctor.readers import containers

    got = containers.read(["nvidia/cuda:8.0-devel-ubuntu16.04", "bash: nvidia-smi: command not found"])
    assert got and got["kind"] == "docker"
    # a registry host or socket path is not the word docker
    assert containers.read(["pulling from docker.io/library/ubuntu", "unix:///var/run/docker.sock"]) is None


# ---------------------------------------------------------------- CUDA's own out-of-memory at an allocation call

# https://github.com/apache/mxnet/issues/5340 (title), https://github.com/charmplusplus/charm/issues/1488
OOM_TEXTS = (
    "pooled_storage_manager.h:80: cudaMalloc failed: out of memory",
    "Fatal CUDA Error out of memory at cuda-hybrid-api.cu:790.\n"
    "Return value 2 from 'cudaMallocHost(&pinnedChunk, bufSize * numBuffers)'.",
)


def test_cuda_out_of_memory_at_an_allocation_call_reads_as_memory_held():
    for text in OOM_TEXTS:
        _, codes = _paste(text)
        assert "gpu-memory-occupied" in codes, text
    # a plain mention of cudaMalloc with another failure is not out of memory
    _, codes = _paste("cudaMalloc failed: invalid device ordinal")
    assert "gpu-memory-occupied" not in codes
