"""`cudadoctor collect`: the facts only, as JSON (what support re-diagnoses with --facts)."""

from __future__ import annotations

from typing import Optional

import click

from ..probes import collect
from ..render.json import dumps
from ._shared import BadInput, emit, output_option, python_option
from .check import read_collect_env


@click.command("collect")
@output_option
@python_option
@click.option("--quick", is_flag=True, help="Do not import torch.")
@click.option("--timeout", type=click.FloatRange(min=1), metavar="SECONDS", help="Time limit for the torch probe.")
@click.option("--from-collect-env", "from_collect_env", metavar="FILE",
              help="Print the facts read from the output of `python -m torch.utils.collect_env` in FILE ('-' for stdin).")
def collect_cmd(output: Optional[str], python: Optional[str], quick: bool, timeout: Optional[float],
                from_collect_env: Optional[str]) -> None:
    """Gather the facts about this machine and print them as JSON, without judging them."""
    if from_collect_env:
        if python:
            raise BadInput("--from-collect-env and --python cannot be used together: the text already describes one interpreter")
        emit(dumps(read_collect_env(from_collect_env)), output)
        return
    facts = collect(python=python, quick=quick, timeouts={"torch": timeout} if timeout else None)
    emit(dumps(facts), output)
