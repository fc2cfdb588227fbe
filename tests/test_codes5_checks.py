"""Round 5: causes that had no code, reasoned from entities (GPU vendors and names, capabilities, a vGPU guest, the mmcv
package) and facts. Every text here is real, from a public thread (URL beside it), not from the blind batches; each rule
is held to texts of other threads than the batch case it came from (b17-08, b19-05, b17-50, b16-44, b15-18/19).
"""

from __future__ import annotations

from cudadoctor import registry
from cudadoctor.facts import new_facts
from cudadoctor.readers import issue
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _rules(facts):
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def _got(text: str, gpus=(), packages=None, **system):
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    if system:
        facts["system"] = dict(system)
    if gpus:
        facts["nvml"] = {"devices": [{"index": i, "name": n} for i, n in enumerate(gpus)]}
    if packages:
        facts["packages"] = {"distributions": [{"name": k, "version": v} for k, v in packages.items()]}
    return _rules(facts)


def _pasted(text: str):
    return _rules(issue.read(text)["facts"])


# ---------------------------------------------------------------- non-nvidia-gpu

# https://github.com/vosen/ZLUDA/issues/322 (an AMD card; CUDA is not there)
ZLUDA = (
    "torch.cuda.is_available() is False\n"
    "I'm trying to run cuda on windows 10 with on an AMD 7900 GRE.  When I try to run this code with "
    '`"C:\\Program Files\\zluda\\zluda_with.exe" -- python demo.py ` it prints False.\n'
    "```\nimport torch\n\nprint(torch.cuda.is_available())\n```"
)
# https://github.com/harakas/amd_igpu_yolo_v8/issues/1 (an AMD iGPU, no NVIDIA GPU)
AMD_IGPU = (
    "cuda not available\n"
    "I follow your guide to run docker on Windows host. iGPU model is AMD Ryzen 5 5600H with Radeon Graphics.  "
    "but torch.cuda.is_available() returns **False**."
)


def test_an_amd_gpu_and_no_nvidia_one_is_named_from_a_paste():
    for text in (ZLUDA, AMD_IGPU):
        got = _pasted(text)
        assert "non-nvidia-gpu" in got, (text[:40], list(got))
        assert got["non-nvidia-gpu"].severity == "error" and "AMD" in got["non-nvidia-gpu"].title


def test_an_intel_igpu_beside_an_nvidia_gpu_is_not_this_case():
    # a laptop's two adapters, as Windows lists them (Intel iGPU + NVIDIA dGPU) with CUDA failing for another reason
    text = "Display adapters: Intel(R) UHD Graphics 630, NVIDIA GeForce GTX 1650\ntorch.cuda.is_available() returns False"
    assert "non-nvidia-gpu" not in _pasted(text)
    got = _got(
        "RuntimeError: Found no NVIDIA driver on your system.", gpus=["Intel(R) UHD Graphics 630", "NVIDIA GeForce GTX 1650"]
    )
    assert "non-nvidia-gpu" not in got


def test_a_mac_gets_a_warning_and_no_cpu_torch_error():
    # https://github.com/ZZR8066/SEMv2/issues/8 is an m1 mac; torch's own assertion on macOS (no CUDA build exists there)
    got = _got("AssertionError: Torch not compiled with CUDA enabled", os="macOS 14.2")
    assert got["non-nvidia-gpu"].severity == "warning" and "mps" in got["non-nvidia-gpu"].title
    assert not [f for f in got.values() if f.severity == "error"], list(got)


def test_a_linux_gpu_server_with_a_cpu_torch_is_not_claimed():
    got = _got("AssertionError: Torch not compiled with CUDA enabled", gpus=["Tesla T4"], os="Linux")
    assert "non-nvidia-gpu" not in got


# ---------------------------------------------------------------- gpu-lacks-bf16

V100 = (  # https://github.com/vllm-project/vllm/issues/946
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
    "Your Tesla V100-SXM2-32GB GPU has compute capability 7.0."
)
# https://github.com/vllm-project/vllm/issues/1284 (P100, 6.0)
P100 = "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla P100-PCIE-16GB GPU has compute capability 6.0."


def test_bf16_below_ampere_names_the_gpu_and_its_capability():
    for text, cap in ((V100, "7.0"), (P100, "6.0")):
        got = _got(text)
        f = got["gpu-lacks-bf16"]
        assert f.severity == "error" and cap in f.title and "companion-arch-unsupported" not in got


def test_autocast_bf16_on_a_volta_gpu_from_the_facts():
    # torch/amp/autocast_mode.py's wording (a V100 benchmark write-up quotes it); the GPU's capability from its name
    got = _got(
        "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
        gpus=["Tesla V100-SXM2-16GB"],
    )
    assert got["gpu-lacks-bf16"].severity == "error" and "7.0" in got["gpu-lacks-bf16"].title


def test_transformers_bf16_refusal_without_a_gpu_is_only_a_likely_warning():
    # transformers says the same with a CPU torch: with no GPU shown it is a 'Likely' warning, never an error (a CPU
    # torch in the facts silences it: tests/test_bf16_unshown_gpu.py)
    got = _got("ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0")
    assert got["gpu-lacks-bf16"].severity == "warning" and got["gpu-lacks-bf16"].title.startswith("Likely:")
    got = _got("ValueError: Your setup doesn't support bf16/gpu.", gpus=["NVIDIA GeForce RTX 2080 Ti"])
    assert got["gpu-lacks-bf16"].severity == "error"


# ---------------------------------------------------------------- vGPU licence, and "busy or unavailable" alone

# https://github.com/Azure/AKS/issues/4869 (A10 vGPU nodes, the guest unlicensed)
AKS = (
    "[BUG] Nvidia A10 GPUs running into device errors - potentially vGPU Unlicensed Issue\n"
    "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"
)


def test_an_unlicensed_vgpu_is_named():
    got = _got(AKS)
    assert got["vgpu-license-unlicensed"].severity == "error"
    assert got["gpu-compute-mode-restricted"].severity == "warning"


def test_busy_on_a_vgpu_guest_points_at_the_licence():
    got = _got(
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable",
        os="Linux",
        distro="Ubuntu 22.04 (VM with NVIDIA vGPU)",
    )
    assert got["vgpu-license-unlicensed"].severity == "warning"


def test_busy_alone_is_a_warning_listing_the_causes():
    # https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/2986 was a broken driver install, not a compute mode
    got = _got("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", os="Linux")
    f = got["gpu-compute-mode-restricted"]
    assert f.severity == "warning" and "vGPU" in f.title and "driver install" in f.title
    assert "vgpu-license-unlicensed" not in got


# ---------------------------------------------------------------- mmcv without its ops

# https://github.com/open-mmlab/mmrotate/issues/24 ; https://github.com/XLearning-SCU/2022-CVPR-AirNet/issues/5
MMROTATE = "I run the demo and get the error:\nNo module named 'mmcv._ext'"
AIRNET = "ModuleNotFoundError: No module named 'mmcv._ext' is displayed after installation according to the YAML file."


def test_mmcv_without_ops_names_the_package():
    assert _got(MMROTATE)["mmcv-without-compiled-ops"].severity == "error"
    f = _got(AIRNET, packages={"mmcv": "1.3.9"})["mmcv-without-compiled-ops"]
    assert "mmcv-full" in f.title
    f = _got(AIRNET, packages={"mmcv-lite": "2.0.1"})["mmcv-without-compiled-ops"]
    assert "mmcv-lite" in f.title
