"""Answers to a support engineer's questions, read from the knowledge base tables (``cudadoctor kb``).

"Which driver does CUDA 12.8 need?" (:func:`driver`), "which wheels have sm_120?" (:func:`arch`),
"which torchvision goes with torch 2.6?" (:func:`pair`), "what is an RTX 4090's compute capability?"
(:func:`gpu`). Each answer is a plain dict (what ``kb ... --format json`` prints) that names the tables
it read, so the sources and the date checked travel with it. A question the tables cannot answer is a
:class:`QueryError` whose message is one line (no guessing).
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Dict, List, Optional

from . import (
    _cap,
    _load,
    _norm_gpu,
    _tv,
    arch_runs,
    compute_capability,
    cores_per_sm,
    cuda_of_variant,
    driver_supports_cuda,
    max_cuda_for_driver,
    min_driver_for_cuda,
    parse_version,
    releases_with_arch,
    torch_for_torchvision,
    torch_release,
)


class QueryError(ValueError):
    """A question the tables cannot answer, or one that is not well formed; the message is one line."""


def _tables(*names: str) -> List[Dict[str, Any]]:
    return [{"table": n, "checked": _load(n).get("checked"), "sources": _load(n).get("sources") or []} for n in names]


def _variants_known() -> List[str]:
    """Every CUDA wheel variant any known release published, newest CUDA first."""
    seen = {v for r in _load("torch_releases")["releases"].values() for v in r["variants"] if cuda_of_variant(v)}
    return sorted(seen, key=lambda v: _tv(cuda_of_variant(v)), reverse=True)


def _series_with_variant(variant: str) -> List[str]:
    rel = _load("torch_releases")["releases"]
    return sorted((s for s, r in rel.items() if variant in r["variants"]), key=_tv)


# ---------------------------------------------------------------- driver


def driver(arg: str) -> Dict[str, Any]:
    """A CUDA version ("12.8"): the drivers it needs on Linux and Windows. A driver version
    ("570.124.04", first number 100 or more): the CUDA it supports and the wheel variants it runs."""
    v = parse_version(arg)
    if v is None or not re.fullmatch(r"\s*\d+(\.\d+)*\s*", str(arg)):
        raise QueryError(f"{arg!r} is neither a CUDA version (such as 12.8) nor a driver version (such as 570.124.04)")
    if v[0] >= 100:
        return _driver_answer(arg.strip(), v)
    return _cuda_answer(v)


def _cuda_answer(v: tuple) -> Dict[str, Any]:
    t = _load("cuda_drivers")
    cuda = f"{v[0]}.{v[1] if len(v) > 1 else 0}"
    toolkit = t["toolkit_min_driver"].get(cuda)
    branches = [(b, c) for b, c in t["driver_branch_cuda"] if c == cuda]
    if toolkit is None and not branches:
        known = sorted(set(t["toolkit_min_driver"]) | {c for _b, c in t["driver_branch_cuda"]}, key=_tv)
        raise QueryError(f"CUDA {cuda} is not in the driver table (it knows CUDA {known[0]} to {known[-1]})")
    floor = {os: min_driver_for_cuda(cuda, os) for os in ("linux", "windows")} if v[0] >= 11 else None
    branches_known = t["driver_branch_cuda"]
    # the first branch at or above this CUDA; None when the CUDA is older than the oldest branch the table has
    native = next((b for b, c in branches_known if _tv(c) >= _tv(cuda)), None) if _tv(branches_known[0][1]) <= _tv(cuda) else None
    variant = f"cu{v[0]}{v[1] if len(v) > 1 else 0}"
    return {
        "question": "driver",
        "cuda": cuda,
        "minor_compat_min_driver": floor,
        "toolkit_driver": {os: (toolkit or {}).get(os) for os in ("linux", "windows")} if toolkit else None,
        "native_branch": native,
        "torch_variant": variant,
        "torch_releases": _series_with_variant(variant),
        "notes": [
            "minor_compat_min_driver: the oldest driver that runs code built with this CUDA (minor-version "
            "compatibility, CUDA 11 and later): what a PyTorch wheel needs; a few features (PTX JIT of newer PTX) need more.",
            "toolkit_driver: the driver bundled with the CUDA toolkit's first release of this minor.",
            "native_branch: the first driver branch whose nvidia-smi prints this CUDA version or a later one.",
        ],
        "tables": _tables("cuda_drivers", "torch_releases"),
    }


def _driver_answer(arg: str, v: tuple) -> Dict[str, Any]:
    cuda = max_cuda_for_driver(arg)
    if cuda is None:
        raise QueryError(f"driver {arg} is older than every branch in the driver table (R384, CUDA 9.0)")
    runs: List[str] = []
    not_runs: List[str] = []
    for variant in _variants_known():
        c = cuda_of_variant(variant) or ""
        ok = {os: driver_supports_cuda(arg, c, os) for os in ("linux", "windows")}
        (runs if ok["linux"] else not_runs).append(variant)
    return {
        "question": "driver",
        "driver": arg,
        "branch": v[0],
        "cuda": cuda,
        "torch_variants_it_runs": runs,
        "torch_variants_too_new": not_runs,
        "notes": [
            "cuda: the CUDA version nvidia-smi prints for this driver's branch (the newest it supports natively; "
            "newer branches than the table knows get its newest, a lower bound).",
            "torch_variants_it_runs: PyTorch wheel variants whose CUDA this driver runs on Linux, natively or by "
            "minor-version compatibility.",
        ],
        "tables": _tables("cuda_drivers", "torch_releases"),
    }


# ---------------------------------------------------------------- arch

_ARCH_ARG = re.compile(r"\s*(?:(sm|compute)_)?(\d{1,3})(\d)([af]?)\s*|\s*(\d{1,2})\.(\d)\s*", re.I)


def arch(arg: str) -> Dict[str, Any]:
    """An architecture ("sm_120", "compute_90", "sm_90a", "12.0", "120"): the GPUs that have it and the
    official Linux x86_64 wheels (release, variant) that run it, natively (SASS) or by PTX JIT."""
    m = _ARCH_ARG.fullmatch(str(arg))
    cc = _cap(f"{m.group(5)}.{m.group(6)}" if m and m.group(5) else f"{m.group(2)}{m.group(3)}" if m else "")
    if m is None or cc is None:
        raise QueryError(f"{arg!r} is not an architecture: write sm_120, compute_90, sm_90a or a capability such as 12.0")
    cap = f"{cc[0]}.{cc[1]}"
    builds = _load("torch_arch_lists")["builds"]
    wheels = []
    for series, variant in releases_with_arch(cap):
        archs = builds[series][variant]
        wheels.append({"release": series, "variant": variant, "runs": arch_runs(cap, archs)})
    gpus = _load("gpu_compute_capability")["gpus"].get(cap) or []
    compiled = {a for b in builds.values() for archs in b.values() for a in archs}
    if not gpus and not {f"sm_{cc[0]}{cc[1]}", f"compute_{cc[0]}{cc[1]}"} & compiled:
        raise QueryError(f"no known GPU or wheel has compute capability {cap} ({arg.strip()}): see `cudadoctor kb gpu NAME`")
    return {
        "question": "arch",
        "arch": f"sm_{cc[0]}{cc[1]}",
        "capability": cap,
        "gpus": list(gpus),
        "cores_per_sm": cores_per_sm(cap),
        "wheels": wheels,
        "notes": [
            "wheels: official Linux x86_64 wheels whose compiled architectures run on this capability "
            "(runs 'sass': a native cubin; 'ptx': JIT-compiled from PTX at first use, slower to start). "
            "A live torch.cuda.get_arch_list() wins over this table.",
        ],
        "tables": _tables("torch_arch_lists", "gpu_compute_capability", "cores_per_sm"),
    }


# ---------------------------------------------------------------- pair

PACKAGES = ("torch", "torchvision", "torchaudio")


def _torch_for_torchaudio(version: str) -> Optional[str]:
    t = parse_version(version)
    if not t:
        return None
    want = ".".join(str(x) for x in t[:3])
    mm = f"{t[0]}.{t[1] if len(t) > 1 else 0}"
    fallback = None
    for series, r in sorted(_load("torch_releases")["releases"].items(), key=lambda kv: _tv(kv[0])):
        for patch, (_, ta) in r["patches"].items():
            if ta == want:
                return patch
        if r.get("torchaudio") == mm:
            fallback = series
    return fallback


def pair(package: str, version: str) -> Dict[str, Any]:
    """The torch, torchvision and torchaudio releases that go together, from one of them."""
    package = package.strip().lower()
    if package not in PACKAGES:
        raise QueryError(f"unknown package {package!r}: pair knows {', '.join(PACKAGES)}")
    if parse_version(version) is None:
        raise QueryError(f"{version!r} is not a version of {package}")
    if package == "torch":
        torch = version
    elif package == "torchvision":
        torch = torch_for_torchvision(version) or ""
    else:
        torch = _torch_for_torchaudio(version) or ""
    r = torch_release(torch) if torch else None
    if r is None:
        rel = sorted(_load("torch_releases")["releases"], key=_tv)
        raise QueryError(f"{package} {version} is not in the release table (it knows torch {rel[0]} to {rel[-1]})")
    return {
        "question": "pair",
        "asked": {"package": package, "version": version},
        "torch": r["version"],
        "torchvision": r["torchvision"],
        "torchaudio": r["torchaudio"],
        "date": r["date"],
        "python": r["python"],
        "variants": r["variants"],
        "default_variant": r["default_variant"],
        "notes": [
            "A companion given as a series (0.21) means the release table pairs the series, not a patch; "
            "null: the table knows no such release paired with this torch."
        ],
        "tables": _tables("torch_releases"),
    }


# ---------------------------------------------------------------- gpu


def gpu(name: str) -> Dict[str, Any]:
    """A GPU's compute capability by name, as nvidia-smi or torch print it, and the wheels that run it."""
    if not str(name).strip():
        raise QueryError('give a GPU name, such as "RTX 4090" or "NVIDIA A100-SXM4-80GB"')
    t = _load("gpu_compute_capability")
    cap = compute_capability(name)
    if cap is None:
        key = _norm_gpu(name)
        if any(_norm_gpu(a) == key for a in t["ambiguous"]) or any(
            _norm_gpu(n) == key for names in t["gpus"].values() for n in names
        ):
            raise QueryError(f"{name!r} names GPUs of more than one compute capability: give the full name nvidia-smi prints")
        names = {_norm_gpu(n): n for names in t["gpus"].values() for n in names}
        near = difflib.get_close_matches(key, list(names), n=3, cutoff=0.6)
        hint = "; did you mean " + " or ".join(repr(names[k]) for k in near) + "?" if near else ""
        raise QueryError(f"{name!r} is not in the GPU table{hint}")
    wheels = releases_with_arch(cap)
    builds = _load("torch_arch_lists")["builds"]
    return {
        "question": "gpu",
        "gpu": name,
        "capability": cap,
        "arch": "sm_" + cap.replace(".", ""),
        "cores_per_sm": cores_per_sm(cap),
        "wheels": [{"release": s, "variant": v, "runs": arch_runs(cap, builds[s][v])} for s, v in wheels],
        "notes": ["wheels: official Linux x86_64 wheels that run on this GPU (see `cudadoctor kb arch`)."],
        "tables": _tables("gpu_compute_capability", "torch_arch_lists", "cores_per_sm"),
    }
