"""gpuid9: WHICH GPU the machine has, from names and statements anywhere (not one sentence).

Real texts from public threads (none from the blind batches); each URL is the thread the words come from:
- another vendor's GPU named in any form (lspci, Windows names, "AMD GPU", Chinese/Japanese words) with CUDA asked for
  -> non-nvidia-gpu; a person saying the machine has no NVIDIA GPU -> non-nvidia-gpu;
- an NVIDIA GPU stated beside it (Optimus laptops, "I have an NVIDIA GPU", a program's "No NVIDIA/AMD GPU detected")
  -> not non-nvidia-gpu.
"""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.errortext import gpu_vendors

NON_NVIDIA = [
    (  # AMD RX570 beside torch's "Found no NVIDIA driver"
        "https://github.com/neuralchen/SimSwap/issues/421",
        'When I try to execute my first project, it states "Found no NVIDIA driver on your system. Please check that you '
        'have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx" but I have a RX570 GPU.',
    ),
    (
        "https://github.com/JoshuaKimsey/Linux-StableDiffusion-Script/issues/17",
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
        "driver from http://www.nvidia.com/Download/index.aspx\n\nI have an AMD Card \n\nThe card I have is : AMD Vega 20 "
        "radeon VII",
    ),
    (
        "https://github.com/NVIDIA/k8s-device-plugin/issues/812",
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
        "driver from http://www.nvidia.com/Download/index.aspx\nHi  I use an AMD GPU. I get this error please help me",
    ),
    (
        "https://github.com/Comfy-Org/ComfyUI/issues/8638",
        "Amd显卡\nFound no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver "
        "from http://www.nvidia.com/Download/index.aspx",
    ),
    (  # Windows: torch.cuda.is_available() on an office PC with only Intel graphics
        "https://github.com/pytorch/pytorch/issues/101147",
        "I ran `torch.cuda.is_available()` on a computer without an nvidia graphics card, and the python process simply "
        "ended without any output\nA Lenovo office computer with no discrete graphics, only Intel core graphics (UHD 630)",
    ),
    (  # no vendor named: the person says there is no NVIDIA GPU
        "https://github.com/lshqqytiger/stable-diffusion-webui-amdgpu-forge/issues/78",
        "Nvidia driver was found but... i have no nvidia.\nRuntimeError: Torch is not able to use GPU",
    ),
]


@pytest.mark.parametrize("url,text", NON_NVIDIA, ids=[u.split("github.com/")[1] for u, _ in NON_NVIDIA])
def test_another_vendor_or_no_nvidia_stated_is_non_nvidia_gpu(tmp_path, url, text):
    got = severities(paste_findings(tmp_path, text))
    # a GPU of another vendor named: an error; only a person's statement that there is no NVIDIA GPU: a warning
    assert got.get("non-nvidia-gpu") == ("warning" if "i have no nvidia" in text else "error"), (url, got)


def test_names_in_other_forms_are_read_as_their_vendor():
    # lspci's line (https://pci-ids.ucw.cz/read/PC/8086), Windows' names, a user's word order, other vendors
    assert gpu_vendors.vendor_of("00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 620 (rev 07)") == "intel"
    assert gpu_vendors.vendor_of("Intel(R) UHD Graphics 630") == "intel"
    assert gpu_vendors.vendor_of("intel graphics 520 hd") == "intel"
    assert gpu_vendors.vendor_of("Qualcomm(R) Adreno(TM) X1-85 GPU") == "qualcomm"
    assert gpu_vendors.vendor_of("MTT S80") == "moorethreads"
    assert gpu_vendors.vendor_of("03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 21") == "amd"
    # a CPU and a compiler are not GPUs
    assert gpu_vendors.vendor_of("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz") is None
    assert gpu_vendors.vendor_of("Intel Graphics Compiler for OpenCL") is None
    # a program's message names no GPU of the machine; a question states nothing
    assert gpu_vendors.other_gpus(["No NVIDIA/AMD GPU detected. Ollama will run in CPU-only mode."]) == []
    assert gpu_vendors.nvidia_absent(["Or do I need a nvidia GPU to use this application?"]) is None
    assert gpu_vendors.nvidia_absent(["WARNING: No NVIDIA GPU detected"]) is None


NVIDIA_THERE = [
    (  # Optimus laptops: an Intel iGPU and an NVIDIA dGPU (the NVIDIA one is there)
        "https://github.com/microsoft/WSL/issues/4846",
        "I suspect there's something going on with these type of laptops that  have a Intel UHD 630 integrated/NVIDIA "
        'GTX 10xx hybrid ("Optimus") setup as I can\'t get WSL to recognise I have an NVIDIA card installed at all',
    ),
    (
        "https://github.com/sebanc/brunch/issues/72",
        "Both laptops use the Intel UHD 620 iGPU, and both use the NVIDIA GeForce MX150 dGPU. CUDA is not available.",
    ),
    (  # "I have an NVIDIA GPU" names one; the AMD GPU is what a program claimed, not the machine's only GPU
        "https://github.com/Jeffser/Alpaca/issues/739",
        "The issue is that I have an NVIDIA GPU, but the software does not appear to detect it. It instead claims I have "
        "an AMD GPU:",
    ),
]


@pytest.mark.parametrize("url,text", NVIDIA_THERE, ids=["optimus-wsl", "optimus-mx150", "stated"])
def test_an_nvidia_gpu_named_beside_keeps_it_quiet(tmp_path, url, text):
    assert "non-nvidia-gpu" not in codes(paste_findings(tmp_path, text)), url


def test_collect_env_report_whose_only_gpu_is_amd(tmp_path):
    # collect_env's GPU field written by hand with another vendor's GPU and nothing else failing: the question is CUDA
    # on that GPU (a warning: nothing asked for CUDA yet); with an NVIDIA GPU listed, nothing.
    base = "PyTorch version: 2.1.0+cu121\nIs CUDA available: False\nOS: Microsoft Windows 11 Pro\n"
    amd = paste_findings(tmp_path, base + "GPU models and configuration: AMD Radeon RX 6700 XT\n", "--from-collect-env")
    assert "non-nvidia-gpu" in codes(amd)
    nv = paste_findings(tmp_path, base + "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3060\n", "--from-collect-env")
    assert "non-nvidia-gpu" not in codes(nv)
