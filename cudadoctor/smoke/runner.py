"""Parent side of `cudadoctor smoke`: run workload.py in a child process under a watchdog.

Standard library only; never imports torch. The child writes its result file
progressively; whatever it finished before a crash or a hang is kept, and the
stage it was in becomes a failed stage saying what happened.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

from ..document import envelope
from ..probes import proc

WORKLOAD = Path(__file__).resolve().with_name("workload.py")
STAGES = ("device", "agreement", "training", "throughput", "mixed-precision", "cudnn", "transfers")
KILL_GRACE_S = REAP_BOUND_S = proc.GRACE_S  # SIGTERM -> SIGKILL -> giving up: the supervisor's one grace period
STDERR_TAIL = 6000  # characters of the child's stderr kept for evidence


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _read_result(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _stage(name, device, verdict, message, duration=0.0, evidence=None):
    return {
        "name": name,
        "device": device,
        "verdict": verdict,
        "duration_s": round(duration, 4),
        "message": message,
        "evidence": evidence or {},
    }


def run_smoke(
    python: str,
    device: str,
    data_dir: str | None,
    download: bool,
    synthetic: bool,
    epochs: int | None,
    timeout_s: float,
    progress: bool,
) -> dict:
    """Run the smoke workload with `python` in a child process and return the result (kind cudadoctor-smoke).

    status: "pass" (no stage failed), "fail" (a stage failed, including a crash or a timeout of the child,
    error.kind "crash"/"timeout"), "error" (the check could not be done: error.kind "data-missing",
    "data-corrupt", "download-failed", "bad-interpreter", "internal").
    """
    device = device or "cuda"
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
    with tempfile.TemporaryDirectory(prefix="cudadoctor-smoke-") as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [python, str(WORKLOAD), "--config", json.dumps(cfg), "--out", out]
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
        w = run_watched(cmd, env, progress, timeout_s)
        if isinstance(w, str):
            base["error"] = {"kind": "bad-interpreter", "message": f"cannot run {python}: {w}"}
            return base
        child = _read_result(out)
    return _assemble(base, child, w.rc, w.timed_out, w.killed, w.elapsed, timeout_s, w.stderr_tail)


def _assemble(base, child, rc, timed_out, killed, elapsed, timeout_s, stderr_tail):
    r = base
    r["elapsed_s"] = round(elapsed, 3)
    r["exit_code"] = rc
    if child:
        r["stages"] = child.get("stages", [])
        d = child.get("data") or {}
        r["data"] = {
            "source": d.get("source"),
            "path": d.get("path"),
            "torchvision": d.get("torchvision"),
            **{k: v for k, v in d.items() if k not in ("source", "path", "torchvision", "dir")},
        }
        r["env"] = child.get("env", {})
        r["error"] = child.get("error")
    finished = bool(child) and child.get("state") == "finished"
    if finished and not timed_out and rc is not None and rc >= 0:
        r["status"] = child.get("status") or "error"
        if r["status"] == "error" and not r["error"]:
            r["error"] = {"kind": "internal", "message": "workload reported an error without details", "stderr_tail": stderr_tail}
        return r
    # the child died or hung: the stage it was in fails with what happened
    stage_name, stage_dev, what, kind, dur, ev = died_in_stage(
        child, rc, timed_out, killed, timeout_s, elapsed, stderr_tail, "device", r["device"]
    )
    hint = _hint(stderr_tail)
    if hint:
        ev["hint"] = hint
    r["stages"].append(_stage(stage_name, stage_dev, "fail", what + (f": {hint}" if hint else ""), dur, ev))
    # stages the plan still had are reported as not run
    plan = (child or {}).get("plan") or [[s, stage_dev] for s in STAGES]
    done = {(s["name"], s.get("device")) for s in r["stages"]}
    for name, dev in plan:
        if (name, dev) not in done:
            r["stages"].append(_stage(name, dev, "skip", f"not run: the workload died in '{stage_name}'"))
    r["status"] = "fail"
    r["error"] = {
        "kind": kind,
        "message": what,
        "stage": stage_name,
        "device": stage_dev,
        "signal": ev["signal"],
        "stderr_tail": stderr_tail,
    }
    return r


class Watched:
    """How a watched workload child ended (see :func:`run_watched`)."""

    def __init__(self, rc, timed_out, killed, terminated, elapsed, stderr_tail):
        self.rc, self.timed_out, self.killed, self.terminated = rc, timed_out, killed, terminated
        self.elapsed, self.stderr_tail = elapsed, stderr_tail


class _Terminated(Exception):
    def __init__(self, signame: str):
        super().__init__(signame)
        self.signame = signame


def _on_sigterm():
    """SIGTERM/SIGHUP (the launcher stopping this rank) -> _Terminated; returns the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(num, frame):
        raise _Terminated(_signal_name(num))

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}


def _restore(previous) -> None:
    for sig, h in (previous or {}).items():
        signal.signal(sig, h)


def run_watched(cmd, env, progress, timeout_s, catch_sigterm=False):
    """Run a workload child under the watchdog: a :class:`Watched`, or the OS error as text when it
    cannot start. On timeout the child's whole group is stopped (see ``probes/proc.py``); so it is
    when this process is interrupted (then the exception goes on). With ``catch_sigterm`` a
    SIGTERM/SIGHUP to this process (torchrun stopping every rank when one fails) stops the child and
    is reported as ``terminated`` instead of ending this process without a report."""
    t0 = time.monotonic()
    child = proc.start(cmd, env=env, echo_stderr=bool(progress), tail_bytes=STDERR_TAIL)
    if child.oserror is not None:
        child.cleanup()
        return str(child.oserror)
    terminated = None
    previous = _on_sigterm() if catch_sigterm else None
    try:
        r = child.wait(timeout_s)
    except _Terminated as e:
        terminated = e.signame
        r = child.stop()
    except BaseException:  # Ctrl-C in the parent: do not leave the child running
        child.stop()
        raise
    finally:
        _restore(previous)
    return Watched(r.returncode, r.status == "timeout", r.stopped or None, terminated, time.monotonic() - t0, r.stderr_tail)


def died_in_stage(child, rc, timed_out, killed, timeout_s, elapsed, stderr_tail, default_stage, default_device, terminated=None):
    """For a workload child that died or hung: (stage, device, what happened, kind, duration, evidence).

    The stage is the one the child had marked as under way in its result file.
    """
    current = (child or {}).get("current") or {}
    stage_name = current.get("name") or default_stage
    stage_dev = current.get("device") or default_device
    started = current.get("started_unix")
    dur = (time.time() - started) if started else elapsed
    if terminated:
        what = (
            f"stopped by the launcher ({terminated}) in stage '{stage_name}', after {elapsed:.1f} s: "
            "another rank probably failed first (see its report)"
        )
        kind = "terminated"
    elif timed_out:
        what = f"timed out after {timeout_s:g} s in stage '{stage_name}' ({killed})"
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
        "timed_out": timed_out,
        "stderr_tail": stderr_tail,
    }
    return stage_name, stage_dev, what, kind, dur, ev


def _hint(tail: str) -> str | None:
    for needle, hint in (
        ("illegal memory access", "CUDA illegal memory access"),
        ("CUDA error", "CUDA error (see stderr_tail)"),
        ("Xid", "GPU Xid error"),
        ("No module named 'torch'", "torch is not installed for this interpreter"),
        ("Fatal Python error", "fatal error in the interpreter (see stderr_tail for the Python stack)"),
    ):
        if needle in tail:
            # keep the matching line
            for line in tail.splitlines():
                if needle in line:
                    return line.strip()[:300]
            return hint
    return None
