"""The one child-process supervisor: probes and smoke start every other program through it.

``subprocess.run(timeout=...)`` kills a child on timeout but then waits for it without a bound; a
process stuck in the driver (uninterruptible sleep) never returns. Here every wait is bounded:

- start: an argument list (never a shell), in its own session, so its whole process group can be
  signalled; stdin from /dev/null, stdout and stderr to files (pipes fill up and block the child),
  or stderr through a pump that also shows it live;
- wait: at most ``timeout`` seconds from the start;
- stop (on timeout, on request): SIGTERM to the group, :data:`GRACE_S` to go, SIGKILL to the group,
  at most :data:`GRACE_S` more to reap it; a child still there after that is recorded as ``stuck``
  and reaped in the background;
- after the child exits, whatever it left in its group is killed: a grandchild holding a pipe or a
  GPU never outlives the wait. So a wait ends within ``timeout + 2 * GRACE_S`` whatever the child does.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from .forkstart import Forked, become_script
from .forkstart import can_fork_python as can_fork_python  # the early start's API, here with fork_start
from .forkstart import exit_code as exit_code

# The entry point imports this module to start the torch probe before anything else (prestart.py):
# every import here delays that start. subprocess, json, tempfile, dataclasses and typing (together
# 45 ms to 170 ms on the project's 2-CPU machine) load where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence
    from typing import IO, Any

#: The one grace period: from SIGTERM to SIGKILL, and from SIGKILL to giving up on the reap.
GRACE_S = 2.0
TAIL_BYTES = 4000
#: Environment variable naming the file descriptor on which a child that supports it writes one
#: byte once its result file is final (see ``start(notify=True)``).
NOTIFY_FD_ENV = "CUDADOCTOR_NOTIFY_FD"
_SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows has no SIGKILL: Popen.kill() there

_RUNNING: set[Child] = set()  # started and not yet waited for or killed


class ChildResult:
    """What became of a child (a plain class: dataclasses costs 17 ms to import; see above)."""

    def __init__(self, status: str, returncode: int | None = None, duration_s: float = 0.0) -> None:
        self.status = status  # ok | exited | killed | timeout | error
        self.returncode = returncode
        self.signal: int | None = None
        self.duration_s = duration_s
        self.stdout_tail = ""
        self.stderr_tail = ""
        self.error = ""
        self.data: dict[str, Any] | None = None  # the JSON the child wrote to its result file
        self.stuck = False  # still there GRACE_S after SIGKILL
        self.stopped = ""  # when we stopped it: how it went (see stop_group), else ""

    def __repr__(self) -> str:
        return f"ChildResult({self.status!r}, returncode={self.returncode!r}, signal={self.signal!r}, stopped={self.stopped!r})"

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


def signal_name(sig: int | None) -> str:
    if sig is None:
        return "?"
    try:
        return signal.Signals(sig).name
    except (ValueError, AttributeError):
        return f"signal {sig}"


def _tail(path: str, size: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _signal_group(p: subprocess.Popen | Forked, sig: int) -> None:
    """Send ``sig`` to the child's process group (its session); the child alone where there are none."""
    try:
        if os.name == "posix":
            os.killpg(p.pid, sig)
            return
    except OSError:  # the group is gone, or not ours to signal: try the child itself
        pass
    try:
        if sig != _SIGKILL:
            p.terminate()
        else:
            p.kill()
    except OSError:
        pass


def stop_group(p: subprocess.Popen | Forked) -> str:
    """SIGTERM the group, wait up to GRACE_S, SIGKILL the group, wait up to GRACE_S more. Says what it took."""
    import subprocess

    _signal_group(p, signal.SIGTERM)
    try:
        p.wait(timeout=GRACE_S)
        return "terminated (SIGTERM)"
    except subprocess.TimeoutExpired:
        pass
    _signal_group(p, _SIGKILL)
    try:
        p.wait(timeout=GRACE_S)
        return "killed (SIGKILL)"
    except subprocess.TimeoutExpired:
        threading.Thread(target=p.wait, daemon=True).start()
        return f"still alive {GRACE_S:.0f} s after SIGKILL (uninterruptible, probably stuck in the GPU driver); abandoned"


