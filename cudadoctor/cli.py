"""The command-line entry point. Commands live one per module in cudadoctor/commands/."""

from __future__ import annotations

import os
import re

import click

from . import __version__, exitcodes
from .project import INSTALL_URL, REPO_URL, doc_url

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

# Commands whose output has colour: they take --color too (as the group does).
COLOR_COMMANDS = ("check",)

#: The exit codes every command shares (cudadoctor/exitcodes.py); each command's help adds its own 0/1/2.
EXIT_CODES_EPILOG = (
    "Every command exits 2 on a usage error or bad input, 3 on an internal error (a bug in cudadoctor, "
    "reported in one line; CUDADOCTOR_DEBUG=1 shows the traceback) and 130 when interrupted (Ctrl-C)."
)

#: click's shell completion, as the group's help shows it (docs/cli.md says more).
COMPLETION_HELP = """\b
Shell completion (commands, options, their choices), once in your shell's start-up file:
  bash  ~/.bashrc:  eval "$(_CUDADOCTOR_COMPLETE=bash_source cudadoctor)"
  zsh   ~/.zshrc:   eval "$(_CUDADOCTOR_COMPLETE=zsh_source cudadoctor)"
  fish  ~/.config/fish/completions/cudadoctor.fish:  _CUDADOCTOR_COMPLETE=fish_source cudadoctor | source"""

_DOCS = re.compile(r"(?<![\w/.])docs/([\w.-]+\.md)")


def link_docs(text: "str | None", pages: "list[str]") -> "str | None":
    """``docs/smoke.md`` in help text -> ``smoke.md (link below)``, its page added to ``pages``: an
    installed cudadoctor has no docs folder, and a web address in an option's narrow column would be
    wrapped mid-word (the command's epilog lists the addresses whole)."""

    def sub(m: "re.Match[str]") -> str:
        if m.group(1) not in pages:
            pages.append(m.group(1))
        return f"{m.group(1)} (link below)"

    return _DOCS.sub(sub, text) if text else text


def epilog(pages: "list[str]") -> str:
    links = "\b\nDocuments:\n" + "\n".join(f"  {doc_url(p)}" for p in pages) + "\n\n" if pages else ""
    return links + EXIT_CODES_EPILOG


class OneLineUsageError(click.UsageError):
    """A usage error shown as every other error: one line on stderr, exit 2, a pointer to --help."""

    exit_code = exitcodes.BAD_INPUT

    def __init__(self, error: click.UsageError) -> None:
        super().__init__(error.format_message(), error.ctx)
        self.cmd_path = error.ctx.command_path if error.ctx is not None else "cudadoctor"

    def show(self, file: object = None) -> None:
        msg = " ".join(self.format_message().split())
        click.echo(f"cudadoctor: error: {msg} (see `{self.cmd_path} --help`)", err=True)


def _color_callback(ctx: click.Context, param: click.Parameter, value: "str | None") -> None:
    if value is not None:
        from .commands import _shared

        _shared.set_color_mode(value)


def color_option(expose: bool = False) -> click.Option:
    return click.Option(
        ["--color"],
        type=click.Choice(["auto", "always", "never"]),
        default=None,
        expose_value=expose,
        callback=_color_callback,
        is_eager=True,
        help="Colour in the text output: auto (the default) is a terminal, unless NO_COLOR is set (non-empty) or TERM=dumb.",
    )


def _prepare(cmd: click.Command, name: str) -> click.Command:
    """Once per loaded command: help links to the web, the shared exit codes, --color where it colours."""
    if getattr(cmd, "_cudadoctor_prepared", False):
        return cmd
    pages: "list[str]" = []
    cmd.help = link_docs(cmd.help, pages)
    for p in cmd.params:
        if isinstance(p, click.Option):
            p.help = link_docs(p.help, pages)
    cmd.epilog = epilog(pages)
    if name in COLOR_COMMANDS and not any(p.name == "color" for p in cmd.params):
        cmd.params.append(color_option())
    if isinstance(cmd, click.Group):
        for sub_name, sub in cmd.commands.items():
            _prepare(sub, sub_name)
    cmd._cudadoctor_prepared = True  # type: ignore[attr-defined]
    return cmd


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str):
        target = COMMANDS.get(name)
        if target is None:
            return None
        import importlib

        module, attr = target.split(":")
        return _prepare(getattr(importlib.import_module(f".commands.{module}", __package__), attr), name)

    def resolve_command(self, ctx: click.Context, args: list):
        name = args[0] if args else ""
        if name in COMMANDS or name.startswith("-"):
            return super().resolve_command(ctx, args)
        import difflib

        near = difflib.get_close_matches(name, list(COMMANDS), n=1, cutoff=0.6)
        hint = f"did you mean '{near[0]}'?" if near else "the commands are " + ", ".join(COMMANDS)
        raise click.UsageError(f"no such command '{name}'; {hint}", ctx)

    def make_context(self, info_name, args, parent=None, **extra):  # type: ignore[no-untyped-def]
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:
            raise OneLineUsageError(e) from None

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as e:
            raise OneLineUsageError(e) from None


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 fine; 1 findings (each command's help says which); "
    + EXIT_CODES_EPILOG[len("Every command exits ") :]
    + f"\n\n\b\nDocumentation: {REPO_URL}\n  installing and upgrading: {INSTALL_URL}\n  exit codes, colour, "
    + f"stdin, completion: {doc_url('cli.md')}\n\n"
    + COMPLETION_HELP,
)
@click.version_option(__version__, "-V", "--version", prog_name="cudadoctor")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    callback=_color_callback,
    expose_value=False,
    is_eager=True,
    help="Colour in the text output: auto is a terminal, unless NO_COLOR is set (non-empty) or TERM=dumb.",
)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """cudadoctor: can PyTorch use your NVIDIA GPU? If not, why, and the exact fix.

    Start with `cudadoctor check`; `cudadoctor explain CODE` explains a finding.
    """
    if ctx.invoked_subcommand is None:  # bare `cudadoctor`: the help, and success
        click.echo(ctx.get_help())
        ctx.exit(exitcodes.OK)


def main(argv=None) -> None:
    """Run the CLI; an unexpected error is one line (exit 3), never a traceback."""
    try:
        # Not click's standalone mode: it turns Ctrl-C into "Aborted!" and exit 1, where a script
        # (or CI) expects 130. Usage errors and bad input are one line each (exit 2).
        rv = cli.main(args=argv, prog_name="cudadoctor", standalone_mode=False)
        raise SystemExit(rv if isinstance(rv, int) else 0)
    except SystemExit:
        raise
    except click.UsageError as e:
        (e if isinstance(e, OneLineUsageError) else OneLineUsageError(e)).show()
        raise SystemExit(exitcodes.BAD_INPUT) from None
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
