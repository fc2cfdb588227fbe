"""Failure classes recognised from what the user pasted: each a code, its signatures (kb/errors/error_signatures.json)
and the exact fix. The error-text engine finds them; these checks turn a match into a finding with commands.

Codes: shm-exhausted, device-ordinal-invalid, container-toolkit-missing, host-compiler-unsupported,
toolkit-arch-unsupported, nvidia-uvm-stale, mkl-incompatible, cuda-home-not-set, open-kernel-module-unsupported,
gpu-init-failed, gpu-needs-legacy-driver, cuda-library-missing, companion-cpu-only-build,
windows-pagefile-too-small.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, Iterator, Optional, Tuple

from cudadoctor import kb
from cudadoctor.errortext import MissingLibrary, missing_libraries, short_name, wanted_cuda
from cudadoctor.facts import Facts
from cudadoctor.interpret import driver_version, gpus, torch_cuda
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, search, text_finding, text_of
from . import _containers
from .builds import host_compiler_stated
from .companions import (
    cpu_build_alone,
    TF_WINDOWS_DOCS,
    companion_library_hypothesis,
    cpu_build_of,
    cpu_build_severity,
    cpu_gpu_twins,
    tensorflow_windows_cpu_only,
)
from .plat10 import uvm_not_loaded_shown

SHM_EXHAUSTED = Code(
    code="shm-exhausted",
    title="Out of shared memory (/dev/shm) for DataLoader workers or NCCL",
    area="system",
    severity="error",
    explanation={
        "what": 'DataLoader workers die with a bus error ("out of shared memory"), or NCCL cannot create its segment in '
        '/dev/shm ("No space left on device").',
        "why": "Worker processes pass batches, and NCCL passes data between local ranks, through /dev/shm. Docker gives a "
        "container only 64 MB of it by default, far too little.",
        "confirm": "`df -h /dev/shm` inside the container.",
        "fix": "Give the container more shared memory (`docker run --shm-size=16g` or `--ipc=host`; in Kubernetes an "
        "emptyDir with medium Memory mounted at /dev/shm), or use fewer DataLoader workers.",
    },
    links=("https://github.com/fastai/docker-containers/issues/21", "https://github.com/bytedance/Protenix/issues/2"),
)
DEVICE_ORDINAL_INVALID = Code(
    code="device-ordinal-invalid",
    title="The program asks for a GPU index this process cannot see",
    area="gpu",
    severity="error",
    explanation={
        "what": 'CUDA says "invalid device ordinal" (error 101): `cuda:N` or `set_device(N)` names an index at or past '
        "torch.cuda.device_count().",
        "why": "CUDA numbers only the devices CUDA_VISIBLE_DEVICES exposes, from 0: with CUDA_VISIBLE_DEVICES=2 the one "
        "visible GPU is cuda:0. Scripts written for an 8-GPU machine fail on a smaller one.",
        "confirm": '`python -c "import torch; print(torch.cuda.device_count())"`, `echo $CUDA_VISIBLE_DEVICES`, `nvidia-smi -L`.',
        "fix": "Use an index below device_count() (often cuda:0 after setting CUDA_VISIBLE_DEVICES), or expose the GPU you mean.",
    },
    links=("https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",),
)
CONTAINER_TOOLKIT_MISSING = Code(
    code="container-toolkit-missing",
    title="Docker is asked for GPUs but has no NVIDIA container runtime",
    area="system",
    severity="error",
    explanation={
        "what": '`docker run --gpus ...` fails with "could not select device driver \\"\\" with capabilities: [[gpu]]".',
        "why": "Docker hands GPU requests to the NVIDIA Container Toolkit; when it is not installed or not registered with "
        "the Docker daemon, no driver can satisfy the request.",
        "confirm": "`nvidia-ctk --version`; `docker info | grep -i runtimes` lacks nvidia; host `nvidia-smi` works.",
        "fix": "Install the NVIDIA Container Toolkit, register it with Docker and restart the daemon.",
    },
    links=("https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",),
)
HOST_COMPILER_UNSUPPORTED = Code(
    code="host-compiler-unsupported",
    title="nvcc refuses the host C++ compiler version",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Building a CUDA extension stops at `#error -- unsupported GNU version! gcc versions later than N are not "
        "supported!` (or the MSVC equivalent).",
        "why": "Each CUDA toolkit supports host compilers up to a version; a newer system gcc is refused.",
        "confirm": "`gcc --version` and `nvcc --version`; NVIDIA's installation guide lists the supported gcc per CUDA.",
        "fix": "Point nvcc at a supported compiler (`export CC=gcc-N CXX=g++-N`, or `NVCC_PREPEND_FLAGS='-ccbin g++-N'`), or "
        "use a newer CUDA toolkit.",
    },
    links=("https://docs.nvidia.com/cuda/cuda-installation-guide-linux/#host-compiler-support-policy",),
)
TOOLKIT_ARCH_UNSUPPORTED = Code(
    code="toolkit-arch-unsupported",
    title="The local nvcc cannot compile for the requested GPU architecture",
    area="toolkit",
    severity="error",
    explanation={
        "what": "`nvcc fatal : Unsupported gpu architecture 'compute_XX'` while building an extension.",
        "why": "The architecture list (TORCH_CUDA_ARCH_LIST, the project's -gencode flags) names an architecture this nvcc "
        "does not know: too new for an old toolkit, or removed from a new one (compute_35 in CUDA 12).",
        "confirm": "`nvcc --list-gpu-arch`; `echo $TORCH_CUDA_ARCH_LIST`.",
        "fix": "Set TORCH_CUDA_ARCH_LIST to architectures this nvcc supports (your GPU's at least), or install a toolkit that "
        "supports the one you need.",
    },
    links=("https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list",),
)
NVIDIA_UVM_STALE = Code(
    code="nvidia-uvm-stale",
    title='CUDA fails with "unknown error" until the nvidia_uvm module is reloaded',
    area="driver",
    severity="error",
    explanation={
        "what": 'CUDA initialisation fails with CUDA_ERROR_UNKNOWN (999) / "CUDA unknown error" while nvidia-smi works, '
        "typically after the machine resumed from suspend.",
        "why": "The nvidia_uvm kernel module, which CUDA needs, is left in a bad state by suspend/resume; reloading it "
        "restores CUDA without a reboot.",
        "confirm": '`nvidia-smi` works; `journalctl -b | grep -i suspend` shows a resume; `python -c "import torch; torch.zeros(1).cuda()"` fails.',
        "fix": "`sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm` (or reboot); enable the nvidia-suspend/-resume services "
        "to keep it from recurring.",
    },
    links=("https://github.com/pytorch/pytorch/issues/88639", "https://github.com/NixOS/nixpkgs/issues/348769"),
)
MKL_INCOMPATIBLE = Code(
    code="mkl-incompatible",
    title="torch cannot load because the installed MKL lacks a symbol it needs",
    area="libraries",
    severity="error",
    explanation={
        "what": "`import torch` fails with `libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent`.",
        "why": "MKL 2024.1 dropped the iJIT symbols that torch builds from conda (and some pip setups) link against; a "
        "newer MKL pulled into the environment breaks them.",
        "confirm": "`conda list mkl` or `python -m pip show mkl` shows 2024.1 or newer.",
        "fix": "Pin MKL below 2024.1 (`conda install mkl=2024.0`), or install torch from pip wheels, which bundle what they need.",
    },
    links=("https://github.com/intel/ipex-llm/issues/12141", "https://github.com/yoraish/mmd/issues/3"),
)
CUDA_HOME_NOT_SET = Code(
    code="cuda-home-not-set",
    title="An extension build cannot find a CUDA toolkit (CUDA_HOME)",
    area="toolkit",
    severity="error",
    explanation={
        "what": 'Building a CUDA extension fails with "CUDA_HOME environment variable is not set. Please set it to your '
        'CUDA install root."',
        "why": "torch wheels carry the CUDA runtime but not nvcc; extensions need a full toolkit, found through CUDA_HOME or "
        "nvcc on PATH.",
        "confirm": '`which nvcc`; `echo $CUDA_HOME`; `python -c "import torch; print(torch.version.cuda)"`.',
        "fix": "Install a CUDA toolkit of torch's CUDA major version and export CUDA_HOME to it (or install nvcc from conda: "
        "`conda install -c nvidia cuda-nvcc`).",
    },
    links=("https://pytorch.org/docs/stable/cpp_extension.html",),
)
OPEN_KERNEL_MODULE_UNSUPPORTED = Code(
    code="open-kernel-module-unsupported",
    title="The open NVIDIA kernel module is loaded on a GPU it does not support",
    area="driver",
    severity="error",
    explanation={
        "what": 'The kernel log says the GPU "is not supported by open nvidia.ko because it does not include the required '
        'GPU System Processor (GSP)": a pre-Turing GPU (Maxwell, Pascal, Volta) with the open flavour of the driver.',
        "why": "The open kernel modules need the GSP that Turing and later GPUs have; older GPUs run only with the "
        "proprietary flavour. nvidia-smi then finds no devices.",
        "confirm": '`cat /proc/driver/nvidia/version` says "Open Kernel Module"; `lspci -nn -d 10de:` names the GPU.',
        "fix": "Install the proprietary flavour of the same driver branch (e.g. `nvidia-driver-<branch>` instead of "
        "`nvidia-driver-<branch>-open`), then reboot.",
    },
    links=("https://github.com/NVIDIA/open-gpu-kernel-modules",),
)

GPU_INIT_FAILED = Code(
    code="gpu-init-failed",
    title="The NVIDIA kernel module is loaded but cannot initialise the GPU (RmInitAdapter failed)",
    area="gpu",
    severity="error",
    explanation={
        "what": 'The kernel log says "NVRM: GPU 0000:xx:00.0: RmInitAdapter failed! (0x..:0x..:NNNN)" and '
        '"rm_init_adapter failed, device minor number N": the driver is loaded and sees the GPU on the PCI bus, '
        'but bringing it up failed, so nvidia-smi says "No devices were found" and CUDA finds no device.',
        "why": "The driver could not start the GPU: its firmware (GSP) failed to boot, the card lacks power or sits in "
        "a slot or riser it cannot train on, the firmware setup hides its memory window (Above 4G decoding / "
        "Resizable BAR off, or a VM passthrough without it), the driver branch does not support this GPU, or the "
        "GPU is failing. The lines just before RmInitAdapter in the kernel log name which step failed.",
        "confirm": "`sudo dmesg | grep -i -E 'nvrm|xid'` (the lines before RmInitAdapter: GSP, GFW_BOOT, BAR, "
        "power); `lspci -nn -d 10de:` (the GPU is on the bus); `nvidia-smi` says No devices were found.",
        "fix": "Reseat the card and connect every power cable, enable Above 4G decoding (and Resizable BAR) in the "
        "firmware setup, install a driver branch that supports the GPU (for a GSP firmware error also try the other "
        "kernel-module flavour, open or proprietary), then cold-boot. If it persists on another slot or machine, "
        "the GPU is failing.",
    },
    links=(
        "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/789",
        "https://docs.nvidia.com/deploy/xid-errors/",
    ),
)

GPU_NEEDS_LEGACY_DRIVER = Code(
    code="gpu-needs-legacy-driver",
    title="The installed NVIDIA driver no longer supports this GPU: it needs a legacy driver branch",
    area="driver",
    severity="error",
    explanation={
        "what": 'The kernel log says "The NVIDIA <GPU> GPU installed in this system is supported through the NVIDIA '
        '<branch>.xx Legacy drivers ... The <version> NVIDIA driver will ignore this GPU", usually followed by '
        '"NVRM: No NVIDIA GPU found": nvidia-smi cannot communicate with the driver and CUDA sees no device.',
        "why": "Each NVIDIA driver branch drops older GPU generations, which stay supported only by a legacy branch "
        "(Fermi: 390.xx, Kepler: 470.xx, Maxwell/Pascal/Volta: 580.xx). A distribution or driver upgrade that moves "
        "to a newer branch silently leaves such a GPU without a driver.",
        "confirm": "`sudo dmesg | grep -A4 'Legacy drivers'` names the GPU and the branch; `nvidia-smi` fails; "
        "`lspci -nn -d 10de:` shows the GPU.",
        "fix": "Install the legacy branch the message names (e.g. `nvidia-driver-470` on Ubuntu, "
        "`nvidia-470xx-dkms` on Arch, `legacy_470` on NixOS) and reboot. The legacy branch caps the CUDA version "
        "the driver offers, so pick a torch build whose CUDA that driver supports (and whose architecture list "
        "still includes the GPU).",
    },
    links=(
        "https://www.nvidia.com/en-us/drivers/unix/legacy-gpu/",
        "https://github.com/NixOS/nixos-hardware/issues/1828",
    ),
)

CUDA_LIBRARY_MISSING = Code(
    code="cuda-library-missing",
    title="A package cannot find a CUDA library of the CUDA version it was built for (libcublas, libcudart, ...)",
    area="libraries",
    severity="error",
    explanation={
        "what": "A package that ships its own CUDA code (onnxruntime-gpu, CTranslate2/faster-whisper, bitsandbytes, "
        '...) cannot load a CUDA library it links against: "Library libcublas.so.12 is not found or cannot be '
        'loaded", "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot '
        'open shared object file", "Could not locate cublasLt64_12.dll".',
        "why": "Such packages are built for one CUDA major version and load that version's libraries at run time "
        "(the .so.N / 64_N.dll number is the major). They are not installed, or installed only for another major "
        "(a system CUDA 11 for a CUDA 12 build), or installed as pip wheels (nvidia-cublas-cu12, ...) whose "
        "directories the loader does not search. torch's own wheels bring these libraries for torch only: "
        "another package finds them only when torch was imported first, or when they are on the loader path.",
        "confirm": "The library name in the message (its number is the CUDA major the package wants); "
        "`ldconfig -p | grep <library>`; `pip list | grep -i -E 'nvidia-|onnxruntime|ctranslate2'`.",
        "fix": "Install the pip wheel of that library for that CUDA major (e.g. `pip install nvidia-cublas-cu12` "
        "for libcublas.so.12) and put its lib directory on LD_LIBRARY_PATH (or import torch before the package), "
        "or install the build of the package made for the CUDA you have (e.g. onnxruntime-gpu for CUDA 12, "
        "CTranslate2 3.x for CUDA 11).",
    },
    links=(
        "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements",
        "https://github.com/SYSTRAN/faster-whisper#gpu",
        "https://github.com/microsoft/onnxruntime/issues/21684",
    ),
)

COMPANION_CPU_ONLY_BUILD = Code(
    code="companion-cpu-only-build",
    title="A GPU library used beside torch (DGL, jaxlib, onnxruntime, bitsandbytes, llama.cpp) is its CPU-only build",
    area="packages",
    severity="error",
    explanation={
        "what": "A library that has separate CPU and CUDA builds was installed in its CPU-only build, so it refuses "
        'the GPU or falls back to the CPU: DGL says "Device API cuda is not enabled. Please install the cuda '
        'version of dgl", JAX says "An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not '
        'installed" (older: "Could not find registered platform with name: \\"cuda\\"", "No GPU/TPU found, falling '
        "back to CPU\"), onnxruntime lists no CUDAExecutionProvider (\"Specified provider 'CUDAExecutionProvider' is "
        'not in available provider names"), bitsandbytes loads libbitsandbytes_cpu ("CUDA Setup failed despite GPU '
        'being available"), llama.cpp says "not compiled with GPU offload support"; TensorFlow 2.11 and later on native Windows (not WSL2) '
        "lists no GPU at all. torch itself may well be a CUDA build.",
        "why": "`pip install dgl`, `pip install jax` and `pip install onnxruntime` install the CPU builds; the CUDA "
        "builds come from the project's own wheel index, extra or package (dgl: the -cuXXX wheels from data.dgl.ai; "
        "jax: `jax[cuda12]`; onnxruntime-gpu, which the CPU package shadows when both are installed, since both "
        "install the module onnxruntime) and must match the CUDA in use. bitsandbytes before 0.43 had no Windows CUDA "
        "build; llama-cpp-python compiles llama.cpp for the CPU unless CMAKE_ARGS asks for CUDA. TensorFlow's Windows "
        'wheels are CPU builds from 2.11 on ("TensorFlow 2.10 was the last TensorFlow release that supported GPU on '
        'native-Windows"): its GPU build runs in WSL2.',
        "confirm": "`pip list | grep -i -E 'dgl|jax|onnxruntime|bitsandbytes|llama'` (a CPU build has no cuXXX / cuda / "
        "-gpu in its name or extra; onnxruntime beside onnxruntime-gpu); "
        '`python -c "import onnxruntime as o; print(o.get_available_providers())"`; '
        '`python -c "import jax; print(jax.devices())"` lists only CpuDevice; `python -m bitsandbytes`.',
        "fix": "Uninstall the CPU build and install the library's CUDA build for your CUDA version: DGL from its "
        "wheel index (e.g. `pip install dgl -f https://data.dgl.ai/wheels/torch-2.3/cu121/repo.html`), JAX with "
        '`pip install -U "jax[cuda12]"`, `pip uninstall onnxruntime onnxruntime-gpu` then `pip install '
        'onnxruntime-gpu`, `pip install -U bitsandbytes`, `CMAKE_ARGS="-DGGML_CUDA=on" pip install --force-reinstall '
        "--no-cache-dir llama-cpp-python`.",
    },
    links=(
        "https://www.dgl.ai/pages/start.html",
        "https://docs.jax.dev/en/latest/installation.html#nvidia-gpu",
        "https://www.tensorflow.org/install/pip#windows-native",
        "https://github.com/dmlc/dgl/issues/5427",
        "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html",
        "https://github.com/abetlen/llama-cpp-python#installation-configuration",
    ),
)

WINDOWS_PAGEFILE_TOO_SMALL = Code(
    code="windows-pagefile-too-small",
    title="Windows cannot load torch's CUDA DLLs: the paging file is too small (WinError 1455)",
    area="system",
    severity="error",
    explanation={
        "what": 'Importing torch (often in each DataLoader worker) fails with "OSError: [WinError 1455] The paging '
        'file is too small for this operation to complete. Error loading ...\\torch\\lib\\<cudnn/cublas/caffe2>.dll".',
        "why": "Windows commits virtual memory for every loaded DLL; torch's CUDA DLLs (cuDNN, cuBLAS, ...) reserve "
        "gigabytes. With a small or fixed paging file, and with several processes each loading them (DataLoader "
        "workers, multiprocessing), the commit limit is reached and Windows refuses to map the next DLL. Nothing is "
        "missing or mismatched.",
        "confirm": "The message says WinError 1455 (any language); System Properties > Advanced > Performance > "
        "Virtual memory shows the paging file size; fewer workers (`num_workers=0`) makes it go away.",
        "fix": "Let Windows manage the paging file size (or set a larger one) on a drive with free space and "
        "restart; use fewer DataLoader workers or processes; close other memory-hungry programs.",
    },
    links=(
        "https://learn.microsoft.com/en-us/troubleshoot/windows-client/performance/introduction-to-the-page-file",
        "https://github.com/pytorch/pytorch/issues/59904",
    ),
)


#: NCCL's own words for a failed network call (its "Last error:" line, NCCL_DEBUG's NET/ and socket lines):
#: NVIDIA/nccl#111 ("Call to connect failed : Connection refused"), NVIDIA/nccl-tests#166 ("socketStartConnect: ...
#: failed"), rwth-i6/returnn#1466 ("ncclSystemError: Cannot assign requested address").
_NCCL_NETWORK = r"\bsocket[A-Z]\w*:[^\n]{0,80}(?:fail|refused|abort|reset|timed out|closed)|Call to (?:connect|accept|bind|recv|send) failed|Connection (?:refused|reset|timed out)|Cannot assign requested address|NET/(?:IB|Socket)[^\n]{0,80}(?:fail|error)"


@check(SHM_EXHAUSTED)
def shm_exhausted(fx: Facts) -> Iterator[Finding]:
    from .platform2 import DEV_SHM_PERMISSION_DENIED

    if error_match(fx, DEV_SHM_PERMISSION_DENIED):
        return  # /dev/shm refused, not full: dev-shm-permission-denied (platform2.py)
    if not error_match(fx, SHM_EXHAUSTED):
        enospc = _enospc_in_shared_memory(fx)
        if enospc:
            yield enospc
            return
        yield from _small_container_shm(fx)
        return
    kube = fx.str("system.container") == "kubernetes"
    cmds = [
        "df -h /dev/shm  # inside the container",
        "# Kubernetes: volumes: [{name: dshm, emptyDir: {medium: Memory}}], mounted at /dev/shm"
        if kube
        else "docker run --shm-size=16g ...  # or --ipc=host",
        "# or fewer workers: DataLoader(..., num_workers=0)",
    ]
    nccl_only = re.search(r"ncclSystemError|unhandled system error", fx.user_error() or "") and not re.search(
        r"shared memory|/dev/shm|posix_fallocate|shm_open", fx.user_error() or "", re.I
    )
    if nccl_only and re.search(_NCCL_NETWORK, fx.user_error() or "", re.I):
        return  # NCCL names a failed socket / network call ("Last error:", NCCL_DEBUG lines): not /dev/shm
    yield from text_finding(
        SHM_EXHAUSTED,
        fx,
        "NCCL's system call failed: in a container that is most often /dev/shm too small (64 MB by default)"
        if nccl_only
        else "Out of shared memory in /dev/shm (DataLoader workers / NCCL)",
        ["NCCL_DEBUG=INFO <your command>  # names the call that failed", *cmds] if nccl_only else cmds,
        "Workers and NCCL exchange data through /dev/shm; containers get 64 MB by default.",
        severity="warning" if nccl_only else None,  # the NCCL message alone does not name the call
    )


#: Docker's default /dev/shm for a container (docker run --shm-size: "Size of /dev/shm ... default 64MB").
_DOCKER_DEFAULT_SHM = 64 * 1024 * 1024


#: ENOSPC, in Python's and C's words.
_ENOSPC = r"\[Errno 28\] No space left on device|\bNo space left on device\b"
#: Where ENOSPC comes from shared memory rather than a disk (session 23, b156: Megatron-LM in an NGC container started
#: without --shm-size; a TorchTitan pod without a /dev/shm volume failing at torch.distributed.broadcast): a collective
#: or DataLoader worker in the text, or a `docker run` of a GPU container with neither --shm-size nor --ipc=host.
_SHM_USERS = re.compile(
    r"torch\.distributed|\b(?:broadcast|all_?reduce|all_?gather|init_process_group)\b|\bNCCL\b|DataLoader|num_workers|"
    r"torch\.multiprocessing|\bworker\b",
    re.I,
)
_DOCKER_RUN_GPUS = re.compile(r"\bdocker\s+run\b[^\n]*--gpus\b[^\n]*")


def _enospc_in_shared_memory(fx: Facts) -> Optional[Finding]:
    """A likely /dev/shm cause for ENOSPC: the text shows shared-memory users or a GPU container started with
    Docker's 64 MB default; a write of a file (a checkpoint, pip's cache) stays a disk's problem."""
    said = search(fx, _ENOSPC)
    if not said:
        return None
    text = text_of(fx)
    if re.search(r"\b(?:pip|wheel|checkpoint|torch\.save|save_pretrained|\.cache|tmp/pip|write|download)\w*", said[1], re.I):
        return None  # the failing call writes a file: the disk is full
    users = _SHM_USERS.search(text)
    started = (fx.dict("pasted.container") or {}).get("text")  # the paste reader keeps the start command apart
    run = _DOCKER_RUN_GPUS.search(text) or _DOCKER_RUN_GPUS.search(str(started or ""))
    default_shm = run and not re.search(r"--shm-size|--ipc[= ]host", run.group(0))
    if not (users or default_shm):
        return None
    evidence = {said[0]: said[1]}
    if default_shm and run:
        evidence["container started with Docker's 64 MB /dev/shm"] = run.group(0)[:200]
    elif users:
        evidence["shared-memory user"] = users.group(0)
    kube = fx.str("system.container") == "kubernetes" or re.search(r"\bkubernetes\b|\bk8s\b|\bpods?\b", text, re.I)
    return SHM_EXHAUSTED.finding(
        title="Likely: 'No space left on device' is /dev/shm filling up (NCCL and DataLoader workers share memory "
        "there; containers get 64 MB), not the disk",
        evidence=evidence,
        fix=Fix(
            (
                "df -h /dev/shm  # inside the container: 64M is Docker's default",
                "# Kubernetes: volumes: [{name: dshm, emptyDir: {medium: Memory}}], mounted at /dev/shm"
                if kube
                else "docker run --gpus all --ipc=host ...  # or --shm-size=16g; Compose: shm_size: 16gb",
                "df -h  # if /dev/shm has room, the disk itself is full",
            ),
            "NCCL's shared-memory transport and torch.multiprocessing allocate in /dev/shm; ENOSPC there reads as a full disk.",
        ),
        severity="warning",
    )


