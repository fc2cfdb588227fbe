"""The install routes of docs/install.md, tried as a user would, offline: a wheel built from the checkout
(`python -m pip wheel`, `python -m build`) and the checkout itself installed into fresh venvs, then
`cudadoctor check --quick`, `kb` and `--help` run from there; the repository URL is one constant that
the package metadata carries; the upgrade advice names the interpreter cudadoctor was installed into;
and cudadoctor installed as a tool diagnoses the uv project it is run in.

No package index is reached: cudadoctor goes in with --no-deps --no-index, and its dependencies (click,
packaging, nvidia-ml-py; setuptools to build) are this test interpreter's, seen through a .pth file as
tests/test_interpreter.py does (pip, pipx and uv would fetch them from PyPI).
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

from conftest import REPO, load_fixture, write_json
from cudadoctor.probes import interpreter
from cudadoctor.project import GIT_REQUIREMENT, REPO_URL, doc_url, upgrade_advice
from test_faults import fake_torch

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None  # type: ignore[assignment]

RUNTIME = ("click", "packaging", "pynvml.py", "nvidia_ml_py")  # what `dependencies` installs
BUILD = ("setuptools", "_distutils_hack", "wheel")  # what [build-system] requires


def clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME", "NO_COLOR", "UV_PROJECT_ENVIRONMENT")}
    env.update(NO_COLOR="1", CUDADOCTOR_TIMEOUTS="torch=30,pyenv=20,nvml=10,toolkit=10", **extra)
    return env


def source_copy(root: Path) -> Path:
    """The checkout's package files (building in the checkout would leave build/ and an .egg-info there)."""
    src = root / "src"
    shutil.copytree(REPO / "cudadoctor", src / "cudadoctor", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    return src


def fresh_venv(path: Path, names: tuple) -> Path:
    """A new venv (with pip) that sees only ``names`` of this interpreter's site-packages (and their dist-info)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True, timeout=300)
    here = Path(sysconfig.get_paths()["purelib"])
    deps = path / "borrowed"
    deps.mkdir()
    for name in names:
        stem = name.removesuffix(".py")
        for p in [here / name, *here.glob(f"{stem.replace('_', '[-_]')}-*.dist-info")]:
            if p.exists() and not (deps / p.name).exists():
                (deps / p.name).symlink_to(p)
    sp = next((path / "lib").glob("python*/site-packages"))
    (sp / "borrowed.pth").write_text(str(deps) + "\n")
    return path


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("env", clean_env())
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `python -m pip wheel --no-deps -w dist .` makes from the checkout (docs/install.md)."""
    root = tmp_path_factory.mktemp("wheel")
    r = run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
             "-w", root / "dist", source_copy(root)])
    assert r.returncode == 0, r.stderr
    return next((root / "dist").glob("cudadoctor-*-py3-none-any.whl"))


@pytest.fixture(scope="module")
def wheel_venv(wheel, tmp_path_factory) -> Path:
    venv = fresh_venv(tmp_path_factory.mktemp("fromwheel") / "venv", RUNTIME)
    r = run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel])
    assert r.returncode == 0, r.stderr
    return venv


def test_one_repository_url_in_the_code_and_the_metadata(wheel):
    assert tomllib is not None or pytest.skip("tomllib needs Python 3.11")
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Source"] == urls["Homepage"] == REPO_URL and urls["Documentation"] == doc_url("install.md")
    assert all(u.startswith(REPO_URL) for u in urls.values())
    import zipfile

    with zipfile.ZipFile(wheel) as z:  # what pip show / a package index displays
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert f"Project-URL: Source, {REPO_URL}" in meta and f"Project-URL: Documentation, {doc_url('install.md')}" in meta
    assert (REPO / "docs" / "install.md").is_file()  # the page every hint points at exists


def check_installed(venv: Path, cwd: Path) -> None:
    """What a user runs first after installing: check --quick, a kb question, --help, from outside the checkout."""
    py, exe = venv / "bin" / "python", venv / "bin" / "cudadoctor"
    where = run([py, "-c", "import cudadoctor; print(cudadoctor.__file__)"], cwd=cwd)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr  # the installed copy, not the checkout
    r = run([exe, "check", "--quick", "--format", "json"], cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    assert report["tool"]["kb_date"] and all(c["status"] == "ok" for c in report["checks"])
    kb = run([exe, "kb", "driver", "12.8"], cwd=cwd)
    assert kb.returncode == 0 and "Linux >= 525.60.13" in kb.stdout, kb.stderr
    helptext = run([exe, "check", "--help"], cwd=cwd).stdout
    assert doc_url("collect-env.md") in helptext


def test_wheel_into_a_fresh_venv(wheel_venv, tmp_path):
    check_installed(wheel_venv, tmp_path)


def test_checkout_into_a_fresh_venv(tmp_path):
    """`python -m pip install .` in a clone (offline here: --no-build-isolation with setuptools at hand)."""
    venv = fresh_venv(tmp_path / "venv", RUNTIME + BUILD)
    r = run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-build-isolation",
             source_copy(tmp_path)])
    assert r.returncode == 0, r.stderr
    check_installed(venv, tmp_path)


