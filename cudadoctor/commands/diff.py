"""`cudadoctor diff A B`: what differs between two machines that can matter, most likely cause first."""

from __future__ import annotations

import click

from .. import exitcodes, registry
from ..diff import compare
from ..privacy import Redactor, redactor_for, shareable
from ..render.diff import render_diff
from ..report import diagnose
from ._privacy import show_pii_option, warn_show_pii
from ._shared import emit, output_option, read_facts


@click.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@output_option
@show_pii_option
def diff_cmd(a: str, b: str, fmt: str, output: str, show_pii: bool) -> None:
    """Compare two reports or facts files ("works on node A, fails on node B").

    Lists what differs that can break GPU use, most likely cause first, and the findings present
    on one side only (both re-diagnosed with today's checks). Timings, free memory, PIDs,
    timestamps and host names are left out. Redacted unless --show-pii.

    Exit codes: 0 no differences that can matter; 1 differences or one-sided findings;
    2 bad input.
    """
    warn_show_pii(show_pii)
    fa, fb = read_facts(a), read_facts(b)
    reg = registry.load()
    ra, rb = diagnose(fa, reg), diagnose(fb, reg)
    r = Redactor(pii=False) if show_pii else redactor_for([fa, fb], live=True)
    ra, rb = shareable(ra, show_pii, live=True, redactor=r), shareable(rb, show_pii, live=True, redactor=r)
    names = (r.text(a if a != "-" else "stdin"), r.text(b if b != "-" else "stdin"))
    d = compare(ra.facts, rb.facts, ra, rb, names=names)
    emit(render_diff(d, fmt), output)
    raise SystemExit(exitcodes.FINDINGS if d["matters"] else exitcodes.OK)
