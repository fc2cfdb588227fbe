"""`cudadoctor collect`: the facts only, as JSON (what support re-diagnoses with --facts)."""

from __future__ import annotations

from typing import Optional

import click

from ..probes import collect
from ..render.json import dumps
from ._shared import emit, output_option, python_option


@click.command("collect")
@output_option
@python_option
@click.option("--quick", is_flag=True, help="Do not import torch.")
@click.option("--timeout", type=click.FloatRange(min=1), metavar="SECONDS", help="Time limit for the torch probe.")
def collect_cmd(output: Optional[str], python: Optional[str], quick: bool, timeout: Optional[float]) -> None:
    """Gather the facts about this machine and print them as JSON, without judging them."""
    facts = collect(python=python, quick=quick, timeouts={"torch": timeout} if timeout else None)
    emit(dumps(facts), output)
