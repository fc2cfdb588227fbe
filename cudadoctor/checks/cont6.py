"""Containers, visibility and device nodes (round 6), reasoned from entities and facts, not one sentence:

- gpu-device-node-permission-denied: NVML's NVML_ERROR_NO_PERMISSION (said in the text, or the live NVML probe's
  status) or an EACCES opening /dev/nvidia*: this user may not open the GPU's device nodes (a container's non-root
  user outside the nodes' group, rootless Podman, a host user outside video/render);

Wordings: kb/errors/cont6.json (with the container banner of NVIDIA's images, read by container-toolkit-missing in
text_classes.py). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

# --- round 6: cont6 ---

GPU_DEVICE_NODE_PERMISSION_DENIED = Code(
    code="gpu-device-node-permission-denied",
    title="This user may not open the GPU's device nodes (/dev/nvidia*): NVML and CUDA are refused",
    area="system",
    severity="error",
    explanation={
        "what": 'nvidia-smi (or any NVML user) says "Failed to initialize NVML: Insufficient Permissions" '
        "(NVML_ERROR_NO_PERMISSION, 4), or opening /dev/nvidiactl, /dev/nvidiaN or /dev/nvidia-uvm fails with "
        '"Permission denied"; torch.cuda.is_available() is False and programs fall back to the CPU.',
        "why": "The driver talks to user space through the device nodes /dev/nvidiactl, /dev/nvidia0..N and "
        "/dev/nvidia-uvm. When their mode is 0660 with a group (video or render, set by the distribution, a udev rule "
        "or the NVreg_DeviceFileMode/DeviceFileGID module options), a user outside that group cannot open them. In a "
        "container the same holds for the container's user: an image that runs as a non-root user (USER appuser) is "
        "not in the host group, and rootless Podman maps the group away.",
        "confirm": "`ls -l /dev/nvidia*` (owner, group, mode) and `id` as the user that runs the program (in the "
        "container: `docker exec -it NAME id`); `nvidia-smi` works as root and fails as that user.",
        "fix": "Give the user the nodes' group: on the host `sudo usermod -aG video $USER` (the group `ls -l` shows) "
        "and log in again; in Docker `--group-add $(stat -c %g /dev/nvidiactl)` or Compose `group_add:`, or run the "
        "service as root; with rootless Podman use `--group-add keep-groups` or CDI with the right gid.",
    },
    links=(
        "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/210",
        "https://github.com/NVIDIA/nvidia-docker/issues/284",
    ),
)


@check(GPU_DEVICE_NODE_PERMISSION_DENIED)
def gpu_device_node_permission_denied(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GPU_DEVICE_NODE_PERMISSION_DENIED)
    live = fx.str("nvml.status") == "no-permission"
    if not (said or live):
        return
    evidence: Dict[str, Any] = {said[0]: said[1]} if said else {}
    if live:
        evidence["nvml.status"] = "no-permission (NVML_ERROR_NO_PERMISSION)"
        if fx.str("nvml.error"):
            evidence["nvml.error"] = fx.str("nvml.error")
    cmds = (
        "ls -l /dev/nvidia*  # owner, group and mode of the device nodes",
        "id  # as the user that runs the program (in a container: docker exec -it NAME id)",
        "sudo usermod -aG video $USER  # the group ls shows; log in again",
        "docker run --gpus all --group-add $(stat -c %g /dev/nvidiactl) ...  # Compose: group_add; or run as root",
        "nvidia-smi  # as that user: must list the GPUs",
    )
    yield GPU_DEVICE_NODE_PERMISSION_DENIED.finding(
        title="NVML/CUDA are refused: this user may not open the GPU device nodes /dev/nvidia* (Insufficient Permissions)",
        evidence=evidence,
        fix=Fix(cmds, "The driver is reached only through /dev/nvidia*; a user outside their group cannot open them."),
    )


def register():
    return [gpu_device_node_permission_denied]
