"""Fix planning: the exact commands of the catalogue's fixes, for THIS machine. Pure: reads the kb.

Every function that writes an install command takes the interpreted environment
(:class:`cudadoctor.interpret.Environment`: installer, OS, companions installed...) as a parameter
and never re-reads facts, so the commands can follow the installer in one place.

pip is the default; torch that came from conda (the `pytorch` conda package) gets conda commands
while the PyTorch conda channel still published that release (up to 2.5), and pip inside the conda
env after that.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

from cudadoctor import kb
from cudadoctor.interpret import Environment, mm, vtuple

INDEX = "https://download.pytorch.org/whl/"
PIP = "python -m pip"
#: The last release the PyTorch conda channel published (its packages stopped after 2.5).
CONDA_LAST = (2, 5)
#: pytorch-cuda metapackage versions that existed on the nvidia channel.
CONDA_PYTORCH_CUDA = {"cu116": "11.6", "cu117": "11.7", "cu118": "11.8", "cu121": "12.1", "cu124": "12.4"}


# ---------------------------------------------------------------- what the kb offers

def known_series() -> List[str]:
    """Every release series the kb knows ('2.15', ..., '1.8'), newest first (public kb API only)."""
    newest = vtuple(kb.newest_release()) or (2, 0)
    out = []
    for major in range(newest[0], 0, -1):
        for minor in range(40, -1, -1):
            if (major, minor) <= newest[:2] and kb.torch_release(f"{major}.{minor}"):
                out.append(f"{major}.{minor}")
    return out


def release_info(release: Optional[str]) -> Optional[dict]:
    return kb.torch_release(release) if release else None


def newest_patch(series: str) -> str:
    r = release_info(series)
    return r["version"] if r else series


def python_rejected(series: str, python: Optional[str]) -> bool:
    """True only when the knowledge base says release ``series`` has no wheels for ``python``."""
    return bool(python) and kb.python_supported(series, python) is False


def runnable_variants(release: str, driver: Optional[str], os_name: str) -> List[str]:
    """CUDA variants of a release the driver runs, newest first ([] when unknown)."""
    return list(kb.variants_for_driver(release, driver, os_name)) if driver else []


def newest_variant_for_driver(release: Optional[str], driver: Optional[str], os_name: str = "linux") -> Optional[str]:
    """The newest CUDA wheel variant of ``release`` that ``driver`` can run."""
    if not (release and driver):
        return None
    variants = kb.variants_for_driver(release, driver, os_name)
    return variants[0] if variants else None


def newest_runnable(driver: Optional[str], os_name: str, python: Optional[str] = None,
                    need: Optional[Callable[[str, str], bool]] = None) -> Optional[Tuple[str, str]]:
    """(release, variant): the newest release with a CUDA variant the driver runs (and python fits)."""
    if not driver:
        return None
    for series in known_series():
        if python_rejected(series, python):
            continue
        for v in runnable_variants(series, driver, os_name):
            if need is None or need(series, v):
                return newest_patch(series), v
    return None


# ---------------------------------------------------------------- companions

def companion_pin(name: str, release: Optional[str]) -> str:
    """'torchvision==0.21.0' for the release (series pins as '==0.21.*'); bare name when unknown."""
    r = release_info(release)
    ver = r.get(name) if r else None
    if not ver:
        return name
    return f"{name}=={ver}" if len(vtuple(ver) or ()) >= 3 else f"{name}=={ver}.*"


def companion_pins(env: Environment, release: Optional[str]) -> List[str]:
    """'torchvision==X' (and torchaudio when installed) paired with ``release``; bare names when unknown."""
    pins = []
    installed = env.installed_companions
    for name in ("torchvision", "torchaudio"):
        if name != "torchvision" and name not in installed:
            continue
        r = release_info(release)
        ver = (kb.torchvision_for_torch(release) if name == "torchvision" else (r or {}).get("torchaudio")) if release else None
        if ver:
            pins.append(f"{name}=={ver}")
        elif name in installed:
            pins.append(name)
    return pins


# ---------------------------------------------------------------- commands

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


def _conda_install(release: str, variant: str, companions: Sequence[str]) -> List[str]:
    t = mm(release) or (0, 0)
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


def install_commands(env: Environment, release: Optional[str], variant: Optional[str], reinstall: bool = False,
                     companions: Optional[Sequence[str]] = None) -> List[str]:
    """Commands that put torch `release` built for `variant` (and its paired companions) in place."""
    if companions is None:
        companions = list(env.companions)
    if env.conda_torch:
        t = mm(release) if release else None
        if t and t <= CONDA_LAST and variant and (variant == "cpu" or variant in CONDA_PYTORCH_CUDA or t < (1, 13)):
            return _conda_install(str(release), variant, companions)
        return [f"conda remove --force pytorch {' '.join(companions)}  # the PyTorch conda channel stopped after 2.5; use pip inside this env",
                pip_install(release, variant, companions, reinstall)]
    return [pip_install(release, variant, companions, reinstall)]


def filtered_path_command(var: str, entries: List[str], drop: Callable[[str], bool]) -> str:
    """`export VAR=...` without the entries ``drop`` rejects (`unset VAR` when none is left)."""
    keep = [e for e in entries if not drop(e)]
    if not keep:
        return f"unset {var}"
    return f"export {var}={':'.join(keep)}"
