"""A torch C++/CUDA extension imported before torch (session 22, from blind batches b18, b21, b92 and b126 and the threads
behind them):

- extension-imported-before-torch: an extension built with torch.utils.cpp_extension resolves torch's symbols from
  the libraries ``import torch`` loads (libtorch_python's THPVariableClass, libc10's and libtorch's at:: symbols). Imported
  first, the extension's own module fails with "undefined symbol: THPVariableClass" (pytorch/extension-cpp#6, a
  maintainer: import torch first; pytorch/pytorch#6097 and #8036, the same fix), or another torch symbol
  (lufficc/SSD#125: at::UndefinedTensorImpl::_singleton, gone once torch was imported first). Nothing is wrong with the
  installation: a warning with the import order as the fix. A torch symbol undefined in an extension imported after
  torch is a build for another torch (extension-abi-mismatch), which this check leaves alone: it reads only
  THPVariableClass, the one symbol every torch release since 0.4 defines, or an at::/c10:: symbol where the traceback
  shows the extension's import and no torch import before it.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import search, text_of

EXTENSION_IMPORTED_BEFORE_TORCH = Code(
    code="extension-imported-before-torch",
    title="A torch C++/CUDA extension was imported before torch",
    area="packages",
    severity="warning",
    explanation={
        "what": "Importing a compiled torch extension (a cpp_extension / setup.py CUDAExtension module) fails with "
        "'undefined symbol: THPVariableClass' (or another torch symbol) although it built and installed.",
        "why": "Extensions built with torch.utils.cpp_extension take torch's symbols from the libraries that "
        "`import torch` loads into the process (libtorch_python, libtorch, libc10). Imported before torch, the "
        "extension's module is loaded while those symbols are not there yet.",
        "confirm": '`python -c "import torch; import <your_extension>"` imports it (torch first).',
        "fix": "Import torch before the extension (in the package's __init__.py too: `import torch` as its first line).",
    },
    links=(
        "https://pytorch.org/tutorials/advanced/cpp_extension.html",
        "https://github.com/pytorch/extension-cpp/issues/6",
        "https://github.com/pytorch/pytorch/issues/6097",
        "https://github.com/pytorch/pytorch/issues/8036",
        "https://github.com/lufficc/SSD/pull/125",
    ),
)

#: libtorch_python's THPVariableClass undefined: torch's Python bindings were not loaded when the module was.
_THP = r"undefined symbol:\s*_?THPVariableClass\b"
#: Another torch symbol (at::, c10::) undefined where the import of the failing module comes before any torch import.
_TORCH_SYMBOL = re.compile(r"undefined symbol:\s*(_ZN(?:2at|3c10)\w+)")
_IMPORT = re.compile(r"^\s*(?:>>>\s*|In \[\d+\]:\s*)?(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)


#: torch's own libraries not found by an extension that links them by name (session 26, b268-01: causal_conv1d_cuda
#: imported alone; the same words mean a build for another torch when torch came first: extension-abi-mismatch).
_TORCH_LIB_MISSING = re.compile(
    r"(?<![/\\\w])(?:libc10(?:_cuda)?|libtorch(?:_cpu|_cuda|_python)?)\.so: cannot open shared object file"
)


def _imported_before_torch(text: str, rx: "re.Pattern[str]" = _TORCH_SYMBOL) -> bool:
    """The text's first import statement that is not of torch precedes any import of torch, and torch is imported
    nowhere before the error (``rx``: an undefined torch symbol, or torch's library not found): the snippet imports the
    extension first."""
    m = rx.search(text)
    if not m:
        return False
    before = text[: m.start()]
    mods = [(a or b) for a, b in _IMPORT.findall(before)]
    return bool(mods) and not any(x == "torch" or x.startswith("torch.") for x in mods)


#: The interpreter's first statement raised (`>>> import x` as the first line typed, `python -c "import x"`).
_FIRST_STATEMENT = re.compile(r'File "<(?:stdin|string)>", line 1, in <module>')
_TORCH_FRAME = re.compile(r"[\\/]torch[\\/]")


def _first_statement(text: str) -> bool:
    """torch's library not found when the interpreter's first statement ran, no frame inside torch: that statement
    imported the extension (torch's own import failing shows torch/__init__.py's frames)."""
    m = _TORCH_LIB_MISSING.search(text)
    return bool(m and _FIRST_STATEMENT.search(text[: m.start()]) and not _TORCH_FRAME.search(text[: m.start()]))


def imported_first(text: str) -> bool:
    """torch's library not found by an extension imported before torch (for extension-abi-mismatch to stand down)."""
    # only where the interpreter's first statement raised: a program's traceback shows the import chain, not whether
    # the program imported torch earlier (AdelaiDet#409's train_net.py: a build for another torch)
    return _first_statement(text)


@check(EXTENSION_IMPORTED_BEFORE_TORCH)
def extension_imported_before_torch(fx: Facts) -> Iterator[Finding]:
    said = search(fx, _THP)
    if not said:
        text = text_of(fx)
        sym = _TORCH_SYMBOL.search(text) if _imported_before_torch(text) else None
        if sym is None and imported_first(text):
            sym = _TORCH_LIB_MISSING.search(text)
        said = ("error text", sym.group(0)) if sym else None
    if not said:
        return
    yield EXTENSION_IMPORTED_BEFORE_TORCH.finding(
        title="Likely: the torch extension was imported before torch (its torch symbols are not loaded yet) — import torch first",
        evidence={said[0]: said[1][:300]},
        fix=Fix(
            (
                'python -c "import torch; import <your_extension>"  # torch first: the extension then finds its symbols',
                "# in code: put `import torch` before the extension's import (also first in the package's __init__.py)",
            ),
            "cpp_extension modules take torch's symbols from the libraries `import torch` loads; nothing needs reinstalling.",
        ),
    )


def register():
    return [extension_imported_before_torch]