def _small_container_shm(fx: Facts) -> Iterator[Finding]:
    """Probed inside a container whose /dev/shm is Docker's 64 MB default: nothing failed yet, but DataLoader
    workers and NCCL between this container's GPUs will run out (PyTorch's Docker notes). An info."""
    shm = fx.dict("system.dev_shm") or {}
    size = shm.get("size_bytes")
    where = fx.str("system.container")
    if not (where and isinstance(size, int) and 0 < size <= _DOCKER_DEFAULT_SHM):
        return
    yield SHM_EXHAUSTED.finding(
        title=f"This {where} container's /dev/shm is {size // (1024 * 1024)} MB (Docker's default): "
        "DataLoader workers and NCCL between its GPUs need more",
        evidence={"system.dev_shm.size_bytes": size, "system.container": where},
        fix=Fix(
            ("docker run --shm-size=16g ...  # or --ipc=host; Compose: shm_size: 16gb", "df -h /dev/shm  # check"),
            "torch.multiprocessing and NCCL exchange data through /dev/shm; Docker gives a container 64 MB of it.",
        ),
        severity="info",
    )


@check(DEVICE_ORDINAL_INVALID)
def device_ordinal_invalid(fx: Facts) -> Iterator[Finding]:
    if fx.int("torch.device_count") == 0:
        return  # no GPU at all: no-gpu-visible
    n = fx.int("torch.device_count")
    cmds = [
        'python -c "import torch; print(torch.cuda.device_count())"  # valid indices are 0 .. count-1',
        "echo $CUDA_VISIBLE_DEVICES; nvidia-smi -L",
        "# use cuda:0 when CUDA_VISIBLE_DEVICES selects one GPU (CUDA renumbers the visible GPUs from 0)",
    ]
    yield from text_finding(
        DEVICE_ORDINAL_INVALID,
        fx,
        "The program asks for a GPU index past the visible GPUs" + (f" (this process sees {n})" if n else ""),
        cmds,
        "CUDA numbers only the devices this process may see, from 0.",
    )


