"""torch-import-slow on real imports of the real torch in this venv: with no usable bytecode cache (every module
compiled from source, caches not kept), with caches written by the first import, and as installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

H100 = Path(__file__).parent / "fixtures" / "h100"

try:
    import importlib.util

    HAS_TORCH = importlib.util.find_spec("torch") is not None
except (ImportError, ValueError):
    HAS_TORCH = False
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed in this interpreter")


def _check(env: dict) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "check", "--format", "json"], capture_output=True, text=True,
                       timeout=300, env={**base, "NO_COLOR": "1", **env})
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def _slow(doc: dict):
    return [f for f in doc["findings"] if f["code"] == "torch-import-slow"]


@needs_torch
def test_no_bytecode_cache_and_none_kept_is_found_with_its_cause(tmp_path):
    """PYTHONDONTWRITEBYTECODE with an empty cache location: every import compiles torch from source."""
    doc = _check({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path / "empty")})
    bc = doc["facts"]["torch"]["bytecode"]
    assert bc["compiled_modules"] > 300 and bc["compiled_in_torch"] > 300 and bc["compile_s"] >= 1.0, bc
    (f,) = _slow(doc)
    assert f["severity"] == "warning" and "PYTHONDONTWRITEBYTECODE" in f["title"]
    assert any("-m compileall -q -j 0" in c for c in f["fix"]["commands"]), f["fix"]
    assert any(c.startswith("unset PYTHONDONTWRITEBYTECODE") for c in f["fix"]["commands"])


@needs_torch
def test_caches_written_by_the_first_import_are_not_a_finding_and_the_next_import_compiles_nothing(tmp_path):
    cache = tmp_path / "pycache"
    first = _check({"PYTHONPYCACHEPREFIX": str(cache)})
    bc = first["facts"]["torch"]["bytecode"]
    assert bc["compiled_modules"] > 300 and bc["cache_written_sample"][0] > 0, bc
    assert not _slow(first)
    second = _check({"PYTHONPYCACHEPREFIX": str(cache)})
    assert second["facts"]["torch"]["bytecode"]["compiled_modules"] == 0
    assert not _slow(second)
    assert second["facts"]["torch"]["import_s"] < first["facts"]["torch"]["import_s"]


@needs_torch
@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("runuser")),
                    reason="needs root and runuser to import as another user from a read-only cache location")
def test_a_read_only_cache_location_is_found_for_a_user_who_cannot_write_it(tmp_path):
    """The shared-cluster case: the environment's caches are missing and this user cannot write them."""
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(ro, 0o555)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "HOME")}
    env.update(PYTHONPYCACHEPREFIX=str(ro), NO_COLOR="1", HOME=str(tmp_path))
    r = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-m", "cudadoctor", "check", "--format", "json"],
                       capture_output=True, text=True, timeout=300, env=env)
    try:
        doc = json.loads(r.stdout)
    except ValueError:  # e.g. the interpreter lives under a directory only root may enter (pyenv in /root)
        pytest.skip(f"cannot run {sys.executable} as nobody here: {(r.stderr or r.stdout).strip()[-200:]}")
    bc = doc["facts"]["torch"]["bytecode"]
    assert bc["cache_written_sample"][0] == 0 and bc["compiled_modules"] > 300, bc
    (f,) = _slow(doc)
    assert "cannot be written" in f["title"], f["title"]


@needs_torch
def test_torch_as_installed_imports_from_its_caches():
    doc = _check({})
    bc = doc["facts"]["torch"]["bytecode"]
    assert bc["compiled_in_torch"] == 0, bc
    assert bc["filesystem"] and bc["network_filesystem"] is False
    assert not _slow(doc)


def _h100_facts(**bytecode) -> dict:
    facts = json.loads((H100 / "collect.json").read_text())
    facts["torch"]["import_s"] = bytecode.pop("import_s", facts["torch"]["import_s"])
    facts["torch"]["bytecode"] = {
        "compiled_modules": 0, "compiled_in_torch": 0, "compile_s": 0.0, "cache_written_sample": [0, 0],
        "dont_write_bytecode": False, "pythondontwritebytecode": False, "pycache_prefix": None,
        "torch_dir_writable": True, "filesystem": "ext4", "mount_point": "/", "network_filesystem": False, **bytecode}
    return facts


def _findings_for(facts: dict, tmp_path: Path) -> list:
    p = tmp_path / "facts.json"
    p.write_text(json.dumps(facts))
    r = run_cli("check", "--facts", str(p), "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    return _slow(json.loads(r.stdout))


def test_the_h100_recording_without_bytecode_facts_says_nothing(tmp_path):
    """Recorded before the probe measured compiling: unknown stays unknown (3.2 s import, no finding)."""
    assert "bytecode" not in json.loads((H100 / "collect.json").read_text())["torch"]
    assert not _findings_for(json.loads((H100 / "collect.json").read_text()), tmp_path)


def test_the_h100_image_as_measured_there_is_found(tmp_path):
    """The H100 run: 1,854 of torch's files compiled at every start, 5.3 s of 12.6 s, on a read-only layer."""
    facts = _h100_facts(import_s=12.6, compiled_modules=1854, compiled_in_torch=1700, compile_s=5.3,
                        cache_written_sample=[0, 40], torch_dir_writable=False)
    (f,) = _findings_for(facts, tmp_path)
    assert "12.6 s" in f["title"] and "cannot be written" in f["title"]


def test_a_network_filesystem_is_named_only_when_the_import_was_slow(tmp_path):
    slow = _h100_facts(import_s=14.0, filesystem="nfs4", mount_point="/shared", network_filesystem=True)
    (f,) = _findings_for(slow, tmp_path)
    assert "nfs4 at /shared" in f["title"] and "local disk" in " ".join(f["fix"]["commands"])
    fast = _h100_facts(import_s=2.1, filesystem="nfs4", mount_point="/shared", network_filesystem=True)
    assert not _findings_for(fast, tmp_path)
