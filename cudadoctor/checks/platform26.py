"""A GPU package that publishes builds for Linux only, wanted on Windows or macOS (session 26, from blind batches b251
and b256 and the same class in b209 and b234: cuCIM, NVIDIA DALI, qiskit-aer-gpu, FBGEMM_GPU/TorchRec; the packages and
their platforms in kb/package_platforms.json, read from PyPI by benchmarks/package_platforms.py):

- package-not-built-for-platform: pip's "No matching distribution found for X" / "from versions: none" or conda's
  PackagesNotFoundError for a listed package on Windows or macOS (or on an ARM Linux when it has no aarch64 build);
  its Linux library loaded on Windows ("[WinError 193] %1 is not a valid Win32 application" beside a .so); or, as a
  likely cause, a report that installing or importing a listed package fails, on Windows or macOS. Under WSL 2 or in a
  container the machine is Linux, and this is not said.

triton on Windows is triton-unavailable-on-windows's (checks/wheels24.py), NCCL on Windows nccl-unavailable-on-windows's.

Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from typing import Dict, Iterator, List, Optional, Tuple

from cudadoctor import kb
from cudadoctor.facts import Facts
from cudadoctor.interpret.environment import container, is_wsl, os_key
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP_REFUSED, text_of

PACKAGE_NOT_BUILT_FOR_PLATFORM = Code(
    code="package-not-built-for-platform",
    title="The package publishes builds for Linux only: there is none for this OS",
    area="packages",
    severity="error",
    explanation={
        "what": "Installing a GPU package on Windows or macOS stops at pip's 'Could not find a version that satisfies "
        "the requirement X (from versions: none)' / 'No matching distribution found for X' or conda's "
        "PackagesNotFoundError, while the same command works on Linux; or its Linux library (a .so) is loaded on "
        "Windows: '[WinError 193] %1 is not a valid Win32 application'.",
        "why": "Some GPU packages are built and published for Linux only (x86_64, often aarch64): RAPIDS (cuCIM, cuDF, "
        "cuML), NVIDIA DALI, cuQuantum and CUDA-Q, qiskit-aer-gpu, FBGEMM_GPU (and TorchRec, which needs it), vLLM, "
        "JAX's CUDA plugins, faiss-gpu. No Python version or pip option makes a Windows or macOS build appear; macOS has "
        "no CUDA at all.",
        "confirm": "The package's files on PyPI (https://pypi.org/project/NAME/#files) are all manylinux; `pip download "
        "NAME --no-deps -d x` says 'from versions: none' here and finds a wheel on a Linux machine.",
        "fix": "On Windows, install and run it under WSL 2 (an Ubuntu distribution sees the GPU through the Windows "
        "driver) or in a Linux container; on macOS, use a Linux machine with an NVIDIA GPU. Or use the program without "
        "that package, where it is optional.",
    },
    links=(
        "https://github.com/rapidsai/cucim/issues/330",
        "https://github.com/Qiskit/qiskit-aer/issues/841",
        "https://github.com/pytorch/FBGEMM/issues/3737",
        "https://github.com/meta-pytorch/torchrec/issues/210",
        "https://pypi.org/pypi/cucim/json",
    ),
)

#: pip's and conda's refusals, and the name refused.
_CONDA_REFUSED = re.compile(r"PackagesNotFoundError:[^\n]*(?:\n[^\n]*){0,3}?\n\s*-\s*(?P<pkg>[A-Za-z0-9_.\-]+)", re.I)
#: A Linux shared object loaded on Windows.
_WIN193 = re.compile(r"WinError 193\]?\s*%1 is not a valid Win32 application", re.I)
_SO_FILE = re.compile(r"(?P<so>[\w.\-]+\.so(?:\.\d+)*)\b")
#: Installing, importing or loading failing, or a build asked for, in the words of a report.
_ACTION = re.compile(
    r"\binstall|\bdownload|\bpip\b|\bconda\b|\bwheels?\b|\.whl\b|distribution|\bimport|\bbuild\b|is required|\bversion (?:of|for)\b"
    r"|\bsupport",
    re.I,
)
_WINDOWS = re.compile(r"\bwindows\b|\bwin(?:10|11|32|_amd64)\b|\bwin ?1[01]\b|[A-Za-z]:\\", re.I)
_MACOS = re.compile(r"\bmac ?os(?: ?x)?\b|\bmacbook|\bdarwin\b|\bosx\b|\bapple silicon\b|\bM[1-4] (?:Max|Pro|Ultra)\b", re.I)
#: The Linux side of a Windows machine: WSL, a container.
_LINUX_INSIDE = re.compile(r"\bWSL\b|\bdocker\b|\bcontainer\b|\bpodman\b", re.I)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=1)
def _names() -> Tuple[Dict[str, str], List[Tuple[re.Pattern, str]]]:
    """(normalised PyPI name -> PyPI name, [(alias pattern, PyPI name)]). An all-capitals alias (DALI) is matched in
    capitals only."""
    table = kb.linux_only_packages()
    exact = {_norm(n): n for n in table}
    aliases: List[Tuple[re.Pattern, str]] = []
    for name, row in table.items():
        for a in [name] + list(row.get("aliases") or []):
            flags = 0 if a.isupper() else re.I
            aliases.append((re.compile(r"(?<![\w-])" + re.escape(a) + r"(?![\w-])", flags), name))
            exact.setdefault(_norm(a), name)
    return exact, aliases


def _named(text: str) -> Optional[str]:
    for rx, name in _names()[1]:
        if rx.search(text):
            return name
    return None


def _line_os(line: str) -> Optional[str]:
    if _WINDOWS.search(line):
        return "windows"
    if _MACOS.search(line):
        return "macos"
    return None


def _platform(fx: Facts, text: str, name: str) -> Tuple[Optional[str], str]:
    """('windows' | 'macos' | 'linux-aarch64' | 'linux-x86_64' | None, where it was read): a line of the text that
    installs the package or names it on Windows or macOS ("installing cucim ... on Windows 11", when the same text says
    it worked on Ubuntu), else the facts', else any OS the text names."""
    for line in text.splitlines():
        o = _line_os(line)
        if o and (_ACTION.search(line) or _named(line) == name):
            return o, "text"
    named = [str(x).lower() for x in (fx.get("pasted.prose.conflicts.os") or []) if isinstance(x, str)]
    if not (fx.str("system.os") or fx.str("python.platform")) and named:
        # the paste names several OSes ("installed on Ubuntu ... fails on Windows 11"): the package exists for Linux,
        # so the refusal came from the other one
        other = next((o for o in ("windows", "macos") if any(o in n or (o == "macos" and "darwin" in n) for n in named)), None)
        if other:
            return other, "text"
    if fx.str("system.os") or fx.str("python.platform"):
        o = os_key(fx)
        if o != "linux":
            return o, "facts"
        arch = (fx.str("system.arch") or "").lower()
        return ("linux-aarch64" if arch in ("aarch64", "arm64") else "linux-x86_64"), "facts"
    o = _line_os(text)
    return o, "text" if o else ""


