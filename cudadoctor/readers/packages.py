"""Package lists as pasted: `pip list`, `pip freeze`, `conda list` -> the packages facts."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional


_CONDA_PIP_MARKERS = ("pypi", "<pip>")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_line(rest: str) -> Optional[Dict[str, Any]]:
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*===?\s*(\S+)", rest)
    if m:
        return {"name": m.group(1), "version": m.group(2), "installer": "pip", "listed_by": "pip"}
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s+@\s+(\S+)", rest)
    if m:
        return {"name": m.group(1), "url": m.group(2)[:500], "installer": "pip", "listed_by": "pip"}
    m = re.match(r"^-e\s+\S*#egg=([A-Za-z0-9][A-Za-z0-9._-]*)", rest)
    if m:
        return {"name": m.group(1), "editable": True, "installer": "pip", "listed_by": "pip"}
    return None


def _conda_line(rest: str) -> Optional[Dict[str, Any]]:
    parts = rest.split()
    if len(parts) < 2 or not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*$", parts[0]) or not re.match(r"^\d", parts[1]):
        return None
    name = parts[0]
    d: Dict[str, Any] = {"name": name, "version": parts[1], "installer": "conda", "listed_by": "conda"}
    if name.lower() == "pytorch":
        d["name"] = "torch"
        d["package"] = "pytorch"
    if len(parts) >= 3:
        d["build"] = parts[2]
    if len(parts) >= 4:
        d["channel"] = parts[3]
    if d.get("build") in _CONDA_PIP_MARKERS or d.get("channel") == "pypi" or str(d.get("build", "")).startswith("pypi_"):
        d["installer"] = "pip"
    return d

