"""A package other than torch with no build for this Python (session 24, from blind batches b194, b108 and b145 and the
threads of the class: PaddlePaddle before 2.6 on Python 3.12, tensorrt 8.6.1 on 3.12, vLLM 0.10 on 3.13 and on 3.14,
torchao's cu130 builds on free-threaded 3.13t, cp311 wheels handed to ComfyUI portable's Python 3.13, TensorRT's apt
bindings on Ubuntu 24.04):

- package-wheel-missing-for-python: pip's own words that the package's releases exclude this Python ("Ignored the
  following versions that require a different python version: ... Requires-Python <3.13"), a wheel tagged for another
  Python ("X-cp311-cp311-win_amd64.whl is not a supported wheel on this platform" under Python 3.13), apt's
  "Depends: python3 (< 3.11) but 3.12.3 is to be installed"; or, as a likely cause, "No matching distribution found for
  X (from versions: none)" under a Python newer than most packages publish wheels for (3.12 and later) or a
  free-threaded build. torch itself is python-unsupported's (checks/platform.py).

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret.versions import vtuple
from cudadoctor.model import Code, Finding, Fix, check

from ._common import text_of

PACKAGE_WHEEL_MISSING_FOR_PYTHON = Code(
    code="package-wheel-missing-for-python",
    title="The package publishes no build for this Python version",
    area="packages",
    severity="error",
    explanation={
        "what": "pip cannot install a package (not torch): 'No matching distribution found' after 'Ignored the following "
        "versions that require a different python version', 'X-cp311-...whl is not a supported wheel on this platform' "
        "under another Python, apt's 'Depends: python3 (< 3.11)', or 'from versions: none' on a new Python "
        "(3.12 and later) or a free-threaded build (3.13t).",
        "why": "Packages with compiled code publish one wheel per Python version (cp311, cp312, cp313t...); a release "
        "made before a Python came out, or a project that has not built for it yet, has none, and a wheel for another "
        "Python is refused by pip. Requires-Python can exclude a Python outright.",
        "confirm": "python --version; pip download PACKAGE==VERSION --no-deps -d /tmp/x  # pip's message names the "
        "versions it found and ignored; the project's page on PyPI lists its wheels' cpXY tags.",
        "fix": "Use a Python the package publishes wheels for (a venv/conda env with that version), a release of the "
        "package that supports this Python, or the wheel whose cpXY tag matches this interpreter.",
    },
    links=(
        "https://github.com/paddlepaddle/paddle/issues/57872",
        "https://github.com/nvidia/tensorrt/issues/3539",
        "https://github.com/phoronix-test-suite/test-profiles/issues/337",
        "https://github.com/pytorch/ao/issues/3243",
    ),
)

_TORCH_FAMILY = {"torch", "torchvision", "torchaudio", "pytorch"}
#: pip's Requires-Python exclusion, and the package it then fails on.
_IGNORED = re.compile(r"Ignored the following versions that require a different python version:(?P<list>[^\n]{0,2000})", re.I)
_NO_MATCH = re.compile(r"No matching distribution found for\s+(?P<pkg>[A-Za-z0-9_.\-]+)", re.I)
_NONE = re.compile(
    r"Could not find a version that satisfies the requirement\s+(?P<pkg>[A-Za-z0-9_.\-]+)[^\n]{0,80}?\(from versions:\s*none\)",
    re.I,
)
#: A wheel tagged for another Python, refused by pip.
_WRONG_TAG = re.compile(
    r"(?P<whl>(?P<pkg>[A-Za-z0-9_.]+)-[\w.+!]+-cp(?P<tag>3\d{1,2})t?-[\w]+-[\w.]+\.whl) is not a supported wheel on this platform",
    re.I,
)
#: "requirement X==2.4.2.post117 (from versions: 2.6.0, 2.6.1)": only releases newer than the one asked for are visible.
_ONLY_NEWER = re.compile(
    r"Could not find a version that satisfies the requirement\s+(?P<pkg>[A-Za-z0-9_.\-]+)==(?P<want>[\w.+!]+)\s*"
    r"\(from versions:\s*(?P<list>[^)]{1,600})\)",
    re.I,
)
#: apt: a package's Python bindings built for older Pythons.
_APT_PY = re.compile(
    r"(?P<pkg>python3-[\w.+-]+)\s*:\s*Depends:\s*python3\s*\(\s*<\s*(?P<max>3\.\d+)\s*\)\s*but\s+(?P<have>3\.\d+)", re.I
)
_FREE_THREADED = re.compile(r"\b3\.1[3-9]t\b|\bcp31[3-9]t\b|free[- ]?threaded|freethreading|--disable-gil", re.I)
_PY_STATED = re.compile(r"\bpython\s*(?:version\s*)?:?\s*v?(?P<v>3\.\d{1,2})(?:\.\d+)?t?\b", re.I)


def _pythons(fx: Facts, text: str) -> List[str]:
    """This interpreter's version, major.minor: the facts', else the ones the paste states (several when it names more
    than one: "Python 3.13 ... maybe it works with 3.12"), else one the error text states; [] when none."""
    v = fx.str("python.version")
    m = re.match(r"(\d+\.\d+)", v or "")
    if m:
        return [m.group(1)]
    said = [str(x) for x in (fx.get("pasted.prose.conflicts.python") or []) if isinstance(x, str)]
    out = [re.match(r"\d+\.\d+", x).group(0) for x in said if re.match(r"\d+\.\d+", x)]  # type: ignore[union-attr]
    if out:
        return out
    m = _PY_STATED.search(text)
    return [m.group("v")] if m else []


def _minor(v: str) -> Tuple[int, ...]:
    return (vtuple(v) or (0, 0))[:2]


@check(PACKAGE_WHEEL_MISSING_FOR_PYTHON)
def package_wheel_missing_for_python(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    if not text:
        return
    pys = _pythons(fx, text)
    py = pys[0] if len(pys) == 1 else None
    found = _evidence(text, pys)
    if found is None:
        return
    pkg, evidence, sure = found
    if pkg.lower() in _TORCH_FAMILY:
        return  # torch's own wheels: python-unsupported
    free = bool(_FREE_THREADED.search(text))
    if py:
        evidence["python"] = py + ("t (free-threaded)" if free else "")
    yield PACKAGE_WHEEL_MISSING_FOR_PYTHON.finding(
        title=("" if sure else "Likely: ")
        + f"{pkg} has no build for {'Python ' + py if py else 'this Python'}"
        + (" (free-threaded)" if free else "")
        + ": use a Python it supports, or a release of it that supports this one",
        evidence=evidence,
        fix=Fix(
            (
                f"python --version; pip index versions {pkg}  # what this Python can install",
                f"# a Python {pkg} publishes wheels for: e.g. uv venv --python 3.12 (or conda create -n env python=3.12), "
                f"then install {pkg} there",
                f"# or a newer {pkg} release that lists this Python on PyPI (its wheels' cpXY tags), or the wheel tagged "
                f"cp{(py or '3.x').replace('.', '')} for it",
            ),
            "Compiled packages publish one wheel per Python version; none exists for this interpreter.",
        ),
        severity=None if sure else "warning",
    )


def _evidence(text: str, pys: List[str]) -> Optional[Tuple[str, dict, bool]]:
    """(package, evidence, certain) from the strongest wording present; None when the text shows none. ``pys``: this
    interpreter's Python, or the ones the text names."""
    py = pys[0] if len(pys) == 1 else None
    ignored = _IGNORED.search(text)
    if ignored:
        no = _NO_MATCH.search(text, ignored.end()) or _NO_MATCH.search(text)
        if no:
            return no.group("pkg"), {"pip": ignored.group(0)[:240], "then": no.group(0)}, True
    tag = _WRONG_TAG.search(text)
    if tag and pys and all(tag.group("tag") != p.replace(".", "") for p in pys):
        wheel_py = tag.group("tag")[0] + "." + tag.group("tag")[1:]
        return tag.group("pkg"), {"pip": tag.group(0), "wheel is for": f"Python {wheel_py}"}, True
    apt = _APT_PY.search(text)
    if apt and _minor(apt.group("have")) >= _minor(apt.group("max")):
        return apt.group("pkg"), {"apt": apt.group(0)}, True
    new_python = bool(py) and (_minor(py or "0.0") >= (3, 12) or bool(_FREE_THREADED.search(text)))
    none = _NONE.search(text)
    if none and new_python:
        return none.group("pkg"), {"pip": none.group(0)}, False
    older = _ONLY_NEWER.search(text)
    if older and new_python and _only_newer(older.group("want"), older.group("list")):
        return older.group("pkg"), {"pip": older.group(0)}, False
    return None


