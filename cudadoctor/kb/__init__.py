"""Compatibility knowledge base: NVIDIA driver <-> CUDA, PyTorch releases, wheel arch lists, GPUs.

Pure data look-ups over the JSON tables shipped in this package (read lazily from the package's
folder and cached). No network, no other I/O.

Conventions: versions are strings and compare as integer tuples ("535.104.05" -> (535, 104, 5));
CUDA versions look like "12.4"; compute capabilities like "8.6"; wheel variants are local-version
tags: "cpu", "cu118", "cu130", "rocm6.2", ... Functions answer None when the tables do not know;
they never guess. Facts measured on the user's machine (torch.cuda.get_arch_list(), NVML) should
always win over these tables.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from cudadoctor.interpret import versions as _versions

_HERE = Path(__file__).parent

__all__ = [
    "tables",
    "kb_date",
    "parse_version",
    "variant_of",
    "cuda_of_variant",
    "min_driver_for_cuda",
    "max_cuda_for_driver",
    "driver_supports_cuda",
    "torch_release",
    "torch_patches",
    "optix_min_driver",
    "torchvision_for_torch",
    "torch_for_torchvision",
    "arch_list",
    "arch_runs",
    "compute_capability",
    "cores_per_sm",
    "registers_per_block",
    "variants_for_driver",
    "releases_with_arch",
    "python_supported",
    "newest_torch_for_python",
    "index_url",
    "newest_release",
    "variant_archs",
    "error_tables",
    "error_entry",
    "errors_numbered",
    "xid",
    "host_compiler_limits",
    "cuda_accepting_gcc",
    "nvcc_target_releases",
    "torch_wheel_on_pypi",
    "pypi_torch_versions",
]

# cuda_errors, library_errors, xid: every CUresult / cudaError_t, NCCL / cuDNN / cuBLAS / CUPTI status and Xid with its
# catalogue code (errortext/extract.py); host_compilers, nvcc_archs: what each nvcc release accepts (crt/host_config.h,
# ptxas --help); torch_wheels: which torch releases PyPI has wheels for, per platform and Python.
TABLES = (
    "cuda_errors",
    "library_errors",
    "xid",
    "host_compilers",
    "nvcc_archs",
    "cuda_arch_support",
    "torch_wheels",
    "cuda_drivers",
    "driver_api_symbols",
    "program_driver_min",
    "ptx_isa",
    "torch_releases",
    "torch_arch_lists",
    "gpu_compute_capability",
    "cores_per_sm",
    "installers",
    "containers",
    "python_wheels",
    "registers_per_block",
    "cuda_libraries",
    "companion_cuda",
    "gpu_video_engines",
    "cpu_gpu_twins",
    "optix_drivers",
    "app_validated_drivers",
    "docker_desktop_gpu",
    "package_platforms",
)  # cuda_libraries: NVIDIA library families in error texts, what a soname / DLL number means (errortext/entities.py);
# installers: where each build is published per installer (checks/_installer.py);
# python_wheels: when each Python minor first had torch wheels (checks/platform.py)


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict:
    # A plain path, not importlib.resources: that package is imported lazily, and two of check's
    # threads importing it at once ended in a _DeadlockError on its module lock (once in ~45 runs).
    text = (_HERE / f"{name}.json").read_text(encoding="utf-8")
    return json.loads(text)


def tables() -> dict[str, dict]:
    """Every table's name -> {"checked": "YYYY-MM-DD", "sources": [{"title", "url"}], "notes": [...]}."""
    return {n: {k: _load(n).get(k) for k in ("checked", "sources", "notes")} for n in TABLES}


def warm() -> None:
    """Read every table now (a live check does this while torch is being imported)."""
    for n in TABLES:
        _load(n)
    _gpu_index()


def kb_date() -> str:
    """The newest 'checked' date over all tables (YYYY-MM-DD)."""
    return max(t["checked"] for t in tables().values())


# ---------------------------------------------------------------- error enums and Xids

#: (table file, key in it, API label) for every error enum the tables hold; the label is what a finding
#: shows ("CUDA runtime", "cuDNN", ...).
ERROR_TABLES = (
    ("cuda_errors", "driver", "CUDA driver API"),
    ("cuda_errors", "runtime", "CUDA runtime API"),
    ("cuda_errors", "runtime_legacy", "CUDA runtime API (CUDA 10.0 and older)"),
    ("library_errors", "nccl", "NCCL"),
    ("library_errors", "cudnn", "cuDNN"),
    ("library_errors", "cudnn_legacy", "cuDNN 8"),
    ("library_errors", "cublas", "cuBLAS"),
    ("library_errors", "cupti", "CUPTI"),
)


