"""Small pure helpers shared by the built-in checks: derived views of facts, and fix commands.

Nothing here does I/O. The knowledge base (``cudadoctor.kb``) is read-only package data.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple

from cudadoctor.errortext.signatures import code_pattern
from cudadoctor.errortext.sources import error_texts  # noqa: F401  (re-exported for the checks)
from cudadoctor.facts import Facts

try:  # the knowledge base is package data; degrade to generic fixes if it is missing
    from cudadoctor import kb as _kb
except ImportError:  # pragma: no cover - only when the package is incomplete
    _kb = None

INDEX = "https://download.pytorch.org/whl/"
PIP = "python -m pip"


def kb():
    return _kb


def python_rejected(series: str, python: Optional[str]) -> bool:
    """True only when the knowledge base says release ``series`` has no wheels for ``python``."""
    if not (python and _kb):
        return False
    try:
        return _kb.python_supported(series, python) is False
    except Exception:
        return False


def torch_build(fx: Facts) -> Optional[str]:
    """'cuda', 'rocm' or 'cpu' for the torch build, None when unknown."""
    t = fx.dict("torch") or {}
    version = fx.str("torch.version") or ""
    if fx.str("torch.hip"):
        return "rocm"
    if fx.str("torch.cuda"):
        return "cuda"
    if "+cpu" in version:
        return "cpu"
    m = re.search(r"\+(cu\d+|rocm[\d.]+)", version)
    if m:
        return "cuda" if m.group(1).startswith("cu") else "rocm"
    # torch.cuda present and null means the build has no CUDA: but only when torch was
    # actually read (imported, or its version.py read), not when the key is merely unknown.
    if "cuda" in t and t.get("cuda") is None and version:
        if t.get("status") in ("ok", "skipped") or fx.origin == "collect_env":
            return "cpu"
    return None


def torch_variant(fx: Facts) -> Optional[str]:
    """'cu124', 'cpu', 'rocm6.2'... for the installed torch, None when unknown."""
    version = fx.str("torch.version") or ""
    m = re.search(r"\+(cu\d+|cpu|rocm[\d.]+)", version)
    if m:
        return m.group(1)
    cuda = fx.str("torch.cuda")
    if cuda:
        parts = cuda.split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            return f"cu{parts[0]}{parts[1]}"
    if torch_build(fx) == "cpu":
        return "cpu"
    return None


def release_of(version: Optional[str]) -> Optional[str]:
    """'2.6.0+cu126' -> '2.6.0'."""
    if not isinstance(version, str) or not version:
        return None
    return version.split("+", 1)[0] or None


def nvidia_gpu_present(fx: Facts) -> Optional[bool]:
    """Does this machine have an NVIDIA GPU? None when the facts cannot tell."""
    if fx.int("nvml.device_count") or fx.dicts("nvml.devices") or fx.int("torch.device_count"):
        return True
    pci = fx.list("system.pci_nvidia_devices")
    if pci is not None:
        return len(pci) > 0
    return None


def driver_version(fx: Facts) -> Optional[str]:
    return fx.str("nvml.driver_version")


def kernel_module(fx: Facts, name: str = "nvidia") -> Optional[bool]:
    mods = fx.dict("system.kernel_modules")
    if mods is None:
        return None
    v = mods.get(name)
    return v if isinstance(v, bool) else None


def any_of(patterns: Iterable[str]) -> str:
    """One regex matching any of ``patterns`` (e.g. a code's signatures), for :func:`find_text`."""
    return "|".join(f"(?:{p})" for p in patterns)


def error_match(fx: Facts, code) -> Optional[Tuple[str, str]]:
    """The first error text matching any signature of ``code`` (the engine's data and the Code's own)."""
    pattern = code_pattern(code)
    return find_text(fx, pattern) if pattern else None


def find_text(fx: Facts, pattern: str) -> Optional[Tuple[str, str]]:
    """The first error text matching ``pattern`` (regex, case-insensitive): (where, matched line)."""
    rx = re.compile(pattern, re.IGNORECASE)
    for where, text in error_texts(fx):
        m = rx.search(text) or rx.search(re.sub(r"\s+", " ", text))
        if m:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.end())
            return where, text[start: end if end != -1 else None].strip()[:400]
    return None


def installer(fx: Facts, dist: str = "torch") -> str:
    """'conda' or 'pip': how the distribution was installed (pip when unknown)."""
    d = fx.distribution(dist) or fx.distribution("pytorch")
    inst = (d or {}).get("installer")
    if isinstance(inst, str) and inst.strip().lower() == "conda":
        return "conda"
    if fx.distribution("cpuonly") or fx.get("packages.conda.cpuonly"):
        return "conda"
    return "pip"


def newest_variant_for_driver(release: Optional[str], driver: Optional[str], os_name: str = "linux") -> Optional[str]:
    """The newest CUDA wheel variant of ``release`` that ``driver`` can run."""
    k = kb()
    if not (k and release and driver):
        return None
    try:
        variants = k.variants_for_driver(release, driver, os_name)
    except Exception:
        return None
    return variants[0] if variants else None


def companion_pins(fx: Facts, release: Optional[str]) -> List[str]:
    """'torchvision==X' (and torchaudio) paired with ``release``, for the companions installed."""
    pins = []
    k = kb()
    for name, fn in (("torchvision", "torchvision_for_torch"), ("torchaudio", None)):
        if not fx.distribution(name) and name != "torchvision":
            continue
        ver = None
        if k and release:
            try:
                if fn:
                    ver = getattr(k, fn)(release)
                else:
                    rel = k.torch_release(release)
                    ver = (rel or {}).get("torchaudio")
            except Exception:
                ver = None
        if ver:
            pins.append(f"{name}=={ver}")
        elif fx.distribution(name):
            pins.append(name)
    return pins


def os_family(fx: Facts) -> str:
    system = (fx.str("system.os") or "").lower()
    if "windows" in system or fx.str("python.platform") == "win32":
        return "windows"
    return "linux"
