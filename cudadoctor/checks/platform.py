"""Platform problems: no wheel for this interpreter, Windows DLLs that cannot load, WSL's driver.

Codes: python-unsupported, dll-load-failure, wsl-driver-in-guest.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import (
    driver_version,
    environment,
    is_wsl,
    loaded_libraries,
    mm,
    mm_str,
    os_key,
    platform_key,
    release_of,
    torch_release,
    torch_version,
    variant,
)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import INDEX, PIP, error_match, kb, search
from ._fixes import install_commands, python_fix
from .torch_package import python_unsupported_pip_words

PYTHON_UNSUPPORTED = Code(
    code="python-unsupported",
    title="PyTorch publishes no wheel for this Python or platform",
    area="system",
    severity="error",
    explanation={
        "what": "No torch wheel exists for this interpreter: a Python version outside the range a "
        "release supports (too new or too old), a 32-bit Python, or an OS/CPU architecture without "
        "wheels (e.g. 32-bit ARM, Intel macOS after torch 2.2).",
        "why": "pip only installs wheels whose tags match the interpreter. With none, it reports "
        '"Could not find a version that satisfies the requirement torch (from versions: none)" and '
        '"No matching distribution found for torch" — or offers only the ancient 0.1.2 source '
        "packages, which is the tell-tale sign of a 32-bit Python.",
        "confirm": '`python -c "import sys, platform, struct; print(sys.version, platform.machine(), '
        "struct.calcsize('P') * 8, 'bit')\"` and compare with the supported Python versions of the "
        "release (https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix).",
        "fix": "Create the environment with a 64-bit Python inside the supported range (the finding "
        "names it), or pick a torch release that supports your Python.",
    },
    links=(
        "https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix",
        "https://pytorch.org/get-started/locally/",
    ),
)

DLL_LOAD_FAILURE = Code(
    code="dll-load-failure",
    title="Windows cannot load one of torch's DLLs",
    area="system",
    severity="error",
    explanation={
        "what": "On Windows, `import torch` fails because a DLL in torch\\lib (c10.dll, fbgemm.dll, "
        "torch_cuda.dll, cudnn*.dll…) or one of its dependencies cannot be loaded.",
        "why": "Typical causes: the Microsoft Visual C++ runtime (msvcp140.dll, vcruntime140_1.dll) is "
        "missing or too old; torch 2.4.0's fbgemm.dll needs libomp140.x86_64.dll, which the wheel did "
        "not ship (fixed in 2.4.1); cuDNN 8 builds need zlibwapi.dll; DLLs left behind by an older "
        'torch in the same folder, or another CUDA/cuDNN earlier on PATH. Windows reports "[WinError '
        "126] The specified module could not be found. Error loading ...\\torch\\lib\\c10.dll or one of "
        'its dependencies" (or WinError 127/1114).',
        "confirm": "The DLL named in the error; `where msvcp140.dll vcruntime140_1.dll`; a dependency "
        "viewer (e.g. Dependencies.exe) on that DLL shows which dependency is missing.",
        "fix": "Install the latest Microsoft Visual C++ Redistributable (x64), upgrade torch 2.4.0 to "
        "2.4.1, or uninstall torch completely (repeat until pip says it is not installed, delete a "
        "leftover site-packages\\torch folder) and reinstall.",
    },
    links=(
        "https://learn.microsoft.com/en-us/cpp/windows/latest-supported-vc-redist",
        "https://github.com/pytorch/pytorch/issues/129568",
    ),
)

WSL_DRIVER_IN_GUEST = Code(
    code="wsl-driver-in-guest",
    title="A Linux NVIDIA driver inside WSL2 shadows the Windows driver",
    area="driver",
    severity="error",
    explanation={
        "what": "Under WSL2, a Linux NVIDIA driver or its libcuda was installed inside the Linux "
        "guest (e.g. by `apt install cuda` or `nvidia-driver-*`), so it is found before the "
        "WSL libcuda in /usr/lib/wsl/lib that forwards to the Windows driver.",
        "why": "WSL2 GPUs are reached only through the Windows driver; a Linux driver's libcuda in "
        'the guest cannot talk to the GPU, and CUDA fails with "CUDA driver version is insufficient '
        'for CUDA runtime version" or finds no device.',
        "confirm": "`ls -l /usr/lib/x86_64-linux-gnu/libcuda.so*` (should not exist under WSL); "
        "`ldconfig -p | grep libcuda` should point into /usr/lib/wsl/lib; `dpkg -l | grep -E "
        "'nvidia-driver|libnvidia-compute|cuda-drivers'`.",
        "fix": "Remove the Linux driver packages from the WSL distribution, run `sudo ldconfig`, and "
        "install only the CUDA toolkit (cuda-toolkit-X-Y from the WSL-Ubuntu repository) if you "
        "need nvcc; keep the Windows driver up to date instead.",
    },
    links=("https://docs.nvidia.com/cuda/wsl-user-guide/index.html",),
)


# ---------------------------------------------------------------- python-unsupported

_NO_WHEEL_ARCH = re.compile(r"^(armv[67]\w*|arm|i[3-6]86|x86|ppc64le|ppc64|s390x|riscv64|mips\w*)$", re.IGNORECASE)


def _requested(fx: Facts, said: Optional[Tuple[str, str]]) -> Optional[str]:
    """The torch version pip was asked for, as the error text shows it."""
    if not said:
        return None
    m = re.search(r"requirement torch\s*(?:==|~=|>=|<=|<|>)?\s*([0-9][\w.+]*)?", said[1])
    # uv: "Distribution `torch==2.8.0 @ ...`", its hint "`torch` (v2.8.0)"; Poetry: "candidates for torch (2.5.1+cu124)"
    m = m or re.search(
        r"Distribution `?torch==([0-9][\w.+]*)|\btorch`? \(v([0-9][\w.+]*)\)|candidates for torch \(([0-9][\w.+]*)\)", said[1]
    )
    req = next((g for g in m.groups() if g), None) if m else None
    if "torch" in said[1] and req is None:
        m = re.search(r"torch==([0-9][\w.+]*)", fx.user_error())
        req = m.group(1) if m else None
    return req


def _older_than_the_tables(py: str) -> bool:
    """A Python older than every release the kb knows supports (2.7, 3.5): older torch had wheels for it,
    so the tables cannot say there were none."""
    lows = [mm((r.get("python") or {}).get("min")) for r in kb()._load("torch_releases")["releases"].values()]
    known = [x for x in lows if x is not None]
    mine = mm(py)
    return mine is not None and bool(known) and mine < min(known)


def _python_reasons(py: Optional[str], bits: Optional[int], arch: str, plat: str, req: Optional[str]) -> List[str]:
    """Why no wheel fits: 32-bit, an architecture without wheels, or a Python the release has no wheels for."""
    reasons: List[str] = []
    if bits == 32:
        reasons.append(f"this is a 32-bit Python{(' ' + py) if py else ''}; PyTorch publishes only 64-bit wheels")
    if arch and _NO_WHEEL_ARCH.match(arch):
        reasons.append(f"PyTorch publishes no wheels for the {arch} architecture")
    tag = re.search(r"\+(cu\d{2,3})\b", req or "")
    if tag and plat.startswith("macos"):
        # torch's CUDA builds exist for Linux and Windows only (download.pytorch.org's cuXXX indexes); macOS has CPU/MPS.
        reasons.append(f"PyTorch publishes no CUDA ({tag.group(1)}) builds for macOS: only CPU/MPS wheels")
    if py and not reasons:
        if req and kb().python_supported(release_of(req) or req, py, plat) is False:
            rng = (kb().torch_release(release_of(req) or req) or {}).get("python") or {}
            if kb().python_supported(release_of(req) or req, py) is True:  # the Linux range has it: a platform gap
                first = (kb().first_torch_for_python(mm_str(py) or "", "windows") or ("?",))[0]
                reasons.append(
                    f"torch {release_of(req)} has no Windows wheels for Python {mm_str(py) or py} (they start with torch {first})"
                )
            else:
                reasons.append(
                    f"torch {release_of(req)} has wheels for Python {rng.get('min')}–{rng.get('max')}, not {mm_str(py) or py}"
                )
        elif kb().newest_torch_for_python(py, plat) is None and not _older_than_the_tables(py):
            reasons.append(f"no torch release has wheels for Python {mm_str(py) or py} on {plat}")
        elif req and plat != "linux-x86_64" and kb().torch_wheel_on_pypi(release_of(req) or req, py, plat) is False:
            # PyPI's own file list (kb/torch_wheels.json): on macOS, Windows and Linux aarch64 PyPI's wheels are
            # the ones there are (linux-x86_64 has CUDA indexes beside PyPI: the release ranges above cover it).
            have = kb().pypi_torch_versions(py, plat) or []
            reasons.append(
                f"PyPI has no torch {release_of(req) or req} wheel for Python {mm_str(py) or py} on {plat}"
                + (f" (its wheels there: torch {have[0]} to {have[-1]})" if have else "")
            )
    return reasons


#: pip found no torch wheel of any version for this interpreter: "(from versions: none)", a wheel
#: whose tags do not fit, or an unpinned "No matching distribution found for torch" (with a pin that
#: pip saw other versions of, the line names the pin: torch==1.4.0).
_NO_CANDIDATE = re.compile(
    r"from versions: (?:none|0\.1\.2)|is not a supported wheel on this platform|"
    r"(?:No matching distribution found for|Could not find a version that satisfies the requirement) torch[ \t\r]*(?:$|\n)|"
    r"doesn't have a source distribution or wheel for the current platform|only has wheels with the following Python|"
    r"Unable to find installation candidates for torch",
    re.IGNORECASE | re.MULTILINE,
)


@check(PYTHON_UNSUPPORTED)
def python_unsupported(fx: Facts) -> Iterator[Finding]:
    found = list(_python_unsupported(fx))
    if found:
        yield from found
        return
    yield from python_unsupported_pip_words(fx, PYTHON_UNSUPPORTED)  # pip's own words, a 32-bit OS


def _python_unsupported(fx: Facts) -> Iterator[Finding]:
    status = fx.str("torch.status")
    said = error_match(fx, PYTHON_UNSUPPORTED)
    torch_runs = status == "ok" or bool(fx.str("torch.version") and status not in ("not-installed", "import-failed"))
    if torch_runs and not said:
        return  # a torch imports in this interpreter, so wheels exist for it
    py, bits, arch, plat = fx.str("python.version"), fx.int("python.bits"), fx.str("system.arch") or "", platform_key(fx)
    if not py and said:  # uv's hint names the interpreter: "You're using CPython 3.14 (`cp314`)"
        m = re.search(r"You're using C?Python (\d+\.\d+(?:\.\d+)?)", said[1] + "\n" + fx.user_error())
        py = m.group(1) if m else None
    req = _requested(fx, said)
    reasons = _python_reasons(py, bits, arch, plat, req)
    era = None if (torch_runs or reasons) else _before_wheels(fx, py, plat)
    if era:
        minor = ".".join(era["python"].split(".")[:2])
        reasons.append(
            f"Python {era['python']} came out on {era['python_date']}; the first torch with wheels for Python {minor} "
            f"on this platform was {era['first_torch']} ({era['first_torch_date']})"
        )
    if torch_runs and not any(r.startswith("torch ") for r in reasons):
        return  # some torch imports here: only a pinned release without wheels for this Python is this code
    if not reasons and not said:
        return
    if not reasons and said and fx.user_error() and not _NO_CANDIDATE.search(said[1] + "\n" + fx.user_error()):
        # pip saw torch versions, just not the one asked for: a pin/index problem, not the interpreter.
        return
    evidence: Dict[str, Any] = {
        "python.version": py,
        "python.bits": bits,
        "system.arch": arch or None,
        "platform": plat,
        "requested": req,
    }
    if said:
        evidence[said[0]] = said[1]
    cmds, why = python_fix(environment(fx), bits, any("architecture" in r for r in reasons), req)
    title = "No PyTorch wheel for this interpreter: " + (reasons[0] if reasons else "pip found no torch wheel matching it")
    if era:
        evidence["python_released"] = era
        major, minor = (py or "3.0").split(".")[:2]
        cmds = [
            "python -m pip install --upgrade pip",
            f'python -m pip install "torch>={era["first_torch"]}"  # the first torch with wheels for Python {major}.{minor}',
            f"# or, for an older torch: an environment with Python {major}.{int(minor) - 1}",
        ]
        why = "pip installs only wheels built for the interpreter's Python version; torch publishes them some weeks after a new Python."
    severity = "warning" if era and not said else "error"  # the dates alone: likely, not proven
    yield PYTHON_UNSUPPORTED.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why), severity=severity)


#: Days between a Python release and the first torch wheels for its minor from which a pasted report
#: with no torch is read as "made before the wheels existed" (cudadoctor's choice: a gap of days
#: says little about when the user tried to install).
ERA_GAP_DAYS = 28


def _before_wheels(fx: Facts, py: Optional[str], plat: str) -> Optional[Dict[str, str]]:
    """A pasted report (not this machine: today's wheels are known) of a Python with no torch importable,
    whose patch release came out well before any torch had wheels for its minor: kb.python_predates_torch's dates."""
    status = fx.str("torch.status")
    absent = status == "not-installed" or (status is None and fx.get("torch.importable") is False)
    if fx.origin == "live" or not absent or not py:
        return None
    era = kb().python_predates_torch(py, plat)
    if not era or (date.fromisoformat(era["first_torch_date"]) - date.fromisoformat(era["python_date"])).days < ERA_GAP_DAYS:
        return None
    return era


# ---------------------------------------------------------------- dll-load-failure

_VC = ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll")


@check(DLL_LOAD_FAILURE)
def dll_load_failure(fx: Facts) -> Iterator[Finding]:
    """The user's/torch's Windows load error, and the Windows probe's resolution of torch\\lib's imports."""
    said = error_match(fx, DLL_LOAD_FAILURE)
    if said and os_key(fx) != "windows" and "dll" not in said[1].lower() and "WinError" not in said[1]:
        said = None
    if said and "WinError 1455" in f"{said[1]}\n{fx.user_error()}\n{fx.str('torch.error.message') or ''}":
        said = None  # nothing is missing: the paging file is too small (windows-pagefile-too-small)
    if said and "WinError 193" in said[1] and re.search(r"[\w.\-]+\.so\b", fx.user_error() or ""):
        said = None  # a Linux library (.so) loaded on Windows: no DLL is at fault (package-not-built-for-platform)
    tl = fx.dict("windows.torch_lib") or {}
    missing = [m for m in (tl.get("missing") or []) if isinstance(m, dict) and isinstance(m.get("dll"), str)]
    leftovers = [x for x in (tl.get("not_in_record") or []) if isinstance(x, str)]
    vc = fx.dict("windows.vc_runtime") or {}
    vc_absent = [n for n in _VC if n in vc and vc[n] is None]
    vc_absent += [m["dll"].lower() for m in missing if m["dll"].lower() in _VC and m["dll"].lower() not in vc_absent]
    failed = fx.str("torch.status") == "import-failed"
    if not said and not missing and not vc_absent and not (failed and leftovers and os_key(fx) == "windows"):
        return
    full = f"{fx.user_error()}\n{fx.str('torch.error.message') or ''}"
    m = re.search(r"([\w.\-]+\.dll)", said[1]) if said else None
    m = m or re.search(r"([\w.\-]+\.dll)", full)
    dll = m.group(1) if m else (missing[0]["needed_by"] if missing else None)
    evidence = {
        "dll": dll,
        "torch.version": torch_version(fx),
        "system.os": fx.str("system.os"),
        "windows.torch_lib.missing": missing or None,
        "vc_runtime_absent": vc_absent or None,
        "windows.torch_lib.not_in_record": leftovers or None,
    }
    if said:
        evidence[said[0]] = said[1]
    cmds, why, title = _dll_fix(fx, said, full, dll, missing, vc_absent)
    if leftovers:
        cmds.insert(
            0,
            f"# torch\\lib holds DLLs the installed wheel does not list (left from an older install): {', '.join(leftovers[:5])}",
        )
    store = re.search(_STORE_PYTHON, f"{full}\n{fx.str('python.executable') or ''}", re.I)
    if store:
        evidence["store_python"] = store.group(0)
        cmds.append(
            "# this is the Microsoft Store's Python: a packaged app's DLL search skips PATH, so DLLs found only "
            "through PATH (CUDA, cuDNN) are not found; install Python from python.org, or put the DLLs beside the package"
        )
    severity = "error" if (said or failed or fx.str("torch.status") is None) else "warning"
    yield DLL_LOAD_FAILURE.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why), severity=severity)


