"""Which interpreter is diagnosed by default (cudadoctor/probes/interpreter.py).

cudadoctor installed as an isolated tool (pipx, uv tool, uvx) must diagnose the environment the
user works in, not its own. The end-to-end test installs cudadoctor's wheel into a venv of its own
laid out as pipx / uv tool create it (real pipx needs its dependencies from an index, which a test
must not reach: pipx checks every dependency's metadata before it starts), with its dependencies
taken from this test interpreter, and runs it with another venv active that holds a fake torch.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from cudadoctor.probes import interpreter
from cudadoctor.probes.interpreter import choose, tool_environment

from conftest import REPO
from test_faults import fake_torch


def make_env(root: Path, torch: bool = False, pyvenv: str = "") -> Path:
    """A directory laid out as a venv (bin/python3 an executable, lib/pythonX.Y/site-packages)."""
    (root / "bin").mkdir(parents=True)
    py = root / "bin" / "python3"
    py.symlink_to(sys.executable)
    sp = root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    sp.mkdir(parents=True)
    if torch:
        fake_torch(sp)
    (root / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n{pyvenv}")
    return root


@pytest.fixture
def no_base(monkeypatch):
    """Make this interpreter look like it runs in a venv (so markers are consulted)."""
    monkeypatch.setattr(sys, "base_prefix", "/nonexistent-base")


def test_explicit_python_always_wins(tmp_path, no_base):
    tool = make_env(tmp_path / "pipx" / "venvs" / "cudadoctor")
    (tool / "pipx_metadata.json").write_text("{}")
    user = make_env(tmp_path / "user", torch=True)
    got = choose("/some/python", env={"VIRTUAL_ENV": str(user)}, prefix=str(tool))
    assert got == ("/some/python", interpreter.OPTION, "given with --python")


@pytest.mark.parametrize("marker,kind", [("pipx_metadata.json", "pipx"), ("uv-receipt.toml", "uv tool")])
def test_tool_markers(tmp_path, no_base, marker, kind):
    tool = make_env(tmp_path / "tools" / "cudadoctor")
    assert tool_environment(str(tool)) is None
    (tool / marker).write_text("")
    assert tool_environment(str(tool)) == kind


def test_uvx_cache_env_and_pipx_shared_pth(tmp_path, no_base):
    uvx = make_env(tmp_path / "cache" / "archive-v0" / "FOTAqLDw1sE8FG6h", pyvenv="uv = 0.13.9\n")
    assert tool_environment(str(uvx)) == "uvx"
    not_uv = make_env(tmp_path / "other" / "archive-v0" / "x")  # the same name, not made by uv
    assert tool_environment(str(not_uv)) is None
    run = make_env(tmp_path / "somewhere" / "abc123")
    sp = next((run / "lib").glob("python*/site-packages"))
    (sp / "pipx_shared.pth").write_text("/x/shared/lib/site-packages\n")
    assert tool_environment(str(run)) == "pipx"


def test_isolated_tool_diagnoses_active_venv_then_conda_then_path(tmp_path, no_base):
    tool = make_env(tmp_path / "uv" / "tools" / "cudadoctor")
    (tool / "uv-receipt.toml").write_text("[tool]\n")
    user = make_env(tmp_path / "proj" / ".venv", torch=True)
    conda = make_env(tmp_path / "conda" / "envs" / "ml", torch=True)
    path_py = make_env(tmp_path / "usr")
    env = {"VIRTUAL_ENV": str(user), "CONDA_PREFIX": str(conda), "PATH": f"{tool}/bin{os.pathsep}{path_py}/bin"}
    py, reason, why = choose(None, env=env, prefix=str(tool), executable=str(tool / "bin" / "python3"))
    assert (py, reason) == (str(user / "bin" / "python3"), interpreter.ACTIVE_VENV)
    assert "VIRTUAL_ENV" in why and "uv tool" in why
    del env["VIRTUAL_ENV"]
    py, reason, why = choose(None, env=env, prefix=str(tool))
    assert (py, reason) == (str(conda / "bin" / "python3"), interpreter.ACTIVE_CONDA) and "CONDA_PREFIX" in why
    del env["CONDA_PREFIX"]
    # the tool's own bin directory on PATH is skipped: the first other python is taken
    py, reason, why = choose(None, env=env, prefix=str(tool))
    assert (py, reason) == (str(path_py / "bin" / "python3"), interpreter.ON_PATH) and "PATH" in why
    py, reason, why = choose(None, env={"PATH": f"{tool}/bin"}, prefix=str(tool), executable="/tool/python")
    assert (py, reason) == ("/tool/python", interpreter.OWN) and "no other Python" in why


def test_plain_venv_is_its_own_user_unless_it_lacks_torch(tmp_path, no_base):
    """A venv cudadoctor was pip-installed into is the user's, unless it has no torch while another is active."""
    mine = make_env(tmp_path / "mine", torch=True)
    user = make_env(tmp_path / "user", torch=True)
    env = {"VIRTUAL_ENV": str(user)}
    assert choose(None, env=env, prefix=str(mine), executable="/me")[1] == interpreter.OWN
    assert choose(None, env={"VIRTUAL_ENV": str(mine)}, prefix=str(mine), executable="/me")[1] == interpreter.OWN
    bare = make_env(tmp_path / "bare")
    py, reason, why = choose(None, env=env, prefix=str(bare), executable="/me")
    assert (py, reason) == (str(user / "bin" / "python3"), interpreter.ACTIVE_VENV) and "without torch" in why
    assert choose(None, env={}, prefix=str(bare), executable="/me")[1] == interpreter.OWN