def _lacks(platform: Optional[str], name: str) -> bool:
    if platform is None:
        return False
    builds = kb.linux_only_packages()[name]["platforms"]
    if platform in ("windows", "macos"):
        return True
    return platform not in builds


@check(PACKAGE_NOT_BUILT_FOR_PLATFORM)
def package_not_built_for_platform(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    if not text or is_wsl(fx) or _LINUX_INSIDE.search(text) or container(fx):
        return
    found = _refused(fx, text) or _linux_library_on_windows(fx, text) or _reported(fx, text)
    if found is None:
        return
    name, platform, evidence, sure = found
    if name == "triton" and platform == "windows":
        return
    row = kb.linux_only_packages().get(name) or {}
    builds = " and ".join(p.replace("linux-", "Linux ") for p in row.get("platforms") or ["linux-x86_64"])
    where = {"windows": "Windows", "macos": "macOS"}.get(platform or "", "this platform" if not platform else platform)
    on_windows = platform == "windows"
    yield PACKAGE_NOT_BUILT_FOR_PLATFORM.finding(
        title=("" if sure else "Likely: ")
        + f"{name} publishes wheels for {builds} only: none for {where}"
        + ("; run it under WSL 2 or in a Linux container" if on_windows else "; use a Linux machine with an NVIDIA GPU"),
        evidence={**evidence, "published for": builds, "source": row.get("source", "")},
        severity=None if sure else "warning",
        fix=Fix(
            (
                (
                    f"wsl --install -d Ubuntu  # then, inside Ubuntu: pip install {name} (WSL 2 sees the GPU through "
                    "the Windows driver)"
                )
                if on_windows
                else f"# on a Linux machine with an NVIDIA GPU (a cloud VM, a Linux host's container): pip install {name}",
                f"# or install it from a channel that builds it for {where}, where one does (conda-forge for some), or "
                f"leave {name} out where the program treats it as optional",
            ),
            f"{name}'s releases on PyPI have only Linux wheels ({builds}); no pip option makes one for {where} appear.",
        ),
    )


def _refused(fx: Facts, text: str) -> Optional[Tuple[str, Optional[str], dict, bool]]:
    exact = _names()[0]
    for rx in (PIP_REFUSED, _CONDA_REFUSED):
        for m in rx.finditer(text):
            asked = re.sub(r"\[.*", "", m.group("pkg"))
            name = exact.get(_norm(m.group("pkg"))) or exact.get(_norm(asked))
            if name is None:
                continue
            platform, read_from = _platform(fx, text, name)
            if platform and not _lacks(platform, name):
                return None  # a platform it is built for: another cause (this Python, the index)
            evidence = {"refused": m.group(0)[:200], "os": (platform or "not shown") + (f" ({read_from})" if read_from else "")}
            return name, platform, evidence, platform is not None
    return None


def _linux_library_on_windows(fx: Facts, text: str) -> Optional[Tuple[str, Optional[str], dict, bool]]:
    m = _WIN193.search(text)
    if not m:
        return None
    so = _SO_FILE.search(text)
    if not so:
        return None
    name = _named(so.group("so")) or _named(text) or so.group("so")
    return name, "windows", {"error": m.group(0), "library": so.group("so")}, True


def _reported(fx: Facts, text: str) -> Optional[Tuple[str, Optional[str], dict, bool]]:
    """A line naming a listed package and installing or importing it, on Windows or macOS (the line's own OS word,
    else the facts')."""
    facts_os = os_key(fx) if (fx.str("system.os") or fx.str("python.platform")) else None
    for line in text.splitlines():
        name = _named(line)
        if not name or not _ACTION.search(line):
            continue
        platform = _line_os(line) or (facts_os if facts_os in ("windows", "macos") else None)
        if platform is None and facts_os is None:
            platform = _line_os(text)
        if platform in ("windows", "macos"):
            return name, platform, {"said": line.strip()[:200], "os": platform}, False
    return None


def register():
    return [package_not_built_for_platform]
