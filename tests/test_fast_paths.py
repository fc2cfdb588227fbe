"""What makes a live check fast, and that none of it changes what check finds.

- For `check`, the torch probe starts before the CLI loads (probes/prestart.py), by fork where a
  fork is indistinguishable from a new interpreter; collect adopts it only if it is exactly the
  child collect would start; any other is killed.
- A child that says its result is final (proc.run(notify=True)) is not waited for any longer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli
from cudadoctor.probes.proc import exit_code as _exit_code
from cudadoctor.probes import prestart, proc

PY = sys.executable


# -- the early start: a guess on the command's name, checked by adoption -------------------------

@pytest.mark.parametrize("args, early", [
    (["check"], True), (["check", "--some-option-added-later"], True), (["check", "--facts", "f.json"], True),
    (["check", "--quick"], False), (["check", "-v", "--quick"], False),
    ([], False), (["collect"], False), (["smoke"], False), (["--version"], False), (["-h", "check"], False),
])
def test_only_check_starts_the_default_probe_early_whatever_its_options(args, early):
    """prestart reads the command's name and one option (--quick, whose budget a needless torch import
    would eat): check's options have one grammar, click's."""
    prestart.discard()
    prestart.start_for(args)
    try:
        st = prestart._pending
        assert (st is not None) == early
        if st is not None:
            assert st.argv == prestart.torch_argv(PY)
    finally:
        prestart.discard()


def test_adopt_takes_only_the_same_child(monkeypatch):
    prestart.discard()
    prestart.start_for(["check"])
    try:
        assert prestart.adopt(prestart.torch_argv(PY, deep=True)) is None  # other flags: killed, not adopted
        assert prestart.adopt(prestart.torch_argv(PY)) is None  # and it is gone
        prestart.start_for(["check"])
        monkeypatch.setenv("CUDADOCTOR_SOMETHING_NEW", "1")  # environment changed since the early start
        assert prestart.adopt(prestart.torch_argv(PY)) is None
        monkeypatch.delenv("CUDADOCTOR_SOMETHING_NEW")
        prestart.start_for(["check"])
        st = prestart.adopt(prestart.torch_argv(PY))
        assert st is not None
        r = st.wait(120)
        assert r.status == "ok" and r.data and r.data["stage"] == "done"
    finally:
        prestart.discard()


# -- end to end through the real entry point ------------------------------------------------

def _fake_torch(tmp_path: Path, body: str) -> str:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(body)
    return str(tmp_path)


def test_live_check_adopts_the_early_probe(tmp_path):
    site = _fake_torch(tmp_path, "__version__ = '2.99.0+cpu'\n")
    r = run_cli("check", "--format", "json", env={"PYTHONPATH": site}, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    facts = json.loads(r.stdout)["facts"]
    assert facts["torch"]["version"] == "2.99.0+cpu"
    forks = sys.platform.startswith("linux") and sys.version_info >= (3, 10)
    assert facts["tool"]["probes"]["torch"]["early_start"] == ("fork" if forks else "exec")
    assert "_early_start_duration_s" not in facts["torch"]
    assert not any(k.startswith("_early_start") for k in facts["torch"])


# What a fake torch sees of the process importing it, everything an interpreter's state is made of.
OBSERVER = r"""
import gc, json, os, sys
import __main__
obs = {
    "argv0": sys.argv[0], "argc": len(sys.argv), "path": sys.path, "env": dict(os.environ),
    "stdout": [sys.stdout.encoding, sys.stdout.errors, sys.stdout.line_buffering],
    "stderr": [sys.stderr.encoding, sys.stderr.errors], "flags": list(sys.flags),
    "warnoptions": sys.warnoptions, "main": getattr(__main__, "__file__", None), "cwd": os.getcwd(),
    "own_session": os.getsid(0) == os.getpid(), "stdin_null": os.path.samefile("/proc/self/fd/0", os.devnull),
    "fds": len(os.listdir("/proc/self/fd")), "gc": gc.isenabled(), "executable": sys.executable,
    "prefix": sys.prefix, "threads": __import__("threading").active_count(),
}
with open(os.environ["OBSERVATIONS"], "w") as f:
    json.dump(obs, f)
