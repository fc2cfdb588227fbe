"""Docs stay in step with the code: one generated page per code, packaging lists every package."""

from __future__ import annotations

import re
import pytest

tomllib = pytest.importorskip("tomllib")
from pathlib import Path

from conftest import REPO
from cudadoctor import registry
from cudadoctor.docsgen import pages


def test_every_code_has_its_current_page():
    want = pages()
    have = {p.stem: p.read_text() for p in (REPO / "docs" / "codes").glob("*.md")}
    stale = sorted(k for k in want if have.get(k) != want[k])
    extra = sorted(set(have) - set(want))
    assert not stale and not extra, f"run: python -m cudadoctor.docsgen docs/codes (stale {stale}, extra {extra})"


def test_every_code_explanation_has_all_sections():
    reg = registry.load(plugins=False)
    for name, (code, _) in reg.codes.items():
        for section in code.SECTIONS:
            assert len(code.explanation[section]) > 20, (name, section)


def test_pyproject_lists_every_package_and_builtin_check_module():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(meta["tool"]["setuptools"]["packages"])
    on_disk = {"cudadoctor." + ".".join(p.parent.relative_to(REPO / "cudadoctor").parts) if p.parent != REPO / "cudadoctor" else "cudadoctor"
               for p in (REPO / "cudadoctor").rglob("__init__.py")}
    on_disk.add("cudadoctor.checks")
    assert on_disk <= listed, on_disk - listed
    eps = set(meta["project"]["entry-points"]["cudadoctor.checks"].values())
    modules = {f"cudadoctor.checks.{p.stem}:register" for p in (REPO / "checks").glob("*.py")
               if not p.stem.startswith("_") and "def register" in p.read_text()}
    assert modules == eps, (modules ^ eps)


def test_readme_has_the_two_commands():
    text = (REPO / "README.md").read_text()
    assert "cudadoctor check" in text and "pytest" in text
