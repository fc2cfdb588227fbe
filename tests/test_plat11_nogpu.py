"""plat11: a person saying the machine has no GPU at all (readers/nogpu.py, wording in kb/errors/plat11.json) with CUDA
asked for and unavailable and no NVIDIA GPU shown is no-nvidia-driver's "no NVIDIA GPU" form (checks/plat10.py
no_gpu_said, a fallback: any other cause found first stands). Real wordings from public threads."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.readers import nogpu

CODE = "no-nvidia-driver"


@pytest.mark.parametrize(
    "line, said",
    [
        # https://github.com/NVlabs/neuralrgbd/issues/24
        ("So I have a 'cpu only' installation. Since I don't have a GPU I don't need CUDA.", "I don't have a GPU"),
        # https://github.com/karpathy/llm.c/issues/88
        (
            "I am running the code in my laptop which does not contain nvidia-graphics card .",
            "my laptop which does not contain nvidia-graphics card",
        ),
        # https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/557
        ("I am a project student and I dont have a gpu enabled system,So  how can i do this", "I dont have a gpu"),
        # https://github.com/salesforce/CodeGen/issues/8
        (
            "It gives me error No CUDA GPUs are available because I dont have any NVIDIA graphics card.",
            "I dont have any NVIDIA graphics card",
        ),
    ],
)
def test_a_person_saying_there_is_no_gpu_is_read(line, said):
    got = nogpu.read(["some title", line])
    assert got and got["line"] == 2 and got["said"] == said


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: No CUDA GPUs are available",  # a program's words: what it saw, not what the machine has
        "I don't have a GPU problem, the training is just slow on my RTX 3090",
        "My laptop has a GPU (RTX 4060) but torch does not see it",
        "I have no idea why the GPU is not used",
    ],
)
def test_other_lines_are_not_read(line):
    assert nogpu.read([line]) is None


def test_no_gpu_said_with_cuda_unavailable_is_a_likely_no_nvidia_driver(tmp_path):
    # DMMR#6's failure line (https://github.com/boycehbz/DMMR/issues/6) with neuralrgbd#24's sentence
    text = "CUDA is not available, exiting!\nSince I don't have a GPU I don't need CUDA. Can it be run using cpu only?\n"
    assert severities(paste_findings(tmp_path, text)).get(CODE) == "warning"


def test_it_stays_silent_without_a_failure_with_an_nvidia_gpu_named_or_when_another_cause_is_found(tmp_path):
    assert CODE not in codes(paste_findings(tmp_path, "Since I don't have a GPU I don't need CUDA.\n"))
    named = "CUDA is not available, exiting!\nI don't have a GPU driver yet for my GeForce RTX 3060.\n"
    assert CODE not in codes(paste_findings(tmp_path, named))
    # neuralrgbd#24 itself: a CPU build on a machine the report says has no GPU is the right build (session 21): a
    # warning to run the program on the CPU, not an error asking for a CUDA build; the fallback stays out
    cpu = "AssertionError: Torch not compiled with CUDA enabled\nSince I don't have a GPU I don't need CUDA.\n"
    found = paste_findings(tmp_path, cpu)
    assert severities(found).get("cpu-only-torch") == "warning" and CODE not in codes(found)
