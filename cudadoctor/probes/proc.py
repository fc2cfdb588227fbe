"""Running other programs with a bound on every wait.

``subprocess.run(timeout=...)`` kills a child on timeout but then waits for it without a bound;
a process stuck in the driver (uninterruptible sleep) never returns. Here every wait is bounded:
the child runs in its own process group, the whole group is killed on timeout, and the wait
after the kill is bounded too. Output goes to temporary files (never pipes that can fill up),
and only the tail is kept.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time

# This module loads before anything else in a live check (probes/prestart.py starts the torch
# probe with it), so it imports only what starting a child needs: typing, json and tempfile
# (~10 ms together) are kept out of that path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence

TAIL_BYTES = 4000
KILL_GRACE_S = 2.0
#: Environment variable naming the file descriptor on which a child that supports it writes one
#: byte once its result file is final (see ``run(notify=True)``).
NOTIFY_FD_ENV = "CUDADOCTOR_NOTIFY_FD"

_RUNNING: "set[Started]" = set()  # started and not yet waited for or killed


class ChildResult:
    """What became of a child. A plain class, not a dataclass: this module loads before
    anything else in a live check (see prestart.py), and dataclasses costs 7 ms to import."""

    def __init__(self, status: str, returncode: Optional[int] = None, signal: Optional[int] = None,
                 duration_s: float = 0.0, stdout_tail: str = "", stderr_tail: str = "", error: str = "",
                 data: Optional[Dict[str, Any]] = None, stuck: bool = False) -> None:
        self.status = status  # ok | exited | killed | timeout | error
        self.returncode = returncode
        self.signal = signal
        self.duration_s = duration_s
        self.stdout_tail = stdout_tail
        self.stderr_tail = stderr_tail
        self.error = error
        self.data = data  # the JSON the child wrote to its result file
        self.stuck = stuck  # the child did not go away even after SIGKILL within the grace period

    def __repr__(self) -> str:
        return f"ChildResult(status={self.status!r}, returncode={self.returncode!r}, signal={self.signal!r})"

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
    notify: bool = False,
    nice: int = 0,
) -> ChildResult:
    """Run ``argv`` (no shell) with a hard bound of about ``timeout + KILL_GRACE_S`` seconds.

    With ``result_file=True`` the path of a fresh temporary file is appended to ``argv``; the
    child writes its JSON result there (progressively, by atomic rename), so whatever it wrote
    before a crash is still read back into ``ChildResult.data``.

    With ``notify=True`` (POSIX) the child also gets a pipe, named by ``CUDADOCTOR_NOTIFY_FD``,
    and writes one byte to it once its result is final. The wait then ends at that moment: the
    parent neither polls nor waits for the kernel to unmap a torch-sized process (about 50 ms
    here); the child, already on its way out, is killed and reaped in the background.
    """
    return start(argv, env=env, result_file=result_file, cwd=cwd, notify=notify, nice=nice).wait(timeout)


def _mkdtemp() -> str:
    """tempfile.mkdtemp(prefix="cudadoctor-") without importing tempfile (and shutil, random...).

    POSIX: the first of $TMPDIR, $TEMP, $TMP, /tmp, /var/tmp, /usr/tmp that is a writable
    directory, as tempfile picks it; a fresh name made private (0700). Elsewhere: tempfile.
    """
    if os.name == "posix":
        for base in [os.environ.get(v) for v in ("TMPDIR", "TEMP", "TMP")] + ["/tmp", "/var/tmp", "/usr/tmp"]:
            if not base or not os.path.isdir(base) or not os.access(base, os.W_OK | os.X_OK):
                continue
            for _ in range(20):
                path = os.path.join(os.path.abspath(base), "cudadoctor-" + os.urandom(6).hex())
                try:
                    os.mkdir(path, 0o700)
                    return path
                except FileExistsError:
                    continue
                except OSError:
                    break
    import tempfile

    return tempfile.mkdtemp(prefix="cudadoctor-")


def kill_running() -> None:
    """Kill every child still running (the process is ending: Ctrl-C, an error). Children run in
    their own process group, so the terminal's Ctrl-C does not reach them; this does."""
    for st in list(_RUNNING):
        st.kill()


