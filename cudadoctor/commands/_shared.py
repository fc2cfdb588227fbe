"""Small pieces every command uses: output, colour, bad-input errors, facts loading."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional

import click

from .. import exitcodes
from ..facts import FactsError, load_facts, read_input


class BadInput(click.ClickException):
    """Bad input: one line on stderr, exit code 2."""

    exit_code = exitcodes.BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"cudadoctor: error: {self.format_message()}", err=True)


def use_color(output: Optional[str]) -> bool:
    if output or os.environ.get("NO_COLOR") is not None:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def emit(text: str, output: Optional[str]) -> None:
    """Write the payload to ``output`` (a path) or stdout."""
    if output and output != "-":
        try:
            d = os.path.dirname(os.path.abspath(output))
            os.makedirs(d, exist_ok=True)
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise BadInput(f"cannot write {output}: {e.strerror or e}") from None
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except UnicodeEncodeError:
        sys.stdout.buffer.write(text.encode("utf-8", "replace"))
        sys.stdout.flush()


def read_facts(path: str) -> Dict[str, Any]:
    try:
        return load_facts(path)
    except FactsError as e:
        raise BadInput(str(e)) from None


def read_text_arg(path: str, what: str, limit: int = 4 * 1024 * 1024) -> str:
    """Read a user-supplied text file ('-' = stdin) as text, with a size bound."""
    try:
        return read_input(path, what, limit).decode("utf-8", "replace")
    except FactsError as e:
        raise BadInput(str(e)) from None


format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True,
    help="Output format. json is the versioned contract; markdown is ready to paste into an issue.",
)
output_option = click.option("-o", "--output", metavar="FILE", help="Write the report to FILE instead of stdout.")
python_option = click.option(
    "--python", "python", metavar="PATH",
    help="Diagnose another Python interpreter (a venv's or conda env's python) instead of this one.",
)
