"""Which CUDA libraries does torch really load, and do they match the build?

Codes: cudnn-mismatch, library-shadowing, stub-libcuda, cuda-toolkit-mismatch, conda-cudatoolkit-broken-build.
"""

from __future__ import annotations

import os
import re
from typing import Dict, Iterator, List, Optional, Tuple

from cudadoctor import errortext
from cudadoctor.facts import Facts
from cudadoctor.interpret import (
    conda_torch,
    dist_version,
    cuda_like_dir,
    decode_cudnn,
    driver_os,
    driver_version,
    environment,
    fmt_cudnn,
    is_cuda_build,
    ld_library_path,
    ld_preload,
    loaded_libraries,
    mm,
    torch_cuda,
    torch_release,
    torch_version,
    variant,
    vtuple,
)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, search
from .nvwheel22 import conflicting_wheels
from .builds import build_tool_cuda_pair
from .companions import companion_cudnn_hypothesis
from ._fixes import (
    filtered_path_command,
    install_commands,
    release_info,
    runnable_variants,
)
from .platform import CUDNN8_ZLIB

CUDNN_MISMATCH = Code(
    code="cudnn-mismatch",
    title="The cuDNN loaded at run time is not the one torch was built for, or cannot be loaded",
    area="libraries",
    severity="error",
    explanation={
        "what": "torch found a cuDNN whose version is incompatible with the one it was compiled "
        "against (another major version, or an older minor), or could not load cuDNN at all.",
        "why": "torch's CUDA wheels bring their own cuDNN (the nvidia-cudnn-cu1x wheel, or files in "
        "torch/lib for older releases). A cuDNN earlier on the loader path — LD_LIBRARY_PATH, a "
        "system /usr/local/cuda, a conda `cudnn` package — is found first; torch then refuses it "
        '("cuDNN version incompatibility: PyTorch was compiled against (8, 5, 0) but found runtime '
        'version (8, 3, 3)", or for old releases "cuDNN version mismatch: PyTorch was compiled '
        'against 7102 but linked against 7301"), or a sub-library fails ("Could not load library '
        'libcudnn_cnn_infer.so.8").',
        "confirm": '`python -c "import torch; print(torch.backends.cudnn.version())"` shows the '
        "error or the runtime version; `echo $LD_LIBRARY_PATH` and `ldconfig -p | grep cudnn` show "
        "other cuDNN copies.",
        "fix": "Remove the other cuDNN from the loader path (or uninstall it), or install exactly "
        "the cuDNN version torch was built against (pip: nvidia-cudnn-cuXX==<version>; conda: "
        "cudnn=<version>).",
    },
    links=(
        "https://github.com/pytorch/pytorch/blob/main/torch/backends/cudnn/__init__.py",
        "https://docs.nvidia.com/deeplearning/cudnn/backend/latest/reference/support-matrix.html",
    ),
)

LIBRARY_SHADOWING = Code(
    code="library-shadowing",
    title="A CUDA library is loaded from outside torch's own packages",
    area="libraries",
    severity="error",
    explanation={
        "what": "A CUDA library that torch ships (cudart, cuBLAS, cuDNN, cuSPARSE, nvJitLink, NCCL, "
        "NVRTC…) was loaded from somewhere else — LD_LIBRARY_PATH, LD_PRELOAD, an /etc/ld.so.conf.d "
        "entry, a conda env's lib, a system CUDA — or the same library is mapped twice from two places.",
        "why": "The dynamic loader searches LD_PRELOAD and LD_LIBRARY_PATH before the paths torch's "
        "libraries carry, so an older system copy wins. When it lacks symbols the wheel needs, "
        'import fails ("undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12"); '
        "when it happens to work, two copies or an older version can still break later (cuBLAS "
        "handles, NCCL, JIT).",
        "confirm": "`python -c \"import torch; torch.zeros(1).cuda()\"` then `grep -E 'cuda|cudnn|nvjit|nccl|cublas' "
        "/proc/$(pgrep -n python)/maps`, or `cudadoctor check -v` which lists every CUDA library the "
        "torch process mapped; `echo $LD_LIBRARY_PATH $LD_PRELOAD`.",
        "fix": "Remove the foreign directory from LD_LIBRARY_PATH / LD_PRELOAD (the finding gives the "
        "exact filtered value) or the ld.so.conf.d entry (then `sudo ldconfig`), so torch loads the "
        "libraries from its own wheels.",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/152783",
        "https://github.com/pytorch/pytorch/issues/134929",
        "https://man7.org/linux/man-pages/man8/ld.so.8.html",
    ),
)

STUB_LIBCUDA = Code(
    code="stub-libcuda",
    title="The CUDA toolkit's stub libcuda is on the loader path",
    area="libraries",
    severity="error",
    explanation={
        "what": "A directory with the toolkit's link-time stub `libcuda.so` (…/lib64/stubs) is on "
        "LD_LIBRARY_PATH or in /etc/ld.so.conf.d, or the stub was actually loaded.",
        "why": "The stub only satisfies the linker when building without a driver; it implements no "
        "CUDA call. If it is found before the driver's real libcuda.so.1, every CUDA call fails with "
        'error 34, "CUDA driver is a stub library" (cudaErrorStubLibrary).',
        "confirm": "`echo $LD_LIBRARY_PATH | tr : '\\n' | grep stubs`; `ldconfig -p | grep libcuda` "
        "should list only the driver's libcuda.so.1.",
        "fix": "Remove the stubs directory from LD_LIBRARY_PATH (or from /etc/ld.so.conf.d, then "
        "`sudo ldconfig`); keep it only in the link step of builds (`-L…/stubs`).",
    },
    links=("https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",),
)

CUDA_TOOLKIT_MISMATCH = Code(
    code="cuda-toolkit-mismatch",
    title="The local CUDA toolkit (nvcc) differs from the CUDA torch was built with",
    area="toolkit",
    severity="warning",
    explanation={
        "what": "The CUDA toolkit on this machine (nvcc on PATH, CUDA_HOME) has another version than "
        "torch.version.cuda. torch itself does not use the local toolkit; extensions compiled "
        "against torch (torch.utils.cpp_extension, setup.py builds of CUDA ops) do.",
        "why": "Building an extension with a toolkit of another CUDA major version than torch's "
        'fails: "The detected CUDA version (12.4) mismatches the version that was used to compile '
        'PyTorch (11.8). Please make sure to use the same CUDA versions." A different minor only '
        "warns, but mixed runtimes can still misbehave. Running torch is unaffected, so this is a "
        "warning unless you are building extensions.",
        "confirm": '`nvcc --version` and `python -c "import torch; print(torch.version.cuda)"`; `echo $CUDA_HOME`.',
        "fix": "Point CUDA_HOME/PATH at a toolkit of torch's CUDA version (install it side by side), "
        "or install the torch variant built for the toolkit you have.",
    },
    links=(
        "https://pytorch.org/docs/stable/cpp_extension.html",
        "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py",
    ),
)


# --- round 6: lib6 ---

CONDA_CUDATOOLKIT_BROKEN_BUILD = Code(
    code="conda-cudatoolkit-broken-build",
    title="The conda environment's cudatoolkit ships CUDA libraries that do not fit each other",
    area="libraries",
    severity="error",
    explanation={
        "what": "A CUDA library in the conda environment's own lib directory (the cudatoolkit package's files, e.g. "
        "envs/X/lib/libcublas.so.11, which torch reaches as torch/lib/../../../../libcublas.so.11) references a "
        "versioned symbol that its sibling library of the same package does not define: 'symbol free_gemm_select "
        "version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference'.",
        "why": "Both libraries come from one cudatoolkit package, so nothing else is shadowing them: that build of the "
        "package pairs a libcublas with a libcublasLt of another build (Anaconda's cudatoolkit 11.0.221 is the known "
        "one). Every program in the environment that loads cuBLAS fails at import.",
        "confirm": "`conda list cudatoolkit` (its version and channel); `ls -l $CONDA_PREFIX/lib/libcublas*` (both "
        "files from that package); `echo $LD_LIBRARY_PATH` holds no other CUDA directory.",
        "fix": "Install another build of cudatoolkit in the environment: `conda install -c conda-forge "
        "cudatoolkit=11.0.3` (or the next CUDA minor the pytorch build accepts, e.g. pytorch with cudatoolkit=11.1), "
        "or a pip torch, which ships its own cuBLAS.",
    },
    links=(
        "https://github.com/ContinuumIO/anaconda-issues/issues/12251",
        "https://man7.org/linux/man-pages/man8/ld.so.8.html",
    ),
)

