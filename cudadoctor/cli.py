"""The command-line entry point. Commands live one per module in cudadoctor/commands/."""

from __future__ import annotations

import os

import click

from . import __version__, exitcodes

# name -> "module:attribute". A command's module is imported only when that command runs, so
# `cudadoctor check` does not pay for fleet, diff or smoke at start-up.
COMMANDS = {
    "check": "check:check_cmd",
    "collect": "collect:collect_cmd",
    "devices": "devices:devices_cmd",
    "list-checks": "catalogue:list_checks_cmd",
    "explain": "catalogue:explain_cmd",
    "kb": "kb:kb_cmd",
    "smoke": "smoke:smoke_cmd",
    "fleet": "fleet:fleet_cmd",
    "report": "report:report_cmd",
    "diff": "diff:diff_cmd",
    "triage": "triage:triage_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str):
        target = COMMANDS.get(name)
        if target is None:
            return None
        import importlib

        module, attr = target.split(":")
        return getattr(importlib.import_module(f".commands.{module}", __package__), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="cudadoctor")
def cli() -> None:
    """cudadoctor: can PyTorch use your NVIDIA GPU? If not, why, and the exact fix.

    Start with `cudadoctor check`.
    """


def main(argv=None) -> None:
    """Run the CLI; an unexpected error is one line (exit 3), never a traceback."""
    try:
        # Not click's standalone mode: it turns Ctrl-C into "Aborted!" and exit 1, where a script
        # (or CI) expects 130. Usage errors and bad input are shown exactly as click would.
        rv = cli.main(args=argv, prog_name="cudadoctor", standalone_mode=False)
        raise SystemExit(rv if isinstance(rv, int) else 0)
    except SystemExit:
        raise
    except click.ClickException as e:
        e.show()
        raise SystemExit(e.exit_code) from None
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("cudadoctor: interrupted", err=True)
        raise SystemExit(130) from None
    except BaseException as e:  # noqa: BLE001 - the last guard
        if os.environ.get("CUDADOCTOR_DEBUG"):
            raise
        msg = str(e).splitlines()[0][:300] if str(e) else ""
        click.echo(f"cudadoctor: internal error: {type(e).__name__}: {msg} (set CUDADOCTOR_DEBUG=1 for the traceback)", err=True)
        raise SystemExit(exitcodes.INTERNAL) from None


if __name__ == "__main__":
    main()
