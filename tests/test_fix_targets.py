"""Fix commands act where they are run: on the diagnosed interpreter, and they change the build.

Real venvs made here (``python -m venv --without-pip``), a torch distribution installed into them by
pip itself (a small wheel built here with the CUDA build's version ``2.14.1+cu130`` and torch's
``version.py``; its ``import torch`` fails as a broken install does), ``cudadoctor check --python``
run on them as a user runs it, and the printed fix commands run by pip with ``--dry-run --report``
(PyTorch's index URL mapped to a local folder of wheels with the same names): the report says what
pip would install, and pip's "Requirement already satisfied: torch in <site-packages>" says where.

issue 23, item 2: with ``--python`` every fix names the diagnosed interpreter (a plain ``python``
would be another one); with that interpreter first on PATH the fixes stay short.
issue 23, item 5: every reinstall fix changes the installed build (``--force-reinstall``): the same
command without it is answered "Requirement already satisfied" — checked here too, so the test fails
if pip ever stops needing it or the fix loses it.
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest

import casefacts
from conftest import REPO, load_fixture
from cudadoctor import registry
from cudadoctor.report import diagnose

INDEX = "https://download.pytorch.org/whl/"
IMPORT_ERROR = "libcudart.so.13: cannot open shared object file: No such file or directory"


def _record_line(name: str, data: bytes) -> List[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def build_wheel(folder: Path, name: str, version: str, files: Dict[str, str]) -> Path:
    """A pure-Python wheel pip installs like any other (METADATA, WHEEL, RECORD with hashes)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name}-{version}.dist-info"
    contents = dict(files)
    contents[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    contents[f"{dist}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rows = [_record_line(n, d.encode()) for n, d in contents.items()] + [[f"{dist}/RECORD", "", ""]]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    contents[f"{dist}/RECORD"] = buf.getvalue()
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for n, d in contents.items():
            z.writestr(n, d)
    return path


def torch_files(version: str, cuda: str | None) -> Dict[str, str]:
    return {
        "torch/__init__.py": f"raise ImportError({IMPORT_ERROR!r})\n",
        "torch/version.py": f"__version__ = {version!r}\ncuda = {cuda!r}\ngit_version = 'abc'\nhip = None\ndebug = False\n",
    }


def pip(python: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The test's own pip acting on ``python``'s environment (pip --python: the venv has no pip)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # this machine's find-links/extra-index would add candidates
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A venv with torch 2.14.1+cu130 installed by pip, and PyTorch's cu130 and cpu indexes as folders."""
    tmp = tmp_path_factory.mktemp("targets")
    indexes = {
        "cu130": build_wheel(tmp / "idx" / "cu130", "torch", "2.14.1+cu130", torch_files("2.14.1+cu130", "13.0")).parent,
        "cpu": build_wheel(tmp / "idx" / "cpu", "torch", "2.14.1+cpu", torch_files("2.14.1+cpu", None)).parent,
    }
    env = tmp / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=120)
    py = env / "bin" / "python"
    done = pip(py, "install", "--no-index", "--find-links", str(indexes["cu130"]), "torch==2.14.1+cu130")
    if done.returncode != 0:
        pytest.skip(f"pip --python could not install into a venv here: {done.stderr[-300:]}")
    return {"tmp": tmp, "env": env, "python": py, "indexes": indexes}


def check(python: Path, path_first: Path | None, *args: str) -> dict:
    """`cudadoctor check --python PY` as a user runs it; ``path_first`` leads PATH (None: PY's dir is not on it)."""
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env.pop("CONDA_PREFIX", None)
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d and Path(d) != python.parent]
    env["PATH"] = os.pathsep.join(([str(path_first)] if path_first else []) + dirs)
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run(
        [sys.executable, "-m", "cudadoctor", "check", "--python", str(python), "--format", "json", "--show-pii", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=str(python.parent.parent.parent),
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def commands(report: dict) -> List[str]:
    return [c for f in report["findings"] for c in (f.get("fix") or {}).get("commands") or []]


def pip_lines(cmds: List[str]) -> List[str]:
    """Every pip invocation in the commands (also inside a comment): from its interpreter to the end."""
    return [m.group(0) for c in cmds for m in re.finditer(r"\S*python3?\S* -m pip .*", c)]


def dry_run(world: dict, line: str) -> subprocess.CompletedProcess:
    """A printed pip command, run with --dry-run --report by the test's pip for the interpreter it names;
    PyTorch's index URLs point to the local folders."""
    words = shlex.split(line.split("  #", 1)[0])
    assert words[1:3] == ["-m", "pip"], line
    interp, sub, rest = words[0], words[3], words[4:]
    out: List[str] = [] if "--index-url" in rest else ["--no-index"]  # never PyPI from a test
    it = iter(rest)
    for w in it:
        if w == "--index-url":
            url = next(it)
            out += ["--no-index", "--find-links", str(world["indexes"][url[len(INDEX) :]])]
        else:
            out.append(w)
    report = world["tmp"] / "report.json"
    report.unlink(missing_ok=True)
    done = pip(Path(interp), sub, "--dry-run", "--report", str(report), *out)
    done.stderr = done.stdout + done.stderr  # pip's log, with "Requirement already satisfied: torch in <where>"
    done.stdout = report.read_text() if report.is_file() else ""
    return done


def installs(result: subprocess.CompletedProcess) -> List[str]:
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    return [f"{i['metadata']['name']}=={i['metadata']['version']}" for i in report["install"]]


# --- item 2: the fixes name the interpreter that --python diagnosed ------------------------------


def test_fixes_name_the_diagnosed_interpreter_when_python_on_path_is_another(world):
    py = world["python"]
    report = check(py, None)
    interp = report["facts"]["tool"]["interpreter"]
    assert interp["reason"] == "option" and interp["python_on_path_is_target"] is False
    codes = {f["code"] for f in report["findings"]}
    assert "torch-import-failed" in codes, codes
    lines = pip_lines(commands(report))
    assert len(lines) >= 2, commands(report)
    for line in lines:
        assert line.startswith(f"{py} -m pip "), line
    # torch-import-failed's reinstall, run as printed against the venv: pip reinstalls torch there
    fix = next(f for f in report["findings"] if f["code"] == "torch-import-failed")["fix"]["commands"]
    install = next(c for c in fix if " install " in c)
    assert installs(dry_run(world, install)) == ["torch==2.14.1+cu130"]


def test_fixes_stay_short_when_the_diagnosed_interpreter_is_the_python_on_path(world):
    report = check(world["python"], world["python"].parent)
    interp = report["facts"]["tool"]["interpreter"]
    assert interp["python_on_path_is_target"] is True, interp
    lines = pip_lines(commands(report))
    assert lines and all(line.startswith("python -m pip ") for line in lines), lines


# --- item 5: a reinstall changes the installed build -----------------------------------------------


def test_cpu_wheel_hint_replaces_the_installed_cuda_build(world):
    """no-nvidia-driver on this GPU-less machine, torch 2.14.1+cu130 installed: the CPU-wheel hint, as
    printed, makes pip install 2.14.1+cpu; without --force-reinstall pip keeps the CUDA build."""
    py = world["python"]
    report = check(py, None, "--quick")
    hint = next(f for f in report["findings"] if f["code"] == "no-nvidia-driver")["fix"]["commands"]
    line = next(iter(pip_lines(hint)), None)
    assert line and line.startswith(f"{py} -m pip install --force-reinstall torch --index-url {INDEX}cpu"), hint
    assert installs(dry_run(world, line)) == ["torch==2.14.1+cpu"]
    kept = dry_run(world, line.replace(" --force-reinstall", ""))
    assert installs(kept) == []
    assert re.search(r"Requirement already satisfied: torch in \S*" + re.escape(str(world["env"])), kept.stderr)


REG = registry.load(plugins=False)


def _facts_with_torch(version: str, cuda: str | None) -> dict:
    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    facts["torch"]["version"] = version
    facts["torch"]["cuda"] = cuda
    for d in facts["packages"]["distributions"]:
        if d["name"] == "torch":
            d["version"] = version
    return facts


def _every_torch_install(cmds: List[str]) -> List[str]:
    return [c for c in cmds if re.search(r"-m pip install\b.*\btorch(==[\d.]+)?( |$)", c.split("  #", 1)[0])]


def _recorded_facts() -> List[tuple]:
    out = []
    for path in sorted((REPO / "tests" / "fixtures" / "facts").glob("*.json")):
        facts = json.loads(path.read_text())
        out.append((path.name, facts.get("facts", facts) if "findings" in facts else facts))
    cases = casefacts.CASES
    for up in (REPO.parent, REPO.parent.parent):  # the shared cases beside main; a worktree looks one up
        if not cases.is_dir() and (up / "shared" / "cases").is_dir():
            cases = up / "shared" / "cases"
    for p in sorted(cases.glob("*.json")) if cases.is_dir() else []:
        casefacts.CASES = cases
        out.append((p.stem, casefacts.facts_from_case(p.stem)))
    return out


def test_every_pip_torch_install_reinstalls_when_that_release_is_installed():
    """Across the recorded fixtures and the shared real cases: a fix that installs torch while a torch of
    that release is installed says --force-reinstall or uninstalls torch first (else pip keeps the build)."""
    seen = 0
    for name, facts in _recorded_facts():
        have = (facts.get("torch") or {}).get("version")
        if not isinstance(have, str):
            continue
        for f in diagnose(copy.deepcopy(facts), REG).findings:
            cmds = list(f.fix.commands)
            for i, c in enumerate(cmds):
                if c not in _every_torch_install([c]) or "--pre" in c:
                    continue
                m = re.search(r"\btorch==([\d.]+)", c)
                if m and m.group(1) != have.split("+")[0]:
                    continue  # another release: pip changes it
                seen += 1
                before = " ".join(cmds[:i])
                assert "--force-reinstall" in c or re.search(r"pip uninstall -y torch\b", before), (name, f.code, c)
    assert seen >= 3, seen


# --- item 4: conda fixes follow the channel the environment uses --------------------------------
#
# conda-meta records laid out as conda writes them, with real packages' names, builds and channels:
# conda-forge's CPU build from a real `conda list | grep pytorch` (TKahyo/GIMS README, next to a
# TITAN X), the PyTorch channel's CPU build with cpuonly from a real conda list (meta-pytorch/data#315).
# The real pyenv probe reads them; the rest of the facts are a real case's (017: two RTX 3090s, driver
# 470, a CPU torch), so cpu-only-torch plans the CUDA build for that driver.

CONDA_FORGE = "https://conda.anaconda.org/conda-forge/linux-64"
PYTORCH = "https://conda.anaconda.org/pytorch/linux-64"
GIMS = [("pytorch", "2.0.0", "cpu_generic_py310h3496f23_1", CONDA_FORGE)]
DATA_315 = [
    ("cpuonly", "2.0", "0", PYTORCH),
    ("pytorch", "1.11.0", "py3.8_cpu_0", PYTORCH),
    ("torchaudio", "0.11.0", "py38_cpu", PYTORCH),
    ("torchvision", "0.12.0", "py38_cpu", PYTORCH),
]


def conda_env_facts(tmp_path: Path, records: list) -> dict:
    from test_installer import probe, venv

    env = venv(tmp_path / "env")
    (env / "conda-meta").mkdir()
    for name, version, build, channel in records:
        rec = {"name": name, "version": version, "build": build, "channel": channel}
        (env / "conda-meta" / f"{name}-{version}-{build}.json").write_text(json.dumps(rec))
    python = probe(env / "bin" / "python", tmp_path)
    cases = casefacts.CASES if casefacts.CASES.is_dir() else REPO.parent.parent / "shared" / "cases"
    if not (cases / "017-conda-cpuonly-torch181-rtx3090.json").is_file():
        pytest.skip("shared cases not found")
    casefacts.CASES = cases
    facts = casefacts.facts_from_case("017-conda-cpuonly-torch181-rtx3090")
    facts["python"] = {**facts.get("python", {}), **{k: v for k, v in python.items() if k == "manager"}}
    torch = next(r for r in records if r[0] == "pytorch")
    facts["torch"]["version"] = torch[1]
    facts["packages"]["distributions"] = [
        {"name": "torch" if n == "pytorch" else n, "version": v, "installer": "conda"}
        for n, v, _, _ in records
        if n in ("pytorch", "torchvision", "torchaudio")
    ]
    return facts


def cpu_only_fix(facts: dict) -> List[str]:
    report = diagnose(copy.deepcopy(facts), REG)
    return list(next(f for f in report.findings if f.code == "cpu-only-torch").fix.commands)


def test_conda_forge_cpu_build_gets_conda_forges_cuda_build(tmp_path):
    cmds = cpu_only_fix(conda_env_facts(tmp_path, GIMS))
    text = "\n".join(cmds)
    assert re.search(r"^conda install -c conda-forge pytorch-gpu=2\.0 .*\"cuda-version<=11\.\d\"", text, re.M), cmds
    for impossible in ("-c pytorch", "pytorch-cuda", "cpuonly", "-c nvidia"):
        assert impossible not in text, cmds


def test_conda_forge_cpu_selector_is_removed_first(tmp_path):
    cmds = cpu_only_fix(conda_env_facts(tmp_path, GIMS + [("pytorch-cpu", "2.0.0", "cpu_generic_py310h3496f23_1", CONDA_FORGE)]))
    assert cmds[0].startswith("conda remove --force pytorch-cpu"), cmds
    assert cmds[1].startswith("conda install -c conda-forge pytorch-gpu=2.0"), cmds


def test_pytorch_channel_cpu_build_with_cpuonly_stays_on_its_channel(tmp_path):
    cmds = cpu_only_fix(conda_env_facts(tmp_path, DATA_315))
    assert cmds[0].startswith("conda remove --force cpuonly"), cmds
    assert re.match(
        r"conda install pytorch==1\.11\.0 torchvision==0\.12\.0 torchaudio==0\.11\.0 cudatoolkit=11\.3 -c pytorch$", cmds[1]
    ), cmds


def test_pytorch_channel_without_cpuonly_listed_does_not_remove_it(tmp_path):
    cmds = cpu_only_fix(conda_env_facts(tmp_path, [r for r in DATA_315 if r[0] != "cpuonly"]))
    assert not any("cpuonly" in c for c in cmds), cmds
    assert any(c.endswith("-c pytorch") for c in cmds), cmds


def test_channel_from_the_list_column_or_the_build_string():
    from cudadoctor.checks._installer import torch_channel
    from cudadoctor.facts import Facts

    def listed(build: str, channel: str | None = None) -> Facts:
        d = {
            "name": "torch",
            "package": "pytorch",
            "version": "2.0.0",
            "build": build,
            "installer": "conda",
            "listed_by": "conda",
        }
        if channel:
            d["channel"] = channel
        return Facts({"packages": {"distributions": [d]}})

    # real build strings (kb/installers.json sources), pasted without the channel column
    assert torch_channel(listed("cpu_generic_py310h3496f23_1")) == "conda-forge"
    assert torch_channel(listed("cuda126_generic_py310_h478e78a_207")) == "conda-forge"
    assert torch_channel(listed("cuda120_py310h327d3bc_301")) == "conda-forge"
    assert torch_channel(listed("py3.8_cpu_0")) == "pytorch"
    assert torch_channel(listed("py3.9_cuda12.1_cudnn8.9.2_0")) == "pytorch"
    # a named channel wins over the build string; URLs lose their host and subdir
    assert torch_channel(listed("cpu_py310h0", "pkgs/main")) == "pkgs/main"
    assert torch_channel(Facts({"python": {"manager": {"conda_packages": {"pytorch": {"channel": PYTORCH}}}}})) == "pytorch"
    assert torch_channel(listed("h1234")) is None


# --- item 2 for conda and uv: -p PREFIX and --python where the tool would pick another env ------


def _target_facts(prefix: str, env_vars: dict, cwd: str = "/home/u") -> dict:
    return {
        "python": {"executable": f"{prefix}/bin/python", "prefix": prefix, "cwd": cwd, "conda": True},
        "environment": {"vars": env_vars},
        "tool": {"interpreter": {"path": f"{prefix}/bin/python", "reason": "option", "python_on_path_is_target": False}},
    }


def test_conda_and_uv_commands_name_the_environment_only_when_another_is_active():
    from cudadoctor.checks._installer import for_target
    from cudadoctor.facts import Facts

    cmds = ["conda install -c conda-forge pytorch-gpu=2.6", "uv pip install --reinstall torch", "python -m pip show torch"]
    other = Facts(_target_facts("/opt/envs/train", {"CONDA_PREFIX": "/opt/conda"}))
    assert for_target(other, cmds) == (
        "conda install -p /opt/envs/train -c conda-forge pytorch-gpu=2.6",
        "uv pip install --python /opt/envs/train/bin/python --reinstall torch",
        "/opt/envs/train/bin/python -m pip show torch",
    )
    active = _target_facts("/opt/envs/train", {"CONDA_PREFIX": "/opt/envs/train"})
    active["tool"]["interpreter"]["python_on_path_is_target"] = True
    assert for_target(Facts(active), cmds) == tuple(cmds)
    # a venv is not a conda environment: a conda line there (conda install cudnn=... in a conda env;
    # otherwise ...) is left as written
    venv = _target_facts("/opt/envs/train", {})
    venv["python"]["conda"] = False
    assert for_target(Facts(venv), cmds[:1]) == tuple(cmds[:1])
    # pasted facts (no interpreter record): the user's own python, as written
    assert for_target(Facts({"python": {"prefix": "/x"}}), cmds) == tuple(cmds)


def test_cpuonly_absent_from_a_collect_env_conda_list_is_not_taken_as_not_installed():
    """collect_env lists conda packages through a grep that leaves cpuonly out: the removal stays, hedged."""
    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    facts["python"]["manager"] = {}
    facts["packages"]["distributions"] = [
        {"name": "torch", "package": "pytorch", "version": "2.1.0", "installer": "conda", "listed_by": "conda"}
    ]
    from cudadoctor.checks._fixes import install_commands
    from cudadoctor.facts import Facts
    from cudadoctor.interpret import environment

    cmds = install_commands(environment(Facts(facts)), "2.1.0", "cu121", companions=[])
    assert cmds == [
        "conda remove --force cpuonly  # only if installed: it pins the CPU build",
        "conda install pytorch==2.1.0 pytorch-cuda=12.1 -c pytorch -c nvidia",
    ]
    # 1.11 wheels had cu115, the PyTorch channel only cudatoolkit 10.2 and 11.3 (previous-versions page)
    assert install_commands(environment(Facts(facts)), "1.11.0", "cu115", companions=[])[-1] == (
        "conda install pytorch==1.11.0 cudatoolkit=11.3 -c pytorch"
    )


def test_plain_python_is_the_target_only_in_the_same_directory_and_the_same_file(tmp_path):
    """interpreter.plain_python: a venv's bin/python and bin/python3 are one interpreter; another venv's
    python on PATH, or a bin/python that is another program (Python 2 on old systems), is not."""
    from cudadoctor.probes.interpreter import plain_python

    a, b = venv_bin(tmp_path / "a"), venv_bin(tmp_path / "b")
    assert plain_python(str(a / "python3"), {"PATH": f"{a}{os.pathsep}{b}"}) == (str(a / "python"), True)
    assert plain_python(str(a / "python3"), {"PATH": f"{b}{os.pathsep}{a}"}) == (str(b / "python"), False)
    other = tmp_path / "old" / "bin"
    other.mkdir(parents=True)
    (other / "python").write_text("#!/bin/sh\necho Python 2.7\n")
    (other / "python").chmod(0o755)
    os.symlink(sys.executable, other / "python3")
    assert plain_python(str(other / "python3"), {"PATH": str(other)}) == (str(other / "python"), False)
    assert plain_python(str(a / "python3"), {"PATH": str(tmp_path / "nowhere")}) == (None, False)


def venv_bin(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return path / "bin"


def test_cpu_wheel_hint_moves_the_installed_companions_too():
    """torchvision 0.29.1 built for CUDA next to a CPU torch fails to load its operators: the hint
    reinstalls every installed companion from the same index (recorded facts of this machine)."""
    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    assert any(d["name"] == "torchvision" for d in facts["packages"]["distributions"])
    f = next(f for f in diagnose(copy.deepcopy(facts), REG).findings if f.code == "no-nvidia-driver")
    assert "python -m pip install --force-reinstall torch torchvision --index-url " + INDEX + "cpu" in " ".join(f.fix.commands)
