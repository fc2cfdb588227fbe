"""What the device model takes from interpret.gpus: why no GPU is usable, PyTorch's view, the P2P matrix.

The model re-exports the GPU meanings it moved to interpret.gpus, so `from cudadoctor.devices import
...` (checks/health.py, the Prometheus renderer) keeps working.
"""

from __future__ import annotations

import copy
import importlib
import json

import pytest

import cudadoctor.devices as devices
from conftest import FIXTURES
from cudadoctor.devices import build
from cudadoctor.facts import Facts

gpus = importlib.import_module("cudadoctor.interpret.gpus")  # the package's `gpus` is the function of that name

FACTS = FIXTURES / "facts"


def load(name: str) -> dict:
    return json.loads((FACTS / name).read_text())


@pytest.mark.parametrize(
    "name", ["CLOCK_EVENT_REASONS", "THROTTLE_REASONS", "LOST_CODES", "BUSY_UTILIZATION", "reason_names", "reason_label",
             "lost_error", "bus_key", "torch_state", "no_device_reason"],
)
def test_devices_reexports_the_meanings_it_moved(name):
    assert getattr(devices, name) is getattr(gpus, name)


def test_no_driver_fixture_says_why():
    model = build(load("live-torch2141-cu130-nodriver.json"))
    assert model["devices"] == [] and model["problem"] == gpus.no_device_reason(Facts(load("live-torch2141-cu130-nodriver.json")))
    assert model["problem"].startswith("No NVIDIA GPU: ") and model["problem"].endswith(".")


@pytest.mark.parametrize(
    "facts, said",
    [
        ({"nvml": {"status": "driver-not-loaded"}, "system": {"pci_nvidia_devices": [], "container": "docker"}},
         "No NVIDIA GPU: this docker container has no NVIDIA device on its PCI bus; "
         "the NVIDIA kernel driver is not loaded (NVML: Driver Not Loaded)."),
        ({"nvml": {"status": "library-missing"}, "system": {"pci_nvidia_devices": [{"id": "10de:2330"}],
                                                             "kernel_modules": {"nvidia": False}}},
         "No NVIDIA GPU: 1 NVIDIA device(s) are on the PCI bus but none is usable through the driver; "
         "the NVIDIA driver is not installed (NVML: library not found); the nvidia kernel module is not loaded."),
        ({"nvml": {"status": "ok", "device_count": 0, "driver_version": "580.65.06"}, "system": {"kernel_modules": {"nvidia": False}}},
         "No NVIDIA GPU: the NVIDIA driver 580.65.06 is loaded but reports no GPU."),
        ({"nvml": {"probe_status": "timeout", "stage": "nvmlInit"}},
         "No NVIDIA GPU: the NVIDIA driver did not answer in time (NVML blocked during nvmlInit)."),
        ({"nvml": {"status": "weird", "error": "boom"}}, "No NVIDIA GPU: NVML failed: weird (boom)."),
        ({}, "No NVIDIA GPU was found (the probes could not tell why)."),
    ],
)
def test_no_device_reason(facts, said):
    assert gpus.no_device_reason(Facts(facts)) == said


@pytest.mark.parametrize(
    "torch, state",
    [
        (None, (None, "PyTorch was not examined")),
        ({"status": "skipped"}, (None, "PyTorch was not imported (--quick)")),
        ({"status": "import-failed", "error": {"message": "libcudnn.so.9: cannot open\nmore"}},
         (False, "import torch failed: libcudnn.so.9: cannot open")),
        ({"status": "crashed", "failed_stage": "cuda_init"}, (False, "the torch probe crashed during cuda_init")),
        ({"status": "ok", "version": "2.14.1+cpu", "cuda": None}, (False, "torch 2.14.1+cpu is a CPU-only build")),
        ({"status": "ok", "version": "2.14.1", "cuda": "13.0", "cuda_available": True}, (True, "")),
    ],
)
def test_torch_state(torch, state):
    assert gpus.torch_state(Facts({"torch": torch} if torch is not None else {})) == state


def test_peer_matrix_from_nvml_alone_agrees_with_torch():
    facts = load("hgx-8x-h100-healthy.json")
    by_torch = build(facts)["peer_access"]
    nvml_only = copy.deepcopy(facts)
    del nvml_only["torch"]["peer_access"]
    by_nvml = build(nvml_only)["peer_access"]
    assert by_torch["source"] == "torch.cuda.can_device_access_peer" and by_nvml["source"] == "NVML P2P status (read)"
    assert by_nvml["access"] == by_torch["access"] and by_nvml["nvlink"] == by_torch["nvlink"]
    n = len(by_nvml["indices"])
    assert all((by_nvml["access"][a][b] is None) == (a == b) for a in range(n) for b in range(n))


def test_peer_matrix_nvml_status_words_and_missing_cells():
    facts = load("hgx-8x-h100-healthy.json")
    del facts["torch"]["peer_access"]
    facts["nvml"]["p2p"]["read"][0][1] = "not supported"
    facts["nvml"]["p2p"]["read"][2] = facts["nvml"]["p2p"]["read"][2][:3]  # a cut row: GPU 2 -> 3.. unknown
    facts["nvml"]["p2p"]["nvlink"] = None
    p = build(facts)["peer_access"]
    assert p["access"][0][1] == "no" and p["access"][1][0] == "yes"
    assert p["access"][2][:4] == ["yes", "yes", None, None]
    assert p["nvlink"] == [[None] * 8 for _ in range(8)]
