"""nvidia-uvm-not-loaded-after-reboot from the report's nvidia_uvm entities (readers/uvm.py, checks/plat10.py through
jit.py's check) on real public threads it was not written from (tests/data/plat10/uvm_threads.jsonl): a module never
loaded is named, a module stale after a suspend (reloaded to fix it) is left to nvidia-uvm-stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.readers import uvm

THREADS = [
    json.loads(s)
    for s in (Path(__file__).parent / "data" / "plat10" / "uvm_threads.jsonl").read_text(encoding="utf-8").splitlines()
    if s.strip()
]
CODE = "nvidia-uvm-not-loaded-after-reboot"


@pytest.mark.parametrize("row", THREADS, ids=[r["source"].split("github.com/")[-1] for r in THREADS])
def test_real_threads(tmp_path, row):
    found = paste_findings(tmp_path, row["text"])
    if row["expect"]:
        assert severities(found).get(CODE) == row["expect"], (row["source"], codes(found))
    else:
        assert CODE not in codes(found), (row["source"], codes(found))
        assert "nvidia-uvm-stale" in codes(found)


def test_lsmod_without_nvidia_uvm_is_read():
    lines = [
        "$ lsmod | grep nvidia",
        "nvidia_drm            122880  1",
        "nvidia_modeset       1916928  1 nvidia_drm",
        "nvidia              9 0",
    ]
    got = uvm.read(lines)
    assert got and got["lsmod_nvidia"] == ["nvidia_drm", "nvidia_modeset"] and got["lsmod_has_uvm"] is False
    got = uvm.read(lines + ["nvidia_uvm           4882432  0"])
    assert got and got["lsmod_has_uvm"] is True


def test_cuda_unknown_error_on_nixos_after_boot_is_a_likely_warning_but_not_after_a_suspend(tmp_path):
    base = "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment\nNixOS 24.05, driver 555\n"
    assert severities(paste_findings(tmp_path, base)).get(CODE) == "warning"
    after_suspend = base + "It happens after the laptop resumes from suspend.\n"
    assert CODE not in codes(paste_findings(tmp_path, after_suspend))