def error_tables() -> dict[str, list[dict]]:
    """Every error enum the tables hold: {"CUDA runtime API": [{"value", "name", "message"?, "doc"?,
    "code"?, "confidence"?, "why"?}, ...], ...} (kb/cuda_errors.json, kb/library_errors.json)."""
    return {label: list(_load(f)[key]) for f, key, label in ERROR_TABLES}


@functools.lru_cache(maxsize=None)
def _errors_by_name() -> dict[str, tuple[str, dict]]:
    out: dict[str, tuple[str, dict]] = {}
    for label, rows in error_tables().items():
        for e in rows:
            out.setdefault(e["name"].lower(), (label, e))  # the current table first; legacy rows repeat names
    return out


def error_entry(name: str) -> tuple[str, dict] | None:
    """(API label, entry) of an error enum by name, any case: "cudaErrorInsufficientDriver" ->
    ("CUDA runtime API", {"value": 35, ..., "code": "driver-too-old"}); None when no table has it."""
    return _errors_by_name().get(str(name).lower())


@functools.lru_cache(maxsize=None)
def _cuda_numbers() -> dict[int, list[tuple[str, dict]]]:
    """Number -> the CUDA driver/runtime entries it names: the current headers' first; the pre-10.1 runtime
    numbering only for numbers the current headers do not define (34 is cudaErrorStubLibrary now, not
    the old cudaErrorNotReady; 38 is only ever the old cudaErrorNoDevice)."""
    tables = error_tables()
    out: dict[int, list[tuple[str, dict]]] = {}
    for label in ("CUDA driver API", "CUDA runtime API"):
        for e in tables[label]:
            out.setdefault(int(e["value"]), []).append((label, e))
    for e in tables["CUDA runtime API (CUDA 10.0 and older)"]:
        if int(e["value"]) not in out:
            out[int(e["value"])] = [("CUDA runtime API (CUDA 10.0 and older)", e)]
    return out


def errors_numbered(value: int) -> list[tuple[str, dict]]:
    """The CUDA driver/runtime API errors this number names ([] if none): 35 -> [("CUDA runtime API",
    cudaErrorInsufficientDriver)]; 100 -> both CUDA_ERROR_NO_DEVICE and cudaErrorNoDevice."""
    return list(_cuda_numbers().get(int(value), []))


def xid(number: int) -> dict | None:
    """NVIDIA's Xid entry ({"xid", "mnemonic"?, "description"?, "code"?, ...}) by number, None if unknown."""
    for r in _load("xid")["xids"]:
        if r["xid"] == int(number):
            return dict(r)
    return None


# ---------------------------------------------------------------- nvcc: host compilers and targets


def host_compiler_limits(cuda: str) -> dict | None:
    """What nvcc of this CUDA release accepts as host compiler (kb/host_compilers.json, from its host_config.h):
    {"release", "gcc_max", "clang_max", "msvc_min", "msvc_max_exclusive", "visual_studio"}; None if unknown.
    "12.4" -> gcc_max 13, clang_max 17."""
    mm = _mm(cuda)
    row = _load("host_compilers")["cuda"].get(f"{mm[0]}.{mm[1]}") if mm else None
    return dict(row) if row else None


def cuda_accepting_gcc(gcc_major: int) -> str | None:
    """The first CUDA release whose nvcc accepts this GCC major: 13 -> "12.4", 14 -> "12.8"; None when no known
    release does, or when the oldest release the table covers (11.7) already does (an older one may too)."""
    rows = _load("host_compilers")["cuda"]
    order = sorted(rows, key=_tv)
    for i, mm in enumerate(order):
        if rows[mm].get("gcc_max", -1) >= int(gcc_major):
            # The oldest covered release accepting it is the first only if the release before it is covered too
            # and refused it; a GCC the oldest covered release accepts may be accepted by older ones.
            return mm if i > 0 else None
    return None


