"""`cudadoctor collect`: the facts only, as JSON (what support re-diagnoses with --facts)."""

from __future__ import annotations

from typing import Optional

import click

from ..privacy import Redactor, redact_facts, redactor_for
from ..probes import collect
from ._privacy import show_pii_option, warn_show_pii
from ..document import dumps, envelope
from ..facts import FACTS_KIND
from ._shared import BadInput, emit, output_option, python_option
from .check import read_collect_env


@click.command("collect")
@output_option
@python_option
@click.option("--quick", is_flag=True, help="Do not import torch.")
@click.option("--timeout", type=click.FloatRange(min=1), metavar="SECONDS", help="Time limit for the torch probe.")
@click.option(
    "--from-collect-env",
    "from_collect_env",
    metavar="FILE",
    help="Print the facts read from the output of `python -m torch.utils.collect_env` in FILE ('-' for stdin).",
)
@show_pii_option
def collect_cmd(
    output: Optional[str],
    python: Optional[str],
    quick: bool,
    timeout: Optional[float],
    from_collect_env: Optional[str],
    show_pii: bool,
) -> None:
    """Gather the facts about this machine and print them as JSON, without judging them.

    Redacted unless --show-pii (see docs/support.md)."""
    warn_show_pii(show_pii)
    if from_collect_env:
        if python:
            raise BadInput("--from-collect-env and --python cannot be used together: the text already describes one interpreter")
        facts = read_collect_env(from_collect_env)
        emit(
            dumps(
                envelope(FACTS_KIND, redact_facts(facts, Redactor(pii=False) if show_pii else redactor_for([facts], live=True)))
            ),
            output,
        )
        return
    facts = collect(python=python, quick=quick, timeouts={"torch": timeout} if timeout else None)
    facts = redact_facts(facts, Redactor(pii=False) if show_pii else redactor_for([facts], live=True))
    emit(dumps(envelope(FACTS_KIND, facts)), output)
