"""The --show-pii option every command shares; the rule itself lives in cudadoctor/privacy.py.

The rule: every output of every command (text, JSON, Markdown, files written with -o) is
redacted unless --show-pii is given; --show-pii prints a warning on stderr.
"""

from __future__ import annotations

import click

show_pii_option = click.option(
    "--show-pii",
    is_flag=True,
    help="Do not redact: show the home directory, user and host names, GPU UUIDs and serials as they are "
    "(by default they are replaced by ~ and stable pseudonyms; secret-looking values are never shown).",
)


def warn_show_pii(show_pii: bool) -> None:
    if show_pii:
        click.echo(
            "cudadoctor: warning: --show-pii: this output shows your home directory, user and host names "
            "and GPU UUIDs/serials; review it before sharing it",
            err=True,
        )