#: The failing library lies in a conda environment's own lib directory (a conda package's file, not a wheel's).
_CONDA_ENV_LIB = re.compile(
    r"(?:(?:ana|mini)conda\d?|miniforge\d?|mambaforge|/opt/conda)(?:/envs/[^/\s]+)?/lib/lib\w+\.so[.\d]*:"
    r"|/torch/lib/(?:\.\./){4}lib\w+\.so[.\d]*:"
)
#: The loader's versioned-symbol failure: the sibling found lacks a symbol version the caller was linked against.
_SYMBOL_VERSION_NOT_DEFINED = re.compile(
    r"symbol \w+,? version (lib\w+\.so\.\d+) not defined in file (lib\w+\.so[.\d]*) with link time reference"
)


def _conda_package_mismatch(fx: Facts, line: str) -> bool:
    """The symbol failure is between two libraries of the conda environment's own lib directory."""
    m = _SYMBOL_VERSION_NOT_DEFINED.search(line)
    return bool(m and _CONDA_ENV_LIB.search(line) and not ld_library_path(fx) and not ld_preload(fx))


@check(CONDA_CUDATOOLKIT_BROKEN_BUILD)
def conda_cudatoolkit_broken_build(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, LIBRARY_SHADOWING)
    if not said or not _conda_package_mismatch(fx, said[1]):
        return
    tk = dist_version(fx, "cudatoolkit")
    cmds = [
        "conda list cudatoolkit  # the package both libraries come from" + (f" (here {tk})" if tk else ""),
        "ls -l $CONDA_PREFIX/lib/libcublas*  # both files in the environment's own lib directory",
        "conda install -c conda-forge cudatoolkit=11.0.3  # another build of the package (for CUDA 11.0; or the CUDA "
        "minor your pytorch build accepts)",
        f"# or: {PIP} install torch  # a pip torch ships its own CUDA libraries",
    ]
    yield CONDA_CUDATOOLKIT_BROKEN_BUILD.finding(
        title="The conda environment's cudatoolkit pairs CUDA libraries of different builds"
        + (f" (cudatoolkit {tk})" if tk else ""),
        evidence={said[0]: said[1], "conda cudatoolkit": tk},
        fix=Fix(tuple(cmds), "Both libraries come from the environment's cudatoolkit package: another build of it fixes it."),
    )


# ---------------------------------------------------------------- cudnn-mismatch


def _cudnn_pip_package(cuda: Optional[str]) -> Optional[str]:
    t = mm(cuda)
    if not t:
        return None
    return f"nvidia-cudnn-cu{t[0]}"


def _cudnn_compatible(compiled: Tuple[int, int, int], runtime: Tuple[int, int, int]) -> bool:
    """torch.backends.cudnn's rule: same major; from cuDNN 7 a newer minor is fine, before 7 the same."""
    if compiled[0] != runtime[0]:
        return False
    if runtime[0] < 7:
        return runtime[1] == compiled[1]
    return runtime[1] >= compiled[1]


#: cuDNN itself cannot be found (not a library cuDNN needs): its major version from the file name.
_CUDNN_MISSING = re.compile(
    r"libcudnn\w*\.so\.(\d+): cannot open shared object file|Unable to load any of \{?libcudnn\w*\.so\.(\d+)"
    r"|Could not locate cudnn_\w+?64_(\d+)\.dll|(?:Could not load library|Unable to load) libcudnn\w*\.so\.(\d+)\.?\s*(?:Error: libcudnn|$)"
    # Windows: .NET's DllNotFoundException, TensorFlow's dso_loader, the loader's own dialog (kb/errors/b25.json's sources)
    r"|(?:Unable to load DLL|Could not load dynamic library|because)\s*'?cudnn64_(\d+)\.dll'?[^\n]{0,40}?(?:not found|could not be found|is missing)"
)


#: The unversioned development name libcudnn.so that cannot be opened: PaddlePaddle's dynamic_loader.cc dlopens it by
#: that name on Linux ("Failed to find dynamic library: libcudnn.so ( libcudnn.so: cannot open shared object file ...)",
#: https://github.com/PaddlePaddle/Paddle/blob/v1.8.1/paddle/fluid/platform/dynload/dynamic_loader.cc, checked 2026-11-28).
_CUDNN_UNVERSIONED_MISSING = re.compile(r"libcudnn\w*\.so(?![.\w]): cannot open shared object file")


#: A cuDNN version written in text: "cuDNN 9.1", "cudnn=8.9.7", "cudnn9-runtime", libcudnn.so.9, cudnn64_9.dll,
#: nvidia-cudnn-cu12==9.1.0.70 (the wheel's own version, not its -cuNN suffix).
_CUDNN_IN_TEXT = re.compile(
    r"nvidia-cudnn-cu\d+\s*(?:==|=|\s)\s*(\d+)\.\d+"
    r"|\bcudnn(?!-cu)[\s_=:-]{0,3}v?(?:version\s*)?(\d{1,2})(?:\.\d+|-(?:runtime|devel)|\b)"
    r"|libcudnn\w*\.so\.(\d+)|cudnn\w*?64_(\d+)\.dll",
    re.IGNORECASE,
)


#: Programs that dlopen their own cuDNN (not torch's): their missing cuDNN is their missing dependency.
_OWN_CUDNN_LOADER = re.compile(r"ctranslate2|faster[_-]?whisper|whisperx|onnxruntime|paddle|mxnet|cupy|tensorflow", re.IGNORECASE)
#: A traceback in which torch itself loads its compiled core (torch/__init__.py's "from torch._C import *"): the
#: library that then cannot be found is one torch links, whatever torch's version (not stated) is.
#: cuDNN's statuses that name no single cause (kb/errors/srca8.json: out of memory, a wrong cuDNN, a regression).
_CUDNN_NO_SINGLE_CAUSE = re.compile(r"CUDNN_STATUS_(?:NOT_INITIALIZED|EXECUTION_FAILED|INTERNAL_ERROR)\b")
_TORCH_LOADS_C = re.compile(r"torch[/\\]__init__\.py\"?, line \d+|from torch\._C import")


def _cudnn_majors_stated(fx: Facts) -> List[Tuple[int, str]]:
    """Every cuDNN major the facts state, with where: torch's own, the system's, a package, torch's release table."""
    out: List[Tuple[int, str]] = []
    for key in ("torch.cudnn_version", "torch.cudnn_compiled"):
        t = decode_cudnn(fx.get(key))
        if t:
            out.append((t[0], key))
    for e in fx.dicts("toolkit.system_cudnn"):
        v = vtuple(str(e.get("version") or ""))
        if v:
            out.append((v[0], "toolkit.system_cudnn"))
    for name in ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11", "cudnn"):
        d = fx.distribution(name)
        v = vtuple(str(d.get("version") or "")) if d else None
        if v:
            out.append((v[0], f"package {name}"))
    rel, var = torch_release(fx), variant(fx)
    info = release_info(rel) if rel and var else None
    ships = (info or {}).get("cudnn", {}).get(var or "") if info else None
    v = vtuple(ships) if ships else None
    if v:
        out.append((v[0], f"torch {rel}+{var} ships cuDNN {ships}"))
    return out


