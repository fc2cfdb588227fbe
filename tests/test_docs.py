"""Docs stay in step with the code: one generated page per code, packaging lists every package."""

from __future__ import annotations

import pytest

tomllib = pytest.importorskip("tomllib")

from conftest import REPO
from cudadoctor import registry
from cudadoctor.docsgen import pages


def test_every_code_has_its_current_page():
    want = pages()
    have = {p.stem: p.read_text() for p in (REPO / "docs" / "codes").glob("*.md")}
    stale = sorted(k for k in want if have.get(k) != want[k])
    extra = sorted(set(have) - set(want))
    assert not stale and not extra, f"run: python -m cudadoctor.docsgen docs/codes (stale {stale}, extra {extra})"


def test_every_code_explanation_has_all_sections():
    reg = registry.load(plugins=False)
    for name, (code, _) in reg.codes.items():
        for section in code.SECTIONS:
            assert len(code.explanation[section]) > 20, (name, section)


def test_every_builtin_check_module_is_listed_and_no_entry_point_shadows_it():
    from cudadoctor.checks import BUILTIN_MODULES

    on_disk = {p.stem for p in (REPO / "cudadoctor" / "checks").glob("*.py")
               if not p.stem.startswith("_") and "def register" in p.read_text()}
    assert set(BUILTIN_MODULES) == on_disk, set(BUILTIN_MODULES) ^ on_disk
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "cudadoctor.checks" not in meta["project"].get("entry-points", {})


def test_a_plain_checkout_loads_every_builtin_check(tmp_path):
    """No install at all: the checkout on PYTHONPATH, run from elsewhere, loads all built-ins."""
    import json
    import subprocess
    import sys

    from cudadoctor.checks import BUILTIN_MODULES

    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "CUDADOCTOR_NO_PLUGINS": "1"}
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "check", "--quick", "--format", "json"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    assert {c["source"] for c in report["checks"]} == {f"cudadoctor:{m}" for m in BUILTIN_MODULES}
    assert all(c["status"] == "ok" for c in report["checks"])


def test_a_builtin_that_fails_to_load_is_an_internal_error(tmp_path):
    """A broken install (a built-in module that raises on import) exits 3 with one line, never 0."""
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "src"
    shutil.copytree(REPO / "cudadoctor", copy / "cudadoctor", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "cudadoctor" / "checks" / "arch.py").write_text("raise ImportError('half-deleted install')\n")
    env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "check", "--quick"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 3, (r.returncode, r.stdout, r.stderr)
    assert "cudadoctor.checks.arch" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_readme_has_the_two_commands():
    text = (REPO / "README.md").read_text()
    assert "cudadoctor check" in text and "pytest" in text


def test_a_built_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    """A real (non-editable) install: the wheel carries the checks as cudadoctor.checks (never a
    bare top-level `checks`), the knowledge-base tables and the probe scripts, and it runs."""
    import json
    import subprocess
    import sys

    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "-w", str(wheels), str(REPO)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    site = tmp_path / "site"
    whl = next(wheels.glob("cudadoctor-*.whl"))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(whl)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert not (site / "checks").exists() and (site / "cudadoctor" / "checks" / "driver.py").is_file()
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "check", "--quick", "--format", "json"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    assert report["tool"]["kb_date"] and {c["source"].split(":")[0] for c in report["checks"]} == {"cudadoctor"}
    assert all(c["status"] == "ok" for c in report["checks"])
