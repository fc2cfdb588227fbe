"""Where the facts come from and what kind of environment they describe.

Situation: ``live`` (probed on this machine), ``container``, ``wsl`` (both live), ``collect_env`` (read
from `python -m torch.utils.collect_env` text) or ``file`` (a facts/report file from elsewhere).
Also: OS and platform (the kb's names), how torch was installed (pip or conda), the library-path
variables and the libraries the torch process loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from cudadoctor.facts import Facts


def os_key(fx: Facts) -> str:
    """'windows', 'macos' or 'linux' (the default when unknown)."""
    s = " ".join(x for x in (fx.str("system.os"), fx.str("python.platform")) if x).lower()
    if "windows" in s or "win32" in s:
        return "windows"
    if "darwin" in s or "macos" in s or "mac os" in s:
        return "macos"
    return "linux"


def os_known(fx: Facts) -> bool:
    return bool(fx.str("system.os") or fx.str("python.platform"))


def os_family(fx: Facts) -> str:
    """'windows' or 'linux' as the driver and the install commands see it."""
    system = (fx.str("system.os") or "").lower()
    if "windows" in system or fx.str("python.platform") == "win32":
        return "windows"
    return "linux"


def driver_os(fx: Facts) -> str:
    """The kb's driver table to read: 'windows' or 'linux'."""
    return "windows" if os_key(fx) == "windows" else "linux"


def platform_key(fx: Facts) -> str:
    """The kb's platform names: linux-x86_64, linux-aarch64, windows, macos, macos-x86_64."""
    arch = (fx.str("system.arch") or "").lower()
    o = os_key(fx)
    if o == "windows":
        return "windows"
    if o == "macos":
        return "macos-x86_64" if arch in ("x86_64", "amd64", "i386") else "macos"
    if arch in ("aarch64", "arm64"):
        return "linux-aarch64"
    return "linux-x86_64"


def is_wsl(fx: Facts) -> Optional[bool]:
    w = fx.bool("system.wsl")
    if w is not None:
        return w
    for path in ("system.kernel", "python.platform", "system.os", "python.platform_full"):
        s = fx.str(path)
        if s and re.search(r"microsoft|\bWSL", s, re.IGNORECASE):
            return True
    return None


#: WSL 1 reports the Windows build in its kernel release ("4.4.0-19041-Microsoft"); WSL 2 kernels say
#: "microsoft-standard" ("5.15.153.1-microsoft-standard-WSL2", "4.19.128-microsoft-standard").
_WSL1_KERNEL = re.compile(r"^\d+\.\d+\.\d+-(\d+)-Microsoft\b")
_WSL1_KERNEL_IN = re.compile(r"\b\d+\.\d+\.\d+-(\d+)-Microsoft\b")


def wsl1_build(fx: Facts) -> Optional[str]:
    """The Windows build a WSL 1 kernel release names ("17763"), or None when this is not WSL 1."""
    m = _WSL1_KERNEL.search(fx.str("system.kernel") or "")
    for where in ("system.os", "system.distro") if not m else ():
        # a report's OS line may carry it: "Ubuntu on WSL (kernel 4.4.0-43-Microsoft)"
        m = _WSL1_KERNEL_IN.search(fx.str(where) or "")
        if m:
            break
    return m.group(1) if m and is_wsl(fx) is not False else None


def container(fx: Facts) -> Optional[str]:
    """'docker', 'kubernetes', ... when the facts were taken inside a container, else None."""
    return fx.str("system.container")


def conda_torch(fx: Facts) -> bool:
    """torch came from conda: the conda package is called `pytorch` (pip's is `torch`).

    Our probe reads the dist-info INSTALLER file, which conda writes; the collect_env reader marks
    `[conda]` lines as installer conda only when they are conda's own (a `pypi` channel line is pip).
    """
    for d in fx.dicts("packages.distributions"):
        name = str(d.get("name", "")).lower()
        if name not in ("torch", "pytorch"):
            continue
        if str(d.get("package", "")).lower() == "pytorch" or str(d.get("installer", "")).lower() == "conda":
            return True
    return False


def in_conda_env(fx: Facts) -> bool:
    return bool(fx.bool("python.conda")) or conda_torch(fx) or bool(fx.distribution("cudatoolkit"))


def installer(fx: Facts, dist: str = "torch") -> str:
    """'conda' or 'pip': how the distribution was installed (pip when unknown)."""
    d = fx.distribution(dist) or fx.distribution("pytorch")
    inst = (d or {}).get("installer")
    if isinstance(inst, str) and inst.strip().lower() == "conda":
        return "conda"
    if fx.distribution("cpuonly") or fx.get("packages.conda.cpuonly"):
        return "conda"
    return "pip"


