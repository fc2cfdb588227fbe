"""torch's own headers refusing an old host compiler (session 16): building an extension against torch includes
c10/util/C++17.h and TypeIndex.h, which stop a gcc (or clang) older than that torch needs with an #error of their own.

- host-gcc-too-old-for-torch-headers: the #error is quoted (kb/errors/build16.json). The fix is a newer gcc for the
  build, one that the CUDA toolkit's nvcc also accepts as its host compiler (kb/host_compilers.json).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, Optional

from cudadoctor import kb
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

HOST_GCC_TOO_OLD_FOR_TORCH_HEADERS = Code(
    code="host-gcc-too-old-for-torch-headers",
    title="The compiler building an extension is older than torch's headers require",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Building a CUDA/C++ extension against torch (pip install of a package with ops, setup.py, "
        "torch.utils.cpp_extension.load) stops in torch's own headers: \"#error You're trying to build PyTorch with "
        'a too old version of GCC. We need GCC 9 or later." (c10/util/C++17.h; GCC 5 in torch 1.x) or "You\'re '
        'running a too old version of GCC. We need GCC 5 or later." (c10/util/TypeIndex.h).',
        "why": "torch's headers use the C++ standard of their release (C++17 since torch 2.1, which needs GCC 9); "
        "the extension is compiled with the system's default gcc (or the one CC/CXX or nvcc's -ccbin name), which "
        "is older: common on RHEL/CentOS 7 (gcc 4.8), RHEL 8 (gcc 8) and cluster login nodes.",
        "confirm": "`gcc --version` (and `which gcc`, `echo $CC $CXX`) in the shell that builds; torch's "
        'version: `python -c "import torch; print(torch.__version__)"`.',
        "fix": "Build with a newer gcc that the CUDA toolkit's nvcc also accepts (a cluster's `module load gcc/N`, "
        "devtoolset/gcc-toolset on RHEL, `conda install -c conda-forge gxx_linux-64=N`, `apt install g++-N`), with "
        "CC, CXX and CUDAHOSTCXX pointing at it; then rebuild.",
    },
    links=(
        "https://github.com/pytorch/pytorch/blob/v2.1.0/c10/util/C%2B%2B17.h",
        "https://github.com/facebookresearch/detectron2/issues/723",
        "https://github.com/jwyang/faster-rcnn.pytorch/issues/819",
    ),
)

_NEED = re.compile(r"We need (GCC|Clang) (\d+) or later", re.I)


@check(HOST_GCC_TOO_OLD_FOR_TORCH_HEADERS)
def host_gcc_too_old_for_torch_headers(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, HOST_GCC_TOO_OLD_FOR_TORCH_HEADERS)
    if not said:
        return
    m = _NEED.search(said[1])
    compiler, need = (m.group(1), int(m.group(2))) if m else ("GCC", None)
    cuda = fx.str("toolkit.nvcc_version")
    limits = kb.host_compiler_limits(cuda) if cuda else None
    top: Optional[int] = int(limits["gcc_max"]) if limits and limits.get("gcc_max") else None
    if compiler.lower() == "clang":
        pick = f"clang {need or '<N>'} or newer"
        env = "export CC=clang-<N> CXX=clang++-<N>"
    else:
        n = top if top is not None and (need is None or need <= top) else None  # the newest gcc nvcc accepts
        pick = f"gcc {need} or newer" if need else "a newer gcc"
        if top is not None:
            pick += f" (at most gcc {top}: CUDA {cuda}'s nvcc accepts no newer host compiler)"
        env = f"export CC=gcc-{n or '<N>'} CXX=g++-{n or '<N>'} CUDAHOSTCXX=g++-{n or '<N>'}"
    cmds = (
        "gcc --version; which gcc; echo $CC $CXX  # the compiler the build runs",
        f"# install or load {pick}: module load gcc/<N> | scl enable gcc-toolset-<N> bash | "
        "conda install -c conda-forge gxx_linux-64=<N> | sudo apt install g++-<N>",
        env + "  # then rebuild the extension (pip install --no-build-isolation ..., or python setup.py ...)",
    )
    evidence: Dict[str, object] = {said[0]: said[1], "needs": f"{compiler} {need}" if need else None}
    if top is not None:
        evidence["nvcc accepts"] = f"gcc {top} at most (CUDA {cuda})"
    yield HOST_GCC_TOO_OLD_FOR_TORCH_HEADERS.finding(
        title=f"torch's headers refuse the compiler building the extension: it is older than {compiler} {need or 'the version torch needs'}",
        evidence=evidence,
        fix=Fix(cmds, "torch's headers need the C++ standard of their release; an older compiler cannot build against them."),
    )


def register():
    return [host_gcc_too_old_for_torch_headers]
