"""Session 20: CUDA's "driver insufficient" (error 35) inside a container whose host driver runs the program's CUDA (the
container was not given the GPU: no-gpu-visible, not driver-too-old), and nvidia-smi finding no device while lspci shows
the nvidia module bound to the GPU (gpu-init-failed)."""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

# SYSTRAN/faster-whisper#1229 (trimmed): faster-whisper in Docker on Unraid; the host driver 565.77 runs CUDA 12.7.
UNRAID_35 = """CUDA driver version insufficient for CUDA runtime version - error
I am getting the following error:

> RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version

When trying to install/run faster-whisper in a docker on my unraid server which has a P40 GPU.  The GPU information on my install is:

Nvidia Driver Version: 565.77
Open Source Kernel Module: No
Installed GPU(s):
0:
Tesla P40
"""

# SYSTRAN/faster-whisper#1259 (trimmed): the same error in a Kubernetes pod; the host's nvidia-smi banner.
K8S_35 = """CUDA version problem in container
I'm running the linuxserver/faster-whisper:gpu container within my k8s cluster.
Container runtime is nvidia, GPU is correctly attached.

Error:
`RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version`

Driver information on the host:
` NVIDIA-SMI 550.144.03             Driver Version: 550.144.03     CUDA Version: 12.4 `
"""

# e4s2022/e4s#25: a Clevo laptop; nvidia-smi finds nothing while lspci shows the nvidia module bound to the GPU.
CLEVO = """pythorch cuda problem.
/python3.8/site-packages/torch/cuda/__init__.py", line 190, in _lazy_init
    torch._C._cuda_init()
RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/aten/src/THC/THCGeneral.cpp:47
---
~/e4s$ nvidia-smi
No devices were found
(e4s) zzl@zzl-N960Kx:~/e4s$ lspci -k | grep -A 2 -E "(VGA|3D)"
00:02.0 VGA compatible controller: Intel Corporation Device 9bc5 (rev 05)
	Subsystem: CLEVO/KAPOK Computer Device 2112
	Kernel driver in use: i915
--
01:00.0 VGA compatible controller: NVIDIA Corporation Device 249d (rev ff)
	Kernel driver in use: nvidia
	Kernel modules: nvidiafb, nouveau, nvidia_drm, nvidia
"""


def test_error_35_in_a_container_whose_host_driver_runs_cuda_12_is_a_container_without_the_gpu(tmp_path):
    for text, driver in ((UNRAID_35, "565.77"), (K8S_35, "550.144.03")):
        got = paste_findings(tmp_path, text)
        assert "driver-too-old" not in codes(got), got
        f = next(x for x in got if x["code"] == "no-gpu-visible")
        assert f["severity"] == "warning"
        assert driver in f["title"] and "without GPU access" in f["title"]


def test_error_35_in_a_container_with_an_old_host_driver_stays_driver_too_old(tmp_path):
    old = UNRAID_35.replace("565.77", "418.87.01")  # CUDA 10.1 at most: the image's CUDA 12 cannot run
    got = paste_findings(tmp_path, old)
    assert severities(got).get("driver-too-old") == "error", got


def test_error_35_outside_a_container_with_a_modern_driver_is_not_called_a_container(tmp_path):
    bare = UNRAID_35.replace("in a docker on my unraid server", "on my server")
    assert "no-gpu-visible" not in codes(paste_findings(tmp_path, bare))


def test_no_devices_with_the_nvidia_module_bound_is_a_gpu_the_driver_cannot_start(tmp_path):
    got = paste_findings(tmp_path, CLEVO)
    f = next(x for x in got if x["code"] == "gpu-init-failed")
    assert f["severity"] == "warning"
    assert "NVIDIA Corporation Device 249d" in f["evidence"]["lspci"]


def test_lspci_bound_to_nouveau_or_nvidia_smi_working_is_not_an_init_failure(tmp_path):
    nouveau = CLEVO.replace("Kernel driver in use: nvidia", "Kernel driver in use: nouveau")
    assert "gpu-init-failed" not in codes(paste_findings(tmp_path, nouveau))
    listed = CLEVO.replace("No devices were found", "GPU 0: NVIDIA GeForce RTX 3070 Laptop GPU (UUID: GPU-1b2c)")
    assert "gpu-init-failed" not in codes(paste_findings(tmp_path, listed))


def test_a_blackwell_gpu_bound_but_not_started_is_left_to_the_open_module_question(tmp_path):
    blackwell = CLEVO.replace("NVIDIA Corporation Device 249d", "NVIDIA Corporation GB202 [GeForce RTX 5090]")
    assert "gpu-init-failed" not in codes(paste_findings(tmp_path, blackwell))
