"""Extension builds whose CUDA toolkit location is wrong: CUDA_HOME that is not one toolkit directory.

torch.utils.cpp_extension takes CUDA_HOME (or CUDA_PATH) exactly as it is set and runs
``os.path.join(CUDA_HOME, "bin", "nvcc")`` (torch/utils/cpp_extension.py: ``_find_cuda_home``,
``_join_cuda_home``). A value written like PATH (``/usr/local/cuda:/usr/local/cuda-11.8``), with a
stray ':' (``export CUDA_HOME=$CUDA_HOME:/usr/local/cuda`` while CUDA_HOME was empty), with quotes
inside it, or naming the toolkit's bin/ directory or nvcc itself gives an nvcc path that does not exist,
although nvcc is installed. The build log shows the malformed path (signatures:
kb/errors/builds2.json); a live run records the value itself (``toolkit.cuda_home``).

Codes: cuda-home-malformed.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

CUDA_HOME_MALFORMED = Code(
    code="cuda-home-malformed",
    title="CUDA_HOME is not one toolkit directory (a PATH-style list, a stray ':', quotes, or bin/ or nvcc itself)",
    area="toolkit",
    severity="error",
    explanation={
        "what": "Building a CUDA extension cannot run nvcc although it is installed: the path the build runs is "
        "CUDA_HOME joined with bin/nvcc, and CUDA_HOME is malformed, so the log shows a path such as "
        "':/usr/local/cuda-11.1/bin/nvcc', '/usr/local/cuda:/usr/local/cuda-9.0/bin/nvcc' or '/usr/local/cuda-11.8:/bin/nvcc' "
        '("unable to execute ...: No such file or directory", "[Errno 2] No such file or directory", "/bin/sh: 1: ...: not found").',
        "why": "torch.utils.cpp_extension uses CUDA_HOME (or CUDA_PATH) exactly as set and appends bin/nvcc. CUDA_HOME "
        "names one directory, the toolkit's root; written like PATH (`export CUDA_HOME=$CUDA_HOME:/usr/local/cuda` while "
        "it was empty leaves a leading ':'; several toolkits joined by ':'), with quotes inside the value, or set to the "
        "toolkit's bin/ directory or to nvcc itself, it names no directory that exists.",
        "confirm": '`echo "$CUDA_HOME"` (a \':\', quotes, or a value ending in /bin or /nvcc); `ls "$CUDA_HOME/bin/nvcc"`; '
        "`grep -n CUDA_HOME ~/.bashrc ~/.profile`.",
        "fix": "Set CUDA_HOME to the one toolkit root (`export CUDA_HOME=/usr/local/cuda-<version>`, no ':', no quotes "
        "inside, not .../bin), fix the line in ~/.bashrc that builds it, open a new shell, and rebuild (after removing the "
        "build/ directory). PATH gets $CUDA_HOME/bin; LD_LIBRARY_PATH gets $CUDA_HOME/lib64.",
    },
    links=(
        "https://pytorch.org/docs/stable/cpp_extension.html",
        "https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py",
    ),
)

#: The nvcc path the log shows, for the evidence's "CUDA_HOME was" (the part before /bin/nvcc).
_NVCC_PATH = re.compile(r"(?<![\w.-])(?P<home>:/[\w./-]*|/[\w./-]*:[\w./:-]*)/bin/nvcc(?![\w.-])")


def malformed_reason(value: str, windows: bool = False) -> Optional[str]:
    """Why a CUDA_HOME value is not one toolkit directory, or None when it may be one."""
    v = value.strip()
    if not v:
        return None
    if any(q in v for q in "\"'"):
        return "it holds quotes, which become part of the path"
    windows = windows or bool(re.match(r"^[A-Za-z]:[\\/]", v))  # "C:\\Program Files\\...": a Windows path
    sep = ";" if windows else ":"
    body = v[2:] if windows and re.match(r"^[A-Za-z]:", v) else v  # a drive letter's ':' is the path's
    if sep in body:
        return f"it is a list or holds a stray '{sep}' (written like PATH)"
    tail = re.sub(r"[\\/]+$", "", v).replace("\\", "/").lower()
    if tail.endswith(("/nvcc", "/nvcc.exe")):
        return "it names nvcc itself, not the toolkit's root"
    if tail.endswith("/bin"):
        return "it names the toolkit's bin directory, not its root"
    return None


def _fix(home_hint: str) -> Fix:
    cmds: List[str] = [
        "echo \"$CUDA_HOME\"  # one directory: no ':', no quotes, not .../bin",
        "grep -n CUDA_HOME ~/.bashrc ~/.profile ~/.zshrc 2>/dev/null  # the line that builds the bad value",
        f"export CUDA_HOME={home_hint}  # the toolkit's root (the directory holding bin/nvcc)",
        "export PATH=$CUDA_HOME/bin:$PATH LD_LIBRARY_PATH=$CUDA_HOME/lib64:$LD_LIBRARY_PATH",
        "rm -rf build/ && python -m pip install --no-build-isolation -v .  # rebuild with the fixed CUDA_HOME",
    ]
    return Fix(tuple(cmds), "torch.utils.cpp_extension runs CUDA_HOME/bin/nvcc with CUDA_HOME exactly as set.")


def _root_of(home: str) -> str:
    """The toolkit root the malformed value most likely meant: its last list entry that looks like a CUDA directory."""
    v = home.strip().strip("'\"")
    parts = [p for p in re.split(r";" if re.match(r"^[A-Za-z]:[\\/]", v) else r"[:;]", v) if p.strip("/\\ ")]
    cuda = [p for p in parts if "cuda" in p.lower()] or parts
    root = re.sub(r"[\\/](?:bin[\\/]?)?(?:nvcc(?:\.exe)?)?[\\/]*$", "", cuda[-1].strip().strip("'\"")) if cuda else ""
    return root or "/usr/local/cuda-<version>"


@check(CUDA_HOME_MALFORMED)
def cuda_home_malformed(fx: Facts) -> Iterator[Finding]:
    """CUDA_HOME malformed: seen in the build log's nvcc path, or in the value a live run recorded."""
    said = error_match(fx, CUDA_HOME_MALFORMED)
    if said:
        m = _NVCC_PATH.search(said[1])
        home = m.group("home") if m else ""
        yield CUDA_HOME_MALFORMED.finding(
            title="The build runs nvcc from a malformed CUDA_HOME"
            + (f" ('{home}'): not one toolkit directory" if home else ": not one toolkit directory"),
            evidence={said[0]: said[1], **({"CUDA_HOME (from the nvcc path)": home} if home else {})},
            fix=_fix(_root_of(home) if home else "/usr/local/cuda-<version>"),
        )
        return
    windows = (fx.str("system.os") or "").lower().startswith("win")
    for name, value in (("toolkit.cuda_home", fx.str("toolkit.cuda_home")), ("CUDA_HOME", fx.env("CUDA_HOME"))):
        why = malformed_reason(value, windows) if value else None
        if why and value:
            yield CUDA_HOME_MALFORMED.finding(
                title=f"CUDA_HOME is not one toolkit directory: {why}",
                evidence={name: value},
                fix=_fix(_root_of(value)),
                severity="warning",  # nothing is being built in this run: the next extension build will fail
            )
            return


def register():
    return [cuda_home_malformed]
