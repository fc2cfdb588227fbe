"""System libraries below torch: the C library, the C++ runtime and the driver's unversioned libcuda.so.

Reasoned from entities in the error text (a version node ``GLIBC_2.28`` / ``GLIBCXX_3.4.30`` / ``CXXABI_1.3.13``,
the library and the binary that needed it, an undefined ``std::`` symbol, the unversioned ``libcuda.so``) and the
facts (the distro and its glibc, the libc the facts report, torch's release, conda, WSL, Colab, a driver shown).
Signatures: kb/errors/syslib4.json; the tables (glibc per distro, manylinux tags, the glibc torch's Linux wheels
need, the GCC behind each libstdc++ symbol version) live there too, with their sources.

Codes: glibc-too-old, libstdcxx-too-old, libcuda-not-in-linker-cache.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.errortext import kb_document, text_of
from cudadoctor.facts import Facts
from cudadoctor.interpret import driver_version, in_conda_env, is_wsl, torch_version, vtuple
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

GLIBC_TOO_OLD = Code(
    code="glibc-too-old",
    title="The system C library (glibc) is older than a binary needs",
    area="system",
    severity="error",
    explanation={
        "what": "Importing torch (or a package's .so) fails with `/lib64/libc.so.6: version `GLIBC_2.NN' not found "
        "(required by .../torch/lib/libtorch_python.so)`, or conda refuses a package that needs `__glibc >=2.NN`.",
        "why": "A Linux binary needs at least the glibc of the system it was built on. torch's Linux wheels were built "
        "on CentOS 7 / manylinux2014 (glibc 2.17) from 0.4.1 to 2.5, and on manylinux_2_28 (glibc 2.28) from 2.7 (2.6: "
        "its CUDA 12.6 and aarch64 wheels). CentOS 6 has glibc 2.12, Ubuntu 18.04 2.27: they cannot load those binaries, "
        "and glibc cannot be upgraded on its own.",
        "confirm": "`ldd --version` (the glibc here) against the version in the message; "
        "`objdump -T <the .so in the message> | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1`.",
        "fix": "Run on a newer OS or in a container of one (Ubuntu 20.04+, RHEL/Rocky 8+), or install an older torch "
        "release whose wheels were built for this glibc (or build it from source here).",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/123649",
        "https://peps.python.org/pep-0600/",
        "https://sourceware.org/glibc/wiki/Glibc%20Timeline",
    ),
)
LIBSTDCXX_TOO_OLD = Code(
    code="libstdcxx-too-old",
    title="The C++ runtime (libstdc++) loaded is older than a binary needs",
    area="system",
    severity="error",
    explanation={
        "what": "An import fails with `libstdc++.so.6: version `GLIBCXX_3.4.NN' not found` (or `CXXABI_1.3.NN`), or "
        "with an undefined `std::` symbol (`undefined symbol: _ZNSt13runtime_errorC2EPKc`, "
        "`_ZSt28__throw_bad_array_new_lengthv`).",
        "why": "Each GCC release adds symbol versions to libstdc++; a module built with a newer GCC needs a libstdc++ at "
        "least as new. The process loaded an older one: a conda environment's own old libstdc++ (found first through "
        "its RPATH), or the OS's on an older distro while the package was built elsewhere.",
        "confirm": "`strings $(python -c 'import ctypes.util;print(ctypes.util.find_library(\"stdc++\"))') | grep GLIBCXX` "
        "or `strings $CONDA_PREFIX/lib/libstdc++.so.6 | grep GLIBCXX_3.4` lacks the version in the message.",
        "fix": "In a conda environment update its C++ runtime: `conda install -c conda-forge libstdcxx-ng libgcc-ng` "
        "(older envs: `conda install libgcc`); otherwise put a newer libstdc++ first "
        "(`export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH`) or update the OS's libstdc++6.",
    },
    links=(
        "https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html",
        "https://github.com/pytorch/pytorch/issues/87279",
        "https://github.com/pytorch/pytorch/issues/2608",
    ),
)
LIBCUDA_NOT_IN_LINKER_CACHE = Code(
    code="libcuda-not-in-linker-cache",
    title="The unversioned libcuda.so is not where the loader or linker looks, though the driver is there",
    area="driver",
    severity="error",
    explanation={
        "what": "A program that asks for `libcuda.so` (no number) fails: Triton's `AssertionError: libcuda.so cannot "
        "found!` or `/usr/bin/ld: cannot find -lcuda`, cuda-python's `Failed to dlopen libcuda.so`, cuDNN 8's "
        "libcudnn_cnn_infer, `ctypes.CDLL('libcuda.so')`: `cannot open shared object file`.",
        "why": "The driver's library is libcuda.so.1; libcuda.so is a link to it that the linker cache "
        "(`ldconfig -p`) must list. Under WSL 2 the files in /usr/lib/wsl/lib are copies, not links, so ldconfig lists "
        "only libcuda.so.1; on Colab the driver's libraries live in /usr/lib64-nvidia; in some images nobody ran "
        "ldconfig. torch itself (which opens libcuda.so.1) works; the programs that want the bare name do not.",
        "confirm": "`ldconfig -p | grep libcuda` lists libcuda.so.1 but no plain libcuda.so; "
        "`ls -l /usr/lib/wsl/lib/libcuda*` (WSL) or `ls /usr/lib64-nvidia` (Colab).",
        "fix": "Register the driver's directory with the linker cache (`sudo ldconfig /usr/lib/wsl/lib` on WSL, "
        "`ldconfig /usr/lib64-nvidia` on Colab), or point the program at it (`export "
        "LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH`, Triton: `export TRITON_LIBCUDA_PATH=<that dir>`).",
    },
    links=(
        "https://github.com/microsoft/WSL/issues/8587",
        "https://github.com/triton-lang/triton/pull/2019",
        "https://forums.developer.nvidia.com/t/wsl2-libcuda-so-and-libcuda-so-1-should-be-symlink/236301",
    ),
)

_DOC = "syslib4.json"

# --- the entities -------------------------------------------------------------------------------------

#: A version node the loader could not find, the library that lacked it, and the binary that wanted it.
_NODE = re.compile(
    r"(?:(?P<lib>/?[\w./+-]*lib(?:c|m|pthread|dl|rt|stdc\+\+)\.so\.\d+):\s*)?version [`'‘\"]?"
    r"(?P<node>GLIBC|GLIBCXX|CXXABI)_(?P<ver>\d+(?:\.\d+)+)['’\"`]? not found"
    r"(?:\s*\(required by (?P<by>[^)\s]+)\))?",
    re.IGNORECASE,
)
_CONDA_GLIBC = re.compile(r"__glibc\s*>=\s*(?P<ver>2\.\d+)")
#: uv's platform tag for this Linux ("e.g., `manylinux_2_27_x86_64`", "You're on Linux (`manylinux_2_27_x86_64`)"): its glibc.
_UV_HERE = re.compile(r"(?:matching platform tag \(e\.g\.,?|You're on Linux \()\s*`?manylinux_(\d+)_(\d+)_(\w+?)`?\)")
_TAG = re.compile(r"manylinux_(\d+)_(\d+)_(x86_64|aarch64|ppc64le|s390x|i686|armv7l)")
#: A wheel platform tag of another operating system, in uv's list of the platforms a release has wheels for.
_OTHER_OS_TAG = re.compile(r"\bmacosx_\d+_\d+_\w+|\bwin_(?:amd64|arm64)\b|\bwin32\b")


def _uv_tags(text: str) -> Optional[Tuple[str, Optional[str]]]:
    """(glibc here, glibc the newest same-arch wheel needs or None) from uv's platform-tag message; None when there
    is none, or when the wheels listed for this CPU architecture need no newer glibc (another cause: arch, Python)."""
    m = _UV_HERE.search(text)
    if not m:
        return None
    here, arch = f"{m.group(1)}.{m.group(2)}", m.group(3)
    listed = _TAG.findall(text[m.end() :])
    avail = [f"{a}.{b}" for a, b, c in listed if c == arch]
    if not avail:
        # wheels only for other CPU architectures or other systems (macosx_11_0_arm64, win_amd64): not the glibc
        return None if listed or _OTHER_OS_TAG.search(text[m.end() :]) else (here, None)
    top = _vmax(avail)
    return (here, top) if (vtuple(top) or ()) > (vtuple(here) or ()) else None


_STD_SYMBOL = re.compile(r"undefined symbol:?\s*(?P<sym>_?_Z(?:T[VIS])?N?K?St(?!3__1)(?:\d|_)\w*|__cxa_\w+)")


def _text(fx: Facts) -> str:
    return text_of(fx) or ""


def _nodes(text: str, kinds: Tuple[str, ...]) -> List[Dict[str, str]]:
    out = []
    for m in _NODE.finditer(text):
        kind = m.group("node").upper()
        if kind in kinds:
            out.append({"node": kind, "version": m.group("ver"), "lib": m.group("lib") or "", "by": m.group("by") or ""})
    return out


def _vmax(vs: List[str]) -> str:
    return max(vs, key=lambda v: vtuple(v) or ())


# --- glibc ---------------------------------------------------------------------------------------------


def _system_glibc(fx: Facts) -> Optional[Tuple[str, str]]:
    """(glibc version, where it comes from): the libc fact, else the distro's (the kb table), else None."""
    libc = fx.str("system.libc") or ""
    m = re.search(r"glibc[-\s]?(\d+\.\d+)", libc, re.IGNORECASE)
    if m:
        return m.group(1), "system.libc"
    where = " ".join(x for x in (fx.str("system.distro"), fx.str("system.os")) if x)
    for d in kb_document(_DOC)["glibc_by_distro"]["distros"]:
        if where and re.search(d["match"], where, re.IGNORECASE):
            return d["glibc"], f"{d['name']} ships glibc {d['glibc']}"
    m = re.search(r"ldd \(GNU libc\)\s*(\d+\.\d+)|\bglibc[ -]?(\d+\.\d+)", _text(fx), re.IGNORECASE)
    if m:
        return (m.group(1) or m.group(2)), "the text"
    return None


