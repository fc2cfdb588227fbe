"""Is the driver new enough, consistent with itself, and fully initialised for this torch build?

Codes: driver-too-old, nvml-driver-mismatch, cuda-forward-compat, fabric-manager-missing.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import (
    driver_os,
    driver_version,
    environment,
    gpus,
    is_cuda_build,
    is_wsl,
    kernel_module,
    ld_library_path,
    loaded_libraries,
    mm,
    torch_cuda,
    torch_release,
    torch_version,
    variant,
    vtuple,
)
from cudadoctor.model import Code, Finding, Fix, check

from . import _containers
from ._common import error_match, kb, text_of
from ._fixes import driver_alternative, filtered_path_command, install_commands
from .drv10 import compat_named, program_floor, stated_floor_unmet
from .ptx11 import PtxTooNew, driver_jit_too_old
from .text_classes import legacy_gpu_cannot_run

DRIVER_TOO_OLD = Code(
    code="driver-too-old",
    title="The NVIDIA driver is too old for this PyTorch build",
    area="driver",
    severity="error",
    explanation={
        "what": "The installed NVIDIA driver supports a lower CUDA version than the one the torch "
        "build was compiled with, counting CUDA minor-version compatibility: a cu12x wheel runs on "
        "any driver at or above the CUDA 12 floor (525.60.13 on Linux, 527.41 on Windows), a cu13x "
        "wheel needs a 580 or newer driver, and builds before CUDA 11 need that toolkit's own minimum.",
        "why": "The CUDA runtime inside torch asks the driver for a CUDA level it does not provide, "
        "so CUDA initialisation fails: torch.cuda.is_available() is False and the first CUDA call "
        'says "The NVIDIA driver on your system is too old (found version 11040)" — the number is '
        "the CUDA level the driver offers (11040 = 11.4).",
        "confirm": "`nvidia-smi` prints the driver version and the highest CUDA it supports (top "
        'right); `python -c "import torch; print(torch.version.cuda)"` prints the CUDA torch needs.',
        "fix": "Either upgrade the driver to at least the minimum the finding names (then reboot), "
        "or install the newest torch wheel variant the present driver can run (the finding gives "
        "the exact command).",
    },
    links=(
        "https://docs.nvidia.com/deploy/cuda-compatibility/",
        "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id5",
        "https://pytorch.org/get-started/previous-versions/",
    ),
)

NVML_DRIVER_MISMATCH = Code(
    code="nvml-driver-mismatch",
    title="The loaded NVIDIA kernel module and the driver's user-space libraries are different versions",
    area="driver",
    severity="error",
    explanation={
        "what": "The kernel module (`/proc/driver/nvidia/version`) and the user-space driver "
        "libraries (libcuda, libnvidia-ml, nvidia-smi) come from different driver releases.",
        "why": "Usually the driver packages were upgraded (often by unattended upgrades) without a "
        "reboot, an upgrade was left half-finished, or a driver was installed inside a container "
        'whose host runs another one. NVML refuses to start ("Failed to initialize NVML: '
        'Driver/library version mismatch") and CUDA fails with error 803 ("system has unsupported '
        'display driver / cuda driver combination").',
        "confirm": "`cat /proc/driver/nvidia/version` (kernel module) against `nvidia-smi`'s "
        "\"NVML library version\" line or `dpkg -l | grep -E 'nvidia-(driver|utils)|libnvidia-compute'`; "
        "`sudo dmesg | grep -i 'API mismatch'`.",
        "fix": "Reboot so the kernel module matching the installed libraries loads. If it persists, "
        "repair the package set so one driver version is installed (apt --fix-broken install, or "
        "reinstall the driver). In a container, remove the driver packages from the image: the "
        "NVIDIA container runtime mounts the host's libraries.",
    },
    links=(
        "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/",
        "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html",
    ),
)

CUDA_FORWARD_COMPAT = Code(
    code="cuda-forward-compat",
    title="CUDA forward-compatibility libraries are used on a GPU that does not support them",
    area="driver",
    severity="error",
    explanation={
        "what": "A libcuda from the cuda-compat package (a `compat/` directory, e.g. "
        "`/usr/local/cuda/compat`) is on the loader path or loaded, on a GPU outside the forward-"
        "compatibility support list — in practice a GeForce/TITAN card.",
        "why": "Forward compatibility lets an older driver run a newer CUDA by swapping in newer "
        "user-space driver libraries, but NVIDIA supports it only on data-center GPUs (and some "
        'professional RTX boards). Elsewhere CUDA initialisation fails with error 804, "forward '
        'compatibility was attempted on non supported HW". CUDA container images add the compat '
        "directory when the host driver is older than the image's CUDA.",
        "confirm": "`echo $LD_LIBRARY_PATH | tr : '\\n' | grep compat`; `ldconfig -p | grep libcuda`; "
        "`nvidia-smi` shows the GPU model and the CUDA level the host driver supports natively.",
        "fix": "Upgrade the host driver so it supports the CUDA version natively, or use a torch "
        "build/container image whose CUDA the driver already supports; remove the compat directory "
        "from LD_LIBRARY_PATH (or uninstall the cuda-compat package).",
    },
    links=("https://docs.nvidia.com/deploy/cuda-compatibility/#forward-compatibility",),
)

FABRIC_MANAGER_MISSING = Code(
    code="fabric-manager-missing",
    title="NVSwitch system without a running NVIDIA Fabric Manager",
    area="driver",
    severity="error",
    explanation={
        "what": "An NVSwitch-based system (HGX/DGX boards such as 8x A100/H100/H200/B200 SXM, and "
        "VMs given GPUs from such boards) whose nvidia-fabricmanager service is not running, or "
        "runs a different version than the driver.",
        "why": "On NVSwitch systems the GPUs stay uninitialised until Fabric Manager has configured "
        'the NVLink fabric. Until then CUDA fails with error 802, "system not yet initialized", '
        "although nvidia-smi lists every GPU.",
        "confirm": "`systemctl status nvidia-fabricmanager`; `nvidia-smi -q | grep -A2 -i fabric` "
        "(State should be Completed); `nvidia-smi topo -m` shows NV# links through NVSwitch.",
        "fix": "Install the nvidia-fabricmanager package whose version equals the driver's exactly, "
        "then `sudo systemctl enable --now nvidia-fabricmanager`.",
    },
    links=(
        "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html",
        "https://github.com/pytorch/pytorch/issues/35710",
    ),
)


#: The CUDA an image needs and the one the host driver offers, in the NVIDIA container runtimes' own words
#: (kb/errors/drv10.json): libnvidia-container's "unsatisfied condition: cuda>=9.0", nvidia-docker 1.x's
#: "unsupported CUDA version: 7.5 < 6.5" (image label < driver) and "driver 7.5 < image 8.0".
_IMAGE_CUDA = re.compile(
    r"unsatisfied condition:\s*cuda\s*>=?\s*(?P<need>\d+(?:\.\d+)*)"
    r"|unsupported CUDA version:\s*(?:driver\s+(?P<drv>\d+\.\d+)\s*<\s*image\s+(?P<img>\d+(?:\.\d+)*)"
    r"|(?P<label>\d+\.\d+(?:\.\d+)?)\s*<\s*(?P<drv1>\d+\.\d+))",
    re.I,
)


def mm_str(v: str) -> str:
    """'9.0.176' -> '9.0'."""
    return ".".join(v.split(".")[:2])


def _found_api(text: str) -> Optional[str]:
    """'found version 11040' -> '11.4' (the CUDA level the driver offers); a container runtime's driver CUDA."""
    m = re.search(r"found version (\d{4,6})", text)
    if not m:
        img = _IMAGE_CUDA.search(text)
        drv = (img.group("drv") or img.group("drv1")) if img else None
        return drv if drv and drv != "0.0" else None
    n = int(m.group(1))
    return f"{n // 1000}.{(n % 1000) // 10}"


