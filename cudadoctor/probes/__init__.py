"""Probes: the only code that touches the system. Each is time-bounded and never raises.

``collect()`` starts every probe at once, each in its own thread, and waits for all of them
against one deadline per probe. Anything that imports torch or talks to the driver runs in a
child interpreter (see ``child/``), so a crash or a hang becomes a fact, not our crash.
Every probe records its status (ok | absent | error | timeout), its duration and, when it
failed, why — in ``tool.probes`` and ``probe_errors``.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: see proc.py for why this package imports little
    from typing import Any, Callable, Dict, List, Optional, Tuple

    Job = Callable[[], Tuple[str, Dict[str, Any], str]]

from .. import SCHEMA_VERSION, __version__  # noqa: E402 - after the TYPE_CHECKING block, on purpose
from . import prestart, proc  # noqa: E402

#: Default time budget per probe, in seconds. Importing a CUDA build of torch from a slow disk
#: can take tens of seconds; everything else answers in well under a second when healthy.
DEFAULT_TIMEOUTS = {
    "system": 5.0,
    "environment": 5.0,
    "toolkit": 10.0,
    "nvml": 15.0,
    "pyenv": 20.0,
    "torch": 90.0,
    "windows": 30.0,
}


#: While torch imports, the other probes that start a process take turns, at a lower priority.
#: All at once, they took CPU from the import: about 50 ms of check's time on a 2-CPU machine
#: (measured with 30 paired runs; that is also what leaving them out altogether saves). A probe
#: waits for its turn at most TURN_WAIT_S, so one that hangs holds the others up by no more.
TURN_WAIT_S = 2.0
NICE = 10


def timeouts_from_env(value: Optional[str]) -> Dict[str, float]:
    """Parse CUDADOCTOR_TIMEOUTS, e.g. "torch=30,nvml=5" (seconds per probe). Bad entries are ignored."""
    out: Dict[str, float] = {}
    for part in (value or "").split(","):
        name, _, secs = part.partition("=")
        name = name.strip()
        try:
            v = float(secs)
        except ValueError:
            continue
        if name in DEFAULT_TIMEOUTS and 0.5 <= v <= 3600:
            out[name] = v
    return out


def _torch_facts(r: proc.ChildResult, timeout: float) -> Dict[str, Any]:
    """Turn the torch child's result into the facts' ``torch`` section."""
    data = dict(r.data or {})
    stage = data.get("stage")
    status = data.get("status")
    out: Dict[str, Any] = {k: v for k, v in data.items() if k not in ("probe", "elapsed_s")}
    if status in ("ok", "not-installed", "import-failed"):
        out["status"] = status
        return out
    # The child died or hung before it finished: say where.
    out["status"] = "crashed" if r.status in ("killed", "exited", "ok") else ("timed-out" if r.status == "timeout" else "error")
    out["failed_stage"] = stage or "start"
    detail: Dict[str, Any] = {"how": r.describe()}
    if r.signal is not None:
        detail["signal"] = r.signal
        detail["signal_name"] = proc.signal_name(r.signal)
    if r.status == "timeout":
        detail["timeout_s"] = timeout
    if r.returncode is not None and r.status == "exited":
        detail["exit_code"] = r.returncode
    if r.stderr_tail:
        detail["stderr_tail"] = r.stderr_tail[-2000:]
    if r.status == "error":
        detail["error"] = r.error
    out["failure"] = detail
    if stage == "import" or stage in (None, "start", "find"):
        # Import never finished: that is an import failure of a particular kind.
        out["status"] = "import-failed"
        how = "crashed" if r.status in ("killed", "exited", "ok") else ("hung" if r.status == "timeout" else "error")
        out["error"] = {
            "type": {"crashed": "Crash", "hung": "Timeout", "error": "ProbeError"}[how],
            "message": f"import torch {r.describe()}",
            "how": how,
            "traceback_tail": (r.stderr_tail or "")[-2000:],
        }
    return out


_EARLY = "_early_start_duration_s"
_FORKED = "_early_start_forked"


def _run_torch(python: str, timeout: float, kernel: bool, deep: bool = False) -> Tuple[str, Dict[str, Any], str]:
    argv = prestart.torch_argv(python, kernel, deep)
    started = prestart.adopt(argv)  # started by the entry point before the CLI loaded?
    early = started is not None
    if started is None:
        started = proc.start(argv, env=proc.child_env(), result_file=True, notify=True)
    from . import waitline

    with waitline.showing(started, timeout):  # on a terminal: what we wait for, and for how long
        r = started.wait(timeout)
    facts = _torch_facts(r, timeout)
    if early:
        facts[_EARLY] = round(r.duration_s, 4)
        facts[_FORKED] = started.forked
    if r.stderr_tail:
        facts["stderr_tail"] = r.stderr_tail[-2000:]
    if r.stdout_tail.strip():
        facts["stdout_tail"] = r.stdout_tail[-500:]
    status = (
        "ok"
        if facts.get("status") in ("ok", "not-installed", "import-failed") and r.status != "timeout"
        else ("timeout" if r.status == "timeout" else "error")
    )
    if facts.get("status") == "import-failed" and facts.get("failure"):
        status = "timeout" if r.status == "timeout" else "error"
    return status, facts, "" if status == "ok" else f"torch probe {r.describe()} during stage {facts.get('failed_stage', '?')}"


def _run_simple_child(script: str, python: str, timeout: float, nice: int = 0) -> Tuple[str, Dict[str, Any], str]:
    r = proc.run([python, proc.child_script(script)], timeout=timeout, env=proc.child_env(), result_file=True, nice=nice)
    data = dict(r.data or {})
    data.pop("probe", None)
    if r.status == "ok" and data.get("status") != "running":
        return "ok", data, ""
    msg = r.describe()
    if r.stderr_tail.strip():
        msg += ": " + r.stderr_tail.strip().splitlines()[-1][-300:]
    data["probe_status"] = "timeout" if r.status == "timeout" else "error"
    data.setdefault("stage", None)
    return ("timeout" if r.status == "timeout" else "error"), data, msg


def _toolkit(timeout: float, nice: int = 0) -> Tuple[str, Dict[str, Any], str]:
    from . import system

    data = system.probe_toolkit(timeout=max(0.5, timeout - 1), nice=nice)
    err = str(data.get("nvcc_error") or "")
    if err.startswith("timed out"):
        return "timeout", data, f"{data.get('nvcc')} --version {err}"
    return "ok", data, ""


class _Turns:
    """While torch imports, the probes that start a process run one at a time (see TURN_WAIT_S);
    once it is done, or failed early, they all run at once."""

    def __init__(self) -> None:
        import threading

        self.cv = threading.Condition()
        self.busy = False
        self.open = False

    def taking_turns(self, fn: Callable[[], Tuple[str, Dict[str, Any], str]]) -> Callable[[], Tuple[str, Dict[str, Any], str]]:
        def run() -> Tuple[str, Dict[str, Any], str]:
            with self.cv:  # a free turn, the end of torch's import, or TURN_WAIT_S: whichever first
                self.cv.wait_for(lambda: self.open or not self.busy, TURN_WAIT_S)
                mine = not self.open and not self.busy
                self.busy = self.busy or mine
            try:
                return fn()
            finally:
                if mine:
                    with self.cv:
                        self.busy = False
                        self.cv.notify_all()

        return run

    def opening_after(self, fn: Callable[[], Tuple[str, Dict[str, Any], str]]) -> Callable[[], Tuple[str, Dict[str, Any], str]]:
        def run() -> Tuple[str, Dict[str, Any], str]:
            try:
                return fn()
            finally:
                with self.cv:
                    self.open = True
                    self.cv.notify_all()

        return run


def _in_thread(fn: Callable[[], Tuple[str, Dict[str, Any], str]], timeout: float) -> Tuple[str, Dict[str, Any], str, float]:
    import threading

    box: List[Any] = []
    start = time.monotonic()

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as e:  # a probe never raises: an exception is a fact
            box.append(("error", {}, f"{type(e).__name__}: {e}"))

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    took = time.monotonic() - start
    if not box:
        return "timeout", {}, f"did not finish within {timeout:.0f} s", took
    status, data, err = box[0]
    return status, data, err, took


def _jobs(python: str, quick: bool, kernel: bool, deep: bool, t: Dict[str, float]) -> Tuple[Dict[str, Job], List[str]]:
    """The probes to run, torch first (the long pole), and those that take turns while it imports."""
    from . import system

    jobs: Dict[str, Job] = {}
    if quick:
        prestart.discard()  # the entry point's guess (see prestart.py): no torch probe this time
    else:
        jobs["torch"] = lambda: _run_torch(python, t["torch"], kernel, deep)
    nice = 0 if quick else NICE
    jobs.update(
        {
            "system": lambda: ("ok", system.probe_system(), ""),
            "environment": lambda: ("ok", system.probe_environment(), ""),
            "pyenv": lambda: _run_simple_child("pyenv_probe.py", python, t["pyenv"], nice),
            "nvml": lambda: _run_simple_child("nvml_probe.py", sys.executable, t["nvml"], nice),
            "toolkit": lambda: _toolkit(t["toolkit"], nice),
        }
    )
    if sys.platform == "win32":  # why a torch DLL would not load, read from the files
        jobs["windows"] = lambda: _run_simple_child("windows_probe.py", python, t["windows"], nice)
    # torch imports meanwhile: the other child processes take turns (see TURN_WAIT_S)
    taking_turns: List[str] = [] if quick else [n for n in ("pyenv", "nvml", "toolkit", "windows") if n in jobs]
    if taking_turns:
        turns = _Turns()
        jobs["torch"] = turns.opening_after(jobs["torch"])
        for name in taking_turns:
            jobs[name] = turns.taking_turns(jobs[name])
    return jobs, taking_turns


def _run_all(
    jobs: Dict[str, Job], taking_turns: List[str], t: Dict[str, float]
) -> Dict[str, Tuple[str, Dict[str, Any], str, float]]:
    """Run every job at once, each in its own thread against its own bound (children bound themselves;
    the margin covers the supervisor's SIGTERM and SIGKILL grace periods, and the wait for a turn)."""
    import threading

    results: Dict[str, Tuple[str, Dict[str, Any], str, float]] = {}

    def run(name: str, fn: Job) -> None:
        wait = TURN_WAIT_S if name in taking_turns else 0.0
        results[name] = _in_thread(fn, t[name] + 2 * proc.GRACE_S + 1.0 + wait)

    threads = [threading.Thread(target=run, args=item, daemon=True) for item in jobs.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return results


def collect(
    python: Optional[str] = None,
    quick: bool = False,
    kernel: bool = True,
    timeouts: Optional[Dict[str, float]] = None,
    deep: bool = False,
) -> Dict[str, Any]:
    """Gather live facts. ``python`` is the interpreter to diagnose (default: the user's active
    environment when cudadoctor runs isolated, else this one; see interpreter.py).

    ``quick`` skips importing torch (versions then come from package metadata and
    torch/version.py). ``deep`` imports torchvision/torchaudio fully instead of only loading
    their compiled extensions (slower: torchvision's import costs as much as torch's).
    Never raises.
    """
    # Imported here, not at the top: the entry point loads this package to start the torch probe
    # (prestart.py) before these are needed.
    import datetime as _dt

    from ..facts import new_facts, sanitize
    from .interpreter import choose, plain_python

    python, reason, why = choose(python)  # with no --python: the user's active environment (see interpreter.py)
    on_path, on_path_is_target = plain_python(python)  # whether fixes may say a plain `python -m pip`
    t = dict(DEFAULT_TIMEOUTS)
    t.update(timeouts_from_env(os.environ.get("CUDADOCTOR_TIMEOUTS")))
    t.update(timeouts or {})
    started = time.monotonic()
    facts = new_facts("live")
    jobs, taking_turns = _jobs(python, quick, kernel, deep, t)
    results = _run_all(jobs, taking_turns, t)

    probes: Dict[str, Any] = {}
    for name in jobs:
        status, data, err, took = results.get(name, ("timeout", {}, "did not finish", 0.0))
        probes[name] = {"status": status, "duration_s": round(took, 4)}
        if isinstance(data, dict) and _EARLY in data:  # counted from its early start, not from here
            probes[name].update(duration_s=data.pop(_EARLY), early_start="fork" if data.pop(_FORKED, False) else "exec")
        if err:
            probes[name]["error"] = err
            facts["probe_errors"].append({"probe": name, "status": status, "message": err})
        if name == "pyenv":
            facts["python"] = data.get("python") or {}
            facts["packages"] = {
                k: v for k, v in data.items() if k in ("distributions", "distributions_error", "torch_sources", "duplicates")
            }
            if status != "ok":
                facts["packages"]["probe_status"] = status
        else:
            facts[name] = data
    if quick:
        facts["torch"] = _torch_from_sources(facts)
        probes["torch"] = {"status": "skipped", "duration_s": 0.0}
    facts["tool"] = {
        "name": "cudadoctor",
        "version": __version__,
        "schema_version": SCHEMA_VERSION,
        "collected_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "duration_s": round(time.monotonic() - started, 4),
        "probes": probes,
        "quick": quick,
        "deep": deep,
        "python_target": python,
        "interpreter": {
            "path": python,
            "reason": reason,
            "why": why,
            "python_on_path": on_path,
            "python_on_path_is_target": on_path_is_target,
        },
        "timeouts": t,
    }
    return sanitize(facts)


def _torch_from_sources(facts: Dict[str, Any]) -> Dict[str, Any]:
    """In --quick mode: what torch/version.py says, without importing torch."""
    srcs = facts.get("packages", {}).get("torch_sources") or []
    if not srcs:
        return {"status": "skipped", "source": "version.py", "installed": False}
    s = srcs[0]
    return {
        "status": "skipped",
        "source": "version.py",
        "installed": True,
        "location": os.path.join(s.get("path", ""), "__init__.py"),
        "version": s.get("version"),
        "cuda": s.get("cuda"),
        "hip": s.get("hip"),
        "git_version": s.get("git_version"),
        "debug": s.get("debug"),
    }