def _newest_torch_for(glibc: str, arm: bool) -> Optional[str]:
    """The last torch release whose Linux wheels load on this glibc (kb table), or None when none does / every one does.
    On aarch64 a release's newer baseline (``some_glibc``: 2.6's aarch64 wheels) is its baseline."""
    rel = kb_document(_DOC)["torch_linux_glibc"]["releases"]
    have = vtuple(glibc) or ()
    last_ok: Optional[str] = None
    for i, r in enumerate(rel):
        if have < (vtuple(r["glibc"]) or ()):
            return last_ok if i else None
        some = vtuple(r.get("some_glibc", r["glibc"])) or ()
        if have < some and arm:
            return last_ok
        if have < some:
            return f"{r['from']} (its CPU / CUDA 12.4 wheels)"
        nxt = rel[i + 1]["from"] if i + 1 < len(rel) else None
        last_ok = f"<{nxt}" if nxt else None
    return None


#: Releases still supported today, the ones worth suggesting (the table also has the old ones, to read facts).
_CURRENT = ("Ubuntu 22.04", "Ubuntu 24.04", "Debian 12", "RHEL 9 family")


def _distros_with(glibc: str) -> str:
    need = vtuple(glibc) or ()
    rows = kb_document(_DOC)["glibc_by_distro"]["distros"]
    pick = [d["name"] for d in rows if d["name"] in _CURRENT and (vtuple(d["glibc"]) or ()) >= need]
    return ", ".join(pick) or "a newer Linux"


