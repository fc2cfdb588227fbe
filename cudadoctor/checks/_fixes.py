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
from cudadoctor.interpret import Environment, mm, mm_str, release_of, vtuple

from ._installer import (
    companion_pin,
    conda_installed,
    install_for_manager,
    pytorch_channel_cuda,
    pytorch_channel_publishes,
)

INDEX = "https://download.pytorch.org/whl/"
PIP = "python -m pip"


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
    return python is not None and python != "" and kb.python_supported(series, python) is False


def runnable_variants(release: str, driver: Optional[str], os_name: str) -> List[str]:
    """CUDA variants of a release the driver runs, newest first ([] when unknown)."""
    return list(kb.variants_for_driver(release, driver, os_name)) if driver else []


def newest_variant_for_driver(release: Optional[str], driver: Optional[str], os_name: str = "linux") -> Optional[str]:
    """The newest CUDA wheel variant of ``release`` that ``driver`` can run."""
    if not (release and driver):
        return None
    variants = kb.variants_for_driver(release, driver, os_name)
    return variants[0] if variants else None


def newest_runnable(
    driver: Optional[str], os_name: str, python: Optional[str] = None, need: Optional[Callable[[str, str], bool]] = None
) -> Optional[Tuple[str, str]]:
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


def pip_install(
    release: Optional[str], variant: Optional[str], companions: Sequence[str] = ("torchvision",), reinstall: bool = False
) -> str:
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
    """The PyTorch channel's command for ``release``, as its previous-versions page writes it: cpuonly,
    cudatoolkit=X (before 1.13) or pytorch-cuda=X -c nvidia, X the channel's CUDA build nearest the
    variant's (kb/installers.json); the caller checked the channel has it (_installer.pytorch_channel_cuda)."""
    t = mm(release) or (0, 0)
    pins = [f"pytorch=={release}"] + [companion_pin(c, release) for c in companions]
    found = pytorch_channel_cuda(release, variant)
    cuda, forge = found if found else ("", False)
    if variant == "cpu" or not cuda:
        extra = "cpuonly"
    elif t < (1, 13):
        extra = f"cudatoolkit={cuda}"
    else:
        extra = f"pytorch-cuda={cuda}"
    chans = "-c pytorch" + (" -c nvidia" if extra.startswith("pytorch-cuda") else " -c conda-forge" if forge else "")
    cmds = [f"conda install {' '.join(pins)} {extra} {chans}"]
    if extra != "cpuonly":
        cmds.insert(0, "conda remove --force cpuonly  # only if installed: it pins the CPU build")
    return cmds


def install_commands(
    env: Environment,
    release: Optional[str],
    variant: Optional[str],
    reinstall: bool = False,
    companions: Optional[Sequence[str]] = None,
) -> List[str]:
    """Commands that put torch `release` built for `variant` (and its paired companions) in place.

    A torch of the same release already installed gets ``--force-reinstall`` whatever the caller
    says: pip takes ``torch==2.5.1`` from any index as satisfied by an installed 2.5.1+cu121 (a local
    version matches a specifier without one) and would change nothing."""
    if companions is None:
        companions = list(env.companions)
    reinstall = reinstall or same_release_installed(env, release)
    if env.facts is not None:
        # conda-forge, uv and the rest: the env's own installer
        managed = install_for_manager(env.facts, release, variant, companions, reinstall, pip_install)
        if managed is not None:
            return managed
    if env.conda_torch:
        if variant and pytorch_channel_publishes(release, variant):
            cmds = _conda_install(str(release), variant, companions)
            if env.facts is not None:
                if conda_installed(env.facts, "cpuonly") is False:  # conda's list is here and has no cpuonly
                    cmds = [c for c in cmds if not c.startswith("conda remove --force cpuonly")]
            return cmds
        return [
            f"conda remove --force pytorch {' '.join(companions)}  # the PyTorch conda channel stopped after 2.5; use pip inside this env",
            pip_install(release, variant, companions, reinstall),
        ]
    return [pip_install(release, variant, companions, reinstall)]


