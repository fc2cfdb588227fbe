"""A module that is also a function of the notebook API.

``cudadoctor.devices`` is both a submodule (the device model) and the API's ``devices()``,
``cudadoctor.smoke`` both a subpackage and ``smoke()``: once the submodule is imported, the package
attribute is the module, so the module is made callable. The call is dispatched by name to
cudadoctor/api.py, imported on the first call, so that the library below the API does not import it
(no import circle ``api`` -> ``devices`` -> ``api``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        api = importlib.import_module(__package__ + ".api")
        return getattr(api, self.__name__.rpartition(".")[2])(*args, **kwargs)


def make_callable(module_name: str) -> None:
    mod = sys.modules.get(module_name)
    if mod is not None and type(mod) is types.ModuleType:
        mod.__class__ = _CallableModule
