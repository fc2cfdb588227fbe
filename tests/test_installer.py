"""Installer-aware fixes (cudadoctor/checks/_installer.py): every torch install command is written for
the installer that manages the environment — pip, conda (conda-forge / the PyTorch channel / pip
inside conda), a uv project, a uv venv, an OS-managed Python.

The manager facts come from the real pyenv probe, run in environments laid out as each installer
leaves them (pyvenv.cfg with uv's key, a uv project's pyproject.toml + uv.lock, conda-meta records),
and are put into recorded facts (a real case: an RTX 5090 with torch 2.6 cu126, which needs a newer
torch built for CUDA 12.8), so the checks plan the same install and only the installer differs.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import casefacts
from conftest import FIXTURES, REPO

from cudadoctor import registry
from cudadoctor.checks._installer import manager
from cudadoctor.facts import Facts
from cudadoctor.report import diagnose

for _up in (REPO.parent, REPO.parent.parent):  # the shared cases beside main; a worktree looks one up
    if not casefacts.CASES.is_dir() and (_up / "shared" / "cases").is_dir():
        casefacts.CASES = _up / "shared" / "cases"

PROBE = REPO / "cudadoctor" / "probes" / "child" / "pyenv_probe.py"
REG = registry.load()
CASE = "001-rtx5090d-torch26-cu126"


def venv(path: Path, extra_cfg: str = "") -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    if extra_cfg:
        with open(path / "pyvenv.cfg", "a") as f:
            f.write(extra_cfg)
    return path


def probe(python: Path, cwd: Path, env: dict | None = None) -> dict:
    out = cwd / "pyenv.json"
    e = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "UV_PROJECT_ENVIRONMENT")}
    e.update(env or {})
    subprocess.run([str(python), str(PROBE), str(out)], check=True, cwd=cwd, env=e, timeout=60)
    return json.loads(out.read_text())["python"]


def case_facts(python: dict | None = None, torch_installer: str = "pip") -> dict:
    if not casefacts.CASES.is_dir():
        pytest.skip("shared cases not found")
    facts = casefacts.facts_from_case(CASE)
    if python is not None:
        facts["python"] = {**facts.get("python", {}), **python}
    for d in facts["packages"]["distributions"]:
        if d["name"] == "torch":
            d["installer"] = torch_installer
    return facts


def arch_fix(facts: dict) -> list:
    report = diagnose(copy.deepcopy(facts), REG)
    f = next(f for f in report.findings if f.code == "gpu-arch-unsupported")
    return list(f.fix.commands)


def all_commands(facts: dict) -> list:
    return [c for f in diagnose(copy.deepcopy(facts), REG).findings for c in f.fix.commands]


# --- the probe records what says how the environment is managed --------------------------------

def test_probe_plain_venv_records_nothing_special(tmp_path):
    env = venv(tmp_path / "env")
    py = probe(env / "bin" / "python", tmp_path)
    assert py["manager"] == {} and py["venv"] is True


def test_probe_uv_venv_and_project(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n\n[tool.uv]\npackage = false\n\n'
                                         '[[tool.uv.index]]\nname = "pytorch-cu126"\nurl = "https://download.pytorch.org/whl/cu126"\n'
                                         "explicit = true\n")
    (proj / "uv.lock").write_text("version = 1\n")
    env = venv(proj / ".venv", "uv = 0.13.9\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    py = probe(env / "bin" / "python", elsewhere)  # found from where the environment is, not only the cwd
    assert py["manager"]["uv"] == "0.13.9"
    p = py["manager"]["uv_project"]
    assert (p["root"], p["lock"], p["tool_uv"], p["is_this_env"]) == (str(proj), True, True, True)
    assert p["indexes"] == ["https://download.pytorch.org/whl/cu126"]
    other = venv(tmp_path / "other-env")  # another env, run inside the project: not the project's env
    assert probe(other / "bin" / "python", proj)["manager"]["uv_project"]["is_this_env"] is False


def test_probe_conda_meta(tmp_path):
    env = venv(tmp_path / "env")
    meta = env / "conda-meta"
    meta.mkdir()
    (meta / "pytorch-2.5.1-cuda126_mkl_py311_h1b2c3d4_303.json").write_text(json.dumps(
        {"name": "pytorch", "version": "2.5.1", "build": "cuda126_mkl_py311_h1b2c3d4_303",
         "channel": "https://conda.anaconda.org/conda-forge/linux-64", "files": ["x"] * 3}))
    (meta / "numpy-2.1.0-py311_0.json").write_text(json.dumps({"name": "numpy"}))
    py = probe(env / "bin" / "python", tmp_path)
    assert py["conda"] is True
    assert py["manager"]["conda_packages"] == {"pytorch": {"version": "2.5.1", "build": "cuda126_mkl_py311_h1b2c3d4_303",
                                                           "channel": "https://conda.anaconda.org/conda-forge/linux-64"}}


# --- each manager gets its own installer's command ----------------------------------------------

def test_pip_venv_keeps_pip():
    facts = case_facts({"venv": True, "manager": {}})
    assert manager(Facts(facts)) == "pip"
    assert arch_fix(facts) == ["python -m pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"]


def test_uv_project_gets_uv_add_with_the_variants_index(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["torch"]\n')
    (proj / "uv.lock").write_text("version = 1\n")
    env = venv(proj / ".venv", "uv = 0.13.9\n")
    facts = case_facts(probe(env / "bin" / "python", proj), torch_installer="uv")
    assert manager(Facts(facts)) == "uv-project"
    cmds = arch_fix(facts)
    assert cmds[0].startswith("uv add torch==2.11.0 --index pytorch-cu128=https://download.pytorch.org/whl/cu128  #")
    assert cmds[1].startswith("uv sync")
    assert not any("pip" in c.split("#")[0] for c in cmds)
    # the other findings' commands too (checks/_installer.adapt_commands): nothing runs pip in a uv project
    assert not any("python -m pip" in c for c in all_commands(facts))


def test_uv_venv_gets_uv_pip(tmp_path):
    env = venv(tmp_path / ".venv", "uv = 0.13.9\n")
    facts = case_facts(probe(env / "bin" / "python", tmp_path), torch_installer="uv")
    assert manager(Facts(facts)) == "uv-venv"
    assert arch_fix(facts) == ["uv pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"]
    assert not any("python -m pip" in c for c in all_commands(facts))
    # torch that `uv pip` put into a venv python made: the same
    plain = case_facts({"venv": True, "manager": {}}, torch_installer="uv")
    assert manager(Facts(plain)) == "uv-venv"


def conda_facts(tmp_path, channel: str, installer: str = "conda") -> dict:
    env = venv(tmp_path / "env")
    (env / "conda-meta").mkdir()
    if installer == "conda":
        (env / "conda-meta" / "pytorch-2.6.0-x.json").write_text(json.dumps(
            {"name": "pytorch", "version": "2.6.0", "build": "cuda126_generic_py312_h0_0", "channel": channel}))
    return case_facts(probe(env / "bin" / "python", tmp_path), torch_installer=installer)


def test_conda_forge_torch_gets_conda_forge_build(tmp_path):
    facts = conda_facts(tmp_path, "https://conda.anaconda.org/conda-forge/linux-64")
    assert manager(Facts(facts)) == "conda"
    assert arch_fix(facts) == ['conda install -c conda-forge pytorch-gpu=2.11 "cuda-version<=12.8"']


def test_pytorch_channel_torch_moves_to_conda_forge_after_25(tmp_path):
    facts = conda_facts(tmp_path, "pytorch")
    cmds = arch_fix(facts)
    assert cmds[0].startswith("conda remove --force pytorch  # from the pytorch channel")
    assert cmds[1] == 'conda install -c conda-forge pytorch-gpu=2.11 "cuda-version<=12.8"'


def test_pip_inside_conda_keeps_pip(tmp_path):
    facts = conda_facts(tmp_path, "", installer="pip")
    assert manager(Facts(facts)) == "conda-pip"
    assert arch_fix(facts) == ["python -m pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"]


def test_os_managed_python_gets_a_venv_first():
    facts = case_facts({"venv": False, "manager": {"externally_managed": True}})
    assert manager(Facts(facts)) == "pip-system-managed"
    cmds = arch_fix(facts)
    assert cmds[0].startswith("python3 -m venv .venv  #")
    assert cmds[1] == ".venv/bin/python -m pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"


def test_conda_pytorch_channel_still_used_where_it_published():
    """A conda torch (collect_env [conda] lines: no channel known) and a release the channel has."""
    facts = json.loads((FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json").read_text())
    facts["packages"]["distributions"] = [{"name": "pytorch", "version": "2.1.0", "installer": "conda"}]
    from cudadoctor.checks._fixes import install_commands
    from cudadoctor.interpret import environment

    fx = Facts(facts)
    assert install_commands(environment(fx), "2.1.0", "cu118", companions=[]) == [
        "conda remove --force cpuonly  # only if installed: it pins the CPU build",
        "conda install pytorch==2.1.0 pytorch-cuda=11.8 -c pytorch -c nvidia"]
    assert install_commands(environment(fx), "2.7.1", "cu128", companions=["torchvision"]) == [
        'conda install -c conda-forge pytorch-gpu=2.7 torchvision=0.22 "cuda-version<=12.8"']
    assert install_commands(environment(fx), "2.7.1", "cpu", companions=[]) == ["conda install -c conda-forge pytorch-cpu=2.7"]


def test_every_shared_case_fix_matches_its_manager():
    """Over the real cases: a conda-managed torch never gets a pip install of torch, a pip one never conda."""
    if not casefacts.CASES.is_dir():
        pytest.skip("shared cases not found")
    seen = set()
    for case in casefacts.case_ids():
        facts = casefacts.facts_from_case(case)
        if len([d for d in facts["packages"].get("distributions", []) if d["name"] in ("torch", "pytorch")]) > 1:
            continue  # a conda pytorch beside a pip torch: either installer's command is an answer
        m = manager(Facts(facts))
        seen.add(m)
        for f in diagnose(facts, REG).findings:
            for c in f.fix.commands:
                cmd = c.split("#")[0]
                if m == "conda" and "torch==" in cmd:
                    assert not cmd.startswith("python -m pip install"), (case, c)
                if m == "pip":
                    assert not (cmd.startswith("conda install") and "pytorch" in cmd), (case, c)
    assert "pip" in seen