#: NVIDIA's Kubernetes device plugin without NVML in its container (kb/errors/b22.json): the node's default runtime.
_DEVICE_PLUGIN_NO_NVML = re.compile(
    r"Failed to (?:start|initialize) nvml(?: with error)?\s*:\s*could not load NVML library", re.I
)


#: The entrypoint banner of NVIDIA's CUDA/NGC images (kb/errors/cont6.json): the container has no driver, whatever the cause.
_IMAGE_BANNER = re.compile(r"NVIDIA Driver was not detected|to start this container", re.I)


@check(CONTAINER_TOOLKIT_MISSING)
def container_toolkit_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CONTAINER_TOOLKIT_MISSING)
    if said and _DEVICE_PLUGIN_NO_NVML.search(said[1]):
        yield from text_finding(
            CONTAINER_TOOLKIT_MISSING,
            fx,
            "The NVIDIA device plugin's container got no driver libraries (NVML): the container runtime that starts it "
            "is not the nvidia runtime (the node's default)",
            [
                "nvidia-smi  # on the node: the driver works",
                "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default  # or --runtime=docker; "
                "needs nvidia-container-toolkit",
                "sudo systemctl restart containerd  # (or docker), then delete the device plugin pod so it restarts",
            ],
            "The device plugin loads NVML inside its own container; only the nvidia runtime mounts the driver's "
            "libnvidia-ml.so.1 into it, and the plugin's pod uses the node's default runtime.",
        )
        return
    if said and _IMAGE_BANNER.search(said[1]) and _containers.started_without_gpus(fx):
        # NVIDIA's banner after a start shown without any GPU option: no-gpu-visible's container case is the cause;
        # whether the host has the toolkit that --gpus needs is not shown, so this is the next step, as a warning.
        yield from text_finding(
            CONTAINER_TOOLKIT_MISSING,
            fx,
            'If `docker run --gpus all` then fails ("could not select device driver"), the host lacks the NVIDIA '
            "Container Toolkit",
            [
                "docker run --rm --gpus all ubuntu nvidia-smi  # lists the GPUs when the toolkit is installed",
                "sudo apt-get install -y nvidia-container-toolkit  # otherwise, after adding NVIDIA's repository (see the link)",
                "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
            ],
            "Docker's --gpus goes through the NVIDIA Container Toolkit; the pasted start asked for no GPUs, so whether "
            "the toolkit is there is not shown.",
            severity="warning",
        )
        return
    if said and _IMAGE_BANNER.search(said[1]):
        yield from text_finding(
            CONTAINER_TOOLKIT_MISSING,
            fx,
            "The container has no NVIDIA driver (the image's own banner): it was started without GPU access, with no "
            "--gpus option or without the NVIDIA Container Toolkit on the host",
            [
                "docker run --rm --gpus all <image> nvidia-smi  # start it asking for the GPUs (Compose: a device reservation)",
                'sudo apt-get install -y nvidia-container-toolkit  # if --gpus fails with "could not select device driver"',
                "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
            ],
            "NVIDIA's images print this banner when neither libcuda.so.1 nor a driver device node is inside: the "
            "container runtime mounts them only for a start that asks for GPUs, through the NVIDIA Container Toolkit.",
        )
        return
    cmds = [
        "nvidia-smi  # on the host: the driver works",
        "sudo apt-get install -y nvidia-container-toolkit  # after adding NVIDIA's repository (see the link)",
        "sudo nvidia-ctk runtime configure --runtime=docker",
        "sudo systemctl restart docker",
        "docker run --rm --gpus all ubuntu nvidia-smi  # check",
    ]
    yield from text_finding(
        CONTAINER_TOOLKIT_MISSING,
        fx,
        "Docker has no NVIDIA runtime to give the container GPUs (NVIDIA Container Toolkit missing)",
        cmds,
        "Docker's --gpus goes through the NVIDIA Container Toolkit; it must be installed and registered.",
    )


