"""Start the torch probe before the command line is even parsed.

Importing torch is the long pole of a live ``cudadoctor check``: about 1 s of its 1.2 s here.
The process entry point (``cudadoctor/entry.py``) calls :func:`start_for` with the raw arguments
before it imports click and the engine (about 50 ms), and :func:`adopt`, called by
``probes.collect``, hands that child over if it is exactly the one collect would start (same
interpreter, same arguments, same environment); otherwise collect starts its own. A child nobody
adopted (a usage error, ``--help``) is killed by :func:`discard`, which the entry point calls
before the process ends.

Only a plain live check is started early: anything that reads saved facts, skips torch
(``--quick``) or that the parser here does not recognise falls back to the normal path, so a
wrong guess costs nothing but the saving.
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only; see proc.py for why typing is not imported here
    from typing import List, Optional, Sequence

from . import proc

# check's options that take a value, and its flags. Anything else: no early start.
_WITH_VALUE = {"--format", "-o", "--output", "--error", "--error-file", "--python", "--timeout"}
_FLAGS = {"--strict", "-v", "--verbose", "--deep", "--show-pii"}
# Options after which no torch probe runs, or a different one.
_NO_PROBE = {"--facts", "--from-collect-env", "--quick", "-h", "--help"}

_pending: Optional[proc.Started] = None


def torch_argv(python: str, kernel: bool = True, deep: bool = False) -> List[str]:
    """The torch probe's command line; collect builds it the same way, which is what adoption compares."""
    return [python, proc.child_script("torch_probe.py")] + ([] if kernel else ["--no-kernel"]) + (["--deep"] if deep else [])


def plan(args: Sequence[str]) -> Optional[List[str]]:
    """The torch probe's argv if ``args`` (without the program name) is a plain live check, else None."""
    if not args or args[0] != "check":
        return None
    python, deep = None, False
    rest = list(args[1:])
    i = 0
    while i < len(rest):
        a = rest[i]
        name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in _NO_PROBE or a == "--":
            return None
        if name in _WITH_VALUE:
            if not eq:
                i += 1
                if i >= len(rest):
                    return None
                value = rest[i]
            if name == "--python":
                python = value
        elif name in _FLAGS and not eq:
            deep = deep or name == "--deep"
        else:  # a positional argument, an unknown or a combined option: leave it to click
            return None
        i += 1
    if python is None:
        from .interpreter import choose

        python = choose(None)[0]  # the same choice collect makes
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        return None  # check reports it as bad input
    return torch_argv(python, deep=deep)


def start_for(args: Sequence[str], fork: bool = False) -> None:
    """Start the torch probe now if ``args`` is a plain live check. Never raises.

    With ``fork`` (the process entry point only), the probe runs in a fork of this process when
    that is indistinguishable from a new interpreter (``proc.can_fork_python``): nothing but the
    interpreter's start-up has happened here yet, and repeating it costs about 30 ms.
    """
    global _pending
    try:
        argv = plan(args)
        if argv is None or _pending is not None:
            return
        if fork and proc.can_fork_python(argv[0]):
            _pending = proc.fork_start(argv, env=proc.child_env(), result_file=True, notify=True)
        else:
            _pending = proc.start(argv, env=proc.child_env(), result_file=True, notify=True)
    except Exception:  # an early start is only ever an optimisation
        _pending = None


def adopt(argv: Sequence[str]) -> Optional[proc.Started]:
    """The early child if it runs ``argv`` under today's environment; otherwise discard it."""
    global _pending
    st, _pending = _pending, None
    if st is None:
        return None
    if st.argv == list(argv) and st.env == proc.child_env():
        return st
    st.kill()
    return None


def discard() -> None:
    """Kill an early child that nobody adopted."""
    global _pending
    st, _pending = _pending, None
    if st is not None:
        st.kill()