def _api_runs(variant_cuda: str, api: str) -> bool:
    """Can a driver offering CUDA `api` run a build for `variant_cuda` (with minor-version compatibility)?"""
    v, a = mm(variant_cuda), mm(api)
    if not v or not a:
        return False
    if v[0] != a[0]:
        return v[0] < a[0]
    return v[0] >= 11 or v[1] <= a[1]


def _driver_upgrade(fx: Facts, floor: Optional[str]) -> List[str]:
    from .driver import _driver_install_fix  # the distro-specific install commands

    cmds = list(_driver_install_fix(fx))
    if floor:
        cmds.insert(0, f"# needs driver >= {floor}; then check with: nvidia-smi")
    return cmds


def _driver_verdict(cuda: Optional[str], driver: Optional[str], os_name: str, api: Optional[str]) -> Optional[bool]:
    """Does the driver run the build's CUDA? From the kb, else from the CUDA level the error text names."""
    verdict = kb().driver_supports_cuda(driver, cuda, os_name) if (driver and cuda) else None
    if api and cuda and verdict is None:
        verdict = _api_runs(cuda, api)
    return verdict


def _unknown_driver_finding(fx: Facts, cuda: Optional[str], driver: Optional[str]) -> Optional[Finding]:
    """A CUDA build, CUDA not known to work, and no driver version to check it against."""
    nvml = fx.str("nvml.status")
    if (
        cuda
        and not driver
        and nvml not in ("library-missing", "driver-not-loaded", "no-nvidia-smi")
        and (fx.str("torch.status") == "ok" or fx.bool("torch.cuda_available") is False)
        and fx.bool("torch.cuda_available") is not True
        and kernel_module(fx) is not False
    ):
        return DRIVER_TOO_OLD.finding(
            title=f"Could not check the driver against torch's CUDA {cuda}: the driver version is unknown",
            evidence={"torch.cuda": cuda, "nvml.driver_version": None, "nvml.status": nvml},
            fix=Fix(
                ("nvidia-smi  # the driver version and the highest CUDA it supports",),
                "Compare the driver with the minimum for CUDA " + cuda + ".",
            ),
            severity="info",
        )
    return None


def _below_full_minimum_finding(fx: Facts, cuda: Optional[str], driver: Optional[str], os_name: str) -> Optional[Finding]:
    """Runnable only through minor-version compatibility, and CUDA is unavailable: the driver is the first
    suspect (features such as PTX JIT and lazy loading need the full minimum)."""
    if not (cuda and driver and fx.bool("torch.cuda_available") is False):
        return None
    full = kb().min_driver_for_cuda(cuda, os_name, minor_compat=False)
    if not (full and (vtuple(driver) or ()) < (vtuple(full) or ())):
        return None
    return DRIVER_TOO_OLD.finding(
        title=f"Driver {driver} is below CUDA {cuda}'s own minimum ({full}) and CUDA is unavailable",
        evidence={
            "torch.version": torch_version(fx),
            "torch.cuda": cuda,
            "nvml.driver_version": driver,
            "min_driver_full": full,
            "torch.cuda_available": False,
        },
        fix=Fix(
            tuple(_driver_upgrade(fx, full)),
            f"torch runs on driver {driver} only through CUDA minor-version compatibility, which does not "
            f"cover everything; CUDA {cuda}'s own minimum driver is {full}.",
        ),
        severity="warning",
    )


def _too_old_finding(
    fx: Facts,
    cuda: Optional[str],
    driver: Optional[str],
    api: Optional[str],
    said: Optional[Tuple[str, str]],
    verdict: Optional[bool],
) -> Finding:
    """The driver is too old for the build: upgrade it, or keep it and install a build it runs."""
    os_name = driver_os(fx)
    floor = kb().min_driver_for_cuda(cuda, os_name) if cuda else None
    release, ver = torch_release(fx), torch_version(fx)
    evidence = {
        "torch.version": ver,
        "torch.cuda": cuda,
        "nvml.driver_version": driver,
        "driver_cuda": (kb().max_cuda_for_driver(driver) if driver else None) or api,
        "min_driver_for_build": floor,
    }
    if said:
        evidence[said[0]] = said[1]
    env = environment(fx)
    alt = driver_alternative(env, release, variant(fx), driver, api, _api_runs)
    cmds = _driver_upgrade(fx, floor)
    build = f"torch {ver}" if ver else ("this torch build" if torch_cuda(fx) or not said else "this program")
    why = f"{build} is built with CUDA {cuda}" if cuda else f"{build} needs a newer CUDA than the driver offers"
    why += f", which needs driver >= {floor}" if floor else ""
    if alt:
        cmds.append(f"# or keep this driver and install a build it runs: torch {alt[0]} {alt[1]}")
        cmds += install_commands(env, alt[0], alt[1], reinstall=alt[0] == release)
        why += f"; driver {driver or ('offering CUDA ' + api if api else '')} runs the {alt[1]} build of torch {alt[0]}."
    else:
        why += "."
        if driver:
            cmds.append("# no torch release in cudadoctor's tables has a CUDA build this driver runs: upgrade the driver")
    have = f"driver {driver}" if driver else (f"the driver (it offers CUDA {api})" if api else "the driver")
    title = f"{have[0].upper()}{have[1:]} is too old for {build}" + (f" (built with CUDA {cuda})" if cuda else "")
    if verdict is True and said:
        title = f"CUDA reports the driver too old for {build} although {have} should run CUDA {cuda}"
    return DRIVER_TOO_OLD.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why))


#: FFmpeg's NVENC version check (libavcodec/nvenc.c): the API version the build needs and the one the driver offers,
#: and the driver floor it prints when it knows one.
_NVENC_API = re.compile(r"nvenc API version\.?\s*Required:\s*(\d+\.\d+)\s*Found:\s*(\d+\.\d+)", re.I)
_NVENC_FLOOR = re.compile(r"minimum required Nvidia driver for nvenc is ([\d.]+) or newer", re.I)


