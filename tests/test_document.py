"""The one document envelope, JSON writer and text cleaner."""

from __future__ import annotations

import json

import pytest

from cudadoctor import document


def test_envelope_puts_kind_and_version_and_refuses_unknown_kinds():
    doc = document.envelope("cudadoctor-smoke", {"status": "pass", "kind": "ignored"})
    assert doc == {"kind": "cudadoctor-smoke", "schema_version": document.KINDS["cudadoctor-smoke"], "status": "pass"}
    with pytest.raises(ValueError):
        document.envelope("not-a-kind", {})


def test_dumps_is_sorted_utf8_and_round_trips():
    doc = {"b": "café", "a": [1, {"z": 1, "y": 2}]}
    text = document.dumps(doc)
    assert text.endswith("\n") and text.index('"a"') < text.index('"b"') and "café" in text
    assert json.loads(text) == doc


def test_clean_removes_escape_sequences_and_line_breaks():
    assert document.clean("GPU\x1b[31m\u2028name\r\n") == "GPU [31m name  "
    assert document.clean("a\tb") == "a b" and document.clean("a\tb", keep_tabs=True) == "a\tb"
