"""Package lists as pasted: `pip list`, `pip freeze`, `conda list` -> the packages facts."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional


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
    # A leading underscore: conda's metapackages (_libgcc_mutex, _openmp_mutex, _pytorch_select).
    if len(parts) < 2 or not re.match(r"^_?[A-Za-z0-9][A-Za-z0-9._-]*$", parts[0]) or not re.match(r"^\d", parts[1]):
        return None
    name = parts[0]
    d: Dict[str, Any] = {"name": name, "version": parts[1], "installer": "conda", "listed_by": "conda"}
    if name.lower() in ("pytorch", "pytorch-nightly", "pytorch-cpu", "pytorch-gpu"):  # not pytorch-cuda/-mutex (metapackages)
        d["name"] = "torch"
        d["package"] = name.lower()
    if len(parts) >= 3:
        d["build"] = parts[2]
    if len(parts) >= 4:
        d["channel"] = parts[3]
    if d.get("build") in _CONDA_PIP_MARKERS or d.get("channel") == "pypi" or str(d.get("build", "")).startswith("pypi_"):
        d["installer"] = "pip"
    return d


# ---------------------------------------------------------------------------------------------
# Whole package listings as pasted (not inside collect_env).

_PIP_LIST_HEAD = re.compile(r"^\s*Package\s+Version(?:\s+(?:Editable project location|Location|Installer))*\s*$", re.I)
_DASHES = re.compile(r"^\s*-{3,}(?:\s+-{3,})+\s*$")
_PIP_LIST_ROW = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s+(\d[^\s]*)(?:\s+(\S.*))?$")
_FREEZE_ROW = re.compile(r"^\s*(?:[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?\s*(?:===?|@)\s*\S+|-e\s+\S+)")
_CONDA_HEAD = re.compile(r"^\s*#\s*(?:packages in environment at\s|Name\s+Version\s+Build)", re.I)


def read_pip_list(lines: List[str]) -> List[Dict[str, Any]]:
    """`pip list` rows (after the 'Package Version' header and its dashes)."""
    out = []
    for line in lines:
        if _PIP_LIST_HEAD.match(line) or _DASHES.match(line) or not line.strip():
            continue
        m = _PIP_LIST_ROW.match(line)
        if not m:
            continue
        d: Dict[str, Any] = {"name": m.group(1), "version": m.group(2), "installer": "pip", "listed_by": "pip"}
        if m.group(3):
            d["editable"] = True  # the third column is the editable project's location
        out.append(d)
    return out


def read_pip_freeze(lines: List[str]) -> List[Dict[str, Any]]:
    """`pip freeze` lines: name==version, name @ url, -e vcs+url#egg=name."""
    out = []
    for line in lines:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        d = _pip_line(re.sub(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\[[^\]]*\]", r"\1", s))
        if d is None and s.startswith("-e "):
            d = {"name": s[3:].strip().rstrip("/").split("/")[-1][:100], "editable": True, "installer": "pip", "listed_by": "pip"}
        if d is not None:
            if s.startswith("-e "):
                d["editable"] = True
            out.append(d)
    return out


def read_conda_list(lines: List[str]) -> List[Dict[str, Any]]:
    """`conda list` rows: name version build [channel]; pip-installed ones (pypi) keep installer pip."""
    return [d for d in (_conda_line(ln.strip()) for ln in lines if ln.strip() and not ln.lstrip().startswith("#")) if d]


#: `pip show NAME...` output: "Name: torch" then "Version: 2.6.0+cu126" and the other metadata fields pip prints
#: (pip/_internal/commands/show.py print_results: Name, Version, Summary, Home-page, Author, Author-email, License,
#: Location, Editable project location, Requires, Required-by; with --verbose Metadata-Version, Installer,
#: Classifiers, Entry-points), one block per package separated by "---".
PIP_SHOW_NAME = re.compile(r"^\s*Name:\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*$")
PIP_SHOW_VERSION = re.compile(r"^\s*Version:\s*(\d[^\s]*)\s*$")
PIP_SHOW_FIELD = re.compile(
    r"^\s*(?:Name|Version|Summary|Home-page|Author|Author-email|Maintainer|Maintainer-email|License|License-Expression|"
    r"Location|Editable project location|Requires|Required-by|Metadata-Version|Installer|Classifiers|Entry-points|"
    r"Files|Project-URLs?):|^\s*---\s*$|^\s*WARNING: Package\(s\) not found:"
)


def read_pip_show(lines: List[str]) -> List[Dict[str, Any]]:
    """The packages `pip show` describes: each block's Name and the Version right after it (pip prints them in
    that order). Only the packages asked about: not a listing of the environment."""
    out: List[Dict[str, Any]] = []
    for i, line in enumerate(lines[:-1]):
        m = PIP_SHOW_NAME.match(line)
        v = PIP_SHOW_VERSION.match(lines[i + 1]) if m else None
        if m and v:
            out.append({"name": m.group(1), "version": v.group(1), "installer": "pip", "listed_by": "pip show"})
    return out


#: pip's resolver on what is installed after an install (pip/_internal/commands/install.py, _warn_about_conflicts):
#: "torchvision 0.16.0+cu118 requires torch==2.1.0, but you have torch 2.2.0+cu118 which is incompatible." Both
#: versions in it are installed ones: the requiring package's and the required one's.
PIP_CONFLICT = re.compile(
    r"^\s*(?P<n>[A-Za-z0-9][A-Za-z0-9._-]*) (?P<v>\d[^\s,]*) requires (?P<req>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?"
    r"[^,\n]{0,80}, but you have (?P<req2>[A-Za-z0-9][A-Za-z0-9._-]*) (?P<rv>\d[^\s,]*) which is incompatible\b"
)


def read_pip_conflicts(lines: List[str]) -> List[Dict[str, Any]]:
    """The installed packages pip's resolver names in its conflict lines (see :data:`PIP_CONFLICT`): the requiring
    package and version, the required one and the version installed. Not a listing of the environment."""
    out: Dict[str, Dict[str, Any]] = {}
    for line in lines:
        m = PIP_CONFLICT.match(line)
        if not m or _norm(m.group("req")) != _norm(m.group("req2")):
            continue
        for n, v in ((m.group("n"), m.group("v")), (m.group("req2"), m.group("rv"))):
            out.setdefault(_norm(n), {"name": n, "version": v, "installer": "pip", "listed_by": "pip's resolver"})
    return list(out.values())


# ---------------------------------------------------------------------------------------------
# A conda environment file (environment.yml) pasted: its pinned dependencies, conda's and pip's.

ENV_YML_HEAD = re.compile(r"^\s*dependencies\s*:\s*$")
#: "  - pytorch=1.12.1=py3.9_cuda11.3_cudnn8.3.2_0", "  - cudatoolkit=11.3", "  - pip:", "    - torch==2.0.1+cu118".
ENV_YML_ROW = re.compile(
    r"^\s*-\s+(?:pip\s*:\s*$|(?:[A-Za-z0-9_.-]+::)?[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?\s*(?:(?:==?|>=|<=|~=|!=|>|<)\s*\S+)?\s*(?:#.*)?$)"
)
_YML_PIN = re.compile(
    r"^\s*-\s+(?:[A-Za-z0-9_.-]+::)?(?P<n>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?P<op>==?)\s*(?P<v>\d[^=\s#]*)(?:=(?P<b>\S+))?"
)


def read_environment_yml(lines: List[str]) -> List[Dict[str, Any]]:
    """The dependencies an environment.yml pins to one version (``name=ver[=build]`` for conda, ``name==ver`` under
    ``pip:``); unpinned or ranged ones say nothing of the version installed and are left out."""
    out: List[Dict[str, Any]] = []
    pip_indent: Optional[int] = None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if re.match(r"^\s*-\s+pip\s*:\s*$", line):
            pip_indent = indent
            continue
        if pip_indent is not None and indent <= pip_indent:
            pip_indent = None
        m = _YML_PIN.match(line)
        if not m:
            continue
        under_pip = pip_indent is not None
        if under_pip and m.group("op") != "==":
            continue
        name = m.group("n")
        d: Dict[str, Any] = {
            "name": name,
            "version": m.group("v"),
            "installer": "pip" if under_pip else "conda",
            "listed_by": "environment.yml",
        }
        if not under_pip and name.lower() in ("pytorch", "pytorch-gpu", "pytorch-cpu"):
            d["name"], d["package"] = "torch", name.lower()
        if m.group("b") and not under_pip:
            d["build"] = m.group("b")
        out.append(d)
    return out
