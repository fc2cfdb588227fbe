"""A kernel killed by the display watchdog (session 19, from probing common error lines):

- display-gpu-watchdog-timeout: "the launch timed out and was terminated" (cudaErrorLaunchTimeout / CUDA_ERROR_LAUNCH_TIMEOUT,
  702; 6 before CUDA 10.1). CUDA's own documentation says it "can only occur if timeouts are enabled" (the device
  attribute kernelExecTimeout): the GPU also drives a display, and a single kernel ran longer than the display's
  watchdog allows: Windows' Timeout Detection and Recovery (TDR, 2 s by default) or the X server's watchdog on Linux
  (numba#9381, numba#3197, NVIDIA's "Using CUDA and X"). The context is lost; the process must restart.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Tuple

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

DISPLAY_GPU_WATCHDOG_TIMEOUT = Code(
    code="display-gpu-watchdog-timeout",
    title="A CUDA kernel ran longer than the display watchdog allows, and was killed",
    area="gpu",
    severity="error",
    explanation={
        "what": 'A program fails with "CUDA error: the launch timed out and was terminated" (cudaErrorLaunchTimeout, '
        "CUDA_ERROR_LAUNCH_TIMEOUT, error 702), often after the screen froze for a few seconds; on Windows the event "
        'log says "Display driver nvlddmkm stopped responding and has successfully recovered".',
        "why": "The GPU also drives a display, so the operating system limits how long one kernel may run: Windows' "
        "Timeout Detection and Recovery (TDR) resets the driver after 2 seconds by default, and the X server's watchdog "
        "on Linux does the same. CUDA reports this error only when such a timeout is enabled for the device "
        "(deviceQuery: 'Run time limit on kernels: Yes'). Large batches, high resolutions and slow GPUs make single "
        "kernels long. The install is fine.",
        "confirm": 'deviceQuery (or `python -c "from numba import cuda; cuda.detect()"`) shows \'Run time limit on kernels: '
        "Yes' / 'Watchdog: Enabled'; `nvidia-smi` lists the display (Disp.A On) on this GPU.",
        "fix": "Give the kernels more time or take the display off the GPU: on Windows raise TdrDelay (REG_DWORD, seconds) "
        "under HKLM\\SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers and reboot, or put a datacenter/workstation GPU "
        "in TCC mode (nvidia-smi -i N -dm 1); on Linux run without a desktop on that GPU (another GPU or the iGPU for "
        "the display, or sudo systemctl isolate multi-user.target). Or make each kernel shorter: a smaller batch size "
        "or resolution.",
    },
    links=(
        "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        "https://learn.microsoft.com/en-us/windows-hardware/drivers/display/tdr-registry-keys",
        "https://nvidia.custhelp.com/app/answers/detail/a_id/3029/~/using-cuda-and-x",
        "https://github.com/numba/numba/issues/9381",
    ),
)

_WINDOWS_FIX = (
    'reg add "HKLM\\SYSTEM\\CurrentControlSet\\Control\\GraphicsDrivers" /v TdrDelay /t REG_DWORD /d 60 /f  '
    "# as Administrator, then reboot",
    "nvidia-smi -i <N> -dm 1  # a datacenter/workstation GPU only: TCC mode, no display, no watchdog",
    "# or make each kernel shorter: a smaller batch size or resolution",
)
_LINUX_FIX = (
    "nvidia-smi  # 'Disp.A On' on this GPU: it drives the display, whose X watchdog killed the kernel",
    "sudo systemctl isolate multi-user.target  # run without the desktop (or connect the display to another GPU / the iGPU)",
    "# or make each kernel shorter: a smaller batch size or resolution",
)


@check(DISPLAY_GPU_WATCHDOG_TIMEOUT)
def display_gpu_watchdog_timeout(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, DISPLAY_GPU_WATCHDOG_TIMEOUT)
    if not said:
        return
    system = (fx.str("system.os") or "").lower()
    evidence: Dict[str, Any] = {said[0]: said[1]}
    cmds: Tuple[str, ...]
    if "windows" in system:
        cmds, where = _WINDOWS_FIX, "Windows' TDR"
    elif system:
        cmds, where = _LINUX_FIX, "the X server's watchdog"
    else:
        cmds, where = _WINDOWS_FIX[:2] + _LINUX_FIX[1:], "the display watchdog (Windows' TDR, or X on Linux)"
    if system:
        evidence["os"] = fx.str("system.os")
    yield DISPLAY_GPU_WATCHDOG_TIMEOUT.finding(
        title=f"A CUDA kernel ran longer than {where} allows on a GPU that drives a display, and was killed",
        evidence=evidence,
        fix=Fix(
            cmds,
            "CUDA reports a launch timeout only when the device has a kernel run-time limit, i.e. a display watchdog.",
        ),
    )


def register():
    return [display_gpu_watchdog_timeout]
