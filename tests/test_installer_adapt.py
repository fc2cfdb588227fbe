"""Every fix command in the terms of the environment's manager, not only torch installs.

The checks write their other commands (a cuDNN pin, numpy<2, an extension rebuild, an uninstall) as
``python -m pip ...``; checks/_installer.adapt_commands rewrites them for uv (a venv uv made, or a uv
project), conda (for the packages conda installed) and an OS-managed Python, and report.diagnose
applies it to every built-in finding.

The pipeline tests take this machine's recorded facts (torch 2.14.1 cu130 in a pip venv), put in the
manager facts the real pyenv probe records in environments laid out as each installer leaves them
(test_installer.py does the same for torch installs), and change only the fields a situation is about.
"""

from __future__ import annotations

import copy
import json

import pytest

from conftest import load_fixture
from test_installer import probe, venv  # the real pyenv probe, in environments laid out as each installer leaves them
from cudadoctor import registry
from cudadoctor.checks._installer import adapt_commands, manager
from cudadoctor.facts import Facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
CONDA_FORGE = "https://conda.anaconda.org/conda-forge/linux-64"


@pytest.fixture(scope="module")
def managers(tmp_path_factory) -> dict:
    """python.* as the probe records it, per manager (system-managed: the marker is in the stdlib, not fakeable)."""
    tmp = tmp_path_factory.mktemp("managers")
    out = {"pip": {"venv": True, "manager": {}}, "pip-system-managed": {"venv": False, "manager": {"externally_managed": True}}}
    uvv = venv(tmp / "uvv" / ".venv", "uv = 0.13.9\n")
    out["uv-venv"] = probe(uvv / "bin" / "python", tmp / "uvv")
    proj = tmp / "proj"
    proj.mkdir()
    (proj / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\ndependencies = ["torch"]\n')
    (proj / "uv.lock").write_text("version = 1\n")
    out["uv-project"] = probe(venv(proj / ".venv", "uv = 0.13.9\n") / "bin" / "python", proj)
    conda = venv(tmp / "conda")
    (conda / "conda-meta").mkdir()
    (conda / "conda-meta" / "pytorch-2.14.1-cuda130.json").write_text(
        json.dumps({"name": "pytorch", "version": "2.14.1", "build": "cuda130_generic_py311_h0_0", "channel": CONDA_FORGE})
    )
    out["conda"] = probe(conda / "bin" / "python", tmp)
    return out


def facts_for(managers: dict, m: str, conda_dists: tuple = ("torch",)) -> dict:
    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    facts["python"].update(managers[m])
    for d in facts["packages"]["distributions"]:
        if m == "conda" and d["name"] in conda_dists:
            d["installer"] = "conda"
        elif m in ("uv-venv", "uv-project"):
            d["installer"] = "uv"
    if m == "conda":  # conda's pytorch brings conda's cudnn: no pip nvidia-cudnn here
        facts["packages"]["distributions"] = [d for d in facts["packages"]["distributions"] if d["name"] != "nvidia-cudnn-cu13"]
    assert manager(Facts(facts)) == m
    return facts


def fix_of(facts: dict, code: str) -> list:
    hits = [f for f in diagnose(copy.deepcopy(facts), REG).findings if f.code == code]
    assert hits, code
    return list(hits[0].fix.commands)


ALL = ("pip", "uv-venv", "uv-project", "conda", "pip-system-managed")


# --- numpy 2 with a torch built against NumPy 1 ------------------------------------------------


def numpy_situation(facts: dict) -> dict:
    facts["torch"]["version"] = "2.2.2+cu118"
    for d in facts["packages"]["distributions"]:
        if d["name"] == "torch":
            d["version"] = "2.2.2+cu118"
        if d["name"] == "numpy":
            d["version"] = "2.0.1"
    return facts


def test_numpy_pin_per_manager(managers):
    want = {
        "pip": 'python -m pip install "numpy<2"',
        "uv-venv": 'uv pip install "numpy<2"',
        "uv-project": 'uv add "numpy<2"',
        "conda": 'python -m pip install "numpy<2"',  # numpy came from pip in this conda env: pip's copy
    }
    for m, cmd in want.items():
        assert fix_of(numpy_situation(facts_for(managers, m)), "numpy-abi-mismatch")[0] == cmd, m
    sysm = fix_of(numpy_situation(facts_for(managers, "pip-system-managed")), "numpy-abi-mismatch")
    assert sysm[0].startswith("python3 -m venv .venv  #")
    assert sysm[1] == '.venv/bin/python -m pip install "numpy<2"'
    conda_np = numpy_situation(facts_for(managers, "conda", conda_dists=("torch", "numpy")))
    assert fix_of(conda_np, "numpy-abi-mismatch")[0] == 'conda install "numpy<2"'


# --- cuDNN older than the one torch was built with ------------------------------------------------


def test_cudnn_reinstall_per_manager(managers):
    def cudnn(m: str) -> list:
        facts = facts_for(managers, m)
        facts["torch"]["cudnn_version"] = 91000
        return [c for c in fix_of(facts, "cudnn-mismatch") if "cudnn" in c.split("#")[0]]

    tail = "  # the cuDNN torch 2.14.1 cu130 ships with"
    assert cudnn("pip") == ["python -m pip install --force-reinstall --no-deps nvidia-cudnn-cu13==9.24.0.43" + tail]
    assert cudnn("uv-venv") == ["uv pip install --reinstall --no-deps nvidia-cudnn-cu13==9.24.0.43" + tail]
    assert cudnn("uv-project") == ["uv add --reinstall-package nvidia-cudnn-cu13 nvidia-cudnn-cu13==9.24.0.43" + tail]
    assert cudnn("conda")[0].startswith("conda install cudnn=9.24.0")
    sysm = cudnn("pip-system-managed")
    assert sysm == [".venv/bin/python -m pip install --force-reinstall --no-deps nvidia-cudnn-cu13==9.24.0.43" + tail]
    facts = facts_for(managers, "pip-system-managed")
    facts["torch"]["cudnn_version"] = 91000
    cmds = fix_of(facts, "cudnn-mismatch")
    assert sum(c.startswith("python3 -m venv .venv") for c in cmds) == 1
    assert cmds.index(next(c for c in cmds if c.startswith("python3 -m venv"))) < cmds.index(sysm[0])


# --- two torch copies on sys.path -----------------------------------------------------------------


def two_copies(facts: dict) -> dict:
    facts["python"]["user_site_enabled"] = True
    facts["torch"]["location"] = "/root/.local/lib/python3.11/site-packages/torch/__init__.py"
    facts["torch"]["version"] = "2.13.0+cu130"
    facts["packages"]["torch_sources"] = [
        {"path": "/root/.local/lib/python3.11/site-packages/torch", "version": "2.13.0+cu130"},
        {"path": "/work/venvs/t214/lib/python3.11/site-packages/torch", "version": "2.14.1+cu130"},
    ]
    return facts


def test_duplicate_torch_per_manager(managers):
    got = {m: fix_of(two_copies(facts_for(managers, m)), "multiple-torch-installs") for m in ALL}
    pip = got["pip"]
    assert pip[1].startswith("python -m pip list -v 2>/dev/null | grep -i -E '^torch '")
    assert pip[3].startswith("python -m pip uninstall -y torch  # run twice")
    assert pip[-1].startswith("python -m pip install torch==2.14.1  #")
    uvv = got["uv-venv"]
    assert uvv[1].startswith("uv pip list 2>/dev/null | grep")
    assert uvv[3].startswith("uv pip uninstall torch  # run twice")
    assert uvv[-1].startswith("uv pip install torch==2.14.1  #")
    uvp = got["uv-project"]
    assert uvp[3].startswith("uv pip uninstall torch  #")  # reinstalled below: out of .venv, uv add puts it back
    assert uvp[-1].startswith("uv add torch==2.14.1  #")
    # conda: the copy in ~/.local is pip's (conda has one copy per env): pip's commands act on it
    assert [c for c in got["conda"] if "python -m pip" in c] == [c for c in pip if "python -m pip" in c]
    sysm = got["pip-system-managed"]
    assert sysm[1] == pip[1]  # reading the system's packages: its own pip
    assert sysm.count(next(c for c in sysm if c.startswith("python3 -m venv"))) == 1
    assert sysm[-1].startswith(".venv/bin/python -m pip install torch==2.14.1  #")
    for m in ("uv-venv", "uv-project"):
        assert not any("python -m pip" in c for c in got[m]), m


# --- an extension built against another torch -----------------------------------------------------

FLASH = (
    "ImportError: /x/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
)
XFORMERS = (
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)\n    Python  3.11.7 (you have 3.11.0)"
)


