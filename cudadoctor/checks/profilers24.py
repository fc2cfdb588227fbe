"""NVIDIA's profilers and CUPTI refusing to profile (session 24, from blind batch b183 and the threads of each class):

- gpu-perf-counters-restricted: ERR_NVGPUCTRPERM (nvprof, Nsight Compute, Nsight Systems' GPU metrics) or
  CUPTI_ERROR_INSUFFICIENT_PRIVILEGES / CUPTI error 35 (the torch and Paddle profilers, PAPI, likwid, Habitat): since
  NVIDIA's fix for CVE-2018-6260 the driver lets only administrators read the GPU performance counters
  (NVreg_RestrictProfilingToAdminUsers=1, "RmProfilingAdminOnly: 1"); a container's root is not enough without
  CAP_SYS_ADMIN. NVIDIA's ERR_NVGPUCTRPERM and CUPTI_ERROR_INSUFFICIENT_PRIVILEGES pages; cupti_result.h.
- profiler-unsupported-gpu: nvprof and the Visual Profiler do not profile compute capability 8.0 and newer, and their
  event/metric collection (CUPTI's legacy API, CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED) stops at 7.5; Nsight Compute
  dropped Pascal (SM 6.x) in 2020.1 and profiles nothing there ("No kernels were profiled").
- cupti-multiple-subscribers: CUPTI takes one subscriber per process; under nsys, ncu, compute-sanitizer or cuda-gdb
  (or beside a framework that subscribed itself) a second one gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39).

The wordings are signatures (kb/errors/b24.json; the enum names from kb/library_errors.json's CUPTI table). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret.environment import os_family
from cudadoctor.interpret.gpus import cap_number, gpus
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, gpu_label, text_of
from ._containers import container_kind

GPU_PERF_COUNTERS_RESTRICTED = Code(
    code="gpu-perf-counters-restricted",
    title="The GPU's performance counters are restricted to administrators: the profiler may not read them",
    area="driver",
    severity="error",
    explanation={
        "what": "nvprof, Nsight Compute (ncu) or Nsight Systems' GPU metrics print ERR_NVGPUCTRPERM ('The user does not "
        "have permission to access NVIDIA GPU Performance Counters'); a CUPTI-based profiler (torch.profiler with "
        "metrics, Paddle's tracer, PAPI, likwid) fails with CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (error 35).",
        "why": "Since NVIDIA's fix for CVE-2018-6260 the driver lets only administrators read the GPU performance "
        "counters (module option NVreg_RestrictProfilingToAdminUsers=1, the default). Tracing still works; profiling "
        "needs admin rights. In a container the host's driver decides, and root there lacks CAP_SYS_ADMIN.",
        "confirm": "grep RmProfilingAdminOnly /proc/driver/nvidia/params  # 1: restricted (Linux). Windows: NVIDIA Control "
        "Panel > Desktop > Enable Developer Settings, then Developer > Manage GPU Performance Counters.",
        "fix": "Linux, as an administrator: options nvidia NVreg_RestrictProfilingToAdminUsers=0 in /etc/modprobe.d/, "
        "rebuild the initramfs and reboot; or run the profiler with sudo (by its full path). Docker: --cap-add SYS_ADMIN "
        "(or --privileged). Windows: allow access to the GPU performance counters to all users in the NVIDIA Control "
        "Panel, or run as administrator. On a shared cluster or a rented GPU only the host's admin can change it.",
    },
    links=(
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM",
        "https://developer.nvidia.com/CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        "https://github.com/adityaiitb/PyProf/blob/main/docs/hardware_counters.md",
    ),
)

PROFILER_UNSUPPORTED_GPU = Code(
    code="profiler-unsupported-gpu",
    title="This profiler does not support the GPU's architecture",
    area="tool",
    severity="error",
    explanation={
        "what": "nvprof prints 'nvprof is not supported on devices with compute capability 8.0 and higher' or skips "
        "its events and metrics on 7.5 and newer (a FLOP counter reads 0); a CUPTI client gets "
        "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED; Nsight Compute reports 'No kernels were profiled' on a Pascal or "
        "older GPU.",
        "why": "nvprof and the Visual Profiler rest on CUPTI's legacy event/metric API, which stops at Volta for metrics "
        "(7.5, Turing) and at Turing for tracing (8.0, Ampere). Nsight Compute took over and dropped Pascal (SM 6.x) in "
        "its 2020.1 release; its current GPU Support table starts at Turing.",
        "confirm": "nvidia-smi --query-gpu=name,compute_cap --format=csv  # then the profiler's GPU Support table",
        "fix": "On Turing and newer use Nsight Systems (nsys profile) for timelines and Nsight Compute (ncu) for kernel "
        "metrics; on Pascal and older use nvprof, or an Nsight Compute release before 2020.1.",
    },
    links=(
        "https://docs.nvidia.com/nsight-compute/2020.1/ReleaseNotes/index.html",
        "https://docs.nvidia.com/nsight-compute/ReleaseNotes/topics/gpu-support.html",
        "https://github.com/brucefan1983/CUDA-Programming/issues/37",
    ),
)

CUPTI_MULTIPLE_SUBSCRIBERS = Code(
    code="cupti-multiple-subscribers",
    title="Two profiling tools in one process: CUPTI takes only one subscriber",
    area="tool",
    severity="error",
    explanation={
        "what": "A CUPTI-based tool fails to start with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (error 39, "
        "'Failed to initialize CUPTI: 39') when the program runs under nsys, ncu, compute-sanitizer or cuda-gdb, or "
        "beside a library that subscribed to CUPTI itself.",
        "why": "CUPTI allows a single callback subscriber per process; NVIDIA's own tools subscribe first when they "
        "launch the program.",
        "confirm": "Run the program without the outer tool (or without the inner profiler): it starts.",
        "fix": "Use one profiler at a time: drop the program's own CUPTI profiling (torch.profiler, a CuptiMonitor) while "
        "it runs under nsys/ncu/compute-sanitizer, or run the outer tool without it.",
    },
    links=(
        "https://pypi.org/project/nvidia-cuda-cupti/13.0.85/",
        "https://github.com/rapidsai/rapidsmpf/issues/500",
    ),
)

#: A GPU before Volta by name (Nsight Compute 2020.1 and later: none of them).
_PRE_VOLTA_NAME = re.compile(r"\bGP1\d\d\b|\bGM2\d\d\b|\bGK\d{3}\b|\bGTX\s*10[5-8]0|\bTITAN\s*X[p ]|\bTesla\s*[PKM]\d", re.I)
_NO_KERNELS = re.compile(r"No kernels were profiled", re.I)


def _capabilities(fx: Facts) -> List[str]:
    return [str(g.get("compute_capability")) for g in gpus(fx) if g.get("compute_capability")]


@check(GPU_PERF_COUNTERS_RESTRICTED)
def gpu_perf_counters_restricted(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GPU_PERF_COUNTERS_RESTRICTED)
    if not said:
        return
    evidence = {said[0]: said[1]}
    where = container_kind(fx)
    family = os_family(fx)
    if where:
        evidence["container"] = where
        first = "docker run --cap-add SYS_ADMIN --gpus all ...  # the host's driver restricts the counters; root in a container lacks CAP_SYS_ADMIN"
    elif family == "windows":
        first = "# NVIDIA Control Panel > Desktop > Enable Developer Settings; Developer > Manage GPU Performance Counters > Allow access to all users"
    else:
        first = "echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | sudo tee /etc/modprobe.d/nvidia-profiling.conf  # then: sudo update-initramfs -u (Debian/Ubuntu) or sudo dracut -f, and reboot"
    yield GPU_PERF_COUNTERS_RESTRICTED.finding(
        title="The driver lets only administrators read the GPU's performance counters: allow all users, or profile as "
        "an administrator",
        evidence=evidence,
        fix=Fix(
            (
                first,
                "sudo $(which ncu) ... / sudo $(which nsys) ...  # or profile as root, with the profiler's full path",
                "grep RmProfilingAdminOnly /proc/driver/nvidia/params  # 0 once allowed (Linux); on a shared or rented machine ask its admin",
            ),
            "Since NVIDIA's fix for CVE-2018-6260 the driver restricts the GPU performance counters to administrators.",
        ),
    )


def _old_gpu(fx: Facts, text: str) -> Optional[str]:
    """A GPU before Volta (compute capability < 7.0) the facts or the text name, else None."""
    for g in gpus(fx):
        cc = str(g.get("compute_capability") or "")
        n = cap_number(cc)
        if n is not None and n < 70:
            return f"{gpu_label(g)} (compute capability {cc})"
        if not cc and _PRE_VOLTA_NAME.search(str(g.get("name") or "")):
            return str(g.get("name"))
    said = fx.str("collect_env.fields.GPU models and configuration") or ""  # a chip name the GPU reader does not take
    m = _PRE_VOLTA_NAME.search(said) or _PRE_VOLTA_NAME.search(text)
    return m.group(0) if m else None


@check(PROFILER_UNSUPPORTED_GPU)
def profiler_unsupported_gpu(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, PROFILER_UNSUPPORTED_GPU)
    text = text_of(fx)
    old = None
    if not said:
        m = _NO_KERNELS.search(text)
        old = _old_gpu(fx, text) if m else None
        if not (m and old):
            return
        said = ("error", m.group(0))
    evidence = {said[0]: said[1]}
    if old:
        evidence["gpu"] = old
        title = "Nsight Compute (2020.1 and later) does not profile Pascal or older GPUs: use nvprof there"
        fix = (
            "nvprof --print-gpu-trace python your_script.py  # nvprof still profiles Pascal and older",
            "# or an Nsight Compute release before 2020.1 (CUDA 10.2's)",
        )
    else:
        ccs = _capabilities(fx)
        if ccs:
            evidence["compute capability"] = ", ".join(ccs)
        title = "nvprof does not profile this GPU (compute capability 7.5 or 8.0 and newer): use Nsight Systems / Nsight Compute"
        fix = (
            "nsys profile -o timeline python your_script.py  # the timeline nvprof gave",
            "ncu --set full -o kernels python your_script.py  # kernel metrics (nvprof --metrics); ncu --query-metrics lists them",
        )
    yield PROFILER_UNSUPPORTED_GPU.finding(
        title=title,
        evidence=evidence,
        fix=Fix(fix, "Each NVIDIA profiler supports a range of GPU architectures; this one is outside it."),
    )


@check(CUPTI_MULTIPLE_SUBSCRIBERS)
def cupti_multiple_subscribers(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CUPTI_MULTIPLE_SUBSCRIBERS)
    if not said:
        return
    yield CUPTI_MULTIPLE_SUBSCRIBERS.finding(
        title="Another tool already subscribed to CUPTI in this process (nsys, ncu, compute-sanitizer, cuda-gdb or a "
        "library's own profiler): use one at a time",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "# run the program without the outer tool (nsys/ncu/compute-sanitizer/cuda-gdb) while its own profiler is on,",
                "# or turn the program's CUPTI profiling off (torch.profiler, a CUPTI monitor) while it runs under the tool",
            ),
            "CUPTI allows one subscriber per process.",
        ),
    )


def register():
    return [gpu_perf_counters_restricted, profiler_unsupported_gpu, cupti_multiple_subscribers]