def _other_cudnn_major(fx: Facts, wanted: int) -> Optional[str]:
    """Where the facts or the text show a cuDNN of another major than ``wanted`` (None: nowhere)."""
    for major, where in _cudnn_majors_stated(fx):
        if major != wanted and 5 <= major <= 20:
            return where
    for m in _CUDNN_IN_TEXT.finditer(fx.user_error() or ""):
        n = next((g for g in m.groups() if g), None)
        if n and int(n) != wanted and 5 <= int(n) <= 20:
            return f"the text: {m.group(0)}"
    return None


#: A cuDNN file by name: Windows' cudnn64_7.dll / cudnn_ops_infer64_8.dll, Linux's libcudnn.so.7 / libcudnn_ops.so.9.
#: The number is cuDNN's major (NVIDIA's cuDNN install guides: the library names per release,
#: https://docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html and the 8.9.7 archive; checked 2026-11-28).
_CUDNN_FILE = re.compile(
    r"(?<![A-Za-z0-9])(?:cudnn(?:_[a-z_]+?)?64_(\d{1,2})\.dll|libcudnn(?:_[a-z_]+)?\.so\.(\d{1,2}))(?![A-Za-z0-9])", re.IGNORECASE
)

#: Words saying a program asks for that file (beside the loader's failure phrases, which errortext's missing-library
#: entity reads): Paddle's dynamic_loader.cc "The third-party dynamic library (cudnn64_7.dll) that Paddle depends on
#: is not configured correctly", a user's "needs / requires / depends on / 依赖 (depends) / 缺少 (lacks)".
_CUDNN_WANT_WORDS = re.compile(
    r"depends? on|not configured correctly|\brequires?\b|\bneeds?\b|\bwants?\b|\blooking for\b|依赖|缺少|缺失|找不到|需要",
    re.IGNORECASE,
)

#: A torch wheel the text installs with its CUDA variant: "pip install torch==2.0.0+cu118".
_TORCH_INSTALLED_IN_TEXT = re.compile(r"\btorch==(\d+\.\d+\.\d+)\+(cu\d{2,3})\b")


#: Lua Torch's cudnn.torch names the cuDNN release its branch binds ("'libcudnn (R5) not found in library path" and
#: ffi.load of libcudnn.so.5: https://github.com/soumith/cudnn.torch/blob/e85ed2299c3f48431117a325cc50ca22d767e70e/ffi.lua)
_CUDNN_TORCH_RELEASE = re.compile(r"libcudnn \(R(\d{1,2})\) not found in library path")


def _cudnn_wanted(text: str) -> Optional[Tuple[int, str, str]]:
    """(major, file, line): the cuDNN a program could not load or says it needs, by its file name (one major on the line)."""
    lua = _CUDNN_TORCH_RELEASE.search(text)
    if lua:
        line = text[text.rfind("\n", 0, lua.start()) + 1 :].split("\n", 1)[0]
        return int(lua.group(1)), f"libcudnn.so.{lua.group(1)}", line.strip()[:300]
    for lib in errortext.missing_libraries(text):
        if lib.kind == "cudnn" and lib.number and lib.number.split(".")[0].isdigit():
            return int(lib.number.split(".")[0].split("_")[0]), lib.name, lib.line_text
    for line in text.split("\n"):
        ms = list(_CUDNN_FILE.finditer(line))
        if not ms or not _CUDNN_WANT_WORDS.search(line):
            continue
        majors = {int(next(g for g in m.groups() if g)) for m in ms}
        if len(majors) == 1:
            return majors.pop(), ms[0].group(0), line.strip()[:300]
        # several majors on one line ("depends on cudnn64_7.dll ... found cudnn64_8.dll"): the one the want-word names
        for w in _CUDNN_WANT_WORDS.finditer(line):
            f = _CUDNN_FILE.search(line, w.end(), w.end() + 40)
            if f:
                return int(next(g for g in f.groups() if g)), f.group(0), line.strip()[:300]
    return None


def _cudnn_installed_torch(text: str) -> Optional[Tuple[int, str]]:
    """(major, where): the cuDNN a torch wheel the text installs ships (kb torch release table)."""
    m = _TORCH_INSTALLED_IN_TEXT.search(text)
    if not m:
        return None
    ships = ((release_info(m.group(1)) or {}).get("cudnn") or {}).get(m.group(2))
    v = vtuple(ships) if ships else None
    return (v[0], f"torch {m.group(1)}+{m.group(2)} (installed in the text) ships cuDNN {ships}") if v else None


def _cudnn_wanted_vs_present(fx: Facts) -> Optional[Finding]:
    """A program names the cuDNN major it was built for (the file it could not load) and the facts or the text show a
    cuDNN of another major: the versions disagree, installing "cuDNN" again does not help (a cuDNN 7 program never loads
    cudnn64_8.dll; cuDNN's majors are not ABI compatible, each its own file name)."""
    text = fx.user_error() or ""
    wanted = _cudnn_wanted(text)
    if not wanted:
        return None
    major, name, line = wanted
    other = _other_cudnn_major(fx, major)
    prose = vtuple(fx.str("pasted.prose.cudnn.value") or "")
    if other is None and prose and prose[0] != major:
        other = f"the text: {fx.str('pasted.prose.cudnn.text')}"
    if other is None:
        t = _cudnn_installed_torch(text)
        if t and t[0] != major:
            other = t[1]
    if other is None:
        return None
    who = "Paddle" if re.search(r"paddle", text, re.IGNORECASE) else "The program"
    cmds = [
        "# the cuDNN the program was built for and the one present: "
        + ("where cudnn64_*.dll" if name.lower().endswith(".dll") else "ldconfig -p | grep libcudnn; pip list | grep -i cudnn"),
        f"# either install cuDNN {major} (the major {name} belongs to) beside the other, or install the program's build "
        "for the cuDNN you have",
    ]
    if who == "Paddle":
        cmds.append(
            "python -m pip install paddlepaddle-gpu==<version> -f https://www.paddlepaddle.org.cn/whl/windows/mkl/avx/stable.html"
            "  # the build (post-suffix) for your CUDA/cuDNN: https://www.paddlepaddle.org.cn/install/quick"
        )
    return CUDNN_MISMATCH.finding(
        title=f"{who} was built for cuDNN {major} ({name}) but another cuDNN major is what is installed",
        evidence={"wanted": line, "cudnn_major_wanted": major, "other_cudnn_major": other},
        fix=Fix(
            tuple(cmds),
            "A cuDNN major is only loaded by programs built for it (its file name carries the major): the program's "
            "cuDNN and the installed one must be the same major.",
        ),
    )


