"""Running other programs with a bound on every wait.

``subprocess.run(timeout=...)`` kills a child on timeout but then waits for it without a bound;
a process stuck in the driver (uninterruptible sleep) never returns. Here every wait is bounded:
the child runs in its own process group, the whole group is killed on timeout, and the wait
after the kill is bounded too. Output goes to temporary files (never pipes that can fill up),
and only the tail is kept.
"""

from __future__ import annotations

import os
import sys
import time

# This module loads before anything else in a live check (probes/prestart.py starts the torch
# probe with it), so it imports only what forking a child needs. subprocess, threading and
# signal (about 6 ms together), and typing, json and tempfile (about 10 ms) load where they
# are used, after the torch probe is on its way.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
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
    import signal

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


def _kill_group(p: "subprocess.Popen | Forked") -> None:
    import signal

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

    def __init__(self, argv: Sequence[str], env: Optional[Dict[str, str]], result_file: bool, forked: bool = False) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.started_at = time.monotonic()
        self.tmpdir = _mkdtemp()
        self.out_path = os.path.join(self.tmpdir, "stdout")
        self.err_path = os.path.join(self.tmpdir, "stderr")
        self.res_path = os.path.join(self.tmpdir, "result.json")
        self.result_file = result_file
        #: the command line the child runs: argv, and the result file when there is one
        self.full_argv = self.argv + ([self.res_path] if result_file else [])
        self.popen: "Optional[subprocess.Popen | Forked]" = None
        self.forked = forked  # started by os.fork (see fork_start), not by exec
        self.error = ""
        self.notify_r: Optional[int] = None
        self.done = False
        _RUNNING.add(self)

    def wait(self, timeout: float) -> ChildResult:
        """Wait until the child is done, at most ``timeout`` seconds after it was started (then kill its group)."""
        try:
            return self._wait(timeout)
        finally:
            self.cleanup()

    def _wait(self, timeout: float) -> ChildResult:
        import signal
        import subprocess

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
            import threading

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
    import subprocess

    st = Started(argv, env, result_file)
    full = st.full_argv
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


def can_fork_python(python: str) -> bool:
    """Whether a probe for ``python`` may run in a fork of this process instead of a new interpreter.

    Only when the child would be indistinguishable from ``python SCRIPT`` started afresh: Linux
    (fork without exec is unsafe on macOS and absent on Windows), the same interpreter, started
    as the console script runs it (``python SCRIPT ARGS``) or as ``python -m cudadoctor ARGS``,
    with no interpreter option (``-X``, ``-W``, ``-I``, ``-E``... change the interpreter's state,
    and ``--python`` may name another interpreter), and no other thread yet.
    """
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    orig = list(getattr(sys, "orig_argv", None) or [])[1:]  # Python 3.10+
    if not (orig[:2] == ["-m", "cudadoctor"] or (orig and not orig[0].startswith("-"))):
        return False
    if "threading" in sys.modules and sys.modules["threading"].active_count() != 1:
        return False
    if sys.stdout is None or sys.stderr is None or not os.path.isdir("/proc/self/fd"):
        return False  # a new interpreter would have streams; the child cleans up fds from /proc
    # The same path, not merely the same file: venvs share one binary and differ by its path.
    return bool(sys.executable) and os.path.abspath(python) == os.path.abspath(sys.executable)


class Forked:
    """A child made by :func:`fork_start`, with the part of ``subprocess.Popen`` that ``Started``
    uses: ``pid``, ``returncode``, ``wait(timeout)`` (raising ``subprocess.TimeoutExpired``),
    ``kill()``. One thread may block in ``wait()`` while another waits with a timeout."""

    def __init__(self, pid: int, args: List[str]) -> None:
        import threading

        self.pid = pid
        self.args = args
        self.returncode: Optional[int] = None
        self._lock = threading.Lock()

    def _reap(self, flags: int) -> bool:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped elsewhere: nothing more to learn
            self.returncode = self.returncode if self.returncode is not None else 0
            return True
        if pid == 0:
            return False
        self.returncode = os.waitstatus_to_exitcode(status)
        return True

    def wait(self, timeout: Optional[float] = None) -> int:
        import subprocess

        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.returncode is None:
            if deadline is None:
                with self._lock:
                    if self.returncode is None:
                        self._reap(0)
                break
            if self._lock.acquire(False):
                try:
                    if self.returncode is None and self._reap(os.WNOHANG):
                        break
                finally:
                    self._lock.release()
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            delay = min(delay * 2, left, 0.05)
            time.sleep(delay)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        import signal

        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