@check(GLIBC_TOO_OLD)
def glibc_too_old(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, GLIBC_TOO_OLD)
    if not said:
        return
    text = _text(fx)
    nodes = _nodes(text, ("GLIBC",))
    uv = _uv_tags(text)
    wants = [n["version"] for n in nodes] + [m.group("ver") for m in _CONDA_GLIBC.finditer(text)]
    if _UV_HERE.search(text) and not wants and uv is None:
        return  # uv's wheels for this architecture need no newer glibc: not this cause
    if uv and uv[1]:
        wants.append(uv[1])
    need = _vmax(wants or ["0"])
    by = next((n["by"] for n in nodes if n["version"] == need and n["by"]), "")
    have = _system_glibc(fx) or ((uv[0], "uv's platform tag for this Linux") if uv else None)
    if uv and not nodes:
        by = "/torch/lib/ (torch's wheels)" if re.search(r"`torch`|torch==", text) else by
    evidence: Dict[str, Any] = {said[0]: said[1], "glibc_needed": need if need != "0" else None}
    if by:
        evidence["required_by"] = by
    if have:
        evidence["glibc_here"] = f"{have[0]} ({have[1]})"
    torch_bin = "/torch/lib/" in by or bool(re.match(r"lib(?:torch|c10|shm|caffe2)\w*\.so", by.rsplit("/", 1)[-1]))
    pkg = re.search(r"(?:site|dist)-packages/([\w.-]+?)/", by)
    tv = torch_version(fx)
    cmds = [
        "ldd --version | head -1  # the glibc here; the message needs GLIBC_" + (need if need != "0" else "2.NN"),
        *(["uv cache clean  # if ldd already shows the newer glibc: uv's cached interpreter facts are stale"] if uv else []),
        "# run on a newer OS or in a container of one, e.g. " + _distros_with(need if need != "0" else "2.28"),
        "docker run --gpus all -it nvcr.io/nvidia/pytorch:<tag>  # or any image whose OS is new enough",
    ]
    why = "glibc cannot be replaced on its own: the binary needs the C library of the system it was built on."
    if torch_bin and have:
        arm = "aarch64" in (fx.str("system.arch") or "") + by + (fx.str("system.distro") or "") + said[1]
        older = _newest_torch_for(have[0], arm)
        if older:
            cmds.append(
                f"python -m pip install 'torch{older if older.startswith('<') else '==' + older.split()[0]}'"
                "  # or a torch release whose wheels were built for this glibc"
            )
        else:
            cmds.append("# no official torch wheel supports this glibc: build torch from source here, or use a newer OS")
    elif not torch_bin:
        cmds.append("# or install a release of that package built for an older glibc (a manylinux2014 wheel needs 2.17)")
    title = "The system's glibc" + (f" ({have[0]})" if have else "") + " is older than"
    title += f" the GLIBC_{need} " if need != "0" else " the glibc "
    title += "torch's binaries need" if torch_bin else f"{pkg.group(1)}'s binary needs" if pkg else "a binary needs"
    title += f" (torch {tv})" if torch_bin and tv else ""
    yield GLIBC_TOO_OLD.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why))


