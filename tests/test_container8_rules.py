"""Round 8, container8: a process in a container the GPU was not passed into, told from a host without a driver
by where the process runs (kb/containers.json's markers) and what the error says (a missing libcuda.so.1 in any
tool's words, CUDA's error 35 or 100, onnxruntime's device count). Real texts from public threads, none from the
blind batches; each rule is checked on texts it was not written from and on healthy container reports."""

from checkcli import codes, paste_findings, severities

from cudadoctor.readers.containers import kind_in


# --- where the process runs (kb/containers.json) ---------------------------------------------------


def test_markers_name_the_runtime_and_not_lookalikes():
    assert kind_in("Linux (GKE container)") == "kubernetes"
    assert kind_in("I have a dockerized image and I am trying to deploy pods in GKE GPU enabled nodes") == "kubernetes"
    assert kind_in("using a singularity container (handled by nextflow)") == "singularity"
    assert kind_in("singularity pull x.sif docker://nvcr.io/nvidia/l4t-pytorch:r32.5.0-pth1.7-py3") == "singularity"
    assert kind_in("root@9a6c84fb8998:/# nvidia-smi") == "docker"  # Docker's default hostname: the container ID
    assert kind_in("GPU=-1 ; hostname=65a6e914d819 ; file=/onnxruntime_src/x.cc") == "docker"
    assert kind_in("it fails when run inside the container") == "container"
    # not a container: a pod5 file, the toolkit's name, a 12-digit number, a docker.io URL
    assert kind_in("PAG97817_pass_790f137e_108.fast5.pod5") is None
    assert kind_in("sudo apt-get install nvidia-container-toolkit") is None
    assert kind_in("root@123456789012:") is None
    assert kind_in("see https://docker.io/r/x") is None


# --- CUDA's error 35 inside a container whose start is not shown -------------------------------------

#: https://github.com/rickstaa/panda-autograsp/issues/150 (the maintainer: forgot --nv)
SINGULARITY_35 = (
    "CUDA driver version is insufficient for CUDA runtime version\n"
    "If you get this error while working in the singularity container you most likely forgot to call the container "
    "using the --nv flag"
)


def test_error_35_in_a_singularity_container_names_the_missing_gpu_access_beside_the_old_driver(tmp_path):
    sev = severities(paste_findings(tmp_path, SINGULARITY_35))
    assert sev.get("no-gpu-visible") == "warning"
    assert sev.get("driver-too-old") == "error"  # the other reading stays first: the facts do not tell them apart


def test_error_35_with_a_driver_version_stated_is_not_blamed_on_the_container(tmp_path):
    # https://github.com/NVIDIA/nvidia-docker/issues/700: the host's 375.66 is too old for the image's CUDA
    text = (
        "NVIDIA-SMI 375.66                 Driver Version: 375.66\n"
        "docker container: Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient for "
        "CUDA runtime version"
    )
    assert "no-gpu-visible" not in codes(paste_findings(tmp_path, text))


def test_error_35_on_a_host_is_not_a_container_finding(tmp_path):
    # https://github.com/NVIDIA/hpc-container-maker/issues/239's error line without its container: a host with an old driver
    text = "ERROR: CUDA driver version is insufficient for CUDA runtime version in /var/tmp/relion/src/ml_optimiser.cpp at line 1143 (error-code 35)"
    assert "no-gpu-visible" not in codes(paste_findings(tmp_path, text))


# --- a missing libcuda.so.1 in any tool's words -----------------------------------------------------

#: https://github.com/apptainer/singularity/issues/5337 (pycuda in a Singularity container)
PYCUDA_SINGULARITY = (
    "### Version of Singularity: 3.3.0 on Ubuntu 16.04LTS\n"
    '  File "/usr/local/lib/python3.6/dist-packages/pycuda-2019.1.2-py3.6-linux-x86_64.egg/pycuda/driver.py", line 62, in <module>\n'
    "    from pycuda._driver import *  # noqa\n"
    "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n"
)


def test_pythons_importerror_for_libcuda_in_a_singularity_container_is_the_gpu_not_passed_in(tmp_path):
    found = paste_findings(tmp_path, PYCUDA_SINGULARITY)
    assert severities(found).get("no-gpu-visible") == "error"
    assert "no-nvidia-driver" not in codes(found)
    fix = " ".join(next(f for f in found if f["code"] == "no-gpu-visible")["fix"]["commands"])
    assert "--nv" in fix