class Started:
    """A child started by :func:`start`; :meth:`wait` bounds it and collects its result, once."""

    def __init__(self, argv: List[str], result_file: bool) -> None:
        self.argv = argv
        self.started_at = time.monotonic()
        self.tmpdir = _mkdtemp()
        self.out_path = os.path.join(self.tmpdir, "stdout")
        self.err_path = os.path.join(self.tmpdir, "stderr")
        self.res_path = os.path.join(self.tmpdir, "result.json")
        self.result_file = result_file
        self.popen: Optional[subprocess.Popen] = None
        self.error = ""
        self.notify_r: Optional[int] = None
        self.env: Optional[Dict[str, str]] = None
        self.done = False

    def wait(self, timeout: float) -> ChildResult:
        """Wait until the child is done, at most ``timeout`` seconds after it was started (then kill its group)."""
        try:
            return self._wait(timeout)
        finally:
            self.cleanup()

    def _wait(self, timeout: float) -> ChildResult:
        res = ChildResult(status="error")
        p = self.popen
        if p is None:
            res.error = self.error
            res.duration_s = time.monotonic() - self.started_at
            return res
        left = lambda: max(0.0, timeout - (time.monotonic() - self.started_at))  # noqa: E731
        try:
            if self.notify_r is not None and _notified_before_exit(p, self.notify_r, left()):
                # The result is final. The child's only remaining act is os._exit: do not
                # wait for the kernel to tear it down (it is reaped in the background).
                _kill_group(p)
                res.status, res.returncode = "ok", 0
                res.duration_s = time.monotonic() - self.started_at
                self._read_outputs(res)
                return res
            rc = p.wait(timeout=left())
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
        res.duration_s = time.monotonic() - self.started_at
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
        self._read_outputs(res)
        return res

    def _read_outputs(self, res: ChildResult) -> None:
        res.stdout_tail = _tail(self.out_path)
        res.stderr_tail = _tail(self.err_path)
        if self.result_file:
            res.data = read_result(self.res_path)

    def kill(self) -> None:
        """Give up on the child: kill its group, reap it in the background, remove its files."""
        if self.popen is not None and not self.done:
            _kill_group(self.popen)
            threading.Thread(target=self.popen.wait, daemon=True).start()
        self.cleanup()

    def cleanup(self) -> None:
        if self.done:
            return
        self.done = True
        _RUNNING.discard(self)
        if self.notify_r is not None:
            os.close(self.notify_r)
        for pth in (self.out_path, self.err_path, self.res_path, self.res_path + ".tmp"):
            try:
                os.unlink(pth)
            except OSError:
                pass
        try:
            os.rmdir(self.tmpdir)
        except OSError:
            pass


def start(
    argv: Sequence[str],
    env: Optional[Dict[str, str]] = None,
    result_file: bool = False,
    cwd: Optional[str] = None,
    notify: bool = False,
    nice: int = 0,
) -> Started:
    """Start ``argv`` in its own process group (see :func:`run`); never raises.

    ``Started.argv`` is ``argv`` as given (without the result file), so a caller can tell whether
    a child started earlier is the one it wants (see ``probes/prestart.py``).
    """
    st = Started(list(argv), result_file)
    _RUNNING.add(st)
    st.env = dict(env) if env is not None else None
    full = list(argv) + ([st.res_path] if result_file else [])
    notify_w = None
    if notify and os.name == "posix":
        st.notify_r, notify_w = os.pipe()
        env = dict(os.environ if env is None else env)
        env[NOTIFY_FD_ENV] = str(notify_w)
    kwargs: Dict[str, Any] = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True
        if notify_w is not None:
            kwargs["pass_fds"] = (notify_w,)
    else:
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    try:
        with open(st.out_path, "wb") as out, open(st.err_path, "wb") as err:
            st.popen = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd, **kwargs)
        if nice and hasattr(os, "setpriority"):
            try:
                os.setpriority(os.PRIO_PROCESS, st.popen.pid, nice)
            except OSError:
                pass
    except OSError as e:
        st.error = f"could not start {full[0]}: {e.strerror or e}"
    finally:
        if notify_w is not None:
            os.close(notify_w)
    return st


def _notified_before_exit(p: subprocess.Popen, notify_fd: int, timeout: float) -> bool:
    """Wait until the child writes its byte (True), or exits, or ``timeout`` passes (False).

    Process exit is watched too, by a thread blocked in wait() that writes to a second pipe: a
    child that dies early, or leaves a forked grandchild holding the notify pipe open, must not
    keep us waiting until the deadline.
    """
    exit_r, exit_w = os.pipe()

    def reap() -> None:
        try:
            p.wait()
            os.write(exit_w, b"x")
        except OSError:  # the parent already stopped listening
            pass
        finally:
            os.close(exit_w)

    threading.Thread(target=reap, daemon=True).start()
    watch = [notify_fd, exit_r]
    deadline = time.monotonic() + max(0.0, timeout)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                ready, _, _ = select.select(watch, [], [], left)
            except InterruptedError:
                continue
            if not ready or exit_r in ready:
                return False
            try:
                if os.read(notify_fd, 1):
                    return True
            except OSError:
                pass
            watch = [exit_r]  # the child closed the pipe without a word: wait for its exit
    finally:
        os.close(exit_r)


def read_result(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, "rb") as f:
            import json

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
