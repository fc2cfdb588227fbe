"""Round 6, containers: NVIDIA images' start-up banner (docker/entrypoint.d/50-gpu-driver-check.sh in NVIDIA's
images, quoted in NVIDIA/nvidia-docker#1071 and #1583) means the container was started without the NVIDIA runtime;
NVML's NO_PERMISSION (error 4) means the device nodes are not readable by this user
(NVIDIA/nvidia-container-toolkit#210, NVIDIA/nvidia-docker#1523)."""

from __future__ import annotations

from pathlib import Path
from checkcli import codes, paste_findings


BANNER_NEW = """WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.
   Use the NVIDIA Container Toolkit to start this container with GPU support; see
   https://docs.nvidia.com/datacenter/cloud-native/ .
"""
BANNER_OLD = """WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.
   Use 'nvidia-docker run' to start this container; see
   https://github.com/NVIDIA/nvidia-docker/wiki/nvidia-docker .
"""
NVML_NO_PERMISSION = "Failed to initialize NVML: Insufficient Permissions\n"


def _codes(tmp_path: Path, text: str) -> list:
    return codes(paste_findings(tmp_path, text))


def test_nvidia_image_banner_is_the_missing_container_runtime(tmp_path):
    for text in (BANNER_NEW, BANNER_OLD):
        assert "container-toolkit-missing" in _codes(tmp_path, text)


def test_nvml_no_permission_is_the_device_node_permission(tmp_path):
    codes = _codes(tmp_path, NVML_NO_PERMISSION)
    assert "gpu-device-node-permission-denied" in codes, codes


def test_a_banner_free_log_does_not_claim_the_runtime(tmp_path):
    assert "container-toolkit-missing" not in _codes(tmp_path, "docker run --gpus all nvidia/cuda:12.4.1-base nvidia-smi\n")
