"""The comparison, area by area: each area records its differences, unknowns and sames in a Comparison.

Most facts are compared the same way: describe both sides (describe.py), then record a difference,
an unknown (described on one side only) or a same. Those facts are tables of ``Row``s. The areas whose
facts are collections (loaded libraries, environment variables, CUDA wheels, other packages) compare
item by item. ``AREAS`` runs in a fixed order: differences of equal weight keep it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..facts import Facts
from .describe import (
    arch,
    companion,
    container,
    cuda_init,
    cuda_state,
    driver,
    env_kind,
    gpu_modes,
    gpus,
    kernel,
    kernel_modules,
    ld_so_conf,
    libc,
    libraries,
    nvcc,
    nvidia_wheels,
    os_release,
    other_packages,
    package,
    py_key,
    python_version,
    torch_build,
    torch_import,
    torch_installer,
    torch_location,
    torch_sources,
    wheels_text,
    wsl,
)


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


@dataclass(frozen=True)
class Row:
    """One fact compared the same way on both sides."""

    key: str
    label: str
    text: Callable[[Facts], Optional[str]]  #: the description (None: unknown on that side)
    weight: int
    why: str
    by: Optional[Callable[[Facts], Any]] = None  #: what is compared, when not the text


@dataclass
class Comparison:
    a: Facts
    b: Facts
    diffs: List[Difference] = field(default_factory=list)
    unknown: List[Difference] = field(default_factory=list)
    same: List[str] = field(default_factory=list)

    def differ(self, key: str, label: str, a: str, b: str, weight: int, why: str) -> None:
        self.diffs.append(Difference(key, label, a, b, weight, why))

    def add(
        self, key: str, label: str, ta: Optional[str], tb: Optional[str], weight: int, why: str, ka: Any = None, kb: Any = None
    ) -> None:
        """Compare keys ka/kb (default: the texts); record a difference, an unknown or a same."""
        ka = ta if ka is None else ka
        kb = tb if kb is None else kb
        if ta is None and tb is None:
            return
        if ta is None or tb is None:
            self.unknown.append(Difference(key, label, ta, tb, weight, why))
        elif ka == kb:
            self.same.append(label)
        else:
            self.differ(key, label, ta, tb, weight, why)

    def rows(self, rows: Sequence[Row]) -> None:
        for r in rows:
            ka, kb = (r.by(self.a), r.by(self.b)) if r.by else (None, None)
            self.add(r.key, r.label, r.text(self.a), r.text(self.b), r.weight, r.why, ka, kb)

    def differs(self, prefix: str) -> bool:
        return any(d.key.startswith(prefix) for d in self.diffs)


# --- torch, the driver, companions, GPUs -----------------------------------------------------

_TORCH = (
    Row("torch.import", "import torch", torch_import, 98, "torch fails to import on one side: nothing after that can work"),
    Row(
        "torch.location",
        "torch imported from",
        torch_location,
        67,
        "torch from a different kind of location (user site, conda, system) is often a second, different torch",
    ),
    Row(
        "torch.sources",
        "torch packages on sys.path",
        torch_sources,
        66,
        "more than one torch on sys.path: which one imports depends on path order",
    ),
    Row(
        "torch.installer",
        "torch installed by",
        torch_installer,
        64,
        "mixing conda and pip installs of torch and its CUDA libraries breaks loading",
    ),
)

_DRIVER = (
    Row(
        "driver",
        "NVIDIA driver",
        driver,
        95,
        "the driver decides which CUDA versions can run; without it no CUDA build can use the GPU",
    ),
    Row(
        "cuda.init",
        "CUDA initialisation in torch",
        cuda_init,
        83,
        "the symptom: where the failing side stops (its message often names the cause)",
        by=cuda_state,
    ),
    Row(
        "kernel.modules",
        "kernel modules",
        kernel_modules,
        47,
        "nouveau loaded, or nvidia/nvidia_uvm missing, blocks the NVIDIA driver",
    ),
)

_GPUS = (
    Row("gpus", "GPUs", gpus, 80, "a different GPU can need a different torch build (compute capability)"),
    Row(
        "gpu.modes",
        "GPU modes",
        gpu_modes,
        72,
        "an exclusive-process compute mode or MIG changes which processes can use the GPU",
    ),
)


def compare_torch(c: Comparison) -> None:
    """The torch build first (its variant outranks everything), then how torch imports and from where."""
    (ta, ka), (tb, kb) = torch_build(c.a), torch_build(c.b)
    if ka and kb and ka[1] != kb[1]:
        c.add("torch.build", "PyTorch build", ta, tb, 100, _variant_why(ka[1], kb[1]), ka, kb)
    else:
        c.add("torch.build", "PyTorch build", ta, tb, 88, "different torch releases (same variant)", ka, kb)
    c.rows(_TORCH)


def _variant_why(va: Optional[str], vb: Optional[str]) -> str:
    if "none" in (va, vb):
        return "torch is not installed on one side"
    if "cpu" in (va, vb):
        return "a CPU-only torch cannot use any GPU"
    return (
        "built for different CUDA/ROCm versions: the driver must support the build's CUDA, and companion packages must match it"
    )


def compare_driver(c: Comparison) -> None:
    c.rows(_DRIVER)


def compare_companions(c: Comparison) -> None:
    """torchvision and torchaudio: compared by release, variant, pairing and whether they load, not by text."""
    for name, weight in (("torchvision", 85), ("torchaudio", 84)):
        ca, cb = companion(c.a, name), companion(c.b, name)
        c.add(
            f"companion.{name}",
            f"{name} (pairing with torch)",
            ca[0] if ca else None,
            cb[0] if cb else None,
            weight,
            f"{name} must be the release paired with torch and the same CUDA variant, or its compiled ops fail",
            ca[1] if ca else None,
            cb[1] if cb else None,
        )


def compare_gpus(c: Comparison) -> None:
    c.rows(_GPUS)


# --- libraries, environment, packages ------------------------------------------------------

_LD_SO_CONF = Row(
    "system.ld_so_conf",
    "CUDA/NVIDIA directories in ld.so.conf",
    ld_so_conf,
    55,
    "system library directories that can shadow the CUDA libraries torch ships",
)


def compare_libraries(c: Comparison) -> None:
    """The CUDA libraries torch loaded: each by name and origin when both sides loaded some, else how many."""
    la, lb = libraries(c.a), libraries(c.b)
    if la and lb:
        _loaded_libraries(c, la, lb)
    elif la is not None and lb is not None:
        c.add(
            "libraries.count",
            "CUDA libraries loaded",
            f"{len(la)}" if la else "none",
            f"{len(lb)}" if lb else "none",
            60,
            "torch loaded no CUDA libraries on one side (a CPU build, or CUDA never initialised)",
        )
    c.rows((_LD_SO_CONF,))


def _loaded_libraries(c: Comparison, la: Dict[str, str], lb: Dict[str, str]) -> None:
    for k in sorted(set(la) & set(lb)):
        if la[k].split(" from ", 1)[1] != lb[k].split(" from ", 1)[1] or la[k].split(" ", 1)[0] != lb[k].split(" ", 1)[0]:
            why = "a CUDA library from another place (system CUDA, another wheel) than torch expects"
            c.differ(f"library.{k}", f"{k} loaded", la[k], lb[k], 70, why)
    only_a, only_b = sorted(set(la) - set(lb)), sorted(set(lb) - set(la))
    if only_a or only_b:
        c.differ(
            "libraries.loaded",
            "CUDA libraries loaded on one side only",
            ", ".join(only_a) or "—",
            ", ".join(only_b) or "—",
            62,
            "a library loaded on one side only (e.g. libcuda missing) points at the failing step",
        )
    if not c.differs("librar"):
        c.same.append("CUDA libraries loaded")


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
_ENV_DEFAULT = (28, "a CUDA/PyTorch setting that differs")
_ENV_NOISE = {"SLURM_JOB_ID", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "VIRTUAL_ENV", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}


def compare_environment(c: Comparison) -> None:
    """The recorded CUDA/PyTorch variables, one by one ("(not set)" on the side without it); noise left out."""
    ea, eb = c.a.dict("environment.vars"), c.b.dict("environment.vars")
    if ea is None or eb is None:
        c.add(
            "env", "environment variables", "recorded" if ea is not None else None, "recorded" if eb is not None else None, 28, ""
        )
        return
    for name in sorted((set(ea) | set(eb)) - _ENV_NOISE):
        va, vb = ea.get(name), eb.get(name)
        if va != vb:
            weight, why = _ENV_RANK.get(name, _ENV_DEFAULT)
            c.differ(f"env.{name}", name, _env_value(va), _env_value(vb), weight, why)
    if not c.differs("env."):
        c.same.append("environment variables")


def _env_value(v: Any) -> str:
    return "(not set)" if v is None else str(v)


_WHEELS = "CUDA wheels (nvidia-*, cuda-*)"
_PACKAGES = (
    Row(
        "package.numpy",
        "numpy",
        partial(package, name="numpy"),
        58,
        "torch built against NumPy 1.x fails with NumPy 2 (_ARRAY_API not found)",
    ),
    Row(
        "package.triton",
        "triton",
        partial(package, name="triton"),
        52,
        "torch.compile needs the triton release paired with torch",
    ),
)


def compare_packages(c: Comparison) -> None:
    """CUDA wheels as one summary, numpy and triton, then every other package by version."""
    wa, wb = nvidia_wheels(c.a), nvidia_wheels(c.b)
    if wa is not None and wb is not None:
        _cuda_wheels(c, wa, wb)
    c.rows(_PACKAGES)
    pa, pb = other_packages(c.a), other_packages(c.b)
    if pa is None or pb is None:
        return
    for n in sorted(set(pa) | set(pb)):
        if pa.get(n) != pb.get(n):
            why = "a compiled package built for a particular torch/CUDA"
            c.differ(f"package.{n}", n, pa.get(n, "not installed"), pb.get(n, "not installed"), 35, why)


def _cuda_wheels(c: Comparison, wa: Dict[str, str], wb: Dict[str, str]) -> None:
    if not wa and not wb:
        c.same.append("CUDA wheels (none)")
    elif not wa or not wb:
        why = "the CUDA libraries a pip-installed CUDA torch loads come from these wheels"
        c.differ("wheels.cuda", _WHEELS, wheels_text(wa), wheels_text(wb), 61, why)
    else:
        changed = [f"{n} {wa.get(n, '—')} → {wb.get(n, '—')}" for n in sorted(set(wa) | set(wb)) if wa.get(n) != wb.get(n)]
        if not changed:
            c.same.append(_WHEELS)
            return
        more = f"; … {len(changed) - 12} more" if len(changed) > 12 else ""
        why = "CUDA libraries from wheels must be the versions torch was built against: " + "; ".join(changed[:12]) + more
        c.differ("wheels.cuda", _WHEELS, f"{len(wa)} wheels", f"{len(wb)} wheels", 62, why)


# --- interpreter and system ------------------------------------------------------------------

_SYSTEM = (
    Row(
        "python.version",
        "Python",
        python_version,
        45,
        "torch publishes wheels per Python version; a different Python gets a different torch",
        by=py_key,
    ),
    Row("python.kind", "environment kind", env_kind, 40, "conda and pip environments resolve CUDA libraries differently"),
    Row("system.arch", "CPU architecture", arch, 50, "aarch64 and x86_64 get different torch wheels"),
    Row(
        "system.container",
        "container",
        container,
        35,
        "in a container the GPU and the driver libraries come from the container runtime (--gpus, NVIDIA Container Toolkit)",
    ),
    Row(
        "system.wsl",
        "WSL",
        wsl,
        35,
        "under WSL2 the driver comes from Windows (/usr/lib/wsl/lib); a Linux driver must not be installed",
    ),
    Row("system.os", "operating system", os_release, 30, "different OS releases ship different libraries and driver packages"),
    Row("system.libc", "C library", libc, 30, "wheels need a minimum glibc"),
    Row(
        "system.kernel",
        "kernel",
        kernel,
        20,
        "the NVIDIA kernel module is built per kernel (DKMS); a new kernel without it means no driver",
    ),
    Row(
        "toolkit.nvcc",
        "CUDA toolkit (nvcc)",
        nvcc,
        25,
        "only matters when building extensions: they must use torch's CUDA version",
    ),
)


def compare_system(c: Comparison) -> None:
    c.rows(_SYSTEM)


#: Every area, in the order differences of equal weight are listed.
AREAS: Tuple[Callable[[Comparison], None], ...] = (
    compare_torch,
    compare_driver,
    compare_companions,
    compare_gpus,
    compare_libraries,
    compare_environment,
    compare_packages,
    compare_system,
)
