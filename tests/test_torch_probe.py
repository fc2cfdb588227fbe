"""The torch probe against real and broken torches: a crash or hang is a fact, never our crash."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import run_cli, torch_python

BROKEN = {
    "segfault": ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "SIGSEGV"),
    "abort": ("import os\nos.abort()\n", "SIGABRT"),
    "hang": ("import time\ntime.sleep(3600)\n", "hung"),
    "raise": ("raise ImportError('libtorch_cuda.so: cannot open shared object file: No such file or directory')\n", "ImportError: libtorch_cuda.so"),
    "dll": ("raise OSError('[WinError 126] The specified module could not be found. Error loading \"C:\\\\x\\\\torch\\\\lib\\\\c10.dll\" or one of its dependencies.')\n", "WinError 126"),
    "exit": ("import sys\nsys.exit(3)\n", "SystemExit"),
    "hard-exit": ("import os\nos._exit(7)\n", "exited with code 7"),
}


def broken_torch(tmp_path: Path, body: str) -> str:
    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(body)
    return str(tmp_path)


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_broken_torch_import_is_reported(tmp_path, kind):
    body, expect = BROKEN[kind]
    site = broken_torch(tmp_path, body)
    start = time.monotonic()
    r = run_cli("check", "--format", "json", "--timeout", "3", env={"PYTHONPATH": site}, timeout=60)
    took = time.monotonic() - start
    assert r.returncode == 1, r.stderr
    assert took < 15, f"check took {took:.1f} s"
    report = json.loads(r.stdout)
    hits = [f for f in report["findings"] if f["code"] == "torch-import-failed"]
    assert hits, [f["code"] for f in report["findings"]]
    assert expect in hits[0]["title"], hits[0]["title"]
    assert report["facts"]["torch"]["location"].startswith(site)


def test_garbage_on_stdout_does_not_confuse_the_probe(tmp_path):
    site = broken_torch(tmp_path, "import sys\nprint('\\x00\\xff garbage {not json', flush=True)\n"
                                  "sys.stdout.write('x' * 100000)\n__version__ = '9.9.9'\n")
    r = run_cli("check", "--format", "json", "--timeout", "10", env={"PYTHONPATH": site}, timeout=60)
    report = json.loads(r.stdout)
    assert report["facts"]["torch"]["version"] == "9.9.9"
    assert not [f for f in report["findings"] if f["code"] == "check-crashed"]


def test_quick_mode_reads_version_without_import(tmp_path):
    site = broken_torch(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    (Path(site) / "torch" / "version.py").write_text("__version__ = '2.6.0+cu126'\ncuda: Optional[str] = '12.6'\nhip = None\n")
    start = time.monotonic()
    r = run_cli("check", "--quick", "--format", "json", env={"PYTHONPATH": site}, timeout=60)
    assert time.monotonic() - start < 5
    t = json.loads(r.stdout)["facts"]["torch"]
    assert (t["status"], t["version"], t["cuda"]) == ("skipped", "2.6.0+cu126", "12.6")


@pytest.mark.skipif(torch_python() is None, reason="needs a real torch: set CUDADOCTOR_TEST_TORCH_PYTHON or install torch")
def test_real_torch_on_this_gpu_less_machine():
    """The README's promise on this machine: a CUDA build, no driver -> no-nvidia-driver, exit 1."""
    r = run_cli("check", "--python", torch_python(), "--format", "json", timeout=300)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    t = report["facts"]["torch"]
    assert t["status"] == "ok" and t["version"].startswith("2.") and t["cuda"]
    assert t["cuda_available"] is False
    assert "Found no NVIDIA driver" in t["cuda_init_error"]["message"]
    assert [f["code"] for f in report["findings"] if f["severity"] == "error"] == ["no-nvidia-driver"]
    libs = [lib["name"] for lib in t["loaded_libraries"]["libraries"]]
    assert any(n.startswith("libtorch_cuda") for n in libs)
    text = run_cli("check", "--python", torch_python(), timeout=300).stdout
    assert t["version"] in text and "no-nvidia-driver" in text