@check(CUDNN_MISMATCH)
def cudnn_mismatch(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, CUDNN_MISMATCH)
    if not said:
        f = _cudnn_wanted_vs_present(fx)
        if f is not None:
            yield f
            return
    if is_cuda_build(fx) is False:
        return
    if said and search(fx, CUDNN8_ZLIB):
        said = None  # cuDNN 8 is there but lacks zlibwapi.dll: not a version mismatch (dll-load-failure, platform.py)
    if said and not torch_version(fx) and search(fx, r"Could not locate cudnn_\w+64_\d+\.dll"):
        said = None  # a package's own cuDNN (not torch's) lacks a sub-library: cuda-library-missing (text_classes.py)
    missing = _CUDNN_MISSING.search(said[1]) if said else None
    if said and not missing and _CUDNN_UNVERSIONED_MISSING.search(said[1]) and not fx.get("torch.cudnn_version"):
        # The unversioned libcudnn.so (Paddle's and old TensorFlow's dlopen name) not found names no major: a library the
        # loader cannot find (cuda-library-missing), a mismatch only when a major is named (_cudnn_wanted_vs_present).
        return
    other: Optional[str] = None
    if said and missing:
        # A cuDNN file that cannot be found is a missing library (cuda-library-missing, kb/errors/lib6.json); it is a
        # cuDNN *mismatch* only when the facts or the text show a cuDNN of another major beside it.
        wanted = int(next(g for g in missing.groups() if g))
        other = _other_cudnn_major(fx, wanted)
        # ...or when torch itself is the one loading it (the code's own scope: torch's cuDNN cannot be loaded).
        err = fx.user_error() or ""
        torch_loads = bool(
            torch_version(fx)
            or torch_cuda(fx)
            or _TORCH_LOADS_C.search(err)
            # Python's own "ImportError: libcudnn.so.9: ..." (an extension module's link failed) in a text about torch
            or (re.search(r"ImportError: libcudnn\w*\.so", err) and search(fx, r"(?<![\w.-])(?:py)?torch(?![\w-])"))
        ) and not _OWN_CUDNN_LOADER.search(err)
        if other is None and not torch_loads:
            sub = _CUDNN_OWN_LOADER_MSG.search(said[1])
            if sub:
                yield _cudnn_split_install(fx, said, sub.group(1), sub.group(2))
            return
    compiled = decode_cudnn(fx.get("torch.cudnn_compiled"))
    runtime = decode_cudnn(fx.get("torch.cudnn_version"))
    if said:
        m = re.search(r"compiled\s+against (\d+) but linked against (\d+)", said[1]) or re.search(
            r"header\D{0,30}?(\d{4,5})\b[^\n]*?library\D{0,30}?(\d{4,5})\b", said[1]
        )
        if m:
            compiled, runtime = decode_cudnn(int(m.group(1))), decode_cudnn(int(m.group(2)))
        m = re.search(
            r"compiled\s+against \((\d+), (\d+), (\d+)\) but (?:found runtime version|linked against) \((\d+), (\d+), (\d+)\)",
            said[1],
        )
        if m:
            g = [int(x) for x in m.groups()]
            compiled, runtime = (g[0], g[1], g[2]), (g[3], g[4], g[5])
    incompatible = bool(compiled and runtime and not _cudnn_compatible(compiled, runtime))
    cudnn_err = fx.str("torch.cudnn_error.message")
    if not (said or incompatible or cudnn_err):
        hyp = companion_cudnn_hypothesis(fx)  # lib9: onnxruntime's provider failed with its CUDA present
        if hyp:
            yield CUDNN_MISMATCH.finding(title=hyp[0], evidence=hyp[1], fix=Fix(tuple(hyp[2]), hyp[3]), severity="warning")
        return
    libs = loaded_libraries(fx) or []
    cudnn_paths = sorted({d["path"] for d in libs if d["name"].startswith("libcudnn")})
    foreign = [p for p in cudnn_paths if not ("/site-packages/" in p or "/dist-packages/" in p)]
    evidence = {
        "torch.version": torch_version(fx),
        "cudnn_compiled": fmt_cudnn(compiled) if compiled else None,
        "cudnn_runtime": fmt_cudnn(runtime) if runtime else None,
        "torch.cudnn_error": cudnn_err,
        "loaded_cudnn": cudnn_paths or None,
    }
    if said:
        evidence[said[0]] = said[1]
    if other:
        evidence["other_cudnn_major"] = other
    ldp = ld_library_path(fx)
    cmds: List[str] = []
    if ldp:
        suspects = [p for p in ldp if "cudnn" in p.lower() or cuda_like_dir(p)]
        if suspects:
            cmds.append(filtered_path_command("LD_LIBRARY_PATH", ldp, lambda p: p in suspects))
    elif ldp is None:
        cmds.append(
            "echo $LD_LIBRARY_PATH | tr : '\\n'   # remove directories holding another libcudnn (e.g. /usr/local/cuda/lib64)"
        )
    if foreign:
        cmds.append(f"# loaded from outside torch's packages: {foreign[0]} — remove that directory from the loader path")
    cuda = torch_cuda(fx)
    rel = release_info(torch_release(fx))
    want = (rel or {}).get("cudnn", {}).get(variant(fx) or "") if rel else None
    pkg = _cudnn_pip_package(cuda)
    conda = conda_torch(fx) or (fx.bool("python.conda") is True)
    pin = fmt_cudnn(compiled) if compiled else None
    pip_spec = want or (pin + ".*" if pin else None)
    if conda and pin:
        cmds.append(f"conda install cudnn={pin}  # the cuDNN torch was compiled against")
    elif pkg and pip_spec and (vtuple_ge(torch_release(fx), (1, 13))):
        cmds.append(
            f"{PIP} install --force-reinstall --no-deps {pkg}=={pip_spec}  # the cuDNN torch {torch_release(fx)} {variant(fx)} ships with"
        )
    elif pin:
        cmds.append(f"conda install cudnn={pin}  # in a conda env; otherwise put cuDNN {pin} first on the loader path")
    if missing and not conda and not any("nvidia-cudnn" in c for c in cmds):
        major = next(g for g in missing.groups() if g)
        name = pkg or "nvidia-cudnn-cu12"
        alt = "" if pkg else " (nvidia-cudnn-cu11 for a CUDA 11 build)"
        cmds.append(
            f'{PIP} install "{name}=={major}.*"  # the wheel that ships cuDNN {major}{alt}: what a skipped dependency '
            "or extra (torch's own nvidia-cudnn dependency, jax[cuda12], tensorflow[and-cuda]) would have installed"
        )
    if not cmds:
        cmds = [
            "ldconfig -p | grep libcudnn  # every cuDNN the loader can find",
            f"{PIP} install --force-reinstall torch  # restores the cuDNN torch's wheel depends on",
        ]
    detail = ""
    if compiled and runtime:
        detail = f": built for {fmt_cudnn(compiled)}, found {fmt_cudnn(runtime)}"
    elif cudnn_err or said:
        detail = f": {(cudnn_err or (said[1] if said else '')).splitlines()[0][:160]}"
    tv = torch_version(fx)
    said_text = f"{said[1]}\n{fx.user_error()}" if said else ""
    xla = _XLA_CUDNN.search(said_text)
    if xla:  # JAX's / XLA's own cuDNN check: the framework is JAX (or TensorFlow), not torch
        parts = [x for x in xla.groups() if x]
        want = f"{parts[0]}.{int(parts[1])}" if len(parts) >= 2 else None
        who = "JAX" if "JAX" in said_text else "JAX/XLA"
        if want:
            cmds.insert(0, f'{PIP} install -U "{pkg or "nvidia-cudnn-cu12"}>={want}"  # or: conda install "cudnn>={want}"')
        yield CUDNN_MISMATCH.finding(
            title=f"The cuDNN found is older than the one {who} was built against{detail}",
            evidence=evidence,
            fix=Fix(tuple(cmds), f"{who} needs a cuDNN at least as new as the one it was built against."),
        )
        return
    if said and re.search(r"\bheaders?\b[^\n]*\blibrary\b", said[1], re.IGNORECASE):
        yield CUDNN_MISMATCH.finding(  # the program's own header-vs-library check (Theano's "Mixed dnn version")
            title=f"The cuDNN library loaded is not the cuDNN whose header the program was compiled with{detail}",
            evidence=evidence,
            fix=Fix(
                tuple(["ldconfig -p | grep libcudnn; find / -name 'cudnn*.h' 2>/dev/null  # the two installs"] + cmds),
                "Keep one cuDNN: the header the build reads and the library the loader finds must be the same version.",
            ),
        )
        return
    if said and not (compiled or runtime or cudnn_err or missing or other) and _CUDNN_NO_SINGLE_CAUSE.search(said[1]):
        # cuDNN's status alone names no single cause (a wrong or partial cuDNN, no GPU memory left at that moment, a
        # program's own bug): a likely cause to check, not a verdict (kb/errors/srca8.json).
        yield CUDNN_MISMATCH.finding(
            title=f"cuDNN could not initialise{detail} — most often a cuDNN that does not match the program's build, "
            "also no GPU memory left at that moment or a bug in the program",
            evidence=evidence,
            fix=Fix(tuple(cmds), "The status alone does not say which: check the cuDNN first, then the GPU's free memory."),
            severity="warning",
        )
        return
    yield CUDNN_MISMATCH.finding(
        title=f"cuDNN does not match torch{(' ' + tv) if tv else ''}{detail}",
        evidence=evidence,
        fix=Fix(tuple(cmds), "torch must load the cuDNN it was compiled against (same major, same or newer minor)."),
    )