def installed_torch(env: Environment) -> Optional[str]:
    """The torch version installed in the diagnosed environment ('2.5.1+cu121'), None when none is known."""
    fx = env.facts
    if fx is None:
        return None
    return fx.str("torch.version") or (fx.distribution("torch") or fx.distribution("pytorch") or {}).get("version")


def same_release_installed(env: Environment, release: Optional[str]) -> bool:
    """A torch is installed that an install of ``release`` (any release when None) would leave in place."""
    have = release_of(installed_torch(env))
    return bool(have) and (release is None or have == release)


def filtered_path_command(var: str, entries: List[str], drop: Callable[[str], bool]) -> str:
    """`export VAR=...` without the entries ``drop`` rejects (`unset VAR` when none is left)."""
    keep = [e for e in entries if not drop(e)]
    if not keep:
        return f"unset {var}"
    return f"export {var}={':'.join(keep)}"


def _variant_kind(v: Optional[str]) -> Optional[str]:
    return None if not v else "cuda" if v.startswith("cu") else v


def companion_fix(
    env: Environment,
    name: str,
    trel: Optional[str],
    tvar: Optional[str],
    cvar: Optional[str],
    driver: Optional[str],
    gpu_here: bool,
) -> Tuple[List[str], str]:
    """(commands, why) for a companion that does not match torch: the companion paired with this torch,
    from torch's own index, torch left alone; on a GPU machine with a CPU torch, torch moves to CUDA."""
    idx = f" --index-url {INDEX}{tvar}" if tvar else ""
    if trel and gpu_here and _variant_kind(tvar) == "cpu" and _variant_kind(cvar) == "cuda":
        target = newest_variant_for_driver(trel, driver, env.driver_os) or (cvar if cvar and cvar.startswith("cu") else None)
        cmds = (
            install_commands(env, trel, target, reinstall=True)
            if target
            else [
                f"{PIP} install --force-reinstall torch=={trel} {companion_pin(name, trel)}  # add the --index-url of your driver's CUDA variant"
            ]
        )
        return cmds, "This machine has an NVIDIA GPU: install torch's CUDA build and the paired companion from one index."
    if trel:
        pin = companion_pin(name, trel)
        if env.conda_torch and (mm(trel) or (9, 9)) <= (2, 5):
            cmds = install_commands(env, trel, tvar, companions=[name])
        else:
            cmds = [f"{PIP} install --force-reinstall --no-deps {pin}{idx}"]
        return cmds, (
            f"{pin.replace('==', ' ')} is the release paired with torch {trel}"
            + (f"; the {tvar} index has the build matching torch's" if tvar else "")
            + "."
        )
    if not idx:
        idx = (
            ' --index-url https://download.pytorch.org/whl/$(python -c "import torch; c = torch.version.cuda; '
            "print('cu' + c.replace('.', '') if c else 'cpu')\")"
        )
    cmds = [
        f"{PIP} install --force-reinstall torch==$(python -c \"import torch; print(torch.__version__.split('+')[0])\") {name}{idx}"
    ]
    return cmds, f"Installing torch's own release together with {name} from one index makes pip pick the paired build."


def arch_candidates(env: Environment, cap: str, driver: Optional[str], release: Optional[str]) -> List[Tuple[str, str]]:
    """(series, variant) whose official wheel runs on `cap`, filtered by driver and Python; this release first."""
    out = []
    for series, var in kb.releases_with_arch(cap):
        cuda = kb.cuda_of_variant(var)
        if driver and cuda and kb.driver_supports_cuda(driver, cuda, env.driver_os) is False:
            continue
        if python_rejected(series, env.python):
            continue
        out.append((series, var))
    if release:
        same = [p for p in out if mm(p[0]) == mm(release)]
        out = same + [p for p in out if p not in same]
    return out


