"""The NVIDIA container runtimes' own driver-vs-image checks (kb/errors/drv10.json): the image's CUDA and the CUDA the
host driver offers, from their messages. Texts verbatim from public threads (URLs beside them), none from the blind batches."""

from __future__ import annotations

from checkcli import codes, paste_findings


def _too_old(tmp_path, text):
    f = paste_findings(tmp_path, text)
    return [x for x in f if x["code"] == "driver-too-old" and x["severity"] in ("error", "warning")], codes(f)


def test_nvidia_docker_1_driver_below_image(tmp_path):
    # https://github.com/NVIDIA/nvidia-docker/issues/177 (driver 352.39, the default image is CUDA 8.0)
    got, all_codes = _too_old(
        tmp_path, "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0\n"
    )
    assert got, all_codes
    assert "7.5" in got[0]["title"] and "8.0" in got[0]["title"]


def test_nvidia_docker_1_driver_below_image_with_patch_level(tmp_path):
    # https://github.com/NVIDIA/nvidia-docker/issues/497 (driver 375.66 = CUDA 8.0, image 9.0.176)
    got, all_codes = _too_old(
        tmp_path, "nvidia-docker | 2017/10/13 08:33:01 Error: unsupported CUDA version: driver 8.0 < image 9.0.176\n"
    )
    assert got and "9.0" in got[0]["title"], all_codes


def test_driver_0_0_is_no_driver_found_not_an_old_driver(tmp_path):
    # https://github.com/NVIDIA/nvidia-docker/issues/190 (driver 367.44 installed; the runtime read no driver at all)
    got, all_codes = _too_old(
        tmp_path, "nvidia-docker | 2016/09/04 14:43:17 Error: unsupported CUDA version: driver 0.0 < image 8.0\n"
    )
    assert not got, all_codes


def test_libnvidia_container_requirement(tmp_path):
    # https://github.com/NVIDIA/nvidia-docker/issues/1442 (maintainer: a CUDA 11 image needs a host driver >= 450)
    text = (
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container "
        "process caused: process_linux.go:459: container init caused: Running hook #0:: error running hook: exit status 1, "
        "stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update "
        "your driver to a newer version, or use an earlier cuda container: unknown.\n"
    )
    got, all_codes = _too_old(tmp_path, text)
    assert got and "11.0" in got[0]["title"], all_codes


def test_libnvidia_container_requirement_with_the_driver_shown(tmp_path):
    # https://github.com/SyneRBI/PETRIC2/issues/27 (driver 551.78 = CUDA 12.4, the image needs 12.8)
    text = (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer "
        "version, or use an earlier cuda container\n"
        "| NVIDIA-SMI 551.78                 Driver Version: 551.78         CUDA Version: 12.4     |\n"
    )
    got, all_codes = _too_old(tmp_path, text)
    assert got and "551.78" in got[0]["title"] and "12.8" in got[0]["title"], all_codes


def test_libnvidia_container_requirement_escaped_in_a_docker_error(tmp_path):
    # https://github.com/Xilinx/Vitis-AI/issues/103 (answer: install a driver >= 410.78 for CUDA 10.0)
    text = (
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:345: starting container process "
        'caused "process_linux.go:430: container init caused \\"process_linux.go:413: running prestart hook 0 caused '
        '\\\\\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: unsatisfied '
        'condition: cuda>=10.0\\\\\\\\n\\\\\\"\\"": unknown.\n'
    )
    got, all_codes = _too_old(tmp_path, text)
    assert got and "10.0" in got[0]["title"], all_codes


def test_803_with_the_compat_library_named_is_the_images_compat_libcuda(tmp_path):
    # NVIDIA's CUDA compatibility guide names the package and the directory; easydiffusion#379 names neither
    from cudadoctor.checks.drv10 import compat_named

    assert compat_named("sudo apt-get install -y cuda-compat-12-4")
    assert compat_named("export LD_LIBRARY_PATH=/usr/local/cuda/compat:$LD_LIBRARY_PATH")
    assert not compat_named("Error 804: forward compatibility was attempted on non supported HW")
    # https://github.com/easydiffusion/easydiffusion/issues/379 : 803 on a bare GTX 1070, nothing compat: not the image's
    text = (
        "/home/drink/Software/stable-diffusion-ui/stable-diffusion/env/lib/python3.8/site-packages/torch/cuda/__init__.py:82: "
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
        "calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / "
        "cuda driver combination (Triggered internally at  /opt/conda/conda-bld/pytorch_1646755903507/work/c10/cuda/"
        "CUDAFunctions.cpp:112.)\n"
    )
    assert "cuda-compat-driver-mismatch" not in codes(paste_findings(tmp_path, text))
