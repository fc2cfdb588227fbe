"""Causes said in words (kb/errors/prose13.json): a container's /dev/shm too small for DataLoader workers, in the
wordings of maintainers and reporters (tests/data/error_corpus/prose13.jsonl), and not GPU shared memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.errortext import signatures

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "prose13.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SIGS = signatures.parse(signatures.kb_document("prose13.json"))


def _codes(text: str) -> set:
    return {s.code for s in SIGS if signatures.compiled(s.regex).search(text)}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["source"].rsplit("/", 2)[-1])
def test_real_wordings_read_as_their_cause(row):
    assert _codes(row["text"]) == {row["code"]}


def test_a_pull_request_stating_the_cause_is_diagnosed(tmp_path):
    # azavea/raster-vision#1077's description (a maintainer's fix of its own Docker image)
    text = (
        "Avoid shared memory-related errors when doing training with num_workers > 0\n"
        "Currently, running a training job with `num_workers > 0` leads to a cryptic error message from the "
        "`DataLoader`. This error is known to occur when the shared memory in the Docker container is insufficient."
    )
    assert "shm-exhausted" in codes(paste_findings(tmp_path, text))


@pytest.mark.parametrize(
    "text",
    [
        # GPU shared memory: per block, Triton's resource check, ptxas
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
        "Reducing block sizes or `num_stages` may help.",
        "ptxas error   : Entry function '_Z3fooPf' uses too much shared data (0x10000 bytes, 0xc000 max)",
        "my kernel fails: shared memory per block is not enough for this tile size",
        # memory of a container, not its /dev/shm
        "I run it in a docker container with 64GB of RAM and an A100",
    ],
)
def test_other_memories_are_not_shm(text):
    assert _codes(text) == set()


# --- NVIDIA's NGC images refusing the GPU -----------------------------------------------------------------------------


def test_ngc_image_older_than_the_gpu_names_the_image_not_the_torch_wheel(tmp_path):
    # HuangJunJie2017/BEVDet#314 (nvcr.io/nvidia/tensorrt:22.07-py3 on an RTX 4090; 22.12 runs it)
    text = (
        "WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in this version of the container\n"
        "ERROR: No supported GPU(s) detected to run this container"
    )
    f = paste_findings(tmp_path, text)
    assert codes(f)[:1] == ["gpu-arch-unsupported"]
    arch = next(x for x in f if x["code"] == "gpu-arch-unsupported")
    assert "NGC container image predates the GeForce RTX 4090" in arch["title"]
    fix = " ".join(arch["fix"]["commands"])
    assert "later release of the image" in fix and "pip install torch" not in fix


def test_ngc_image_newer_than_the_gpu_says_earlier_release(tmp_path):
    # fauxpilot/fauxpilot#69 (a Tesla K40m, compute capability 3.5)
    f = paste_findings(tmp_path, "ERROR: Detected NVIDIA Tesla K40m GPU, which is not supported by this container")
    arch = next(x for x in f if x["code"] == "gpu-arch-unsupported")
    assert "no longer supports the Tesla K40m" in arch["title"]
    assert "earlier release of the image" in " ".join(arch["fix"]["commands"])


def test_the_no_supported_gpu_line_alone_is_not_an_architecture_verdict():
    # fauxpilot/fauxpilot#104: the line alone, fixed by a system upgrade (not the image)
    assert "gpu-arch-unsupported" not in _codes("ERROR: No supported GPU(s) detected to run this container")


# --- the kernel module not loaded, in nvidia-settings' and NVML's words ------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # an Ubuntu forum thread (2018): nvidia-settings after a purge and reinstall; lsmod showed no nvidia module
        "$ nvidia-settings\nERROR: NVIDIA driver is not loaded\nERROR: Unable to load info from any available system\n\n"
        "lsmod | grep nvidia and lsmod | grep nouveau\ncomes up with nothing",
        # NVML's NVML_ERROR_DRIVER_NOT_LOADED (9) as pynvml raises it
        "pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded",
    ],
)
def test_driver_not_loaded_is_the_kernel_module(text):
    assert _codes(text) == {"kernel-module-missing"}


def test_driver_not_loaded_wording_in_prose_is_not_matched():
    # advice and descriptions, not the tools' output
    assert _codes("When the NVIDIA driver is not loaded (hybrid mode), nvidia-smi prints an error string") == set()


# --- CUDA lost after suspend/resume, said in words -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # ollama's troubleshooting page
        "On linux, after a suspend/resume cycle, sometimes Ollama will fail to discover your NVIDIA GPU, and fallback "
        "to running on the CPU.",
        # a rootless Docker report (ollama in a container, nvidia-smi still working)
        "After resuming from suspension, NVIDIA GPU functionality inside rootless Docker containers stops working, "
        "even though nvidia-smi runs successfully within the container.",
        "torch.cuda.is_available() == False after the laptop wakes from sleep; a reboot fixes it",
    ],
)
def test_cuda_lost_after_suspend_is_a_stale_uvm(text):
    assert "nvidia-uvm-stale" in _codes(text)


@pytest.mark.parametrize(
    "text",
    [
        "After resuming from suspend the fans stay at full speed",
        "The GPU is used fine; after suspend I only lose the external monitor",
    ],
)
def test_suspend_without_a_cuda_symptom(text):
    assert "nvidia-uvm-stale" not in _codes(text)


# --- a kernel upgrade said to have broken the NVIDIA driver --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # an Ubuntu Forums report (Ubuntu 11.10, driver 295.40)
        "Back in June, I reported that upgrading from kernel 3.0.0-20 to -21 broke a system using NVidia's driver version 295.40.",
        # GoogleCloudPlatform/compute-gpu-installation#18
        "After a kernel upgrade, the installed NVIDIA driver may stop working (see below).",
        "my nvidia driver stopped working after the kernel update",
    ],
)
def test_kernel_upgrade_broke_the_driver(text):
    assert "kernel-module-missing" in _codes(text)


@pytest.mark.parametrize(
    "text",
    [
        "I updated the nvidia driver and the kernel is 5.15",
        "kernel update went fine and nvidia driver works",
        "The Linux kernel and the NVidia driver are updated frequently.",
    ],
)
def test_kernel_and_driver_named_without_a_break(text):
    assert "kernel-module-missing" not in _codes(text)


# --- Accelerate's bf16 refusal ----------------------------------------------------------------------------------------


def test_accelerate_bf16_refusal_is_a_warning_without_the_gpu_and_an_error_with_a_t4(tmp_path):
    line = "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported device."
    assert _codes(line) == {"gpu-lacks-bf16"}
    assert severities(paste_findings(tmp_path, line)).get("gpu-lacks-bf16") == "warning"
    with_gpu = "GPU 0: Tesla T4\n" + line
    assert severities(paste_findings(tmp_path, with_gpu)).get("gpu-lacks-bf16") == "error"