def _arch_commands(
    env: Environment,
    cap: Optional[str],
    sm: str,
    release: Optional[str],
    driver: Optional[str],
    too_old: bool,
    cands: List[Tuple[str, str]],
) -> Tuple[List[str], str]:
    if cands:
        series, v = cands[0]
        target = release if (release and mm(series) == mm(release)) else newest_patch(series)
        others = ", ".join(f"{s} {x}" for s, x in cands[1:4])
        return (
            install_commands(env, target, v, reinstall=target == release),
            f"The official torch {series} {v} wheel includes kernels for {sm}"
            + (f" and driver {driver} runs it" if driver else "")
            + "."
            + (f" Also: {others}." if others else ""),
        )
    if cap and too_old:
        last = next(iter(kb.releases_with_arch(cap)), None)
        if last:
            return (
                install_commands(env, newest_patch(last[0]), last[1]),
                f"torch {last[0]} {last[1]} is the newest official wheel with kernels for {sm}.",
            )
        return (
            [
                "# No official wheel in cudadoctor's tables (torch 1.7 and later) has kernels for " + sm + ":",
                f"# build from source for it: TORCH_CUDA_ARCH_LIST={cap} python setup.py develop  (see https://github.com/pytorch/pytorch#from-source)",
                "# or use an older torch release that still shipped "
                + sm
                + " (see https://pytorch.org/get-started/previous-versions/)",
            ],
            f"{sm} was dropped from PyTorch's official builds; only a source build or an older release has kernels for it.",
        )
    if not cap:
        return (
            [
                "nvidia-smi --query-gpu=name,compute_cap --format=csv  # the GPU's capability, e.g. 12.0 = sm_120",
                'python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list())"  # what this build has',
                "# then install a release/variant whose list has that sm_ (newer GPUs: the newest CUDA variant; "
                "older GPUs: an older release): https://pytorch.org/get-started/previous-versions/",
            ],
            "Every kernel launch needs SASS for the GPU's architecture or PTX it can compile.",
        )
    if driver:
        cmds = [
            "# No release in cudadoctor's tables has kernels for " + sm + " in a variant driver " + driver + " runs:",
            "# upgrade the driver, then install the newest CUDA variant: https://pytorch.org/get-started/locally/",
        ]
    else:
        cmds = [
            f"{PIP} install --pre torch torchvision --index-url {INDEX}nightly/cu130  # nightlies support the newest GPUs first"
        ]
    return cmds, f"The GPU is newer than the architectures in this build; a newer CUDA variant adds {sm}."


def arch_fix(
    env: Environment, cap: Optional[str], release: Optional[str], driver: Optional[str], too_old: bool
) -> Tuple[List[str], str]:
    """(commands, why) for a GPU the build has no kernels for: the newest release/variant that has them and
    that the driver and Python run; an older release for a GPU too old; a driver note when it is unknown."""
    sm = f"sm_{cap.replace('.', '')}" if cap else "its architecture"
    cands = arch_candidates(env, cap, driver, release) if cap else []
    cmds, why = _arch_commands(env, cap, sm, release, driver, too_old, cands)
    if cands and not driver:
        cuda = kb.cuda_of_variant(cands[0][1])
        need = kb.min_driver_for_cuda(cuda, env.driver_os) if cuda else None
        if need:
            cmds.append(f"# the {cands[0][1]} build needs NVIDIA driver >= {need} (check: nvidia-smi)")
    return cmds, why