def _only_newer(want: str, listed: str) -> bool:
    """Every version pip could see is newer than the one asked for: the old release has no wheel here."""
    seen = [vtuple(v) for v in re.split(r",\s*", listed) if v.strip()]
    w = vtuple(want)
    return bool(w and seen and all(v and v > w for v in seen))


TRITON_UNAVAILABLE_ON_WINDOWS = Code(
    code="triton-unavailable-on-windows",
    title="Triton publishes no Windows wheels: pip cannot install it on Windows",
    area="packages",
    severity="error",
    explanation={
        "what": "Installing a project's requirements on Windows stops at 'Could not find a version that satisfies the "
        "requirement triton (from versions: none)' / 'No matching distribution found for triton'.",
        "why": "OpenAI/triton-lang's Triton is built for Linux only; PyPI has no Windows wheel of it, whatever the "
        "Python. Projects that list triton (for torch.compile, bitsandbytes, xformers, custom kernels) cannot be installed "
        "as written on native Windows.",
        "confirm": "pip download triton --no-deps -d %TEMP%\\x  # 'from versions: none' on Windows; the same on Linux finds "
        "wheels",
        "fix": 'Leave triton out on Windows (in requirements: `triton; sys_platform == "linux"`) and run without '
        "torch.compile/Triton kernels; or use the community Windows build (triton-windows) that matches your torch; or "
        "run the project under WSL 2 or Linux.",
    },
    links=(
        "https://github.com/triton-lang/triton/issues/5741",
        "https://github.com/TigerResearch/TigerBot/issues/1",
        "https://github.com/pytorch/pytorch/issues/136361",
    ),
)