def nvcc_target_releases(target: str) -> tuple[str, str] | None:
    """(first, last) CUDA release whose nvcc accepts this target ("sm_86", "compute_120", "sm_90a"), over the
    releases kb/nvcc_archs.json covers (11.7 on, the oldest nvcc wheel); None if no covered release knows it
    (older targets such as compute_30 were dropped before 11.7)."""
    row = _load("nvcc_archs")["targets"].get(str(target).strip().lower())
    return (row["first"], row["last"]) if row else None


def nvcc_releases() -> list[str]:
    """The CUDA releases kb/nvcc_archs.json covers, oldest first."""
    return sorted(_load("nvcc_archs")["releases"], key=_tv)


# ---------------------------------------------------------------- torch wheels on PyPI


def pypi_torch_versions(python_version: str, platform: str = "linux-x86_64") -> list[str] | None:
    """Every torch release PyPI has a wheel for, for this CPython minor on this platform, oldest first
    (kb/torch_wheels.json; platforms as kb's: linux-x86_64, linux-aarch64, windows, macos, macos-x86_64).
    [] when PyPI has none for that Python there; None for a platform or Python the table does not cover."""
    py = _mm(python_version)
    table = _load("torch_wheels")["pypi"].get(platform)
    if py is None or table is None:
        return None
    covered = {_tmm(p) for pf in _load("torch_wheels")["pypi"].values() for p in pf}
    if py not in covered:
        return None  # a Python no platform has torch wheels for in the table (2.7, 3.15): unknown, not "none"
    return list(table.get(f"{py[0]}.{py[1]}", []))


def torch_wheel_on_pypi(torch_version: str, python_version: str, platform: str = "linux-x86_64") -> bool | None:
    """Does PyPI have a wheel of this torch ("2.5.1", or any patch of the series "2.5") for this Python on this
    platform? None when the table cannot say (unknown platform, Python or torch release)."""
    versions = pypi_torch_versions(python_version, platform)
    t = parse_version(torch_version)
    if versions is None or not t:
        return None
    everywhere = {v for pf in _load("torch_wheels")["pypi"].values() for vs in pf.values() for v in vs}
    if len(t) >= 3:
        want = ".".join(str(x) for x in t[:3])
        return want in versions if want in everywhere else None
    series = [v for v in everywhere if _tv(v)[:2] == t[:2]]
    return any(v in versions for v in series) if series else None


# ---------------------------------------------------------------- versions


def parse_version(s: object) -> tuple[int, ...] | None:
    """Leading dotted integers of a version string (cudadoctor.interpret.versions.vtuple).

    "2.6.0+cu126" -> (2, 6, 0); "12.4.131" -> (12, 4, 131); "535.104.05" -> (535, 104, 5);
    "v2.1.0a0" -> (2, 1, 0); "3.11.7 (main, ...)" -> (3, 11, 7). None when there is no number.
    """
    return _versions.vtuple(s)


def _mm(v: object) -> tuple[int, int] | None:
    """major.minor of a version as a 2-tuple (minor 0 if missing)."""
    return _versions.mm(v)


def _tv(s: object) -> tuple[int, ...]:
    """parse_version of a version written in the shipped tables, which always has one (tests/test_kb.py
    checks every table); a table edited wrongly fails here by name, not as a comparison with None."""
    v = parse_version(s)
    if v is None:
        raise ValueError(f"cudadoctor.kb: a table holds {s!r} where a version belongs")
    return v


def _tmm(s: object) -> tuple[int, int]:
    """_mm of a version written in the shipped tables (see _tv)."""
    t = _tv(s)
    return (t[0], t[1] if len(t) > 1 else 0)


def _series(v: str) -> str | None:
    mm = _mm(v)
    return f"{mm[0]}.{mm[1]}" if mm else None


def variant_of(torch_version: str, torch_cuda: str | None) -> str | None:
    """The wheel variant of an installed torch.

    Uses the local version tag when present ("2.6.0+cu126" -> "cu126", "2.5.1+rocm6.2" -> "rocm6.2",
    "2.4.0+cpu" -> "cpu"); otherwise derives it from torch.version.cuda ("2.14.1", "13.0" -> "cu130").
    torch_cuda None and no tag -> "cpu" (e.g. PyPI wheels on Windows/macOS). None if unparsable.
    """
    tagged = _versions.variant_of_tag(torch_version)
    if tagged:
        return tagged
    if torch_cuda:
        return _versions.variant_of_cuda(torch_cuda)
    return "cpu" if parse_version(torch_version) else None


