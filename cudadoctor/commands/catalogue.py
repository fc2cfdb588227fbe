"""`cudadoctor list-checks` and `cudadoctor explain CODE`."""

from __future__ import annotations

import click

from .. import registry
from ..render.catalogue import render_checks, render_explain
from ._shared import BadInput


@click.command("list-checks")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_checks_cmd(fmt: str) -> None:
    """List every check and the codes it may report, built-in and from plugins, and where each comes from."""
    reg = registry.load()
    rows = [
        {
            "check": c.name,
            "source": c.source,
            # a fallback check (a learned guess) reports any of its codes as a warning at most
            "codes": [{"code": k.code, "severity": "warning" if c.fallback else k.severity, "title": k.title} for k in c.codes],
        }
        for c in reg.checks
    ]
    problems = [{"source": p.source, "phase": p.phase, "message": p.message} for p in reg.problems]
    click.echo(render_checks(rows, problems, fmt), nl=False)


@click.command("explain")
@click.argument("code")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
def explain_cmd(code: str, fmt: str) -> None:
    """Explain a finding code: what it detects, why it breaks, how to confirm and fix it."""
    reg = registry.load()
    c = reg.code(code.strip().lower())
    if c is None:
        known = sorted(reg.codes)
        import difflib

        near = difflib.get_close_matches(code, known, n=1)
        raise BadInput(f"unknown code {code!r}" + (f"; did you mean {near[0]!r}?" if near else "; see `cudadoctor list-checks`"))
    click.echo(render_explain(c, fmt), nl=False)