def _nvenc_too_old(fx: Facts, said: Tuple[str, str]) -> Finding:
    """Another program (FFmpeg's NVENC encoder) says the driver is too old for the API it was built against."""
    from ._common import text_of

    text = text_of(fx)
    api, floor = _NVENC_API.search(text), _NVENC_FLOOR.search(text)
    driver = driver_version(fx)
    need = f"NVENC API {api.group(1)}, the driver offers {api.group(2)}" if api else "a newer NVENC API"
    cmds = _driver_upgrade(fx, floor.group(1) if floor else None)
    cmds.append("# or keep the driver and use an FFmpeg build made with older nv-codec-headers (the API the driver offers)")
    return DRIVER_TOO_OLD.finding(
        title=("Driver " + driver if driver else "The NVIDIA driver") + f" is too old for this FFmpeg build ({need})",
        evidence={said[0]: said[1], "nvml.driver_version": driver, "min_driver_for_build": floor.group(1) if floor else None},
        fix=Fix(
            tuple(cmds),
            "FFmpeg's NVENC encoder refuses a driver whose NVENC API is older than the nv-codec-headers it was built with.",
        ),
    )


#: torch's own driver check (torch/cuda/__init__.py _check_driver, c10/cuda/CUDAFunctions.cpp), which only a CUDA build has.
_TORCH_CHECK_DRIVER = re.compile(r"NVIDIA driver on your system is too old", re.I)


#: A program's own driver check naming the driver it requires and the one it read ("Insufficient NVIDIA driver version,
#: Required 378.66, Installed 0.0"; "Required driver version: 525.60 Found: 470.82").
_PROGRAM_FLOOR = re.compile(
    r"Required(?: driver)?(?: version)?:?\s*(\d{3}\.\d+)\D{1,25}?(?:Installed|Found|Current|Detected):?\s*(\d+(?:\.\d+)*)",
    re.I,
)


def _program_floor_met(text: str, driver: Optional[str]) -> bool:
    """The program's own check does not show an old driver: it read no version at all ("Installed 0.0": it failed to
    query the driver, a different fault), or the driver the facts show meets the version it requires."""
    m = _PROGRAM_FLOOR.search(text)
    if not m:
        return False
    required, read = m.group(1), m.group(2)
    have, need = vtuple(driver), vtuple(required)
    if have and need:
        return have >= need
    return all(int(p) == 0 for p in read.split(".") if p.isdigit())


#: Windows' NTSTATUS STATUS_ENTRYPOINT_NOT_FOUND (ntstatus.h) as an exit status, naming no library (kb/errors/driver8.json).
_NTSTATUS_ENTRYPOINT = re.compile(r"(?<![0-9a-z])(?:0xc0000139|-1073741511|3221225785)(?![0-9a-z])", re.I)
#: A driver API (cuXxx) or NVML (nvmlXxx) entry point named as missing: then the library is the driver's own.
_DRIVER_SYMBOL = re.compile(r"(?-i:\bcu[A-Z]\w*|\bnvml[A-Z]\w*)|nvcuda\.dll|libcuda\.so|\bnvml\.dll")
#: What says the process is not an NVIDIA CUDA one: another vendor's GPU stack.
_OTHER_VENDOR = re.compile(r"\b(?:AMD|Radeon|ROCm|HIP|hipInfo|Intel Arc|ZLUDA)\b", re.I)
#: ollama's own report of a GPU it will use (discover/types.go: msg="inference compute" ... library=cuda): the driver
#: ran one of its bundled CUDA runtimes, so a "too old or missing" line about another bundled runtime is not the fault.
_OLLAMA_GPU_FOUND = re.compile(r"inference compute[^\n]{0,200}?library=cuda\b", re.I)


#: TensorFlow's/XLA's line after a failed cuDNN handle (cuda_dnn.cc): the kernel driver's version, no verdict.
_TF_DRIVER_HINT = re.compile(r"possibly insufficient driver version:?\s*(\d{3}\.\d+(?:\.\d+)?)", re.I)


def _entrypoint_only(fx: Facts, said: Tuple[str, str]) -> bool:
    """The driver-too-old text is only Windows' 'entry point not found' exit status, no driver symbol named."""
    from ._common import text_of

    return bool(_NTSTATUS_ENTRYPOINT.search(said[1])) and not _DRIVER_SYMBOL.search(text_of(fx))


def _entrypoint_finding(fx: Facts, said: Tuple[str, str]) -> Optional[Finding]:
    """0xC0000139 from a CUDA program: most often the driver's nvcuda.dll lacks a function the program's CUDA needs;
    a warning, since two of the program's own DLLs from different releases give the same status."""
    from ._common import text_of

    text = text_of(fx)
    names = [str(g.get("name") or "") for g in gpus(fx)]
    if _OTHER_VENDOR.search(text + " " + " ".join(names)) and not any(
        "nvidia" in n.lower() or "geforce" in n.lower() for n in names
    ):
        return None  # an AMD/Intel stack (ROCm, ZLUDA): not NVIDIA's driver
    driver = driver_version(fx)
    return DRIVER_TOO_OLD.finding(
        title="Likely: the NVIDIA driver is older than the CUDA this program was built with (Windows could not find a "
        "function the program needs in a DLL, status 0xC0000139)",
        evidence={said[0]: said[1], "nvml.driver_version": driver, "gpus": names or None},
        fix=Fix(
            (
                "nvidia-smi  # the driver version and the highest CUDA it supports (top right)",
                "# if that CUDA is older than the one the program bundles (e.g. ollama/llama.cpp cuda_v12 needs a CUDA 12 "
                "driver): install the current driver from https://www.nvidia.com/Download/index.aspx and reboot",
                "# if the driver is current: reinstall the program (its own DLLs from two releases give the same status)",
            ),
            "0xC0000139 is STATUS_ENTRYPOINT_NOT_FOUND; in a CUDA program the DLL that usually lacks the function is "
            "the driver's nvcuda.dll, older than the CUDA runtime the program ships.",
        ),
        severity="warning",
    )


def _needed_cuda(fx: Facts, said: Optional[Tuple[str, str]]) -> Optional[str]:
    """The CUDA the failing program needs: torch's; for another program's driver-too-old text, the CUDA it names
    ("Driver does not support CUDA 9.1 API") or, where no torch build is known, the toolkit it was built with."""
    cuda = torch_cuda(fx)
    if cuda or not said:
        return cuda
    m = re.search(r"does not support CUDA (\d+\.\d+) API", said[1], re.I)
    if m:
        return m.group(1)
    m = _IMAGE_CUDA.search(said[1])
    if m:
        return mm_str(m.group("need") or m.group("label") or m.group("img"))
    if fx.str("torch.version"):
        return None
    return fx.str("toolkit.nvcc_version") or None


#: A loader naming a driver-API entry point it could not resolve: glibc's ld.so ("symbol lookup error: X: undefined
#: symbol: cuXxx"), Windows' loader ("The procedure entry point cuXxx could not be located in the dynamic link library
#: nvcuda.dll"), a program's own dlsym/GetProcAddress report ("cannot find symbol cuXxx", "failed to load function cuXxx",
#: cuda-python's 'RuntimeError: Function "cuXxx" not found').
_ENTRY_POINT = re.compile(
    r"undefined symbol:?\s*(?P<a>cu[A-Z]\w*)"
    r"|procedure entry point\s+[\"'`]?(?P<b>cu[A-Z]\w*)[\"'`]?\s+could not be located"
    r"|(?i:cannot|could not|couldn't|unable to|failed to)\s+(?i:find|load|resolve|get|locate)\s+"
    r"(?i:the\s+)?(?i:symbol|function|entry point|procedure)\s+[\"'`]?(?P<c>cu[A-Z]\w*)"
    r"|(?i:function)\s+[\"'`](?P<d>cu[A-Z]\w*)[\"'`]\s+(?i:not found)"
)


