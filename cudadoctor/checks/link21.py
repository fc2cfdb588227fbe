"""A build that links without cuDNN (session 21, from blind batch b72 and the threads behind it):

- build-cudnn-not-linked: the link step of a source build (Caffe2, NVIDIA Caffe, dlib, a LibTorch or CUDA project)
  leaves cuDNN's functions unresolved: "libCaffe2_GPU.so: undefined reference to `cudnnSetLRNDescriptor'". The
  compiler found cuDNN's header, but the link line has no libcudnn — CMake was given the lib directory instead of the
  library file as CUDNN_LIBRARY and dropped it (caffe2#549), or did not find cuDNN where it was installed
  (NVIDIA/caffe#25, dlib#786) — or the libcudnn it links is of another major than the header (a cudnn*_v3 symbol names
  the cuDNN 3 API). The fix is the build's cuDNN paths, not the installed driver, CUDA or torch.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

BUILD_CUDNN_NOT_LINKED = Code(
    code="build-cudnn-not-linked",
    title="A source build's link step found no cuDNN: its cuDNN library path is not on the link line",
    area="toolkit",
    severity="error",
    explanation={
        "what": 'Building a project from source fails when linking, with "undefined reference to `cudnnCreate\'" (or '
        "any cudnn* function) from the project's GPU library or object files.",
        "why": "The compiler found cuDNN's header, but the linker was not given libcudnn: CMake's CUDNN_LIBRARY set to "
        "the lib directory instead of libcudnn.so (CMake drops it), cuDNN installed somewhere the build does not "
        "search, or a libcudnn of another major than the header (cudnn*_vN symbols belong to one cuDNN API).",
        "confirm": "The link command (make VERBOSE=1, ninja -v) has no -lcudnn or libcudnn.so; CMake's 'Found cuDNN' "
        "line names a directory as the library; `ls $CUDNN_ROOT/lib64/libcudnn*` and `grep CUDNN_MAJOR -A2 "
        "$CUDNN_ROOT/include/cudnn*.h` (header and library of one version).",
        "fix": "Point the build at the library file and the header of one cuDNN: cmake -DCUDNN_LIBRARY=<dir>/lib64/"
        "libcudnn.so -DCUDNN_INCLUDE_DIR=<dir>/include (the project's own variable names: CUDNN_INCLUDE, CUDNN_ROOT, "
        "CUDA_TOOLKIT_ROOT_DIR for projects that find cuDNN beside CUDA); use the cuDNN version the project supports; "
        "rebuild from a clean build directory.",
    },
    links=(
        "https://github.com/facebookarchive/caffe2/issues/549",
        "https://github.com/NVIDIA/caffe/issues/25",
        "https://github.com/davisking/dlib/issues/786",
    ),
)

_SYMBOL = re.compile(r"undefined reference to [`'\"]?(cudnn\w+)")


@check(BUILD_CUDNN_NOT_LINKED)
def build_cudnn_not_linked(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, BUILD_CUDNN_NOT_LINKED)
    if not said:
        return
    m = _SYMBOL.search(said[1])
    symbol = m.group(1) if m else None
    evidence: Dict[str, object] = {said[0]: said[1], "symbol": symbol}
    versioned = re.search(r"_v(\d+)$", symbol or "")
    if versioned:
        evidence["cudnn_api"] = f"cuDNN {versioned.group(1)}'s API"
    yield BUILD_CUDNN_NOT_LINKED.finding(
        title=f"The build's link step found no cuDNN{(' (' + symbol + ' unresolved)') if symbol else ''}: give it the "
        "cuDNN library file" + (f" of the cuDNN {versioned.group(1)} the code calls" if versioned else ""),
        evidence=evidence,
        fix=Fix(
            (
                "cmake -DCUDNN_LIBRARY=<cudnn>/lib64/libcudnn.so -DCUDNN_INCLUDE_DIR=<cudnn>/include ..  # the file, not "
                "its directory; the project's own names for these variables where it has its own",
                "grep -A2 'define CUDNN_MAJOR' <cudnn>/include/cudnn*.h  # header and library of one cuDNN version",
                "rm -rf build && mkdir build  # reconfigure from a clean build directory",
            ),
            "The header was found but libcudnn is not on the link line (or is of another version than the header).",
        ),
    )


def register():
    return [build_cudnn_not_linked]