def abi(managers: dict, m: str, text: str = FLASH) -> list:
    facts = facts_for(managers, m)
    facts["user_error"] = {"text": text}
    return fix_of(facts, "extension-abi-mismatch")


def test_extension_rebuild_per_manager(managers):
    pip = abi(managers, "pip")
    assert pip[:3] == [
        "python -m pip show torch flash-attn  # the versions that must fit",
        "python -m pip uninstall -y flash-attn",
        "python -m pip install --no-build-isolation --no-cache-dir flash-attn  # rebuilds against the installed torch 2.14.1+cu130",
    ]
    assert abi(managers, "uv-venv")[:3] == [
        "uv pip show torch flash-attn  # the versions that must fit",
        "uv pip uninstall flash-attn",
        "uv pip install --no-build-isolation --no-cache flash-attn  # rebuilds against the installed torch 2.14.1+cu130",
    ]
    assert abi(managers, "uv-project")[1:3] == [
        "uv pip uninstall flash-attn",  # the uv add after it installs it again, rebuilt
        "uv add --no-build-isolation --no-cache flash-attn  # rebuilds against the installed torch 2.14.1+cu130",
    ]
    assert abi(managers, "conda")[:3] == pip[:3]  # a source build against the installed torch is pip's
    sysm = abi(managers, "pip-system-managed")
    assert sysm[0] == pip[0] and sysm[1].startswith("python3 -m venv .venv")
    assert sysm[2:4] == [c.replace("python -m pip", ".venv/bin/python -m pip") for c in pip[1:3]]


