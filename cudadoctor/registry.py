"""Finding the checks: the built-ins listed in :mod:`cudadoctor.checks`, then third-party plugins.

Built-in checks are imported from the package itself (``cudadoctor.checks.BUILTIN_MODULES``), so a
plain checkout loads them exactly as an install does; one that fails to load is an internal error
(:class:`BuiltinMissing`), never a quiet run without it. A plugin distribution declares, in its
pyproject.toml::

    [project.entry-points."cudadoctor.checks"]
    mychecks = "mypkg.checks:register"

where ``register()`` returns a list of :class:`cudadoctor.model.Check`. Every load is guarded
and time-bounded: a plugin that fails to import, raises, hangs, or returns something that is
not a list of checks becomes a ``check-crashed`` finding naming it, and the rest still run.
Set ``CUDADOCTOR_NO_PLUGINS=1`` to load only the built-in checks.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .model import Check, Code
from .core_codes import CORE_CODES

GROUP = "cudadoctor.checks"
BUILTIN_DIST = "cudadoctor"
LOAD_TIMEOUT_S = 5.0


@dataclass
class LoadProblem:
    source: str
    phase: str  # load | register | timeout | malformed | duplicate
    message: str


@dataclass
class Registry:
    checks: List[Check] = field(default_factory=list)
    codes: Dict[str, Tuple[Code, str]] = field(default_factory=dict)  # code -> (Code, source)
    problems: List[LoadProblem] = field(default_factory=list)

    def code(self, name: str) -> Optional[Code]:
        hit = self.codes.get(name)
        return hit[0] if hit else None


class BuiltinMissing(RuntimeError):
    """A built-in check module failed to load: the installation is broken (exit 3)."""


@dataclass
class _Builtin:
    """A built-in check module, shaped like an entry point so one loader handles both."""

    name: str

    @property
    def value(self) -> str:
        return f"cudadoctor.checks.{self.name}:register"

    def load(self) -> Any:
        import importlib

        return importlib.import_module(f"cudadoctor.checks.{self.name}").register


def _builtins() -> List[Any]:
    from .checks import BUILTIN_MODULES

    return [_Builtin(name) for name in BUILTIN_MODULES]


def _entry_points() -> List[Any]:
    from importlib import metadata  # ~30 ms: paid in load(), which check runs beside the probes

    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group=GROUP))
    return list(eps.get(GROUP, []))  # Python 3.9


def _source_name(ep: Any) -> str:
    if isinstance(ep, _Builtin):
        return f"{BUILTIN_DIST}:{ep.name}"
    dist = getattr(ep, "dist", None)
    dist_name = getattr(dist, "name", None) or (dist.metadata["Name"] if dist is not None else None)
    return f"{dist_name or '?'}:{ep.name}"


def _is_builtin(ep: Any) -> bool:
    if isinstance(ep, _Builtin):
        return True
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    if name is None and dist is not None:
        name = dist.metadata["Name"]
    return (name or "").lower() == BUILTIN_DIST or str(ep.value).startswith("cudadoctor.checks.")


def _call_bounded(fn: Any, timeout: float) -> Tuple[str, Any]:
    box: List[Tuple[str, Any]] = []

    def target() -> None:
        try:
            box.append(("ok", fn()))
        except BaseException as e:
            box.append(("error", e))

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    return box[0] if box else ("timeout", None)


def load(entry_points: Optional[List[Any]] = None, plugins: Optional[bool] = None) -> Registry:
    """Load every check. ``entry_points`` is injectable for tests."""
    if plugins is None:
        plugins = os.environ.get("CUDADOCTOR_NO_PLUGINS", "") in ("", "0")
    reg = Registry()
    for code in CORE_CODES:
        reg.codes[code.code] = (code, "cudadoctor:core")
    if entry_points is None:
        # Built-ins come from the package; an installed entry point naming one is an old install's.
        eps = _builtins() + [ep for ep in _entry_points() if not str(ep.value).startswith("cudadoctor.checks.")]
    else:
        eps = list(entry_points)
    # Built-ins first, then plugins, each group in name order: deterministic output.
    eps = sorted(eps, key=lambda ep: (not _is_builtin(ep), ep.name))
    seen_values = set()
    for ep in eps:
        if ep.value in seen_values:  # the same distribution visible twice on sys.path
            continue
        seen_values.add(ep.value)
        if not plugins and not _is_builtin(ep):
            continue
        source = _source_name(ep)

        def load_and_register(ep: Any = ep) -> Any:
            obj = ep.load()
            return obj() if callable(obj) else obj

        status, value = _call_bounded(load_and_register, LOAD_TIMEOUT_S)
        if isinstance(ep, _Builtin) and status != "ok":
            raise BuiltinMissing(
                f"built-in checks {ep.value} did not load: "
                f"{'timed out' if status == 'timeout' else f'{type(value).__name__}: {value}'}"
            )
        if status == "timeout":
            reg.problems.append(LoadProblem(source, "timeout", f"loading did not finish within {LOAD_TIMEOUT_S:.0f} s"))
            continue
        if status == "error":
            reg.problems.append(LoadProblem(source, "load", f"{type(value).__name__}: {value}"))
            continue
        if not isinstance(value, (list, tuple)) or not all(isinstance(c, Check) for c in value):
            reg.problems.append(
                LoadProblem(source, "malformed", f"register() returned {type(value).__name__}, not a list of checks")
            )
            continue
        for chk in value:
            if chk.fallback and _is_builtin(ep):  # it reports others' codes as a last resort: it owns none
                chk.source = source
                reg.checks.append(chk)
                continue
            dupes = [c.code for c in chk.codes if c.code in reg.codes and reg.codes[c.code][1] != source]
            if dupes:
                reg.problems.append(
                    LoadProblem(source, "duplicate", f"check {chk.name} declares code(s) already taken: {', '.join(dupes)}")
                )
                continue
            chk.source = source
            reg.checks.append(chk)
            for c in chk.codes:
                reg.codes[c.code] = (c, source)
    return reg


def load_in_background() -> "Callable[[], Registry]":
    """Start :func:`load` in a thread; the returned function waits for it (each plugin's load is
    bounded by LOAD_TIMEOUT_S) and re-raises in the caller whatever the load raised."""
    box: List[Tuple[str, Any]] = []

    def target() -> None:
        try:
            box.append(("ok", load()))
        except BaseException as e:  # handed to the caller, which decides (BuiltinMissing: exit 3)
            box.append(("error", e))

    t = threading.Thread(target=target, daemon=True, name="cudadoctor:registry")
    t.start()

    def wait() -> Registry:
        t.join()
        if not box:
            return load()
        status, value = box[0]
        if status == "error":
            raise value
        return value

    return wait
