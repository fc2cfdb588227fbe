"""/dev/shm probed on the machine (probes/system.py dev_shm) and what the checks make of it: a container's
64 MB default (shm-exhausted, info) and a /dev/shm this user may not write (dev-shm-permission-denied)."""

from __future__ import annotations

import os
import sys

import pytest

from cudadoctor import registry
from cudadoctor.facts import new_facts
from cudadoctor.probes import system
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
MB = 1024 * 1024


def _facts(container, shm):
    f = new_facts(origin="file")
    f["system"] = {"os": "Linux", "container": container, "dev_shm": shm}
    return f


def _found(facts):
    return {(f.code, f.severity): f for f in diagnose(facts, REG).findings}


def test_probe_reads_mode_size_and_writability(tmp_path):
    shm = tmp_path / "dev" / "shm"
    shm.mkdir(parents=True)
    os.chmod(shm, 0o1777)
    got = system.dev_shm(str(tmp_path))
    assert got["mode"] == "1777" and got["writable"] is True
    assert got["size_bytes"] >= got["free_bytes"] >= 0
    assert system.dev_shm(str(tmp_path / "nowhere")) is None
    if sys.platform.startswith("linux"):
        assert system.probe_system(str(tmp_path))["dev_shm"]["mode"] == "1777"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere: the check needs an ordinary user")
def test_probe_sees_a_root_only_dev_shm(tmp_path):
    shm = tmp_path / "dev" / "shm"
    shm.mkdir(parents=True)
    os.chmod(shm, 0o555)
    try:
        assert system.dev_shm(str(tmp_path))["writable"] is False
    finally:
        os.chmod(shm, 0o755)


def test_docker_default_shm_is_an_info_and_a_large_one_nothing():
    found = _found(_facts("docker", {"mode": "1777", "size_bytes": 64 * MB, "free_bytes": 64 * MB, "writable": True}))
    f = found[("shm-exhausted", "info")]
    assert "64 MB" in f.title and f.fix.commands[0].startswith("docker run --shm-size")
    found = _found(
        _facts("docker", {"mode": "1777", "size_bytes": 16 * 1024 * MB, "free_bytes": 9 * 1024 * MB, "writable": True})
    )
    assert not any(c in ("shm-exhausted", "dev-shm-permission-denied") for c, _ in found)
    # outside a container a small /dev/shm is the admin's choice: not reported
    found = _found(_facts(None, {"mode": "1777", "size_bytes": 64 * MB, "free_bytes": 64 * MB, "writable": True}))
    assert not any(c == "shm-exhausted" for c, _ in found)


def test_unwritable_dev_shm_is_a_warning_before_anything_fails():
    found = _found(_facts(None, {"mode": "755", "size_bytes": 8 * 1024 * MB, "free_bytes": 8 * 1024 * MB, "writable": False}))
    f = found[("dev-shm-permission-denied", "warning")]
    assert "755" in f.title and "chmod 1777" in f.fix.commands[1]
