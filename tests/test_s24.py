"""Session 24 (issue 21): causes that had no code, each recurring across blind batches and the public threads of its
class."""

from __future__ import annotations

import json

from checkcli import codes, paste_findings, run_check, severities, write

from cudadoctor.facts import new_facts

# numba#10166 (Windows 11, Game Ready 580.88, numba 0.61.2), as the reporter wrote it.
NUMBA_INDEXERROR = """GeForce Game Ready Driver version 580.88 is breaking Numba
I am using Numba version 0.61.2 with Python 3.10.11 on Windows 11 24H2. After updating to version 580.88 of the GeForce Game Ready Driver, executing code that includes the following function declaration results in an exception:

@cuda.jit("void(float32[:,:], float32[:,:])", cache=True)
def interp_kernel_f32(input, output):

Traceback (most recent call last):
...
File "devices.py", line 40, in getitem
return self.lst[devnum]
IndexError: list index out of range
"""
# numba#10188: a segfault in numba's cudadrv after an upgrade to 580.65.06 (trimmed).
NUMBA_SEGFAULT = """System has recently been upgraded to the below drivers
| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |
Fatal Python error: Segmentation fault
  File "/home/u/.conda/envs/CLIC/lib/python3.13/site-packages/numba/cuda/cudadrv/driver.py", line 327 in safe_cuda_api_call
  File "/home/u/.conda/envs/CLIC/lib/python3.13/site-packages/numba/cuda/cudadrv/devices.py", line 120 in _get_or_create_context
"""


def _facts(tmp_path, driver, *dists):
    fx = new_facts("live")
    fx["nvml"] = {"status": "ok", "driver_version": driver}
    fx["packages"] = {
        "complete": True,
        "distributions": [{"name": n, "version": v, "installer": "pip", "listed_by": "pip"} for n, v in dists],
        "listings": {"pip": "listed", "conda": "not-collected"},
    }
    return write(tmp_path, json.dumps(fx), "facts.json")


def test_numba_builtin_cuda_target_on_an_r580_driver(tmp_path):
    for text in (NUMBA_INDEXERROR, NUMBA_SEGFAULT):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("numba-cuda-target-crashes-on-r580") == "error", text[:40]
    # the same crash under driver 576: not this cause
    older = NUMBA_SEGFAULT.replace("580.65.06", "576.57")
    assert "numba-cuda-target-crashes-on-r580" not in codes(paste_findings(tmp_path, older))
    # numba 0.63 has the fix
    fixed = NUMBA_INDEXERROR.replace("Numba version 0.61.2", "Numba version 0.63.1")
    assert "numba-cuda-target-crashes-on-r580" not in codes(paste_findings(tmp_path, fixed))


def test_numba_and_an_r580_driver_installed_with_nothing_failing_is_a_warning(tmp_path):
    found = run_check("--facts", str(_facts(tmp_path, "580.95.05", ("numba", "0.61.2"))))
    assert severities(found).get("numba-cuda-target-crashes-on-r580") == "warning"
    fix = " ".join(c for f in found if f["code"] == "numba-cuda-target-crashes-on-r580" for c in f["fix"]["commands"])
    assert "numba>=0.63" in fix and "numba-cuda" in fix
    # numba-cuda installed beside it, numba 0.63, or a 57x driver: nothing to say
    for facts in (
        _facts(tmp_path, "580.95.05", ("numba", "0.61.2"), ("numba-cuda", "0.20.0")),
        _facts(tmp_path, "580.95.05", ("numba", "0.63.1")),
        _facts(tmp_path, "575.64.05", ("numba", "0.61.2")),
    ):
        assert "numba-cuda-target-crashes-on-r580" not in codes(run_check("--facts", str(facts)))


