"""`cudadoctor kb`: the knowledge base tables with their sources and dates, as text or JSON."""

from __future__ import annotations

from typing import Any, Dict, List

from ..document import dumps, envelope


def render_kb(kb_date: Any, newest: Any, tables: Dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return dumps(envelope("cudadoctor-kb", {"kb_date": kb_date, "tables": tables}))
    out: List[str] = [f"knowledge base {kb_date} (newest release known: torch {newest})"]
    for name, t in tables.items():
        out.append(f"\n{name}  (checked {t.get('checked')})")
        for s in t.get("sources") or []:
            out.append(f"    {s.get('title', '')}: {s.get('url', '')}")
    return "\n".join(out) + "\n"
