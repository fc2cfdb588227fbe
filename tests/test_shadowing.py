"""shadowed-by-local-file: a torch.py (or torch/, numpy.py...) where Python runs replaces the installed package."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

from conftest import load_fixture
from cudadoctor import registry
from cudadoctor.report import diagnose

REG = registry.load()


def _findings(facts):
    return {f.code: f for f in diagnose(facts, REG).findings}


def _with_cwd(cwd, shadows, torch_location=None):
    facts = copy.deepcopy(load_fixture("hgx-8x-h100-healthy.json"))
    facts["python"]["cwd"] = cwd
    facts["python"]["cwd_shadows"] = shadows
    if torch_location:
        facts["torch"]["location"] = torch_location
    return facts


def _live_check(cwd: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "cudadoctor", "check", "--quick", "--format", "json"], cwd=cwd,
                       capture_output=True, text=True, timeout=120, env={**__import__("os").environ, "NO_COLOR": "1"})
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def _codes(report):
    return {f["code"]: f for f in report["findings"]}


def test_a_torch_py_where_python_runs_is_an_error_with_the_rename(tmp_path):
    (tmp_path / "torch.py").write_text("import torch\nprint(torch.cuda.is_available())\n")
    rep = _live_check(tmp_path)
    f = _codes(rep)["shadowed-by-local-file"]
    assert f["severity"] == "error"
    assert f["title"] == "./torch.py in the working directory is imported instead of the installed torch"
    assert f["fix"]["commands"][0].startswith("mv torch.py torch_local.py")
    assert rep["facts"]["python"]["cwd_shadows"][0]["kind"] == "module"


def test_a_package_folder_shadows_but_a_plain_folder_does_not(tmp_path):
    (tmp_path / "numpy").mkdir()
    assert "shadowed-by-local-file" not in _codes(_live_check(tmp_path))  # namespace portion: the install wins
    (tmp_path / "numpy" / "__init__.py").write_text("")
    f = _codes(_live_check(tmp_path))["shadowed-by-local-file"]
    assert "./numpy/ in the working directory" in f["title"]


def test_a_pytorch_source_checkout_is_named_as_such(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    (tmp_path / "aten").mkdir()
    (tmp_path / "setup.py").write_text("")
    f = _codes(_live_check(tmp_path))["shadowed-by-local-file"]
    assert "PyTorch source checkout" in f["title"]


def test_a_clean_directory_has_no_finding(tmp_path):
    rep = _live_check(tmp_path)
    assert "shadowed-by-local-file" not in _codes(rep)
    assert rep["facts"]["python"]["cwd_shadows"] == []


def test_the_torch_in_use_living_in_this_directory_is_not_a_shadow():
    # run from site-packages, or from a source tree built with `develop`: the local torch is the torch
    sp = "/venv/lib/python3.11/site-packages"
    facts = _with_cwd(sp, [{"name": "torch", "entry": "torch", "kind": "package", "path": sp + "/torch"}],
                      torch_location=sp + "/torch/__init__.py")
    assert "shadowed-by-local-file" not in _findings(facts)
    facts = _with_cwd("/home/u/proj", [{"name": "torch", "entry": "torch.py", "kind": "module", "path": "/home/u/proj/torch.py"}],
                      torch_location=sp + "/torch/__init__.py")
    assert _findings(facts)["shadowed-by-local-file"].severity == "error"


def test_the_error_text_alone_is_a_warning_pointing_at_the_script_directory():
    facts = _with_cwd("/srv", [])
    facts["user_error"] = {"text": "AttributeError: partially initialized module 'torch' has no attribute 'cuda' "
                                   "(most likely due to a circular import)"}
    f = _findings(facts)["shadowed-by-local-file"]
    assert f.severity == "warning" and "torch.__file__" in f.fix.commands[0]
    facts["user_error"] = {"text": "RuntimeError: CUDA error: out of memory"}
    assert "shadowed-by-local-file" not in _findings(facts)


def test_a_circular_import_inside_the_installed_torch_is_not_blamed_on_a_local_file():
    facts = _with_cwd("/srv", [])
    facts["user_error"] = {"text": "ImportError: cannot import name 'stack' from partially initialized module 'torch' "
                                   "(most likely due to a circular import) "
                                   "(/opt/venv/lib/python3.11/site-packages/torch/__init__.py)"}
    assert "shadowed-by-local-file" not in _findings(facts)
    facts["user_error"] = {"text": "ImportError: cannot import name 'stack' from partially initialized module 'torch' "
                                   "(most likely due to a circular import) (/home/u/sahi/utils/torch.py)"}
    assert _findings(facts)["shadowed-by-local-file"].severity == "warning"