def cuda_of_variant(variant: str) -> str | None:
    """CUDA version of a CUDA variant: "cu124" -> "12.4", "cu102" -> "10.2", "cu92" -> "9.2"; else None."""
    return _versions.cuda_of_variant(variant)


def index_url(variant: str) -> str:
    """The PyTorch wheel index for a variant: "cu124" -> "https://download.pytorch.org/whl/cu124"."""
    return f"https://download.pytorch.org/whl/{variant}"


# ---------------------------------------------------------------- drivers


def _os_key(os: str) -> str:
    return "windows" if str(os).lower().startswith("win") else "linux"


def min_driver_for_cuda(cuda: str, os: str = "linux", minor_compat: bool = True) -> str | None:
    """Minimum driver that can run code built with this CUDA runtime.

    minor_compat=True (what matters for PyTorch wheels): for CUDA 11+ the family floor of minor-version
    compatibility ("12.4" -> "525.60.13"; "11.8" -> "450.80.02"; 13.x -> "580", a branch); before CUDA 11
    the toolkit's own minimum. minor_compat=False: the driver bundled with that toolkit's GA release
    ("12.4" -> "550.54.14"). os "linux" or "windows". None when unknown.
    """
    mm = _mm(cuda)
    if not mm:
        return None
    t = _load("cuda_drivers")
    osk = _os_key(os)
    if minor_compat:
        floor = t["minor_compat_floor"].get(str(mm[0]))
        if floor:
            return floor.get(osk)
    row = t["toolkit_min_driver"].get(f"{mm[0]}.{mm[1]}")
    return row.get(osk) if row else None


def max_cuda_for_driver(driver: str, os: str = "linux") -> str | None:
    """Highest CUDA version the driver supports, as nvidia-smi prints it ("CUDA Version").

    Looked up by driver branch (the driver's first number): "470.182.03" -> "11.4", "535.104.05" -> "12.2",
    Windows "566.36" -> "12.7". Drivers newer than the newest known branch get that branch's CUDA
    (a lower bound). None for unparsable or pre-R384 drivers. `os` is accepted for symmetry: Windows
    driver numbers fall into the same branches.
    """
    v = parse_version(driver)
    if not v:
        return None
    best = None
    for branch, cuda in _load("cuda_drivers")["driver_branch_cuda"]:
        if v[0] >= branch:
            best = cuda
    return best


def driver_supports_cuda(driver: str, cuda: str, os: str = "linux") -> bool | None:
    """Can a PyTorch wheel built with CUDA `cuda` run on this driver? None when unknown.

    True if the driver natively reports at least that CUDA (its branch), or if the driver is at or above
    the toolkit's own minimum, or (CUDA 11+) at or above the family's minor-version-compatibility floor
    (newer drivers stay backward compatible). Examples: ("410.48", "10.1") -> False; ("470.182.03", "11.4")
    -> True; ("535.104.05", "12.8") -> True (minor-version compatibility); ("575.57.08", "13.0") -> False.
    """
    dv, mm = parse_version(driver), _mm(cuda)
    if not dv or not mm:
        return None
    osk = _os_key(os)
    t = _load("cuda_drivers")
    floor = (t["minor_compat_floor"].get(str(mm[0])) or {}).get(osk)
    first = (t["toolkit_min_driver"].get(f"{mm[0]}.{mm[1]}") or {}).get(osk)
    if not floor and first and dv[0] == _tv(first)[0] and dv < _tv(first):
        # before CUDA 11: a driver of the branch older than that toolkit's first one (384.69 < 384.81, 9.0); a driver
        # stated by its branch alone ("396") may be either side of 396.26
        return None if len(dv) == 1 else False
    native = _mm(max_cuda_for_driver(driver, os))
    if native and native >= mm:
        return True
    if floor:
        return _at_least(dv, _tv(floor))
    row = t["toolkit_min_driver"].get(f"{mm[0]}.{mm[1]}")
    if row and row.get(osk):
        return _at_least(dv, _tv(row[osk]))
    return None


def _at_least(driver: tuple, need: tuple) -> bool | None:
    """driver >= need; None when the driver is stated by its branch alone and that is need's branch ("525" vs 525.60.13)."""
    if len(driver) == 1 and len(need) > 1 and driver[0] == need[0]:
        return None
    return driver >= need


# ---------------------------------------------------------------- torch releases


def _releases() -> dict:
    return _load("torch_releases")["releases"]


