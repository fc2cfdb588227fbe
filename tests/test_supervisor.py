"""The child-process supervisor's contract (cudadoctor/probes/proc.py), on real processes.

Every wait ends within ``timeout + 2 * GRACE_S``; the child's whole process group goes with it;
a grandchild that escaped the group and holds our pipe does not keep us waiting; how the child
ended (exit code, signal, our SIGTERM or SIGKILL) is recorded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cudadoctor.probes import proc

PY = sys.executable
posix_only = pytest.mark.skipif(os.name != "posix", reason="process groups and signals")


def _gone(pid: int, within: float = 5.0) -> bool:
    """Whether ``pid`` is dead (or a zombie nobody reaped yet) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def _pid_from(path, within: float = 10.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            return int(path.read_text())
        except (OSError, ValueError):
            time.sleep(0.02)
    raise AssertionError(f"no pid in {path}")


@pytest.mark.parametrize(
    "body, status, returncode, sig",
    [
        ("pass", "ok", 0, None),
        ("import sys; sys.exit(4)", "exited", 4, None),
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "killed", -11, 11),
        ("import os; os.abort()", "killed", -6, 6),
    ],
)
@posix_only
def test_exit_codes_and_signals_are_recorded(body, status, returncode, sig):
    r = proc.run([PY, "-c", body], timeout=30)
    assert (r.status, r.returncode, r.signal, r.stopped) == (status, returncode, sig, "")


def test_a_program_that_cannot_start_is_an_error_not_an_exception(tmp_path):
    r = proc.run([str(tmp_path / "no-such-program")], timeout=5)
    assert r.status == "error" and "could not start" in r.error and "No such file" in r.error


@posix_only
def test_a_hang_is_stopped_with_sigterm_first():
    start = time.monotonic()
    r = proc.run([PY, "-c", "import time; time.sleep(60)"], timeout=1)
    assert r.status == "timeout" and r.stopped == "terminated (SIGTERM)" and r.returncode == -signal.SIGTERM
    assert 1 <= r.duration_s <= 1.5 and time.monotonic() - start < 1 + proc.GRACE_S


@posix_only
def test_a_hang_that_ignores_sigterm_is_killed_within_the_bound():
    body = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    start = time.monotonic()
    r = proc.run([PY, "-c", body], timeout=4)  # time to start and ignore SIGTERM, even on a busy machine
    took = time.monotonic() - start
    assert r.status == "timeout" and r.stopped == "killed (SIGKILL)" and r.returncode == -signal.SIGKILL
    assert "ready" in r.stdout_tail and not r.stuck
    assert 4 + proc.GRACE_S <= took < 4 + 2 * proc.GRACE_S + 1, took


GROUP_PARENT = r"""
import os, subprocess, sys, time
ignore_term = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
g = subprocess.Popen([sys.executable, "-c", ignore_term])  # stays in our group, and ignores SIGTERM
open(sys.argv[1], "w").write(str(g.pid))
if sys.argv[2] == "exit":
    sys.exit(0)
time.sleep(60)
"""


@posix_only
@pytest.mark.parametrize("how", ["exit", "hang"])
def test_the_whole_process_group_goes_with_the_child(tmp_path, how):
    """Whether the child exits (leaving a helper behind) or hangs (then SIGTERM ends it, not the helper,
    which ignores it), nothing of its group survives the wait."""
    pidfile = tmp_path / "grandchild.pid"
    r = proc.run([PY, "-c", GROUP_PARENT, str(pidfile), how], timeout=6 if how == "hang" else 30)
    assert r.status == ("ok" if how == "exit" else "timeout"), r
    assert _gone(_pid_from(pidfile))


ESCAPING_PARENT = r"""
import os, sys, time
if os.fork() == 0:  # a grandchild in its own session, out of our group, holding stderr open
    os.setsid()
    open(sys.argv[1], "w").write(str(os.getpid()))
    time.sleep(60)
    os._exit(0)
sys.stderr.write("parent done\n")
sys.exit(3)
"""


