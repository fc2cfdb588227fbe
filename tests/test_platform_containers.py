"""A container started without GPUs is no-gpu-visible, not no-nvidia-driver (issue 21, platform class 1).

Real texts from public threads (URL beside each): the start command a paste shows (readers/containers.py)
and the error the program printed inside the container. A host-side error (nvidia-container-cli on a host
without a driver) stays no-nvidia-driver; a loader error with nothing about the machine names both.
"""

from __future__ import annotations

from typing import List, Tuple

from cudadoctor import registry
from cudadoctor.facts import Facts, new_facts
from cudadoctor.readers import containers
from cudadoctor.readers.issue import read as read_issue
from cudadoctor.report import diagnose


REG = registry.load(plugins=False)


def _codes(facts: dict) -> List[Tuple[str, str]]:
    return [(f.code, f.severity) for f in diagnose(facts, REG).findings if f.severity in ("error", "warning")]


def _paste(text: str) -> dict:
    return read_issue(text)["facts"]


def _error_only(text: str) -> dict:
    facts = new_facts(origin="file")
    facts["user_error"] = {"text": text}
    return facts


# https://github.com/ConnorJL/GPT2/issues/25: the same image run without and with --gpus.
GPT2_WITHOUT = "[root@machine ~]# docker run --rm -it -e MODE=http -p 5000:5000 deepaiorg/gpt2"
GPT2_WITH = "`docker run --gpus all --rm -it -e MODE=http -p 5000:5000 deepaiorg/gpt2`"
# https://github.com/tensorflow/tensorflow/issues/9969: devices passed by hand over continued lines.
TF_DEVICES = """mike@i  ~/code/gpu-notebook  docker run -it \\
--rm \\
--device /dev/nvidia0:/dev/nvidia0 \\
--device /dev/nvidiactl:/dev/nvidiactl \\
--device /dev/nvidia-uvm:/dev/nvidia-uvm \\
-p 8888:8888 \\
-v `pwd`:/home/user \\
tensorflow/tensorflow:latest-gpu /bin/bash"""
# https://github.com/NVIDIA/nvidia-docker/issues/24: device files passed by hand, deviceQuery in the image.
DEVICEQUERY_35 = """    ./deviceQuery Starting...
    CUDA Device Query (Runtime API) version (CUDART static linking)
    cudaGetDeviceCount returned 35
    -> CUDA driver version is insufficient for CUDA runtime version
    Result = FAIL

The host system is on 346.46, which should be sufficient. The container was started with

    docker run --device /dev/nvidia-uvm:/dev/nvidia/uvm --device /dev/nvidia0:/dev/nvidia0 --device  \\
    /dev/nvidia1:/dev/nvidia1 --device /dev/nvidia2:/dev/nvidia2 --device /dev/nvidia3:/dev/nvidia3 --device \\
    /dev/nvidiactl:/dev/nvidiactl -it nvidia/cuda:7.0-cudnn3-devel bash"""
# https://github.com/tensorflow/serving/issues/660: the server binary in a GPU image, run with plain docker.
TF_SERVING = (
    "tensorflow_model_server: error while loading shared libraries: libcuda.so.1: cannot open shared object file: "
    "No such file or directory"
)
# https://github.com/dusty-nv/jetson-containers/issues/196: docker-compose without the nvidia runtime.
JETSON_COMPOSE = """However, when using docker-compose to run the applications, I am getting errors like:
`error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory`"""
# https://github.com/AbdBarho/stable-diffusion-webui-docker/issues/348 (title): compose, torch's words.
SD_COMPOSE = 'Failed to start docker compose --profile auto up --build get error " Found no NVIDIA driver on your system."'
# https://github.com/huan/docker-wechat/issues/173: the host had no driver at all.
HOST_NO_DRIVER = (
    "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: "
    "unable to start container process: error during container init: error running hook #0: error running hook: "
    "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object "
    "file: no such file or directory: unknown."
)
# https://github.com/mks0601/I2L-MeshNet_RELEASE/issues/105: a laptop without an NVIDIA GPU, no container.
HOST_TORCH = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
    "driver from http://www.nvidia.com/Download/index.aspx"
)


def test_reader_tells_whether_the_start_command_asked_for_gpus():
    assert containers.read([GPT2_WITHOUT]) == {"kind": "docker", "line": 1, "text": GPT2_WITHOUT, "gpus_requested": False}
    assert containers.read([GPT2_WITH])["gpus_requested"] is True
    got = containers.read(TF_DEVICES.splitlines())
    # /dev/nvidia* passed by hand on continued lines: device files, but no driver libraries (no GPU request)
    assert got["gpus_requested"] is False and got["devices_only"] is True and got["line"] == 1
    got = containers.read(JETSON_COMPOSE.splitlines())
    assert got["kind"] == "docker" and got["gpus_requested"] is None  # the compose file is not shown
    assert containers.read([HOST_TORCH]) is None


def test_paste_with_docker_run_without_gpus_is_no_gpu_visible():
    facts = _paste(GPT2_WITHOUT + "\n" + TF_SERVING)
    assert Facts(facts).str("system.container") == "docker"
    codes = _codes(facts)
    assert ("no-gpu-visible", "error") in codes
    assert not any(c == "no-nvidia-driver" for c, _ in codes), codes
    f = next(f for f in diagnose(facts, REG).findings if f.code == "no-gpu-visible")
    assert "started without GPU access" in f.title and f.fix.commands[0].startswith("docker run --gpus all")


def test_compose_named_in_the_error_text_itself():
    for text in (JETSON_COMPOSE, SD_COMPOSE):
        codes = _codes(_error_only(text))
        assert ("no-gpu-visible", "error") in codes, (text, codes)
        assert not any(c == "no-nvidia-driver" for c, _ in codes), (text, codes)


def test_host_side_container_error_stays_no_nvidia_driver():
    codes = _codes(_error_only(HOST_NO_DRIVER))
    assert ("no-nvidia-driver", "error") in codes
    assert not any(c == "no-gpu-visible" for c, _ in codes), codes


def test_loader_error_alone_names_both_host_and_container():
    codes = _codes(_error_only(TF_SERVING))
    assert codes[0] == ("no-nvidia-driver", "error")
    assert ("no-gpu-visible", "warning") in codes


def test_torch_message_on_a_host_names_no_container():
    codes = _codes(_error_only(HOST_TORCH))
    assert ("no-nvidia-driver", "error") in codes
    assert not any(c == "no-gpu-visible" for c, _ in codes), codes


def test_gpus_requested_but_library_missing_points_at_capabilities():
    # The GPU flag is shown and libcuda.so.1 is still missing: the request did not bring the compute libraries.
    facts = _paste(GPT2_WITH + "\n" + TF_SERVING)
    f = next(f for f in diagnose(facts, REG).findings if f.code == "no-gpu-visible")
    assert "asked for GPUs" in f.title
    assert any("NVIDIA_DRIVER_CAPABILITIES" in c for c in f.fix.commands)


def test_insufficient_driver_in_a_container_started_without_the_runtime():
    """Without libcuda.so.1 the CUDA runtime answers 35, "driver version is insufficient": not an old driver."""
    facts = _paste(DEVICEQUERY_35)
    assert (facts["pasted"]["container"]["gpus_requested"], facts["pasted"]["container"].get("devices_only")) == (False, True)
    codes = _codes(facts)
    assert ("no-gpu-visible", "error") in codes
    assert not any(c == "driver-too-old" for c, _ in codes), codes
    f = next(f for f in diagnose(facts, REG).findings if f.code == "no-gpu-visible")
    assert "--device /dev/nvidia*" in f.fix.commands[0]
