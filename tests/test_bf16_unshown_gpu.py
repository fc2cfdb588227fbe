"""transformers' "Your setup doesn't support bf16/gpu" with no GPU shown: a 'Likely' gpu-lacks-bf16 warning, unless the
facts say CUDA is unusable (a CPU torch), where the other checks tell the cause.

In the public threads that carry the message the GPU is nearly always one below compute capability 8.0: V100
(lm-sys/FastChat#399, #1191; databrickslabs/dolly#11), T4 (LlamaChinese/Llama-Chinese#192), a GTX 1060 Ti
(zai-org/GLM-Edge#20). The texts below are the reporters' own.
"""

from checkcli import codes, paste_findings, severities

# https://github.com/databrickslabs/dolly/issues/11 (the traceback as pasted; the GPU is named only in the prose around it)
DOLLY = """  File "<string>", line 105, in __init__
  File "/databricks/python/lib/python3.9/site-packages/transformers/training_args.py", line 1098, in __post_init__
    raise ValueError(
ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0
"""

# https://github.com/lm-sys/FastChat/issues/1191 (the reporter's versions, the message, and torch's device properties)
FASTCHAT_V100 = """Error raised during finetuning: ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0
torch.__version__ = 2.0.1+cu117
cuda = 11.8

CudaDeviceProperties(name='Tesla V100-DGXS-32GB', major=7, minor=0, total_memory=32508MB, multi_processor_count=80)
"""

CPU_TORCH_ENV = """PyTorch version: 2.0.1+cpu
Is debug build: False
CUDA used to build PyTorch: None
ROCM used to build PyTorch: N/A

OS: Ubuntu 22.04.2 LTS (x86_64)
Python version: 3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0] (64-bit runtime)
Is CUDA available: False
CUDA runtime version: No CUDA
GPU models and configuration: No CUDA
Nvidia driver version: No CUDA
cuDNN version: No CUDA
"""


def test_the_message_alone_is_a_likely_pre_ampere_gpu_warning(tmp_path):
    found = paste_findings(tmp_path, DOLLY)
    assert "gpu-lacks-bf16" in codes(found)
    assert severities(found)["gpu-lacks-bf16"] == "warning"
    title = next(f["title"] for f in found if f["code"] == "gpu-lacks-bf16")
    assert title.startswith("Likely:") and "get_device_capability" in title


def test_a_named_pre_ampere_gpu_makes_it_an_error(tmp_path):
    found = paste_findings(tmp_path, FASTCHAT_V100)
    assert severities(found).get("gpu-lacks-bf16") == "error"


def test_a_cpu_torch_in_the_facts_leaves_it_to_the_other_checks(tmp_path):
    err = tmp_path / "err.txt"
    err.write_text(DOLLY, encoding="utf-8")
    env = tmp_path / "env.txt"
    env.write_text(CPU_TORCH_ENV, encoding="utf-8")
    from checkcli import run_check

    found = run_check("--from-collect-env", str(env), "--error-file", str(err))
    assert "gpu-lacks-bf16" not in codes(found)
    assert "cpu-only-torch" in codes(found)
