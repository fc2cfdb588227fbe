"""Plugins: a real plugin package installed with pip, and broken ones that must not break a run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, run_cli, write_json

NODRIVER = FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"


@pytest.fixture(scope="module")
def example_plugin(tmp_path_factory):
    """docs/plugin-example, installed by pip into a directory put on the path."""
    target = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                        "--target", str(target), str(REPO / "docs" / "plugin-example")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return target


def fake_dist(site: Path, name: str, module_src: str) -> None:
    """An installed distribution as pip leaves it: a module plus a dist-info with entry points."""
    mod = name.replace("-", "_")
    (site / f"{mod}.py").write_text(textwrap.dedent(module_src))
    info = site / f"{mod}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[cudadoctor.checks]\n{mod} = {mod}:register\n")


def test_example_plugin_shows_in_list_checks_and_report(example_plugin, tmp_path):
    env = {"PYTHONPATH": str(example_plugin)}
    r = run_cli("list-checks", env=env)
    assert "example-launch-blocking" in r.stdout and "[cudadoctor-example:example]" in r.stdout
    facts = json.loads(NODRIVER.read_text())
    facts["environment"]["vars"]["CUDA_LAUNCH_BLOCKING"] = "1"
    p = write_json(tmp_path / "f.json", facts)
    r = run_cli("check", "--facts", str(p), "--format", "json", env=env)
    report = json.loads(r.stdout)
    hit = [f for f in report["findings"] if f["code"] == "example-launch-blocking"]
    assert hit and hit[0]["source"] == "cudadoctor-example:example"
    assert run_cli("explain", "example-launch-blocking", env=env).returncode == 0
    # CUDADOCTOR_NO_PLUGINS turns third-party checks off, built-ins stay.
    r = run_cli("list-checks", env={**env, "CUDADOCTOR_NO_PLUGINS": "1"})
    assert "example-launch-blocking" not in r.stdout and "no-nvidia-driver" in r.stdout


def test_broken_plugins_do_not_break_the_run(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    fake_dist(site, "bad-import", "raise RuntimeError('plugin exploded on import')\n")
    common = """
        from cudadoctor.model import Code, Fix, check
        C = Code(code="{code}", title="t", area="tool", severity="warning",
                 explanation={{"what": "w", "why": "w", "confirm": "c", "fix": "f"}})
    """
    fake_dist(site, "bad-raise", common.format(code="bad-raise-x") + """
        @check(C)
        def boom(facts):
            raise ZeroDivisionError("check blew up")
        def register():
            return [boom]
    """)
    fake_dist(site, "bad-hang", common.format(code="bad-hang-x") + """
        import time
        @check(C)
        def stuck(facts):
            time.sleep(3600)
        def register():
            return [stuck]
    """)
    fake_dist(site, "bad-shape", common.format(code="bad-shape-x") + """
        @check(C)
        def wrong(facts):
            return ["not a finding"]
        def register():
            return [wrong]
    """)
    fake_dist(site, "bad-register", "def register():\n    return 42\n")
    r = run_cli("check", "--facts", str(NODRIVER), "--format", "json", env={"PYTHONPATH": str(site)}, timeout=60)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    crashed = {f["evidence"]["source"].split(":")[0]: f for f in report["findings"] if f["code"] == "check-crashed"}
    assert set(crashed) == {"bad-import", "bad-raise", "bad-hang", "bad-shape", "bad-register"}
    assert "plugin exploded on import" in crashed["bad-import"]["evidence"]["error"]
    assert crashed["bad-hang"]["evidence"]["phase"] == "timed out"
    assert "ZeroDivisionError" in crashed["bad-raise"]["evidence"]["error"]
    # The built-in diagnosis is still there.
    assert any(f["code"] == "no-nvidia-driver" for f in report["findings"])
