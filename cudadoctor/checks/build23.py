"""Builds and installs that fail for one cause each, readable from their own error line (session 23, from the
uncatalogued labels of blind batches b108, b123, b124 and b142 and the threads of each class):

- extension-source-uses-removed-thc-api: "fatal error: THC/THC.h: No such file or directory". torch 1.11 removed the
  legacy THC headers (pytorch/pytorch#73520 on 1.11.0-rc4; the rest of THC went in pytorch/pytorch#79267), so an
  extension's .cu/.cpp written for torch <= 1.10 (``#include <THC/THC.h>``, ``extern THCState *state``,
  ``THCudaCheck``, ``THCCeilDiv``) no longer compiles. The fix is in the extension's source (the ATen equivalents, as
  CoinCheung/pytorch-loss#37 and OpenPCDet did) or a torch <= 1.10; nothing is wrong with the installed torch.
- cuda13-cccl-headers-moved: "fatal error: cuda/std/utility: No such file or directory" (or <cub/...>, <thrust/...>)
  in a host-compiler step under CUDA 13: CUDA 13.0 moved CCCL (Thrust, CUB, libcu++) from ``include/`` to
  ``include/cccl/`` (NVIDIA's CCCL 3.0 migration guide). nvcc adds that directory itself; g++/cl.exe compiling a
  .cpp that includes CUTLASS or those headers does not.
- stale-extension-build-lock: a JIT extension build (torch.utils.cpp_extension.load) waiting forever on the "lock"
  file an interrupted build left (pytorch#189245; torch's "Lock file exists in build directory"; Megatron's fused
  kernels, nvdiffrec, ExLlama, NNCF); a hang beside the build's own lines is a likely one (b119-02, b162-04).
- windows-path-too-long: pip's "HINT: This error might have occurred since this system does not have Windows Long Path
  support enabled" (pip adds it for ENOENT on a path over 260 characters, pypa/pip#10046), ninja's "Filename longer
  than 260 characters", WinError 206, or Errno 2 on a Windows path of about that length: Windows' MAX_PATH limit.
  torch's wheels hold deep paths, and the Microsoft Store Python installs under a long LocalCache prefix.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from cudadoctor.facts import Facts
from cudadoctor.interpret.build import torch_version
from cudadoctor.interpret.versions import vtuple
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, text_of

EXTENSION_SOURCE_USES_REMOVED_THC_API = Code(
    code="extension-source-uses-removed-thc-api",
    title="The extension's source uses torch's THC headers, which torch 1.11 removed",
    area="packages",
    severity="error",
    explanation={
        "what": "Building a CUDA extension (pointnet2 / pcdet ops, RoI pooling, horovod, a repository's csrc/) fails "
        "with 'fatal error: THC/THC.h: No such file or directory' (or 'THCState' / 'THCudaCheck' undeclared).",
        "why": "torch 1.11 stopped shipping the legacy THC headers (pytorch#73520) and later releases removed the rest "
        "of THC (pytorch#79267). Sources written for torch 1.10 and older still include them. The installed torch is "
        "fine; the extension's source is older than it.",
        "confirm": 'python -c "import torch; print(torch.__version__)"  # 1.11 or newer; the failing file has '
        "#include <THC/THC.h>",
        "fix": "Use a version of the extension that builds with current torch, or port its source: drop "
        "`#include <THC/THC.h>` and `extern THCState *state;`, THCudaCheck -> C10_CUDA_CHECK (or AT_CUDA_CHECK), "
        "THCCeilDiv -> at::ceil_div (ATen/ceil_div.h), THCudaMalloc/Free -> c10::cuda::CUDACachingAllocator. Or build "
        "it against a torch <= 1.10 that matches its era.",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/73520",
        "https://github.com/pytorch/pytorch/pull/79267",
        "https://github.com/CoinCheung/pytorch-loss/pull/37",
        "https://github.com/open-mmlab/OpenPCDet/issues/900",
    ),
)

CUDA13_CCCL_HEADERS_MOVED = Code(
    code="cuda13-cccl-headers-moved",
    title="CUDA 13 moved Thrust/CUB/libcu++ headers to include/cccl, and the host compile does not look there",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Building an extension that includes CUTLASS, Thrust, CUB or <cuda/std/...> from a .cpp file fails under "
        "CUDA 13 with 'fatal error: cuda/std/utility: No such file or directory' (or a cub/thrust header).",
        "why": "From CUDA 13.0 the CUDA C++ Core Libraries live in ${CUDA_HOME}/include/cccl/ instead of include/. nvcc "
        "adds that directory by itself; the host compiler (g++, cl.exe) compiling a .cpp gets only -I${CUDA_HOME}/include.",
        "confirm": "ls ${CUDA_HOME:-/usr/local/cuda}/include/cccl/cuda/std/utility  # present there, absent in include/cuda/std",
        "fix": "Add ${CUDA_HOME}/include/cccl to the host compiler's include path (setup.py include_dirs, CMake: link "
        "CCCL::CCCL), or use a release of the package with CUDA 13 support, or build with CUDA 12.x. Do not rewrite "
        "the includes as <cccl/...>.",
    },
    links=(
        "https://nvidia.github.io/cccl/cccl/3.0_migration_guide.html",
        "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/",
    ),
)

WINDOWS_PATH_TOO_LONG = Code(
    code="windows-path-too-long",
    title="A file path went over Windows' 260-character limit (long paths are not enabled)",
    area="system",
    severity="error",
    explanation={
        "what": "pip install of torch (or a package with deep paths) on Windows stops with '[Errno 2] No such file or "
        "directory: <a very long path>' and pip's hint about Windows Long Path support; or a build stops at "
        "ninja's 'Filename longer than 260 characters' or WinError 206.",
        "why": "Windows limits paths to 260 characters (MAX_PATH) unless LongPathsEnabled is set. torch's wheels hold deep "
        "paths, and the Microsoft Store Python installs under a long "
        "AppData\\Local\\Packages\\PythonSoftwareFoundation...\\LocalCache prefix; build trees nest whole source paths.",
        "confirm": "Count the path in the message (over 260 characters) and run, in PowerShell: "
        "Get-ItemProperty HKLM:\\SYSTEM\\CurrentControlSet\\Control\\FileSystem LongPathsEnabled",
        "fix": "Enable long paths (as administrator): reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem /v "
        "LongPathsEnabled /t REG_DWORD /d 1 /f, then open a new shell; or install into a short path (a venv at "
        "C:\\venv, Python from python.org instead of the Store). Build tools (ninja, MSVC) may not honour the setting: "
        "build from a short directory.",
    },
    links=(
        "https://pip.pypa.io/warnings/enable-long-paths",
        "https://learn.microsoft.com/en-us/windows/win32/fileio/maximum-file-path-limitation",
        "https://github.com/pypa/pip/pull/10046",
    ),
)


STALE_EXTENSION_BUILD_LOCK = Code(
    code="stale-extension-build-lock",
    title="A torch JIT extension build waits forever on a lock file an interrupted build left behind",
    area="packages",
    severity="error",
    explanation={
        "what": "A program that compiles its CUDA/C++ extension at start-up (Megatron's fused kernels, DeepSpeed ops, "
        "nvdiffrec, ExLlama, RAGatouille) hangs at 'Using ... as PyTorch extensions root...' / 'compiling and loading "
        "fused kernels' / 'Loading extension module ...', with no CPU or GPU use; a Ctrl+C shows file_baton.py's wait.",
        "why": "torch.utils.cpp_extension.load guards a build with a 'lock' file in the build directory; a build killed "
        "midway (Ctrl+C, OOM, a cancelled job) leaves it, and every later load() waits for it forever "
        "(pytorch#189245; newer torch warns 'Lock file exists in build directory').",
        "confirm": "ls ~/.cache/torch_extensions/*/*/lock  (or the project's own build directory, e.g. "
        "megatron/fused_kernels/build/lock; TORCH_EXTENSIONS_DIR if set)",
        "fix": "With no other build running, delete the lock file (or the whole extension build directory: "
        "rm -rf ~/.cache/torch_extensions/<pyXY_cuZZZ>/<name>, megatron/fused_kernels/build) and run again; it rebuilds.",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/189245",
        "https://github.com/pytorch/pytorch/pull/190543",
        "https://github.com/NVlabs/nvdiffrec/issues/39",
        "https://github.com/openvinotoolkit/nncf/issues/533",
    ),
)

#: Hanging words, and the JIT build's own lines they sit beside (a likely stale lock when no lock line is shown).
_STUCK = re.compile(r"\b(?:stuck|hangs?|hung|hanging|freez\w*|choked|timed? ?out|no (?:further )?output|nothing happens)\b", re.I)
_JIT_BUILD = re.compile(
    r"as PyTorch extensions root|compiling (?:and loading )?fused kernels|Loading extension module|"
    r"torch\.utils\.cpp_extension\.load|torch_extensions|fused_kernels",
    re.I,
)


@check(STALE_EXTENSION_BUILD_LOCK)
def stale_extension_build_lock(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, STALE_EXTENSION_BUILD_LOCK)
    if said:
        evidence = {said[0]: said[1]}
    else:
        text = text_of(fx)
        build, stuck = _JIT_BUILD.search(text), _STUCK.search(text)
        if not (build and stuck):
            return
        evidence = {"JIT extension build": build.group(0), "symptom": stuck.group(0)}
    yield STALE_EXTENSION_BUILD_LOCK.finding(
        title=("" if said else "Likely: ")
        + "the extension's JIT build waits on a lock file left by an interrupted build: delete it and run again",
        evidence=evidence,
        fix=Fix(
            (
                "ls ~/.cache/torch_extensions/*/*/lock  # or $TORCH_EXTENSIONS_DIR; the project's own build dir (megatron/fused_kernels/build)",
                "rm ~/.cache/torch_extensions/<pyXY_cuZZZ>/<name>/lock  # with no other build running; or rm -rf that extension's folder",
                "# then run again: the extension is rebuilt",
            ),
            "torch.utils.cpp_extension.load waits for a 'lock' file in the build directory; a killed build never removes it.",
        ),
        severity=None if said else "warning",
    )


# ---------------------------------------------------------------- THC


@check(EXTENSION_SOURCE_USES_REMOVED_THC_API)
def extension_source_uses_removed_thc_api(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, EXTENSION_SOURCE_USES_REMOVED_THC_API)
    if not said:
        return
    torch = torch_version(fx)
    t = vtuple(torch)
    if t and t[:2] < (1, 11):
        return  # a torch that still ships THC: the header is missing for another reason (an incomplete install)
    evidence = {said[0]: said[1]}
    if torch:
        evidence["torch"] = torch
    yield EXTENSION_SOURCE_USES_REMOVED_THC_API.finding(
        title="The extension's source still includes torch's THC headers, removed in torch 1.11: use a release of it "
        "ported to ATen (or port it), or build against torch <= 1.10",
        evidence=evidence,
        fix=Fix(
            (
                "# in the extension's .cpp/.cu files: delete `#include <THC/THC.h>` and `extern THCState *state;`",
                "# THCudaCheck(x) -> C10_CUDA_CHECK(x); THCCeilDiv(a, b) -> at::ceil_div(a, b)  (#include <ATen/ceil_div.h>)",
                f"{PIP} install --no-build-isolation -e .  # rebuild; or a newer release of the package that dropped THC",
            ),
            "torch 1.11 and newer ship no THC headers; the installed torch is fine, the extension's source predates it.",
        ),
    )


# ---------------------------------------------------------------- CCCL under CUDA 13

#: A CUDA 13 toolkit named in the text: a /usr/local/cuda-13.x path, nvcc's "release 13.x", "CUDA 13".
_CUDA13_SAID = re.compile(r"cuda-13\.\d|release 13\.\d|\bCUDA[ _]?(?:Toolkit )?v?13(?:\.\d)?\b|\bcu13\d\b", re.I)


def _toolkit_major(fx: Facts) -> Optional[int]:
    """The CUDA toolkit's major version: nvcc's, else a CUDA 13 named in the error text (13), else unknown."""
    v = vtuple(fx.str("toolkit.nvcc_version"))
    if v:
        return v[0]
    return 13 if _CUDA13_SAID.search(text_of(fx)) else None


@check(CUDA13_CCCL_HEADERS_MOVED)
def cuda13_cccl_headers_moved(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CUDA13_CCCL_HEADERS_MOVED)
    if not said:
        return
    major = _toolkit_major(fx)
    if major is not None and major < 13:
        return  # before CUDA 13 the headers are in include/: a missing toolkit or include path, not this
    evidence = {said[0]: said[1]}
    if major:
        evidence["cuda_toolkit"] = fx.str("toolkit.nvcc_version") or "13 (named in the text)"
    yield CUDA13_CCCL_HEADERS_MOVED.finding(
        title=("" if major else "Likely (if this is CUDA 13): ")
        + "CUDA 13 keeps Thrust/CUB/libcu++ under include/cccl, which the host compiler is not given: add that "
        "include path, or build with CUDA 12.x",
        evidence=evidence,
        fix=Fix(
            (
                'export CPLUS_INCLUDE_PATH="${CUDA_HOME:-/usr/local/cuda}/include/cccl${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}"',
                "# or in setup.py: include_dirs += [os.path.join(CUDA_HOME, 'include', 'cccl')]; CMake: link CCCL::CCCL",
                "# or a release of the package with CUDA 13 support, or CUDA 12.x",
            ),
            "CUDA 13.0 moved the CCCL headers to include/cccl; nvcc finds them, a plain g++/cl.exe compile does not.",
        ),
        severity=None if major else "warning",
    )


# ---------------------------------------------------------------- Windows MAX_PATH

#: pip's ENOENT message: the path it could not write, as Python's repr (backslashes doubled).
_ENOENT_PATH = re.compile(r"\[Errno 2\] No such file or directory: '([A-Za-z]:(?:\\\\|\\|/)[^']+)'")
#: Long enough that the limit, not a missing file, explains ENOENT: pip's own test is over 260; a path quoted with its
#: user name redacted ("[username]") or shortened runs a little under it.
_NEAR_MAX_PATH = 240


def _long_windows_path(text: str) -> Optional[str]:
    for m in _ENOENT_PATH.finditer(text):
        path = m.group(1).replace("\\\\", "\\")
        if len(path) >= _NEAR_MAX_PATH:
            return path
    return None


@check(WINDOWS_PATH_TOO_LONG)
def windows_path_too_long(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, WINDOWS_PATH_TOO_LONG)
    long_path = None if said else _long_windows_path(text_of(fx))
    if not said and not long_path:
        return
    evidence = {said[0]: said[1]} if said else {"error text": f"[Errno 2] on a {len(long_path or '')}-character path"}
    yield WINDOWS_PATH_TOO_LONG.finding(
        title="A path went over Windows' 260-character limit: enable long paths, or install/build in a shorter directory",
        evidence=evidence,
        fix=Fix(
            (
                "reg add HKLM\\SYSTEM\\CurrentControlSet\\Control\\FileSystem /v LongPathsEnabled /t REG_DWORD /d 1 /f"
                "  # as administrator; then a new shell",
                "python -m venv C:\\venv && C:\\venv\\Scripts\\activate  # or: a short install path (not the Store Python)",
                "# a build (ninja, MSVC): build from a short directory; those tools may ignore LongPathsEnabled",
            ),
            "Windows limits paths to 260 characters unless LongPathsEnabled is set (pip's own hint says so).",
        ),
    )


def register():
    return [extension_source_uses_removed_thc_api, cuda13_cccl_headers_moved, windows_path_too_long, stale_extension_build_lock]