class StderrPump(threading.Thread):
    """Read a child's stderr pipe to its end: keep the tail, and show it live on our stderr when ``echo``."""

    def __init__(self, stream: IO[bytes], echo: bool, limit: int = TAIL_BYTES) -> None:
        super().__init__(daemon=True)
        self.stream, self.echo, self.limit = stream, echo, limit
        self.buf = bytearray()

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self.stream.fileno(), 65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            if self.echo:
                try:
                    sys.stderr.write(chunk.decode("utf-8", "replace"))
                    sys.stderr.flush()
                except (OSError, ValueError, AttributeError):
                    pass
            self.buf += chunk
            if len(self.buf) > 4 * self.limit:
                del self.buf[: -self.limit]

    def tail(self) -> str:
        """The last ``limit`` bytes as text; of a progress bar (lines redrawn with \\r), its last state."""
        text = bytes(self.buf[-self.limit :]).decode("utf-8", "replace")
        return "\n".join(line.split("\r")[-1] for line in text.split("\n")).strip()  # not splitlines(), which splits at CR too


_STOPPING = threading.Event()  # set by kill_running: no child may start (or outlive us) after it


def kill_running() -> None:
    """Kill every child still running (the process is ending: Ctrl-C, an error). Children run in
    their own process group, so the terminal's Ctrl-C does not reach them; this does. A probe thread
    still inside :func:`start` then starts nothing, or kills what it just started (:func:`_started`)."""
    _STOPPING.set()
    for ch in list(_RUNNING):
        ch.kill()


def _started(ch: "Child") -> "Child":
    """A child whose process came up after :func:`kill_running` (or after its own :meth:`Child.kill`) goes at once:
    the race in which a probe thread was between creating its Child and starting its process while Ctrl-C was handled."""
    if ch.popen is not None and (_STOPPING.is_set() or ch.done):
        _signal_group(ch.popen, _SIGKILL)
        threading.Thread(target=ch.popen.wait, daemon=True).start()
        ch.cleanup()
    return ch


