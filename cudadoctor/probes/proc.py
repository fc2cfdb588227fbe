"""Running other programs with a bound on every wait.

``subprocess.run(timeout=...)`` kills a child on timeout but then waits for it without a bound;
a process stuck in the driver (uninterruptible sleep) never returns. Here every wait is bounded:
the child runs in its own process group, the whole group is killed on timeout, and the wait
after the kill is bounded too. Output goes to temporary files (never pipes that can fill up),
and only the tail is kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

TAIL_BYTES = 4000
KILL_GRACE_S = 2.0


@dataclass
class ChildResult:
    status: str  # ok | exited | killed | timeout | error
    returncode: Optional[int] = None
    signal: Optional[int] = None
    duration_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    error: str = ""
    data: Optional[Dict[str, Any]] = None  # the JSON the child wrote to its result file
    stuck: bool = False  # the child did not go away even after SIGKILL within the grace period

    def describe(self) -> str:
        if self.status == "timeout":
            extra = " and did not exit after SIGKILL" if self.stuck else ""
            return f"timed out after {self.duration_s:.0f} s{extra}"
        if self.status == "killed":
            return f"killed by signal {self.signal} ({signal_name(self.signal)})"
        if self.status == "exited":
            return f"exited with code {self.returncode}"
        if self.status == "error":
            return self.error
        return "ok"


def signal_name(sig: Optional[int]) -> str:
    if sig is None:
        return "?"
    try:
        return signal.Signals(sig).name
    except (ValueError, AttributeError):
        return f"signal {sig}"


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _kill_group(p: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(p.pid, signal.SIGKILL)
        else:
            p.kill()
    except (ProcessLookupError, PermissionError, OSError):
        try:
            p.kill()
        except OSError:
            pass


def run(
    argv: Sequence[str],
    timeout: float,
    env: Optional[Dict[str, str]] = None,
    result_file: bool = False,
    cwd: Optional[str] = None,
) -> ChildResult:
    """Run ``argv`` (no shell) with a hard bound of about ``timeout + KILL_GRACE_S`` seconds.

    With ``result_file=True`` the path of a fresh temporary file is appended to ``argv``; the
    child writes its JSON result there (progressively, by atomic rename), so whatever it wrote
    before a crash is still read back into ``ChildResult.data``.
    """
    start = time.monotonic()
    tmpdir = tempfile.mkdtemp(prefix="cudadoctor-")
    out_path = os.path.join(tmpdir, "stdout")
    err_path = os.path.join(tmpdir, "stderr")
    res_path = os.path.join(tmpdir, "result.json")
    argv = list(argv) + ([res_path] if result_file else [])
    res = ChildResult(status="error")
    try:
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            kwargs: Dict[str, Any] = {}
            if os.name == "posix":
                kwargs["start_new_session"] = True
            else:
                kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
            try:
                p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd, **kwargs)
            except OSError as e:
                res.error = f"could not start {argv[0]}: {e.strerror or e}"
                res.duration_s = time.monotonic() - start
                return res
            try:
                rc = p.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(p)
                try:
                    rc = p.wait(timeout=KILL_GRACE_S)
                except subprocess.TimeoutExpired:
                    rc = None
                    res.stuck = True
            # A child that exited may leave grandchildren in its group (e.g. a helper it spawned).
            if os.name == "posix" and not res.stuck:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        res.duration_s = time.monotonic() - start
        res.returncode = rc
        if timed_out:
            res.status = "timeout"
            res.duration_s = min(res.duration_s, timeout)
        elif rc is not None and rc < 0:
            res.status, res.signal = "killed", -rc
        elif rc is not None and os.name == "nt" and rc in (0xC0000005, -1073741819):
            res.status, res.signal = "killed", 11  # access violation, the Windows segfault
        elif rc == 0:
            res.status = "ok"
        else:
            res.status = "exited"
        res.stdout_tail = _tail(out_path)
        res.stderr_tail = _tail(err_path)
        if result_file:
            res.data = read_result(res_path)
        return res
    finally:
        for pth in (out_path, err_path, res_path, res_path + ".tmp"):
            try:
                os.unlink(pth)
            except OSError:
                pass
        try:
            os.rmdir(tmpdir)
        except OSError:
            pass


def read_result(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(16 * 1024 * 1024).decode("utf-8", "replace"))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def child_script(name: str) -> str:
    """Path of a standalone child script shipped in cudadoctor/probes/child/."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "child", name)


def child_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment for probe children: the user's own, so they see what the user sees."""
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.pop("PYTHONBREAKPOINT", None)
    if extra:
        env.update(extra)
    return env