#: pip refusing triton itself (not triton-windows, not pytorch-triton's own index).
_TRITON_REFUSED = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies the requirement)\s+triton(?![\w-])",
    re.I,
)
#: The refusal inside an install of something else: a requirements file, a package that depends on triton.
_DEPENDENCY = re.compile(
    r"-r\s+\S*requirements|from -r |requirements[\w.-]*\.txt|\(from [A-Za-z0-9_.\-]+(?:[<>=!~][^)]*)?\)", re.I
)
_WINDOWS_SIGN = re.compile(r"win_amd64|win32|[A-Za-z]:\\|\bWindows\b|\.exe\b", re.I)


@check(TRITON_UNAVAILABLE_ON_WINDOWS)
def triton_unavailable_on_windows(fx: Facts) -> Iterator[Finding]:
    text = text_of(fx)
    refused = _TRITON_REFUSED.search(text)
    if not refused:
        return
    os_name = fx.str("system.os") or ""
    if os_name and os_name != "Windows":
        return  # on Linux triton has wheels: another cause (a Python or index without them)
    windows = os_name == "Windows" or _WINDOWS_SIGN.search(text)
    if not windows:
        return
    # a requirements file or a package depending on triton stops there; a hand-typed `pip install triton` only shows
    # that it is not available (programs that treat it as optional run without it)
    blocking = _DEPENDENCY.search(text)
    yield TRITON_UNAVAILABLE_ON_WINDOWS.finding(
        title="Triton has no Windows wheels: leave it out on Windows (or use a Windows build of it), or run under WSL 2",
        evidence={"pip": refused.group(0), "os": "Windows" + ("" if os_name else " (from the text)")},
        severity=None if blocking else "warning",
        fix=Fix(
            (
                'triton; sys_platform == "linux"  # in requirements.txt: installs triton only on Linux',
                "pip install -r requirements.txt  # again; torch.compile and Triton kernels stay off on Windows",
                "# or: the community Windows build (pip install triton-windows, the release matching your torch), or WSL 2",
            ),
            "Triton is published for Linux only.",
        ),
    )


def register():
    return [package_wheel_missing_for_python, triton_unavailable_on_windows]