#: nvcc failing on the host's own headers rather than refusing the compiler by version (kb/errors/b26.json): (pattern in
#: the matched line, title, commands, why). gcc 11's std_function.h with CUDA 11.5 (Ubuntu 22.04's pairing), gcc 6's
#: <tuple> with CUDA 8; glibc 2.23's string.h with CUDA 7.5 (fixed in CUDA 8; a define avoids it).
_HEADER_CLASHES: Tuple[Tuple[str, str, Tuple[str, ...], str], ...] = (
    (
        r"parameter packs not expanded",
        "nvcc cannot compile this gcc's C++ headers (parameter packs not expanded in {header}): build with an older gcc "
        "as nvcc's host compiler, or a newer CUDA toolkit",
        (
            "nvcc --version; gcc --version  # e.g. CUDA 11.5 with gcc 11 (Ubuntu 22.04's packages)",
            "sudo apt-get install gcc-10 g++-10",
            "export CC=gcc-10 CXX=g++-10 NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-10'  # then rebuild",
            "# or install a newer CUDA toolkit (12.x) whose nvcc compiles these headers",
        ),
        "nvcc parses the host compiler's standard headers; this nvcc cannot parse these.",
    ),
    (
        r"memcpy",
        "This CUDA (7.5 or older) does not support this system's glibc headers (string.h's memcpy): add "
        "-D_FORCE_INLINES to nvcc's flags, or use CUDA 8 or newer",
        (
            "nvcc --version  # 7.5 or older",
            'NVCC_FLAGS="$NVCC_FLAGS -D_FORCE_INLINES"  # Makefile; CMake: set(CUDA_NVCC_FLAGS "${CUDA_NVCC_FLAGS} -D_FORCE_INLINES")',
            "# or install CUDA 8 or newer, which compiles against glibc 2.23+ headers",
        ),
        "glibc 2.23's string.h defines an inline mempcpy that CUDA 7.5's front end cannot compile unless "
        "_FORCE_INLINES is defined.",
    ),
)


@check(HOST_COMPILER_UNSUPPORTED)
def host_compiler_unsupported(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, HOST_COMPILER_UNSUPPORTED)
    if not said:  # no refusal quoted: a failed build stating a gcc newer than its nvcc accepts (builds.py)
        yield from host_compiler_stated(fx, HOST_COMPILER_UNSUPPORTED)
        return
    # nvcc's host_config.h: "gcc versions later than 12"; torch's cpp_extension: "the maximum required version by CUDA 11.7 (11.5.0)"
    m = re.search(r"later than (\d+)|maximum required version by CUDA [\d.]+ \((\d+)", said[1]) if said else None
    limits = kb.host_compiler_limits(fx.str("toolkit.nvcc_version") or "")  # kb/host_compilers.json
    if m:
        n = m.group(1) or m.group(2)
    else:
        n = str(limits["gcc_max"]) if limits and limits.get("gcc_max") else "<N>"
    newer = kb.cuda_accepting_gcc(int(n) + 1) if n.isdigit() else None
    if said and "targets unsupported OS" in said[1]:
        yield HOST_COMPILER_UNSUPPORTED.finding(
            title="nvcc refuses this host compiler: on Windows it accepts only the 64-bit MSVC (cl.exe x64)",
            evidence={said[0]: said[1]},
            fix=Fix(
                (
                    "# install Visual Studio (or its Build Tools) with 'Desktop development with C++'",
                    "# build from the 'x64 Native Tools Command Prompt for VS' so cl.exe is the x64 compiler",
                    "# not MinGW/MSYS2 g++ or a 32-bit cl.exe; with CMake: -G 'Visual Studio 17 2022' -A x64",
                ),
                "nvcc on Windows supports only the 64-bit Microsoft C++ compiler as its host compiler.",
            ),
        )
        return
    header = next((h for h in _HEADER_CLASHES if said and re.search(h[0], said[1])), None)
    if said and header:
        _rx, title, cmds_, why = header
        if "{header}" in title:
            title = title.format(header="std_function.h" if "std_function" in said[1] else "<tuple>")
        yield HOST_COMPILER_UNSUPPORTED.finding(title=title, evidence={said[0]: said[1]}, fix=Fix(cmds_, why))
        return
    cmds = [
        f"sudo apt-get install gcc-{n} g++-{n}",
        f"export CC=gcc-{n} CXX=g++-{n} NVCC_PREPEND_FLAGS='-ccbin /usr/bin/g++-{n}'",
        f"# then rebuild; or install CUDA {newer} or newer (its nvcc accepts gcc {int(n) + 1})"
        if newer
        else "# then rebuild; or install a newer CUDA toolkit that supports your gcc",
    ]
    yield from text_finding(
        HOST_COMPILER_UNSUPPORTED,
        fx,
        f"nvcc refuses this gcc (it supports gcc {n} at most)",
        cmds,
        "Each CUDA toolkit supports host compilers only up to a version.",
    )


def _nvcc_without_native(fx: Facts, said: Tuple[str, str]) -> Finding:
    """nvcc refusing -arch=native (kb/errors/b21.json (9)): the option exists from CUDA 11.5 Update 1 on (NVIDIA's CUDA
    Features Archive); an older nvcc needs the GPU's architecture named."""
    gpu = next((g for g in gpus(fx) if g.get("capability")), None)
    sm = str(gpu["capability"]).replace(".", "") if gpu else None
    nvcc = fx.str("toolkit.nvcc_version")
    return TOOLKIT_ARCH_UNSUPPORTED.finding(
        title=f"This nvcc{(' ' + nvcc) if nvcc else ''} does not know -arch=native (added in CUDA 11.5 Update 1): "
        "name the GPU's architecture, or use a newer CUDA toolkit",
        evidence={said[0]: said[1], "nvcc": nvcc, "gpu": gpu.get("name") if gpu else None},
        fix=Fix(
            (
                "nvidia-smi --query-gpu=name,compute_cap --format=csv  # e.g. 6.1 -> sm_61",
                f"# in the build (Makefile NVCCFLAGS, CMAKE_CUDA_ARCHITECTURES): -arch=sm_{sm or 'XY'} instead of -arch=native"
                + (f" (CMAKE_CUDA_ARCHITECTURES={sm})" if sm else ""),
                "nvcc --version  # or install CUDA 11.6 or newer, whose nvcc accepts -arch=native",
            ),
            "-arch=native asks nvcc to compile for the GPUs it finds; nvcc accepts it from CUDA 11.5 Update 1 on.",
        ),
    )


@check(TOOLKIT_ARCH_UNSUPPORTED)
def toolkit_arch_unsupported(fx: Facts) -> Iterator[Finding]:
    from .arch import nvrtc_of_other_program

    said = error_match(fx, TOOLKIT_ARCH_UNSUPPORTED)
    other = nvrtc_of_other_program(fx) if not said else None
    if other:
        prog, line = other
        gpu = next((g for g in gpus(fx) if g.get("name")), None)
        on = f" ({gpu['name']}" + (f", compute capability {gpu['capability']})" if gpu.get("capability") else ")") if gpu else ""
        cap = str(gpu.get("capability") or "") if gpu else ""
        span = kb.nvcc_target_releases("compute_" + cap.replace(".", "")) if cap else None
        known = kb.nvcc_releases()
        if span:
            which = f"# compute_{cap.replace('.', '')} is known to the CUDA toolkits {span[0]} to {span[1]} (kb/nvcc_archs.json)"
        elif cap:
            which = f"# no CUDA toolkit from {known[0]} on knows compute capability {cap}: an older toolkit's build is needed"
        else:
            which = "nvidia-smi --query-gpu=name,compute_cap --format=csv  # the GPU's architecture"
        yield TOOLKIT_ARCH_UNSUPPORTED.finding(
            title=f"The run-time compiler (NVRTC) of the CUDA toolkit {prog} uses cannot compile for this GPU{on}",
            evidence={"error": line, "program": prog},
            fix=Fix(
                (
                    which,
                    f"# install the {prog} build made for a CUDA toolkit that knows this GPU (an older one for an old GPU, a "
                    "newer one for a new GPU)",
                ),
                f"{prog} compiles its kernels at run time with the NVRTC of its CUDA toolkit, for this GPU's architecture; "
                "that NVRTC does not know the architecture.",
            ),
        )
        return
    if said and "'native'" in said[1]:
        yield _nvcc_without_native(fx, said)
        return
    m = re.search(r"compute_(\d+)", said[1]) if said else None
    arch = m.group(1) if m else None
    span = kb.nvcc_target_releases(f"compute_{arch}") if arch else None  # kb/nvcc_archs.json (ptxas --help)
    known = kb.nvcc_releases()
    # kb/nvcc_archs.json starts at CUDA 11.7 (the oldest nvcc wheel): a target the oldest covered release knows may
    # be older still, so its first release is not stated.
    if span and span[0] == known[0] and span[1] != known[-1]:
        which = f"# compute_{arch} is accepted by nvcc up to CUDA {span[1]}, not after"
    elif span and span[1] != known[-1]:
        which = f"# compute_{arch} is accepted by nvcc {span[0]} to {span[1]} only"
    elif span and span[0] == known[0]:
        which = f"# compute_{arch} is accepted by every nvcc from CUDA {known[0]} on; an older one may not know it"
    elif span:
        which = f"# compute_{arch} needs nvcc {span[0]} or newer"
    elif arch:
        which = f"# no nvcc from CUDA {known[0]} on accepts compute_{arch}"
    cmds = [
        *([which] if arch else []),
        "nvcc --list-gpu-arch  # what this nvcc can build for",
        'python -c "import torch; print(torch.cuda.get_device_capability())"  # what your GPU needs',
        'export TORCH_CUDA_ARCH_LIST="<X.Y of your GPU>"  # drop '
        + (f"compute_{arch}" if arch else "the unsupported architecture"),
    ]
    yield from text_finding(
        TOOLKIT_ARCH_UNSUPPORTED,
        fx,
        f"This nvcc cannot build for compute_{arch}" if arch else "This nvcc cannot build for the requested GPU architecture",
        cmds,
        "The architecture list must only name architectures the installed nvcc supports.",
    )