# --- libstdc++ ----------------------------------------------------------------------------------------


def _gcc_for(node: str, version: str) -> Optional[str]:
    tab = kb_document(_DOC)["libstdcxx_versions"].get(node) or {}
    return tab.get(version)


@check(LIBSTDCXX_TOO_OLD)
def libstdcxx_too_old(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, LIBSTDCXX_TOO_OLD)
    if not said:
        return
    text = _text(fx)
    nodes = _nodes(text, ("GLIBCXX", "CXXABI"))
    evidence: Dict[str, Any] = {said[0]: said[1]}
    lib = ""
    if nodes:
        top = max(nodes, key=lambda n: vtuple(n["version"]) or ())
        lib = top["lib"]
        gcc = _gcc_for(top["node"], top["version"])
        evidence["needs"] = f"{top['node']}_{top['version']}" + (f" (libstdc++ of GCC {gcc} or newer)" if gcc else "")
        if top["by"]:
            evidence["required_by"] = top["by"]
        if lib:
            evidence["libstdcxx_loaded"] = lib
        what = f"{top['node']}_{top['version']}"
    else:
        sym = _STD_SYMBOL.search(text)
        what = f"the C++ runtime symbol {sym.group('sym')}" if sym else "a std:: symbol"
        evidence["needs"] = what
    conda = in_conda_env(fx) or bool(re.search(r"conda|miniforge|mambaforge|micromamba", lib + " " + text, re.IGNORECASE))
    if conda:
        cmds = (
            "conda install -c conda-forge libstdcxx-ng libgcc-ng  # the environment's C++ runtime, new enough",
            "strings $CONDA_PREFIX/lib/libstdc++.so.6 | grep -E 'GLIBCXX_3\\.4\\.[0-9]+$' | sort -V | tail -1",
            "# older environments: conda install libgcc",
        )
        why = "The conda environment's own libstdc++ is found first (RPATH) and is older than the GCC that built the module."
    else:
        cmds = (
            "strings /usr/lib/x86_64-linux-gnu/libstdc++.so.6 | grep -E 'GLIBCXX_3\\.4\\.[0-9]+$' | sort -V | tail -1",
            "export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH  # a newer libstdc++ first, if one is installed",
            "sudo apt install --only-upgrade libstdc++6  # or a newer OS / container; or rebuild the module with this GCC",
        )
        why = "The libstdc++ this process loads predates the GCC that built the module; a newer one must be found first."
    yield LIBSTDCXX_TOO_OLD.finding(
        title=f"The C++ runtime (libstdc++) loaded lacks {what}: it is older than the compiler that built the module",
        evidence=evidence,
        fix=Fix(cmds, why),
    )


