"""Fault injection: build each broken world, run the real CLI against it, and print the matrix.

For every row `check` must end within its time budget, write its report, name what failed, and
exit with the documented code — never a traceback. The matrix (fault, seconds, exit code,
codes reported) is printed at the end of the test session.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from conftest import HERE, run_cli

#: Probe limits for these tests (documented knob CUDADOCTOR_TIMEOUTS); the budget follows.
TIMEOUTS = {"torch": 6, "nvml": 3, "toolkit": 3, "pyenv": 8}
BUDGET_S = max(TIMEOUTS.values()) + 2 + 1 + 8  # + kill grace + thread margin + start-up and checks on a busy 2-core box

MATRIX: list = []


def fake_torch(root: Path, init_body: str = "", cuda_body: str = "return False") -> Path:
    """A torch package that imports (running ``init_body``) with a CUDA module whose
    is_available() runs ``cuda_body``."""
    pkg = root / "torch"
    pkg.mkdir(parents=True)
    (pkg / "version.py").write_text("__version__ = '2.6.0+cu126'\ncuda = '12.6'\nhip = None\ndebug = False\n")
    (pkg / "cuda.py").write_text(textwrap.dedent(f"""
        def get_arch_list():
            return ["sm_50", "sm_80", "sm_90"]
        def is_available():
            {cuda_body}
        def device_count():
            return 0
        def init():
            raise RuntimeError("Found no NVIDIA driver on your system.")
    """))
    (pkg / "__init__.py").write_text(init_body + "\n__version__ = '2.6.0+cu126'\nfrom . import version, cuda\n")
    return root


def dist_info(site: Path, name: str, metadata: bytes | None) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    if metadata is not None:
        (info / "METADATA").write_bytes(metadata)


def nvml(fault: str):
    return lambda tmp: {"PYTHONPATH": str(HERE / "fakes" / "nvml_fault"), "CUDADOCTOR_FAKE_NVML": fault}


def torch_import(body: str):
    def setup(tmp: Path):
        (tmp / "torch").mkdir()
        (tmp / "torch" / "__init__.py").write_text(body)
        return {"PYTHONPATH": str(tmp)}
    return setup


def torch_cuda(cuda_body: str):
    return lambda tmp: {"PYTHONPATH": str(fake_torch(tmp, cuda_body=cuda_body))}


def hanging_nvcc(tmp: Path):
    nvcc = tmp / "bin" / "nvcc"
    nvcc.parent.mkdir()
    nvcc.write_text("#!/bin/sh\ntrap '' TERM INT\nwhile :; do sleep 1; done\n")
    nvcc.chmod(0o755)
    return {"PATH": f"{nvcc.parent}:{os.environ['PATH']}"}


def corrupt_metadata(tmp: Path):
    dist_info(tmp, "torch", b"\xff\xfe\x00 not metadata at all")
    dist_info(tmp, "nvidia_cudnn_cu12", None)
    dist_info(tmp, "numpy", b"Metadata-Version: 2.1\nName: numpy\nVersion: \n")
    return {"PYTHONPATH": str(tmp)}


def non_utf8(tmp: Path):
    bad = os.fsencode(str(tmp)) + b"/dir-\xff\xfe"
    os.makedirs(bad)
    return {"CUDA_HOME": os.fsdecode(b"/opt/cuda-\xff"), "LD_LIBRARY_PATH": os.fsdecode(bad), "PYTHONPATH": os.fsdecode(bad)}


def very_long(tmp: Path):
    # Each string is kept under Linux's 128 KiB limit for one environment entry (MAX_ARG_STRLEN).
    # (Thousands of LD_LIBRARY_PATH entries would slow every process start in the dynamic loader,
    # which measures the loader, not us: a few very long entries test our handling.)
    return {"LD_LIBRARY_PATH": ":".join(f"/opt/{'x' * 2000}{i}" for i in range(50)), "TORCH_EXTRA": "x" * 120_000,
            "CUDA_VISIBLE_DEVICES": ",".join(str(i) for i in range(20000))[:120_000]}


def plugins(tmp: Path):
    def dist(name, src):
        (tmp / f"{name}.py").write_text(textwrap.dedent(src))
        info = tmp / f"{name}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[cudadoctor.checks]\n{name} = {name}:register\n")
    code = 'from cudadoctor.model import Code, check\nC = Code(code="{c}", title="t", area="tool", severity="warning", explanation={{"what": "w", "why": "w", "confirm": "c", "fix": "f"}})\n'
    dist("p_import", "raise RuntimeError('broken plugin')\n")
    dist("p_raise", code.format(c="p-raise") + "@check(C)\ndef f(facts):\n    raise ValueError('boom')\ndef register():\n    return [f]\n")
    dist("p_hang", code.format(c="p-hang") + "import time\n@check(C)\ndef f(facts):\n    time.sleep(600)\ndef register():\n    return [f]\n")
    dist("p_shape", code.format(c="p-shape") + "@check(C)\ndef f(facts):\n    return [{'code': 'p-shape'}]\ndef register():\n    return [f]\n")
    return {"PYTHONPATH": str(tmp)}


# fault name -> (setup(tmp) -> env, codes of which one must be reported)
FAULTS = {
    "torch segfaults on import": (torch_import("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"), {"torch-import-failed"}),
    "torch aborts on import": (torch_import("import os\nos.abort()\n"), {"torch-import-failed"}),
    "torch hangs on import": (torch_import("import time\ntime.sleep(3600)\n"), {"torch-import-failed"}),
    "torch raises a DLL-style ImportError": (torch_import("raise ImportError('DLL load failed while importing _C: The specified module could not be found.')\n"), {"torch-import-failed"}),
    "torch prints garbage to stdout": (torch_import("import sys\nsys.stdout.write('\\x00\\xff{{[' * 50000)\nraise ImportError('after garbage')\n"), {"torch-import-failed"}),
    "torch exits the interpreter (sys.exit)": (torch_import("import sys\nsys.exit(3)\n"), {"torch-import-failed"}),
    "torch exits the interpreter (os._exit)": (torch_import("import os\nos._exit(9)\n"), {"torch-import-failed"}),
    "torch hangs in CUDA initialisation": (torch_cuda("import time; time.sleep(3600)"), {"probe-failed"}),
    "torch segfaults in CUDA initialisation": (torch_cuda("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"), {"probe-failed"}),
    "NVML bindings missing": (nvml("import-error"), {"probe-failed"}),
    "NVML uninitialized": (nvml("init:1"), {"probe-failed"}),
    "NVML no permission": (nvml("init:4"), {"probe-failed"}),
    "NVML driver not loaded": (nvml("init:9"), {"no-nvidia-driver"}),
    "NVML timeout": (nvml("init:10"), {"probe-failed"}),
    "NVML library not found": (nvml("init:12"), {"no-nvidia-driver"}),
    "NVML function not found": (nvml("init:13"), {"probe-failed"}),
    "NVML GPU is lost": (nvml("init:15"), {"gpu-lost"}),
    "NVML operating system error": (nvml("init:17"), {"probe-failed"}),
    "NVML driver/library version mismatch": (nvml("init:18"), {"nvml-driver-mismatch"}),
    "NVML unknown error": (nvml("init:999"), {"probe-failed"}),
    "NVML init blocks": (nvml("init:block"), {"probe-failed"}),
    "NVML device count blocks": (nvml("count:block"), {"probe-failed"}),
    "nvcc hangs and ignores SIGTERM": (hanging_nvcc, {"probe-failed"}),
    "corrupt or missing package metadata": (corrupt_metadata, {"no-nvidia-driver"}),
    "non-UTF-8 bytes in environment and paths": (non_utf8, {"no-nvidia-driver"}),
    "very long environment values": (very_long, {"no-nvidia-driver"}),
    "plugins that fail to import, raise, hang, return garbage": (plugins, {"check-crashed"}),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault(fault, tmp_path):
    setup, expect = FAULTS[fault]
    world = tmp_path / "world"
    world.mkdir()
    env = setup(world)
    env["CUDADOCTOR_TIMEOUTS"] = ",".join(f"{k}={v}" for k, v in TIMEOUTS.items())
    out = tmp_path / "report.json"
    start = time.monotonic()
    r = run_cli("check", "--format", "json", "-o", str(out), env=env, timeout=BUDGET_S + 30)
    took = time.monotonic() - start
    report = json.loads(out.read_text()) if out.exists() else None
    got = sorted({f["code"] for f in report["findings"]}) if report else []
    MATRIX.append((fault, took, r.returncode, ", ".join(got)))
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    assert report is not None, f"no report written; stderr: {r.stderr}"
    assert r.returncode == 1, r.stderr
    assert took <= BUDGET_S, f"took {took:.1f} s, budget {BUDGET_S} s"
    assert expect & set(got), f"expected one of {expect}, got {got}"