#: The driver's libcuda by its real file name, which carries the driver version (libcuda.so.535.104.05).
_LIBCUDA_VERSIONED = re.compile(r"libcuda\.so\.(\d{3}\.\d{2,3}(?:\.\d{2})?)\b")


def _symbol_release(symbol: str) -> Optional[str]:
    """The CUDA release that introduced a driver entry point (kb/driver_api_symbols.json, from cudaTypedefs.h)."""
    from cudadoctor.kb import _load

    got = _load("driver_api_symbols")["introduced"].get(re.sub(r"_pt(?:ds|sz)$", "", symbol))
    return str(got) if got else None


def _load_drivers() -> dict:
    from cudadoctor.kb import _load

    return _load("cuda_drivers")


def missing_entry_point(text: str) -> Optional[Tuple[str, str, str]]:
    """(symbol, CUDA release that introduced it, the line) for the first driver entry point a loader could not resolve,
    when the release is one with a known driver minimum (7.0+): an older one missing means no real libcuda was found."""
    oldest = min(_load_drivers()["toolkit_min_driver"], key=lambda r: vtuple(r) or ())
    for line in text.split("\n"):
        for m in _ENTRY_POINT.finditer(line[:4096]):
            sym = m.group("a") or m.group("b") or m.group("c") or m.group("d")
            rel = _symbol_release(sym)
            if rel and (vtuple(rel) or ()) >= (vtuple(oldest) or ()):
                return sym, rel, line.strip()[:400]
    return None


def _missing_symbol_finding(fx: Facts, sym: str, release: str, line: str) -> Optional[Finding]:
    """libcuda lacks an entry point CUDA `release` introduced: the driver predates that release, unless the driver the
    facts show already offers it (then the loader found another libcuda: a stub or a stale copy, library-shadowing)."""
    os_name = driver_os(fx)
    # the facts' driver, else the one the failing libcuda's own file name carries ("libcuda.so.418.74": the driver
    # package installs libcuda.so.<driver version>, libcuda.so.1 links to it)
    own = _LIBCUDA_VERSIONED.search(line)
    driver = driver_version(fx) or (own.group(1) if own else None)
    offers = (kb().max_cuda_for_driver(driver, os_name) if driver else None) or fx.str("nvml.cuda_driver_version") or None
    if offers and (vtuple(offers) or ()) >= (vtuple(release) or ()):
        return None
    floor = kb().min_driver_for_cuda(release, os_name, minor_compat=False)
    evidence = {
        "missing entry point": sym,
        "introduced in CUDA": release,
        "min_driver_for_release": floor,
        "nvml.driver_version": driver,
        "driver_cuda": offers,
        "error": line,
    }
    need = f"CUDA {release}" + (f" (driver >= {floor})" if floor else "")
    why = (
        f"{sym} is a driver-API entry point added in CUDA {release} (cudaTypedefs.h); the libcuda the loader found does "
        f"not export it, so the program was built with CUDA {release} or newer and the driver predates it."
    )
    if offers:
        title = f"Driver {driver or ''} (CUDA {offers}) is too old for this program: its libcuda lacks {sym}, added in {need}"
        return DRIVER_TOO_OLD.finding(
            title=title.replace("Driver  (", "The driver ("),
            evidence=evidence,
            fix=Fix(tuple(_driver_upgrade(fx, floor)), why),
        )
    return DRIVER_TOO_OLD.finding(
        title=f"Likely: the NVIDIA driver is older than CUDA {release}: its libcuda lacks {sym}, added in {need}",
        evidence=evidence,
        fix=Fix(
            (
                "nvidia-smi  # the driver version and the highest CUDA it supports (top right): below "
                + release
                + " confirms it",
                "ldconfig -p | grep libcuda.so  # if the driver is new enough: the copy found first is a stub or a stale one",
                *_driver_upgrade(fx, floor),
            ),
            why,
        ),
        severity="warning",
    )


def _program_floor_finding(fx: Facts, p: Dict[str, Any]) -> Finding:
    """A program (ollama...) whose documented driver floor for the named release (and GPU) is above the driver shown."""
    on = f" on the {p['gpu']} (compute capability {p['cc']})" if p.get("gpu") else ""
    return DRIVER_TOO_OLD.finding(
        title=f"Driver {p['driver']} is below the minimum {p['program']} {p['release']} needs{on}: {p['floor']} or newer",
        evidence={
            "program": p["program"],
            "program_release": p["release"],
            "nvml.driver_version": p["driver"],
            "min_driver_for_program": p["floor"],
            "gpu": p.get("gpu"),
            "compute_capability": p.get("cc"),
        },
        fix=Fix(
            (
                *_driver_upgrade(fx, p["floor"]),
                f"# or keep driver {p['driver']} and install a {p['program']} release its documentation gives a lower "
                "minimum for",
            ),
            f"{p['why']} requires NVIDIA driver {p['floor']} or newer (its own GPU documentation); with an older "
            "driver it leaves the GPU out and runs on the CPU.",
        ),
    )


def _stated_floor_finding(fx: Facts, p: Dict[str, Any]) -> Finding:
    """The text states a minimum driver (a program's documentation, a container banner) above the driver shown."""
    return DRIVER_TOO_OLD.finding(
        title=f"Driver {p['driver']} is below the minimum driver the text states: {p['floor']} or newer",
        evidence={"stated minimum": p["line"], "nvml.driver_version": p["driver"], "min_driver": p["floor"]},
        fix=Fix(
            (
                *_driver_upgrade(fx, p["floor"]),
                "# or use a release of the program whose documentation gives a lower minimum driver",
            ),
            f"What the text quotes requires NVIDIA driver {p['floor']} or newer; below it the program cannot use the GPU.",
        ),
    )


#: A CUDA release the text says a program, image or build needs (session 23, b160: "The stock ... RunPod image is a CUDA
#: 12.8 build and explicitly requires a host driver compatible with CUDA 12.8"; "requires CUDA 12.4", "built with CUDA
#: 12.1"), as opposed to one installed.
_CUDA_NEEDED = re.compile(
    r"\b(?:an?\s+)?CUDA\s+(?P<a>\d{1,2}\.\d)\s+(?:build|image|container|wheel)\b|"
    r"\b(?:requires?|required|needs?|needed|built\s+(?:for|with|against)|compiled\s+(?:for|with)|compatible\s+with)\s+"
    r"(?:an?\s+|the\s+)?(?:(?:host\s+)?driver\s+compatible\s+with\s+)?CUDA\s*(?P<b>\d{1,2}\.\d)(?![\d.]*\d)",
    re.I,
)


