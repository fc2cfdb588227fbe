"""The NVIDIA container library on a cgroup v2 host (session 21, from blind batch b114 and the threads behind it):

- container-toolkit-cgroupv2-unsupported: before libnvidia-container 1.8.0 the NVIDIA container hook
  (nvidia-container-cli) set up the GPU devices' cgroup itself, through the cgroup v1 "devices" controller, which a
  host on the unified cgroup v2 hierarchy does not have (systemd's default on Arch, Fedora 31+, Debian 11+, Ubuntu
  21.10+). Every GPU container then fails to start: "nvidia-container-cli: container error: cgroup subsystem devices
  not found: unknown" (libnvidia-container#111, nixpkgs#127146). NVIDIA added cgroup v2 support in libnvidia-container
  1.8.0 ("libnvidia-container-1.8.0 with cgroupv2 support is now GA", k8s-device-plugin#273); until then the
  workaround was the hybrid hierarchy (systemd.unified_cgroup_hierarchy=0) or no-cgroups = true.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret.versions import mm
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, search

CONTAINER_TOOLKIT_CGROUPV2_UNSUPPORTED = Code(
    code="container-toolkit-cgroupv2-unsupported",
    title="The NVIDIA container library predates cgroup v2 support (1.8.0): GPU containers cannot start on this host",
    area="system",
    severity="error",
    explanation={
        "what": "Every container that asks for a GPU (docker --gpus, the k8s device plugin's pod) fails to start: "
        '"OCI runtime create failed ... error running hook ... nvidia-container-cli: container error: cgroup subsystem '
        'devices not found: unknown". Containers without GPUs start.',
        "why": "Before libnvidia-container 1.8.0 the NVIDIA container hook set up the GPU devices' cgroup itself through "
        'the cgroup v1 "devices" controller. A host on the unified cgroup v2 hierarchy has none: systemd\'s default on '
        "Arch, Fedora 31 and later, Debian 11 and later, Ubuntu 21.10 and later, or any host switched to it. "
        "libnvidia-container 1.8.0 (February 2022) added cgroup v2 support.",
        "confirm": "`nvidia-container-cli -V` (a version before 1.8.0); `stat -fc %T /sys/fs/cgroup` (cgroup2fs: the "
        "unified hierarchy).",
        "fix": "Upgrade the NVIDIA Container Toolkit (libnvidia-container1, libnvidia-container-tools, "
        "nvidia-container-toolkit) to 1.8.0 or later from NVIDIA's repository and restart the container runtime. "
        "Until then: boot with systemd.unified_cgroup_hierarchy=0 (the hybrid hierarchy), or set no-cgroups = true in "
        "/etc/nvidia-container-runtime/config.toml and pass the /dev/nvidia* devices to the container yourself.",
    },
    links=(
        "https://github.com/NVIDIA/libnvidia-container/issues/111",
        "https://github.com/NVIDIA/k8s-device-plugin/issues/273",
        "https://github.com/NixOS/nixpkgs/issues/127146",
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
    ),
)

#: A GPU container that did not start: the runtime's words when the NVIDIA hook failed.
_HOOK_FAILED = (
    r"(?i)OCI runtime create failed|error running hook|failed to create shim|nvidia-container-cli: (?:container|mount) error"
)
#: A GPU container context: the NVIDIA runtime or hook, the device plugin, nvidia-docker.
_NVIDIA_CONTAINER = r"(?i)nvidia-container|nvidia-docker|device[- ]plugin|--gpus|nvidia/cuda|runtime[=: ]\s*nvidia"


def _older_than_1_8(version: Optional[str]) -> Optional[bool]:
    t = mm(version)
    return t < (1, 8) if t else None


@check(CONTAINER_TOOLKIT_CGROUPV2_UNSUPPORTED)
def container_toolkit_cgroupv2_unsupported(fx: Facts) -> Iterator[Finding]:
    lib = fx.dict("pasted.container_library") or {}
    version = lib.get("version") if isinstance(lib.get("version"), str) else None
    old = _older_than_1_8(version)
    said = error_match(fx, CONTAINER_TOOLKIT_CGROUPV2_UNSUPPORTED)
    cgroup2 = lib.get("cgroup_v2") if isinstance(lib.get("cgroup_v2"), dict) else None
    evidence: Dict[str, Any] = {"libnvidia-container": version}
    if said:
        if old is False:
            return  # 1.8.0 or later handles cgroup v2: the devices controller is missing for another reason
        evidence[said[0]] = said[1]
        severity, title = "error", "nvidia-container-cli found no cgroup v1 'devices' controller: a cgroup v2 host"
    else:
        failed = search(fx, _HOOK_FAILED)
        if old and failed:
            evidence["error"] = failed[1]
            severity, title = "warning", f"Likely: libnvidia-container {version} (before 1.8.0) on a cgroup v2 host"
        elif cgroup2 and search(fx, _NVIDIA_CONTAINER) or cgroup2 and failed:
            evidence["the report says"] = cgroup2.get("text")
            severity, title = "warning", "Likely: the NVIDIA container library does not handle this host's cgroup v2"
        else:
            return
    if cgroup2:
        evidence.setdefault("the report says", cgroup2.get("text"))
    yield CONTAINER_TOOLKIT_CGROUPV2_UNSUPPORTED.finding(
        title=title + (" — it needs libnvidia-container 1.8.0 or later" if old is not False else ""),
        evidence=evidence,
        severity=severity,
        fix=Fix(
            (
                "nvidia-container-cli -V  # before 1.8.0: no cgroup v2 support",
                "stat -fc %T /sys/fs/cgroup  # cgroup2fs: the host runs the unified cgroup v2 hierarchy",
                "sudo apt-get install --only-upgrade libnvidia-container1 libnvidia-container-tools nvidia-container-toolkit"
                "  # NVIDIA's repository; dnf/yum: the same packages",
                "sudo systemctl restart docker  # or containerd / the kubelet's runtime",
                "# until then: boot with systemd.unified_cgroup_hierarchy=0, or no-cgroups = true in "
                "/etc/nvidia-container-runtime/config.toml (then pass --device /dev/nvidia* yourself)",
            ),
            "libnvidia-container set up the GPU devices' cgroup through cgroup v1's devices controller until 1.8.0, "
            "which added cgroup v2 support.",
        ),
    )


def register():
    return [container_toolkit_cgroupv2_unsupported]
