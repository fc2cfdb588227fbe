"""Exact install commands for the catalogue's fixes, for THIS machine. Pure: reads facts and the kb.

pip is the default; torch that came from conda (the `pytorch` conda package) gets conda commands
while the PyTorch conda channel still published that release (up to 2.5), and pip inside the conda
env after that.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from cudadoctor.facts import Facts

from ._common import INDEX, PIP, kb, python_rejected
from ._views import conda_torch, mm, os_key, vtuple

#: The last release the PyTorch conda channel published (its packages stopped after 2.5).
CONDA_LAST = (2, 5)
#: pytorch-cuda metapackage versions that existed on the nvidia channel.
CONDA_PYTORCH_CUDA = {"cu116": "11.6", "cu117": "11.7", "cu118": "11.8", "cu121": "12.1", "cu124": "12.4"}


def known_series() -> List[str]:
    """Every release series the kb knows ('2.15', ..., '1.8'), newest first (public kb API only)."""
    k = kb()
    if not k:
        return []
    out = []
    try:
        newest = vtuple(k.newest_release()) or (2, 0)
    except Exception:
        newest = (2, 0)
    for major in range(newest[0], 0, -1):
        for minor in range(40, -1, -1):
            if (major, minor) > newest[:2]:
                continue
            try:
                if k.torch_release(f"{major}.{minor}"):
                    out.append(f"{major}.{minor}")
            except Exception:
                pass
    return out


def release_info(release: Optional[str]) -> Optional[dict]:
    k = kb()
    if not (k and release):
        return None
    try:
        return k.torch_release(release)
    except Exception:
        return None


def newest_patch(series: str) -> str:
    r = release_info(series)
    return r["version"] if r else series


def companion_pin(name: str, release: Optional[str]) -> str:
    """'torchvision==0.21.0' for the release (series pins as '==0.21.*'); bare name when unknown."""
    r = release_info(release)
    ver = r.get(name) if r else None
    if not ver:
        return name
    return f"{name}=={ver}" if len(vtuple(ver) or ()) >= 3 else f"{name}=={ver}.*"


def wants(fx: Facts, name: str) -> bool:
    """Should the install command carry this companion? Yes when installed, or packages unknown."""
    if fx.distribution(name) or fx.dict(f"torch.companions.{name}"):
        return True
    return name == "torchvision" and not fx.dicts("packages.distributions")


def runnable_variants(release: str, driver: Optional[str], os_name: str) -> List[str]:
    """CUDA variants of a release the driver runs, newest first ([] when unknown)."""
    k = kb()
    if not (k and driver):
        return []
    try:
        return list(k.variants_for_driver(release, driver, os_name))
    except Exception:
        return []


def newest_runnable(driver: Optional[str], os_name: str, python: Optional[str] = None,
                    need=None) -> Optional[Tuple[str, str]]:
    """(release, variant): the newest release with a CUDA variant the driver runs (and python fits)."""
    k = kb()
    if not (k and driver):
        return None
    for series in known_series():
        if python_rejected(series, python):
            continue
        for v in runnable_variants(series, driver, os_name):
            if need is None or need(series, v):
                return newest_patch(series), v
    return None


def pip_install(release: Optional[str], variant: Optional[str], companions: Sequence[str] = ("torchvision",),
                reinstall: bool = False) -> str:
    """`python -m pip install torch==R torchvision==V --index-url .../variant`."""
    t = vtuple(release) if release else None
    old = bool(t and t[:2] < (1, 8))  # before the per-variant indexes: the torch_stable.html links page
    parts = [PIP, "install"]
    if reinstall:
        parts.append("--force-reinstall")
    if release:
        parts.append(f"torch=={release}+{variant}" if old and variant else f"torch=={release}")
    else:
        parts.append("torch")
    parts += [companion_pin(c, release) for c in companions]
    if variant:
        parts.append(f"-f {INDEX}torch_stable.html" if old else f"--index-url {INDEX}{variant}")
    return " ".join(parts)


def install_commands(fx: Facts, release: Optional[str], variant: Optional[str], reinstall: bool = False,
                     companions: Optional[Sequence[str]] = None) -> List[str]:
    """Commands that put torch `release` built for `variant` (and its paired companions) in place."""
    if companions is None:
        companions = [c for c in ("torchvision", "torchaudio") if wants(fx, c)]
    from ._installer import install_for_manager  # conda-forge, uv and the rest: the env's own installer
    managed = install_for_manager(fx, release, variant, companions, reinstall, pip_install)
    if managed is not None:
        return managed
    if conda_torch(fx):
        t = mm(release) if release else None
        if t and t <= CONDA_LAST and variant and (variant == "cpu" or variant in CONDA_PYTORCH_CUDA or t < (1, 13)):
            pins = [f"pytorch=={release}"] + [companion_pin(c, release) for c in companions]
            if variant == "cpu":
                extra = "cpuonly"
            elif t < (1, 13):
                extra = f"cudatoolkit={variant[2:-1]}.{variant[-1]}"
            else:
                extra = f"pytorch-cuda={CONDA_PYTORCH_CUDA[variant]}"
            chans = "-c pytorch" + (" -c nvidia" if extra.startswith("pytorch-cuda") else "")
            cmds = [f"conda install {' '.join(pins)} {extra} {chans}"]
            if variant != "cpu":
                cmds.insert(0, "conda remove --force cpuonly  # only if installed: it pins the CPU build")
            return cmds
        return [f"conda remove --force pytorch {' '.join(companions)}  # the PyTorch conda channel stopped after 2.5; use pip inside this env",
                pip_install(release, variant, companions, reinstall)]
    return [pip_install(release, variant, companions, reinstall)]


def driver_os(fx: Facts) -> str:
    return "windows" if os_key(fx) == "windows" else "linux"