@check(NVIDIA_UVM_STALE)
def nvidia_uvm_stale(fx: Facts) -> Iterator[Finding]:
    if uvm_not_loaded_shown(fx):
        return  # plat11: the report shows nvidia_uvm not loaded, no suspend, no reload (checks/plat10.py names it)
    cmds = [
        "nvidia-smi  # works: the driver itself is fine",
        "sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm  # or reboot",
        "sudo systemctl enable nvidia-suspend.service nvidia-resume.service  # keeps it from recurring after suspend",
    ]
    said = error_match(fx, NVIDIA_UVM_STALE)
    unknown = bool(said and re.search(r"unknown|999", said[1], re.I))
    yield from text_finding(
        NVIDIA_UVM_STALE,
        fx,
        'CUDA fails with "unknown error": reload the nvidia_uvm module (often after suspend/resume)'
        if unknown or not said
        else "CUDA stopped working after the machine resumed from suspend: reload the nvidia_uvm module",
        cmds,
        "nvidia_uvm is left in a bad state by suspend/resume; reloading it restores CUDA.",
    )


@check(MKL_INCOMPATIBLE)
def mkl_incompatible(fx: Facts) -> Iterator[Finding]:
    cmds = [
        "conda list mkl  # 2024.1 or newer breaks these torch builds",
        "conda install 'mkl<2024.1'",
        f"# or: {PIP} install torch  (pip wheels do not use the environment's MKL)",
    ]
    yield from text_finding(
        MKL_INCOMPATIBLE,
        fx,
        "torch cannot load: the installed MKL (2024.1+) lacks iJIT_NotifyEvent",
        cmds,
        "MKL 2024.1 removed symbols these torch builds link against.",
    )


@check(CUDA_HOME_NOT_SET)
def cuda_home_not_set(fx: Facts) -> Iterator[Finding]:
    cuda = torch_cuda(fx)
    ver = cuda or "<torch.version.cuda>"
    cmds = [
        'python -c "import torch; print(torch.version.cuda)"  # the toolkit version to match',
        f"export CUDA_HOME=/usr/local/cuda-{ver}  # a toolkit of that version (apt: cuda-toolkit-{ver.replace('.', '-')})",
        "export PATH=$CUDA_HOME/bin:$PATH",
        f"# or: conda install -c nvidia cuda-nvcc={ver}",
        "# in a container: build FROM an nvidia/cuda:<version>-devel-* image (the -runtime ones have no nvcc)",
    ]
    if search(fx, r"CMAKE_CUDA_COMPILER|CMake Error|Could NOT find CUDA|CUDAToolkit_ROOT"):
        cmds.append("# CMake: export CUDACXX=$CUDA_HOME/bin/nvcc (or cmake -DCMAKE_CUDA_COMPILER=$CUDA_HOME/bin/nvcc)")
    yield from text_finding(
        CUDA_HOME_NOT_SET,
        fx,
        "Building a CUDA extension needs a CUDA toolkit: none found (CUDA_HOME not set)",
        cmds,
        "torch wheels carry the CUDA runtime but not nvcc; extensions compile with a full toolkit.",
    )


@check(OPEN_KERNEL_MODULE_UNSUPPORTED)
def open_kernel_module_unsupported(fx: Facts) -> Iterator[Finding]:
    cmds = [
        "cat /proc/driver/nvidia/version  # 'Open Kernel Module'",
        "sudo apt-get install nvidia-driver-<branch>  # the proprietary flavour (not -open); dnf: akmod-nvidia; .run: --kernel-module-type=proprietary",
        "sudo reboot",
    ]
    if error_match(fx, OPEN_KERNEL_MODULE_UNSUPPORTED):
        yield from text_finding(
            OPEN_KERNEL_MODULE_UNSUPPORTED,
            fx,
            "The open NVIDIA kernel module does not support this (pre-Turing) GPU",
            cmds,
            "The open modules need the GPU System Processor of Turing and later GPUs.",
        )
        return
    # No kernel line, but the text shows the open modules in use and the facts name a GPU older than Turing: NVIDIA's
    # open-gpu-kernel-modules README lists Turing (7.5) and later only (the driver then finds no device it supports).
    said = search(fx, _OPEN_MODULE_IN_USE)
    old = [g for g in gpus(fx) if (kb.parse_version(g.get("capability")) or (9, 9)) < (7, 5)] if said else []
    if said and old:
        g = old[0]
        yield OPEN_KERNEL_MODULE_UNSUPPORTED.finding(
            title=f"The open NVIDIA kernel module is in use, and {g.get('name') or 'the GPU'} (compute capability "
            f"{g['capability']}, before Turing) is not a GPU it supports",
            evidence={said[0]: said[1], "gpu": g.get("name"), "capability": g["capability"]},
            fix=Fix(tuple(cmds), "The open modules need the GPU System Processor of Turing and later GPUs."),
        )


#: The open GPU kernel modules named as what is built or installed: NVIDIA's repository and its kernel-open/ build
#: folder, the distributions' -open packages, the .run installer's flag, /proc/driver/nvidia/version's words.
#: https://github.com/NVIDIA/open-gpu-kernel-modules (README: "supported GPUs": Turing and later)
_OPEN_MODULE_IN_USE = (
    r"open-gpu-kernel-modules|\bkernel-open/|\bnvidia-driver-\d{3}-(?:server-)?open\b|\bnvidia-open(?:-dkms)?\b|"
    r"\bOpen Kernel Module\b|--kernel-module-type[= ]open\b|-m[= ]kernel-open\b|\bkmod-nvidia-open|\bnvidia-kmod-open"
)


@check(GPU_INIT_FAILED)
def gpu_init_failed(fx: Facts) -> Iterator[Finding]:
    from .health import GPU_LOST
    from .kernel_driver import OPEN_KERNEL_MODULE_REQUIRED

    # RmInitAdapter failing is the consequence; a kernel line that names why is the root, reported by its own code.
    if any(error_match(fx, c) for c in (OPEN_KERNEL_MODULE_REQUIRED, OPEN_KERNEL_MODULE_UNSUPPORTED, GPU_LOST)):
        return
    cmds = [
        "sudo dmesg | grep -i -E 'nvrm|xid'  # the lines before RmInitAdapter name the failing step (GSP, GFW_BOOT, BAR, power)",
        "lspci -nn -d 10de:  # the GPU is on the PCI bus",
        "# reseat the card, connect every power cable; firmware setup: Above 4G decoding (and Resizable BAR) on",
        "# install a driver branch that supports this GPU; for a GSP error also try the other flavour (open / proprietary)",
        "sudo reboot  # a cold boot",
    ]
    if not error_match(fx, GPU_INIT_FAILED):
        bound = _bound_but_no_devices(fx)
        if bound:
            yield GPU_INIT_FAILED.finding(
                title="Likely: the NVIDIA driver is bound to the GPU but cannot initialise it (nvidia-smi: No devices were "
                "found, lspci: Kernel driver in use: nvidia)",
                evidence={"nvml.device_count": 0, "lspci": bound},
                fix=Fix(
                    tuple(cmds),
                    "The kernel module owns the GPU on the PCI bus yet NVML finds no device: bringing the GPU up failed "
                    "(the kernel log's RmInitAdapter line says which step); a revision of ff means the GPU does not "
                    "answer on the bus at all (powered off, not seated, or failing).",
                ),
                severity="warning",
            )
        return
    yield from text_finding(
        GPU_INIT_FAILED,
        fx,
        "The NVIDIA driver is loaded but cannot initialise the GPU (RmInitAdapter failed)",
        cmds,
        "The driver sees the GPU but could not bring it up: firmware, power, slot, firmware settings or a failing GPU.",
    )


#: lspci -k's entry for an NVIDIA display device (kb/errors/codes5.json nvidia_named names the same line) and, within its
#: block, the driver that owns it: "01:00.0 VGA compatible controller: NVIDIA Corporation Device 249d (rev ff)" ...
#: "Kernel driver in use: nvidia".
_LSPCI_NVIDIA_BOUND = re.compile(
    r"^(?P<line>[0-9a-f]{2,4}:[0-9a-f]{2}\.[0-7]\s+(?:VGA compatible controller|3D controller|Display controller)"
    r"(?:\s*\[[0-9a-f]{4}\])?:\s*NVIDIA Corporation[^\n]*)\n(?:[ \t][^\n]*\n){0,3}?[ \t]+Kernel driver in use:\s*nvidia\s*$",
    re.I | re.M,
)


