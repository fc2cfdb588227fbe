"""container-gpu-capabilities-lack-compute: driver capabilities stated without compute (an env assignment, Compose's
device request, docker inspect's Capabilities, or the recorded environment) — and not when compute or all is there."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.checks.cont13 import container_gpu_capabilities_lack_compute
from cudadoctor.facts import Facts, new_facts

CODE = "container-gpu-capabilities-lack-compute"

# mudler/LocalAI#11973 (the reporter's own inspection, verbatim)
LOCALAI = """    # deploy:
    #   resources:
    #     reservations:
    #       devices:
    #         - driver: nvidia
    #           count: 1
    #           capabilities: [gpu, utility]

With `capabilities: [gpu, utility]`, the container gets only the utility driver libraries. `docker inspect` shows
`"Capabilities":[["gpu","utility"]]`, and `/usr/lib/x86_64-linux-gnu` contains `libnvidia-ml.so.1` and `libdxcore.so`
but no `libcuda.so.1`. `nvidia-smi` works inside the container, so the setup looks fine, but every CUDA backend fails
to start with `ImportError: libcuda.so.1: cannot open shared object file`."""


def test_compose_capabilities_without_compute_and_libcuda_missing(tmp_path):
    f = paste_findings(tmp_path, LOCALAI)
    assert codes(f)[:1] == [CODE]
    assert severities(f)[CODE] == "error"


@pytest.mark.parametrize(
    "text",
    [
        "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=utility my/image python -c 'import torch'",
        "environment:\n  - NVIDIA_DRIVER_CAPABILITIES=video,utility\n",
        "        deploy:\n          resources:\n            reservations:\n              devices:\n"
        "                - driver: nvidia\n                  capabilities:\n                    - utility\n",
    ],
)
def test_other_forms_without_compute(tmp_path, text):
    assert CODE in codes(paste_findings(tmp_path, text))


@pytest.mark.parametrize(
    "text",
    [
        "environment:\n  - NVIDIA_DRIVER_CAPABILITIES=compute,utility\n",
        "-e NVIDIA_DRIVER_CAPABILITIES=all",
        "              devices:\n                - driver: nvidia\n                  count: all\n                  capabilities: [gpu]\n",
        "capabilities: [gpu, compute, utility]",
        "RuntimeError: DataLoader worker capabilities: [none of this is docker]",
    ],
)
def test_compute_all_or_the_defaults_are_no_finding(tmp_path, text):
    assert CODE not in codes(paste_findings(tmp_path, text))


def _env_facts(value):
    doc = new_facts()
    doc["environment"] = {"vars": {"NVIDIA_DRIVER_CAPABILITIES": value}}
    return Facts(doc)


def test_the_recorded_environment_of_this_container():
    assert [f.code for f in container_gpu_capabilities_lack_compute(_env_facts("utility"))] == [CODE]
    assert list(container_gpu_capabilities_lack_compute(_env_facts("compute,utility"))) == []