def fork_start(argv: Sequence[str], env: Dict[str, str], result_file: bool = False, notify: bool = False) -> Started:
    """Like :func:`start` for a child script of ours run by this very interpreter (see
    :func:`can_fork_python`), but by ``os.fork`` alone: the child skips the interpreter's start-up
    and everything this process has imported so far, about 30 ms of check's critical path.

    The child becomes exactly what ``python SCRIPT ARGS`` would be: its own session, stdin from
    /dev/null and stdout/stderr to files, the environment ``env`` (for the C library too),
    ``sys.argv`` and ``sys.path[0]`` as an interpreter sets them for a script, standard streams in
    UTF-8 as ``child_env`` asks, and the script run as ``__main__``. It never returns: it ends
    with ``os._exit``.
    """
    st = Started(argv, env, result_file, forked=True)
    script = argv[1]
    child_argv = st.full_argv[1:]  # as sys.argv: the script, then its arguments
    notify_w = None
    try:
        if notify:
            st.notify_r, notify_w = os.pipe()
        for f in (sys.stdout, sys.stderr):
            f.flush()
        pid = os.fork()
    except OSError as e:
        st.error = f"could not start {argv[0]}: {e.strerror or e}"
        if notify_w is not None:
            os.close(notify_w)
        return st
    if pid == 0:  # the child
        try:
            _become_script(st, script, child_argv, env, notify_w)
        finally:
            os._exit(1)
    if notify_w is not None:
        os.close(notify_w)
    st.popen = Forked(pid, list(argv))
    return st


def _become_script(st: Started, script: str, argv: List[str], env: Dict[str, str], notify_w: Optional[int]) -> None:
    """In a fresh fork: turn into ``python SCRIPT ARGV`` and run it (see :func:`fork_start`)."""
    try:
        os.setsid()
        # Only what a new interpreter started by start() would have open: stdio and the pipe.
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd > 2 and fd != notify_w:
                try:
                    os.close(fd)
                except OSError:  # listdir's own, already closed
                    pass
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, st.out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, st.err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            new = os.open(path, flags, 0o600)
            os.dup2(new, fd)
            os.close(new)
        os.environ.clear()
        os.environ.update(env)
        if notify_w is not None:
            os.environ[NOTIFY_FD_ENV] = str(notify_w)
        # The streams as a new interpreter opens them on files, in PYTHONIOENCODING's encoding.
        enc, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
        sys.stdout.reconfigure(encoding=enc or None, errors=errors or "strict", line_buffering=False)
        sys.stderr.reconfigure(encoding=enc or None, errors=errors or "backslashreplace", line_buffering=False)
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.realpath(script))
        import importlib.util

        spec = importlib.util.spec_from_file_location("__main__", script)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules["__main__"] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        os._exit(0)
    except SystemExit as e:
        os._exit(exit_code(e.code))
    except BaseException:
        import traceback

        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


def exit_code(code: object) -> int:
    """What the interpreter would make of ``SystemExit(code)`` (a message goes to stderr, exit 1)."""
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except (AttributeError, ValueError, OSError):
        pass
    return 1


def _notified_before_exit(p: "subprocess.Popen | Forked", notify_fd: int, timeout: float) -> bool:
    """Wait until the child writes its byte (True), or exits, or ``timeout`` passes (False).

    Process exit is watched too, by a thread blocked in wait() that writes to a second pipe: a
    child that dies early, or leaves a forked grandchild holding the notify pipe open, must not
    keep us waiting until the deadline.
    """
    import select
    import threading

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
