# `cudadoctor.smoke()` (the notebook API) is this package's name too: make the package callable.
from .._callable import make_callable as _make_callable

_make_callable(__name__)