#: cuDNN 8's own message when its main library (libcudnn.so.N, loaded) cannot dlopen one of its sub-libraries
#: (libcudnn_ops_infer.so.8, libcudnn_cnn_infer.so.8, ...): "Could not load library libcudnn_cnn_infer.so.8. Error:
#: libcudnn_cnn_infer.so.8: cannot open shared object file". The sub-libraries split of cuDNN 8:
#: https://docs.nvidia.com/deeplearning/cudnn/archives/cudnn-897/api/index.html (the "cudnn" shim dlopens them; checked 2026-11-28); cuDNN 9 renamed them
#: (libcudnn_ops.so.9, libcudnn_cnn.so.9, ...): https://docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html
_CUDNN_OWN_LOADER_MSG = re.compile(
    r"Could not load library (libcudnn_\w+?)\.so\.(\d+)\. Error: libcudnn_\w+?\.so\.\d+: cannot open"
)


def _cudnn_split_install(fx: Facts, said: Tuple[str, str], sub: str, major: str) -> Finding:
    """cuDNN's main library was found and loaded, its own sub-library of the same major was not: the cuDNN the loader
    found is another copy than a complete one (a main library on the path without its sub-libraries: torch's or a
    system copy, a cuDNN 9 environment with a cuDNN 8 program). A warning beside cuda-library-missing: which copy is
    incomplete needs the loader's view."""
    return CUDNN_MISMATCH.finding(
        title=f"cuDNN {major}'s main library loaded but not its own sub-library {sub}.so.{major}: the cuDNN on the loader "
        f"path is incomplete or another copy than the program's (a cuDNN {major} program beside another install)",
        evidence={said[0]: said[1], "cudnn_major_wanted": int(major)},
        severity="warning",
        fix=Fix(
            (
                'ldconfig -p | grep libcudnn; python -c "import torch; print(torch.backends.cudnn.version())"  # every cuDNN copy',
                f'{PIP} install "nvidia-cudnn-cu12=={major}.*"  # a complete cuDNN {major} (nvidia-cudnn-cu11 for CUDA 11)',
                "export LD_LIBRARY_PATH=$(python -c 'import nvidia.cudnn; print(list(nvidia.cudnn.__path__)[0])')/lib:$LD_LIBRARY_PATH",
            ),
            f"The program needs all of cuDNN {major}'s libraries from one install on the loader path; a newer torch ships "
            "cuDNN 9, whose sub-libraries have other names, so a cuDNN 8 program beside it finds none.",
        ),
    )


#: JAX's and XLA's cuDNN version checks, with the version the build needs (major, minor).
_XLA_CUDNN = re.compile(
    r"Minimum supported: (\d)(\d)\d\d|JAX was built against version (\d)(\d)\d\d|source was compiled with: (\d+)\.(\d+)",
)


def vtuple_ge(v: Optional[str], t: Tuple[int, ...]) -> bool:

    x = vtuple(v)
    return bool(x and x >= t)


# ---------------------------------------------------------------- library-shadowing

#: Libraries torch's CUDA wheels ship (not the driver's libcuda/libnvidia-*).
_TORCH_LIBS = re.compile(
    r"^lib(cudart|cublas|cublasLt|cudnn\w*|nccl|nvJitLink|cusparse|cusparseLt|cufft|cufftw|curand|"
    r"cusolver|nvrtc|nvrtc-builtins|cupti|nvToolsExt|cufile|nvshmem\w*)\.so"
)


_WIN_CUDA = re.compile(
    r"^(cudart64_|cublas64_|cublaslt64_|cudnn|cufft64_|curand64_|cusolver64_|cusparse64_|nvrtc64_|nvjitlink|zlibwapi)",
    re.IGNORECASE,
)


def _shadow_dir(d: str) -> bool:
    """A directory that can hold copies of torch's CUDA libraries (not the driver's compat or stub libcuda)."""
    d0 = d.rstrip("/")
    if d0 in ("/usr/local/nvidia/lib", "/usr/local/nvidia/lib64"):  # where container runtimes mount the driver
        return False
    return cuda_like_dir(d) and "/compat" not in d and not d0.endswith("/stubs")


def _own(path: str, fx: Facts) -> bool:
    """Is this library one of torch's own (its wheels, or the conda env it came from)?"""
    if "/site-packages/" in path or "/dist-packages/" in path:
        return True
    prefix = fx.str("python.prefix")
    if conda_torch(fx) and prefix and path.startswith(prefix.rstrip("/") + "/lib/"):
        return True
    return False


def _why_loaded(path: str, fx: Facts) -> Tuple[str, Optional[str]]:
    """Where a foreign library came from: (mechanism, the entry)."""
    base = os.path.basename(path)
    for p in ld_preload(fx):
        if os.path.basename(p) == base or p == path:
            return "LD_PRELOAD", p
    d = os.path.dirname(path)
    for p in ld_library_path(fx) or []:
        if p.rstrip("/") == d or (cuda_like_dir(p) and os.path.basename(d) in p):
            return "LD_LIBRARY_PATH", p
    for p in fx.list("system.ld_so_conf_cuda") or []:
        if isinstance(p, str) and p.rstrip("/") == d:
            return "ld.so.conf", p
    return "the system loader path", None


def _remove_cmds(mech: str, entry: Optional[str], fx: Facts) -> List[str]:
    if mech == "LD_PRELOAD":
        pre = ld_preload(fx)
        rest = [p for p in pre if p != entry]
        return [f"export LD_PRELOAD={':'.join(rest)}" if rest else "unset LD_PRELOAD"]
    if mech == "LD_LIBRARY_PATH":
        ldp = ld_library_path(fx) or []
        return [filtered_path_command("LD_LIBRARY_PATH", ldp, lambda p: p == entry or cuda_like_dir(p))]
    if mech == "ld.so.conf":
        return [f"grep -l '{entry}' /etc/ld.so.conf.d/*  # the file that adds it", "sudo rm <that file> && sudo ldconfig"]
    return ["ldconfig -p | grep -E 'cudart|cublas|cudnn|nvJitLink|cusparse|nccl'  # find the copy the loader prefers"]


#: The driver API (cuda.h's cuXxx) unresolved: libcuda.so.1 from an older driver, a stub, or a stale copy.
_DRIVER_API_UNDEFINED = re.compile(r"undefined symbol:?\s*cu[A-Z][a-z]\w*")

#: cuDNN's own words for its libraries coming from two installs (cudnn.h's cudnnStatus_t; cuDNN 8's version checks).
_CUDNN_SUBLIB = re.compile(r"CUDNN_STATUS_(?:SUBLIBRARY_)?VERSION_MISMATCH")


def _wheel_listed(fx: Facts, root: str, text: str) -> Optional[str]:
    """'nvidia-cusparse-cu12 12.5.9.5' when the environment lists that NVIDIA wheel (pip list, uv/pip's installed list)."""
    for d in fx.dicts("packages.distributions"):
        name = str(d.get("name") or "").lower()
        if re.fullmatch(rf"nvidia-{re.escape(root)}-cu\d+", name):
            return f"{name} {d.get('version') or ''}".strip()
    m = re.search(rf"(?m)^\s*\+?\s*(nvidia-{re.escape(root)}-cu\d+)(?:==|\s+)(\d[\w.]*)", text)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    # jax[cuda12] (and jax[cuda12_pip]) installs jax-cuda12-plugin[with-cuda], whose extra pulls the nvidia-*-cu12
    # wheels (JAX's install guide, "pip installation: NVIDIA GPU (CUDA, installed via pip, easier)"); cuda12_local does not
    j = re.search(r"\bjax\[cuda(1\d)(?:_pip)?\]", text)
    return f"nvidia-{root}-cu{j.group(1)} (from {j.group(0)})" if j else None


