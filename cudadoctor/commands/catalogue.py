"""`cudadoctor list-checks` and `cudadoctor explain CODE`."""

from __future__ import annotations

import json
import textwrap

import click

from .. import registry
from ._shared import BadInput

SECTION_TITLES = {"what": "What it detects", "why": "Why it breaks", "confirm": "How to confirm", "fix": "How to fix"}


@click.command("list-checks")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_checks_cmd(fmt: str) -> None:
    """List every check and the codes it may report, built-in and from plugins, and where each comes from."""
    reg = registry.load()
    rows = [{"check": c.name, "source": c.source, "codes": [{"code": k.code, "severity": k.severity, "title": k.title} for k in c.codes]}
            for c in reg.checks]
    problems = [{"source": p.source, "phase": p.phase, "message": p.message} for p in reg.problems]
    if fmt == "json":
        click.echo(json.dumps({"checks": rows, "problems": problems}, indent=2, sort_keys=True))
        return
    for r in rows:
        click.echo(f"{r['check']}  [{r['source']}]")
        for k in r["codes"]:
            click.echo(f"    {k['code']:<28} {k['severity']:<8} {k['title']}")
    for p in problems:
        click.echo(f"! {p['source']}: could not load ({p['phase']}): {p['message']}")


def explain_text(code) -> str:
    out = [f"{code.code} ({code.severity}, {code.area}): {code.title}", ""]
    for key in code.SECTIONS:
        out.append(SECTION_TITLES[key])
        out.extend(textwrap.fill(code.explanation[key], width=88, initial_indent="    ", subsequent_indent="    ").splitlines())
        out.append("")
    if code.signatures:
        out.append("Error texts it recognises (regular expressions)")
        out.extend(f"    {s}" for s in code.signatures)
        out.append("")
    if code.links:
        out.append("References")
        out.extend(f"    {u}" for u in code.links)
    return "\n".join(out).rstrip() + "\n"


def explain_markdown(code) -> str:
    out = [f"# `{code.code}`", "", f"**{code.title}** — severity: {code.severity}; area: {code.area}.", ""]
    for key in code.SECTIONS:
        out += [f"## {SECTION_TITLES[key]}", "", code.explanation[key], ""]
    if code.signatures:
        out += ["## Error texts it recognises", ""] + [f"- `{s}`" for s in code.signatures] + [""]
    if code.links:
        out += ["## References", ""] + [f"- <{u}>" for u in code.links] + [""]
    return "\n".join(out)


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
    if fmt == "json":
        click.echo(json.dumps(c.to_dict(), indent=2, sort_keys=True))
    elif fmt == "markdown":
        click.echo(explain_markdown(c), nl=False)
    else:
        click.echo(explain_text(c), nl=False)
