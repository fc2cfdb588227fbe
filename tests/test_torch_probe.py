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


# A torch that says CUDA works, with three devices: device 1's kernel fails, device 2's properties
# cannot be read, device 0 cannot reach its peers. The GPU path of the probe, run where no GPU is.
GPU_TORCH = """
import types, warnings
__version__ = "9.9.9+cu128"
version = types.SimpleNamespace(cuda="12.8", hip=None, debug=False, git_version="abc")
float32 = "float32"

class _Props:
    def __init__(self, i):
        self.name, self.major, self.minor, self.total_memory = "Fake GPU %d" % i, 9, 0, 80 << 30
    def _private(self):
        pass

class _Tensor:
    def __init__(self, device):
        self.device = device
    def __mul__(self, k):
        return self
    def sum(self):
        return self
    def item(self):
        if self.device == "cuda:1":
            raise RuntimeError("CUDA error: no kernel image is available for execution on the device")
        return 1047552.0

def _props(i):
    if i == 2:
        raise RuntimeError("properties unreadable")
    return _Props(i)

def _available():
    warnings.warn("a CUDA warning")
    return True

def _peer(i, j):
    if i == 0:
        raise RuntimeError("peer query failed")
    return True

cuda = types.SimpleNamespace(is_available=_available, device_count=lambda: 3, get_arch_list=lambda: ["sm_90"],
                             get_device_properties=_props, can_device_access_peer=_peer)
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(is_built=lambda: True),
                                 cudnn=types.SimpleNamespace(version=lambda: 91000, is_available=lambda: True))

def arange(n, device=None, dtype=None):
    return _Tensor(device)
"""

TORCH_PROBE = Path(__file__).resolve().parents[1] / "cudadoctor" / "probes" / "child" / "torch_probe.py"


def _run_probe(tmp_path: Path, *args: str) -> dict:
    import os
    import subprocess
    import sys

    site = Path(broken_torch(tmp_path, GPU_TORCH))
    for companion in ("torchvision", "torchaudio"):  # without a compiled extension: found, nothing to load
        (site / companion).mkdir()
        (site / companion / "__init__.py").write_text("")
        (site / companion / "version.py").write_text("__version__ = '0.1.0'\ncuda = '12.8'\n")
    out = tmp_path / "result.json"
    env = dict(os.environ, PYTHONPATH=str(site))
    subprocess.run([sys.executable, str(TORCH_PROBE), *args, str(out)], env=env, check=True, timeout=120)
    return json.loads(out.read_text())


def test_gpu_path_records_devices_kernels_and_peer_access(tmp_path):
    r = _run_probe(tmp_path)
    assert (r["status"], r["stage"], r["version"], r["cuda"], r["cuda_compiled"]) == ("ok", "done", "9.9.9+cu128", "12.8", True)
    assert (r["cuda_available"], r["device_count"], r["cuda_init_warnings"]) == (True, 3, ["a CUDA warning"])
    assert (r["cudnn_version"], r["cudnn_available"], r["arch_list"]) == (91000, True, ["sm_90"])
    d0, d1, d2 = r["devices"]
    assert {k: d0[k] for k in ("index", "name", "capability", "total_memory", "kernel_ok")} == {
        "index": 0, "name": "Fake GPU 0", "capability": "9.0", "total_memory": 80 << 30, "kernel_ok": True}
    assert "_private" not in d0 and "kernel_error" not in d0 and d0["kernel_s"] >= 0
    assert d1["kernel_ok"] is False and d1["kernel_error"].startswith("CUDA error: no kernel image")
    assert (d2["error"], d2["kernel_ok"]) == ("properties unreadable", True)
    assert r["peer_access"] == [[None, None, None], [True, None, True], [True, True, None]]
    assert r["companions"] == {
        name: {"method": "extension", "location": str(tmp_path / name / "__init__.py"), "version": "0.1.0", "cuda": "12.8", "extension": None}
        for name in ("torchvision", "torchaudio")
    }


def test_gpu_path_without_kernels(tmp_path):
    r = _run_probe(tmp_path, "--no-kernel")
    assert r["status"] == "ok" and [d["index"] for d in r["devices"]] == [0, 1, 2]
    assert not any("kernel_ok" in d or "kernel_s" in d for d in r["devices"])
    assert len(r["peer_access"]) == 3