def _installed_but_not_loaded(fx: Facts) -> Optional[Finding]:
    """A CUDA library a program says it could not find, while the NVIDIA wheel that ships it is installed in the same
    environment: the file is there, so what failed is loading it: another copy of it or of a library it needs (cuSPARSE
    and cuSOLVER need nvJitLink of their release) was found first on LD_LIBRARY_PATH / LD_PRELOAD (JAX's install guide:
    a set LD_LIBRARY_PATH overrides the pip CUDA libraries). A hypothesis (warning): the loader's own view confirms it."""
    text = fx.user_error() or ""
    for lib in errortext.missing_libraries(text):
        if lib.kind != "cuda":
            continue
        want = errortext.wanted_cuda(lib)
        module = want.get("module")
        if not module:
            continue
        root = str(module).replace("_", "-")
        wheel = _wheel_listed(fx, root, text)
        if not wheel:
            continue
        wmajor = re.search(r"-cu(\d+)\b", wheel)
        if lib.number and (not wmajor or int(wmajor.group(1)) not in (want.get("majors") or [])):
            continue  # the file's number names another CUDA major than the wheel's: a missing major, not a shadow
        return LIBRARY_SHADOWING.finding(
            title=f"Likely: {lib.name} is installed ({wheel}) but could not be loaded: another copy of it, or of a "
            "library it needs (nvJitLink for cuSPARSE/cuSOLVER), is found first on LD_LIBRARY_PATH or LD_PRELOAD",
            evidence={"user_error": lib.line_text, "installed": wheel},
            severity="warning",
            fix=Fix(
                (
                    "echo $LD_LIBRARY_PATH; echo $LD_PRELOAD  # directories or files holding other CUDA libraries",
                    "unset LD_LIBRARY_PATH LD_PRELOAD  # then rerun: the NVIDIA wheels' own libraries load",
                    f"python -m pip install -U --force-reinstall {wheel.split()[0]} nvidia-nvjitlink-{wheel.split()[0].rsplit('-', 1)[1]}"
                    "  # the wheel and the nvJitLink of its release",
                ),
                "The NVIDIA wheels' libraries load from site-packages only when nothing on the loader path is found first.",
            ),
        )
    return None


@check(LIBRARY_SHADOWING)
def library_shadowing(fx: Facts) -> Iterator[Finding]:
    if not error_match(fx, LIBRARY_SHADOWING):
        hyp = _installed_but_not_loaded(fx)
        if hyp is not None:
            yield hyp
            return
    if is_cuda_build(fx) is False:
        return
    said = error_match(fx, LIBRARY_SHADOWING)
    if said and _conda_package_mismatch(fx, said[1]):
        said = None  # two libraries of the environment's own cudatoolkit: conda-cudatoolkit-broken-build
    if said and conflicting_wheels(fx):
        said = None  # two CUDA majors' nvidia-* wheels overwrite each other's files (nvidia-wheel-version-conflict)
    if said and driver_version(fx) and _DRIVER_API_UNDEFINED.search(said[1]):
        said = None  # the driver is known: its libcuda lacking a symbol is a driver too old (driver checks), not a stray copy
    libs = loaded_libraries(fx)
    broken = bool(said) or fx.str("torch.status") == "import-failed"
    evidence: Dict[str, object] = {"torch.version": torch_version(fx)}
    cmds: List[str] = []
    problems: List[str] = []
    wheel_torch = any(
        str(d.get("name", "")).lower().startswith("nvidia-") for d in fx.dicts("packages.distributions")
    ) or conda_torch(fx)
    if libs:
        _loaded_foreign(fx, libs, wheel_torch, problems, evidence, cmds)
    elif libs is None:
        # Not recorded (collect_env, --quick, import failed): the environment can still show the risk.
        _path_risk(fx, wheel_torch or bool(said), problems, evidence, cmds)
    _windows_path_dlls(fx, problems, evidence, cmds)
    if not problems and not said:
        return
    # cuBLAS's INVALID_VALUE on a plain GEMM names the symptom, not the copy: with nothing in the facts showing a
    # foreign library it is the likely cause (kb/errors/b22.json), a warning to confirm, not an observation
    inferred = bool(said and _GEMM_INVALID_VALUE.search(said[1]) and not problems)
    if said:
        _said_shadowing(fx, said, problems, evidence, cmds)
    cmds.append('python -c "import torch; print(torch.__version__, torch.cuda.is_available())"  # confirm')
    prefix = (
        "Likely: a cuBLAS of another CUDA release is loaded in place of torch's own (cuBLAS rejected a plain matrix multiply): "
        if inferred
        else "A CUDA library shadows torch's own: "
        if broken
        else "A foreign CUDA library is loaded into torch's process: "
        if libs
        else "torch's CUDA libraries can be shadowed: "
    )
    yield LIBRARY_SHADOWING.finding(
        title=prefix.rstrip(": ") if inferred else prefix + problems[0],
        evidence=evidence,
        fix=Fix(
            tuple(dict.fromkeys(cmds)),
            "The loader searches LD_PRELOAD and LD_LIBRARY_PATH first; without the foreign entry torch loads the libraries its wheels ship.",
        ),
        severity="error" if broken and not inferred else "warning",
    )


#: cuBLAS's CUBLAS_STATUS_INVALID_VALUE on a plain matrix multiply (kb/errors/b22.json: another CUDA's cuBLAS loaded).
_GEMM_INVALID_VALUE = re.compile(r"CUBLAS_STATUS_INVALID_VALUE")


def _loaded_foreign(
    fx: Facts, libs: List[Dict[str, str]], wheel_torch: bool, problems: List[str], evidence: Dict[str, object], cmds: List[str]
) -> None:
    """Live: a torch library loaded twice, or (wheel torch) loaded from outside torch's own packages."""
    by_name: Dict[str, List[str]] = {}
    for d in libs:
        if _TORCH_LIBS.match(d["name"]):
            rp = d.get("realpath") or d["path"]
            if rp not in by_name.setdefault(d["name"], []):
                by_name[d["name"]].append(rp)
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1:
            own = [p for p in paths if _own(p, fx)]
            other = [p for p in paths if not _own(p, fx)] or paths[1:]
            mech, entry = _why_loaded(other[0], fx)
            problems.append(f"{name} is loaded twice: {(own or paths)[0]} and {other[0]} (via {mech})")
            evidence[f"{name} copies"] = paths
        elif wheel_torch and not _own(paths[0], fx):
            mech, entry = _why_loaded(paths[0], fx)
            problems.append(f"{name} is loaded from {paths[0]} (via {mech}), not from torch's own packages")
            evidence[f"{name} path"] = paths[0]
        else:
            continue
        evidence[f"{name} loaded via"] = f"{mech}={entry}" if entry else mech
        cmds += [c for c in _remove_cmds(mech, entry, fx) if c not in cmds]


