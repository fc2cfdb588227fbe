"""Derived views of facts used by the catalogue checks. Pure: no I/O, only reads facts and the kb.

Each function answers None (or []) when the facts cannot tell: callers report unknown, never ok.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from cudadoctor.facts import Facts

from ._common import kb, release_of, torch_build, torch_variant


def vtuple(v: Any) -> Optional[Tuple[int, ...]]:
    """'2.6.0+cu126' -> (2, 6, 0); None when there is no number."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        return None
    m = re.search(r"\d+(?:\.\d+)*", str(v))
    return tuple(int(p) for p in m.group(0).split(".")) if m else None


def mm(v: Any) -> Optional[Tuple[int, int]]:
    """major.minor of a version as a 2-tuple."""
    t = vtuple(v)
    if not t:
        return None
    return (t[0], t[1] if len(t) > 1 else 0)


def mm_str(v: Any) -> Optional[str]:
    t = mm(v)
    return f"{t[0]}.{t[1]}" if t else None


def _dist_version(fx: Facts, *names: str) -> Optional[str]:
    for n in names:
        d = fx.distribution(n)
        if d and isinstance(d.get("version"), str) and d["version"]:
            return d["version"]
    return None


def torch_version(fx: Facts) -> Optional[str]:
    """The torch version as imported, else as installed (pip or conda metadata)."""
    return fx.str("torch.version") or _dist_version(fx, "torch", "pytorch")


def torch_release(fx: Facts) -> Optional[str]:
    """'2.6.0' for the torch in use (imported, else installed)."""
    return release_of(torch_version(fx))


def torch_cuda(fx: Facts) -> Optional[str]:
    """CUDA version torch was built with ('12.6'), from torch.version.cuda or the wheel tag."""
    c = fx.str("torch.cuda")
    if c:
        return c
    v = torch_version(fx) or ""
    m = re.search(r"\+cu(\d+)(\d)\b", v)
    if m:
        return f"{int(m.group(1))}.{m.group(2)}"
    return None


def variant(fx: Facts) -> Optional[str]:
    """'cu126', 'cpu'... for the torch in use, also from installed metadata."""
    v = torch_variant(fx)
    if v:
        return v
    ver = torch_version(fx) or ""
    m = re.search(r"\+(cu\d+|cpu|rocm[\d.]+)", ver)
    if m:
        return m.group(1)
    c = torch_cuda(fx)
    if c and mm(c):
        a, b = mm(c)
        return f"cu{a}{b}"
    return None


def is_cuda_build(fx: Facts) -> Optional[bool]:
    b = torch_build(fx)
    if b is not None:
        return b == "cuda"
    if torch_cuda(fx):
        return True
    v = variant(fx)
    if v:
        return v.startswith("cu")
    return None


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


# ---------------------------------------------------------------- GPUs and architectures

def _cap_str(v: Any) -> Optional[str]:
    if isinstance(v, str) and re.fullmatch(r"\d+\.\d+", v.strip()):
        return v.strip()
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return f"{v[0]}.{v[1]}"
    return None


def _name(v: Any) -> Optional[str]:
    return v.strip() if isinstance(v, str) and v.strip() else None


def gpus(fx: Facts) -> List[Dict[str, Any]]:
    """Every GPU the facts name: {index, name, capability, capability_source}; capability may be None."""
    out: Dict[Any, Dict[str, Any]] = {}
    for i, d in enumerate(fx.dicts("torch.devices")):
        idx = d.get("index") if isinstance(d.get("index"), int) else i
        cap = _cap_str(d.get("capability"))
        if cap is None and isinstance(d.get("major"), int) and isinstance(d.get("minor"), int):
            cap = f"{d['major']}.{d['minor']}"
        out[("t", idx)] = {"index": idx, "name": _name(d.get("name")), "capability": cap,
                           "capability_source": "torch" if cap else None}
    if not out:
        for i, d in enumerate(fx.dicts("nvml.devices")):
            idx = d.get("index") if isinstance(d.get("index"), int) else i
            cap = _cap_str(d.get("compute_capability"))
            out[("n", idx)] = {"index": idx, "name": _name(d.get("name")), "capability": cap,
                               "capability_source": "nvml" if cap else None}
    k = kb()
    for g in out.values():
        if g["capability"] is None and g.get("name") and k:
            try:
                cap = k.compute_capability(str(g["name"]))
            except Exception:
                cap = None
            if cap:
                g["capability"], g["capability_source"] = cap, "kb (by GPU name)"
    return list(out.values())


def build_arch_list(fx: Facts) -> Tuple[Optional[List[str]], Optional[str]]:
    """(archs, source) of the torch build: the live torch.cuda.get_arch_list() wins over the kb."""
    live = fx.list("torch.arch_list")
    if live and all(isinstance(a, str) for a in live):
        return list(live), "torch.cuda.get_arch_list()"
    k, rel, var = kb(), torch_release(fx), variant(fx)
    if k and rel and var and var.startswith("cu"):
        try:
            a = k.arch_list(rel, var)
        except Exception:
            a = None
        if a:
            return list(a.get("sass", [])) + list(a.get("ptx", [])), f"kb: official torch {mm_str(rel)} {var} wheel"
    return None, None


def arch_number(a: str) -> Optional[int]:
    m = re.match(r"(?:sm|compute)_(\d+)", a)
    return int(m.group(1)) if m else None


def cap_number(cap: str) -> Optional[int]:
    m = re.fullmatch(r"(\d+)\.(\d+)", cap or "")
    return int(m.group(1)) * 10 + int(m.group(2)) if m else None


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
                    seen[p] = {"name": str(d.get("name") or p.rsplit("/", 1)[-1]), "path": p,
                               "realpath": str(d.get("realpath") or p)}
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


_CUDA_DIR = re.compile(r"(/cuda[^/]*/|/cudnn|/nvidia/|/nccl|/tensorrt|/cuda$|/cuda-[\d.]+$|/targets/[^/]+-linux/lib)", re.IGNORECASE)


def cuda_like_dir(d: str) -> bool:
    return bool(_CUDA_DIR.search(d.rstrip("/") + ("/" if not d.endswith("/") else "")) or _CUDA_DIR.search(d))


def filtered_path_command(var: str, entries: List[str], drop) -> str:
    keep = [e for e in entries if not drop(e)]
    if not keep:
        return f"unset {var}"
    return f"export {var}={':'.join(keep)}"


def decode_cudnn(n: Any) -> Optional[Tuple[int, int, int]]:
    """cuDNN's integer version: 7102 -> (7, 1, 2); 8902 -> (8, 9, 2); 92400 -> (9, 24, 0)."""
    if isinstance(n, str):
        t = vtuple(n)
        if t and len(t) >= 2 and t[0] < 100:
            return (t[0], t[1], t[2] if len(t) > 2 else 0)
        if t and len(t) == 1:
            n = t[0]
        else:
            return None
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return None
    if n >= 10000:
        return (n // 10000, (n % 10000) // 100, n % 100)
    return (n // 1000, (n % 1000) // 100, n % 100)


def fmt_cudnn(t: Optional[Tuple[int, int, int]]) -> str:
    return ".".join(str(x) for x in t) if t else "unknown"