def _series_sorted() -> list[str]:
    """Known release series, newest first."""
    return sorted(_releases(), key=_tv, reverse=True)


def newest_release() -> str:
    """Newest torch release known to the tables, as its newest patch version (e.g. "2.15.0")."""
    s = _series_sorted()[0]
    return max(_releases()[s]["patches"], key=_tv)


def pypi_default_cuda_before_1_13(series: str) -> str | None:
    """The CUDA of the Linux x86_64 wheel PyPI served for `pip install torch==<series>` before 1.13 ("1.4" -> "10.1"),
    from torch_releases.json's pypi_linux_cuda_before_1_13 (the previous-versions page); None when not listed."""
    return ((_load("torch_releases").get("pypi_linux_cuda_before_1_13") or {}).get("series") or {}).get(series)


def torch_release(version: str) -> dict | None:
    """Facts about a torch release ("2.6.0", "2.6.0+cu124" or the series "2.6"); None if unknown.

    Keys: "version" (the patch asked for, or the newest known patch of the series), "series", "date",
    "variants" (["cpu", "cu118", ...] Linux x86_64 wheels), "default_variant" (what plain
    `pip install torch` from PyPI gets, per "linux-x86_64", "windows", "linux-aarch64", "macos"),
    "python" ({"min", "max"}), "torchvision", "torchaudio" (exact patch pairing when known, else the
    paired major.minor series; None when there is none), "cudnn" ({variant: version}).
    """
    t = parse_version(version)
    if not t:
        return None
    series = f"{t[0]}.{t[1] if len(t) > 1 else 0}"
    r = _releases().get(series)
    if r is None:
        return None
    if len(t) >= 3:
        patch = ".".join(str(x) for x in t[:3])
    else:
        patch = max(r["patches"], key=_tv)
    pair = r["patches"].get(patch)
    tv, ta = pair if pair else [r["torchvision"], r["torchaudio"]]
    if pair and tv is None:
        tv = r["torchvision"]
    if pair and ta is None:
        ta = r["torchaudio"]
    return {
        "version": patch,
        "series": series,
        "date": r["date"],
        "variants": list(r["variants"]),
        "default_variant": dict(r["default_variant"]),
        "python": dict(r["python"]),
        "torchvision": tv,
        "torchaudio": ta,
        "cudnn": dict(r["cudnn"]),
    }


def optix_min_driver(optix: str, os: str = "linux") -> str | None:
    """The minimum driver an OptiX SDK release needs (kb/optix_drivers.json): "7.7.0" -> "530.41"; None when the
    table has no row for that release."""
    mm = _mm(optix)
    row = _load("optix_drivers")["releases"].get(f"{mm[0]}.{mm[1]}") if mm else None
    return str(row[_os_key(os)]) if row else None


def torch_patches(version: str) -> list[str] | None:
    """Every patch release of a torch series the kb knows ("1.11.1" -> ["1.11.0"]); None for an unknown series."""
    t = parse_version(version)
    if not t:
        return None
    r = _releases().get(f"{t[0]}.{t[1] if len(t) > 1 else 0}")
    return sorted(r["patches"], key=_tv) if r else None


def torchvision_for_torch(torch_version: str) -> str | None:
    """torchvision paired with a torch release: "2.6.0" -> "0.21.0"; unknown patch -> series "0.21"."""
    r = torch_release(torch_version)
    return r["torchvision"] if r else None


def torch_for_torchvision(tv_version: str) -> str | None:
    """torch paired with a torchvision release: "0.21.0" -> "2.6.0"; unknown patch "0.21.9" -> "2.6"."""
    t = parse_version(tv_version)
    if not t:
        return None
    want = ".".join(str(x) for x in t[:3])
    tv_series = _series(tv_version)
    fallback = None
    for series in _series_sorted():
        r = _releases()[series]
        for patch, (tv, _ta) in sorted(r["patches"].items(), key=lambda kv: _tv(kv[0])):
            if tv == want:
                return patch
        if r["torchvision"] and _series(r["torchvision"]) == tv_series and fallback is None:
            fallback = series
    return fallback


