"""Session 19: the display watchdog's launch timeout (checks/watchdog19.py), cuBLAS refusing a bfloat16 GEMM below
Ampere (gpu-lacks-bf16), and torch.compile finding no Triton on Windows (torch-compile-unsupported-on-windows); the
wordings are in kb/errors/b19.json with their sources."""

from __future__ import annotations

import json
from pathlib import Path

from checkcli import codes, paste_findings, severities

import cudadoctor

# AUTOMATIC1111/stable-diffusion-webui#6790 (trimmed): the webui on Windows, a long attention kernel on the display GPU.
A1111_TIMEOUT = """[Bug]: RuntimeError: CUDA error: the launch timed out and was terminated
  File "C:\\Users\\TCNO\\Desktop\\AI\\stable-diffusion-webui\\venv\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1130, in _call_impl
    return forward_call(*input, **kwargs)
  File "C:\\Users\\TCNO\\Desktop\\AI\\stable-diffusion-webui\\repositories\\stable-diffusion-stability-ai\\ldm\\modules\\attention.py", line 73, in forward
    return self.net(x)
RuntimeError: CUDA error: the launch timed out and was terminated
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
"""

# numba/numba#4351: numba's driver error, by number and enum name.
NUMBA_702 = """  File "/Users/me/dev/numba/numba/cuda/cudadrv/driver.py", line 329, in _check_error
    raise CudaAPIError(retcode, msg)
numba.cuda.cudadrv.driver.CudaAPIError: [702] Call to cuMemcpyDtoH results in CUDA_ERROR_LAUNCH_TIMEOUT
"""


def test_a_launch_timeout_on_windows_is_the_display_watchdog_with_the_tdr_fix(tmp_path):
    got = paste_findings(tmp_path, A1111_TIMEOUT)
    assert codes(got)[0] == "display-gpu-watchdog-timeout", got
    f = next(x for x in got if x["code"] == "display-gpu-watchdog-timeout")
    assert f["severity"] == "error"
    assert "TDR" in f["title"]
    assert any("TdrDelay" in c for c in f["fix"]["commands"])


def test_numbas_enum_name_is_the_same_cause_and_a_linux_os_gets_the_x_fix(tmp_path):
    assert severities(paste_findings(tmp_path, NUMBA_702)).get("display-gpu-watchdog-timeout") == "error"
    linux = "OS: Ubuntu 22.04.3 LTS (x86_64)\n" + NUMBA_702
    f = next(x for x in paste_findings(tmp_path, linux) if x["code"] == "display-gpu-watchdog-timeout")
    assert "X server" in f["title"] and not any("TdrDelay" in c for c in f["fix"]["commands"])


def test_the_kb_maps_the_launch_timeout_numbers_to_the_code():
    kb = json.loads((Path(cudadoctor.__file__).parent / "kb" / "cuda_errors.json").read_text(encoding="utf-8"))
    named = {
        (sec, e["name"]): e.get("code")
        for sec in ("driver", "runtime", "runtime_legacy")
        for e in kb[sec]
        if e["value"] in (6, 702)
    }
    assert named[("driver", "CUDA_ERROR_LAUNCH_TIMEOUT")] == "display-gpu-watchdog-timeout"
    assert named[("runtime", "cudaErrorLaunchTimeout")] == "display-gpu-watchdog-timeout"
    assert named[("runtime_legacy", "cudaErrorLaunchTimeout")] == "display-gpu-watchdog-timeout"


# opendatalab/MinerU#1508: a Tesla M40 (compute capability 5.2), bfloat16 chosen by the program.
MINERU_M40 = """旧显卡如M40出现"RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED"
RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, (int)m, (int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, strideb, (void*)&fbeta, c, CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`
因为我使用的显卡是Tesla M40
"""
CUBLAS_BF16 = MINERU_M40.splitlines()[1] + "\n"


def test_cublas_refusing_a_bf16_gemm_on_an_m40_is_the_gpu_lacking_bf16(tmp_path):
    got = paste_findings(tmp_path, MINERU_M40)
    assert severities(got).get("gpu-lacks-bf16") == "error", got


def test_the_bare_cublas_line_is_a_likely_bf16_lack(tmp_path):
    got = paste_findings(tmp_path, CUBLAS_BF16)
    f = next(x for x in got if x["code"] == "gpu-lacks-bf16")
    assert f["severity"] == "warning" and f["title"].startswith("Likely")


def test_the_same_line_beside_an_a100_is_not_a_bf16_lack(tmp_path):
    text = "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB\n" + CUBLAS_BF16
    assert "gpu-lacks-bf16" not in codes(paste_findings(tmp_path, text))


def test_cublas_refusing_a_float16_gemm_is_not_read_as_bf16(tmp_path):
    fp16 = CUBLAS_BF16.replace("CUDA_R_16BF", "CUDA_R_16F")
    assert "gpu-lacks-bf16" not in codes(paste_findings(tmp_path, fp16))


# pytorch/pytorch#137689 (collect_env trimmed): torch.compile on native Windows 11, no Triton for Windows.
TRITON_WINDOWS = """Triton Dependancy Error while compiling diffusion model on Windows 10 and torch==2.4.1+cu124
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at https://github.com/openai/triton

Collecting environment information...
PyTorch version: 2.4.1+cu124
Is debug build: False
CUDA used to build PyTorch: 12.4
OS: Microsoft Windows 11 Pro
Python version: 3.10.9 (tags/v3.10.9:1dd9be6, Dec  6 2022, 20:01:21) [MSC v.1934 64 bit (AMD64)] (64-bit runtime)
Is CUDA available: True
GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4070
Nvidia driver version: 561.09
"""
# pytorch/pytorch#125093: the same error on Linux (a torch for Python 3.12 without its triton).
TRITON_LINUX = """Triton installation not found.
  File "/home/mfbalin/.venvs/venv/lib/python3.12/site-packages/torch/_inductor/compile_fx.py", line 1450, in compile_fx
    return aot_autograd(
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
RuntimeError: Cannot find a working triton installation. More information on installing Triton can be found at https://github.com/openai/triton
"""


def test_no_triton_on_native_windows_is_torch_compile_unsupported_there(tmp_path):
    got = paste_findings(tmp_path, TRITON_WINDOWS)
    assert codes(got)[0] == "torch-compile-unsupported-on-windows", got
    assert severities(got)["torch-compile-unsupported-on-windows"] == "error"


def test_no_triton_on_linux_is_not_called_a_windows_limit(tmp_path):
    assert "torch-compile-unsupported-on-windows" not in codes(paste_findings(tmp_path, TRITON_LINUX))


def test_no_triton_with_the_os_unknown_is_a_likely_windows_limit(tmp_path):
    bare = TRITON_LINUX.splitlines()[-1] + "\n"
    got = paste_findings(tmp_path, bare)
    f = next(x for x in got if x["code"] == "torch-compile-unsupported-on-windows")
    assert f["severity"] == "warning" and "if this is native Windows" in f["title"]


def test_dynamos_own_windows_refusal_still_needs_no_os(tmp_path):
    got = paste_findings(tmp_path, "RuntimeError: Windows not yet supported for torch.compile\n")
    assert severities(got).get("torch-compile-unsupported-on-windows") == "error"