def _stated_cuda_above_driver(fx: Facts) -> Optional[Finding]:
    """The text says what CUDA a program, image or build needs, and the highest CUDA the driver runs (nvidia-smi's
    "CUDA Version", or the reporter's "the host supports CUDA 12.6") is lower: a likely driver-too-old, as a warning
    (what fails is read from the two stated versions)."""
    from ._common import text_of

    offers = fx.str("nvml.cuda_driver_version")
    if not offers or driver_version(fx):
        return None  # with the driver's own version the torch/toolkit comparisons speak
    m = _CUDA_NEEDED.search(text_of(fx))
    if not m:
        line = str(((fx.dict("pasted.prose") or {}).get("cuda") or {}).get("text") or "")
        m = _CUDA_NEEDED.search(line)
    need = (m.group("a") or m.group("b")) if m else None
    want, have = vtuple(need), vtuple(offers)
    if not need or want is None or have is None or want <= have:
        return None
    return DRIVER_TOO_OLD.finding(
        title=f"Likely: the program needs CUDA {need}, and the driver runs CUDA {offers} at most: update the driver",
        evidence={"needed": m.group(0) if m else need, "nvml.cuda_driver_version": offers},
        fix=Fix(
            (
                *_driver_upgrade(fx, kb().min_driver_for_cuda(need, driver_os(fx) or "linux")),
                f"# or a build/image of the program for CUDA {offers} or older",
            ),
            f"Code built with CUDA {need} needs a driver that runs CUDA {need}; nvidia-smi's 'CUDA Version' is the most the driver runs.",
        ),
        severity="warning",
    )


def _toolkit_too_new(fx: Facts) -> Optional[Finding]:
    """No torch in the picture, a CUDA toolkit and a driver stated, and the driver below what code built with that toolkit
    needs (kb/cuda_drivers.json, counting minor-version compatibility): the programs the user builds cannot start. A
    warning: what fails is inferred from the two versions, not shown."""
    if fx.str("torch.version") or torch_cuda(fx):
        return None
    cuda, driver, os_name = fx.str("toolkit.nvcc_version"), driver_version(fx), driver_os(fx)
    if not cuda or not driver or kb().driver_supports_cuda(driver, cuda, os_name) is not False:
        return None
    need = kb().min_driver_for_cuda(cuda, os_name or "linux")
    return DRIVER_TOO_OLD.finding(
        title=f"Driver {driver} is older than CUDA {cuda} needs ({need} or newer): programs built with that toolkit "
        "cannot start on it",
        evidence={"toolkit.nvcc_version": cuda, "nvml.driver_version": driver, "min_driver": need},
        fix=Fix(
            (
                *_driver_upgrade(fx, need),
                "# or build with a CUDA toolkit the driver runs (nvidia-smi's 'CUDA Version' is the newest it runs)",
            ),
            f"Code built with CUDA {cuda} asks the driver for that CUDA level at start; driver {driver} offers less.",
        ),
        severity="warning",
    )


def _ptx_finding(fx: Facts, p: PtxTooNew) -> Optional[Finding]:
    """The driver's PTX JIT reads PTX up to CUDA `have_cuda`'s version; the program's PTX came from CUDA `want_cuda`.
    None when the driver the facts show already runs that CUDA (the message then came from another machine or library)."""
    os_name = driver_os(fx)
    driver = driver_version(fx)
    offers = kb().max_cuda_for_driver(driver, os_name) if driver else None
    if offers and (vtuple(offers) or ()) >= (vtuple(p.want_cuda) or ()):
        return None
    floor = kb().min_driver_for_cuda(p.want_cuda, os_name, minor_compat=False)
    who = f"Driver {driver}" if driver else "The driver"
    return DRIVER_TOO_OLD.finding(
        title=(
            f"{who} is too old for this program's GPU code: its PTX JIT reads PTX up to {p.have_ptx} (CUDA "
            f"{p.have_cuda}), the program's PTX is {p.want_ptx} (written by CUDA {p.want_cuda})"
        ),
        evidence={
            "error": p.line,
            "ptx_version": p.want_ptx,
            "written_by_cuda": p.want_cuda,
            "driver_reads_ptx_up_to": p.have_ptx,
            "driver_cuda": offers or p.have_cuda,
            "nvml.driver_version": driver,
            "min_driver_for_release": floor,
        },
        fix=Fix(
            (
                *_driver_upgrade(fx, floor),
                f"# or keep the driver and use a build of the program made with CUDA {p.have_cuda} or older "
                f"(numba: the cudatoolkit / cuda-nvcc of CUDA {p.have_cuda})",
            ),
            "PTX is compiled to the GPU's code by the driver when the program loads it, and a driver reads only the PTX "
            "versions of the CUDA releases up to its own; this JIT is outside CUDA's minor-version compatibility "
            "(kb/ptx_isa.json: the PTX ISA release history).",
        ),
    )


#: OptiX's optixInit() refusing (kb/errors/cuda16.json): the ABI version error itself, or the bare failure.
_OPTIX_INIT = re.compile(r"OPTIX_ERROR_UNSUPPORTED_ABI_VERSION|Unsupported ABI version|\boptixInit\(\)", re.I)
_OPTIX_ABI = re.compile(r"OPTIX_ERROR_UNSUPPORTED_ABI_VERSION|Unsupported ABI version|\b7801\b", re.I)
#: The OptiX SDK a build uses, as texts name it: "OptiX SDK 7.7.0", "NVIDIA-OptiX-SDK-7.4.0-linux64", "OptiX 7.3".
_OPTIX_SDK = re.compile(r"optix[ _-]*(?:sdk[ _-]*)?(\d)\.(\d)(?:\.\d)?", re.I)


def _optix_finding(fx: Facts, said: Tuple[str, str]) -> Optional[Finding]:
    """OptiX's optixInit() failed: the driver is older than the OptiX SDK the application was built with (an error for
    the ABI-version code, a warning for the bare failure); nothing when the driver is known to meet the SDK's floor."""
    from ._common import text_of

    text = text_of(fx)
    sdk = next((f"{m.group(1)}.{m.group(2)}" for m in _OPTIX_SDK.finditer(text) if m.group(1) in "6789"), None)
    if sdk is None and fx.env("OptiX SDK"):
        sdk = ".".join((fx.env("OptiX SDK") or "").split(".")[:2]) or None
    driver, os_name = driver_version(fx), driver_os(fx)
    floor = kb().optix_min_driver(sdk, os_name) if sdk else None
    dv, fv = kb().parse_version(driver), kb().parse_version(floor)
    below = dv < fv if dv and fv else None
    if below is False:
        return None  # the driver meets that OptiX release's floor: something else failed
    abi = bool(_OPTIX_ABI.search(said[1]))
    need = (
        f"OptiX {sdk} needs driver {floor} or newer" if floor else (f"OptiX {sdk}" if sdk else "the OptiX SDK it was built with")
    )
    title = (
        ("The" if abi or below else "Likely: the")
        + f" NVIDIA driver{(' ' + driver) if driver else ''} is older than the OptiX the application was built with"
        + (f" ({need})" if floor or sdk else "")
    )
    return DRIVER_TOO_OLD.finding(
        title=title,
        evidence={said[0]: said[1], "driver": driver, "optix_sdk": sdk, "optix_min_driver": floor},
        fix=Fix(
            (
                "nvidia-smi  # the driver version",
                f"# install NVIDIA driver {floor} or newer and reboot" if floor else "# install a newer NVIDIA driver and reboot",
                "# or rebuild the application against an older OptiX SDK the driver supports (its release notes list the minimum driver)",
            ),
            "OptiX 7 and later live inside the NVIDIA driver: an application built with a newer OptiX SDK needs a driver "
            "that implements that OptiX ABI.",
        ),
        severity="error" if abi or below else "warning",
    )