#: The Microsoft Store's Python: its install path (PythonSoftwareFoundation.Python.3.x_qbz5n2kfra8p0 under Packages or
#: WindowsApps) or the user saying so. Packaged apps' DLL search order has no PATH
#: (https://learn.microsoft.com/en-us/windows/win32/dlls/dynamic-link-library-search-order#search-order-for-packaged-apps).
_STORE_PYTHON = (
    r"PythonSoftwareFoundation\.Python\.3[\w.]*_qbz5n2kfra8p0|\\WindowsApps\\python[\d.]*\.exe|"
    r"(?:Python|it) (?:is )?(?:installed )?from (?:the )?(?:Microsoft|Windows) Store"
)


#: cuDNN 8.3-8.9 on Windows without zlibwapi.dll: cuDNN's own message, or its convolution sub-library failing to
#: load with error 126 (a DLL it imports is missing) (kb/errors/platform2.json has the threads).
CUDNN8_ZLIB = r"Could not locate zlibwapi\.dll|Could not load library cudnn_cnn_(?:infer|train)64_8\.dll\.? Error code 126"


def _zlib_fix(fx: Facts, dll: Optional[str], reinstall: List[str]) -> Tuple[List[str], str, str]:
    """cuDNN 8's zlibwapi.dll: NVIDIA's cuDNN 8 install guide lists it as a separate prerequisite. torch's wheels
    bring their own cuDNN (and what it needs); other packages (onnxruntime-gpu, CTranslate2, Paddle, TensorRT)
    use the cuDNN installed on the system, which needs it installed beside it."""
    cmds = [
        "where zlibwapi.dll  # nothing found: that is the cause",
        "where cudnn64_8.dll  # the cuDNN in use: put zlibwapi.dll (the x64 ZLIB DLL of NVIDIA's cuDNN 8 guide, see its 'Installing Zlib') in that directory",
        "# or a cuDNN that does not need it: cuDNN 9, or the pip wheels nvidia-cudnn-cu11 / nvidia-cudnn-cu12 where the package uses them",
    ]
    why = "cuDNN 8.3-8.9's Windows DLLs import zlibwapi.dll, which is installed separately from cuDNN."
    sub = dll if dll and dll.lower().startswith("cudnn_") else None
    title = (
        f"Windows cannot load {sub} (error 126: a DLL it imports is missing): cuDNN 8.3+ needs zlibwapi.dll"
        if sub
        else "cuDNN 8 cannot find zlibwapi.dll, a prerequisite NVIDIA's cuDNN 8 guide has you install separately"
    )
    if torch_version(fx):
        cmds += [
            "# for torch: its wheel brings its own cuDNN; a cuDNN from PATH loaded instead needs zlib - remove that directory from PATH, or reinstall:"
        ]
        cmds += _CLEAN + reinstall
    return cmds, why, title


