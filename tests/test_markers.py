"""The ``slow`` marker (tests/conftest.py SLOW): every entry names a real test file or test, so a renamed test
cannot silently fall back into the quick run, and the marker is declared (pytest --strict-markers)."""

from __future__ import annotations

import ast

import pytest

from conftest import HERE, SLOW, SLOW_FIXTURES


@pytest.mark.parametrize("entry", SLOW)
def test_every_slow_entry_names_a_real_test(entry):
    path, _, name = entry.partition("::")
    f = HERE / path
    assert f.is_file(), entry
    if name:
        defs = {n.name for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)}
        assert name in defs, entry


def test_the_slow_fixtures_exist_and_the_marker_is_declared(pytestconfig):
    text = "\n".join(p.read_text(encoding="utf-8") for p in HERE.glob("*.py"))
    for fx in SLOW_FIXTURES:
        assert f"def {fx}(" in text, fx
    assert any(m.startswith("slow:") for m in pytestconfig.getini("markers"))


def test_an_unlisted_test_is_not_marked(request):
    # not in SLOW, no slow fixture: the hook leaves it unmarked (38 tests are marked: pytest --collect-only -m slow)
    assert request.node.get_closest_marker("slow") is None
