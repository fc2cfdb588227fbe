"""Shared test helpers: recorded facts, the CLI runner, and locating real torch interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURES = HERE / "fixtures"
SHARED = REPO.parent / "shared"


def _editable_install_of_this_checkout() -> bool:
    from importlib import metadata

    for dist in metadata.distributions(name="cudadoctor"):
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        url = direct.get("url", "")
        if direct.get("dir_info", {}).get("editable") and Path(url.removeprefix("file://")).resolve() == REPO:
            return True
    return False


# No test reaches the network: a smoke that would download MNIST is pointed at a port nothing listens on (a test
# that exercises the download sets its own mirror on 127.0.0.1).
os.environ.setdefault("CUDADOCTOR_MNIST_MIRROR", "http://127.0.0.1:9/")

# Children (python -m cudadoctor, probe scripts) must import this checkout: an editable install of
# it does that already; otherwise (a plain checkout, a git worktree, another install) PYTHONPATH does.
CHECKOUT_ON_PATH = not _editable_install_of_this_checkout()
if CHECKOUT_ON_PATH:
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)


def load_fixture(name: str) -> dict:
    return json.loads((FIXTURES / "facts" / name).read_text())


@pytest.fixture
def facts_nodriver():
    """Recorded on this project's machine: torch 2.14.1+cu130 from PyPI, no GPU, no driver."""
    return load_fixture("live-torch2141-cu130-nodriver.json")


def torch_python() -> str | None:
    """An interpreter with a real torch: $CUDADOCTOR_TEST_TORCH_PYTHON, this one, or none."""
    env = os.environ.get("CUDADOCTOR_TEST_TORCH_PYTHON")
    if env:
        return env
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            return sys.executable
    except Exception:
        pass
    return None


def run_cli(*args: str, env: dict | None = None, timeout: float = 300, python: str | None = None, input: str | None = None):
    """Run the real CLI in a subprocess (python -m cudadoctor ...)."""
    e = dict(os.environ)
    e.pop("CUDADOCTOR_DEBUG", None)
    e["NO_COLOR"] = "1"
    if env:
        e.update(env)
    if CHECKOUT_ON_PATH and env and "PYTHONPATH" in env:  # a test's own path first, the checkout after
        e["PYTHONPATH"] = os.pathsep.join(p for p in (env["PYTHONPATH"], str(REPO)) if p)
    return subprocess.run([python or sys.executable, "-m", "cudadoctor", *args], capture_output=True, text=True,
                          env=e, timeout=timeout, input=input)


def write_json(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


#: The slowest tests (pytest --durations on the project's 2 shared CPUs, 2026-11-27): marked ``slow`` here, in one
#: place. The README's quick command leaves them out (``-m "not slow"``); CI (.ci/run) runs every test. A file
#: alone means all of its tests; ``file::name`` one test (every parametrisation of it).
SLOW = (
    "test_wrapper_agreement.py",  # 358 real texts x 3 commands x 8 wrappers, in-process: 50-120 s per wrapper
    "test_fleet_html.py::test_ten_thousand_nodes_in_chromium",  # a 10,000-node page in headless Chromium: 100 s
    "test_learned.py::test_scorer_equals_sklearn_predict_proba_on_held_out_threads",  # trains sklearn: 43 s
    "test_install_routes.py",  # builds wheels and fresh venvs: 10-14 s each
    "test_docs.py::test_a_built_wheel_installs_and_runs_outside_the_checkout",  # a wheel into a fresh venv: 12 s
    "test_fix_targets.py::test_cpu_wheel_hint_replaces_the_installed_cuda_build",  # pip against a real venv: 17 s
    "test_fix_targets.py::test_fixes_name_the_diagnosed_interpreter_when_python_on_path_is_another",  # 19 s
    "test_bot.py::test_precision_and_coverage_over_every_labelled_case",  # every labelled case: 10 s
    "test_import_speed.py",  # cold `import torch`, bytecode cache emptied (skipped without torch)
    # MNIST trained on the CPU (skipped without torch): seconds on a quiet machine, minutes when the CPUs are shared
    # (2026-11-27, load 15-25: 60-300 s each, and a 240 s bound reached in training or throughput)
    "test_smoke.py::test_smoke_on_a_fresh_machine_downloads_mnist_says_where_and_passes",
    "test_smoke.py::test_the_workload_never_imports_torchvision_and_reads_idx_gz_itself",
    "test_smoke.py::test_synthetic_trains_and_says_so",
    "test_smoke.py::test_the_written_out_optimisers_are_torchs_step_for_step",
    "test_api.py::test_smoke_on_cpu_synthetic",
    "test_prometheus.py::test_smoke_cli_writes_its_numbers",
    "test_fast_paths.py::test_speed_benchmark_runs_and_prints_the_three_budgets",
    "test_gpu_validate.py::test_validation_runs_every_step_records_and_summarises_without_a_gpu",
)

#: A test using one of these fixtures is slow too: ``torchrun`` starts a DDP job of CPU ranks (45-55 s each);
#: ``cpu_result`` (tests/test_smoke.py) trains MNIST on the CPU to 97 %.
SLOW_FIXTURES = ("torchrun", "cpu_result")


def pytest_collection_modifyitems(config, items):
    for item in items:
        path, _, name = item.nodeid.partition("::")
        base = Path(path).name
        if base in SLOW or f"{base}::{name.split('[')[0]}" in SLOW:
            item.add_marker(pytest.mark.slow)
        elif set(SLOW_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_terminal_summary(terminalreporter):
    """Print the fault-injection matrix when tests/test_faults.py ran, and the error-corpus table."""
    _error_corpus_table(terminalreporter)
    try:
        from test_faults import MATRIX
    except ImportError:
        return
    if not MATRIX:
        return
    tr = terminalreporter
    tr.section("fault matrix: fault -> seconds -> exit code -> findings")
    width = max(len(r[0]) for r in MATRIX)
    for fault, took, rc, codes in MATRIX:
        tr.write_line(f"{fault:<{width}}  {took:5.1f} s  exit {rc}  {codes}")


def _error_corpus_table(tr) -> None:
    """Top-1 accuracy per code of tests/test_error_corpus.py, when it ran."""
    mod = sys.modules.get("test_error_corpus")
    if mod is None or not getattr(mod, "TABLE", None):
        return
    table = mod.TABLE
    tr.section("error-text corpus: top-1 accuracy per code")
    width = max(len(c) for c in table)
    for code in sorted(table):
        h, t = table[code]
        tr.write_line(f"{code:<{width}}  {h:3d}/{t:<3d}  {h / t:6.1%}")
    hits, total = sum(h for h, _ in table.values()), sum(t for _, t in table.values())
    tr.write_line(f"{'overall':<{width}}  {hits:3d}/{total:<3d}  {hits / total:6.1%}")
    for where, want, got, text in mod.MISSES:
        tr.write_line(f"  miss {where}: want {want}, got {got}: {text}")
