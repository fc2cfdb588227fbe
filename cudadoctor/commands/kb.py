"""`cudadoctor kb`: the knowledge base tables, their sources and the date each was checked."""

from __future__ import annotations

import click

from .. import kb
from ..render.kb import render_kb


@click.command("kb")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def kb_cmd(fmt: str) -> None:
    """Show the compatibility tables cudadoctor judges by, with their sources and dates.

    A wrong table is a wrong diagnosis: every table names where its facts come from.
    """
    newest = None if fmt == "json" else kb.newest_release()
    click.echo(render_kb(kb.kb_date(), newest, kb.tables(), fmt), nl=False)