def _path_risk(fx: Facts, risky_dirs: bool, problems: List[str], evidence: Dict[str, object], cmds: List[str]) -> None:
    """Not recorded what loaded: LD_PRELOAD / LD_LIBRARY_PATH entries that would shadow torch's copies."""
    ldp = ld_library_path(fx) or []
    risky = [p for p in ldp if _shadow_dir(p)] if risky_dirs else []
    pre = [p for p in ld_preload(fx) if _TORCH_LIBS.match(os.path.basename(p))]
    if pre:
        problems.append(f"LD_PRELOAD forces {', '.join(pre)} ahead of torch's own copies")
        evidence["LD_PRELOAD"] = fx.env("LD_PRELOAD")
        cmds += _remove_cmds("LD_PRELOAD", pre[0], fx)
    if risky:
        problems.append(f"LD_LIBRARY_PATH puts {risky[0]} ahead of torch's own CUDA libraries")
        evidence["LD_LIBRARY_PATH"] = fx.env("LD_LIBRARY_PATH") or ":".join(ldp)
        cmds.append(filtered_path_command("LD_LIBRARY_PATH", ldp, cuda_like_dir))


def _windows_path_dlls(fx: Facts, problems: List[str], evidence: Dict[str, object], cmds: List[str]) -> None:
    """Windows: DLLs torch's own set lacks, resolved from PATH (a system CUDA/cuDNN, an old torch)."""
    from_path: List[Dict[str, object]] = []
    for fp in (fx.dict("windows.torch_lib") or {}).get("from_path") or []:
        if isinstance(fp, dict) and _WIN_CUDA.match(str(fp.get("dll", ""))):
            problems.append(
                f"{fp.get('dll')} (needed by {fp.get('needed_by')}) is loaded from {fp.get('found_in')} on PATH, "
                "not from torch's packages"
            )
            from_path.append(fp)
            cmds.append(
                f"# remove {fp.get('found_in')} from PATH (System settings > Environment Variables), then open a new terminal"
            )
    if from_path:
        evidence["windows.torch_lib.from_path"] = from_path


def _said_shadowing(fx: Facts, said: Tuple[str, str], problems: List[str], evidence: Dict[str, object], cmds: List[str]) -> None:
    """The user's error shows a shadowed library (an undefined symbol in an older copy)."""
    evidence[said[0]] = said[1]
    m = re.search(r"undefined symbol: (\w+), version (lib\w+\.so\.\d+)", said[1])
    lib = m.group(2) if m else None
    if problems:
        return
    if _CUDNN_SUBLIB.search(said[1]):
        problems.append(
            "cuDNN's sub-libraries come from two different cuDNN installs (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH): "
            "one missing from torch's cuDNN was found in another copy on the loader path"
        )
        cmds += [
            'LD_DEBUG=libs python -c "import torch; torch.backends.cudnn.version(); '
            "torch.nn.functional.conv2d(torch.zeros(1,1,8,8).cuda(), torch.zeros(1,1,3,3).cuda())\" 2>&1 | grep -i 'libcudnn.*calling init'"
            "  # which file each cuDNN sub-library came from",
            "ldconfig -p | grep libcudnn  # a system cuDNN (apt libcudnn9-cuda-*, /usr/local/cuda) the loader also finds",
            f"{PIP} install --force-reinstall --no-deps nvidia-cudnn-cu12  # or -cu13: a complete cuDNN in torch's own packages",
        ]
        return
    sym = re.search(r"undefined symbol:?\s*(\w+)", said[1])
    if not m and sym:
        fam = "the driver's libcuda" if _DRIVER_API_UNDEFINED.search(said[1]) else "the library that defines it"
        problems.append(
            f"{sym.group(1)} is undefined: the copy of {fam} that the loader found is older than the one the caller was "
            "built against (another install earlier on the loader path)"
        )
        cmds += [
            "ldd $(python -c \"import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cuda.so'))\") | grep -E 'cuda|cudnn|cublas|cusparse|nccl'"
            "  # which copy each library resolves to",
            "cat /etc/ld.so.conf.d/*.conf; echo $LD_LIBRARY_PATH  # an old CUDA directory (or a leftover conda 'cuda'/'cudnn' package) listed first",
        ]
    problems.append(
        f"torch's libraries resolved {lib or 'a CUDA library'} to an older copy outside its own packages"
        + (f" (missing {m.group(1)})" if m else "")
    )
    ldp = ld_library_path(fx)
    if ldp:
        cmds.append(filtered_path_command("LD_LIBRARY_PATH", ldp, cuda_like_dir))
    else:
        cmds += [
            "echo $LD_LIBRARY_PATH $LD_PRELOAD  # look for /usr/local/cuda*/lib64 or another CUDA directory",
            "unset LD_LIBRARY_PATH  # or remove just the CUDA directories from it (also in ~/.bashrc)",
        ]
    if lib:
        cmds.append(
            f"ldconfig -p | grep {lib.split('.so')[0]}  # a system copy registered in /etc/ld.so.conf.d also shadows torch's"
        )


# ---------------------------------------------------------------- stub-libcuda


@check(STUB_LIBCUDA)
def stub_libcuda(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, STUB_LIBCUDA)
    libs = loaded_libraries(fx) or []
    loaded = [d["path"] for d in libs if d["name"].startswith("libcuda.so") and "/stubs" in d["path"]]
    ldp = ld_library_path(fx) or []
    on_path = [p for p in ldp if p.rstrip("/").endswith("/stubs") or "/stubs/" in p]
    conf = [p for p in (fx.list("system.ld_so_conf_cuda") or []) if isinstance(p, str) and "stubs" in p]
    if not (said or loaded or on_path or conf):
        return
    evidence: Dict[str, object] = {
        "stub_loaded": loaded or None,
        "LD_LIBRARY_PATH_stub_entries": on_path or None,
        "ld_so_conf_stub_entries": conf or None,
    }
    if said:
        evidence[said[0]] = said[1]
    cmds: List[str] = []
    if on_path:
        cmds.append(filtered_path_command("LD_LIBRARY_PATH", ldp, lambda p: p in on_path))
    if conf:
        cmds += [f"grep -l '{conf[0]}' /etc/ld.so.conf.d/*  # the file that adds it", "sudo rm <that file> && sudo ldconfig"]
    if not cmds:
        cmds += [
            "echo $LD_LIBRARY_PATH | tr : '\\n' | grep stubs  # remove that entry (also from ~/.bashrc / the Dockerfile ENV)",
            "ldconfig -p | grep 'libcuda.so'  # only the driver's libcuda.so.1 should be listed",
        ]
    severity = "error" if (said or loaded or fx.bool("torch.cuda_available") is False) else "warning"
    yield STUB_LIBCUDA.finding(
        title="The toolkit's stub libcuda "
        + ("is loaded instead of the driver's" if (said or loaded) else "is on the loader path"),
        evidence=evidence,
        fix=Fix(tuple(cmds), "The stub is for linking only; at run time the driver's libcuda.so.1 must be found."),
        severity=severity,
    )


# ---------------------------------------------------------------- cuda-toolkit-mismatch

#: The words of a build tool refusing the local toolkit (apex "Cuda extensions are being compiled with a version of Cuda
#: that does not match", DeepSpeed "unable to compile cuda/cpp extensions", flash-attn "is only supported on CUDA 11.6 and
#: above" about nvcc, cpp_extension "The detected CUDA version ... mismatches").
_BUILD_REFUSAL = re.compile(
    r"extension|being compiled|unable to compile|\bnvcc\b|CUDA_HOME|bare.?metal|is only supported on CUDA \d|mismatches the version",
    re.I,
)
_BUILDING = re.compile(
    r"cpp_extension|CUDAExtension|BuildExtension|building '[^']+' extension|Building wheel for|"
    r"setup\.py|error: command '.*nvcc' failed|Error compiling objects for extension|ninja: build stopped|"
    r"nvcc fatal|load_inline|torch\.utils\.cpp_extension|"
    # linking against torch with the local toolkit's CUDA runtime (libtorch + CMake): the linker's own words
    r"undefined reference to .?cuda\w*@(?:@)?libcudart|CMAKE_CUDA_COMPILER",
    re.IGNORECASE,
)