def test_python_m_build_makes_the_same_wheel(tmp_path):
    # build.__main__: a build/ folder left in a checkout by `pip wheel .` imports as a namespace package `build`
    pytest.importorskip("build.__main__", reason="`build` is in the test extra; CI has it")
    r = run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp_path / "dist", source_copy(tmp_path)],
            env=dict(os.environ), cwd=tmp_path)  # build found as this interpreter finds it
    assert r.returncode == 0, r.stderr[-2000:]
    whl = next((tmp_path / "dist").glob("cudadoctor-*-py3-none-any.whl"))
    import zipfile

    names = set(zipfile.ZipFile(whl).namelist())
    assert {"cudadoctor/kb/cuda_drivers.json", "cudadoctor/probes/child/torch_probe.py", "cudadoctor/checks/driver.py"} <= names


def test_upgrade_advice_names_the_installed_interpreter(wheel_venv, tmp_path):
    """A newer report read by an old install: the advice upgrades that install, from the repository."""
    newer = load_fixture("live-torch2141-cu130-nodriver.json")
    newer["schema_version"] = 99
    f = write_json(tmp_path / "newer.json", newer)
    r = run([wheel_venv / "bin" / "cudadoctor", "check", "--facts", f], cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"upgrade cudadoctor: {wheel_venv}/bin/python -m pip install -U {GIT_REQUIREMENT}" in r.stderr
    assert "pip install -U cudadoctor" not in r.stderr  # no package index has it


@pytest.mark.parametrize("tool,cmd", [
    ("pipx", f"pipx install --force {GIT_REQUIREMENT}"),
    ("uv tool", f"uv tool install --force {GIT_REQUIREMENT}"),
    ("uvx", f"uvx --refresh --from {GIT_REQUIREMENT} cudadoctor"),
])
def test_upgrade_advice_follows_the_tool(tool, cmd):
    assert upgrade_advice(tool, "/x/python").startswith(f"upgrade cudadoctor: {cmd} (other routes: ")


# --- a uv project: its .venv is the environment diagnosed -------------------------------------


def uv_project(root: Path, lock: bool = True, venv: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "proj"\nversion = "0.1.0"\ndependencies = ["torch"]\n')
    if lock:
        (root / "uv.lock").write_text("version = 1\n")
    if venv:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True, timeout=120)
        fake_torch(next((root / ".venv" / "lib").glob("python*/site-packages")))
    (root / "src" / "proj").mkdir(parents=True)
    return root


def test_choose_takes_the_uv_project_env_after_an_active_venv(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "base_prefix", "/nonexistent-base")  # this interpreter looks like a venv
    tool = tmp_path / "tools" / "cudadoctor"
    (tool / "bin").mkdir(parents=True)
    (tool / "uv-receipt.toml").write_text("")
    proj = uv_project(tmp_path / "proj")
    py = str(proj / ".venv" / "bin" / "python3")
    got = choose_from(tool, proj / "src" / "proj", {})
    assert got[:2] == (py, interpreter.UV_PROJECT) and "uv project" in got[2]
    conda = tmp_path / "conda"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(conda)], check=True, timeout=120)
    assert choose_from(tool, proj, {"CONDA_PREFIX": str(conda)})[1] == interpreter.UV_PROJECT  # uv run ignores conda
    other = tmp_path / "other"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(other)], check=True, timeout=120)
    assert choose_from(tool, proj, {"VIRTUAL_ENV": str(other)})[1] == interpreter.ACTIVE_VENV  # activated: wins
    assert choose_from(tool, proj, {"UV_PROJECT_ENVIRONMENT": str(other)})[0] == str(other / "bin" / "python3")
    plain = tmp_path / "plain"  # a pyproject.toml without uv.lock or .venv is not a uv project
    uv_project(plain, lock=False, venv=False)
    assert choose_from(tool, plain, {})[1] != interpreter.UV_PROJECT


def choose_from(tool: Path, cwd: Path, env: dict):
    return interpreter.choose(None, env={"PATH": "", **env}, prefix=str(tool), executable=str(tool / "bin" / "python"),
                              cwd=str(cwd))


def test_tool_install_in_a_uv_project_diagnoses_its_venv(wheel_venv, tmp_path):
    """`uv tool install` cudadoctor, then `cudadoctor check` in a subfolder of a uv project, nothing activated."""
    (wheel_venv / "uv-receipt.toml").write_text("[tool]\n")
    try:
        proj = uv_project(tmp_path / "proj")
        env = clean_env(PATH=f"{wheel_venv}/bin{os.pathsep}/usr/bin{os.pathsep}/bin")
        r = run([wheel_venv / "bin" / "cudadoctor", "check", "--format", "json", "--show-pii"], cwd=proj / "src", env=env)
        assert r.returncode in (0, 1), r.stderr
        facts = json.loads(r.stdout)["facts"]
        assert facts["tool"]["interpreter"]["reason"] == "uv-project"
        assert facts["tool"]["interpreter"]["path"] == str(proj / ".venv" / "bin" / "python3")
        assert facts["torch"]["version"] == "2.6.0+cu126"  # the project's (fake) torch, imported
        text = run([wheel_venv / "bin" / "cudadoctor", "check"], cwd=proj, env=env).stdout
        assert f"diagnosing {proj}/.venv/bin/python3 (the uv project's environment" in text
    finally:
        (wheel_venv / "uv-receipt.toml").unlink()