_REDIST = "winget install --id Microsoft.VCRedist.2015+.x64  # or run https://aka.ms/vs/17/release/vc_redist.x64.exe"
_CLEAN = [
    f"{PIP} uninstall -y torch torchvision torchaudio  # repeat until pip says torch is not installed",
    "# delete a leftover ...\\site-packages\\torch folder if one remains, then reinstall:",
]


def _dll_fix(
    fx: Facts, said: Optional[Tuple[str, str]], full: str, dll: Optional[str], missing: List[dict], vc_absent: List[str]
) -> Tuple[List[str], str, str]:
    """The situation behind the load failure, as (commands, why, title) (a paging file too small is
    windows-pagefile-too-small, text_classes.py): torch 2.4.0's fbgemm.dll without its OpenMP runtime, cuDNN without zlibwapi, the Visual C++
    runtime, a DLL torch should have brought, or stale DLLs."""
    rel, var = torch_release(fx), variant(fx)
    reinstall = (
        install_commands(environment(fx), rel, var)
        if rel
        else [f"{PIP} install torch torchvision --index-url {INDEX}{var or 'cu126'}"]
    )
    d = (dll or "").lower()
    miss = {x["dll"].lower() for x in missing}
    if "libomp140.x86_64.dll" in miss or (d == "fbgemm.dll" and rel == "2.4.0"):
        cmds = ["# torch 2.4.0's fbgemm.dll needs libomp140.x86_64.dll, which the wheel did not ship; 2.4.1 fixes it:"]
        cmds += install_commands(environment(fx), "2.4.1", var or "cu121", reinstall=True)
        why = "torch 2.4.1 ships the OpenMP runtime fbgemm.dll depends on."
        return (
            cmds,
            why,
            f"torch {rel or ''} cannot load fbgemm.dll on Windows: libomp140.x86_64.dll is missing".replace("  ", " "),
        )
    if "zlibwapi.dll" in miss or re.search(CUDNN8_ZLIB, full, re.I):
        return _zlib_fix(fx, dll, reinstall)
    if (
        vc_absent
        or d.startswith(("c10", "torch_cpu", "shm", "torch_python"))
        or (said and "1114" in said[1])
        or "msvcp" in full.lower()
        or "vcruntime" in full.lower()
    ):
        cmds = [_REDIST, "# if it still fails, reinstall torch cleanly:"] + _CLEAN + reinstall
        why = f"{dll or 'torch'}'s dependencies include the Visual C++ runtime (msvcp140.dll, vcruntime140_1.dll)."
        title = f"Windows cannot load {dll or 'torch'}: the Visual C++ runtime is " + (
            f"missing ({', '.join(vc_absent)})" if vc_absent else "missing or too old"
        )
        return cmds, why, title
    if missing:
        first = missing[0]
        why = f"{first['dll']} should come with torch or its nvidia-* wheels; a clean reinstall brings it back."
        return (
            _CLEAN + reinstall,
            why,
            f"Windows cannot load {first['needed_by']}: {first['dll']} is not found where the loader looks",
        )
    ver = torch_version(fx)
    why = "Stale DLLs from an older torch, or another CUDA/cuDNN earlier on PATH, break the load; a clean reinstall removes them."
    title = f"Windows cannot load {dll or 'one of torch’s DLLs'}" + (f" (torch {ver})" if ver else "")
    return _CLEAN + reinstall + ["# still failing: " + _REDIST], why, title