def python_supported(torch_version: str, python_version: str, platform: str | None = None) -> bool | None:
    """Does the release publish wheels for this CPython major.minor? None if the release is unknown.

    The release's range is its Linux wheels'; with ``platform`` "windows", a Python minor whose first
    Windows wheels came with a later release (3.11: 2.0.0, 3.13: 2.6.0; kb/python_wheels.json) is not.
    """
    r = torch_release(torch_version)
    py = _mm(python_version)
    if not r or not py:
        return None
    if not _tmm(r["python"]["min"]) <= py <= _tmm(r["python"]["max"]):
        return False
    if platform == "windows":
        first = first_torch_for_python(f"{py[0]}.{py[1]}", "windows")
        if first and _tv(r["version"]) < _tv(first[0]):
            return False
    return True


def first_torch_for_python(python_minor: str, platform: str = "linux-x86_64") -> tuple[str, str] | None:
    """(release, date) of the first torch with wheels for this Python minor ("3.11") on this platform
    ("windows"; anything else reads Linux x86_64's), from kb/python_wheels.json; None if unknown."""
    entry = _load("python_wheels")["python"].get(python_minor) or {}
    win = platform == "windows"
    torch, when = (
        entry.get("first_torch_windows" if win else "first_torch"),
        entry.get("first_torch_windows_date" if win else "first_torch_date"),
    )
    return (str(torch), str(when)) if torch and when else None


def newest_torch_for_python(python_version: str, platform: str = "linux-x86_64") -> str | None:
    """Newest known torch (patch version) with wheels for this Python on this platform.

    platform: "linux-x86_64", "linux-aarch64", "windows", "macos" (arm64) or "macos-x86_64"
    (Intel Macs: wheels stopped after 2.2). None if no known release fits.
    """
    last = _load("torch_releases").get("platform_last", {}).get(platform)
    for series in _series_sorted():
        if last and _tv(series) > _tv(last):
            continue
        r = torch_release(series)
        if r and python_supported(series, python_version, platform):
            return r["version"]
    return None


def python_predates_torch(python_version: str, platform: str = "linux-x86_64") -> dict | None:
    """When this Python patch release came out before any torch had wheels for its minor on this platform:
    {"python": "3.10.1", "python_date", "first_torch": "1.11.0", "first_torch_date"}; else None (or unknown).

    platform: "windows" reads the Windows wheels' dates, anything else Linux x86_64's.
    """
    parts = (python_version or "").split()[0].split(".")
    if len(parts) < 3 or not all(p.isdigit() for p in parts[:3]):
        return None
    minor, patch = ".".join(parts[:2]), ".".join(parts[:3])
    released = (_load("python_wheels")["python"].get(minor) or {}).get("releases", {}).get(patch)
    first = first_torch_for_python(minor, platform)
    if not released or not first or released >= first[1]:
        return None
    return {"python": patch, "python_date": released, "first_torch": first[0], "first_torch_date": first[1]}


# ---------------------------------------------------------------- architectures


def arch_list(torch_version: str, variant: str) -> dict | None:
    """Compiled architectures of an official Linux x86_64 wheel: {"sass": ["sm_50", ...], "ptx": ["compute_120"]}.

    Keyed by release series and variant ("2.6.0", "cu124"); None when unknown (CPU/ROCm variants too).
    A live torch.cuda.get_arch_list() wins over this.
    """
    series = _series(torch_version)
    archs = _load("torch_arch_lists")["builds"].get(series or "", {}).get(variant)
    if archs is None:
        return None
    return {"sass": [a for a in archs if a.startswith("sm_")], "ptx": [a for a in archs if a.startswith("compute_")]}


def variant_archs(variant: str) -> dict | None:
    """Every architecture any official Linux x86_64 wheel of this variant compiled, over the releases the
    tables know: {"archs": ["sm_50", ..., "compute_90"], "releases": ["2.4", ..., "2.7"]} (oldest release
    first); None when no known release has the variant. A GPU newer than all of them has no kernels in any
    build made with that CUDA: the CUDA version bounds the architectures even when the release is unknown.
    """
    builds = _load("torch_arch_lists")["builds"]
    releases = sorted((s for s in builds if variant in builds[s]), key=_tv)
    if not releases or not isinstance(variant, str):
        return None
    archs = sorted(
        {a for s in releases for a in builds[s][variant]},
        key=lambda a: (a.startswith("compute_"), int(re.sub(r"\D", "", a)[:6] or 0), a),
    )
    return {"archs": archs, "releases": releases}


_ARCH = re.compile(r"(sm|compute)_(\d{1,3})(\d)([af]?)$")


