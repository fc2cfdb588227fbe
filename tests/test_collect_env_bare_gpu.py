"""A collect_env text whose GPU field is a bare name ("GPU models and configuration: RTX 4060 mobile") instead of
nvidia-smi -L's "GPU 0: ..." form, as templates filled in by hand have it; and spconv's own arch warning read as the
package's, not torch's. Inputs: a real collect_env (holdout h09: torch 1.8.1+cu101 on an RTX 3090) with only its GPU
line rewritten, and spconv's warning as its source prints it (spconv v2.3.6 spconv/pytorch/cppcore.py)."""

from __future__ import annotations

import re
from pathlib import Path

from checkcli import codes, paste_findings, severities

from cudadoctor.readers.collect_env import parse_collect_env

H09 = Path(__file__).parent / "data" / "holdout_cases" / "h09-rtx3090-torch181-cu101-nokernel.txt"
GPU_LINE = re.compile(r"^GPU models and configuration: .*$", re.M)


def h09_with_gpu_field(value: str) -> str:
    text = H09.read_text(encoding="utf-8")
    assert GPU_LINE.search(text), "h09 has a GPU line to rewrite"
    return GPU_LINE.sub(lambda _m: f"GPU models and configuration: {value}", text)


def test_a_bare_nvidia_name_is_read_as_a_stated_gpu_not_as_nvidia_smi_output():
    facts = parse_collect_env(h09_with_gpu_field("Nvidia RTX 4060 mobile"))
    devices = facts["nvml"]["devices"]
    assert [(d["name"], d["compute_capability"]) for d in devices] == [("Nvidia RTX 4060 mobile", "8.9")]
    assert "nvidia-smi" in devices[0]["from"]  # says it is not nvidia-smi -L's form
    # h09 states no driver version: its nvidia-smi GPU line alone made the driver's status "ok"; a name typed in does not
    real = parse_collect_env(H09.read_text(encoding="utf-8"))
    assert real["nvml"].get("status") == "ok" and not real["nvml"].get("driver_version")
    assert facts["nvml"].get("status") is None and "device_count" not in facts["nvml"]


def test_a_bare_name_gives_the_arch_verdict_the_gpu_0_form_gives(tmp_path):
    bare = codes(paste_findings(tmp_path, h09_with_gpu_field("NVIDIA GeForce RTX 3090"), "--from-collect-env"))
    listed = codes(paste_findings(tmp_path, H09.read_text(encoding="utf-8"), "--from-collect-env"))
    assert "gpu-arch-unsupported" in listed  # torch 1.8.1+cu101 stops at sm_75: no kernels for sm_86
    assert bare == listed


def test_an_ada_laptop_gpu_under_a_cuda_10_build_is_unsupported(tmp_path):
    f = paste_findings(tmp_path, h09_with_gpu_field("Nvidia RTX 4060 mobile"), "--from-collect-env")
    assert severities(f).get("gpu-arch-unsupported") == "error"


def test_a_field_naming_no_nvidia_gpu_adds_no_device():
    for value in ("intel graphics 520 hd", "Could not collect", "No CUDA", "N/A"):
        facts = parse_collect_env(h09_with_gpu_field(value))
        assert not facts["nvml"].get("devices"), value


SPCONV = (
    "[WARNING]your gpu arch (8, 9) isn't compiled in prebuilt, may cause invalid device function. "
    "available: {(6, 1), (7, 0), (8, 0), (8, 6), (6, 0), (7, 5), (5, 2)}\n"
)


def test_spconvs_prebuilt_arch_warning_is_the_packages_list_not_torchs(tmp_path):
    # RTX 4090 named, torch not stated: spconv's list of prebuilt kernels lacks sm_89, which says nothing of torch's
    text = "GPU: NVIDIA GeForce RTX 4090\n" + SPCONV
    got = codes(paste_findings(tmp_path, text))
    assert "companion-arch-unsupported" in got and "gpu-arch-unsupported" not in got
