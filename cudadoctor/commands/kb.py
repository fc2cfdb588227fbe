"""`cudadoctor kb`: the knowledge base tables, their sources and the date each was checked."""

from __future__ import annotations

import json

import click

from .. import kb


@click.command("kb")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def kb_cmd(fmt: str) -> None:
    """Show the compatibility tables cudadoctor judges by, with their sources and dates.

    A wrong table is a wrong diagnosis: every table names where its facts come from.
    """
    tables = kb.tables()
    if fmt == "json":
        click.echo(json.dumps({"kb_date": kb.kb_date(), "tables": tables}, indent=2, sort_keys=True))
        return
    click.echo(f"knowledge base {kb.kb_date()} (newest release known: torch {kb.newest_release()})")
    for name, t in tables.items():
        click.echo(f"\n{name}  (checked {t.get('checked')})")
        for s in t.get("sources") or []:
            click.echo(f"    {s.get('title', '')}: {s.get('url', '')}")