def _cap(capability: object) -> tuple[int, int] | None:
    if isinstance(capability, bool) or not isinstance(capability, (str, int, float)):
        return None
    m = re.fullmatch(r"\s*(\d{1,4})\.(\d{1,4})\s*", str(capability))
    if m:
        return (int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"\s*(?:sm_|compute_)?(\d{1,4})(\d)\s*", str(capability))  # "86", "sm_86"
    return (int(m.group(1)), int(m.group(2))) if m else None


def _runs(kind: str, arch: tuple[int, int], suffix: str, dev: tuple[int, int]) -> bool:
    if suffix == "a":  # arch-specific (sm_90a): exactly that capability
        return arch == dev
    if suffix == "f":  # family-specific (sm_100f): same major, minor >=
        return arch[0] == dev[0] and arch[1] <= dev[1]
    if kind == "sm":  # cubin: same major, minor <=
        return arch[0] == dev[0] and arch[1] <= dev[1]
    return arch <= dev  # PTX: JIT for any newer device


def arch_runs(capability: str, arch_list: list[str] | dict) -> str | None:
    """How a device of `capability` ("8.6") runs a build with these archs.

    arch_list is in get_arch_list() form (["sm_75", "sm_80", "compute_90"]) or an arch_list() dict.
    "sass" if some sm_XY cubin runs natively (same major, minor <= device; sm_XYa only on exactly X.Y;
    sm_XYf on the same major with minor <= device); else "ptx" if some compute_XY <= capability can be
    JIT-compiled (compute_XYa/f restricted as above); else None. JIT also needs a driver new enough for
    the build's PTX, which this does not check. Unparsable capability -> None.
    """
    dev = _cap(capability)
    if dev is None:
        return None
    if isinstance(arch_list, dict):
        arch_list = list(arch_list.get("sass", [])) + list(arch_list.get("ptx", []))
    kinds = set()
    for a in arch_list or []:
        m = _ARCH.match(str(a).strip().lower())
        if m and _runs(m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4), dev):
            kinds.add(m.group(1))
    return "sass" if "sm" in kinds else "ptx" if "compute" in kinds else None


def releases_with_arch(capability: str) -> list[tuple[str, str]]:
    """(release series, variant) pairs whose Linux x86_64 wheel runs on this capability (SASS or PTX).

    Newest release first; within a release, newest CUDA first. E.g. "12.0" -> [("2.15", "cu132"), ...].
    """
    out = []
    builds = _load("torch_arch_lists")["builds"]
    for series in sorted(builds, key=_tv, reverse=True):
        for variant in sorted(builds[series], key=lambda v: _mm(cuda_of_variant(v)) or (0, 0), reverse=True):
            if arch_runs(capability, builds[series][variant]):
                out.append((series, variant))
    return out


def variants_for_driver(torch_version: str, driver: str, os: str = "linux") -> list[str]:
    """CUDA variants published for this release that the driver can run, newest CUDA first ([] if none/unknown)."""
    r = torch_release(torch_version)
    if not r:
        return []
    cuda = [(v, c) for v in r["variants"] if (c := cuda_of_variant(v))]
    ok = [(v, c) for v, c in cuda if driver_supports_cuda(driver, c, os)]
    return [v for v, _c in sorted(ok, key=lambda vc: _tmm(vc[1]), reverse=True)]


# ---------------------------------------------------------------- GPUs

_NOISE = re.compile(
    r"^(\d+gb?|hbm\d?e?|pcie|sxm\d?|nvl|dgxs|fhhl|laptop|gpu|mobile|with|max|q|design|nvgpu)$"
)  # nvgpu: how Jetson GPUs name themselves ("Orin (nvgpu)")
_PREFIX = {"nvidia", "geforce", "tesla", "grid"}


def _norm_gpu(name: str) -> str:
    """Canonical key for a GPU name: "NVIDIA A100-SXM4-80GB" -> "a100", "NVIDIA GeForce RTX 4060 Laptop GPU"
    -> "rtx 4060", "Tesla K40m" -> "k40m"."""
    s = re.sub(r"[®™()\[\],]", " ", str(name).lower()).replace("-", " ").replace("_", " ")
    # written together as users type them: "GTX1070" -> "gtx 1070", "980TI" / "2060super" -> "980 ti" / "2060 super"
    s = re.sub(r"\b(gtx|rtx|gt|mx)(?=\d)", r"\1 ", s)
    s = re.sub(r"\b(\d{3,4})(ti|super)\b", r"\1 \2", s)
    toks = [t for t in s.split() if t not in _PREFIX and not _NOISE.match(t)]
    return " ".join(toks)


