""" "No module named 'torch'" raised by a program's import (a notebook cell, IPython, a program's log), with no build
output in the text: the Python that ran it has no torch (kb/errors/torch10.json no_torch_module + runtime_import, read
by checks/torch_install.py _runtime_no_torch). The same words from pip's isolated build stay the build's."""

from __future__ import annotations

from pathlib import Path

from checkcli import codes, paste_findings, run_check, severities

# https://github.com/pytorch/pytorch/issues/909: installed from source in a conda env; IPython cannot import it.
PYTORCH_909_IPYTHON = """In [1]: import torch
---------------------------------------------------------------------------
ModuleNotFoundError                       Traceback (most recent call last)
<ipython-input-1-c031d3dd82fc> in <module>()
----> 1 import torch

ModuleNotFoundError: No module named 'torch'
"""

# https://github.com/jupyter/notebook/issues/4629: torch in a virtual environment, the notebook's kernel is another.
NOTEBOOK_4629 = """I have installed pytorch in virtual environment. When I am trying to execute import torch from Jupyter notebook I am getting error as below.
ModuleNotFoundError                       Traceback (most recent call last)
<ipython-input-10-eb42ca6e4af3> in <module>
----> 1 import torch
ModuleNotFoundError: No module named 'torch'
"""

HOLDOUT = Path(__file__).parent / "data" / "holdout_cases"


def test_an_ipython_cell_without_torch_is_torch_not_installed(tmp_path):
    found = paste_findings(tmp_path, PYTORCH_909_IPYTHON)
    assert codes(found)[:1] == ["torch-not-installed"]
    assert severities(found)["torch-not-installed"] == "warning"  # which Python ran it is not in the text


def test_a_notebook_kernel_without_torch_is_torch_not_installed(tmp_path):
    assert "torch-not-installed" in codes(paste_findings(tmp_path, NOTEBOOK_4629))


def test_the_words_alone_are_not_enough(tmp_path):
    assert "torch-not-installed" not in codes(paste_findings(tmp_path, "ModuleNotFoundError: No module named 'torch'\n"))


def test_torchs_own_missing_parts_are_not_a_missing_torch(tmp_path):
    text = PYTORCH_909_IPYTHON.replace("No module named 'torch'", "No module named 'torch._C'")
    assert "torch-not-installed" not in codes(paste_findings(tmp_path, text))


def test_pips_isolated_build_keeps_its_own_cause():
    # h156 (holdout): flash-attn's setup.py run by pip in an isolated build env, torch 2.5.1 installed outside it.
    base = HOLDOUT / "h156-flash-attn-pip-no-module-torch-torch251-installed"
    found = run_check("--from-collect-env", f"{base}.txt", "--error-file", f"{base}.error.txt")
    assert "torch-not-installed" not in codes(found)
    assert "extension-build-isolation" in codes(found)