@posix_only
def test_a_grandchild_holding_the_stderr_pipe_does_not_hang_us(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    start = time.monotonic()
    ch = proc.start([PY, "-c", ESCAPING_PARENT, str(pidfile)], echo_stderr=False)
    try:
        r = ch.wait(30)
        took = time.monotonic() - start
        assert r.status == "exited" and r.returncode == 3 and "parent done" in r.stderr_tail
        assert took < proc.GRACE_S + 5, took
    finally:
        os.kill(_pid_from(pidfile), signal.SIGKILL)


ECHO = r"""
import json, sys
from cudadoctor.probes import proc
body = "import sys, time\nfor i in range(5):\n    sys.stderr.write('\\rstep %d/5' % i); sys.stderr.flush()\nsys.stderr.write('\\nfailed here\\n')\nsys.exit(2)"
r = proc.start([sys.executable, "-c", body], echo_stderr=sys.argv[1] == "echo").wait(30)
print(json.dumps({"status": r.status, "rc": r.returncode, "tail": r.stderr_tail}))
"""


@pytest.mark.parametrize("mode", ["echo", "quiet"])
def test_stderr_through_the_pump_is_shown_live_only_when_asked_and_its_tail_kept(mode):
    p = subprocess.run([PY, "-c", ECHO, mode], capture_output=True, text=True, timeout=60)
    got = json.loads(p.stdout)
    assert got["status"] == "exited" and got["rc"] == 2
    assert got["tail"] == "step 4/5\nfailed here"  # of a redrawn line, its last state
    assert ("failed here" in p.stderr) == (mode == "echo"), p.stderr


@posix_only
def test_stop_terminates_a_running_child_and_collects_it():
    ch = proc.start([PY, "-c", "import time; print('up', flush=True); time.sleep(60)"])
    time.sleep(0.5)
    r = ch.stop()
    assert r.status == "killed" and r.signal == signal.SIGTERM and r.stopped == "terminated (SIGTERM)"
    assert r.stdout_tail.strip() == "up"
    assert not os.path.exists(ch.tmpdir)  # its files are gone


@posix_only
def test_kill_running_leaves_no_child_behind():
    children = [proc.start([PY, "-c", "import time; time.sleep(60)"]) for _ in range(2)]
    pids = [c.popen.pid for c in children]
    try:
        proc.kill_running()
        assert all(_gone(pid) for pid in pids)
        assert not proc._RUNNING
    finally:
        proc._STOPPING.clear()  # this test process goes on starting children


@posix_only
def test_a_probe_starting_while_ctrl_c_is_handled_leaves_nothing_behind():
    """The race behind a flaky Ctrl-C test: a probe thread between creating its Child and starting its process while
    the main thread runs kill_running. After it, start() starts nothing; a process that came up meanwhile goes at once."""
    try:
        proc.kill_running()
        ch = proc.start([PY, "-c", "import time; time.sleep(60)"])
        assert ch.popen is None and "stopping" in ch.error and not proc._RUNNING
        assert ch.wait(5).status == "error"
    finally:
        proc._STOPPING.clear()
    ch = proc.start([PY, "-c", "import time; time.sleep(60)"])
    pid = ch.popen.pid
    try:
        proc._STOPPING.set()  # kill_running ran after this child was created, before its process was seen
        proc._started(ch)
        assert _gone(pid) and not proc._RUNNING
    finally:
        proc._STOPPING.clear()


@posix_only
def test_an_exception_while_waiting_leaves_the_child_to_the_caller():
    """Smoke's watchdog turns torchrun's SIGTERM into an exception during the wait, then stops the
    child itself (SIGTERM first, so the workload can dump its stacks): the wait must not kill it."""
    ch = proc.start([PY, "-c", "import time; time.sleep(60)"])

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            ch.wait(30)
        assert ch.popen.poll() is None and ch in proc._RUNNING
    finally:
        signal.signal(signal.SIGALRM, previous)
        r = ch.stop()
    assert r.stopped == "terminated (SIGTERM)"


def test_result_file_is_read_even_after_a_crash():
    body = (
        "import json, os, signal, sys\njson.dump({'stage': 'import'}, open(sys.argv[-1], 'w'))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    r = proc.run([PY, "-c", body], timeout=30, result_file=True)
    assert r.status == "killed" and r.data == {"stage": "import"}


# -- smoke's watchdog (smoke/runner.py's run_watched) is the same supervisor ----------------------


def test_run_watched_reports_exit_code_and_the_tail_of_stderr():
    from cudadoctor.smoke.runner import Watched, run_watched

    body = "import sys\nsys.stderr.write('\\r10%\\r50%\\nCUDA error: out of memory\\n')\nsys.exit(1)"
    w = run_watched([PY, "-c", body], dict(os.environ), False, 30)
    assert isinstance(w, Watched)
    assert (w.rc, w.timed_out, w.killed, w.terminated) == (1, False, None, None)
    assert w.stderr_tail == "50%\nCUDA error: out of memory"


@posix_only
@pytest.mark.parametrize("ignore_term, how", [(False, "terminated (SIGTERM)"), (True, "killed (SIGKILL)")])
def test_run_watched_timeout_is_bounded_and_says_how_the_child_was_stopped(ignore_term, how):
    from cudadoctor.smoke.runner import run_watched

    body = "import signal, time\n" + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else "") + "time.sleep(60)"
    limit = 4 if ignore_term else 1  # time to start and ignore SIGTERM, even on a busy machine
    w = run_watched([PY, "-c", body], dict(os.environ), False, limit)
    assert w.timed_out and w.killed == how and w.rc in (-signal.SIGTERM, -signal.SIGKILL)
    assert w.elapsed < limit + 2 * proc.GRACE_S + 1


def test_run_watched_names_an_interpreter_that_cannot_start(tmp_path):
    from cudadoctor.smoke.runner import run_watched

    w = run_watched([str(tmp_path / "no-python"), "-c", "pass"], dict(os.environ), False, 10)
    assert isinstance(w, str) and "No such file" in w


RANK = r"""
import json, os, sys
from cudadoctor.smoke.runner import run_watched
child = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
w = run_watched([sys.executable, "-c", child, sys.argv[1]], dict(os.environ), False, 60, catch_sigterm=True)
print(json.dumps({"terminated": w.terminated, "killed": w.killed, "rc": w.rc}))
"""


@posix_only
def test_run_watched_turns_the_launchers_sigterm_into_a_report_and_stops_the_child(tmp_path):
    """torchrun stops every rank with SIGTERM when one fails: the rank reports it, its child goes."""
    pidfile = tmp_path / "child.pid"
    p = subprocess.Popen([PY, "-c", RANK, str(pidfile)], stdout=subprocess.PIPE, text=True)
    child = _pid_from(pidfile, within=30)  # the rank is waiting on its child
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=30)
    got = json.loads(out.strip().splitlines()[-1])
    assert got == {"terminated": "SIGTERM", "killed": "terminated (SIGTERM)", "rc": -signal.SIGTERM}
    assert _gone(child)