def _python_commands(env: Environment, lo: Optional[str], hi: Optional[str], req: Optional[str]) -> List[str]:
    """Create an environment with a Python the wanted torch has wheels for."""
    py = env.python
    cmds: List[str] = []
    rel = release_of(req) if req else None
    if rel:
        rng = (kb.torch_release(rel) or {}).get("python") or {}
        lo, hi = rng.get("min") or lo, rng.get("max") or hi
    pyt, top, bottom = mm(py), mm(hi) if hi else None, mm(lo) if lo else None
    target = hi if (pyt and top and pyt > top) else lo if (pyt and bottom and pyt < bottom) else None
    if not py:
        cmds.append(
            "python -c \"import sys, platform, struct; print(sys.version, platform.machine(), struct.calcsize('P') * 8, 'bit')\""
        )
    if target:
        cmds += [
            f"# create the environment with Python {target} (supported by the torch you want):",
            f"uv venv --python {target} .venv  # or: conda create -n torch python={target}; or python{target} -m venv .venv",
            f".venv/bin/python -m pip install torch{('==' + rel) if rel else ''} torchvision",
        ]
    else:
        cmds.append(
            f"# use a 64-bit CPython {lo}–{hi} on x86_64/aarch64 Linux, 64-bit Windows or Apple-silicon macOS"
            if lo and hi
            else "# use a 64-bit CPython on x86_64/aarch64 Linux, 64-bit Windows or Apple-silicon macOS"
        )
    if req and "+" in req:
        cmds.append(
            f"# a pin with a local tag (+{req.split('+', 1)[1]}) is only on PyTorch's index: add --index-url {INDEX}{req.split('+', 1)[1]}"
        )
    return cmds


def python_fix(env: Environment, bits: Optional[int], arch_unsupported: bool, req: Optional[str]) -> Tuple[List[str], str]:
    """(commands, why) for an interpreter PyTorch publishes no wheel for: a 64-bit Python, another machine,
    or a Python version in the range the wanted (else the newest) release supports."""
    py = env.python
    newest = kb.newest_release()
    rng = (kb.torch_release(newest) or {}).get("python") or {}
    good_py = rng.get("max")
    win = env.os == "windows"
    if bits == 32:
        ver = (mm_str(py) or py) if py else good_py
        cmds = [
            f'# install the 64-bit Python {ver} from https://www.python.org/downloads/ ("Windows installer (64-bit)")',
            f"py -{ver}-64 -m venv .venv" if win else f"python{good_py} -m venv .venv",
            (".venv\\Scripts\\python" if win else ".venv/bin/python") + " -m pip install torch torchvision",
        ]
    elif arch_unsupported:
        cmds = ["# use a 64-bit x86_64 or aarch64 system (or a 64-bit OS on this board), or build PyTorch from source"]
    else:
        cmds = _python_commands(env, rng.get("min"), rng.get("max"), req)
    return cmds, (
        "pip installs only wheels built for the interpreter's Python version, bitness and platform."
        + (f" The newest torch ({newest}) supports Python {rng.get('min')}–{rng.get('max')}." if rng else "")
    )


def driver_alternative(
    env: Environment,
    release: Optional[str],
    current: Optional[str],
    driver: Optional[str],
    api: Optional[str],
    api_runs: Callable[[str, str], bool],
) -> Optional[Tuple[str, str]]:
    """(release, variant) a too-old driver still runs: another variant of this release, else the newest
    release; with only the CUDA level the error text names (``api``), the first release with a variant at it."""
    if release and driver:
        vs = [v for v in runnable_variants(release, driver, env.driver_os) if v != current]
        return (release, vs[0]) if vs else newest_runnable(driver, env.driver_os, env.python)
    if not api:
        return None
    py = env.python
    for series in ([release] if release else []) + known_series():
        info = kb.torch_release(series) or {}
        if py and series != release and kb.python_supported(series, py) is False:
            continue
        vs = sorted(
            (v for v in info.get("variants", []) if api_runs(kb.cuda_of_variant(v) or "", api)),
            key=lambda v: mm(kb.cuda_of_variant(v)) or (0, 0),
            reverse=True,
        )
        if vs:
            return (release if series == release else newest_patch(series), vs[0])
    return None
