"""The torch probe's early start by fork, without exec: the parts of it that do not need a :class:`~.proc.Child`.

:func:`proc.fork_start <cudadoctor.probes.proc.fork_start>` forks this very interpreter and turns the
fork into ``python SCRIPT ARGS`` (:func:`become_script`), so the probe skips the interpreter's
start-up; :func:`can_fork_python` says when that child is indistinguishable from a new interpreter;
:class:`Forked` gives the supervisor the part of ``subprocess.Popen`` it uses.

Imported by proc.py on the entry point's early path: like it, this imports only what is already loaded.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time


def can_fork_python(python: str) -> bool:
    """Whether a probe for ``python`` may run in a fork of this process instead of a new interpreter.

    Only when the child would be indistinguishable from ``python SCRIPT`` started afresh: Linux
    (fork without exec is unsafe on macOS and absent on Windows), the same interpreter, started as
    the console script runs it (``python SCRIPT ARGS``) or as ``python -m cudadoctor ARGS``, with no
    interpreter option (``-X``, ``-W``, ``-I``... change the interpreter's state), and no other thread yet.
    """
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    orig = list(getattr(sys, "orig_argv", None) or [])[1:]  # Python 3.10+
    if not (orig[:2] == ["-m", "cudadoctor"] or (orig and not orig[0].startswith("-"))):
        return False
    if threading.active_count() != 1:
        return False
    if sys.stdout is None or sys.stderr is None or not os.path.isdir("/proc/self/fd"):
        return False  # a new interpreter would have streams; the child cleans up fds from /proc
    # The same path, not merely the same file: venvs share one binary and differ by its path.
    return bool(sys.executable) and os.path.abspath(python) == os.path.abspath(sys.executable)


class Forked:
    """A child made by :func:`fork_start`, with the part of ``subprocess.Popen`` the supervisor uses:
    ``pid``, ``returncode``, ``poll()``, ``wait(timeout)`` (raising ``subprocess.TimeoutExpired``),
    ``terminate()``, ``kill()``. One thread may block in ``wait()`` while another waits with a timeout."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid, self.args = pid, args
        self.returncode: int | None = None
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

    def poll(self) -> int | None:
        with self._lock:
            if self.returncode is None:
                self._reap(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
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
                import subprocess

                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            delay = min(delay * 2, left, 0.05)
            time.sleep(delay)
        return self.returncode  # type: ignore[return-value]

    def _send(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except OSError:
                pass

    def terminate(self) -> None:
        self._send(signal.SIGTERM)

    def kill(self) -> None:
        self._send(signal.SIGKILL)


def become_script(script: str, argv: list[str], env: dict[str, str], out_path: str, err_path: str, keep_fd: int | None) -> None:
    """In a fresh fork: turn into ``python SCRIPT ARGV`` and run it; never returns (see ``proc.fork_start``).

    Its own session; of the descriptors, only ``keep_fd`` (the notify pipe) and the standard ones,
    stdin from /dev/null and stdout, stderr to ``out_path``, ``err_path``; the environment ``env``."""
    try:
        os.setsid()
        for name in os.listdir("/proc/self/fd"):  # only what a new interpreter would have open
            fd = int(name)
            if fd > 2 and fd != keep_fd:
                try:
                    os.close(fd)
                except OSError:  # listdir's own, already closed
                    pass
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            new = os.open(path, flags, 0o600)
            os.dup2(new, fd)
            os.close(new)
        os.environ.clear()
        os.environ.update(env)
        # The streams as a new interpreter opens them on files, in PYTHONIOENCODING's encoding.
        enc, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
        sys.stdout.reconfigure(encoding=enc or None, errors=errors or "strict", line_buffering=False)  # type: ignore[union-attr]
        sys.stderr.reconfigure(encoding=enc or None, errors=errors or "backslashreplace", line_buffering=False)  # type: ignore[union-attr]
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