def test_extension_pin_back_to_torch_per_manager(managers):
    """xformers says the torch it was built for: going back to it is a torch install in the manager's terms."""
    assert (
        abi(managers, "pip", XFORMERS)[-1]
        == "# or go back to the torch it was built for: python -m pip install torch==2.2.0+cu121"
    )
    assert abi(managers, "uv-project", XFORMERS)[-1] == "# or go back to the torch it was built for: uv add torch==2.2.0+cu121"
    assert abi(managers, "conda", XFORMERS)[-1] == (
        '# or go back to the torch it was built for: conda install -c conda-forge pytorch-gpu=2.2 "cuda-version<=12.1"'
    )


def test_every_finding_of_the_recorded_facts_is_idempotent(managers):
    """A second pass changes nothing: commands already written for the manager are left alone."""
    for m in ALL:
        facts = two_copies(facts_for(managers, m))
        facts["torch"]["cudnn_version"] = 91000
        fx = Facts(facts)
        for f in diagnose(copy.deepcopy(facts), REG).findings:
            assert adapt_commands(fx, f.fix.commands) == f.fix.commands, (m, f.code)


# --- the rewriter on the checks' own command lines --------------------------------------------------

UV_VENV = Facts({"python": {"venv": True, "manager": {"uv": "0.13.9"}}})
UV_PROJECT = Facts({"python": {"venv": True, "manager": {"uv": "0.13.9", "uv_project": {"is_this_env": True, "lock": True}}}})
SYSTEM = Facts({"python": {"venv": False, "manager": {"externally_managed": True}}})
WINDOWS_SYSTEM = Facts({"system": {"os": "Windows"}, "python": {"venv": False, "manager": {"externally_managed": True}}})
PLAIN = Facts({"python": {"venv": True, "manager": {}}})
CONDA = Facts(
    {
        "python": {"conda": True, "manager": {"conda_packages": {"pytorch": {"version": "2.5.1", "channel": CONDA_FORGE}}}},
        "packages": {
            "distributions": [
                {"name": "torch", "version": "2.5.1", "installer": "conda"},
                {"name": "xformers", "version": "0.0.28", "installer": "conda"},
                {"name": "numpy", "version": "2.1.0", "installer": "pip"},
            ]
        },
    }
)
CONDA_PIP = Facts(
    {"python": {"conda": True, "manager": {}}, "packages": {"distributions": [{"name": "torch", "installer": "pip"}]}}
)


def test_pip_and_conda_pip_are_unchanged():
    cmds = ("python -m pip uninstall -y torch", "python -m pip install --no-cache-dir --force-reinstall torch==2.5.1")
    assert adapt_commands(PLAIN, cmds) == cmds
    assert manager(CONDA_PIP) == "conda-pip" and adapt_commands(CONDA_PIP, cmds) == cmds


def test_env_var_prefix_and_comment():
    arch = 'TORCH_CUDA_ARCH_LIST="9.0" python -m pip install --no-build-isolation --no-cache-dir --force-reinstall <that package>'
    assert adapt_commands(UV_VENV, [arch]) == (
        'TORCH_CUDA_ARCH_LIST="9.0" uv pip install --no-build-isolation --no-cache --reinstall <that package>',
    )
    assert adapt_commands(UV_PROJECT, [arch]) == (
        'TORCH_CUDA_ARCH_LIST="9.0" uv add --no-build-isolation --no-cache --reinstall-package <that package> <that package>',
    )
    assert adapt_commands(CONDA, [arch]) == (arch,)  # a source build: pip's
    mkl = "# or: python -m pip install torch  (pip wheels do not use the environment's MKL)"
    assert adapt_commands(UV_VENV, [mkl]) == ("# or: uv pip install torch  (pip wheels do not use the environment's MKL)",)
    # a fix that already runs conda chose pip on purpose for its pip lines
    assert adapt_commands(CONDA, ["conda install 'mkl<2024.1'", mkl]) == ("conda install 'mkl<2024.1'", mkl)


