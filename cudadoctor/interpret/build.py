"""The torch build: version, wheel variant, the CUDA (or ROCm) it was built with, its GPU architectures.

Reads what torch said when imported (``torch.*``) and, when it was not imported, what is installed
(``packages.distributions``: pip or conda metadata). Every function answers None when the facts
cannot tell; callers report unknown, never ok.
"""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from cudadoctor.facts import Facts

from .versions import cuda_of_variant, mm_str, release_of, variant_of_cuda, variant_of_tag


def _kb():
    """The knowledge base, imported on first use: kb reads interpret.versions, so a top-level import
    here is a cycle (harmless in one thread, a half-initialised module when two threads import)."""
    from cudadoctor import kb

    return kb


def dist_version(fx: Facts, *names: str) -> Optional[str]:
    """The version of the first of ``names`` that is installed (pip or conda metadata)."""
    for n in names:
        d = fx.distribution(n)
        if d and isinstance(d.get("version"), str) and d["version"]:
            return d["version"]
    return None


def torch_version(fx: Facts) -> Optional[str]:
    """The torch version as imported, else as installed (pip or conda metadata)."""
    return fx.str("torch.version") or dist_version(fx, "torch", "pytorch")


def torch_release(fx: Facts) -> Optional[str]:
    """'2.6.0' for the torch in use (imported, else installed)."""
    return release_of(torch_version(fx))


def torch_cuda(fx: Facts) -> Optional[str]:
    """CUDA version torch was built with ('12.6'), from torch.version.cuda or the wheel tag."""
    return fx.str("torch.cuda") or cuda_of_variant(variant_of_tag(torch_version(fx)))


def build_kind(fx: Facts) -> Optional[str]:
    """'cuda', 'rocm' or 'cpu' for the imported torch's build (its version string), None when unknown."""
    t = fx.dict("torch") or {}
    version = fx.str("torch.version") or ""
    if fx.str("torch.hip"):
        return "rocm"
    if fx.str("torch.cuda"):
        return "cuda"
    tag = variant_of_tag(version)
    if tag and tag != "xpu":
        return "cpu" if tag == "cpu" else "cuda" if tag.startswith("cu") else "rocm"
    # torch.cuda present and null means the build has no CUDA: but only when torch was
    # actually read (imported, or its version.py read), not when the key is merely unknown.
    if "cuda" in t and t.get("cuda") is None and version:
        if t.get("status") in ("ok", "skipped") or fx.origin == "collect_env":
            return "cpu"
    return None


def imported_variant(fx: Facts) -> Optional[str]:
    """'cu124', 'cpu', 'rocm6.2'... from what torch said (torch.version, torch.cuda), None when unknown."""
    version = fx.str("torch.version")
    tagged = variant_of_tag(version)
    if tagged and tagged != "xpu":
        return tagged
    cuda = variant_of_cuda(fx.str("torch.cuda"))
    if cuda:
        return cuda
    return "cpu" if build_kind(fx) == "cpu" else None


def variant(fx: Facts) -> Optional[str]:
    """'cu126', 'cpu'... for the torch in use, also from installed metadata."""
    v = imported_variant(fx)
    if v:
        return v
    tagged = variant_of_tag(torch_version(fx))
    if tagged and tagged != "xpu":
        return tagged
    return variant_of_cuda(torch_cuda(fx))


def is_cuda_build(fx: Facts) -> Optional[bool]:
    b = build_kind(fx)
    if b is not None:
        return b == "cuda"
    if torch_cuda(fx):
        return True
    v = variant(fx)
    if v:
        return v.startswith("cu")
    return None


def arch_number(a: str) -> Optional[int]:
    """'sm_86' / 'compute_90' -> 86 / 90."""
    m = re.match(r"(?:sm|compute)_(\d{1,4})(?!\d)", a) if isinstance(a, str) else None
    return int(m.group(1)) if m else None


def build_arch_list(fx: Facts) -> Tuple[Optional[List[str]], Optional[str]]:
    """(archs, source) of the torch build: the live torch.cuda.get_arch_list() wins over the kb."""
    live = fx.list("torch.arch_list")
    if live and all(isinstance(a, str) for a in live):
        return list(live), "torch.cuda.get_arch_list()"
    rel, var = torch_release(fx), variant(fx)
    version = fx.str("torch.version") or ""
    if re.search(r"\.dev\d{8}|a0\+git|\+git", version):
        return None, None  # a nightly or a source build: its list is not the release's (arch_bound still applies)
    if rel and var and var.startswith("cu"):
        a = _kb().arch_list(rel, var)
        if a:
            return list(a.get("sass", [])) + list(a.get("ptx", [])), f"kb: official torch {mm_str(rel)} {var} wheel"
    return None, None


def arch_bound(fx: Facts) -> Tuple[Optional[List[str]], Optional[str]]:
    """(archs, source) any official wheel built with this build's CUDA has, for when the build's own list is
    unknown (release unknown, a nightly or a source build): a GPU newer than every one of them cannot run
    a build made with that CUDA. (None, None) for a non-CUDA or unknown variant."""
    var = variant(fx)
    b = _kb().variant_archs(var) if var and var.startswith("cu") else None
    if b:
        rels = b["releases"]
        return list(
            b["archs"]
        ), f"kb: every official {var} wheel (torch {rels[0]}–{rels[-1]}) built with CUDA {cuda_of_variant(var)}"
    cuda, why = (cuda_of_variant(var), f"torch's {var} build") if var and var.startswith("cu") else old_release_cuda(fx)
    archs = _kb().archs_of_cuda(cuda) if cuda else None
    if not archs:
        return None, None
    return archs, f"kb: CUDA {cuda} ({why}) builds code up to {archs[-1]}; its cuDNN and cuBLAS have none for a newer GPU"


def old_release_cuda(fx: Facts) -> Tuple[Optional[str], Optional[str]]:
    """(CUDA, why) for a torch release before 1.7 with its build unknown: the newest CUDA any of its wheels was built
    with, which for those releases is the CUDA of PyPI's default wheel (previous-versions page; kb/torch_releases.json
    pypi_linux_cuda_before_1_13). (None, None) for a later or unknown release, or a build known not to be CUDA."""
    rel = torch_release(fx)
    mm = mm_str(rel) if rel else None
    if not mm or build_kind(fx) in ("cpu", "rocm") or not re.match(r"1\.[0-6]$", mm):
        return None, None
    cuda = _kb().pypi_default_cuda_before_1_13(mm)
    return (cuda, f"the newest CUDA of any torch {mm} wheel") if cuda else (None, None)


def newer_than_all(cap: Optional[str], archs: Optional[List[str]]) -> bool:
    """Is a GPU of capability ``cap`` newer than every architecture in ``archs`` (and no PTX in them runs on it)?"""
    from .gpus import arch_runs, cap_number  # gpus imports nothing from here; kept local to keep the layers flat

    n = cap_number(cap)
    nums = [x for x in (arch_number(a) for a in archs or []) if x]
    return bool(n and nums and n > max(nums) and arch_runs(cap, archs) is None)
