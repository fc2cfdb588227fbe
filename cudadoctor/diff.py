"""Compare two machines: what differs that can matter, most likely cause first.

The use case is "works on node A, fails on node B". Both facts documents are re-diagnosed with
today's checks; the result lists

* ``differences``: facts that differ and can break GPU use, ranked by how directly they break it
  (torch variant, torch import, driver, torchvision pairing, GPUs and their visibility, loaded
  libraries and where they came from, library-path variables, nvidia-* wheels, other packages,
  Python, container/OS...);
* ``only_in_a`` / ``only_in_b``: findings present on one side only;
* ``unknown``: facts known on one side only (not compared, never counted as a difference);
* ``same``: what was compared and found equal (what is ruled out).

Noise is never compared: timings, free/used memory, PIDs, timestamps, host names, UUIDs and
serials, PCI slots, interpreter and environment paths.

Everything here is pure: it reads two facts dicts and two reports.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import kb as _kb
from .facts import Facts, normalize_name
from .interpret import cuda_of_variant, dist_version, local_tag, mm_str, release_of, torch_version
from .model import severity_rank


DIFF_KIND = "cudadoctor-diff"
DIFF_SCHEMA = 1


@dataclass
class Difference:
    key: str  #: stable identifier, e.g. "torch.build"
    label: str  #: what differs, for people
    a: Optional[str]  #: A's value as text (None: unknown on A)
    b: Optional[str]
    weight: int  #: rank: higher is a more likely cause
    why: str  #: one line: why this can matter

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


# --- how each fact is described -------------------------------------------------------------


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


def _cuda_state(fx: Facts) -> Any:
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


def _companion(fx: Facts, name: str) -> Optional[Tuple[str, tuple]]:
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


# Environment variables: weight and why; anything else recorded that is not noise gets the default.
_ENV_RANK = {
    "CUDA_VISIBLE_DEVICES": (82, "hides or reorders GPUs: an empty value or a wrong index means no GPU for torch"),
    "NVIDIA_VISIBLE_DEVICES": (81, "the container runtime only exposes the GPUs listed here"),
    "HIP_VISIBLE_DEVICES": (60, "hides GPUs from ROCm builds"),
    "ROCR_VISIBLE_DEVICES": (60, "hides GPUs from ROCm builds"),
    "NVIDIA_DRIVER_CAPABILITIES": (74, "without 'compute' or 'utility' the container gets no CUDA driver libraries"),
    "LD_LIBRARY_PATH": (76, "decides which copy of a CUDA library loads first: a system CUDA can shadow the wheel's"),
    "LD_PRELOAD": (77, "forces a library into every process, ahead of the ones torch ships"),
    "PYTHONPATH": (65, "can put another torch ahead of the installed one"),
    "PYTHONHOME": (50, "changes which standard library and site-packages Python uses"),
    "PYTHONNOUSERSITE": (45, "decides whether ~/.local packages (often another torch) are importable"),
    "CUDA_HOME": (38, "used when building extensions; a mismatch with torch's CUDA breaks compiled ops"),
    "CUDA_PATH": (38, "used when building extensions; on Windows also where CUDA DLLs are found"),
    "CUDA_MODULE_LOADING": (30, "changes when kernels load (LAZY/EAGER)"),
    "CUDA_LAUNCH_BLOCKING": (20, "debugging switch; slows everything, changes where errors surface"),
    "OMP_NUM_THREADS": (10, "CPU threads only"),
}
_ENV_NOISE = {"SLURM_JOB_ID", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}


# --- the comparison -------------------------------------------------------------------------

Getter = Callable[[Facts], Any]


def _same(va: Any, vb: Any) -> bool:
    return va == vb


def compare(
    fa: Dict[str, Any], fb: Dict[str, Any], report_a: Any = None, report_b: Any = None, names: Tuple[str, str] = ("A", "B")
) -> Dict[str, Any]:
    """The diff of two facts documents (and their reports, for findings on one side only)."""
    A, B = Facts(fa), Facts(fb)
    diffs: List[Difference] = []
    unknown: List[Difference] = []
    same: List[str] = []

    def add(
        key: str, label: str, ta: Optional[str], tb: Optional[str], weight: int, why: str, ka: Any = None, kb: Any = None
    ) -> None:
        """Compare keys ka/kb (default: the texts); record a difference, an unknown or a same."""
        ka = ta if ka is None else ka
        kb = tb if kb is None else kb
        if ta is None and tb is None:
            return
        if ta is None or tb is None:
            unknown.append(Difference(key, label, ta, tb, weight, why))
        elif _same(ka, kb):
            same.append(label)
        else:
            diffs.append(Difference(key, label, ta, tb, weight, why))

    # torch: variant first
    (ta, ka), (tb, kb_) = torch_build(A), torch_build(B)
    if ka and kb_ and ka[1] != kb_[1]:
        why = (
            "torch is not installed on one side"
            if "none" in (ka[1], kb_[1])
            else "a CPU-only torch cannot use any GPU"
            if "cpu" in (ka[1], kb_[1])
            else "built for different CUDA/ROCm versions: the driver must support the build's CUDA, "
            "and companion packages must match it"
        )
        add("torch.build", "PyTorch build", ta, tb, 100, why, ka, kb_)
    else:
        add("torch.build", "PyTorch build", ta, tb, 88, "different torch releases (same variant)", ka, kb_)
    add(
        "torch.import",
        "import torch",
        torch_import(A),
        torch_import(B),
        98,
        "torch fails to import on one side: nothing after that can work",
    )
    add(
        "torch.location",
        "torch imported from",
        torch_location(A),
        torch_location(B),
        67,
        "torch from a different kind of location (user site, conda, system) is often a second, different torch",
    )
    ns_a, ns_b = len(A.dicts("packages.torch_sources")), len(B.dicts("packages.torch_sources"))
    add(
        "torch.sources",
        "torch packages on sys.path",
        str(ns_a) if A.list("packages.torch_sources") is not None else None,
        str(ns_b) if B.list("packages.torch_sources") is not None else None,
        66,
        "more than one torch on sys.path: which one imports depends on path order",
    )
    ia, ib = _dist_installer(A), _dist_installer(B)
    add(
        "torch.installer",
        "torch installed by",
        ia,
        ib,
        64,
        "mixing conda and pip installs of torch and its CUDA libraries breaks loading",
    )

    # driver
    add(
        "driver",
        "NVIDIA driver",
        driver(A),
        driver(B),
        95,
        "the driver decides which CUDA versions can run; without it no CUDA build can use the GPU",
    )
    add(
        "cuda.init",
        "CUDA initialisation in torch",
        cuda_init(A),
        cuda_init(B),
        83,
        "the symptom: where the failing side stops (its message often names the cause)",
        ka=_cuda_state(A),
        kb=_cuda_state(B),
    )
    add(
        "kernel.modules",
        "kernel modules",
        _kmods(A),
        _kmods(B),
        47,
        "nouveau loaded, or nvidia/nvidia_uvm missing, blocks the NVIDIA driver",
    )

    # companions
    for name, w in (("torchvision", 85), ("torchaudio", 84)):
        ca, cb = _companion(A, name), _companion(B, name)
        add(
            f"companion.{name}",
            f"{name} (pairing with torch)",
            ca[0] if ca else None,
            cb[0] if cb else None,
            w,
            f"{name} must be the release paired with torch and the same CUDA variant, or its compiled ops fail",
            ca[1] if ca else None,
            cb[1] if cb else None,
        )

    # GPUs and their visibility
    add("gpus", "GPUs", gpus(A), gpus(B), 80, "a different GPU can need a different torch build (compute capability)")
    add(
        "gpu.modes",
        "GPU modes",
        gpu_modes(A),
        gpu_modes(B),
        72,
        "an exclusive-process compute mode or MIG changes which processes can use the GPU",
    )

    # libraries
    la, lb = libraries(A), libraries(B)
    if la is not None and lb is not None and la and lb:
        for k in sorted(set(la) & set(lb)):
            if la[k].split(" from ", 1)[1] != lb[k].split(" from ", 1)[1] or la[k].split(" ", 1)[0] != lb[k].split(" ", 1)[0]:
                diffs.append(
                    Difference(
                        f"library.{k}",
                        f"{k} loaded",
                        la[k],
                        lb[k],
                        70,
                        "a CUDA library from another place (system CUDA, another wheel) than torch expects",
                    )
                )
        only_a, only_b = sorted(set(la) - set(lb)), sorted(set(lb) - set(la))
        if only_a or only_b:
            diffs.append(
                Difference(
                    "libraries.loaded",
                    "CUDA libraries loaded on one side only",
                    ", ".join(only_a) or "—",
                    ", ".join(only_b) or "—",
                    62,
                    "a library loaded on one side only (e.g. libcuda missing) points at the failing step",
                )
            )
        if not any(d.key.startswith("librar") for d in diffs):
            same.append("CUDA libraries loaded")
    elif la is not None and lb is not None:
        add(
            "libraries.count",
            "CUDA libraries loaded",
            f"{len(la)}" if la else "none",
            f"{len(lb)}" if lb else "none",
            60,
            "torch loaded no CUDA libraries on one side (a CPU build, or CUDA never initialised)",
        )
    add(
        "system.ld_so_conf",
        "CUDA/NVIDIA directories in ld.so.conf",
        _join(A.list("system.ld_so_conf_cuda")),
        _join(B.list("system.ld_so_conf_cuda")),
        55,
        "system library directories that can shadow the CUDA libraries torch ships",
    )

    # environment variables
    ea, eb = A.dict("environment.vars"), B.dict("environment.vars")
    if ea is not None and eb is not None:
        for name in sorted(set(ea) | set(eb)):
            if name in _ENV_NOISE:
                continue
            w, why = _ENV_RANK.get(name, (28, "a CUDA/PyTorch setting that differs"))
            va, vb = ea.get(name), eb.get(name)
            if va == vb:
                continue
            diffs.append(
                Difference(
                    f"env.{name}", name, "(not set)" if va is None else str(va), "(not set)" if vb is None else str(vb), w, why
                )
            )
        if not any(d.key.startswith("env.") for d in diffs):
            same.append("environment variables")
    else:
        add(
            "env", "environment variables", "recorded" if ea is not None else None, "recorded" if eb is not None else None, 28, ""
        )

    # wheels and packages
    wa, wb = _nvidia_wheels(A), _nvidia_wheels(B)
    if wa is not None and wb is not None:
        if wa and wb:
            changed = [f"{n} {wa.get(n, '—')} → {wb.get(n, '—')}" for n in sorted(set(wa) | set(wb)) if wa.get(n) != wb.get(n)]
            if changed:
                diffs.append(
                    Difference(
                        "wheels.cuda",
                        "CUDA wheels (nvidia-*, cuda-*)",
                        f"{len(wa)} wheels",
                        f"{len(wb)} wheels",
                        62,
                        "CUDA libraries from wheels must be the versions torch was built against: "
                        + "; ".join(changed[:12])
                        + (f"; … {len(changed) - 12} more" if len(changed) > 12 else ""),
                    )
                )
            else:
                same.append("CUDA wheels (nvidia-*, cuda-*)")
        elif wa or wb:
            diffs.append(
                Difference(
                    "wheels.cuda",
                    "CUDA wheels (nvidia-*, cuda-*)",
                    _wheels_text(wa),
                    _wheels_text(wb),
                    61,
                    "the CUDA libraries a pip-installed CUDA torch loads come from these wheels",
                )
            )
        else:
            same.append("CUDA wheels (none)")
    for name, w, why in (
        ("numpy", 58, "torch built against NumPy 1.x fails with NumPy 2 (_ARRAY_API not found)"),
        ("triton", 52, "torch.compile needs the triton release paired with torch"),
    ):
        add(f"package.{name}", name, _pkg_text(A, name), _pkg_text(B, name), w, why)
    pa, pb = _other_packages(A), _other_packages(B)
    if pa is not None and pb is not None:
        for n in sorted(set(pa) | set(pb)):
            if pa.get(n) != pb.get(n):
                diffs.append(
                    Difference(
                        f"package.{n}",
                        n,
                        pa.get(n, "not installed"),
                        pb.get(n, "not installed"),
                        35,
                        "a compiled package built for a particular torch/CUDA",
                    )
                )

    # interpreter and system
    add(
        "python.version",
        "Python",
        _py(A),
        _py(B),
        45,
        "torch publishes wheels per Python version; a different Python gets a different torch",
        ka=_py_key(A),
        kb=_py_key(B),
    )
    add(
        "python.kind",
        "environment kind",
        _env_kind(A),
        _env_kind(B),
        40,
        "conda and pip environments resolve CUDA libraries differently",
    )
    add(
        "system.arch",
        "CPU architecture",
        A.str("system.arch"),
        B.str("system.arch"),
        50,
        "aarch64 and x86_64 get different torch wheels",
    )
    add(
        "system.container",
        "container",
        _container(A),
        _container(B),
        35,
        "in a container the GPU and the driver libraries come from the container runtime (--gpus, NVIDIA Container Toolkit)",
    )
    add(
        "system.wsl",
        "WSL",
        _bool(A.bool("system.wsl")),
        _bool(B.bool("system.wsl")),
        35,
        "under WSL2 the driver comes from Windows (/usr/lib/wsl/lib); a Linux driver must not be installed",
    )
    add("system.os", "operating system", _os(A), _os(B), 30, "different OS releases ship different libraries and driver packages")
    add("system.libc", "C library", A.str("system.libc"), B.str("system.libc"), 30, "wheels need a minimum glibc")
    add(
        "system.kernel",
        "kernel",
        A.str("system.kernel"),
        B.str("system.kernel"),
        20,
        "the NVIDIA kernel module is built per kernel (DKMS); a new kernel without it means no driver",
    )
    add(
        "toolkit.nvcc",
        "CUDA toolkit (nvcc)",
        _nvcc(A),
        _nvcc(B),
        25,
        "only matters when building extensions: they must use torch's CUDA version",
    )

    diffs.sort(key=lambda d: -d.weight)
    unknown.sort(key=lambda d: -d.weight)
    only_a, only_b = _one_sided(report_a, report_b)
    return {
        "kind": DIFF_KIND,
        "schema_version": DIFF_SCHEMA,
        "a": _side(names[0], A, report_a),
        "b": _side(names[1], B, report_b),
        "differences": [d.to_dict() for d in diffs],
        "only_in_a": only_a,
        "only_in_b": only_b,
        "unknown": [d.to_dict() for d in unknown],
        "same": sorted(set(same)),
        "matters": bool(diffs or only_a or only_b),
    }


def _side(name: str, fx: Facts, report: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {"name": name, "collected_by": fx.str("tool.version"), "origin": fx.origin}
    if report is not None:
        v = report.verdict()
        out["summary"] = {"state": v["state"], "text": v["text"]}
    return out


def _one_sided(ra: Any, rb: Any) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    if ra is None or rb is None:
        return [], []
    ca = {f.code for f in ra.findings}
    cb = {f.code for f in rb.findings}

    def rows(report: Any, other: set) -> List[Dict[str, Any]]:
        out, seen = [], set()
        for f in sorted(report.findings, key=lambda f: (severity_rank(f.severity), f.code)):
            if f.code in other or f.code in seen:
                continue
            seen.add(f.code)
            out.append(
                {"code": f.code, "severity": f.severity, "title": f.title, "fix": list(f.fix.commands), "area": report.area_of(f)}
            )
        return out

    return rows(ra, cb), rows(rb, ca)


def _dist_installer(fx: Facts) -> Optional[str]:
    d = fx.distribution("torch")
    if not d:
        return None
    inst = d.get("installer")
    return str(inst).strip().lower() if inst else None


def _kmods(fx: Facts) -> Optional[str]:
    m = fx.dict("system.kernel_modules")
    if m is None:
        return None
    return ", ".join(k for k, v in sorted(m.items()) if v) or "none"


def _join(v: Optional[List[Any]]) -> Optional[str]:
    if v is None:
        return None
    return ", ".join(str(x) for x in v) or "none"


def _nvidia_wheels(fx: Facts) -> Optional[Dict[str, str]]:
    if fx.list("packages.distributions") is None:
        return None
    out = {}
    for d in fx.dicts("packages.distributions"):
        n = normalize_name(str(d.get("name") or ""))
        if n.startswith(("nvidia-", "cuda-")) and n not in ("nvidia-ml-py", "nvidia-ml-py3"):
            out[n] = str(d.get("version"))
    return out


def _wheels_text(w: Dict[str, str]) -> str:
    if not w:
        return "none"
    cu = sorted({m.group(1) for n in w for m in [re.search(r"-cu(\d+)$", n)] if m})
    return f"{len(w)} wheels" + (f" (cu{', cu'.join(cu)})" if cu else "")


def _pkg_text(fx: Facts, name: str) -> Optional[str]:
    if fx.list("packages.distributions") is None:
        return None
    return dist_version(fx, name) or "not installed"


_SEEN = {"torch", "torchvision", "torchaudio", "numpy", "triton", "nvidia-ml-py", "nvidia-ml-py3"}


def _other_packages(fx: Facts) -> Optional[Dict[str, str]]:
    if fx.list("packages.distributions") is None:
        return None
    out = {}
    for d in fx.dicts("packages.distributions"):
        n = normalize_name(str(d.get("name") or ""))
        if n and n not in _SEEN and not n.startswith(("nvidia-", "cuda-")):
            out[n] = str(d.get("version"))
    return out


def _py(fx: Facts) -> Optional[str]:
    v = fx.str("python.version") or fx.str("torch.python")
    if not v:
        return None
    bits = fx.int("python.bits")
    impl = fx.str("python.implementation")
    return v + (f" ({impl})" if impl and impl != "cpython" else "") + (f" {bits}-bit" if bits and bits != 64 else "")


def _py_key(fx: Facts) -> Any:
    v = fx.str("python.version") or fx.str("torch.python")
    return (mm_str(v), fx.str("python.implementation"), fx.int("python.bits")) if v else None


def _env_kind(fx: Facts) -> Optional[str]:
    conda, venv = fx.bool("python.conda"), fx.bool("python.venv")
    if conda is None and venv is None:
        return None
    return "conda" if conda else ("venv" if venv else "system Python")


def _container(fx: Facts) -> Optional[str]:
    if "container" not in (fx.dict("system") or {}):
        return None
    return fx.str("system.container") or "none"


def _bool(v: Optional[bool]) -> Optional[str]:
    return None if v is None else ("yes" if v else "no")


def _os(fx: Facts) -> Optional[str]:
    parts = [x for x in (fx.str("system.os"), fx.str("system.distro")) if x]
    return " · ".join(parts) or None


def _nvcc(fx: Facts) -> Optional[str]:
    if fx.str("toolkit.nvcc_version"):
        return fx.str("toolkit.nvcc_version")
    if "nvcc" in (fx.dict("toolkit") or {}) and fx.get("toolkit.nvcc") is None:
        return "none"
    return None