#: Triton failing to load the cubin its bundled ptxas made (kb/errors/cuda16.json).
_TRITON_IMAGE_INVALID = re.compile(r"Triton Error \[CUDA\]: device kernel image is invalid")


def _triton_image_invalid_in_other_words(fx: Facts) -> Optional[Tuple[str, str]]:
    """CUDA's "device kernel image is invalid" (CUDA_ERROR_INVALID_IMAGE) without Triton's own prefix, in a report that
    names Triton (a source build, a git clone of triton, triton in a traceback): the same class as Triton's message
    (triton-lang/triton#1955: a source build's bundled ptxas; #2971 and #3001: a 470 driver). Returned in Triton's
    words so the finding reads one form."""
    from ._common import said_or_pasted, search

    bare = search(fx, r"device kernel image is invalid")
    if not bare or not said_or_pasted(fx, r"(?i)\btriton\b", "triton_named"):
        return None
    return bare[0], "Triton Error [CUDA]: device kernel image is invalid (as reported: " + bare[1][:200] + ")"


def _triton_ptxas_finding(fx: Facts, said: Tuple[str, str]) -> Optional[Finding]:
    """Triton's cubin rejected: a warning that the driver is older than the CUDA 12 ptxas Triton brings; nothing when the
    driver is known to run CUDA 12 (then a Triton cache made on another GPU is the likelier cause)."""
    driver, os_name = driver_version(fx), driver_os(fx)
    if driver and kb().driver_supports_cuda(driver, "12.0", os_name) is True:
        return None
    return DRIVER_TOO_OLD.finding(
        title="Likely: the NVIDIA driver"
        + (f" {driver}" if driver else "")
        + " is older than the CUDA 12 ptxas Triton brings, so the kernel Triton compiled cannot be loaded",
        evidence={said[0]: said[1], "driver": driver},
        fix=Fix(
            (
                "nvidia-smi  # the driver; Triton's ptxas (CUDA 12.x) needs 525.60 or newer (Windows 527.41)",
                "# install a newer NVIDIA driver and reboot; or, keeping the driver:",
                "export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas  # a local toolkit's ptxas no newer than the driver runs",
                "rm -rf ~/.triton/cache  # if the driver is new enough: a cache compiled on another GPU model",
            ),
            "Triton compiles kernels with its bundled ptxas; an older driver cannot load what a newer ptxas produced.",
        ),
        severity="warning",
    )


@check(DRIVER_TOO_OLD)
def driver_too_old(fx: Facts) -> Iterator[Finding]:
    """Driver vs the CUDA of the torch build, with minor-version compatibility."""
    from ._common import text_of

    ptx = driver_jit_too_old(text_of(fx))
    found_ptx = _ptx_finding(fx, ptx) if ptx else None
    if found_ptx:
        yield found_ptx
        return
    said = error_match(fx, DRIVER_TOO_OLD)
    if not said or _DRIVER_SYMBOL.search(said[1]):
        from ._common import text_of

        miss = missing_entry_point(text_of(fx))
        found = _missing_symbol_finding(fx, *miss) if miss else None
        if found:
            yield found
            return
    if said and re.search(r"\bnvenc\b", said[1], re.I):
        yield _nvenc_too_old(fx, said)
        return
    if said and _OPTIX_INIT.search(said[1]):
        found = _optix_finding(fx, said)
        if found:
            yield found
        return
    if not said:
        said = _triton_image_invalid_in_other_words(fx)
    if said and _TRITON_IMAGE_INVALID.search(said[1]):
        found = _triton_ptxas_finding(fx, said)
        if found:
            yield found
        return
    if said and re.search(r"too old or missing", said[1], re.I):
        from ._common import text_of

        if _OLLAMA_GPU_FOUND.search(text_of(fx)):
            return  # ollama used the GPU through another of its bundled runtimes
    hint = _TF_DRIVER_HINT.search(said[1]) if said else None
    if said and hint:
        # TensorFlow prints the driver after any cuDNN handle failure: a driver version, a verdict only with the CUDA
        driver = driver_version(fx) or hint.group(1)
        cuda = _needed_cuda(fx, said)
        verdict = kb().driver_supports_cuda(driver, cuda, driver_os(fx)) if cuda else None
        if verdict is False:
            yield _too_old_finding(fx, cuda, driver, None, said, verdict)
        return
    if said and legacy_gpu_cannot_run(fx):
        return  # no driver upgrade helps: gpu-needs-legacy-driver (text_classes) names the GPU's legacy branch
    if said and _entrypoint_only(fx, said):
        found = _entrypoint_finding(fx, said)
        if found:
            yield found
        return
    if not said:
        from ._common import text_of

        prog = program_floor(fx, text_of(fx))
        if prog:
            yield _program_floor_finding(fx, prog)
            return
        floor = stated_floor_unmet(fx, text_of(fx))
        if floor:
            yield _stated_floor_finding(fx, floor)
            return
        need = _stated_cuda_above_driver(fx)
        if need:
            yield need
            return
        toolkit = _toolkit_too_new(fx)
        if toolkit:
            yield toolkit
            return
        likely = default_build_too_new(fx)  # torch X, an older CUDA stated, the build not shown
        if likely:
            yield likely
            return
    if said and _program_floor_met(said[1], driver_version(fx)):
        return
    api = _found_api(said[1]) if said else None
    torch_said = bool(said and (api or _TORCH_CHECK_DRIVER.search(said[1])))
    if is_cuda_build(fx) is False and not (torch_said and not str(torch_version(fx) or "").endswith("+cpu")):
        return  # torch's _check_driver text comes only from a CUDA build: it outweighs a build read from "Could not collect"
    cuda, driver, os_name = _needed_cuda(fx, said), driver_version(fx), driver_os(fx)
    if not api and not driver:
        api = fx.str("nvml.cuda_driver_version") or None  # nvidia-smi's "CUDA Version": the highest the driver runs
    verdict = _driver_verdict(cuda, driver, os_name, api)
    if fx.bool("torch.cuda_available") is True and not said:
        return  # the live answer wins: CUDA initialised, so the driver is new enough
    if said and "insufficient" in said[1].lower() and is_wsl(fx) and verdict is not False:
        return  # under WSL this text usually means a Linux driver inside the guest (wsl-driver-in-guest)
    if said and verdict is not False and _containers.started_without_gpus(fx):
        return  # a container started without GPUs has no libcuda at all: no-gpu-visible (driver.py)
    if said and driver and verdict is not False and _containers.insufficient_in_container(fx):
        return  # error 35 in a container whose host driver runs the program's CUDA: no libcuda there (no-gpu-visible)
    if verdict is None and not said:
        unknown = _unknown_driver_finding(fx, cuda, driver)
        if unknown:
            yield unknown
        return
    if verdict is True and not said:
        weak = _below_full_minimum_finding(fx, cuda, driver, os_name)
        if weak:
            yield weak
        return
    yield _too_old_finding(fx, cuda, driver, api, said, verdict)