def test_not_a_venv_is_never_isolated(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "base_prefix", sys.prefix)
    user = make_env(tmp_path / "user", torch=True)
    assert choose(None, env={"VIRTUAL_ENV": str(user)}, prefix=sys.prefix)[1] == interpreter.OWN


# --- end to end: an isolated install beside an active venv -------------------------------------

DEPS = ("click", "packaging", "pynvml.py")


@pytest.fixture(scope="module")
def isolated_install(tmp_path_factory):
    """cudadoctor's wheel installed into a venv of its own (the layout pipx creates)."""
    root = tmp_path_factory.mktemp("iso")
    wh = root / "wheels"
    src = root / "src"  # a copy: building in the checkout would leave build/ and an .egg-info there
    shutil.copytree(REPO / "cudadoctor", src / "cudadoctor", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "-w", str(wh), str(src)], check=True, capture_output=True, timeout=180)
    tool = root / "tools" / "cudadoctor"  # markers (written per test) say which tool made it
    subprocess.run([sys.executable, "-m", "venv", str(tool)], check=True, capture_output=True, timeout=180)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # else pip sees this checkout installed
    subprocess.run([str(tool / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    *map(str, wh.glob("cudadoctor-*.whl"))], check=True, capture_output=True, timeout=180, env=clean)
    # its dependencies (not torch) from this interpreter's site-packages, as a .pth
    deps = root / "deps"
    deps.mkdir()
    here = Path(sysconfig.get_paths()["purelib"])
    for name in DEPS:
        (deps / name).symlink_to(here / name)
    sp = next((tool / "lib").glob("python*/site-packages"))
    (sp / "deps.pth").write_text(str(deps) + "\n")
    user = root / "user"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(user)], check=True, timeout=120)
    fake_torch(next((user / "lib").glob("python*/site-packages")))
    return tool, user


def run_tool(tool: Path, user: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME")}
    env.update(VIRTUAL_ENV=str(user), PATH=f"{user}/bin{os.pathsep}{env.get('PATH', '')}",
               CUDADOCTOR_TIMEOUTS="torch=30,pyenv=20,nvml=10,toolkit=10", NO_COLOR="1")
    return subprocess.run([str(tool / "bin" / "cudadoctor"), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("marker,kind", [("pipx_metadata.json", "an isolated pipx environment"),
                                         ("uv-receipt.toml", "an isolated uv tool environment"),
                                         (None, "a virtual environment of its own without torch")])
def test_isolated_install_diagnoses_the_active_venv(isolated_install, tmp_path, marker, kind):
    tool, user = isolated_install
    for m in ("pipx_metadata.json", "uv-receipt.toml"):
        (tool / m).unlink(missing_ok=True)
    if marker:
        (tool / marker).write_text("{}")
    r = run_tool(tool, user, "check", "--format", "json", "--show-pii", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    facts = json.loads(r.stdout)["facts"]
    assert facts["tool"]["interpreter"]["reason"] == "virtual-env"
    assert facts["tool"]["interpreter"]["path"] == str(user / "bin" / "python3")
    assert kind in facts["tool"]["interpreter"]["why"]
    assert facts["python"]["prefix"] == str(user)
    assert facts["torch"]["version"] == "2.6.0+cu126"  # the fake torch of the active venv, imported
    text = run_tool(tool, user, "check", cwd=tmp_path).stdout
    assert f"diagnosing {user}/bin/python3 (the active virtual environment, VIRTUAL_ENV; cudadoctor itself runs in {kind})" in text
    assert "2.6.0+cu126" in text and "not installed" not in text


def test_isolated_install_python_option_still_overrides(isolated_install, tmp_path):
    tool, user = isolated_install
    (tool / "pipx_metadata.json").write_text("{}")
    r = run_tool(tool, user, "check", "--format", "json", "--quick", "--python", str(tool / "bin" / "python"), cwd=tmp_path)
    facts = json.loads(r.stdout)["facts"]
    assert facts["tool"]["interpreter"]["reason"] == "option"
    assert facts["torch"]["installed"] is False
