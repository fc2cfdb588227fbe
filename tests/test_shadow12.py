"""The user's own file, or a source checkout, imported instead of the installed package — read from the traceback
(kb/errors/shadow12.json), on real texts with their sources, and not on tracebacks that merely import a package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import paste_findings

from cudadoctor.errortext import signatures

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "shadow12.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SIGS = signatures.parse(signatures.kb_document("shadow12.json"))


def _codes(text: str) -> set:
    return {s.code for s in SIGS if signatures.compiled(s.regex).search(text)}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["source"].rsplit("/", 2)[-1])
def test_real_texts_read_as_shadowing(row):
    assert _codes(row["text"]) == {"shadowed-by-local-file"}


# Python 2's wording, no quotes (chainer's users hit it with a chainer.py of their own).
PY2_SELF_IMPORT = """Traceback (most recent call last):
  File "chainer.py", line 17, in <module>
    import chainer
  File "/home/ubuntu/chainer.py", line 18, in <module>
    from chainer import cuda
ImportError: cannot import name cuda"""

# IPython's frame layout (no `File "..."`), from a source build in /opt/pytorch (pytorch/pytorch#11222).
IPYTHON_SOURCE_TREE = """ModuleNotFoundError                       Traceback (most recent call last)
<ipython-input-1-eb42ca6e4af3> in <module>()
----> 1 import torch

/opt/pytorch/torch/__init__.py in <module>()
     83
---> 84 from torch._C import *
     85
ModuleNotFoundError: No module named 'torch._C'"""


def test_python2_self_import_and_ipython_source_tree():
    assert _codes(PY2_SELF_IMPORT) == {"shadowed-by-local-file"}
    assert _codes(IPYTHON_SOURCE_TREE) == {"shadowed-by-local-file"}


NOT_SHADOWING = [
    # an installed torch (dist-packages) that fails on _C is a broken install, not a checkout
    # (effusiveperiscope/so-vits-svc#46)
    "[/usr/local/lib/python3.10/dist-packages/torch/__init__.py](https://localhost:8080/#) in <module>\n"
    "--> 249 for name in dir(_C):\nNameError: name '_C' is not defined",
    'Traceback (most recent call last):\n  File "C:\\Users\\me\\anaconda3\\envs\\t\\Lib\\site-packages\\torch\\__init__.py",'
    " line 81, in <module>\n    from torch._C import *\nImportError: DLL load failed: The specified module could not be found.",
    # a script importing another package, failing inside it
    'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    import torch\n'
    '  File "/usr/lib/python3/dist-packages/torch/__init__.py", line 1, in <module>\n'
    "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
    # a file named like something the text never imports
    "My script named train.py fails with RuntimeError: CUDA error: no kernel image is available",
]


@pytest.mark.parametrize("text", NOT_SHADOWING)
def test_tracebacks_that_only_import_a_package_are_not_shadowing(text):
    assert "shadowed-by-local-file" not in _codes(text)


def test_the_check_names_it_from_a_paste(tmp_path):
    found = paste_findings(tmp_path, "cuda import error\n\n```\n$ python chainer.py\n" + PY2_SELF_IMPORT + "\n```\n")
    assert found[0]["code"] == "shadowed-by-local-file"
    assert found[0]["severity"] == "error"
