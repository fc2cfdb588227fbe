"""LibTorch's C++ side (session 19, from blind batch b72 and the threads of its classes):

- libtorch-cmake-nvtoolsext-missing: find_package(Torch) for a torch/LibTorch before 2.5 (Caffe2's public/cuda.cmake)
  requires NVIDIA's nvToolsExt library, which CUDA 12 toolkits no longer install everywhere (NVTX 3 is header-only; the
  Windows installer dropped the NvToolsExt folder, conda's nvcc has none): "CMake Error ... Failed to find nvToolsExt",
  or a link line "-lLIBNVTOOLSEXT-NOTFOUND". torch 2.5 moved to the nvtx3 headers (pytorch#133293).
- torch-lib-dir-not-on-loader-path: a program linked against LibTorch (C++, Rust's tch-rs, Haskell, ROS nodes) stops at
  start with the loader's "error while loading shared libraries: libtorch_cuda.so: cannot open shared object file": the
  LibTorch lib/ directory is not on the loader path (LD_LIBRARY_PATH, an rpath, ldconfig). Python's torch finds its own
  libraries; an executable needs to be told (tch-rs's README: set LD_LIBRARY_PATH).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

LIBTORCH_CMAKE_NVTOOLSEXT_MISSING = Code(
    code="libtorch-cmake-nvtoolsext-missing",
    title="find_package(Torch) needs nvToolsExt, which this CUDA toolkit does not have",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Configuring a C++/CUDA project against LibTorch (or torch's CMake files: torchvision's C++ build, an "
        "extension built with CMake) fails with 'CMake Error at .../Caffe2/public/cuda.cmake: Failed to find "
        "nvToolsExt', or linking fails with 'cannot find -lLIBNVTOOLSEXT-NOTFOUND' / a missing CUDA::nvToolsExt target.",
        "why": "torch's CMake configuration before 2.5 links NVIDIA's NVTX v2 library (libnvToolsExt / nvToolsExt64_1.dll). "
        "CUDA 12 made NVTX 3 header-only: its Windows installer no longer ships the NvToolsExt folder and minimal or "
        "conda toolkits have no library, so the search fails. torch 2.5 switched to the nvtx3 headers.",
        "confirm": 'ls $CUDA_HOME/lib64/libnvToolsExt* (Linux) or dir "%NVTOOLSEXT_PATH%" (Windows): nothing; the LibTorch '
        "release is older than 2.5 (cat libtorch/build-version).",
        "fix": "Use LibTorch / torch 2.5 or newer (nvtx3, header-only), or install the NVTX library the old CMake wants: "
        "the cuda-nvtx package of your CUDA version (Linux), or CUDA 11.8's 'Nsight NVTX' component (Windows, sets "
        "NVTOOLSEXT_PATH).",
    },
    links=(
        "https://github.com/pytorch/pytorch/issues/133293",
        "https://github.com/pytorch/pytorch/issues/116242",
        "https://github.com/pytorch/vision/issues/6734",
    ),
)

TORCH_LIB_DIR_NOT_ON_LOADER_PATH = Code(
    code="torch-lib-dir-not-on-loader-path",
    title="A program linked against LibTorch cannot find LibTorch's libraries when it starts",
    area="packages",
    severity="error",
    explanation={
        "what": "A compiled program (C++, Rust tch-rs, Haskell hasktorch, a ROS node) builds, then stops at start with "
        "'error while loading shared libraries: libtorch_cuda.so (libtorch_cpu.so, libc10.so, libtorch.so): cannot "
        "open shared object file: No such file or directory'.",
        "why": "The executable was linked against LibTorch's shared libraries, but the dynamic loader only looks in the "
        "system directories, LD_LIBRARY_PATH and the binary's rpath: LibTorch's lib/ directory is on none of them "
        "(or LD_LIBRARY_PATH names libtorch/ instead of libtorch/lib/).",
        "confirm": "ldd ./your-program | grep 'not found'  # the LibTorch libraries are the ones not found",
        "fix": "export LD_LIBRARY_PATH=/path/to/libtorch/lib:$LD_LIBRARY_PATH (the lib/ directory itself; with tch-rs and "
        "LIBTORCH_USE_PYTORCH=1, python -c 'import torch, os; print(os.path.dirname(torch.__file__))'/lib), or link with "
        "an rpath (CMake: set_target_properties(... INSTALL_RPATH ...); cargo: the build.rs of tch-rs), or register the "
        "directory with ldconfig.",
    },
    links=(
        "https://github.com/LaurentMazare/tch-rs/issues/740",
        "https://github.com/LaurentMazare/tch-rs/issues/806",
        "https://github.com/hasktorch/hasktorch/issues/293",
    ),
)

#: The library the loader could not find, in its own message.
_LIB = re.compile(r"\b(lib(?:torch\w*|c10\w*))\.so\b")


@check(LIBTORCH_CMAKE_NVTOOLSEXT_MISSING)
def libtorch_cmake_nvtoolsext_missing(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, LIBTORCH_CMAKE_NVTOOLSEXT_MISSING)
    if not said:
        return
    windows = "windows" in (fx.str("system.os") or "").lower()
    yield LIBTORCH_CMAKE_NVTOOLSEXT_MISSING.finding(
        title="torch's CMake files (before 2.5) need the nvToolsExt library, which this CUDA toolkit does not have",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "# use LibTorch / torch 2.5 or newer: its CMake uses the header-only nvtx3",
                "# or install the NVTX library: CUDA 11.8's 'Nsight NVTX' component (sets NVTOOLSEXT_PATH)"
                if windows
                else "sudo apt-get install cuda-nvtx-<major>-<minor>  # the NVTX package of your toolkit's version; "
                "conda: conda install -c nvidia cuda-nvtx",
            ),
            "CUDA 12 made NVTX header-only; torch's CMake before 2.5 still links the old library.",
        ),
    )


@check(TORCH_LIB_DIR_NOT_ON_LOADER_PATH)
def torch_lib_dir_not_on_loader_path(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCH_LIB_DIR_NOT_ON_LOADER_PATH)
    if not said:
        return
    m = _LIB.search(said[1])
    lib = m.group(1) + ".so" if m else "LibTorch's libraries"
    yield TORCH_LIB_DIR_NOT_ON_LOADER_PATH.finding(
        title=f"The program was linked against LibTorch, but the loader cannot find {lib}: LibTorch's lib/ is not on "
        "the loader path",
        evidence={said[0]: said[1]},
        fix=Fix(
            (
                "ldd ./<program> | grep 'not found'",
                "export LD_LIBRARY_PATH=/path/to/libtorch/lib:$LD_LIBRARY_PATH  # the lib/ directory itself",
                "# tch-rs with LIBTORCH_USE_PYTORCH=1: the lib/ of python -c 'import torch, os; print(os.path.dirname(torch.__file__))'",
            ),
            "Python's torch finds its own libraries; a compiled program finds them only through LD_LIBRARY_PATH, an rpath "
            "or ldconfig.",
        ),
    )


def register():
    return [libtorch_cmake_nvtoolsext_missing, torch_lib_dir_not_on_loader_path]