# Nsight Compute's refusal (ThunderKittens on a rented GPU) and nvprof's (a shared server), verbatim.
NCU_PERM = (
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the "
    "target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
)
NVPROF_PERM = (
    "==708142== Warning: ERR_NVGPUCTRPERM - The user does not have permission to profile on the target device. See the "
    "following link for instructions to enable permissions and get more information: https://developer.nvidia.com/ERR_NVGPUCTRPERM\n"
)
# geoffxy/habitat#5 (in a container) and likwid's NVMON (CUPTI's number only).
HABITAT_CUPTI = (
    "/home/ubuntu/home/habitat/cpp/src/cuda/cupti_tracer.cpp:120: error: function cuptiActivityRegisterCallbacks("
    "cuptiBufferRequested, cuptiBufferCompleted) failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.\n"
)
LIKWID_35 = "Error: function (*cuptiProfilerBeginSessionPtr)(&beginSessionParams) failed with error 35.\n"


def test_gpu_performance_counters_restricted_to_admins(tmp_path):
    for text in (NCU_PERM, NVPROF_PERM, HABITAT_CUPTI, LIKWID_35):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("gpu-perf-counters-restricted") == "error", text[:50]
    fix = " ".join(
        c for f in paste_findings(tmp_path, NCU_PERM) if f["code"] == "gpu-perf-counters-restricted" for c in f["fix"]["commands"]
    )
    assert "NVreg_RestrictProfilingToAdminUsers=0" in fix
    # in a container the host's driver decides: the fix is the container's capability
    docker = "$ docker run --gpus all -it nvcr.io/nvidia/pytorch:24.01-py3\n" + NCU_PERM
    fix = " ".join(
        c for f in paste_findings(tmp_path, docker) if f["code"] == "gpu-perf-counters-restricted" for c in f["fix"]["commands"]
    )
    assert "--cap-add SYS_ADMIN" in fix
    # error 35 from CUDA itself (cudaErrorInsufficientDriver), not CUPTI: not this cause
    assert "gpu-perf-counters-restricted" not in codes(paste_findings(tmp_path, "CUDA error 35: failed with error 35\n"))


# brucefan1983/CUDA-Programming#37 (RTX 3070 Laptop) and undertherain/benchmarker#168 (nvprof's metrics on 7.5+).
NVPROF_80 = """E:\\Code\\chapter5>nvprof .\\add3memory.exe
======== Warning: nvprof is not supported on devices with compute capability 8.0 and higher.
                  Use NVIDIA Nsight Systems for GPU tracing and CPU sampling and NVIDIA Nsight Compute for GPU profiling.
GPU: NVIDIA GeForce RTX 3070 Laptop GPU
"""
NVPROF_75 = "Warning: Skipping profiling on device 0 since profiling is not supported on devices with compute capability 7.5 and higher.\n"


def test_profiler_that_does_not_support_the_gpu(tmp_path):
    for text in (NVPROF_80, NVPROF_75):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("profiler-unsupported-gpu") == "error", text[:50]
        # the profiler's words are not torch's or a package's missing kernels
        assert not {"gpu-arch-unsupported", "companion-arch-unsupported"} & set(codes(found)), codes(found)
        assert any("nsys profile" in c for f in found if f["code"] == "profiler-unsupported-gpu" for c in f["fix"]["commands"])
    # Nsight Compute profiles nothing on Pascal (dropped in 2020.1); on an Ampere GPU the same line means something else
    pascal = "GPU: NVIDIA GeForce GTX 1080 Ti\n==PROF== No kernels were profiled.\n"
    assert severities(paste_findings(tmp_path, pascal)).get("profiler-unsupported-gpu") == "error"
    ampere = "GPU: NVIDIA GeForce RTX 3090\n==PROF== No kernels were profiled.\n"
    assert "profiler-unsupported-gpu" not in codes(paste_findings(tmp_path, ampere))


def test_two_cupti_subscribers(tmp_path):
    # rapidsai/rapidsmpf#500 (under compute-sanitizer) and the enum's name
    for text in (
        'C++ exception with description "Failed to initialize CUPTI: 39" thrown in the test body.\n',
        "cuptiSubscribe failed with error CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED\n",
    ):
        assert severities(paste_findings(tmp_path, text)).get("cupti-multiple-subscribers") == "error", text[:40]