# --- libcuda.so ---------------------------------------------------------------------------------------

#: The compiler saying Python.h is missing (python-headers-missing owns that cause).
_PYTHON_H = re.compile(r"\bPython\.h\b")
_COLAB = re.compile(r"\bcolab\b|/usr/lib64-nvidia|/content/", re.IGNORECASE)
_WSL_TEXT = re.compile(r"\bWSL\s?2?\b|/usr/lib/wsl/lib|microsoft-standard", re.IGNORECASE)
_DRIVER_TEXT = re.compile(r"libcuda\.so\.1\b(?![^\n]{0,40}(?:cannot open|not found|no such))|NVIDIA-SMI \d|Driver Version:\s*\d")


#: cuDNN 8's libcudnn_cnn_infer (the sub-library linked against libcuda.so) failing to load, its reason not given as
#: its own file missing ("Error: libcudnn_cnn_infer.so.8: cannot open ..." is the file itself: cuda-library-missing).
_CNN_INFER = re.compile(r"Could not load library libcudnn_cnn_infer\.so\.8\b(?!\.?\s*Error:\s*libcudnn)", re.IGNORECASE)


#: bitsandbytes' own CUDA setup (0.35-0.41: bitsandbytes/cuda_setup/main.py) reporting its search, which under WSL 2 does
#: not find the driver's libcuda in the linker cache and falls back to its CPU library (text-generation-webui's WSL
#: threads, session 17's b52: export LD_LIBRARY_PATH=/usr/lib/wsl/lib).
_BNB_SETUP = re.compile(
    r"bitsandbytes[/\\]cuda_setup|CUDA SETUP:|did not contain libcudart\.so as expected|CUDA Setup failed despite GPU being available",
    re.IGNORECASE,
)


#: Under WSL 2, a program that loads the driver's libcuda by name failing with no reason shown: most often that
#: library, which WSL keeps in /usr/lib/wsl/lib (a hypothesis). (pattern, what failed, why) per program.
_WSL_LIBCUDA_HYPOTHESES = (
    (
        _CNN_INFER,
        "cuDNN 8's libcudnn_cnn_infer could not load the unversioned libcuda.so, which WSL's linker cache does not list "
        "(confirm: `ldconfig -p | grep libcuda` shows only libcuda.so.1)",
        "cuDNN 8's cnn_infer is linked against libcuda.so; under WSL only libcuda.so.1 is in the linker cache.",
    ),
    (
        _BNB_SETUP,
        "bitsandbytes' CUDA setup cannot find the driver's libcuda in /usr/lib/wsl/lib and falls back to its CPU "
        "library (confirm: `python -m bitsandbytes`)",
        "bitsandbytes loads libcuda by name; under WSL 2 it is only in /usr/lib/wsl/lib.",
    ),
)


def _wsl_libcuda_hypotheses(text: str, wsl: bool) -> Iterator[Finding]:
    for rx, what, why in _WSL_LIBCUDA_HYPOTHESES if wsl else ():
        m = rx.search(text)
        if not m:
            continue
        line = next((ln.strip() for ln in text.split("\n") if rx.search(ln)), m.group(0))
        yield LIBCUDA_NOT_IN_LINKER_CACHE.finding(
            title=f"Likely: under WSL 2, {what}",
            evidence={
                "user_error": line[:300],
                "platform": "WSL 2: /usr/lib/wsl/lib holds copies, so ldconfig lists only libcuda.so.1",
            },
            fix=Fix(
                (
                    "ldconfig -p | grep libcuda  # lists libcuda.so.1 but no plain libcuda.so",
                    "sudo ldconfig /usr/lib/wsl/lib  # register WSL's driver libraries with the linker cache",
                    "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH  # or point the process there (add it to ~/.bashrc)",
                ),
                why,
            ),
            severity="warning",
        )