@check(NVML_DRIVER_MISMATCH)
def nvml_driver_mismatch(fx: Facts) -> Iterator[Finding]:
    """Kernel module vs user-space driver libraries."""
    nvml = fx.str("nvml.status")
    said = error_match(fx, NVML_DRIVER_MISMATCH)
    kmod = fx.str("system.nvidia_kernel_driver")
    lib = fx.str("nvml.library_version") or None
    m = re.search(r"NVML library version: ([\d.]+)", said[1]) if said else None
    if m:
        lib = m.group(1)
    if nvml != "driver-library-mismatch" and not said:
        return
    if (
        nvml != "driver-library-mismatch"
        and said
        and _COMPAT_803.search(said[1])
        and (_compat_in_use(fx) or compat_named(text_of(fx)))
    ):
        return  # error 803 from a cuda-compat libcuda on the path: cuda-compat-driver-mismatch names that root
    evidence = {
        "nvml.status": nvml,
        "nvml.error": fx.str("nvml.error"),
        "kernel_module_version": kmod,
        "nvml_library_version": lib,
        "system.container": fx.str("system.container"),
    }
    if said:
        evidence[said[0]] = said[1]
    distro = (fx.str("system.distro") or fx.str("system.os") or "").lower()
    cmds = ["cat /proc/driver/nvidia/version  # the kernel module that is loaded"]
    if fx.str("system.container"):
        cmds += [
            "# if the image installs NVIDIA driver packages, remove them; the NVIDIA container runtime mounts the host's:",
            "apt-get remove --purge -y '^libnvidia-.*' '^nvidia-driver-.*' '^nvidia-utils-.*'  # in the Dockerfile, then rebuild",
            "# otherwise the host's driver was upgraded without a reboot: on the host, sudo reboot",
        ]
        why = "A driver installed inside the container, or a host upgraded without a reboot, leaves the libraries and the kernel module at different versions."
    else:
        cmds.append("sudo reboot  # loads the kernel module that matches the upgraded libraries")
        if any(x in distro for x in ("ubuntu", "debian", "mint", "pop")):
            cmds += [
                "# if it persists after the reboot, repair the package set so one driver version is installed:",
                "sudo apt-get --fix-broken install",
                "dpkg -l | grep -E 'nvidia-(driver|kernel|utils)|libnvidia-compute'  # every line one version",
            ]
        elif any(x in distro for x in ("red hat", "rocky", "alma", "centos", "fedora")):
            cmds += ["# if it persists: sudo dnf distro-sync 'nvidia-*' && sudo reboot"]
        else:
            cmds += ["# if it persists: reinstall the driver so the kernel module and libraries are one version"]
        why = "The libraries were upgraded but the old kernel module is still loaded (or the upgrade is half-done)."
    title = "NVIDIA kernel module and driver libraries are different versions"
    if kmod and lib:
        title += f" (module {kmod}, libraries {lib})"
    yield NVML_DRIVER_MISMATCH.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why))


#: CUDA's error 803 (cudaErrorSystemDriverMismatch), as opposed to NVML's or the kernel log's own mismatch lines.
_COMPAT_803 = re.compile(
    r"unsupported display driver / cuda driver combination|Error 803\b|SystemDriverMismatch|SYSTEM_DRIVER_MISMATCH", re.I
)


def _compat_in_use(fx: Facts) -> bool:
    """A cuda-compat libcuda (a `compat/` directory) is loaded, on LD_LIBRARY_PATH or in ld.so.conf."""
    libs = loaded_libraries(fx) or []
    return (
        any(d["name"].startswith("libcuda.so") and "/compat" in d["path"] for d in libs)
        or any("/compat" in p for p in (ld_library_path(fx) or []))
        or any(isinstance(p, str) and "/compat" in p for p in (fx.list("system.ld_so_conf_cuda") or []))
    )


def _consumer(name: str) -> bool:
    n = name.lower()
    return "geforce" in n or "titan" in n


@check(CUDA_FORWARD_COMPAT)
def cuda_forward_compat(fx: Facts) -> Iterator[Finding]:
    """cuda-compat libraries on a GPU without forward-compatibility support."""
    said = error_match(fx, CUDA_FORWARD_COMPAT)
    libs = loaded_libraries(fx) or []
    compat_loaded = [d["path"] for d in libs if d["name"].startswith("libcuda.so") and "/compat" in d["path"]]
    ldp = ld_library_path(fx) or []
    compat_dirs = [p for p in ldp if "/compat" in p]
    conf = [p for p in (fx.list("system.ld_so_conf_cuda") or []) if isinstance(p, str) and "/compat" in p]
    names = [str(g["name"]) for g in gpus(fx) if g.get("name")]
    consumer = [n for n in names if _consumer(n)]
    in_use = bool(compat_loaded or compat_dirs or conf)
    if not said and not (in_use and consumer and fx.bool("torch.cuda_available") is not True):
        return
    if said and not in_use and stated_floor_unmet(fx, text_of(fx)):
        # an image's own banner ("built for NVIDIA Driver Release 450.36 or later, but version 440.100 was detected and
        # compatibility mode is UNAVAILABLE"): the image tried its compat libraries because the host driver is below its
        # floor; the root and its fix (a newer driver, or an older image) are driver-too-old's
        return
    evidence = {
        "gpus": names or None,
        "compat_libcuda_loaded": compat_loaded or None,
        "LD_LIBRARY_PATH_compat_entries": compat_dirs or None,
        "ld_so_conf_compat": conf or None,
        "nvml.driver_version": driver_version(fx),
        "torch.cuda": torch_cuda(fx),
    }
    if said:
        evidence[said[0]] = said[1]
    cmds: List[str] = []
    if compat_dirs:
        cmds.append(filtered_path_command("LD_LIBRARY_PATH", ldp, lambda p: "/compat" in p))
    if conf:
        cmds += [f"grep -l '{conf[0]}' /etc/ld.so.conf.d/*  # the file that adds it", "sudo rm <that file> && sudo ldconfig"]
    if not cmds:
        cmds.append(
            "echo $LD_LIBRARY_PATH | tr : '\\n' | grep compat  # remove that entry (in a container image: do not add /usr/local/cuda/compat)"
        )
    cmds.append("sudo apt-get remove --purge 'cuda-compat-*'  # if the package is installed")
    k, cuda = kb(), torch_cuda(fx)
    if k and cuda:
        native = k.min_driver_for_cuda(cuda, driver_os(fx), minor_compat=False)
        if native:
            cmds.append(f"# or upgrade the host driver to >= {native}, which runs CUDA {cuda} natively")
    title = "CUDA forward-compatibility libraries are in use" + (
        f" on {consumer[0]}, which does not support them" if consumer else " on a GPU that does not support them"
    )
    yield CUDA_FORWARD_COMPAT.finding(
        title=title,
        evidence=evidence,
        fix=Fix(
            tuple(cmds), "Forward compatibility works only on data-center GPUs; elsewhere the driver's own libcuda must be used."
        ),
    )