def _bound_but_no_devices(fx: Facts) -> Optional[str]:
    """lspci's NVIDIA line when the text shows the nvidia module bound to the GPU (lspci -k) while nvidia-smi found no
    device: the driver probed the GPU and failed to bring it up (what RmInitAdapter's line says in the kernel log)."""
    from .kernel_driver import _BLACKWELL

    if fx.int("nvml.device_count") != 0 or fx.bool("torch.cuda_available") is True:
        return None
    m = _LSPCI_NVIDIA_BOUND.search(fx.user_error() or "")
    if not m or any(_BLACKWELL.search(str(g.get("name") or "")) for g in gpus(fx)):
        return None  # a Blackwell GPU the driver binds but cannot start: the open-module question first (kernel_driver)
    return m.group("line").strip()


_LEGACY = re.compile(
    r"The NVIDIA (?P<gpu>.+?) GPU installed in this system(?: is|>)\s+(?:NVRM:\s+)?supported through the NVIDIA\s+"
    r"(?P<branch>\d+)\.xx Legacy drivers[\s\S]{0,160}?The (?P<driver>[\d.]+) NVIDIA driver will ignore",
    re.I,
)


@check(GPU_NEEDS_LEGACY_DRIVER)
def gpu_needs_legacy_driver(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GPU_NEEDS_LEGACY_DRIVER)
    if not said:
        # the same cause from the facts: GPU generation x driver branch; or (driver8) a driver-too-old text on a GPU
        # whose newest driver is a legacy branch that cannot run the CUDA the program needs
        found = legacy_branch_finding(fx) or legacy_gpu_driver_error_finding(fx) or legacy_gpu_driver_silent(fx)
        if found:
            yield found
        return
    m = _LEGACY.search(re.sub(r"\s*NVRM:\s*", " ", fx.user_error() or said[1])) or _LEGACY.search(said[1])
    branch = m.group("branch") if m else "<branch>"
    gpu = "the " + re.sub(r"^(?:NVIDIA\s+)+", "", m.group("gpu")).strip() if m else "this GPU"
    driver = m.group("driver") if m else None
    cmds = [
        f"sudo apt-get install nvidia-driver-{branch}  # Ubuntu/Debian; Arch: nvidia-{branch}xx-dkms; Fedora: "
        f"akmod-nvidia-{branch}xx; NixOS: hardware.nvidia.package = ...nvidiaPackages.legacy_{branch}",
        "sudo reboot",
        "nvidia-smi  # the CUDA version this branch offers: choose a torch build for it",
    ]
    title = f"The NVIDIA driver{(' ' + driver) if driver else ''} ignores {gpu}: it needs the {branch}.xx legacy driver"
    yield GPU_NEEDS_LEGACY_DRIVER.finding(
        title=title,
        evidence={said[0]: said[1], "legacy_branch": branch if m else None, "driver": driver},
        fix=Fix(tuple(cmds), "Newer driver branches drop older GPU generations; the legacy branch still drives them."),
    )


#: CUDA library -> the pip wheel that ships it (nvidia-<name>-cu<major>).
_CUDA_LIB_WHEEL = {
    "cudnn": "cudnn",
    "cublas": "cublas",
    "cublaslt": "cublas",
    "cudart": "cuda-runtime",
    "cufft": "cufft",
    "curand": "curand",
    "cusparse": "cusparse",
    "cusolver": "cusolver",
    "nvrtc": "cuda-nvrtc",
    "nvjitlink": "nvjitlink",
}
_CUDA_LIB = re.compile(
    r"\b(?:lib)?(cublasLt|cublas|cudart|cufft|curand|cusparse|cusolver|nvrtc|nvJitLink|cudnn)(?:_\w+?)?(?:\.so\.|64_)(\d+)(?:\.(\d+))?",
    re.I,
)


def _missing_by_entity(fx: Facts, said: Tuple[str, str], ent: MissingLibrary) -> Finding:
    """The finding for a missing CUDA library whose number the kb table decodes (errortext/entities.py)."""
    w = wanted_cuda(ent)
    lib, release = short_name(ent), w["release"]
    have = fx.str("toolkit.nvcc_version") or torch_cuda(fx)
    built = f"CUDA {release}" if release else ""
    windows = ent.name.lower().endswith(".dll")
    if windows:
        cmds = [f"where {ent.name}  # which copy the loader finds on PATH, if any"]
    else:
        cmds = [f"ldconfig -p | grep -i {lib}  # which {lib} the loader knows"]
    if w["wheel"]:
        cmds += [
            f"{PIP} install {w['wheel']}  # ships {ent.name}",
            f"export LD_LIBRARY_PATH=$(python -c \"import os, nvidia.{w['module']} as m; print(os.path.join(m.__path__[0], 'lib'))\"):$LD_LIBRARY_PATH",
        ]
    elif w["old"] and windows:
        cmds.append(
            f"# install CUDA {release} (https://developer.nvidia.com/cuda-toolkit-archive) and put its bin folder on PATH"
        )
    elif w["old"]:
        rel = release.rstrip("+")
        cmds += [
            f"sudo apt-get install cuda-libraries-{rel.replace('.', '-')}  # NVIDIA's repository; or: conda install cudatoolkit={rel}",
            f"export LD_LIBRARY_PATH=/usr/local/cuda-{rel}/lib64:$LD_LIBRARY_PATH",
        ]
    else:
        what = f"the libraries of {built}" if built else f"the {lib} of the CUDA release the program was built for"
        cmds.append(f"# install {what} beside the CUDA you have, and put their folder on LD_LIBRARY_PATH / PATH")
    cmds.append("# or: a build of the program made for the CUDA you have")
    if built:
        title = f"A program built for {built} cannot find {ent.name} ({built}'s {lib} is not installed or not on the loader path)"
    else:
        title = f"A program cannot find the {ent.name} library (not installed for the CUDA it was built for, or not on the loader path)"
    return CUDA_LIBRARY_MISSING.finding(
        title=title,
        evidence={said[0]: said[1], "library": ent.name, "cuda_wanted": release or None, "cuda_installed": have},
        fix=Fix(tuple(cmds), f"The program loads {built or 'its CUDA'}'s {lib} at run time; it must be installed and findable."),
    )


#: TensorFlow's loader logs a library it cannot open at glog's WARNING level ("W ... dso_loader.cc:64] Could not load
#: dynamic library 'cudart64_110.dll'") and carries on without the GPU; its cudart stub adds "Ignore above cudart dlerror
#: if you do not have a GPU set up on your machine". https://github.com/tensorflow/tensorflow/blob/v2.9.0/tensorflow/stream_executor/platform/default/dso_loader.cc
#: https://github.com/tensorflow/tensorflow/blob/v2.9.0/tensorflow/stream_executor/cuda/cudart_stub.cc
#: Its GPU device factory then logs, also at WARNING level, "W ... gpu_device.cc:NNNN] Cannot dlopen some GPU libraries"
#: (https://github.com/tensorflow/tensorflow/blob/v2.4.0/tensorflow/core/common_runtime/gpu/gpu_device.cc).
_TF_LOADER_WARNING = re.compile(
    r"^\s*(?:[\d-]+ [\d:.]+: )?W \S*(?:dso_loader\.cc:\d+\] Could not load dynamic library"
    r"|gpu_device\.cc:\d+\] Cannot dlopen some GPU libraries)",
    re.M,
)
#: Anything in the same text that shows a real failure (a traceback, an exception, glog's E/F levels, "failed").
_FAILURE_LINE = re.compile(
    r"Traceback|\b\w*(?:Error|Exception)\b(?!:? *\w*\.dll not found)|^\s*(?:[\d-]+ [\d:.]+: )?[EF] \S+\]|\bfailed\b", re.M
)


def _tensorflow_warning_only(text: str) -> bool:
    """The only library failure shown is TensorFlow's WARNING-level loader line (it runs on, without the GPU)."""
    if not _TF_LOADER_WARNING.search(text):
        return False
    rest = "\n".join(line for line in text.splitlines() if not _TF_LOADER_WARNING.search(line))
    return not _FAILURE_LINE.search(rest)


@check(CUDA_LIBRARY_MISSING)
def cuda_library_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CUDA_LIBRARY_MISSING)
    if not said:
        hyp = companion_library_hypothesis(fx)  # lib9: reasoned from the companion's build and the CUDA stated
        if hyp:
            yield CUDA_LIBRARY_MISSING.finding(title=hyp[0], evidence=hyp[1], fix=Fix(tuple(hyp[2]), hyp[3]), severity="warning")
        return
    if re.search(r"\bpoetry\b", said[1], re.I) and re.search(r"\b2\.0\.1\b", said[1]):
        yield _poetry_torch_201(said)  # kb/errors/b23.json: Poetry's torch 2.0.1 without its CUDA wheels
        return
    if _tensorflow_warning_only(fx.user_error() or said[1]):
        for found in _cuda_library_missing(fx, said):
            yield dataclasses.replace(
                found,
                severity="warning",
                title="TensorFlow runs without the GPU: "
                + found.title[0].lower()
                + found.title[1:]
                + " (TensorFlow's own warning: harmless if this machine is not meant to use the GPU)",
            )
        return
    yield from _cuda_library_missing(fx, said)


