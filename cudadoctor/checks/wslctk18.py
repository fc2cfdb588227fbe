"""CUDA in a container under WSL 2 with a Windows driver 555 or newer and an older NVIDIA Container Toolkit (session
18): Windows drivers 555.xx added libnvdxgdmal.so.1, which must be mapped into the container; a toolkit older than
1.14.4 / 1.15.0 (and Docker Desktop before 4.31.0, which bundles one) does not map it, and CUDA's initialisation
returns error 500, CUDA_ERROR_NOT_FOUND, "named symbol not found" (NVIDIA/nvidia-container-toolkit#520, by NVIDIA).
nvidia-smi works on Windows and in WSL; torch's first CUDA call fails in the container.

- container-toolkit-too-old-for-wsl-driver: CUDA's initialisation failing with error 500 / named symbol not found,
  in a container on a Windows host (WSL 2, Docker Desktop). An error when a container and Windows/WSL are both shown;
  a warning ("Likely") when only one is.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import os_family
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search, text_of

CONTAINER_TOOLKIT_TOO_OLD_FOR_WSL_DRIVER = Code(
    code="container-toolkit-too-old-for-wsl-driver",
    title="The container toolkit under WSL 2 is too old for the Windows driver: CUDA fails with error 500",
    area="system",
    severity="error",
    explanation={
        "what": "In a Docker container on Windows (Docker Desktop, or Docker in WSL 2), torch's first CUDA call fails "
        "with 'Unexpected error from cudaGetDeviceCount() ... Error 500: named symbol not found' (ollama: 'cuda "
        "driver library init failure: 500'), while nvidia-smi works on Windows.",
        "why": "NVIDIA's Windows drivers 555.xx and newer added a library, libnvdxgdmal.so.1, that must be mapped into "
        "the container for CUDA to work under WSL 2. NVIDIA Container Toolkit releases before 1.14.4 / 1.15.0, and "
        "Docker Desktop before 4.31.0 (which bundles the toolkit), do not map it, and cuInit returns "
        "CUDA_ERROR_NOT_FOUND (500) (NVIDIA/nvidia-container-toolkit#520).",
        "confirm": "nvidia-smi on Windows shows a driver 555 or newer; `docker version` shows Docker Desktop older than "
        "4.31, or `nvidia-ctk --version` in WSL older than 1.14.4.",
        "fix": "Update Docker Desktop (4.31.0 or newer), or in a WSL 2 distribution with its own Docker engine update "
        "the NVIDIA Container Toolkit (1.15.0 or newer: sudo apt-get install --only-upgrade nvidia-container-toolkit) "
        "and restart Docker; then recreate the container.",
    },
    links=(
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/520",
        "https://docs.docker.com/desktop/release-notes/#4310",
    ),
)

#: CUDA's initialisation returning 500 (CUresult CUDA_ERROR_NOT_FOUND / cudaErrorSymbolNotFound): torch's
#: cudaGetDeviceCount message, cuInit's name, ollama's "cuda driver library init failure: 500".
_INIT_500 = re.compile(
    r"cudaGetDeviceCount\(\)[^\n]{0,200}?Error 500: named symbol not found"
    r"|cuInit(?:\(0?\)|:)[^\n]{0,40}?(?:\b500\b|CUDA_ERROR_NOT_FOUND)"
    r"|cuda driver library init failure:\s*500\b",
    re.I,
)
_WINDOWS_HOST = re.compile(r"\bWSL\s*2?\b|\bDocker Desktop\b|\bwindows\b|/usr/lib/wsl/", re.I)
_DOCKER = re.compile(r"\bdocker\b|\bcontainer\b|\bpodman\b|\bcompose\b", re.I)


def _windows_host(fx: Facts, text: str) -> Optional[str]:
    if fx.get("system.wsl") or os_family(fx) == "windows":
        return fx.str("system.os") or "WSL"
    m = _WINDOWS_HOST.search(text)
    return m.group(0) if m else None


def _container(fx: Facts, text: str) -> Optional[str]:
    if fx.str("system.container"):
        return str(fx.str("system.container"))
    m = _DOCKER.search(text)
    return m.group(0) if m else None


@check(CONTAINER_TOOLKIT_TOO_OLD_FOR_WSL_DRIVER)
def container_toolkit_too_old_for_wsl_driver(fx: Facts) -> Iterator[Finding]:
    said: Optional[Tuple[str, str]] = search(fx, _INIT_500.pattern)
    if not said:
        return
    text = text_of(fx)
    host, box = _windows_host(fx, text), _container(fx, text)
    if not host and not box:
        return  # error 500 at CUDA's start with nothing pointing at a container under WSL: not this
    both = bool(host and box)
    yield CONTAINER_TOOLKIT_TOO_OLD_FOR_WSL_DRIVER.finding(
        title="CUDA fails to start in the container with error 500: the container toolkit (Docker Desktop) is older "
        "than the Windows driver needs"
        if both
        else "Likely: CUDA's error 500 at start in a container under WSL 2: the container toolkit is older than the "
        "Windows driver (555+) needs",
        evidence={said[0]: said[1], "windows host": host, "container": box},
        fix=Fix(
            (
                "nvidia-smi  # on Windows: a driver 555 or newer needs the newer toolkit",
                "# Docker Desktop: update to 4.31.0 or newer (Settings > Software updates), then recreate the container",
                "sudo apt-get update && sudo apt-get install --only-upgrade nvidia-container-toolkit && sudo systemctl restart docker"
                "  # Docker engine inside WSL 2: toolkit 1.15.0 or newer",
            ),
            "Windows drivers 555+ need libnvdxgdmal.so.1 mapped into containers; toolkit 1.14.4/1.15.0 and Docker Desktop "
            "4.31.0 map it.",
        ),
        severity="error" if both else "warning",
    )


def register():
    return [container_toolkit_too_old_for_wsl_driver]
