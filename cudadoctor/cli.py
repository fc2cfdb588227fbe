"""The command-line entry point. Commands live one per module in cudadoctor/commands/."""

from __future__ import annotations

import os
import sys

import click

from . import __version__, exitcodes
from .commands.catalogue import explain_cmd, list_checks_cmd
from .commands.check import check_cmd
from .commands.collect import collect_cmd
from .commands.devices import devices_cmd
from .commands.diff import diff_cmd
from .commands.fleet import fleet_cmd
from .commands.kb import kb_cmd
from .commands.report import report_cmd
from .commands.smoke import smoke_cmd
from .commands.triage import triage_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="cudadoctor")
def cli() -> None:
    """cudadoctor: can PyTorch use your NVIDIA GPU? If not, why, and the exact fix.

    Start with `cudadoctor check`.
    """


for _cmd in (check_cmd, collect_cmd, devices_cmd, list_checks_cmd, explain_cmd, kb_cmd, smoke_cmd, fleet_cmd, report_cmd, diff_cmd, triage_cmd):
    cli.add_command(_cmd)


def main(argv=None) -> None:
    """Run the CLI; an unexpected error is one line (exit 3), never a traceback."""
    try:
        cli.main(args=argv, prog_name="cudadoctor", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("cudadoctor: interrupted", err=True)
        raise SystemExit(130)
    except BaseException as e:  # noqa: BLE001 - the last guard
        if os.environ.get("CUDADOCTOR_DEBUG"):
            raise
        msg = str(e).splitlines()[0][:300] if str(e) else ""
        click.echo(f"cudadoctor: internal error: {type(e).__name__}: {msg} (set CUDADOCTOR_DEBUG=1 for the traceback)", err=True)
        raise SystemExit(exitcodes.INTERNAL)


if __name__ == "__main__":
    main()
