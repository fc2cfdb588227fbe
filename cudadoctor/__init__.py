"""cudadoctor: can PyTorch use your NVIDIA GPU? If not, why, and the exact fix.

Data flows one way: probes -> facts -> checks -> findings -> renderers.
"""

__version__ = "0.1.0"

#: Version of the facts and report documents. Bump on an incompatible change.
SCHEMA_VERSION = 1


def __getattr__(name: str):
    """``cudadoctor.check()``, ``.devices()``, ``.smoke()``: the notebook API (cudadoctor/api.py),
    imported on first use so that ``import cudadoctor`` stays cheap."""
    if name in ("check", "CheckResult", "DevicesResult", "SmokeResult"):
        from . import api

        return getattr(api, name)
    if name in ("devices", "smoke"):  # also a submodule / subpackage: made callable (_callable.make_callable)
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + ["check", "devices", "smoke"])