class Child:
    """A child started by :func:`start`; :meth:`wait` bounds it and collects its result, once."""

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None, result_file: bool, tail_bytes: int = TAIL_BYTES) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.started_at = time.monotonic()
        import tempfile  # 7 ms on the early start's path: less than a copy of mkdtemp is worth

        self.tmpdir = tempfile.mkdtemp(prefix="cudadoctor-")
        self.out_path = os.path.join(self.tmpdir, "stdout")
        self.err_path = os.path.join(self.tmpdir, "stderr")
        self.res_path = os.path.join(self.tmpdir, "result.json")
        self.result_file = result_file
        self.tail_bytes = tail_bytes
        #: the command line the child runs: argv, and the result file when there is one
        self.full_argv = self.argv + ([self.res_path] if result_file else [])
        self.popen: subprocess.Popen | Forked | None = None
        self.pump: StderrPump | None = None
        self.forked = False  # started by fork_start, not by exec
        self.error = ""
        self.oserror: OSError | None = None  # why it could not start
        self.notify_r: int | None = None
        self.done = False
        _RUNNING.add(self)

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def stage(self) -> str | None:
        """The ``stage`` the child last wrote to its result file (None if none yet)."""
        data = read_result(self.res_path) if self.result_file else None
        stage = (data or {}).get("stage")
        return stage if isinstance(stage, str) else None

    def wait(self, timeout: float) -> ChildResult:
        """Wait until the child is done, at most ``timeout`` seconds after it was started; then
        stop its group (see :func:`stop_group`). An exception while waiting (Ctrl-C, a signal
        handler's) leaves the child to the caller: :meth:`stop`, :meth:`kill` or :func:`kill_running`."""
        res = self._wait(timeout)
        self.cleanup()
        return res

    def stop(self) -> ChildResult:
        """Stop the child now (SIGTERM, then SIGKILL; see :func:`stop_group`) and collect what it left."""
        res = self._wait(0.0, stopping=True)
        self.cleanup()
        return res

    def _wait(self, timeout: float, stopping: bool = False) -> ChildResult:
        import subprocess

        p = self.popen
        if p is None:
            res = ChildResult(status="error", duration_s=self.elapsed())
            res.error = self.error
            return res
        left = lambda: 0.0 if stopping else max(0.0, timeout - self.elapsed())  # noqa: E731
        if not stopping and self.notify_r is not None and _notified_before_exit(p, self.notify_r, left()):
            # The result is final; the child's only remaining act is os._exit: do not wait for
            # the kernel to tear it down (it is reaped in the background).
            _signal_group(p, _SIGKILL)
            threading.Thread(target=p.wait, daemon=True).start()
            return self._collect(ChildResult(status="ok", returncode=0, duration_s=self.elapsed()))
        res = ChildResult(status="error")
        try:
            rc: int | None = p.wait(timeout=left())
        except subprocess.TimeoutExpired:
            res.stopped = stop_group(p)
            res.stuck = res.stopped.startswith("still alive")
            rc = p.returncode
        if os.name == "posix" and not res.stuck:  # what it left in its group (a helper it spawned) goes too
            _signal_group(p, _SIGKILL)
        res.duration_s, res.returncode = self.elapsed(), rc
        if res.stopped and not stopping:
            res.status, res.duration_s = "timeout", min(res.duration_s, timeout)
        elif rc is not None and rc < 0:
            res.status, res.signal = "killed", -rc
        elif rc is not None and os.name == "nt" and rc in (0xC0000005, -1073741819):
            res.status, res.signal = "killed", 11  # access violation, the Windows segfault
        else:
            res.status = "ok" if rc == 0 else ("exited" if rc is not None else "timeout")
        return self._collect(res)

    def _collect(self, res: ChildResult) -> ChildResult:
        res.stdout_tail = _tail(self.out_path, self.tail_bytes)
        if self.pump is not None:
            self.pump.join(GRACE_S)  # a grandchild out of the group may hold the pipe: do not wait on it
            res.stderr_tail = self.pump.tail()
            if not self.pump.is_alive():  # else its read still holds the descriptor: closing it could hand
                self.pump.stream.close()  # the number to another file under that read
        else:
            res.stderr_tail = _tail(self.err_path, self.tail_bytes)
        if self.result_file:
            res.data = read_result(self.res_path)
        return res

    def kill(self) -> None:
        """Give up on the child: kill its group, reap it in the background, remove its files."""
        if self.popen is not None and not self.done:
            _signal_group(self.popen, _SIGKILL)
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
    env: dict[str, str] | None = None,
    result_file: bool = False,
    cwd: str | None = None,
    notify: bool = False,
    nice: int = 0,
    echo_stderr: bool | None = None,
    tail_bytes: int = TAIL_BYTES,
) -> Child:
    """Start ``argv`` in its own session; never raises (a child that cannot start waits as an error).

    With ``result_file=True`` the path of a fresh temporary file is appended to ``argv``; the child
    writes its JSON result there (progressively, by atomic rename), so whatever it wrote before a
    crash is still read back into ``ChildResult.data``.

    With ``notify=True`` (POSIX) the child also gets a pipe, named by ``CUDADOCTOR_NOTIFY_FD``, and
    writes one byte to it once its result is final; the wait ends at that moment, without waiting
    for the kernel to tear down a torch-sized process.

    With ``echo_stderr`` set (True or False), stderr goes through a pipe and a pump thread that keeps
    it for the tail and, when True, shows it live on our stderr (smoke's progress bars).
    """
    import subprocess

    ch = Child(argv, env, result_file, tail_bytes)
    if _STOPPING.is_set():
        ch.error = f"not started: cudadoctor is stopping ({ch.full_argv[0]})"
        ch.cleanup()
        return ch
    notify_w = None
    kwargs: dict[str, Any] = {}
    if notify and os.name == "posix":
        ch.notify_r, notify_w = os.pipe()
        env = dict(os.environ if env is None else env)
        env[NOTIFY_FD_ENV] = str(notify_w)
        kwargs["pass_fds"] = (notify_w,)
    if os.name == "posix":
        kwargs["start_new_session"] = True
    else:
        kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    try:
        with open(ch.out_path, "wb") as out, open(ch.err_path, "wb") as err:
            ch.popen = subprocess.Popen(
                ch.full_argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err if echo_stderr is None else subprocess.PIPE,
                env=env,
                cwd=cwd,
                **kwargs,
            )
        if echo_stderr is not None:
            ch.pump = StderrPump(ch.popen.stderr, echo_stderr, tail_bytes)  # type: ignore[arg-type]
            ch.pump.start()
        if nice and hasattr(os, "setpriority"):
            try:
                # relative to ours, as nice(1) is: an absolute value would raise a niced cudadoctor's children
                os.setpriority(os.PRIO_PROCESS, ch.popen.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + nice))
            except OSError:
                pass
    except OSError as e:
        ch.oserror = e
        ch.error = f"could not start {ch.full_argv[0]}: {e.strerror or e}"
    finally:
        if notify_w is not None:
            os.close(notify_w)
    return _started(ch)


