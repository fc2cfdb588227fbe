"""Which Python interpreter to diagnose when the user did not say (--python).

cudadoctor installed as a command-line tool (``pipx install``, ``pipx run``, ``uv tool install``,
``uvx``) runs in an environment of its own, which never holds the user's torch. Diagnosing that
interpreter answers a question nobody asked ("PyTorch is not installed for ~/.local/pipx/...").
In that case the interpreter the user works in is diagnosed instead: the active virtual
environment (``VIRTUAL_ENV``), then the environment of the uv project the current directory is in
(``uv run`` would use it: a ``pyproject.toml`` with a ``uv.lock`` or a ``.venv`` beside it, here or in
a parent; its ``.venv``, or ``UV_PROJECT_ENVIRONMENT``), then the active conda environment
(``CONDA_PREFIX``), then the first ``python3``/``python`` on PATH. The choice and its reason go into the facts
(``tool.interpreter``) and the text output says it.

Cheap on purpose (os and sys only, a handful of stat calls): the process entry point calls
:func:`choose` before anything else is imported, to start the torch probe early.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional, Tuple

_WIN = sys.platform == "win32"

# reasons (stable words, recorded in facts as tool.interpreter.reason)
OPTION = "option"  # --python PATH
OWN = "own"  # cudadoctor's own interpreter: the user works in it
ACTIVE_VENV = "virtual-env"
ACTIVE_CONDA = "conda-env"
UV_PROJECT = "uv-project"
ON_PATH = "path"


def _real(p: str) -> str:
    try:
        return os.path.normcase(os.path.realpath(p))
    except (OSError, ValueError):
        return p


def _env_python(prefix: str) -> Optional[str]:
    """The interpreter of the environment at ``prefix`` (venv or conda), if it is there."""
    names = (("Scripts", "python.exe"), ("", "python.exe")) if _WIN else (("bin", "python3"), ("bin", "python"))
    for sub, name in names:
        p = os.path.join(prefix, sub, name) if sub else os.path.join(prefix, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _prefix_of(python: str) -> str:
    """The environment directory an interpreter path belongs to (``<prefix>/bin/python``)."""
    d = os.path.dirname(os.path.abspath(python))
    if os.path.basename(d).lower() in ("bin", "scripts"):
        d = os.path.dirname(d)
    return d


def tool_environment(prefix: Optional[str] = None) -> Optional[str]:
    """The kind of isolated tool environment cudadoctor runs in, or None.

    Markers, each written by the tool itself: pipx's ``pipx_metadata.json`` in the venv (``pipx
    install``) or its ``pipx_shared.pth`` (every pipx venv, ``pipx run``'s cached ones too);
    uv's ``uv-receipt.toml`` (``uv tool install``); uv's cache directories (``archive-v0``,
    ``environments-v2``: ``uvx`` / ``uv tool run``).
    """
    prefix = prefix or sys.prefix
    if prefix == sys.prefix == getattr(sys, "base_prefix", sys.prefix):
        return None  # not a virtual environment: a system or conda interpreter is the user's own
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")):
        return "uv tool"
    if os.path.isfile(os.path.join(prefix, "pipx_metadata.json")):
        return "pipx"
    parts = [p.lower() for p in _real(prefix).replace("\\", "/").split("/")]
    if any(p in ("archive-v0", "environments-v2", "builds-v0") for p in parts) and _made_by_uv(prefix):
        return "uvx"
    if "pipx" in parts or ".pipx" in parts:
        return "pipx run" if ".cache" in parts or "cache" in parts else "pipx"
    for sp in _site_packages(prefix):
        if os.path.isfile(os.path.join(sp, "pipx_shared.pth")):
            return "pipx"
    return None


def _made_by_uv(prefix: str) -> bool:
    """pyvenv.cfg of a venv uv created says ``uv = <version>``."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            return any(line.split("=", 1)[0].strip() == "uv" for line in f)
    except OSError:
        return False


def _site_packages(prefix: str) -> list:
    if _WIN:
        return [os.path.join(prefix, "Lib", "site-packages")]
    lib = os.path.join(prefix, "lib")
    try:
        return [os.path.join(lib, d, "site-packages") for d in os.listdir(lib) if d.startswith("python")]
    except OSError:
        return []


def _has_torch(prefix: str) -> bool:
    return any(os.path.isdir(os.path.join(sp, "torch")) for sp in _site_packages(prefix))


def _on_path(env: Mapping[str, str], skip: str) -> Optional[str]:
    names = ("python.exe",) if _WIN else ("python3", "python")
    for d in (env.get("PATH") or "").split(os.pathsep):
        if not d:
            continue
        for name in names:
            p = os.path.join(d, name)
            if os.path.isfile(p) and os.access(p, os.X_OK) and _real(_prefix_of(p)) != skip:
                return p
    return None


def plain_python(target: str, env: Optional[Mapping[str, str]] = None) -> Tuple[Optional[str], bool]:
    """(the first ``python`` on PATH, whether it is ``target``): what a fix command's plain
    ``python -m pip`` would run. The same interpreter: the same directory (a venv's ``bin/python`` and
    ``bin/python3``) and the same file behind the links (``/usr/bin/python`` may be Python 2)."""
    env = os.environ if env is None else env
    name = "python.exe" if _WIN else "python"
    for d in (env.get("PATH") or "").split(os.pathsep):
        p = os.path.join(d, name) if d else ""
        if p and os.path.isfile(p) and os.access(p, os.X_OK):
            here = os.path.normcase(os.path.abspath(d))
            there = os.path.normcase(os.path.dirname(os.path.abspath(target)))
            same_dir = here == there or _real(d) == _real(os.path.dirname(os.path.abspath(target)))
            return p, same_dir and _real(p) == _real(target)
    return None, False


def uv_project_env(cwd: str, env: Mapping[str, str]) -> Optional[str]:
    """The environment directory of the uv project ``cwd`` is in, if it has one; else None.

    A uv project is a directory with a ``pyproject.toml`` and a ``uv.lock`` beside it, or an environment uv
    made (its pyvenv.cfg names uv) (``uv init``/``uv sync`` make both), ``cwd`` or its nearest parent holding a
    ``pyproject.toml``; its environment is ``UV_PROJECT_ENVIRONMENT`` (relative to the project) or
    ``.venv`` (https://docs.astral.sh/uv/concepts/projects/config/#project-environment-path).
    """
    d = os.path.abspath(cwd)
    while True:
        if os.path.isfile(os.path.join(d, "pyproject.toml")):
            where = env.get("UV_PROJECT_ENVIRONMENT") or ".venv"
            venv = os.path.join(d, os.path.expanduser(where))
            if not (os.path.isfile(os.path.join(d, "uv.lock")) or _made_by_uv(venv)):
                return None  # not a uv project: a .venv made by `python -m venv` beside a pyproject.toml is just a venv
            return venv if os.path.isdir(venv) else None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def choose(
    python: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    prefix: Optional[str] = None,
    executable: Optional[str] = None,
    cwd: Optional[str] = None,
) -> Tuple[str, str, str]:
    """(interpreter, reason, why): the interpreter to diagnose and, in words, why that one.

    ``env``, ``prefix``, ``executable`` and ``cwd`` default to this process's; tests pass others.
    """
    env = os.environ if env is None else env
    prefix = prefix or sys.prefix
    executable = executable or sys.executable
    if python:
        return python, OPTION, "given with --python"
    own = _real(prefix)
    tool = tool_environment(prefix)
    venv = env.get("VIRTUAL_ENV") or ""
    conda = env.get("CONDA_PREFIX") or ""
    try:
        project = uv_project_env(cwd or os.getcwd(), env) or ""
    except OSError:  # the current directory was removed
        project = ""
    active = [(p, r) for p, r in ((venv, ACTIVE_VENV), (project, UV_PROJECT), (conda, ACTIVE_CONDA)) if p and _real(p) != own]
    if tool is None:
        # Not a known tool environment, but a venv of cudadoctor's own without torch while the user
        # has another environment active: the same situation under another installer.
        in_venv = prefix != getattr(sys, "base_prefix", prefix)
        if not (active and in_venv and not _has_torch(prefix)):
            return executable, OWN, "cudadoctor's own interpreter"
        where = "a virtual environment of its own without torch"
    else:
        where = f"an isolated {tool} environment"
    for p, reason in active:
        py = _env_python(p)
        if py:
            if reason == UV_PROJECT:
                return py, reason, f"the uv project's environment, {p}; cudadoctor itself runs in {where}"
            var = "VIRTUAL_ENV" if reason == ACTIVE_VENV else "CONDA_PREFIX"
            kind = "virtual environment" if reason == ACTIVE_VENV else "conda environment"
            return py, reason, f"the active {kind}, {var}; cudadoctor itself runs in {where}"
    py = _on_path(env, own)
    if py:
        return py, ON_PATH, f"the first Python on PATH; cudadoctor itself runs in {where}"
    return executable, OWN, f"cudadoctor's own interpreter: it runs in {where}, and no other Python is active or on PATH"
