"""CUDA's Multi-Process Service (MPS) set up but out of reach (session 25, from blind batch b226 and the threads of the
class: NVIDIA/nvidia-container-toolkit#714, NVIDIA/enroot#206, NVIDIA/nvidia-docker#1543):

- mps-connection-failed: CUDA error 805 (cudaErrorMpsConnectionFailed / CUDA_ERROR_MPS_CONNECTION_FAILED, "MPS client
  failed to connect to the MPS control daemon or the MPS server", kb/cuda_errors.json): an MPS control daemon is running
  for the GPU (nvidia-cuda-mps-control -d), so CUDA clients must go through it, but this process cannot reach it: the
  daemon serves another Linux user (MPS serves one user at a time), or the process runs in a container that lacks the
  daemon's pipe directory (/tmp/nvidia-mps by default, CUDA_MPS_PIPE_DIRECTORY) or the host's IPC namespace.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, search

#: CUDA failing to initialise, in the words seen beside an MPS daemon (enroot#206's error 205 from NVIDIA's image banner).
_INIT_FAILED = (
    r"(?i)CUDA failed to initialize|Mapping of buffer object failed|cudaErrorMapBufferObjectFailed"
    r"|\berror\s*\(?205\)?|cudaGetDeviceCount\(\)|\bcuInit\b[^\n]{0,40}?(?:fail|error)"
)

MPS_CONNECTION_FAILED = Code(
    code="mps-connection-failed",
    title="An MPS control daemon runs for this GPU, but this process cannot reach it (error 805)",
    area="gpu",
    severity="error",
    explanation={
        "what": 'CUDA initialisation fails with error 805, "MPS client failed to connect to the MPS control daemon or '
        "the MPS server\" (torch: 'Unexpected error from cudaGetDeviceCount() ... Error 805').",
        "why": "With an MPS control daemon running, every CUDA process on that GPU is an MPS client. The daemon serves one "
        "Linux user at a time and is reached through its pipe directory (/tmp/nvidia-mps, or CUDA_MPS_PIPE_DIRECTORY) "
        "and shared memory: a process of another user, or a container without that directory mounted and without "
        "--ipc=host, cannot connect.",
        "confirm": "`ps -ef | grep nvidia-cuda-mps` (the daemon and its user); `ls /tmp/nvidia-mps` inside the "
        "container; `echo $CUDA_MPS_PIPE_DIRECTORY`.",
        "fix": "If MPS is not wanted, stop it (`echo quit | nvidia-cuda-mps-control`, as its user). If it is: run the "
        "clients as the daemon's user, and start containers with --ipc=host and the pipe directory mounted "
        "(-v /tmp/nvidia-mps:/tmp/nvidia-mps), or start the MPS daemon inside the container.",
    },
    links=(
        "https://docs.nvidia.com/deploy/mps/index.html",
        "https://github.com/NVIDIA/nvidia-container-toolkit/issues/714",
    ),
)


@check(MPS_CONNECTION_FAILED)
def mps_connection_failed(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, MPS_CONNECTION_FAILED)
    likely = False
    if not said:
        # CUDA failing to initialise in a report that runs an MPS control daemon (enroot#206: error 205 in a container
        # started as another user): the daemon is the likely cause, a warning.
        mps = (fx.dict("pasted.mps_named") or {}).get("text")
        failed = search(fx, _INIT_FAILED)
        if not (mps and failed):
            return
        said, likely = failed, True
    yield MPS_CONNECTION_FAILED.finding(
        title=("Likely: " if likely else "")
        + "CUDA cannot reach the MPS control daemon"
        + ("" if likely else " (error 805)")
        + ": MPS serves one user, through its pipe directory and the host's IPC namespace",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "ps -ef | grep nvidia-cuda-mps  # the daemon and the user it runs as",
                "echo quit | nvidia-cuda-mps-control  # if MPS is not wanted (run as the daemon's user)",
                "docker run --ipc=host -v /tmp/nvidia-mps:/tmp/nvidia-mps ...  # a container as an MPS client (same user)",
            ),
            "With an MPS daemon running, CUDA processes must connect to it; another user or a container without its "
            "pipe directory and IPC namespace cannot.",
        ),
        severity="warning" if likely else None,
    )


def register():
    return [mps_connection_failed]