def run(
    argv: Sequence[str],
    timeout: float,
    env: dict[str, str] | None = None,
    result_file: bool = False,
    cwd: str | None = None,
    notify: bool = False,
    nice: int = 0,
) -> ChildResult:
    """:func:`start`, then :meth:`Child.wait`: ends within ``timeout + 2 * GRACE_S`` seconds."""
    return start(argv, env=env, result_file=result_file, cwd=cwd, notify=notify, nice=nice).wait(timeout)


# -- the torch probe's early start by fork, without exec (the rest of it: forkstart.py) ---------------


def fork_start(argv: Sequence[str], env: dict[str, str], result_file: bool = False, notify: bool = False) -> Child:
    """Like :func:`start` for a child script of ours run by this very interpreter (see
    :func:`can_fork_python`), but by ``os.fork`` alone: the child skips the interpreter's start-up
    (its site-packages' .pth files included), which is the child's whole head start.

    The child becomes exactly what ``python SCRIPT ARGS`` would be: its own session, stdin from
    /dev/null and stdout/stderr to files, the environment ``env`` (for the C library too),
    ``sys.argv`` and ``sys.path[0]`` as an interpreter sets them for a script, standard streams in
    UTF-8 as ``child_env`` asks, and the script run as ``__main__``. It ends with ``os._exit``.
    """
    ch = Child(argv, env, result_file)
    ch.forked = True
    notify_w = None
    try:
        if notify:
            ch.notify_r, notify_w = os.pipe()
        for f in (sys.stdout, sys.stderr):
            f.flush()
        pid = os.fork()
    except OSError as e:
        ch.oserror, ch.error = e, f"could not start {argv[0]}: {e.strerror or e}"
        if notify_w is not None:
            os.close(notify_w)
        return ch
    if pid == 0:  # the child
        try:
            if notify_w is not None:
                env = dict(env, **{NOTIFY_FD_ENV: str(notify_w)})
            become_script(argv[1], ch.full_argv[1:], env, ch.out_path, ch.err_path, notify_w)
        finally:
            os._exit(1)
    if notify_w is not None:
        os.close(notify_w)
    ch.popen = Forked(pid, list(argv))
    return _started(ch)


def _notified_before_exit(p: subprocess.Popen | Forked, notify_fd: int, timeout: float) -> bool:
    """Wait until the child writes its byte (True), or exits, or ``timeout`` passes (False).

    Process exit is watched too, by a thread blocked in wait() that writes to a second pipe: a
    child that dies early, or leaves a forked grandchild holding the notify pipe open, must not
    keep us waiting until the deadline.
    """
    import select

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
            ready, _, _ = select.select(watch, [], [], left)
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


def read_result(path: str) -> dict[str, Any] | None:
    import json

    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(16 * 1024 * 1024).decode("utf-8", "replace"))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def child_script(name: str) -> str:
    """Path of a standalone child script shipped in cudadoctor/probes/child/."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "child", name)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for probe children: the user's own, so they see what the user sees."""
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    env.pop("PYTHONBREAKPOINT", None)
    if extra:
        env.update(extra)
    return env
