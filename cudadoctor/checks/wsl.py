"""Can this WSL reach the GPU at all? WSL 1, or a WSL 2 without the GPU bridge from Windows.

Code: wsl-gpu-unsupported. (A Linux driver installed inside WSL 2 is wsl-driver-in-guest, platform.py.)
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.errortext import kb_document, text_of
from cudadoctor.facts import Facts
from cudadoctor.interpret import is_wsl, vtuple, wsl1_build
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

WSL_GPU_UNSUPPORTED = Code(
    code="wsl-gpu-unsupported",
    title="This WSL cannot reach the GPU: WSL 1, or WSL 2 without GPU support from Windows",
    area="system",
    severity="error",
    explanation={
        "what": "The Linux distribution runs under WSL 1 (kernel `4.4.0-<Windows build>-Microsoft`), or under a "
        "WSL 2 whose GPU bridge is missing (`/usr/lib/wsl/lib` absent: a Windows build, WSL or Windows driver "
        "from before GPU support in WSL).",
        "why": "CUDA on WSL works only in WSL 2, through the Windows NVIDIA driver, which WSL maps into the guest "
        "as /usr/lib/wsl/lib (libcuda) and /dev/dxg; it needs Windows 11 or Windows 10 21H2 (build 19044) or "
        "later. WSL 1 translates Linux system calls and has no GPU device at all: nvidia-smi 'couldn't "
        "communicate with the NVIDIA driver', torch sees no GPU, and no Linux driver installed inside can change that.",
        "confirm": "`uname -r` (WSL 1: `4.4.0-19041-Microsoft`; WSL 2: `...-microsoft-standard-WSL2`); in Windows "
        "PowerShell `wsl -l -v` (the VERSION column) and `winver`; `ls /usr/lib/wsl/lib` inside WSL 2.",
        "fix": "Convert the distribution to WSL 2 (`wsl --set-version <distro> 2` in PowerShell), update WSL "
        "(`wsl --update`) and Windows (11, or 10 21H2+), install the current Windows NVIDIA driver, and do not "
        "install a Linux NVIDIA driver inside WSL.",
    },
    links=(
        "https://docs.nvidia.com/cuda/wsl-user-guide/index.html",
        "https://learn.microsoft.com/en-us/windows/wsl/tutorials/gpu-compute",
        "https://github.com/microsoft/WSL/issues/3847",
    ),
)


#: A WSL 2 kernel release ("5.10.16.3-microsoft-standard-WSL2", "4.19.128-microsoft-standard"), in the facts or the text.
_WSL2_KERNEL = re.compile(r"\b(\d+\.\d+\.\d+(?:\.\d+)?)-microsoft-standard", re.I)


def _min_kernel(key: str = "value") -> str:
    return str(kb_document("kdrv3.json")["wsl_cuda_min_kernel"][key])


def _old_wsl2_kernel(fx: Facts) -> Optional[Tuple[str, str]]:
    """(kernel release, where) when the WSL 2 kernel the facts or text name is older than the one CUDA on WSL needs
    and nothing shows CUDA working."""
    if fx.bool("torch.cuda_available") is True:
        return None
    for where in ("system.kernel", "system.os", "system.distro", "user_error"):
        s = text_of(fx) if where == "user_error" else (fx.str(where) or "")
        m = _WSL2_KERNEL.search(s)
        if m:
            have, need = vtuple(m.group(1)), vtuple(_min_kernel())
            return (m.group(1), where) if have and need and have < need else None
    return None


#: GPU compute in WSL 2 came to Windows 10 with 21H2 (build 19044) and to the Insider Dev channel with build 20145
#: (https://learn.microsoft.com/en-us/windows/wsl/tutorials/gpu-compute: "Windows 11 and Windows 10, version 21H2";
#: https://docs.nvidia.com/cuda/wsl-user-guide/index.html; checked 2026-11-28). Windows 10's release builds are
#: 19041-19045 (2004 .. 22H2: https://learn.microsoft.com/en-us/windows/release-health/release-information).
_MIN_GA_BUILD = 19044
_MIN_INSIDER_BUILD = 20145


def _windows_without_wsl_gpu(fx: Facts) -> Optional[str]:
    """The Windows build the text names when it is a Windows 10 release build before 21H2 (10240 .. 19043), or an
    Insider build before 20145 (19045 is 22H2, a release): builds whose WSL 2 has no GPU."""
    b = fx.str("system.windows_build")
    if not b or not b.isdigit():
        return None
    n = int(b)
    return b if 10240 <= n < _MIN_GA_BUILD or _MIN_GA_BUILD + 2 < n < _MIN_INSIDER_BUILD else None


@check(WSL_GPU_UNSUPPORTED)
def wsl_gpu_unsupported(fx: Facts) -> Iterator[Finding]:
    old = _old_wsl2_kernel(fx) if not (wsl1_build(fx) or fx.get("system.wsl_lib_dir") is False) else None
    if old:  # (WSL 1, or the bridge seen missing, is the more direct fact: told below)
        yield WSL_GPU_UNSUPPORTED.finding(
            title=f"This WSL 2 kernel ({old[0]}) is older than {_min_kernel()}, the oldest with which CUDA on WSL works: "
            "update WSL",
            evidence={old[1]: old[0], "min_wsl_kernel_for_cuda": _min_kernel()},
            fix=Fix(
                (
                    "wsl --update  # in Windows PowerShell; then `wsl --shutdown` and reopen the distribution",
                    "wsl cat /proc/version  # the kernel release: needs " + _min_kernel() + " or newer",
                    "# and the current Windows NVIDIA driver; do not install a Linux NVIDIA driver inside WSL",
                ),
                "CUDA reaches the GPU in WSL 2 through the Windows driver's bridge, which older WSL kernels lack.",
            ),
            # between the preview's minimum and today's, the kernel once worked: a cause to remove, not a certainty
            severity="error" if (vtuple(old[0]) or ()) < (vtuple(_min_kernel("preview_minimum")) or ()) else "warning",
        )
        return
    if is_wsl(fx) is not True:
        return
    build = wsl1_build(fx)
    bridge = fx.get("system.wsl_lib_dir")
    stated = fx.get("system.wsl_version")  # "WSL1" in prose, `wsl -l -v`'s VERSION column (readers/prose.py)
    old_windows = _windows_without_wsl_gpu(fx)
    said = error_match(fx, WSL_GPU_UNSUPPORTED)  # the bridge missing in WSL's own words (dxcore, /dev/dxg)
    if build:
        # WSL 1's kernel release names the Windows build (4.4.0-19041-Microsoft); the first ones did not (4.4.0-43-Microsoft)
        shown = f"Windows build {build}" if len(build) == 5 else f"kernel {fx.str('system.kernel')}"
        title = f"This is WSL 1 ({shown}): WSL 1 has no GPU access; CUDA needs WSL 2"
        why = "WSL 1 has no GPU device; WSL 2 reaches the GPU through the Windows NVIDIA driver."
    elif stated == 1 and fx.bool("torch.cuda_available") is not True:
        title = "This distribution runs under WSL 1 (as the text states): WSL 1 has no GPU access; CUDA needs WSL 2"
        why = "WSL 1 has no GPU device; WSL 2 reaches the GPU through the Windows NVIDIA driver."
        build = fx.str("system.windows_build")
    elif old_windows and fx.bool("torch.cuda_available") is not True:
        title = (
            f"Windows build {old_windows} predates GPU support in WSL (Windows 10 21H2, build {_MIN_GA_BUILD}, or an "
            f"Insider build from {_MIN_INSIDER_BUILD}): update Windows"
        )
        why = "Windows maps its NVIDIA driver into WSL 2 only from Windows 10 21H2 (19044) / Windows 11 on."
        build = old_windows
    elif bridge is None and said and fx.bool("torch.cuda_available") is not True:
        title = (
            "WSL 2 without the GPU bridge: "
            + ("/dev/dxg is missing" if "dxg" in said[1] else "nvidia-container-cli found no dxcore (/usr/lib/wsl/lib)")
            + " (Windows, WSL or the Windows driver lacks GPU support for WSL)"
        )
        why = "Windows maps its NVIDIA driver into WSL 2 as /dev/dxg and /usr/lib/wsl/lib only on Windows 11 / 10 21H2+ with a current WSL."
    elif bridge is False:
        title = (
            "WSL 2 without the GPU bridge: /usr/lib/wsl/lib is missing (Windows, WSL or the Windows driver predates GPU support)"
        )
        why = "Windows maps its NVIDIA driver into WSL 2 as /usr/lib/wsl/lib only on Windows 11 / 10 21H2+ with a current WSL."
    else:
        return
    yield WSL_GPU_UNSUPPORTED.finding(
        title=title,
        evidence={
            "system.kernel": fx.str("system.kernel"),
            "windows_build": build,
            "system.wsl_version": stated,
            "system.wsl_lib_dir": bridge,
        },
        fix=Fix(
            (
                "wsl -l -v  # in Windows PowerShell: the VERSION column",
                "wsl --set-version <distro> 2  # in PowerShell; <distro> as `wsl -l -v` names it",
                "wsl --update  # then `wsl --shutdown` and reopen the distribution",
                "winver  # needs Windows 11, or Windows 10 21H2 (build 19044) or later; then the current Windows NVIDIA driver",
            ),
            why,
        ),
    )


def register():
    return [wsl_gpu_unsupported]
