"""Every JSON document cudadoctor writes: one envelope, one writer, one text cleaner.

A document is a JSON object whose first two keys say what it is::

    {"kind": "cudadoctor-report", "schema_version": 1, ...}

``kind`` names the shape (a report, facts, a smoke result, a fleet summary...), ``schema_version``
its version; a reader refuses a newer version with one line. The kinds are listed in :data:`KINDS`
so that a reader (``fleet``, ``diff``, ``--facts``) can tell a cudadoctor document from any other
JSON and say which one it got.

:func:`dumps` is the only JSON writer for documents (sorted keys, two-space indent, UTF-8, a final
newline); :func:`clean` is the only text cleaner for anything printed from untrusted text (a
user's error, a GPU name, a path), so a control character or an escape sequence in facts can
never drive the terminal or break a table.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping, Optional


#: Document kinds this version writes, with their current schema version.
KINDS: Dict[str, int] = {
    "cudadoctor-facts": 1,
    "cudadoctor-report": 1,
    "cudadoctor-smoke": 2,
    "cudadoctor-smoke-job": 2,
    "cudadoctor-smoke-rank": 2,
    "cudadoctor-fleet": 1,
    "cudadoctor-diff": 1,
    "cudadoctor-triage": 1,
    "cudadoctor-devices": 1,
    "cudadoctor-kb": 1,
    "cudadoctor-kb-answer": 1,  # `kb driver|arch|pair|gpu` (cudadoctor/kb/answers.py)
}


def envelope(kind: str, body: Optional[Mapping[str, Any]] = None, schema_version: Optional[int] = None) -> Dict[str, Any]:
    """A new document of ``kind``: the envelope keys, then ``body``'s keys."""
    if kind not in KINDS and schema_version is None:
        raise ValueError(f"unknown document kind {kind!r}: add it to cudadoctor.document.KINDS")
    doc: Dict[str, Any] = {"kind": kind, "schema_version": KINDS[kind] if schema_version is None else schema_version}
    if body:
        for key, value in body.items():
            if key not in ("kind", "schema_version"):
                doc[key] = value
    return doc


def dumps(doc: Any) -> str:
    """The one JSON writer: sorted keys, two-space indent, UTF-8 kept, a final newline."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"


def clean(value: object, keep_tabs: bool = False) -> str:
    """``value`` as text safe to print: every non-printable character (controls, escapes, line
    separators) becomes a space; tabs are kept only when asked."""
    return "".join(ch if ch.isprintable() or (keep_tabs and ch == "\t") else " " for ch in str(value))