@functools.lru_cache(maxsize=None)
def _gpu_index() -> dict[str, str | None]:
    t = _load("gpu_compute_capability")
    idx: dict[str, str | None] = {}
    for cc, names in t["gpus"].items():
        for n in names:
            k = _norm_gpu(n)
            if k in idx and idx[k] != cc:
                idx[k] = None  # collision: never guess
            else:
                idx.setdefault(k, cc)
    for n in t["ambiguous"]:
        idx[_norm_gpu(n)] = None
    return idx


#: GeForce series sold only as RTX (20, 30, 40, 50 and their laptop parts) or only as GTX (9xx, 10xx): users write
#: "GTX 3090" or "RTX 1080"; a name unknown as written is read with the series' own prefix, never one that exists.
_SWAPPED_PREFIX = re.compile(r"^(gtx|rtx) ((?:[2-5]0|9|10)\d{2})\b")


def compute_capability(gpu_name: str) -> str | None:
    """Compute capability ("8.6") of a GPU by name as nvidia-smi/torch print it, or None if unknown/ambiguous.

    Tolerates the "NVIDIA "/"GeForce "/"Tesla " prefixes, case, memory/form-factor suffixes
    ("80GB HBM3", "-SXM4-40GB", "PCIe", "NVL"), "Laptop GPU"/"with Max-Q Design", and a GeForce series written
    with the other prefix ("GTX 3090" is the RTX 3090, "RTX 1080" the GTX 1080).
    """
    if not gpu_name or not str(gpu_name).strip():
        return None
    key = _norm_gpu(gpu_name)
    idx = _gpu_index()
    if key not in idx:
        m = _SWAPPED_PREFIX.match(key)
        other = {"gtx": "rtx", "rtx": "gtx"}[m.group(1)] + key[3:] if m else None
        if other and other in idx:
            return idx[other]
    return idx.get(key)


def archs_of_cuda(cuda: object) -> list[str] | None:
    """The sm_ architectures a build made with this CUDA (7.0 or later) can have code for, oldest first
    (kb/cuda_arch_support.json: the first CUDA whose nvcc builds each); None for an unknown or older CUDA."""
    v = _mm(cuda)
    if v is None or v < (7, 0):
        return None
    first = _load("cuda_arch_support")["first_cuda"]
    return sorted((a for a, c in first.items() if _tmm(c) <= v), key=lambda a: int(a[3:]))


def first_cuda_of_arch(arch: str) -> str | None:
    """The first CUDA release whose nvcc builds code for ``arch`` ("sm_86" -> "11.1"); None when unknown."""
    return _load("cuda_arch_support")["first_cuda"].get(arch)


def cores_per_sm(capability: str) -> int | None:
    """FP32 CUDA cores per SM for a compute capability (as NVIDIA's helper_cuda.h); None if unknown."""
    cc = _cap(capability)
    if cc is None:
        return None
    return _load("cores_per_sm")["cores_per_sm"].get(f"{cc[0]}.{cc[1]}")


def registers_per_block(capability: str) -> int | None:
    """32-bit registers per thread block (cudaDeviceProp.regsPerBlock) for a compute capability; None if unknown."""
    cc = _cap(capability)
    if cc is None:
        return None
    table = _load("registers_per_block")["registers_per_block"]
    return table.get(f"{cc[0]}.{cc[1]}", table.get(str(cc[0])))


def app_validated_drivers() -> dict[str, dict]:
    """Application -> {names, version, releases: {"5.1": {branch, linux, windows}}, newest_listed}: the driver branch
    each listed release is validated on (kb/app_validated_drivers.json)."""
    return dict(_load("app_validated_drivers")["apps"])


def docker_desktop_gpu_regressions() -> dict[str, dict]:
    """Docker Desktop release -> {symptom, last_good, tracking}: releases that broke GPU containers under WSL 2
    (kb/docker_desktop_gpu.json)."""
    return dict(_load("docker_desktop_gpu")["releases"])


def linux_only_packages() -> dict[str, dict]:
    """PyPI name -> {what, aliases, platforms, sdist, latest, releases, source}: GPU packages none of whose releases has
    a Windows or macOS wheel (kb/package_platforms.json)."""
    return dict(_load("package_platforms")["packages"])