def situation(fx: Facts) -> str:
    """'live', 'container', 'wsl', 'collect_env' or 'file' (see the module's docstring)."""
    origin = fx.origin
    if origin != "live":
        return origin if origin in ("collect_env", "file") else "file"
    if container(fx):
        return "container"
    return "wsl" if is_wsl(fx) else "live"


# ---------------------------------------------------------------- libraries and paths


def loaded_libraries(fx: Facts) -> Optional[List[Dict[str, str]]]:
    """CUDA-related libraries the torch process mapped (None when not recorded)."""
    seen: Dict[str, Dict[str, str]] = {}
    recorded = False
    for path in ("torch.loaded_libraries.libraries", "torch.loaded_libraries_before_init.libraries"):
        lst = fx.list(path)
        if lst is None:
            continue
        recorded = True
        for d in lst:
            if isinstance(d, dict) and isinstance(d.get("path"), str):
                p = d["path"]
                if p not in seen:
                    seen[p] = {
                        "name": str(d.get("name") or p.rsplit("/", 1)[-1]),
                        "path": p,
                        "realpath": str(d.get("realpath") or p),
                    }
    return list(seen.values()) if recorded else None


def split_path_var(value: Optional[str], sep: str = ":") -> List[str]:
    if not value:
        return []
    return [p for p in value.split(sep) if p]


def ld_library_path(fx: Facts) -> Optional[List[str]]:
    v = fx.env("LD_LIBRARY_PATH")
    if v is not None:
        return split_path_var(v)
    lst = fx.list("environment.ld_library_path")
    if lst is not None and fx.env_recorded():
        return [p for p in lst if isinstance(p, str) and p]
    return None


def ld_preload(fx: Facts) -> List[str]:
    v = fx.env("LD_PRELOAD") or ""
    return [p for p in re.split(r"[\s:]+", v) if p]


_CUDA_DIR = re.compile(
    r"(/cuda[^/]*/|/cudnn|/nvidia/|/nccl|/tensorrt|/cuda$|/cuda-[\d.]+$|/targets/[^/]+-linux/lib)", re.IGNORECASE
)


def cuda_like_dir(d: str) -> bool:
    return bool(_CUDA_DIR.search(d.rstrip("/") + ("/" if not d.endswith("/") else "")) or _CUDA_DIR.search(d))


@dataclass(frozen=True)
class Environment:
    """The interpreted environment, what fix planning needs to write commands for this machine."""

    situation: str  #: live | container | wsl | collect_env | file
    os: str  #: linux | windows | macos (linux when unknown)
    driver_os: str  #: linux | windows: which driver table applies
    platform: str  #: the kb's platform name (linux-x86_64, ...)
    container: Optional[str]
    wsl: Optional[bool]
    installer: str  #: how torch was installed: pip | conda
    conda_torch: bool  #: torch is the conda `pytorch` package
    conda_env: bool  #: a conda environment (so conda commands are possible)
    python: Optional[str]  #: '3.11.7'
    companions: Tuple[str, ...]  #: torchvision / torchaudio, installed (or the default when packages are unknown)
    installed_companions: Tuple[str, ...]  #: torchvision / torchaudio as the installed packages list them
    #: the facts themselves, for the installer layer (checks/_installer.py: conda, uv, pip...)
    facts: Optional[Facts] = field(default=None, repr=False, compare=False)


def wanted_companions(fx: Facts) -> Tuple[str, ...]:
    """Companions an install command should carry: those installed; torchvision when packages are unknown."""
    out = []
    for name in ("torchvision", "torchaudio"):
        if fx.distribution(name) or fx.dict(f"torch.companions.{name}"):
            out.append(name)
        elif name == "torchvision" and not fx.dicts("packages.distributions"):
            out.append(name)
    return tuple(out)


def environment(fx: Facts) -> Environment:
    return Environment(
        situation=situation(fx),
        os=os_key(fx),
        driver_os=driver_os(fx),
        platform=platform_key(fx),
        container=container(fx),
        wsl=is_wsl(fx),
        installer=installer(fx),
        conda_torch=conda_torch(fx),
        conda_env=in_conda_env(fx),
        python=fx.str("python.version"),
        companions=wanted_companions(fx),
        installed_companions=tuple(n for n in ("torchvision", "torchaudio") if fx.distribution(n)),
        facts=fx,
    )
