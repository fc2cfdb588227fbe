"""Install commands in the terms of the installer that manages the environment. Pure: facts + kb.

Fix planning (``_fixes.py``) decides *what* to install: torch release R built for variant V, with
its paired companions. This layer decides *how*, from what the pyenv probe recorded
(``python.manager``: pyvenv.cfg's ``uv`` key, conda-meta records, the EXTERNALLY-MANAGED marker, a
uv project) and the INSTALLER of torch's metadata:

========================  ======================================================================
manager                   command
========================  ======================================================================
``pip``                   ``python -m pip install torch==R ... --index-url .../whl/V`` (_fixes.py)
``pip-system-managed``    an OS-managed Python (PEP 668): a venv first, then pip inside it
``conda``                 torch is conda's: conda-forge's ``pytorch-gpu``/``pytorch-cpu`` (the
                          PyTorch channel only for releases it published, up to 2.5: _fixes.py)
``conda-pip``             a conda env whose torch came from pip: pip inside it (_fixes.py)
``uv-project``            a uv project's own environment: ``uv add`` with the variant's index
                          (``[[tool.uv.index]]`` + ``[tool.uv.sources]``), so ``uv sync`` keeps it
``uv-venv``               a venv uv made, or torch that ``uv pip`` installed: ``uv pip install``
========================  ======================================================================

Where each build is published is kb/installers.json (sources and date there).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from cudadoctor.facts import Facts
from cudadoctor.interpret import conda_torch, mm, os_key

from ._common import kb

PIP_LIKE = ("pip", "conda-pip")


def _table() -> Dict:
    k = kb()
    try:
        return k._load("installers") if k else {}
    except Exception:
        return {}


def _torch_installer(fx: Facts) -> Optional[str]:
    for d in fx.dicts("packages.distributions"):
        if str(d.get("name", "")).lower() in ("torch", "pytorch"):
            inst = d.get("installer")
            return str(inst).lower() if inst else None
    return None


def manager(fx: Facts) -> str:
    """How this environment is managed (see the table above); 'pip' when nothing says otherwise."""
    if conda_torch(fx):
        return "conda"
    if fx.bool("python.conda") or fx.dict("python.manager.conda_packages"):
        return "conda-pip"  # a conda env, torch from pip: pip is what this env already does
    project = fx.dict("python.manager.uv_project") or {}
    if project.get("is_this_env") and (project.get("lock") or project.get("tool_uv")):
        return "uv-project"
    if fx.str("python.manager.uv") or _torch_installer(fx) == "uv":
        return "uv-venv"
    if fx.bool("python.manager.externally_managed") and not fx.bool("python.venv"):
        return "pip-system-managed"
    return "pip"


def _pins(release: Optional[str], companions: Sequence[str], sep: str = "==") -> List[str]:
    from ._fixes import companion_pin

    out = [f"torch{sep}{release}" if release else "torch"]
    for c in companions:
        pin = companion_pin(c, release)
        out.append(pin.replace("==", sep, 1) if sep != "==" else pin)
    return out


def _q(spec: str) -> str:
    return f'"{spec}"' if any(ch in spec for ch in "<>*| ") else spec  # what a shell would misread


def uv_project_commands(fx: Facts, release: Optional[str], variant: Optional[str], companions: Sequence[str]) -> List[str]:
    """``uv add`` pinned to the variant's PyTorch index: uv writes the index and the sources."""
    t = _table().get("uv") or {}
    pins = " ".join(_q(p) for p in _pins(release, companions))
    if not variant:
        return [f"uv add {pins}"]
    name = str(t.get("index_name", "pytorch-{variant}")).format(variant=variant)
    url = str(t.get("index", "https://download.pytorch.org/whl/{variant}")).format(variant=variant)
    return [
        f"uv add {pins} --index {name}={url}  # writes [[tool.uv.index]] {name} and pins torch to it in [tool.uv.sources]",
        "uv sync  # the project's environment now matches uv.lock",
    ]


