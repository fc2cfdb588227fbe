"""In-process probes of the operating system, environment and CUDA toolkit.

These only read small files and environment variables (plus one bounded ``nvcc --version``);
the orchestrator still runs each in a thread with a timeout. ``root`` lets tests point the
file reads at a fake tree.
"""

from __future__ import annotations

import glob
import os
import platform
import re
import shutil
import socket
import stat
import sys
from typing import Any, Dict, List, Optional

from . import proc

NVIDIA_VENDOR = "0x10de"


def _read(path: str, limit: int = 65536) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def os_release(root: str = "/") -> Optional[str]:
    text = _read(os.path.join(root, "etc/os-release"))
    if not text:
        return None
    fields = dict((k, v.strip().strip('"')) for k, _, v in (line.partition("=") for line in text.splitlines()) if k and v)
    return fields.get("PRETTY_NAME") or fields.get("NAME")


def pci_nvidia_devices(root: str = "/") -> Optional[List[Dict[str, Any]]]:
    """NVIDIA devices on the PCI bus (Linux sysfs); None when the bus cannot be read."""
    base = os.path.join(root, "sys/bus/pci/devices")
    if not os.path.isdir(base):
        return None
    found = []
    for dev in sorted(os.listdir(base)):
        d = os.path.join(base, dev)
        vendor = (_read(os.path.join(d, "vendor"), 64) or "").strip().lower()
        if vendor != NVIDIA_VENDOR:
            continue
        cls = (_read(os.path.join(d, "class"), 64) or "").strip().lower()
        # 0x03xxxx display controllers (VGA 0x0300, 3D 0x0302); skip audio/USB functions.
        if not cls.startswith("0x03"):
            continue
        drv = os.path.join(d, "driver")
        found.append(
            {
                "address": dev,
                "device_id": (_read(os.path.join(d, "device"), 64) or "").strip() or None,
                "class": cls or None,
                "driver": os.path.basename(os.readlink(drv)) if os.path.islink(drv) else None,
            }
        )
    return found


def kernel_modules(root: str = "/") -> Optional[Dict[str, bool]]:
    text = _read(os.path.join(root, "proc/modules"), 1 << 20)
    if text is None:
        return None
    loaded = {line.split(" ", 1)[0] for line in text.splitlines() if line}
    return {m: m in loaded for m in ("nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nouveau")}


