"""Two refusals of torch's own tooling with one cause each (session 18, found by probing common error lines):

- torch-compile-unsupported-on-windows: "Windows not yet supported for torch.compile": torch 2.0's TorchDynamo refuses
  to run on Windows (pytorch#94940 made it raise; pytorch#90768 tracks Windows support). The program calls
  torch.compile; turning its compile option off, or running under WSL 2 / Linux, is the fix.
- ninja-missing: "Ninja is required to load C++ extensions": torch.utils.cpp_extension builds JIT extensions with
  ninja, and no ninja executable is on PATH (verify_ninja_availability; newer torch adds "pip install ninja to get it",
  pytorch#147698).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import PIP, error_match, text_finding

#: torch.compile's inductor finding no Triton (torch._inductor.exc.TritonMissing), as opposed to Dynamo's own refusal.
_TRITON_MISSING = re.compile(r"working triton installation", re.I)

TORCH_COMPILE_UNSUPPORTED_ON_WINDOWS = Code(
    code="torch-compile-unsupported-on-windows",
    title="This torch refuses torch.compile on Windows",
    area="torch",
    severity="error",
    explanation={
        "what": 'A program stops at torch.compile with "RuntimeError: Windows not yet supported for torch.compile" '
        "(nanoGPT, alpaca-lora, StableCascade, ChatTTS, AudioLDM 2 ...).",
        "why": "torch 2.0's TorchDynamo does not run on Windows and raises this at the first torch.compile "
        "(pytorch#94940); Windows support came later and in parts (pytorch#90768).",
        "confirm": "The traceback ends in torch/_dynamo/eval_frame.py, check_if_dynamo_supported.",
        "fix": "Turn the program's compile option off (e.g. --compile=False) or remove the torch.compile call: the model "
        "runs uncompiled, only slower. Or run it under WSL 2 or Linux.",
    },
    links=(
        "https://github.com/pytorch/pytorch/pull/94940",
        "https://github.com/pytorch/pytorch/issues/90768",
    ),
)

NINJA_MISSING = Code(
    code="ninja-missing",
    title="Building a torch C++/CUDA extension needs ninja, and none is installed",
    area="packages",
    severity="error",
    explanation={
        "what": "Importing a package that compiles its C++/CUDA extension at run time (torch.utils.cpp_extension.load) "
        'fails with "RuntimeError: Ninja is required to load C++ extensions".',
        "why": "torch's JIT extension builder writes a ninja build file and runs ninja; with no ninja executable on "
        "PATH it refuses (torch/utils/cpp_extension.py, verify_ninja_availability).",
        "confirm": "ninja --version  # 'command not found' in the environment that runs the program",
        "fix": f"{PIP} install ninja (in the same environment), or conda install ninja / apt install ninja-build; then "
        "run the program again.",
    },
    links=(
        "https://github.com/pytorch/pytorch/pull/147698",
        "https://github.com/zhanghang1989/PyTorch-Encoding/issues/167",
    ),
)


_COMPILE_OFF = (
    "# turn the program's compile option off (e.g. --compile=False), or remove its torch.compile(...) call",
    "# or run the program under WSL 2 or Linux",
)


@check(TORCH_COMPILE_UNSUPPORTED_ON_WINDOWS)
def torch_compile_unsupported_on_windows(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCH_COMPILE_UNSUPPORTED_ON_WINDOWS)
    if not said:
        return
    if not _TRITON_MISSING.search(said[1]):
        yield TORCH_COMPILE_UNSUPPORTED_ON_WINDOWS.finding(
            title="This torch refuses torch.compile on Windows: turn the program's compile option off",
            evidence={said[0]: said[1]},
            fix=Fix(_COMPILE_OFF, "torch 2.0's TorchDynamo does not run on Windows; the model runs uncompiled, only slower."),
        )
        return
    # torch.compile's inductor found no Triton: Windows has none (no wheels); on Linux torch's own dependency is missing.
    system = fx.str("system.os") or ""
    if system and "windows" not in system.lower():
        return
    evidence = {said[0]: said[1]}
    if system:
        evidence["os"] = system
    yield TORCH_COMPILE_UNSUPPORTED_ON_WINDOWS.finding(
        title=("" if system else "Likely (if this is native Windows): ")
        + "torch.compile needs Triton, which has no Windows build: turn the program's compile option off",
        evidence=evidence,
        fix=Fix(
            _COMPILE_OFF
            + (() if system else (f"{PIP} install -U triton  # on Linux instead: the triton release this torch depends on",)),
            "torch.compile's inductor backend generates Triton kernels, and Triton publishes no Windows wheels "
            "(pytorch#136361); the model runs uncompiled, only slower.",
        ),
        severity=None if system else "warning",
    )


@check(NINJA_MISSING)
def ninja_missing(fx: Facts) -> Iterator[Finding]:
    yield from text_finding(
        NINJA_MISSING,
        fx,
        "torch needs ninja to build this extension, and none is installed",
        (f"{PIP} install ninja  # in the environment that runs the program", "ninja --version"),
        "torch.utils.cpp_extension builds JIT extensions with ninja.",
    )


def register():
    return [torch_compile_unsupported_on_windows, ninja_missing]