# ---------------------------------------------------------------- wsl-driver-in-guest


#: Under WSL2, a driver that cannot be reached the Linux way: nvidia-smi's "couldn't communicate with the NVIDIA driver"
#: and NVML's "Driver Not Loaded" (9) come from a Linux driver's user space looking for /dev/nvidiactl, which WSL does not
#: have (its libraries in /usr/lib/wsl/lib talk to the Windows driver): ollama#1888's class (b138-06: a generic Linux
#: libnvidia-ml loaded under WSL); NVIDIA's CUDA on WSL guide: no Linux display driver inside the distribution.
_GUEST_DRIVER_SYMPTOM = (
    r"couldn't communicate with the NVIDIA driver|NVML_ERROR_DRIVER_NOT_LOADED|nvmlInit\w*[^\n]{0,60}?\breturn(?:s|ed)?\s+9\b"
)


@check(WSL_DRIVER_IN_GUEST)
def wsl_driver_in_guest(fx: Facts) -> Iterator[Finding]:
    if is_wsl(fx) is not True:
        return
    libs = loaded_libraries(fx) or []
    guest = [
        d["path"]
        for d in libs
        if d["name"].startswith("libcuda.so")
        and "/usr/lib/wsl/" not in (d.get("realpath") or d["path"])
        and "/usr/lib/wsl/" not in d["path"]
    ]
    said = error_match(fx, WSL_DRIVER_IN_GUEST) or search(fx, _GUEST_DRIVER_SYMPTOM)
    kmod = fx.dict("system.kernel_modules") or {}
    driver = driver_version(fx)
    k = kb()
    cuda = fx.str("torch.cuda")
    suspect = False
    if not (guest or said or kmod.get("nvidia") is True):
        # nvidia-smi (the Windows driver, through WSL) works, torch's CUDA build cannot use it.
        if driver and cuda and fx.bool("torch.cuda_available") is False and fx.str("torch.status") == "ok" and k:
            suspect = k.driver_supports_cuda(driver, cuda, "windows") is True
        if not suspect:
            return
    if said and not guest and driver and cuda and k:
        if k.driver_supports_cuda(driver, cuda, "windows") is False:
            return  # the Windows driver itself is too old: driver-too-old says so
    evidence = {
        "system.wsl": True,
        "guest_libcuda": guest or None,
        "nvml.driver_version": driver,
        "system.kernel_modules.nvidia": kmod.get("nvidia"),
        "wsl_lib_dir": fx.get("system.wsl_lib_dir"),
    }
    if said:
        evidence[said[0]] = said[1]
    cmds = [
        "ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* /usr/lib/wsl/lib/libcuda.so*  # only the WSL one should exist",
        "dpkg -l | grep -E 'nvidia-driver|libnvidia-compute|cuda-drivers'",
        "sudo apt-get remove --purge '^nvidia-driver-.*' '^libnvidia-compute-.*' cuda-drivers  # the Linux driver inside WSL",
        "sudo ldconfig",
        "# need nvcc? install only the toolkit from NVIDIA's wsl-ubuntu repository (cuda-toolkit-12-x), never 'cuda' or 'cuda-drivers'",
    ]
    title = (
        "Under WSL2, libcuda is loaded from " + guest[0] + " instead of /usr/lib/wsl/lib"
        if guest
        else "Under WSL2, a Linux NVIDIA driver inside the guest is the likely cause of: " + said[1][:120]
        if said
        else "Under WSL2, an NVIDIA Linux kernel module is loaded inside the guest"
        if kmod.get("nvidia") is True
        else f"Under WSL2, torch cannot use CUDA although driver {driver} supports CUDA {cuda}: "
        "a Linux driver inside the guest is the usual cause"
    )
    yield WSL_DRIVER_IN_GUEST.finding(
        title=title,
        evidence=evidence,
        severity="warning" if suspect else "error",
        fix=Fix(
            tuple(cmds), "WSL2 reaches the GPU only through the Windows driver via /usr/lib/wsl/lib; a guest driver shadows it."
        ),
    )


def register():
    return [python_unsupported, dll_load_failure, wsl_driver_in_guest]