def uv_pip_commands(pip_command: str) -> List[str]:
    """The pip command of _fixes.pip_install, run by uv pip (same arguments; uv says --reinstall)."""
    cmd = pip_command.replace("python -m pip install", "uv pip install", 1).replace("--force-reinstall", "--reinstall")
    return [cmd]


def conda_forge_commands(
    fx: Facts, release: Optional[str], variant: Optional[str], companions: Sequence[str]
) -> Optional[List[str]]:
    """conda-forge's build of the release: pytorch-gpu (CUDA, limited to the variant's CUDA) or pytorch-cpu."""
    t = _table().get("conda_forge") or {}
    if variant and variant != "cpu" and os_key(fx) not in (t.get("cuda_os") or ["linux"]):
        return None  # no conda-forge CUDA build assumed here: pip inside the env
    series = ".".join(release.split(".")[:2]) if release else None
    pkg = t.get("cpu_package", "pytorch-cpu") if variant == "cpu" else t.get("gpu_package", "pytorch-gpu")
    specs = [f"{pkg}={series}" if series else pkg]
    from ._fixes import companion_pin

    for c in companions:  # conda-forge builds of the paired series (its patch numbering may differ)
        pin = companion_pin(c, release)
        specs.append(c + "=" + ".".join(pin.split("==", 1)[1].split(".")[:2]) if "==" in pin else pin)
    if variant and variant.startswith("cu") and variant[2:].isdigit():
        cuda = f"{variant[2:-1]}.{variant[-1]}"
        specs.append(f"{t.get('cuda_pin', 'cuda-version')}<={cuda}")
    chan = t.get("channel", "conda-forge")
    cmds = [f"conda install -c {chan} " + " ".join(_q(s) for s in specs)]
    channel = str((fx.dict("python.manager.conda_packages.pytorch") or {}).get("channel") or "")
    if channel and "conda-forge" not in channel:
        cmds.insert(
            0,
            f"conda remove --force {' '.join(['pytorch', *companions])}  # from the {channel.rstrip('/').split('/')[-1] or channel} "
            "channel; conda-forge's build replaces it",
        )
    return cmds


def _pytorch_channel_publishes(release: Optional[str], variant: Optional[str]) -> bool:
    t = _table().get("conda_pytorch_channel") or {}
    last = mm(str(t.get("last_series", "2.5")))
    r = mm(release) if release else None
    if not (r and last and r <= last and variant):
        return False
    return variant == "cpu" or variant in (t.get("pytorch_cuda") or {}) or r < (1, 13)


def install_for_manager(
    fx: Facts, release: Optional[str], variant: Optional[str], companions: Sequence[str], reinstall: bool, pip_command
) -> Optional[List[str]]:
    """Commands for the environment's manager, or None for pip's (planned by _fixes.install_commands).

    ``pip_command(release, variant, companions, reinstall)`` is _fixes.pip_install.
    """
    m = manager(fx)
    if m in PIP_LIKE:
        return None
    if m == "conda":
        channel = str((fx.dict("python.manager.conda_packages.pytorch") or {}).get("channel") or "")
        if _pytorch_channel_publishes(release, variant) and "conda-forge" not in channel:
            return None  # the PyTorch channel still has it: _fixes.py plans that
        return conda_forge_commands(fx, release, variant, companions)
    if m == "uv-project":
        return uv_project_commands(fx, release, variant, companions)
    if m == "uv-venv":
        return uv_pip_commands(pip_command(release, variant, companions, reinstall))
    if m == "pip-system-managed":
        venv_py = ".venv\\Scripts\\python" if os_key(fx) == "windows" else ".venv/bin/python"
        return [
            "python3 -m venv .venv  # this Python's packages are managed by the OS (PEP 668): use a venv",
            pip_command(release, variant, companions, reinstall).replace("python -m pip", f"{venv_py} -m pip", 1),
        ]
    return None