@check(LIBCUDA_NOT_IN_LINKER_CACHE)
def libcuda_not_in_linker_cache(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, LIBCUDA_NOT_IN_LINKER_CACHE)
    text = _text(fx)
    where_os = " ".join(x for x in (fx.str("system.os"), fx.str("system.distro"), fx.str("system.kernel")) if x)
    prose_wsl = ((fx.dict("pasted.prose") or {}).get("wsl") or {}).get("value")  # the reporter's "on WSL" ('?': which one unsaid)
    wsl = is_wsl(fx) is True or prose_wsl in ("?", "2") or bool(_WSL_TEXT.search(where_os) or _WSL_TEXT.search(text))
    if not said:
        yield from _wsl_libcuda_hypotheses(text, wsl)
        return
    helper_only = "CalledProcessError" in said[1] and "-lcuda" in said[1]  # Triton's helper build, its output unshown
    if helper_only and _PYTHON_H.search(text):
        return  # the compiler said why: python-headers-missing
    colab = bool(_COLAB.search(where_os) or _COLAB.search(text))
    drv = driver_version(fx)
    shown = wsl or colab or bool(drv) or fx.bool("torch.cuda_available") is True or bool(_DRIVER_TEXT.search(text))
    evidence: Dict[str, Any] = {said[0]: said[1]}
    cmds: Tuple[str, ...]
    if wsl:
        evidence["platform"] = "WSL 2: /usr/lib/wsl/lib holds copies, so ldconfig lists only libcuda.so.1"
        cmds = (
            "ldconfig -p | grep libcuda  # lists libcuda.so.1 but no plain libcuda.so",
            "sudo ldconfig /usr/lib/wsl/lib  # register WSL's driver libraries with the linker cache",
            "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH  # or point the program there",
        )
    elif colab:
        evidence["platform"] = "Google Colab: the driver's libraries are in /usr/lib64-nvidia"
        cmds = (
            "!ldconfig -p | grep libcuda",
            "!ldconfig /usr/lib64-nvidia  # register Colab's driver libraries with the linker cache",
            "import os; os.environ['TRITON_LIBCUDA_PATH'] = '/usr/lib64-nvidia'  # Triton: or point it there",
        )
    else:
        if drv:
            evidence["driver"] = drv
        cmds = (
            "ldconfig -p | grep libcuda  # the driver's libcuda.so.1 and, for these programs, a plain libcuda.so",
            "sudo ldconfig  # refresh the cache; if only libcuda.so.1 exists: "
            "sudo ln -s libcuda.so.1 <its dir>/libcuda.so && sudo ldconfig",
            "export TRITON_LIBCUDA_PATH=<the dir of libcuda.so.1>  # Triton; others: LD_LIBRARY_PATH / LIBRARY_PATH",
        )
    title = "The unversioned libcuda.so is not in the linker cache"
    title += " (WSL 2)" if wsl else " (Colab)" if colab else ""
    title += ": programs that ask for it by that name (Triton, cuda-python, cuDNN 8) cannot find the driver"
    if helper_only:
        title = (
            "Likely: Triton could not build its launcher helper (cc ... -lcuda failed, the compiler's output not shown): "
            "most often the linker finds no unversioned libcuda.so" + (" (WSL 2)" if wsl else " (Colab)" if colab else "")
        )
        cmds = cmds + ("# the compiler's lines above the CalledProcessError say which: 'cannot find -lcuda' or 'Python.h'",)
        shown = False
    elif not shown:
        title += "; if `ldconfig -p | grep libcuda` shows no libcuda.so.1 either, no NVIDIA driver is installed"
    yield LIBCUDA_NOT_IN_LINKER_CACHE.finding(
        title=title,
        evidence=evidence,
        fix=Fix(cmds, "The driver ships libcuda.so.1; the bare name is a link that must be in the linker cache or path."),
        severity=None if shown else "warning",
    )


def register():
    return [glibc_too_old, libstdcxx_too_old, libcuda_not_in_linker_cache]
