"""The live line while check waits on a slow torch (issue 17): on a terminal only, erased when done.

A real `python -m cudadoctor check` runs with its stderr on a pseudo-terminal (the pty module) and a
fake torch whose import takes a few seconds; the same run with stderr on a pipe, or with NO_COLOR,
must show nothing of it.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CHECKOUT_ON_PATH, REPO

pty = pytest.importorskip("pty")
PY = sys.executable
LINE = re.compile(r"importing torch… (\d+) s of 30 s")
SLOW_IMPORT_S = 4.0


def _env(tmp_path: Path, **extra: str) -> dict:
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True, exist_ok=True)
    (site / "torch" / "__init__.py").write_text(f"import time\ntime.sleep({SLOW_IMPORT_S})\n__version__ = '2.99.0+cpu'\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "CUDADOCTOR_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + ([str(REPO)] if CHECKOUT_ON_PATH else []))
    env["TERM"] = "xterm"
    env.update(extra)
    return env


def _check_on_a_terminal(env: dict) -> tuple:
    """Run check with stderr on a pty: (what the terminal got, stdout, exit code)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([PY, "-m", "cudadoctor", "check", "--format", "json", "--timeout", "30"], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    got = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not chunk:
                break
            got += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    out, _ = p.communicate(timeout=60)
    return got.decode("utf-8", "replace"), out.decode("utf-8", "replace"), p.returncode


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal")
def test_a_slow_torch_import_shows_a_live_line_on_the_terminal_then_erases_it(tmp_path):
    term, out, rc = _check_on_a_terminal(_env(tmp_path))
    assert rc in (0, 1), term
    seconds = [int(s) for s in LINE.findall(term)]
    assert seconds and seconds == sorted(seconds) and seconds[0] >= 2, term  # counts up, from SHOW_AFTER_S
    assert max(seconds) >= 3, term
    last = term.rindex("s of 30 s")
    assert "\r\x1b[K" in term[last:], repr(term[last:])  # erased when the wait ended
    assert "importing torch" not in out and "\x1b" not in out  # stdout is not the terminal: nothing there
    assert json.loads(out)["facts"]["torch"]["version"] == "2.99.0+cpu"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal")
def test_no_live_line_with_no_color(tmp_path):
    term, out, rc = _check_on_a_terminal(_env(tmp_path, NO_COLOR="1"))
    assert rc in (0, 1), term
    assert "importing torch" not in term and "\x1b" not in term, repr(term)


def test_no_live_line_when_stderr_is_a_pipe(tmp_path):
    r = subprocess.run([PY, "-m", "cudadoctor", "check", "--format", "json", "--timeout", "30"], env=_env(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    assert "importing torch" not in r.stderr + r.stdout and "\x1b" not in r.stderr, repr(r.stderr)
    assert json.loads(r.stdout)["facts"]["torch"]["version"] == "2.99.0+cpu"
