"""numba's built-in CUDA target on an R580 driver (session 24, from blind batches b144 and b180 and the threads of the
class: numba#10166, #10188, #10249, dpeerlab/segger#68, vllm-project/vllm#33171):

- numba-cuda-target-crashes-on-r580: numba's own CUDA target (numba.cuda without the numba-cuda package) before 0.63
  crashes with NVIDIA driver 580 and later: a segfault ("Fatal Python error: Segmentation fault" in numba's cudadrv), an
  access violation in cuda.to_device(), or "IndexError: list index out of range" from its device list. Its ctypes
  wrapper calls cuCtxGetDevice with no current context, which R580 drivers answer with a crash instead of
  CUDA_ERROR_INVALID_CONTEXT. numba 0.63.0 backports the fix that the numba-cuda package already had (numba's 0.63.0
  release notes; numba#10237). A failure in numba's CUDA path on such a pair is an error; the pair alone, with nothing
  failing, a warning.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from cudadoctor.facts import Facts, normalize_name
from cudadoctor.interpret.gpus import driver_version
from cudadoctor.interpret.versions import vtuple
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

NUMBA_CUDA_TARGET_CRASHES_ON_R580 = Code(
    code="numba-cuda-target-crashes-on-r580",
    title="numba's built-in CUDA target (before 0.63) crashes on NVIDIA driver 580 and later",
    area="libraries",
    severity="error",
    explanation={
        "what": "numba.cuda (cuda.jit, cuda.to_device, cuda.gpus) fails right after a driver update to the R580 branch "
        "or later: 'Fatal Python error: Segmentation fault' in numba's cudadrv, 'OSError: exception: access violation', or "
        "'IndexError: list index out of range' from its device list; a program using numba underneath (segger, vLLM, "
        "RAPIDS-era code) dies the same way. Rolling the driver back to 57x makes it work.",
        "why": "numba's own CUDA target calls the driver through ctypes and asks cuCtxGetDevice for the device with no "
        "context current; R580 drivers crash there instead of returning CUDA_ERROR_INVALID_CONTEXT. numba 0.63.0 backports "
        "the fix the separately maintained numba-cuda package already had.",
        "confirm": 'python -c "import numba; print(numba.__version__)"  # below 0.63, and `pip show numba-cuda` finds '
        "nothing; nvidia-smi shows Driver Version 580 or later.",
        "fix": 'pip install -U "numba>=0.63", or install the maintained CUDA target: pip install -U numba-cuda (numba '
        "uses it when it is installed). Until then, NUMBA_CUDA_USE_NVIDIA_BINDING=1 (with cuda-python installed) avoids "
        "the ctypes path; rolling the driver back below 580 also works.",
    },
    links=(
        "https://numba.readthedocs.io/en/stable/release/0.63.0-notes.html",
        "https://github.com/numba/numba/pull/10237",
        "https://github.com/numba/numba/issues/10166",
        "https://github.com/dpeerlab/segger/issues/68",
    ),
)

#: The release that has the fix (numba 0.63.0's release notes).
_FIXED_IN = (0, 63)
#: The first driver branch it crashes on.
_R580 = 580
#: numba's CUDA target named in the failure: its module, its API calls, its device list's line (numba's
#: cuda/cudadrv/devices.py: ``return self.lst[devnum]``).
_NUMBA_CUDA = re.compile(
    r"\bnumba\b|@cuda\.jit\b|\bcuda\.(?:to_device|device_array|gpus|select_device|detect)\b|self\.lst\[devnum\]", re.I
)
#: The crash, in the words seen: a segfault, Windows' access violation, the device list's IndexError.
_CRASH = re.compile(r"Segmentation fault|\bsegfault|access violation|IndexError:\s*list index out of range|cuCtxGetDevice", re.I)
#: A driver release in the text: "driver 580.88", "GameReady 581.29", "NVIDIA-SMI 580.65.06", "driver 580+".
_TEXT_DRIVER = re.compile(
    r"(?:driver|game\s*ready|studio|nvidia-smi)[^\n\d]{0,30}?(?<![\d.])(?P<v>[5-9]\d{2}(?:\.\d{1,3}){0,2})\+?(?![\d.]*\d)",
    re.I,
)


def _numba(fx: Facts) -> Tuple[Optional[str], bool]:
    """(numba's version as installed or stated, whether the numba-cuda package is installed)."""
    version = None
    for d in fx.dicts("packages.distributions") + fx.dicts("packages.stated"):
        name = normalize_name(str(d.get("name") or ""))
        if name == "numba-cuda":
            return str(d.get("version") or ""), True
        if name == "numba" and version is None and d.get("version"):
            version = str(d["version"])
    return version, False


def _r580_driver(fx: Facts, text: str) -> Optional[str]:
    """The driver at 580 or later the facts record, else the one the text names (None when neither)."""
    have = driver_version(fx)
    if have:
        v = vtuple(have)
        return have if v and v[0] >= _R580 else None
    for m in _TEXT_DRIVER.finditer(text):
        if (vtuple(m.group("v")) or (0,))[0] >= _R580:
            return m.group("v")
    return None


@check(NUMBA_CUDA_TARGET_CRASHES_ON_R580)
def numba_cuda_target_crashes_on_r580(fx: Facts) -> Iterator[Finding]:
    version, has_numba_cuda = _numba(fx)
    if has_numba_cuda:
        return
    release = vtuple(version)
    if release is not None and release[:2] >= _FIXED_IN:
        return
    text = text_of(fx)
    named = _NUMBA_CUDA.search(text)
    if version is None and named is None:
        return
    driver = _r580_driver(fx, text)
    if driver is None:
        return
    crash = _CRASH.search(text)
    evidence = {"driver": driver}
    if version:
        evidence["numba"] = version
    if crash:
        evidence["error"] = crash.group(0)
    if crash and named:
        yield NUMBA_CUDA_TARGET_CRASHES_ON_R580.finding(
            title=f"numba's built-in CUDA target{' ' + version if version else ''} crashes on driver {driver} "
            "(fixed in numba 0.63 and in the numba-cuda package)",
            evidence=evidence,
            fix=_fix(),
        )
    elif version and (crash or not text.strip()):
        # the pair with nothing failing yet, or a crash whose text does not name numba (a program using it underneath)
        yield NUMBA_CUDA_TARGET_CRASHES_ON_R580.finding(
            severity="warning",
            title=f"numba {version}'s built-in CUDA target crashes on driver {driver}: numba 0.63 or numba-cuda fixes it",
            evidence=evidence,
            fix=_fix(),
        )


def _fix() -> Fix:
    return Fix(
        (
            'pip install -U "numba>=0.63"  # 0.63.0 backports the R580 fix',
            "# or the maintained CUDA target, which numba uses when installed: pip install -U numba-cuda",
            "# meanwhile: export NUMBA_CUDA_USE_NVIDIA_BINDING=1 (with cuda-python installed) avoids the crashing ctypes call",
        ),
        "numba's own CUDA target before 0.63 calls cuCtxGetDevice with no current context, which R580 drivers crash on.",
    )


def register():
    return [numba_cuda_target_crashes_on_r580]