_NVSWITCH_NAME = re.compile(r"SXM|HGX|DGX|\b[AH]100\b|\bH[28]00\b|\bA800\b|\bB[12]00\b|GB[23]00", re.IGNORECASE)


@check(FABRIC_MANAGER_MISSING)
def fabric_manager_missing(fx: Facts) -> Iterator[Finding]:
    """Error 802 on NVSwitch systems: the fabric is not configured."""
    said = error_match(fx, FABRIC_MANAGER_MISSING)
    names = [str(g["name"]) for g in gpus(fx) if g.get("name")]
    to_switch = any(
        isinstance(link, dict) and "switch" in str(link.get("remote_type", "")).lower()
        for d in fx.dicts("nvml.devices")
        for link in (d.get("nvlinks") or [])
        if isinstance(d.get("nvlinks"), list)
    )
    nvswitch = to_switch or (len(names) >= 8 and all(_NVSWITCH_NAME.search(n) for n in names))
    failed = fx.bool("torch.cuda_available") is False and fx.str("torch.status") == "ok"
    if not said and not (nvswitch and failed and not fx.str("torch.cuda_init_error.message")):
        return
    driver = driver_version(fx)
    evidence = {
        "gpus": names or None,
        "gpu_count": len(names) or None,
        "nvml.driver_version": driver,
        "nvlinks_to_nvswitch": to_switch or None,
        "torch.cuda_available": fx.bool("torch.cuda_available"),
    }
    if said:
        evidence[said[0]] = said[1]
    branch = driver.split(".")[0] if driver else "<driver branch>"
    distro = (fx.str("system.distro") or "").lower()
    if any(x in distro for x in ("red hat", "rocky", "alma", "centos")):
        install = f"sudo dnf install nvidia-fabric-manager-{driver or '<driver version>'}"
    else:
        install = (
            f"sudo apt-get install nvidia-fabricmanager-{branch}"
            + (f"={driver}-*" if driver else "")
            + "  # its version must equal the driver's exactly"
        )
    cmds = [
        "systemctl status nvidia-fabricmanager",
        install,
        "sudo systemctl enable --now nvidia-fabricmanager",
        "nvidia-smi -q | grep -i -A2 fabric  # State: Completed",
    ]
    if not driver:
        cmds.insert(
            1, "nvidia-smi --query-gpu=driver_version --format=csv,noheader  # the exact version Fabric Manager must match"
        )
    if fx.str("system.container"):
        cmds.insert(0, "# run these on the host (or ask the provider): Fabric Manager runs outside containers and VMs")
    yield FABRIC_MANAGER_MISSING.finding(
        title="CUDA cannot initialise: NVSwitch fabric not configured (nvidia-fabricmanager not running)"
        + (f" on {len(names)}x {names[0]}" if names else ""),
        evidence=evidence,
        fix=Fix(tuple(cmds), "On NVSwitch systems the GPUs stay uninitialised until Fabric Manager configures the fabric."),
        severity="error" if said else "warning",
    )


def _mm(v: Optional[str]) -> Optional[Tuple[int, int]]:
    m = re.match(r"(\d+)\.(\d+)", v or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _pypi_default_cuda(release: str) -> Optional[str]:
    """The CUDA of the Linux x86_64 wheel `pip install torch==<release>` got from PyPI (kb torch_releases.json)."""
    k = kb()
    rel = k.torch_release(release)
    if rel:
        return k.cuda_of_variant(str((rel.get("default_variant") or {}).get("linux-x86_64") or "")) or None
    return k.pypi_default_cuda_before_1_13(".".join(release.split(".")[:2]))


def default_build_too_new(fx: Facts) -> Optional[Finding]:
    """torch X with CUDA unavailable, its build not shown, no driver version, and the report's CUDA (the toolkit or
    the driver's, a CUDA 10.x or older) older than the CUDA of the build pip installs for X: the driver that came
    with that CUDA is most likely too old for the build (10.x and older have no minor-version compatibility).
    A warning naming what confirms it (nvidia-smi's driver and CUDA version)."""
    from cudadoctor.interpret.versions import variant_of_tag

    version = fx.str("torch.version") or (fx.distribution("torch") or {}).get("version")
    stated = fx.str("toolkit.nvcc_version") or fx.str("toolkit.cuda_runtime") or fx.str("cuda.runtime_version")
    built = (fx.dict("collect_env.fields") or {}).get("CUDA used to build PyTorch")
    if not (version and stated) or fx.bool("torch.cuda_available") is not False or driver_version(fx):
        return None
    if fx.str("torch.cuda") or variant_of_tag(version) or (isinstance(built, str) and built.strip() == "None"):
        return None  # the build is shown (its CUDA, a +tag) or collect_env said it has no CUDA
    if driver_os(fx) not in ("linux",) or is_wsl(fx):
        return None  # PyPI's Windows and macOS wheels are CPU builds: cpu-only-torch's question, not the driver's
    release = ".".join(version.split("+")[0].split(".")[:3])
    want = _pypi_default_cuda(release)
    have, need = _mm(stated), _mm(want)
    if not (have and need and have < need and have[0] <= 10):
        return None
    floor = kb().min_driver_for_cuda(str(want), "linux", minor_compat=False)
    return DRIVER_TOO_OLD.finding(
        title=f"Likely: torch {version} from pip is its CUDA {want} build, and a machine set up for CUDA {stated} "
        f"usually has a driver too old for it (CUDA {want} needs driver {floor or '?'} or newer)",
        evidence={
            "torch.version": version,
            "cuda stated": stated,
            "pip's build of this release": f"CUDA {want}",
            "min_driver": floor,
            "torch.cuda_available": False,
            "nvml.driver_version": None,
        },
        fix=Fix(
            (
                "nvidia-smi  # the driver version and the highest CUDA it supports: below " + str(want) + " confirms it",
                f"# then either a newer driver (>= {floor or 'the minimum for CUDA ' + str(want)}), or the torch {release} "
                f"build for the CUDA the driver has (https://pytorch.org/get-started/previous-versions/)",
                'python -c "import torch; print(torch.version.cuda)"  # the CUDA of the build really installed',
            ),
            f"CUDA {want} builds need a driver that supports CUDA {want}; CUDA 10.x and older have no minor-version "
            "compatibility, so an older driver leaves torch.cuda.is_available() False.",
        ),
        severity="warning",
    )


def register():
    return [driver_too_old, nvml_driver_mismatch, cuda_forward_compat, fabric_manager_missing]
