"""Start the torch probe before the CLI loads, on a guess that reads the command's name.

Importing torch is the long pole of a live ``cudadoctor check``. The process entry point
(``cudadoctor/entry.py``) calls :func:`start_for` with the raw arguments before it imports click
and the engine; if the command is ``check``, it starts the torch probe ``collect`` would start by
default. Of the options it looks at one only, as pytest's preparse does: ``--quick``, whose budget
(half a second) a needless torch import would eat. The command's grammar is click's alone, so the
guess may be wrong: :func:`adopt`, called by ``probes.collect``, hands the child over only if it is
exactly the one collect wants (same arguments, same environment) and kills it otherwise; a check
that imports no torch (``--facts``...) gives it up through :func:`discard`, which the entry point
calls before the process ends. A wrong guess costs a child killed during its import, never a
different answer.
"""

from __future__ import annotations


from . import proc

_pending: proc.Child | None = None


def torch_argv(python: str, kernel: bool = True, deep: bool = False) -> list[str]:
    """The torch probe's command line; collect builds it the same way, which is what adoption compares."""
    return [python, proc.child_script("torch_probe.py")] + ([] if kernel else ["--no-kernel"]) + (["--deep"] if deep else [])


def start_for(args: list[str], fork: bool = False) -> None:
    """If the command is ``check`` (and not ``--quick``), start the default torch probe now. Never raises.

    With ``fork`` (the process entry point only), the probe runs in a fork of this process when that
    is indistinguishable from a new interpreter (see ``proc.can_fork_python``).
    """
    global _pending
    if args[:1] != ["check"] or "--quick" in args or _pending is not None:
        return
    try:
        from .interpreter import choose

        argv = torch_argv(choose(None)[0])  # the same default collect takes (an isolated install: the user's env)
        if fork and proc.can_fork_python(argv[0]):
            _pending = proc.fork_start(argv, env=proc.child_env(), result_file=True, notify=True)
        else:
            _pending = proc.start(argv, env=proc.child_env(), result_file=True, notify=True)
    except Exception:  # an early start is only ever an optimisation
        _pending = None


def adopt(argv: list[str]) -> proc.Child | None:
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