def _poetry_torch_201(said: Tuple[str, str]) -> Finding:
    """torch 2.0.1 installed by Poetry without its CUDA library wheels (session 23: b69-03, b161-05; pytorch#100974)."""
    return CUDA_LIBRARY_MISSING.finding(
        title="Poetry installed torch 2.0.1 without its nvidia-* CUDA library wheels (PyPI's metadata for 2.0.1 lists "
        "none): torch cannot load cuBLAS/cuDNN",
        evidence={said[0]: said[1][:300]},
        fix=Fix(
            (
                'poetry add "torch>=2.0.0,!=2.0.1"  # 2.0.0 and 2.1+ carry the dependencies in the metadata Poetry reads',
                "# or keep 2.0.1 and add its wheels by hand: nvidia-cublas-cu11, nvidia-cudnn-cu11, nvidia-cuda-nvrtc-cu11, "
                "nvidia-cuda-runtime-cu11 (the versions `pip install torch==2.0.1` pulls)",
                'poetry run python -c "import torch; print(torch.cuda.is_available())"',
            ),
            "Poetry resolves one dependency list per release from PyPI's metadata; torch 2.0.1's lists no nvidia-* "
            "wheels, while pip reads each wheel's own (pytorch#100974).",
        ),
    )


def _tensorrt_missing(said: Tuple[str, str]) -> Optional[Finding]:
    """TensorRT's own library (libnvinfer.so.N, nvinfer_N.dll) could not be loaded: TensorRT of that major is missing."""
    trt = next((e for e in missing_libraries(said[1]) if e.family == "tensorrt"), None)
    m = re.search(r"nv(?:infer\w*|onnxparser|parsers)(?:\.so\.|_)(\d+)", said[1])
    if not trt and not m:
        return None
    major = (trt.number if trt and trt.number else None) or (m.group(1) if m else None)
    name = trt.name if trt else m.group(0) if m else "libnvinfer"
    wheel = f"tensorrt-cu12=={major}.*" if major else "tensorrt-cu12"
    return CUDA_LIBRARY_MISSING.finding(
        title=f"A program linked against TensorRT{' ' + major if major else ''} cannot load TensorRT's {name} (TensorRT is "
        "not installed, or its lib folder is not searched)",
        evidence={said[0]: said[1], "library": name, "tensorrt_major": major},
        fix=Fix(
            (
                f"{PIP} install {wheel}  # TensorRT{' ' + major if major else ''} as wheels (tensorrt_libs holds the "
                "libraries); or NVIDIA's apt/zip packages",
                'export LD_LIBRARY_PATH=$(python -c "import os, tensorrt_libs as m; print(m.__path__[0])"):$LD_LIBRARY_PATH'
                "  # Windows: add TensorRT's lib folder to PATH",
                "# the TensorRT major must be the one the program was built with (the number in the library's name)",
            ),
            "TensorRT is a separate NVIDIA library: neither the driver, the CUDA toolkit nor torch's wheels include it.",
        ),
    )


def _cuda_library_missing(fx: Facts, said: Tuple[str, str]) -> Iterator[Finding]:
    if "libcudart" in said[1] and search(fx, r"from torchvision import _C\s+ImportError: libcudart"):
        return  # torchvision's _C built for another CUDA than torch's: torchvision-mismatch (kb/errors/b22.json)
    trt = _tensorrt_missing(said) if re.search(r"nvinfer|nvonnxparser|nvparsers", said[1], re.I) else None
    if trt:
        yield trt
        return
    ents = [e for e in missing_libraries(said[1]) if e.kind == "cuda"]
    if ents and not _CUDA_LIB.search(said[1]) or ents and wanted_cuda(ents[0])["release"] != ents[0].number:
        yield _missing_by_entity(fx, said, ents[0])  # a name the table decodes (a DLL's 80, cuSOLVER's 10, prose)
        return
    m = _CUDA_LIB.search(said[1])
    lib, major = (m.group(1), m.group(2)) if m else ("cublas", "<N>")
    old = bool(m and m.group(3) is not None and int(major) < 11)  # libcudart.so.9.0: CUDA 9.0's soname (major.minor)
    if old:
        release = f"{major}.{m.group(3)}" if m else major
        nvcc = fx.str("toolkit.nvcc_version")
        cmds = [
            f"# the program was built with CUDA {release}"
            + (f"; the installed toolkit is CUDA {nvcc}" if nvcc and nvcc != release else "")
            + f": install CUDA {release}'s libraries beside it",
            f"sudo apt-get install cuda-libraries-{release.replace('.', '-')}  # NVIDIA's repository; or: conda install cudatoolkit={release}",
            f"export LD_LIBRARY_PATH=/usr/local/cuda-{release}/lib64:$LD_LIBRARY_PATH",
            "# or: a build of the program made for the CUDA you have",
        ]
        major = release
    elif lib.lower() == "cudnn":
        cmds = [
            f"# install the whole cuDNN {major} (every DLL of its bin folder, not one copied DLL) for your CUDA major, "
            "and put its bin folder on PATH",
            f"{PIP} install nvidia-cudnn-cu12=={major}.*  # or -cu11: the pip cuDNN; add its bin (or lib) folder to PATH / LD_LIBRARY_PATH",
            "where cudnn64_*.dll  # Windows: which cuDNN the loader finds first",
        ]
    else:
        wheel = f"nvidia-{_CUDA_LIB_WHEEL[lib.lower()]}-cu{major}"
        mod = _CUDA_LIB_WHEEL[lib.lower()].replace("-", "_")
        cmds = [
            f"{PIP} install {wheel}  # ships {lib} for CUDA {major}",
            f"export LD_LIBRARY_PATH=$(python -c \"import os, nvidia.{mod} as m; print(os.path.join(m.__path__[0], 'lib'))\"):$LD_LIBRARY_PATH",
            "# or: import torch before the package (torch loads its own CUDA libraries), or install the package's build "
            "for the CUDA you have",
        ]
    if lib.lower() == "cudnn":
        sub = re.search(r"cudnn\w*?64_\d+\.dll|libcudnn\w*\.so(?:\.\d+)*", said[1], re.I)
        title = f"A program cannot find cuDNN {major}'s {sub.group(0) if sub else 'library'} (cuDNN incompletely installed, or its folder not searched)"
    elif old:
        title = f"A program built for CUDA {major} cannot find {lib} (CUDA {major}'s library is not installed or not on the loader path)"
    else:
        title = f"A package built for CUDA {major} cannot find {lib} (CUDA {major}'s library is not installed or not on the loader path)"
    yield CUDA_LIBRARY_MISSING.finding(
        title=title,
        evidence={said[0]: said[1], "library": lib if m else None, "cuda_major": major if m else None},
        fix=Fix(tuple(cmds), f"The package loads CUDA {major}'s {lib} at run time; it must be installed and findable."),
    )


@check(COMPANION_CPU_ONLY_BUILD)
def companion_cpu_only_build(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, COMPANION_CPU_ONLY_BUILD)
    twin = cpu_gpu_twins(fx)
    if twin:  # both builds installed: the more exact cause of the same symptom, and its own fix
        yield _cpu_gpu_twins(twin, said)
        return
    if not said:
        tfw = tensorflow_windows_cpu_only(fx)
        if tfw:
            yield COMPANION_CPU_ONLY_BUILD.finding(
                title="TensorFlow after 2.10 has no GPU support on native Windows: its Windows wheels are CPU builds",
                evidence=tfw,
                fix=Fix(
                    (
                        "# in WSL2 (Ubuntu): pip install 'tensorflow[and-cuda]'  # TensorFlow's GPU build for Linux, with its CUDA libraries",
                        '# or stay on native Windows with TensorFlow 2.10, the last with GPU support there (Python 3.7-3.10, CUDA 11.2, cuDNN 8.1): pip install "tensorflow<2.11"',
                        "python -c \"import tensorflow as tf; print(tf.__version__, tf.config.list_physical_devices('GPU'))\"",
                    ),
                    f"TensorFlow 2.10 was the last release with GPU support on native Windows ({TF_WINDOWS_DOCS}).",
                ),
                severity=None if tfw["no_gpu"] else "warning",  # installed, no failure shown: what will happen
            )
            return
        alone = cpu_build_alone(fx)
        if alone:
            cpu, gpu = alone["cpu"], alone["gpu"]
            yield COMPANION_CPU_ONLY_BUILD.finding(
                title=f"Likely: {cpu} is the CPU-only build of {alone['module']} ({gpu} is its CUDA build), and the text "
                "says the GPU is not used",
                evidence={"installed": alone["where"], "symptom": alone["symptom"]},
                fix=Fix(
                    (
                        f"{PIP} uninstall -y {cpu}",
                        f"{PIP} install {gpu}  # the CUDA build, for the CUDA version its install page names; it runs on "
                        "the CPU too",
                    ),
                    f"pip's {cpu} has no GPU code; {gpu} is the distribution with CUDA support.",
                ),
                severity="warning",
            )
        return
    installed = " ".join(str(d.get("name") or "") for d in fx.dicts("packages.distributions"))
    # which package (checks/companions.py): named by the line, else the error text, else the installed packages
    lib, cmds = cpu_build_of(said[1], fx.user_error(), installed)
    yield COMPANION_CPU_ONLY_BUILD.finding(
        title=f"{lib} is its CPU-only build: install its CUDA build",
        evidence={said[0]: said[1]},
        fix=Fix(tuple(cmds), f"{lib}'s CPU build has no GPU code; its CUDA build comes from its own index or extra."),
        severity=cpu_build_severity(said[1]),
    )


def _cpu_gpu_twins(twin: Dict[str, Any], said: Optional[Tuple[str, str]]) -> Finding:
    cpu, gpu, module = twin["cpu"], twin["gpu"], twin["module"]
    evidence = {"installed": twin["where"]}
    if said:
        evidence[said[0]] = said[1]
    elif twin["gpu_missing"]:
        evidence["error text"] = twin["gpu_missing"]
    cmds = (
        f"{PIP} uninstall -y {cpu} {gpu}  # both install the module {module}; uninstall both (removing one leaves a broken {module})",
        f"{PIP} install {gpu}  # only the CUDA build: it runs on the CPU too",
        f"{PIP} list | grep -i {cpu}  # afterwards: only {gpu}",
    )
    return COMPANION_CPU_ONLY_BUILD.finding(
        title=f"{cpu} (CPU-only) and {gpu} are both installed: both install the module {module}, and the CPU build's files can be the ones imported",
        evidence=evidence,
        fix=Fix(cmds, f"Only one build of {module} can own its folder in site-packages; {gpu} alone covers CPU and GPU."),
        severity=None if (said and not cpu_build_severity(said[1])) or twin["gpu_missing"] else "warning",
    )


