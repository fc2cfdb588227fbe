"""How each fact is described for the diff: one short text per side, and what is compared.

A describer reads one Facts (through cudadoctor/interpret/ where a fact needs meaning) and returns
the text people read, or None when the fact is unknown on that side. Some areas compare something
other than the text (``cuda_state``, ``py_key``, the ``(text, key)`` pairs of ``torch_build`` and
``companion``), so that a reworded message is not a difference.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Optional, Tuple

from .. import kb as _kb
from ..facts import Facts, normalize_name
from ..interpret import cuda_of_variant, dist_version, local_tag, mm_str, release_of, torch_version


def torch_kind(fx: Facts) -> Optional[str]:
    """'cuda 13.0', 'rocm 6.2', 'cpu' or None (unknown)."""
    ver = torch_version(fx) or ""
    if fx.str("torch.hip"):
        return f"rocm {fx.str('torch.hip')}"
    if fx.str("torch.cuda"):
        return f"cuda {fx.str('torch.cuda')}"
    tag = local_tag(ver) or ""
    if tag == "cpu":
        return "cpu"
    if cuda_of_variant(tag):
        return f"cuda {cuda_of_variant(tag)}"
    if tag.startswith("rocm"):
        return f"rocm {tag[4:]}"
    t = fx.dict("torch") or {}
    if "cuda" in t and t.get("cuda") is None and ver and t.get("status") in ("ok", "skipped"):
        return "cpu"
    return None


def _kind_text(kind: Optional[str]) -> str:
    if kind is None:
        return "build unknown"
    if kind == "cpu":
        return "CPU-only build"
    name, ver = kind.split(" ", 1)
    return f"{'CUDA' if name == 'cuda' else 'ROCm'} {ver} build"


def _short_kind(kind: str) -> str:
    if kind == "cpu":
        return "CPU only"
    name, ver = kind.split(" ", 1)
    return f"{'CUDA' if name == 'cuda' else 'ROCm'} {ver}"


def _torch_installed(fx: Facts) -> Optional[bool]:
    st = fx.str("torch.status")
    if st == "not-installed" or (st == "skipped" and fx.get("torch.installed") is False):
        return False
    if torch_version(fx) or st in ("ok", "import-failed", "crashed", "timed-out"):
        return True
    return None


def torch_build(fx: Facts) -> Tuple[Optional[str], Optional[tuple]]:
    inst = _torch_installed(fx)
    if inst is False:
        return "not installed", ("none", "none")
    if inst is None:
        return None, None
    ver = torch_version(fx)
    kind = torch_kind(fx)
    return f"{ver or 'version unknown'} · {_kind_text(kind)}", (release_of(ver), kind)


def _first_line(s: Any, n: int = 160) -> str:
    text = str(s or "").strip().splitlines()
    line = text[-1] if text else ""
    return line if len(line) <= n else line[: n - 1] + "…"


def torch_import(fx: Facts) -> Optional[str]:
    st = fx.str("torch.status")
    if st in (None, "skipped", "not-installed"):
        return None
    if st == "ok":
        return "imports"
    err = fx.dict("torch.error") or {}
    msg = f"{err.get('type') or ''}: {err.get('message') or ''}".strip(": ")
    if not msg:
        fail = fx.dict("torch.failure") or {}
        msg = str(fail.get("how") or "")
    return f"{st}" + (f": {_first_line(msg)}" if msg else "")


def cuda_init(fx: Facts) -> Optional[str]:
    if fx.str("torch.status") != "ok":
        return None
    avail = fx.bool("torch.cuda_available")
    if avail is None:
        return None
    if avail:
        n = fx.int("torch.device_count")
        kernels = [d.get("kernel_ok") for d in fx.dicts("torch.devices")]
        text = f"available, {n if n is not None else '?'} device(s)"
        if kernels:
            text += ", test kernel " + ("ran" if all(k is True for k in kernels) else "FAILED")
        return text
    err = fx.dict("torch.cuda_init_error") or {}
    msg = err.get("message") or ""
    return "not available" + (f": {_first_line(msg, 140)}" if msg else "")


def cuda_state(fx: Facts) -> Any:
    """What is compared for CUDA initialisation: availability and kernel results, not the message."""
    return (
        fx.bool("torch.cuda_available"),
        fx.int("torch.device_count"),
        tuple(d.get("kernel_ok") for d in fx.dicts("torch.devices")),
    )


def driver(fx: Facts) -> Optional[str]:
    ver = fx.str("nvml.driver_version")
    kmod = fx.str("system.nvidia_kernel_driver")
    if ver:
        text = ver
        if fx.str("nvml.cuda_driver_version"):
            text += f" (CUDA ≤ {fx.str('nvml.cuda_driver_version')})"
        if kmod and kmod != ver:
            text += f", kernel module {kmod}"
        return text
    st = fx.str("nvml.status")
    if st and st not in ("ok", "running"):
        return f"not available (NVML: {st})" + (f", kernel module {kmod}" if kmod else "")
    return None


def companion(fx: Facts, name: str) -> Optional[Tuple[str, tuple]]:
    comp = fx.dict(f"torch.companions.{name}") or {}
    ver = comp.get("version") if isinstance(comp.get("version"), str) else None
    ver = ver or dist_version(fx, name)
    if not ver:
        if _torch_installed(fx) and fx.dicts("packages.distributions"):
            return "not installed", ("none",)
        return None
    parts = [ver]
    torch_ver = torch_version(fx)
    pair = None
    if torch_ver:
        want = (
            _kb.torchvision_for_torch(torch_ver)
            if name == "torchvision"
            else (_kb.torch_release(torch_ver) or {}).get("torchaudio")
        )
        if want:
            got = release_of(ver) or ""
            ok = got == want or (want.count(".") == 1 and mm_str(got) == want)
            pair = "pairs" if ok else f"torch {release_of(torch_ver)} expects {want}"
            parts.append(
                f"pairs with torch {mm_str(torch_ver)}"
                if ok
                else f"MISMATCH: torch {release_of(torch_ver)} expects {name} {want}"
            )
    tag, tkind = local_tag(ver), torch_kind(fx)
    variant = None
    if tag and tkind:
        cv = "cpu" if tag == "cpu" else (f"cuda {cuda_of_variant(tag)}" if re.match(r"cu\d{2,3}$", tag) else None)
        if cv and cv != tkind:
            variant = f"built for {_short_kind(cv)}, torch for {_short_kind(tkind)}"
            parts.append(variant)
    loaded = comp.get("extension_loaded")
    if loaded is True:
        parts.append("extension loads")
    elif loaded is False:
        err = comp.get("loader_error") or comp.get("extension_error") or "fails"
        parts.append(f"extension fails: {_first_line(err, 120)}")
    elif comp.get("import_error") or comp.get("error"):
        parts.append(f"import fails: {_first_line(comp.get('import_error') or comp.get('error'), 120)}")
    return " · ".join(parts), (release_of(ver), tag, pair, variant, loaded)


def gpus(fx: Facts) -> Optional[str]:
    devs = fx.dicts("nvml.devices") or fx.dicts("torch.devices")
    if devs:
        names: Dict[str, int] = {}
        for d in devs:
            cc = d.get("compute_capability") or d.get("capability")
            if isinstance(cc, list):
                cc = ".".join(str(x) for x in cc)
            key = str(d.get("name") or "unknown GPU") + (f" (sm_{str(cc).replace('.', '')})" if cc else "")
            names[key] = names.get(key, 0) + 1
        return ", ".join(f"{c} × {k}" for k, c in sorted(names.items()))
    if fx.int("nvml.device_count") == 0:
        return "none"
    pci = fx.list("system.pci_nvidia_devices")
    if pci is not None and fx.str("nvml.status") not in (None, "ok"):
        return f"{len(pci)} NVIDIA device(s) on the PCI bus, none usable" if pci else "none (no NVIDIA device on the PCI bus)"
    if fx.int("torch.device_count") == 0:
        return "none visible to torch"
    return None


def gpu_modes(fx: Facts) -> Optional[str]:
    devs = fx.dicts("nvml.devices")
    if not devs:
        return None
    parts = []
    for d in devs:
        mig = d.get("mig_mode") or {}
        cur = mig.get("current") if isinstance(mig, dict) else mig
        parts.append(
            f"compute mode {d.get('compute_mode', '?')}" + (f", MIG {cur}" if cur not in (None, "", 0, "disabled", False) else "")
        )
    return "; ".join(sorted(set(parts)))


def _lib_key(name: str) -> str:
    return re.split(r"\.so|\.dll|-\d|\.\d", name, maxsplit=1)[0]


def _lib_origin(lib: Dict[str, Any]) -> str:
    p = str(lib.get("realpath") or lib.get("path") or "")
    p = p.replace("\\", "/")
    m = re.search(r"/(site|dist)-packages/(.*)$", p)
    if m:
        return f"wheel: {m.group(2)}"
    m = re.search(r"/(?:conda|miniconda\d*|anaconda\d*|miniforge\d*|mambaforge)(?:/envs/[^/]+)?/(lib/.*)$", p)
    if m:
        return f"conda: {m.group(1)}"
    return f"system: {p}" if p else "unknown"


def libraries(fx: Facts) -> Optional[Dict[str, str]]:
    libs = fx.dicts("torch.loaded_libraries.libraries")
    if fx.list("torch.loaded_libraries.libraries") is None:
        return None
    out: Dict[str, str] = {}
    for lib in libs:
        name = str(lib.get("name") or "")
        if name:
            out.setdefault(_lib_key(name), f"{name} from {_lib_origin(lib)}")
    return out


def torch_location(fx: Facts) -> Optional[str]:
    loc = fx.str("torch.location") or ""
    loc = loc.replace("\\", "/")
    if not loc:
        return None
    if "/.local/lib/" in loc or "/AppData/Roaming/Python/" in loc:
        return "user site-packages (~/.local)"
    if re.search(r"/(?:conda|miniconda\d*|anaconda\d*|miniforge\d*|mambaforge)/", loc) or fx.bool("python.conda"):
        return "conda environment"
    if "/dist-packages/" in loc:
        return "system dist-packages"
    if fx.bool("python.venv"):
        return "virtual environment"
    if "/site-packages/" in loc:
        return "site-packages"
    return "source tree / other"


def torch_sources(fx: Facts) -> Optional[str]:
    """How many torch packages are on sys.path."""
    if fx.list("packages.torch_sources") is None:
        return None
    return str(len(fx.dicts("packages.torch_sources")))


def torch_installer(fx: Facts) -> Optional[str]:
    d = fx.distribution("torch")
    if not d:
        return None
    inst = d.get("installer")
    return str(inst).strip().lower() if inst else None


def kernel_modules(fx: Facts) -> Optional[str]:
    m = fx.dict("system.kernel_modules")
    if m is None:
        return None
    return ", ".join(k for k, v in sorted(m.items()) if v) or "none"


def ld_so_conf(fx: Facts) -> Optional[str]:
    v = fx.list("system.ld_so_conf_cuda")
    if v is None:
        return None
    return ", ".join(str(x) for x in v) or "none"


def _versions(fx: Facts, wanted: Callable[[str], bool]) -> Optional[Dict[str, str]]:
    """Normalised name -> version of the installed distributions ``wanted`` picks (None: not recorded)."""
    if fx.list("packages.distributions") is None:
        return None
    out = {}
    for d in fx.dicts("packages.distributions"):
        n = normalize_name(str(d.get("name") or ""))
        if wanted(n):
            out[n] = str(d.get("version"))
    return out


def _is_cuda_wheel(n: str) -> bool:
    return n.startswith(("nvidia-", "cuda-")) and n not in ("nvidia-ml-py", "nvidia-ml-py3")


def nvidia_wheels(fx: Facts) -> Optional[Dict[str, str]]:
    return _versions(fx, _is_cuda_wheel)


def wheels_text(w: Dict[str, str]) -> str:
    if not w:
        return "none"
    cu = sorted({m.group(1) for n in w for m in [re.search(r"-cu(\d+)$", n)] if m})
    return f"{len(w)} wheels" + (f" (cu{', cu'.join(cu)})" if cu else "")


def package(fx: Facts, name: str) -> Optional[str]:
    if fx.list("packages.distributions") is None:
        return None
    return dist_version(fx, name) or "not installed"


_COMPARED_APART = {"torch", "torchvision", "torchaudio", "numpy", "triton", "nvidia-ml-py", "nvidia-ml-py3"}


def _is_other_package(n: str) -> bool:
    return bool(n) and n not in _COMPARED_APART and not n.startswith(("nvidia-", "cuda-"))


def other_packages(fx: Facts) -> Optional[Dict[str, str]]:
    """Every package not compared on its own (torch, companions, numpy, triton) nor as a CUDA wheel."""
    return _versions(fx, _is_other_package)


def python_version(fx: Facts) -> Optional[str]:
    v = fx.str("python.version") or fx.str("torch.python")
    if not v:
        return None
    bits = fx.int("python.bits")
    impl = fx.str("python.implementation")
    return v + (f" ({impl})" if impl and impl != "cpython" else "") + (f" {bits}-bit" if bits and bits != 64 else "")


def py_key(fx: Facts) -> Any:
    v = fx.str("python.version") or fx.str("torch.python")
    return (mm_str(v), fx.str("python.implementation"), fx.int("python.bits")) if v else None


def env_kind(fx: Facts) -> Optional[str]:
    conda, venv = fx.bool("python.conda"), fx.bool("python.venv")
    if conda is None and venv is None:
        return None
    return "conda" if conda else ("venv" if venv else "system Python")


def container(fx: Facts) -> Optional[str]:
    if "container" not in (fx.dict("system") or {}):
        return None
    return fx.str("system.container") or "none"


def wsl(fx: Facts) -> Optional[str]:
    v = fx.bool("system.wsl")
    return None if v is None else ("yes" if v else "no")


def arch(fx: Facts) -> Optional[str]:
    return fx.str("system.arch")


def libc(fx: Facts) -> Optional[str]:
    return fx.str("system.libc")


def kernel(fx: Facts) -> Optional[str]:
    return fx.str("system.kernel")


def os_release(fx: Facts) -> Optional[str]:
    parts = [x for x in (fx.str("system.os"), fx.str("system.distro")) if x]
    return " · ".join(parts) or None


def nvcc(fx: Facts) -> Optional[str]:
    if fx.str("toolkit.nvcc_version"):
        return fx.str("toolkit.nvcc_version")
    if "nvcc" in (fx.dict("toolkit") or {}) and fx.get("toolkit.nvcc") is None:
        return "none"
    return None
