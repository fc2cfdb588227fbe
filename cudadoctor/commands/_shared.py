"""Small pieces every command uses: output, colour, bad-input errors, facts loading."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional

import click

from .. import exitcodes
from ..facts import FactsError, as_object, load_facts, read_input


class BadInput(click.ClickException):
    """Bad input: one line on stderr, exit code 2."""

    exit_code = exitcodes.BAD_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(f"cudadoctor: error: {self.format_message()}", err=True)


_color_mode = "auto"


def set_color_mode(mode: str) -> None:
    """--color auto|always|never (the group's option, or a command's)."""
    global _color_mode
    _color_mode = mode


def use_color(output: Optional[str]) -> bool:
    """Colour for output going to ``output`` (None: stdout).

    --color never/always decide; otherwise (auto) never into a file, never with NO_COLOR set to
    anything but the empty string (https://no-color.org), always with FORCE_COLOR non-empty,
    never with TERM=dumb, and only on a terminal.
    """
    if _color_mode in ("never", "always"):
        return _color_mode == "always"
    if (output and output != "-") or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def waiting_for_stdin(path: Optional[str], what: str) -> None:
    """'-' read from a terminal: say on stderr that the command waits for the text, and how to end it."""
    if path != "-":
        return
    try:
        tty = sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        tty = False
    if tty:
        end = "Ctrl-Z then Enter" if sys.platform == "win32" else "Ctrl-D"
        click.echo(f"cudadoctor: reading {what} from standard input: paste it, then press {end} on a new line", err=True)


def emit(text: str, output: Optional[str]) -> Optional[str]:
    """Write the payload to ``output`` or stdout; returns the path written (None for stdout).

    ``output`` may hold placeholders ({host}, {date}, {rank}... see cudadoctor/outpath.py); the
    file is written atomically (temporary file + rename) and its directory created.
    """
    if output and output != "-":
        from ..outpath import OutputPathError, expand, write_atomic

        try:
            path = expand(output)
        except OutputPathError as e:
            raise BadInput(str(e)) from None
        try:
            write_atomic(path, text)
        except OSError as e:
            raise BadInput(f"cannot write {path}: {e.strerror or e}") from None
        return path
    if sys.stdout is None:  # started with standard output closed (`cudadoctor check >&-`)
        raise BadInput("standard output is closed: write the report to a file with -o FILE")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except UnicodeEncodeError:
        sys.stdout.buffer.write(text.encode("utf-8", "replace"))
        sys.stdout.flush()
    return None


def one_line(text: object, limit: int = 300) -> str:
    """Untrusted text as one printable line (control characters and newlines become spaces)."""
    t = " ".join("".join(ch if ch.isprintable() else " " for ch in str(text)).split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def written(path: str, summary: str, reason: Optional[str] = None, command: str = "") -> None:
    """The stderr line of a command whose report went to a file (-o): what it concluded and, when it
    failed, why in one line, so the reason is not only inside the file.

    ``cudadoctor smoke`` (commands/smoke.py) should say ``written(path, status, failure_reason(result),
    "smoke")``: today it prints only "error (report written to …)".
    """
    who = f"cudadoctor {command}:" if command else "cudadoctor:"
    click.echo(f"{who} wrote {path} — {one_line(summary)}" + (f" — {one_line(reason)}" if reason else ""), err=True)


def failure_reason(result: Dict[str, Any]) -> Optional[str]:
    """Why a result document (a smoke result, a distributed report) failed, in one line; None if it did not."""
    if not isinstance(result, dict) or result.get("status") in (None, "pass", "ok"):
        return None
    err = as_object(result.get("error"))
    if err.get("message"):
        return one_line(err["message"])
    for st in result.get("stages") or []:
        if isinstance(st, dict) and st.get("verdict") in ("fail", "error"):
            return one_line(f"{st.get('name')}: {st.get('message') or st.get('verdict')}")
    return None


def read_facts(path: str) -> Dict[str, Any]:
    waiting_for_stdin(path, "a facts file or JSON report")
    try:
        return load_facts(path)
    except FactsError as e:
        raise BadInput(str(e)) from None


def read_text_arg(path: str, what: str, limit: int = 4 * 1024 * 1024) -> str:
    """Read a user-supplied text file ('-' = stdin) as text, with a size bound."""
    waiting_for_stdin(path, what)
    try:
        return read_input(path, what, limit).decode("utf-8", "replace")
    except FactsError as e:
        raise BadInput(str(e)) from None


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "prometheus"]),
    default="text",
    show_default=True,
    help="Output format. json is the versioned contract; markdown is ready to paste into an issue; prometheus is "
    "the text exposition for node_exporter's textfile collector (docs/cluster.md).",
)

check_format_option = click.option(  # check's formats: also junit (CI test reports)
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "prometheus", "junit"]),
    default="text",
    show_default=True,
    help="Output format. json is the versioned contract; markdown is ready to paste into an issue; prometheus is "
    "the text exposition for node_exporter's textfile collector (docs/cluster.md); junit is a CI test report.",
)


def _check_output(ctx: Any, param: Any, value: Optional[str]) -> Optional[str]:
    """Reject a bad -o template before any work is done (expanded again when writing)."""
    if value and value != "-":
        from ..outpath import OutputPathError, expand

        try:
            expand(value)
        except OutputPathError as e:
            raise BadInput(str(e)) from None
    return value


output_option = click.option(
    "-o",
    "--output",
    metavar="FILE",
    callback=_check_output,
    help="Write to FILE instead of stdout. FILE may hold placeholders such as {host}, {date}, {time}, {pid}, "
    "{rank}, {node}, {job}, {env:NAME} (see docs/cluster.md); the file is written atomically.",
)
python_option = click.option(
    "--python",
    "python",
    metavar="PATH",
    help="Diagnose another Python interpreter (a venv's or conda env's python) instead of this one.",
)