@check(WINDOWS_PAGEFILE_TOO_SMALL)
def windows_pagefile_too_small(fx: Facts) -> Iterator[Finding]:
    cmds = [
        "# System Properties > Advanced > Performance Settings > Advanced > Virtual memory > Change:",
        "#   'Automatically manage paging file size' (or a larger custom size) on a drive with free space; restart",
        "# and/or: DataLoader(..., num_workers=0 or fewer) - each worker loads torch's CUDA DLLs again",
    ]
    yield from text_finding(
        WINDOWS_PAGEFILE_TOO_SMALL,
        fx,
        "Windows ran out of paging file while loading torch's CUDA DLLs (WinError 1455)",
        cmds,
        "Each process that imports torch commits gigabytes of virtual memory for its CUDA DLLs.",
    )


def _cap(v: str) -> Tuple[int, int]:
    major, _, minor = v.partition(".")
    return int(major), int(minor or 0)


def legacy_branch(capability: str) -> Optional[Dict[str, Any]]:
    """The legacy driver branch row (kb cuda_drivers.json legacy_branches) of a GPU generation that newer
    branches dropped, or None (a current generation, or a Tegra part on JetPack's driver)."""
    table = kb._load("cuda_drivers").get("legacy_branches") or {}
    if capability in table.get("tegra_capabilities", ()):
        return None
    try:
        cap = _cap(capability)
        for row in table.get("branches", ()):
            if _cap(row["min_capability"]) <= cap <= _cap(row["max_capability"]):
                return dict(row)
    except ValueError:
        return None
    return None


def legacy_branch_finding(fx: Facts) -> Optional[Finding]:
    """A GPU of a generation the installed driver's branch no longer drives (Kepler with 535, Fermi with 470):
    the driver ignores it, whatever CUDA or torch does. From the GPU's name (kb capability table) and the
    driver version as stated; never where torch or NVML itself reported the GPU's capability (then the
    driver did drive it) or where CUDA worked."""
    driver = driver_version(fx)
    m = re.match(r"(\d{3})", driver or "")
    if not m or fx.bool("torch.cuda_available") is True:
        return None
    branch = int(m.group(1))
    for g in gpus(fx):
        cap = g.get("capability")
        if not cap or g.get("capability_source") in ("torch", "nvml"):
            continue
        row = legacy_branch(str(cap))
        if not row or branch < int(row["dropped_in"]):
            continue
        last, name = row["last"], g.get("name") or "this GPU"
        return GPU_NEEDS_LEGACY_DRIVER.finding(
            title=f"Driver {driver} does not drive the {name} ({row['generation']}, compute capability {cap}): "
            f"branches from {row['dropped_in']} on dropped it; it needs the {last}.xx legacy driver",
            evidence={
                "nvml.driver_version": driver,
                "gpu": name,
                "capability": f"{cap} ({g.get('capability_source')})",
                "legacy_branch": last,
                "dropped_in": row["dropped_in"],
            },
            fix=Fix(
                (
                    f"sudo apt-get install nvidia-driver-{last}  # Ubuntu/Mint (where that package is a transitional one, "
                    f"nvidia-driver-{last}-server); Arch: nvidia-{last}xx-dkms; Fedora: akmod-nvidia-{last}xx",
                    "sudo reboot",
                    "sudo dmesg | grep -i -A3 'legacy'  # the driver's own words when it ignores a GPU",
                    "nvidia-smi  # then: the CUDA version this branch offers; choose a torch build for it and this GPU",
                ),
                f"NVIDIA's driver branches from {row['dropped_in']} on do not support {row['generation']} GPUs; "
                f"the {last}.xx legacy branch does (NVIDIA's legacy GPU list).",
            ),
        )
    return None


def legacy_gpu_cannot_run(fx: Facts) -> Optional[Tuple[Dict[str, Any], Dict[str, Any], Optional[str]]]:
    """(GPU, legacy branch row, CUDA needed) for a GPU named in the facts whose newest driver is a legacy branch that
    cannot run the CUDA the program needs (torch's, else the toolkit stated; unknown: only a branch older than CUDA
    10, Tesla's 340 and Fermi's 390), else None. From the kb tables (legacy_branches, toolkit minimum drivers)."""
    needed = torch_cuda(fx) or fx.str("toolkit.nvcc_version") or None
    for g in gpus(fx):
        cap = g.get("capability")
        row = legacy_branch(str(cap)) if cap else None
        if not row:
            continue
        if needed:
            if kb.driver_supports_cuda(str(row["last"]), needed) is False:
                return g, row, needed
            continue
        top = kb.max_cuda_for_driver(str(row["last"]))
        if top is None or _cap(top) < (10, 0):
            return g, row, None
    return None


#: The driver not answering at all: nvidia-smi's "couldn't communicate", "No devices were found", NVML's driver not loaded.
_DRIVER_SILENT = re.compile(
    r"NVIDIA-SMI has failed because it couldn'?t communicate with the NVIDIA driver|\bNo devices were found\b"
    r"|NVML_ERROR_DRIVER_NOT_LOADED|Driver Not Loaded",
    re.I,
)


def legacy_gpu_driver_silent(fx: Facts) -> Optional[Finding]:
    """The driver does not answer (nvidia-smi cannot communicate, no devices found) on a machine whose only GPUs are of a
    generation current drivers dropped long ago (Kepler, Fermi: legacy branch 470 or older), the driver's version not
    stated: most likely a current driver (an updated image, a distribution's default) that ignores the GPU. A warning."""
    if driver_version(fx) or fx.bool("torch.cuda_available") is True:
        return None
    silent = _DRIVER_SILENT.search(text_of(fx))
    named = [g for g in gpus(fx) if g.get("capability") and g.get("capability_source") not in ("torch", "nvml")]
    if not silent or not named or len(named) != len(gpus(fx)):
        return None
    rows = [legacy_branch(str(g["capability"])) for g in named]
    if not all(r and int(r["last"]) <= 470 for r in rows):
        return None
    g, row = named[0], rows[0] or {}
    last, name = row["last"], g.get("name") or "this GPU"
    return GPU_NEEDS_LEGACY_DRIVER.finding(
        title=f"Likely: the installed driver does not drive the {name} ({row['generation']}, compute capability "
        f"{g['capability']}): drivers from {row['dropped_in']} on dropped it, and it needs the {last}.xx legacy driver",
        evidence={"driver_silent": silent.group(0), "gpu": name, "legacy_branch": last, "driver": None},
        fix=Fix(
            (
                "cat /proc/driver/nvidia/version; sudo dmesg | grep -i -A3 legacy  # the installed branch, and its words "
                "when it ignores a GPU",
                f"sudo apt-get install nvidia-driver-{last}  # Ubuntu/Debian; in a cloud image: an image version with "
                f"the {last} driver",
                "sudo reboot; nvidia-smi  # lists the GPU",
            ),
            f"NVIDIA's drivers from {row['dropped_in']} on do not drive {row['generation']} GPUs; an image or a "
            f"distribution installing a current driver leaves them unused.",
        ),
        severity="warning",
    )


def legacy_gpu_driver_error_finding(fx: Facts) -> Optional[Finding]:
    """A driver-too-old text (an insufficient driver, a missing driver entry point) on such a GPU: no current driver
    drives it, and its legacy branch is too old for the program's CUDA (driver_compat stands down for this)."""
    from cudadoctor.errortext import of_facts

    m = of_facts(fx).first("driver-too-old")
    hit = legacy_gpu_cannot_run(fx) if m else None
    if not (m and hit) or fx.bool("torch.cuda_available") is True:
        return None
    g, row, needed = hit
    last, name, cap = row["last"], g.get("name") or "this GPU", g.get("capability")
    top = kb.max_cuda_for_driver(str(last))
    runs = f"CUDA {top} at most" if top else "only CUDA releases older than the driver tables (6.5 and before)"
    return GPU_NEEDS_LEGACY_DRIVER.finding(
        title=f"The {name} ({row['generation']}, compute capability {cap}) is driven only by the {last}.xx legacy driver, "
        f"which is too old for {('CUDA ' + needed) if needed else 'this program'}: no driver upgrade fixes it",
        evidence={m.where: m.line_text, "gpu": name, "capability": cap, "legacy_branch": last, "cuda_needed": needed},
        fix=Fix(
            (
                f"# the newest driver for this GPU is the {last}.xx legacy branch ({runs}); a newer driver ignores the GPU",
                f"sudo apt-get install nvidia-driver-{last}  # Ubuntu/Debian; Windows: NVIDIA's legacy {last}.xx driver",
                f"# then use a build of the program for a CUDA that driver runs ({runs}), or a GPU of a supported generation",
            ),
            f"NVIDIA's drivers from {row['dropped_in']} on do not drive {row['generation']} GPUs, and the {last}.xx "
            "branch that does is older than the CUDA the program was built with.",
        ),
    )


def register():
    return [
        companion_cpu_only_build,
        windows_pagefile_too_small,
        cuda_library_missing,
        gpu_needs_legacy_driver,
        gpu_init_failed,
        shm_exhausted,
        device_ordinal_invalid,
        container_toolkit_missing,
        host_compiler_unsupported,
        toolkit_arch_unsupported,
        nvidia_uvm_stale,
        mkl_incompatible,
        cuda_home_not_set,
        open_kernel_module_unsupported,
    ]
