"""Parent side of `cudadoctor smoke`: run workload.py in a child process under a watchdog.

Standard library only; never imports torch. The child writes its result file progressively; whatever
it finished before a crash or a hang is kept, and the stage it was in becomes a failed stage saying what
happened.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..document import envelope
from ..probes import proc
from .kit import stage_row

WORKLOAD = Path(__file__).resolve().with_name("workload.py")
STAGES = ("device", "agreement", "training", "throughput", "mixed-precision", "cudnn", "transfers")
KILL_GRACE_S = REAP_BOUND_S = proc.GRACE_S  # SIGTERM -> SIGKILL -> giving up: the supervisor's one grace period
STDERR_TAIL = 6000  # characters of the child's stderr kept for evidence


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def run_child(python: str, script: Path, cfg: dict, progress: bool, timeout_s: float, catch_sigterm: bool = False):
    """Run a workload script with its config under :func:`run_watched`: (Watched, its result file or None),
    or (the OS error as text, None) when ``python`` cannot start."""
    with tempfile.TemporaryDirectory(prefix="cudadoctor-smoke-") as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [python, str(script), "--config", json.dumps(cfg), "--out", out]
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
        w = run_watched(cmd, env, progress, timeout_s, catch_sigterm)
        try:
            with open(out) as f:
                return w, json.load(f)
        except (OSError, ValueError):
            return w, None


def run_smoke(
    python: str,
    device: str,
    data_dir: str | None,
    download: bool,
    synthetic: bool,
    epochs: int | None,
    timeout_s: float,
    progress: bool,
    fetch: bool = False,
) -> dict:
    """Run the smoke workload with `python` in a child process: the result (kind cudadoctor-smoke), whose status
    is "pass", "fail" (a stage failed, a crash or a timeout of the child too) or "error" (the check could not
    be made: data missing or corrupt, a failed download, a bad interpreter; docs/smoke.md). With ``fetch``, MNIST
    missing from the usual places (or --data-dir) is downloaded first, saying so on stderr."""
    device = device or "cuda"
    fetch_error = None
    if fetch and not synthetic and not download:
        from . import data

        try:
            data_dir = data.ensure_mnist(data_dir, lambda line: print(line, file=sys.stderr, flush=True))
        except data.DataError as e:
            fetch_error = e.to_dict()
    cfg = {
        "device": device,
        "data_dir": data_dir,
        "download": bool(download),
        "synthetic": bool(synthetic),
        "epochs": epochs,
        "progress": bool(progress),
        "timeout_s": timeout_s,
    }
    base = envelope(
        "cudadoctor-smoke",
        {
            "device": device,
            "status": "error",
            "stages": [],
            "data": {"source": "synthetic" if synthetic else None, "path": None, "torchvision": None},
            "error": None,
            "timeout_s": timeout_s,
            "python": python,
        },
    )
    if fetch_error:
        base["error"] = fetch_error
        return base
    w, child = run_child(python, WORKLOAD, cfg, progress, timeout_s)
    if isinstance(w, str):
        base["error"] = {"kind": "bad-interpreter", "message": f"cannot run {python}: {w}"}
        return base
    return _assemble(base, child, w, timeout_s)


def _assemble(r: dict, child: dict | None, w: Watched, timeout_s: float) -> dict:
    r["elapsed_s"] = round(w.elapsed, 3)
    r["exit_code"] = w.rc
    if child:
        r["stages"] = child.get("stages", [])
        d = child.get("data") or {}
        r["data"] = {"source": None, "path": None, "torchvision": None, **{k: v for k, v in d.items() if k != "dir"}}
        r["env"] = child.get("env", {})
        r["error"] = child.get("error")
    if child and child.get("state") == "finished" and not w.timed_out and w.rc is not None and w.rc >= 0:
        r["status"] = child.get("status") or "error"
        if r["status"] == "error" and not r["error"]:
            why = "workload reported an error without details"
            r["error"] = {"kind": "internal", "message": why, "stderr_tail": w.stderr_tail}
        return r
    # the child died or hung: the stage it was in fails with what happened
    stage_name, stage_dev, what, kind, dur, ev = died_in_stage(child, w, timeout_s, "device", r["device"])
    hint = _hint(w.stderr_tail)
    if hint:
        ev["hint"] = hint
    r["stages"].append(stage_row(stage_name, stage_dev, "fail", what + (f": {hint}" if hint else ""), dur, ev))
    # stages the plan still had are reported as not run
    plan = (child or {}).get("plan") or [[s, stage_dev] for s in STAGES]
    done = {(s["name"], s.get("device")) for s in r["stages"]}
    for name, dev in plan:
        if (name, dev) not in done:
            r["stages"].append(stage_row(name, dev, "skip", f"not run: the workload died in '{stage_name}'"))
    r["status"] = "fail"
    r["error"] = {
        "kind": kind,
        "message": what,
        "stage": stage_name,
        "device": stage_dev,
        "signal": ev["signal"],
        "stderr_tail": w.stderr_tail,
    }
    return r


class Watched:
    """How a watched workload child ended (see :func:`run_watched`)."""

    def __init__(self, rc, timed_out, killed, terminated, elapsed, stderr_tail):
        self.rc, self.timed_out, self.killed, self.terminated = rc, timed_out, killed, terminated
        self.elapsed, self.stderr_tail = elapsed, stderr_tail


class Terminated(BaseException):
    """SIGTERM/SIGHUP: the launcher stopping this rank. A BaseException, so that no `except Exception` around
    a store call swallows it."""


def raise_terminated(num, frame):
    """The signal handler that turns SIGTERM/SIGHUP into :class:`Terminated`, once: the report must still be
    written after it."""
    signal.signal(num, signal.SIG_IGN)
    raise Terminated(_signal_name(num))


def run_watched(cmd, env, progress, timeout_s, catch_sigterm=False):
    """Run a workload child under the watchdog: a :class:`Watched`, or the OS error as text when it cannot
    start. On timeout, or when this process is interrupted, the child's whole group is stopped. With
    ``catch_sigterm`` a SIGTERM/SIGHUP (torchrun stopping every rank when one fails) stops the child and is
    reported as ``terminated``, instead of ending this process without a report."""
    t0 = time.monotonic()
    child = proc.start(cmd, env=env, echo_stderr=bool(progress), tail_bytes=STDERR_TAIL)
    if child.oserror is not None:
        child.cleanup()
        return str(child.oserror)
    terminated, previous = None, {}
    if catch_sigterm and threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, raise_terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        r = child.wait(timeout_s)
    except Terminated as e:
        terminated = str(e)
        r = child.stop()
    except BaseException:  # Ctrl-C in the parent: do not leave the child running
        child.stop()
        raise
    finally:
        for sig, h in previous.items():
            signal.signal(sig, h)
    return Watched(r.returncode, r.status == "timeout", r.stopped or None, terminated, time.monotonic() - t0, r.stderr_tail)


def died_in_stage(child: dict | None, w: Watched, timeout_s: float, default_stage: str, default_device: str):
    """For a workload child that died or hung: (stage, device, what happened, kind, duration, evidence).
    The stage is the one the child had marked as under way in its result file."""
    current = (child or {}).get("current") or {}
    stage_name = current.get("name") or default_stage
    stage_dev = current.get("device") or default_device
    started = current.get("started_unix")
    dur = (time.time() - started) if started else w.elapsed
    rc = w.rc
    if w.terminated:
        what = (
            f"stopped by the launcher ({w.terminated}) in stage '{stage_name}', after {w.elapsed:.1f} s: "
            "another rank probably failed first (see its report)"
        )
        kind = "terminated"
    elif w.timed_out:
        what = f"timed out after {timeout_s:g} s in stage '{stage_name}' ({w.killed})"
        kind = "timeout"
    elif rc is not None and rc < 0:
        what = f"child killed by signal {-rc} ({_signal_name(-rc)}) in stage '{stage_name}'"
        kind = "crash"
    else:
        what = (
            f"child exited with code {rc} in stage '{stage_name}' without finishing"
            if child
            else f"child exited with code {rc} before writing any result"
        )
        kind = "crash"
    ev = {
        "exit_code": rc,
        "signal": -rc if (rc is not None and rc < 0) else None,
        "timed_out": w.timed_out,
        "stderr_tail": w.stderr_tail,
    }
    return stage_name, stage_dev, what, kind, dur, ev


def _hint(tail: str) -> str | None:
    """The first line of the child's stderr that names a known cause (a CUDA error, an Xid, no torch...)."""
    for needle in ("illegal memory access", "CUDA error", "Xid", "No module named 'torch'", "Fatal Python error"):
        line = next((ln.strip()[:300] for ln in tail.splitlines() if needle in ln), None)
        if line:
            return line
    return None
