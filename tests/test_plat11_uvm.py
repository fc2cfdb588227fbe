"""plat11: cudaErrorUnknown in its CUDA 10.1+ numbering (999) as torch's THC layer and Caffe print it reads as the
nvidia_uvm class (kb/errors/plat11.json), and nvidia-uvm-stale steps back when the report's nvidia_uvm entities show the
module not loaded with no suspend and no reload (checks/plat10.py uvm_not_loaded_shown, text_classes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import codes, paste_findings, severities

STALE = "nvidia-uvm-stale"
NOT_LOADED = "nvidia-uvm-not-loaded-after-reboot"
CORPUS = [
    json.loads(s)
    for s in (Path(__file__).parent / "data" / "error_corpus" / "plat11.jsonl").read_text(encoding="utf-8").splitlines()
    if s.strip()
]


@pytest.mark.parametrize("row", CORPUS, ids=[r["source"].split("github.com/")[-1] for r in CORPUS])
def test_status_999_wordings_are_the_uvm_class(tmp_path, row):
    assert severities(paste_findings(tmp_path, row["text"])).get(STALE) == "error", row["source"]


def test_status_999_then_a_reload_of_nvidia_uvm_stays_stale(tmp_path):
    # pytorch/pytorch#31179's THC lines, followed by the rmmod/modprobe that a forum answer gives for 999
    text = CORPUS[0]["text"] + "\nsudo rmmod nvidia_uvm\nsudo modprobe nvidia_uvm\n"
    found = paste_findings(tmp_path, text)
    assert severities(found).get(STALE) == "error" and NOT_LOADED not in codes(found)


def test_other_status_numbers_and_healthy_lines_are_not_999(tmp_path):
    for text in (
        "RuntimeError: cuda runtime error (98) : invalid device function at /pytorch/aten/src/THC/THCGeneral.cpp:50",
        "Found 999 images belonging to 2 classes.\nCUDA available: True",
    ):
        assert STALE not in codes(paste_findings(tmp_path, text)), text


def test_stale_steps_back_when_the_module_is_shown_not_loaded(tmp_path):
    base = "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment\n"
    nixos = base + "NixOS 24.05, driver 555\n"
    found = paste_findings(tmp_path, nixos)
    assert severities(found).get(NOT_LOADED) == "warning" and STALE not in codes(found)
    loaded = base + "After `sudo modprobe nvidia-uvm` it works until the next reboot.\n"
    found = paste_findings(tmp_path, loaded)
    assert NOT_LOADED in codes(found) and STALE not in codes(found)
    lsmod = base + "$ lsmod | grep nvidia\nnvidia_drm            122880  1\nnvidia_modeset       1916928  1 nvidia_drm\n"
    found = paste_findings(tmp_path, lsmod)
    assert severities(found).get(NOT_LOADED) == "error" and STALE not in codes(found)


def test_stale_stays_after_a_suspend_or_with_no_module_entity(tmp_path):
    base = "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment\n"
    for text in (base, base + "NixOS 24.05; it happens after the laptop resumes from suspend.\n"):
        found = paste_findings(tmp_path, text)
        assert STALE in codes(found) and NOT_LOADED not in codes(found), text