def test_uv_project_index_and_removal():
    nightly = (
        "python -m pip install --pre torch torchvision --index-url https://download.pytorch.org/whl/nightly/cu130  # nightlies"
    )
    assert adapt_commands(UV_PROJECT, [nightly]) == (
        "uv add --prerelease allow torch torchvision "
        "--index pytorch-nightly-cu130=https://download.pytorch.org/whl/nightly/cu130  # nightlies",
    )
    cpu = "# For CPU-only work the CPU wheel is ~10x smaller: python -m pip install torch --index-url https://download.pytorch.org/whl/cpu"
    assert adapt_commands(UV_PROJECT, [cpu])[0].endswith("uv add torch --index pytorch-cpu=https://download.pytorch.org/whl/cpu")
    drop = "python -m pip uninstall -y xformers  # applications fall back to PyTorch's own attention (sdpa)"
    assert adapt_commands(UV_PROJECT, [drop]) == (
        "uv remove xformers  # applications fall back to PyTorch's own attention (sdpa)",
    )
    upgrade = "# or upgrade torch and triton together: python -m pip install --upgrade torch triton --index-url https://download.pytorch.org/whl/<cuXYZ>"
    assert adapt_commands(UV_PROJECT, [upgrade])[0].endswith(
        "uv add --upgrade-package torch --upgrade-package triton torch triton --index https://download.pytorch.org/whl/<cuXYZ>"
    )


def test_show_files_and_list():
    assert adapt_commands(UV_VENV, ["python -m pip show -f torch | head"]) == ("uv pip show --files torch | head",)
    assert adapt_commands(SYSTEM, ["python -m pip show -f torch | head"]) == ("python -m pip show -f torch | head",)


def test_conda_maps_names_and_keeps_pip_packages():
    cmds = adapt_commands(CONDA, ["python -m pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.1.0.70  # pin"])
    assert cmds == ("conda install -c conda-forge --force-reinstall cudnn==9.1.0.70  # pin",)
    assert adapt_commands(CONDA, ['python -m pip install "numpy<2"']) == ('python -m pip install "numpy<2"',)
    assert adapt_commands(CONDA, ["python -m pip uninstall -y xformers  # fall back"]) == ("conda remove xformers  # fall back",)
    reinstall = adapt_commands(
        CONDA, ["python -m pip uninstall -y torch", "python -m pip install --no-cache-dir --force-reinstall torch==2.5.1"]
    )
    assert reinstall == ("conda remove --force pytorch", "conda install --force-reinstall -c conda-forge pytorch-gpu=2.5")
    # a pip torch beside conda's: the check's pip commands act on the pip copy (shared case 026)
    mixed = Facts(
        {
            **CONDA.data,
            "packages": {"distributions": [*CONDA.data["packages"]["distributions"], {"name": "torch", "installer": "pip"}]},
        }
    )
    assert adapt_commands(mixed, ["python -m pip uninstall -y xformers"]) == ("python -m pip uninstall -y xformers",)
    # a CUDA torch on Windows: conda-forge has none, pip inside the env as _fixes plans it
    win = Facts({**CONDA.data, "system": {"os": "Windows"}})
    line = "python -m pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124"
    assert adapt_commands(win, [line]) == (line,)


def test_system_managed_venv_once_and_windows_path():
    cmds = adapt_commands(SYSTEM, ["python -m pip uninstall -y torch", "python -m pip install torch==2.5.1"])
    assert cmds == (
        "python3 -m venv .venv  # this Python's packages are managed by the OS (PEP 668): use a venv",
        ".venv/bin/python -m pip uninstall -y torch",
        ".venv/bin/python -m pip install torch==2.5.1",
    )
    assert adapt_commands(SYSTEM, cmds) == cmds
    assert (
        adapt_commands(WINDOWS_SYSTEM, ["python -m pip install nvidia-ml-py"])[1]
        == ".venv\\Scripts\\python -m pip install nvidia-ml-py"
    )


def test_commands_written_for_the_manager_are_left_alone():
    uv = ("uv add torch==2.11.0 --index pytorch-cu128=https://download.pytorch.org/whl/cu128", "uv sync")
    assert adapt_commands(UV_PROJECT, uv) == uv
    venv = ("python3 -m venv .venv", ".venv/bin/python -m pip install torch")
    assert adapt_commands(SYSTEM, venv) == venv
    win = (".venv\\Scripts\\python -m pip install torch torchvision",)
    assert adapt_commands(SYSTEM, win) == win
    conda = ("conda install -c conda-forge pytorch-gpu=2.11",)
    assert adapt_commands(CONDA, conda) == conda