def test_a_missing_libcuda_with_nothing_known_of_the_machine_names_both_readings(tmp_path):
    # TensorFlow's dso_loader wording (https://github.com/tensorflow/tensorflow/issues/4267): host or container untold
    text = (
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'libcuda.so.1'; "
        "dlerror: libcuda.so.1: cannot open shared object file: No such file or directory"
    )
    sev = severities(paste_findings(tmp_path, text))
    assert sev.get("no-nvidia-driver") == "error"
    assert sev.get("no-gpu-visible") == "warning"


# --- onnxruntime's device count ------------------------------------------------------------------------

#: https://github.com/microsoft/onnxruntime/issues/13753 (GKE pod without an nvidia.com/gpu limit)
ORT_GKE = (
    'Issue on GKE: Parse Failed to parse provider option "device_id"\n'
    "I have a dockerized image and I am trying to deploy pods in GKE GPU enabled nodes (NVIDIA T4)\n"
    ">>> session = ort.InferenceSession(model_path, providers=providers)\n"
    '[ONNXRuntimeError] : 1 : FAIL : provider_options_utils.h:146 Parse Failed to parse provider option "device_id": \n'
)


def test_onnxruntime_device_id_parse_failure_in_a_pod_names_the_kubernetes_gpu_limit(tmp_path):
    found = paste_findings(tmp_path, ORT_GKE)
    assert "no-gpu-visible" in codes(found)
    fix = " ".join(next(f for f in found if f["code"] == "no-gpu-visible")["fix"]["commands"])
    assert "nvidia.com/gpu" in fix


# --- healthy container reports stay healthy ---------------------------------------------------------


def test_a_healthy_nvidia_smi_inside_a_container_gets_no_error(tmp_path):
    # nvidia-docker run --rm -ti nvidia/cuda bash; nvidia-smi (https://github.com/NVIDIA/nvidia-docker/issues/317's first lines)
    text = (
        "host-pc:# nvidia-docker run --rm -ti nvidia/cuda bash\n"
        "root@9a6c84fb8998:/# nvidia-smi\n"
        "| NVIDIA-SMI 367.35                 Driver Version: 367.35                    |\n"
        "|   0  TITAN X             Off  | 0000:02:00.0     Off |                  N/A |\n"
        "| 23%   41C    P8    16W / 250W |      0MiB / 12188MiB |      0%      Default |\n"
    )
    assert not [f for f in paste_findings(tmp_path, text) if f["severity"] == "error"]


# --- no nvidia-smi inside a container -------------------------------------------------------------------

#: https://github.com/mmartial/ComfyUI-Nvidia-Docker/issues/57 (the maintainer: add --gpus all)
COMFY_NO_SMI = (
    "!! ERROR: nvidia-smi not found\n"
    "nvidia-smi runs successfully outside of docker and in other docker containers, showing my 5090 and CUDA 12.8\n"
    "-- Base image details (from /etc/image_base.txt):\n"
    "DOCKER_FROM: nvidia/cuda:12.8.1-cudnn-devel-ubuntu24.04\n"
)
#: https://github.com/canonical/docker-snap/issues/184 (--runtime=nvidia given; the snap's PATH was the cause)
SNAP_RUNTIME_NO_SMI = (
    '$ docker run --env PATH="${PATH}:/var/lib/snapd/hostfs/usr/bin" --rm --runtime=nvidia ubuntu nvidia-smi\n'
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
    'create failed: runc create failed: unable to start container process: exec: "nvidia-smi": executable file not '
    "found in $PATH: unknown.\n"
)


def test_no_nvidia_smi_inside_a_docker_container_is_the_gpu_not_passed_in(tmp_path):
    found = paste_findings(tmp_path, COMFY_NO_SMI)
    assert severities(found).get("no-gpu-visible") == "error"
    assert "no-nvidia-driver" not in codes(found)
    fix = " ".join(next(f for f in found if f["code"] == "no-gpu-visible")["fix"]["commands"])
    assert "--gpus all" in fix


def test_no_nvidia_smi_with_the_nvidia_runtime_asked_for_does_not_say_started_without_gpus(tmp_path):
    found = paste_findings(tmp_path, SNAP_RUNTIME_NO_SMI)
    titles = [f["title"] for f in found if f["code"] == "no-gpu-visible"]
    assert titles and all("started without" not in t for t in titles)