def nvidia_kernel_driver_version(root: str = "/") -> Optional[str]:
    """The loaded kernel module's version, from /proc/driver/nvidia/version."""
    text = _read(os.path.join(root, "proc/driver/nvidia/version"), 4096)
    if not text:
        return None
    m = re.search(r"Kernel Module(?: for [\w]+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def container(root: str = "/") -> Optional[str]:
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if os.path.exists(os.path.join(root, "run/.containerenv")):
        return "podman"
    if os.path.exists(os.path.join(root, ".dockerenv")):
        return "docker"
    cg = _read(os.path.join(root, "proc/1/cgroup"), 65536) or ""
    for key, name in (
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ):
        if key in cg:
            return name
    if os.environ.get("container"):
        return os.environ["container"]
    return None


def dev_shm(root: str = "/") -> Optional[Dict[str, Any]]:
    """/dev/shm, where torch.multiprocessing (DataLoader workers) and NCCL put shared memory: its size, free
    space, mode (octal; 1777 is the standard) and whether this user may create files in it. None when absent
    or unreadable."""
    path = os.path.join(root, "dev/shm")
    try:
        st = os.stat(path)
        vfs = os.statvfs(path)
    except (OSError, AttributeError):  # statvfs: not on Windows
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None
    return {
        "mode": format(stat.S_IMODE(st.st_mode), "o"),
        "size_bytes": vfs.f_frsize * vfs.f_blocks,
        "free_bytes": vfs.f_frsize * vfs.f_bavail,
        "writable": os.access(path, os.W_OK | os.X_OK),
    }


def wsl(root: str = "/") -> bool:
    rel = (_read(os.path.join(root, "proc/sys/kernel/osrelease"), 256) or "").lower()
    return "microsoft" in rel or "wsl" in rel


def libc() -> Optional[str]:
    try:
        name, ver = platform.libc_ver()
    except (OSError, ValueError):
        return None
    return f"{name} {ver}".strip() or None


def probe_system(root: str = "/") -> Dict[str, Any]:
    linux = sys.platform.startswith("linux")
    out: Dict[str, Any] = {
        "os": platform.system() or sys.platform,
        "kernel": platform.release() or None,
        "arch": platform.machine() or None,
        "hostname": socket.gethostname() or None,
    }
    if linux:
        out.update(
            distro=os_release(root),
            libc=libc(),
            container=container(root),
            wsl=wsl(root),
            pci_nvidia_devices=pci_nvidia_devices(root),
            kernel_modules=kernel_modules(root),
            nvidia_kernel_driver=nvidia_kernel_driver_version(root),
            dev_nvidia=sorted(os.path.basename(p) for p in glob.glob(os.path.join(root, "dev/nvidia*"))),
            wsl_lib_dir=os.path.isdir(os.path.join(root, "usr/lib/wsl/lib")),
            ld_so_conf_cuda=ld_so_conf_cuda(root),
            dev_shm=dev_shm(root),
        )
    elif sys.platform == "win32":
        out.update(distro=platform.version() or None, windows_release=platform.release() or None)
    elif sys.platform == "darwin":
        out.update(distro="macOS " + (platform.mac_ver()[0] or ""))
    return out


def ld_so_conf_cuda(root: str = "/") -> List[str]:
    """Directories the dynamic loader is configured to search that look like CUDA/NVIDIA ones."""
    dirs: List[str] = []
    for conf in sorted(glob.glob(os.path.join(root, "etc/ld.so.conf.d/*.conf"))):
        for line in (_read(conf) or "").splitlines():
            line = line.strip()
            if line and not line.startswith("#") and re.search(r"cuda|nvidia|cudnn", line, re.I):
                dirs.append(line)
    return dirs


# Environment variables that matter. Names that look secret are never read at all.
_ENV_EXACT = (
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDNN_HOME",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONNOUSERSITE",
    "PYTHONHOME",
    "OMP_NUM_THREADS",
    "SLURM_JOB_ID",
    "SLURM_STEP_GPUS",
    "SLURM_JOB_GPUS",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
)
_ENV_PREFIXES = ("PYTORCH_", "TORCH_", "NCCL_", "CUDA_", "CUDNN_", "CUBLAS_", "NVIDIA_", "TORCHINDUCTOR_")
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|CERT", re.I)
# Bounded repetitions: an unbounded scheme pattern is quadratic on a long run of letters.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://)[^/\s@]{1,512}@")


def scrub_value(value: str) -> str:
    """Drop user:password@ from URLs in a value."""
    return _URL_USERINFO.sub(r"\g<scheme>***@", value)


def probe_environment(environ: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    env = os.environ if environ is None else environ
    names = sorted(n for n in env if not SECRET_NAME.search(n) and (n in _ENV_EXACT or n.startswith(_ENV_PREFIXES)))
    vars_ = {n: scrub_value(env[n][:4096]) for n in names[:200]}
    path = env.get("PATH", "")
    sep = ";" if sys.platform == "win32" else ":"
    cuda_path_dirs = [p[:1024] for p in path.split(sep) if re.search(r"cuda|nvidia|cudnn", p, re.I)][:100]
    return {
        "vars": vars_,
        "path_cuda_dirs": cuda_path_dirs,
        "ld_library_path": [p[:1024] for p in env.get("LD_LIBRARY_PATH", "").split(":") if p][:200],
        "secret_names_skipped": True,
    }


def _nvcc_candidates(environ: Dict[str, str]) -> List[str]:
    cands = []
    exe = "nvcc.exe" if sys.platform == "win32" else "nvcc"
    w = shutil.which(exe, path=environ.get("PATH"))
    if w:
        cands.append(w)
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        if environ.get(var):
            cands.append(os.path.join(environ[var], "bin", exe))
    if sys.platform.startswith("linux"):
        cands.append("/usr/local/cuda/bin/nvcc")
    seen = []
    for c in cands:
        if c not in seen and os.path.isfile(c):
            seen.append(c)
    return seen


def probe_toolkit(environ: Optional[Dict[str, str]] = None, timeout: float = 10.0, nice: int = 0) -> Dict[str, Any]:
    env = dict(os.environ if environ is None else environ)
    out: Dict[str, Any] = {"cuda_home": env.get("CUDA_HOME") or env.get("CUDA_PATH")}
    cands = _nvcc_candidates(env)
    out["nvcc_candidates"] = cands
    if not cands:
        out["nvcc"] = None
        return out
    nvcc = cands[0]
    out["nvcc"] = nvcc
    r = proc.run([nvcc, "--version"], timeout=timeout, nice=nice)
    if r.status != "ok":
        out["nvcc_error"] = r.describe() + (": " + r.stderr_tail.strip()[-300:] if r.stderr_tail.strip() else "")
        return out
    m = re.search(r"release (\d+\.\d+), V([\d.]+)", r.stdout_tail)
    if m:
        out["nvcc_version"] = m.group(1)
        out["nvcc_version_full"] = m.group(2)
    else:
        out["nvcc_error"] = "could not parse: " + r.stdout_tail.strip()[-200:]
    return out