_STUB_SYMBOL = re.compile(
    r"(cudaSetupArgument|cudaConfigureCall|cudaLaunch|__cudaPushCallConfiguration|__cudaPopCallConfiguration|__cudaRegisterFatBinaryEnd)\b"
)


def _stub_symbol_finding(fx: Facts, said: Tuple[str, str], symbol: str, cuda: Optional[str]) -> Finding:
    """An object's nvcc-generated host stub references a runtime symbol of another CUDA generation (task ext6)."""
    old = not symbol.startswith("__")
    built = "CUDA 10.0 or older" if old else "CUDA 10.1 or newer" if "Call" in symbol else "CUDA 10.0 or newer"
    runs = fx.str("cuda.runtime_version") or fx.str("toolkit.nvcc_version") or cuda
    title = (
        f"A compiled extension references {symbol}, which only a {built} toolkit's generated code uses: it was built with "
        "another CUDA toolkit than the runtime it loads" + (f" (CUDA {runs} here)" if runs else "")
    )
    cmds = (
        'python -c "import torch; print(torch.version.cuda)"; nvcc --version  # the toolkit must be torch\'s CUDA',
        "export CUDA_HOME=/usr/local/cuda-<torch's CUDA> PATH=/usr/local/cuda-<torch's CUDA>/bin:$PATH",
        "rm -rf build/ *.egg-info && pip install --no-build-isolation --force-reinstall .  # rebuild the extension with it",
    )
    return CUDA_TOOLKIT_MISMATCH.finding(
        title=title,
        evidence={said[0]: said[1], "symbol": symbol, "compiled_by": built, "torch.cuda": cuda, "runtime": runs},
        fix=Fix(
            cmds,
            "nvcc's host stubs call cudaSetupArgument/cudaConfigureCall/cudaLaunch up to CUDA 10.0 and "
            "__cudaPushCallConfiguration from 10.1: object and runtime must come from the same toolkit.",
        ),
    )


def _stated_mismatch_finding(fx: Facts, said: Tuple[str, str], nvcc: Optional[str], cuda: Optional[str]) -> Finding:
    """A build tool's own toolkit check refused (apex, flash-attn, DeepSpeed) and one of the two versions is unknown
    here: the tool saw both, so its refusal is the evidence (task srcc7)."""
    b = mm(cuda)
    want = f"{b[0]}.{b[1]}" if b else "<torch.version.cuda>"
    have = f" ({nvcc})" if nvcc else ""
    std = re.search(r"Value '(?:c|gnu)\+\+(\w+)' is not defined for option 'std'", said[1])
    title = (
        f"The nvcc that builds this{have} is too old for C++{std.group(1)}: it is not a toolkit of the CUDA torch was "
        "built with" + (f" ({want})" if b else "")
        if std
        else f"The build's own CUDA check refused the local toolkit{have}: it is not the CUDA torch was built with"
        + (f" ({want})" if b else "")
    )
    return CUDA_TOOLKIT_MISMATCH.finding(
        title=title,
        evidence={said[0]: said[1], "toolkit.nvcc_version": nvcc, "torch.cuda": cuda},
        severity="error",  # the build stopped there
        fix=Fix(
            (
                'python -c "import torch; print(torch.version.cuda)"; which nvcc; nvcc --version  # the build uses this nvcc',
                f"export CUDA_HOME=/usr/local/cuda-{want} PATH=/usr/local/cuda-{want}/bin:$PATH  # a toolkit of torch's CUDA",
                "pip install --no-build-isolation --no-cache-dir <the package>  # build again with it",
            ),
            "Extension builds (torch.utils.cpp_extension and the packages' own checks) need the toolkit's CUDA to be "
            "the CUDA torch was built with; a distribution's /usr/bin/nvcc or an old /usr/local/cuda is found first.",
        ),
    )


@check(CUDA_TOOLKIT_MISMATCH)
def cuda_toolkit_mismatch(fx: Facts) -> Iterator[Finding]:
    if is_cuda_build(fx) is False:
        return
    said = error_match(fx, CUDA_TOOLKIT_MISMATCH)
    nvcc = fx.str("toolkit.nvcc_version")
    cuda = torch_cuda(fx)
    pair = build_tool_cuda_pair(said[1], fx.user_error()) if said else None
    if pair:  # the build tool's own check (cpp_extension in any language, DeepSpeed, apex: builds.py) states what it saw
        nvcc = pair[0] or nvcc
        cuda = pair[1]
    a, b = mm(nvcc), mm(cuda)
    stub = _STUB_SYMBOL.search(said[1]) if said else None
    if stub and said and not (a and b and a != b):  # nvcc's host-stub symbols changed in CUDA 10.0/10.1 (kb/errors/ext6.json)
        yield _stub_symbol_finding(fx, said, stub.group(1), cuda)
        return
    # A build's own refusal (cpp_extension, DeepSpeed, apex, flash-attn: kb/errors) — not a runtime's note that it was
    # compiled with another CUDA than the machine's (Paddle's gpu_resources.cc warning, which the driver's minor-version
    # compatibility usually covers).
    refused = bool(_BUILDING.search(fx.user_error())) or bool(said and _BUILD_REFUSAL.search(said[1]))
    if not (a and b) or a == b:
        # the build tool compared them itself (kb/errors/srcc7.json): its refusal is the fact
        if said and not (a and b) and refused:
            yield _stated_mismatch_finding(fx, said, nvcc, cuda)
        return
    building = refused or bool(pair)  # _BUILD_REFUSAL holds cpp_extension's "mismatches the version"
    major = a[0] != b[0]
    # Running torch never uses the toolkit: a minor difference with nothing being built is only worth knowing.
    severity = "error" if (major and building) else "warning" if (major or building) else "info"
    evidence = {
        "toolkit.nvcc_version": fx.str("toolkit.nvcc_version") or nvcc,
        "toolkit.nvcc": fx.str("toolkit.nvcc"),
        "toolkit.cuda_home": fx.str("toolkit.cuda_home") or fx.env("CUDA_HOME"),
        "torch.cuda": cuda,
        "torch.version": torch_version(fx),
    }
    if said:
        evidence[said[0]] = said[1]
    want, have = f"{b[0]}.{b[1]}", f"{a[0]}.{a[1]}"  # mm_str(cuda), mm_str(nvcc)
    cmds = [
        f"# build extensions with a CUDA {want} toolkit: install it side by side, then point the build at it",
        f"sudo apt-get install cuda-toolkit-{want.replace('.', '-')}  # from NVIDIA's CUDA repository; or: conda install -c nvidia/label/cuda-{want}.0 cuda-toolkit",
        f"export CUDA_HOME=/usr/local/cuda-{want} PATH=/usr/local/cuda-{want}/bin:$PATH",
    ]
    # ...or the torch variant built for the toolkit the user has, if it exists and the driver runs it.
    rel = torch_release(fx)
    info = release_info(rel)
    tv = f"cu{a[0]}{a[1]}"
    if rel and info and tv in info.get("variants", []):
        driver = driver_version(fx)
        runs = (not driver) or tv in runnable_variants(rel, driver, driver_os(fx))
        if runs:
            cmds.append(f"# or install the torch {rel} build for CUDA {have}:")
            cmds += install_commands(environment(fx), rel, tv, reinstall=True)
    title = f"Local CUDA toolkit {have} differs from torch's CUDA {want}" + (
        ": building CUDA extensions against torch fails" if major else " (minor versions: extension builds warn)"
    )
    yield CUDA_TOOLKIT_MISMATCH.finding(
        title=title,
        evidence=evidence,
        severity=severity,
        fix=Fix(
            tuple(cmds),
            "torch.utils.cpp_extension requires the toolkit's CUDA major version to equal torch's; running torch does not use the toolkit.",
        ),
    )


def register():
    return [cudnn_mismatch, library_shadowing, stub_libcuda, cuda_toolkit_mismatch, conda_cudatoolkit_broken_build]