__version__ = "2.99.0+cpu"
"""


@pytest.mark.skipif(not (sys.platform.startswith("linux") and sys.version_info >= (3, 10)), reason="fork start: Linux, 3.10+")
def test_a_forked_probe_is_a_new_interpreter_to_torch(tmp_path):
    """The fork start must be invisible to what it diagnoses: torch sees the same process as under
    the exec start (``-W`` is an interpreter option, so that run execs a new interpreter)."""
    site = _fake_torch(tmp_path, OBSERVER)
    seen = {}
    for how, pre in (("fork", []), ("exec", ["-W", "default"])):
        obs = tmp_path / f"{how}.json"
        env = dict(os.environ, PYTHONPATH=site, OBSERVATIONS=str(obs), NO_COLOR="1")
        r = subprocess.run([PY, *pre, "-m", "cudadoctor", "check", "--format", "json"], capture_output=True,
                           text=True, env=env, timeout=120, cwd=tmp_path)
        assert r.returncode in (0, 1), r.stderr
        facts = json.loads(r.stdout)["facts"]
        assert facts["tool"]["probes"]["torch"]["early_start"] == how
        assert facts["torch"]["version"] == "2.99.0+cpu"
        seen[how] = json.loads(obs.read_text())
        seen[how]["env"].pop("OBSERVATIONS")
    assert seen["fork"]["path"][0].endswith(os.path.join("probes", "child"))
    assert "CUDADOCTOR_NOTIFY_FD" not in seen["fork"]["env"]
    assert seen["fork"]["own_session"] and seen["fork"]["stdin_null"] and not seen["fork"]["gc"]
    assert seen["fork"] == seen["exec"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start: Linux")
def test_fork_start_only_for_this_very_interpreter(tmp_path):
    """Two venvs share one python binary: only the path tells them apart, so only the path counts."""
    link = tmp_path / "python"
    link.symlink_to(os.path.realpath(PY))
    assert os.path.samefile(link, PY)
    code = ("import sys; from cudadoctor.probes import proc; "
            "print(proc.can_fork_python(sys.executable), proc.can_fork_python(sys.argv[1]))")
    r = subprocess.run([PY, "-c", code, str(link)], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["False", "False"], r.stderr  # -c: an interpreter option
    script = tmp_path / "probe.py"
    script.write_text(code)
    r = subprocess.run([PY, str(script), str(link)], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["True", "False"], r.stderr


FORK_RUNNER = r"""
import json, sys
from cudadoctor.probes import proc
st = proc.fork_start([sys.executable, sys.argv[1]], env=proc.child_env(), result_file=True, notify=True)
r = st.wait(float(sys.argv[2]))
print(json.dumps({"status": r.status, "signal": r.signal, "returncode": r.returncode, "data": r.data,
                  "stderr": r.stderr_tail, "took": r.duration_s}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start: Linux")
@pytest.mark.parametrize("body, status, extra", [
    ("import json, os, sys\njson.dump({'ok': 1}, open(sys.argv[-1], 'w'))\n"
     "os.write(int(os.environ['CUDADOCTOR_NOTIFY_FD']), b'1')\nimport time; time.sleep(60)\n", "ok", {"data": {"ok": 1}}),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "killed", {"signal": 11}),
    ("import sys\nsys.exit(4)\n", "exited", {"returncode": 4}),
    ("raise ImportError('libfoo.so: cannot open shared object file')\n", "exited", {"returncode": 1}),
    ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n", "timeout", {}),
])
def test_fork_start_bounds_and_reports_a_child_like_start_does(tmp_path, body, status, extra):
    script = tmp_path / "child.py"
    script.write_text(body)
    start = time.monotonic()
    r = subprocess.run([PY, "-c", FORK_RUNNER, str(script), "2"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["status"] == status, got
    for k, v in extra.items():
        assert got[k] == v, got
    if "ImportError" in body:
        assert "cannot open shared object file" in got["stderr"]
    assert time.monotonic() - start < 20


def test_quick_check_starts_no_probe(tmp_path):
    site = _fake_torch(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    r = run_cli("check", "--quick", "--format", "json", env={"PYTHONPATH": site}, timeout=60)
    facts = json.loads(r.stdout)["facts"]
    assert facts["tool"]["probes"]["torch"]["status"] == "skipped"
    assert "early_start" not in facts["tool"]["probes"]["torch"]


def _processes_with(marker: str) -> list:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in env and state != "Z":
            found.append(int(pid))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("args, code", [
    (["--format", "yaml"], (2,)),  # a usage error
    (["--quick"], (0, 1)),  # no torch import
    (["--facts", str(Path(__file__).parent / "fixtures" / "facts" / "hgx-8x-h100-healthy.json")], (0,)),  # no live facts
])
def test_an_early_probe_nobody_adopts_is_killed(tmp_path, args, code):
    """The entry point's guess (any `check` gets the default torch probe) costs a killed child, never a
    stray process or a different answer."""
    marker = f"CUDADOCTOR_TEST_MARKER_{os.getpid()}_{time.monotonic_ns()}"
    site = _fake_torch(tmp_path, "import time\ntime.sleep(120)\n")
    start = time.monotonic()
    r = run_cli("check", *args, env={"PYTHONPATH": site, marker: "1"}, timeout=60)
    assert r.returncode in code and "Traceback" not in r.stderr, r.stderr
    assert time.monotonic() - start < 20
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []


# -- the "result is final" pipe ---------------------------------------------------------------

NOTIFYING_CHILD = r"""
import json, os, sys, time
with open(sys.argv[-1], "w") as f:
    json.dump({"stage": "done", "status": "ok"}, f)
os.write(int(os.environ["CUDADOCTOR_NOTIFY_FD"]), b"1")
time.sleep(60)  # a slow teardown nobody needs to wait for
"""

SILENT_FORKING_CHILD = r"""
import os, sys, time
if os.fork() == 0:  # a grandchild keeps the pipe open
    time.sleep(60)
    os._exit(0)
sys.exit(3)
"""


def test_a_notifying_child_is_not_waited_for():
    start = time.monotonic()
    r = proc.run([PY, "-c", NOTIFYING_CHILD], timeout=30, result_file=True, notify=True)
    took = time.monotonic() - start
    assert r.status == "ok" and r.data == {"stage": "done", "status": "ok"}
    assert took < 10, took


def test_a_child_that_exits_without_a_word_is_seen_at_once():
    start = time.monotonic()
    r = proc.run([PY, "-c", SILENT_FORKING_CHILD], timeout=30, result_file=True, notify=True)
    took = time.monotonic() - start
    assert r.status == "exited" and r.returncode == 3
    assert took < 10, took


def test_a_notifying_child_still_times_out():
    r = proc.run([PY, "-c", "import time; time.sleep(60)"], timeout=1, notify=True)
    assert r.status == "timeout"


# -- the fast exit --------------------------------------------------------------------------

@pytest.mark.parametrize("code, expect", [(None, 0), (0, 0), (1, 1), (2, 2), (True, 1), (256 + 3, 3), ("message", 1)])
def test_exit_codes_are_the_interpreters(code, expect):
    assert _exit_code(code) == expect


def test_output_survives_the_fast_exit(tmp_path):
    fixture = Path(__file__).parent / "fixtures" / "facts" / "hgx-8x-h100-healthy.json"
    r = run_cli("check", "--facts", str(fixture), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["facts"]["tool"]  # the whole document arrived
    r = run_cli("check", "--facts", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and r.stderr.startswith("cudadoctor: error:")


def test_a_closed_pipe_is_not_a_traceback():
    fixture = Path(__file__).parent / "fixtures" / "facts" / "hgx-8x-h100-healthy.json"
    p = subprocess.Popen([PY, "-m", "cudadoctor", "check", "--facts", str(fixture), "--format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()
    _, err = p.communicate(timeout=60)
    assert b"Traceback" not in err


# -- the benchmark the hardening issue budgets ------------------------------------------------

def test_speed_benchmark_runs_and_prints_the_three_budgets():
    from conftest import REPO, torch_python

    tp = torch_python()
    if tp is None:
        pytest.skip("needs an interpreter with torch (CUDADOCTOR_TEST_TORCH_PYTHON)")
    argv = [PY, str(REPO / "benchmarks" / "check_speed.py"), "--rounds", "1", "--compare", f"again={REPO}"]
    if tp != PY:
        argv += ["--python", tp]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for line in ("check / import torch", "check / collect_env", "check --quick", "again - this check", "load average"):
        assert line in r.stdout, r.stdout
    # Timing on a shared CI machine is noise; that the check is not a failure is not.
    med = {l.split(" median ")[0].strip(): float(l.split(" median ")[1].split()[0])
           for l in r.stdout.splitlines() if " median " in l and "(quartiles " in l}
    assert med["cudadoctor check --quick"] < med["cudadoctor check"], r.stdout


def test_speed_benchmark_refuses_a_broken_setup(tmp_path):
    from conftest import REPO

    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 5\n")
    fake.chmod(0o755)
    r = subprocess.run([PY, str(REPO / "benchmarks" / "check_speed.py"), "--rounds", "1", "--python", str(fake)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "does not work here" in r.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_leaves_no_probe_behind(tmp_path):
    import signal

    marker = f"CUDADOCTOR_TEST_MARKER_{os.getpid()}_{time.monotonic_ns()}"
    site = _fake_torch(tmp_path, "import time\ntime.sleep(120)\n")
    env = dict(os.environ, PYTHONPATH=site, NO_COLOR="1", **{marker: "1"})
    p = subprocess.Popen([PY, "-m", "cudadoctor", "check"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not [q for q in _processes_with(marker) if q != p.pid] and time.monotonic() < deadline:
        time.sleep(0.05)  # until the torch probe runs
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and b"interrupted" in err and b"Traceback" not in err
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []


@pytest.mark.skipif(os.name != "posix", reason="closes a file descriptor")
def test_check_with_stdout_closed_writes_its_report_without_a_traceback(tmp_path):
    """`cudadoctor check -o report.json >&-`: Python starts with sys.stdout None; the report is still
    written, the exit code is the verdict's, and nothing ends in a traceback."""
    site = _fake_torch(tmp_path, "__version__ = '2.99.0+cpu'\n")
    out = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=site, NO_COLOR="1")
    r = subprocess.run([PY, "-m", "cudadoctor", "check", "--format", "json", "-o", str(out)], env=env, timeout=120,
                       stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    facts = json.loads(out.read_text())["facts"]
    assert facts["torch"]["version"] == "2.99.0+cpu"
    # without -o there is nowhere to write the report: bad input, one line, exit 2
    r = subprocess.run([PY, "-m", "cudadoctor", "check", "--quick"], env=env, timeout=120,
                       stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert r.returncode == 2 and r.stderr.strip() == "cudadoctor: error: standard output is closed: write the report to a file with -o FILE", r.stderr
