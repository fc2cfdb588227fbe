"""`cudadoctor fleet`: read the reports of many nodes back; name the deviating and broken ones."""

from __future__ import annotations

from typing import Optional, Tuple

import click

from ..fleet import FleetUsageError
from ..fleet_summary import run as run_fleet
from ..render.fleet import render as render_fleet
from ._shared import BadInput, emit, output_option


@click.command("fleet")
@click.argument("paths", nargs=-1, required=True, metavar="DIR|FILE...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "csv", "html", "prometheus"]),
    default="text",
    show_default=True,
    help="text for people; json is the versioned contract; markdown for a ticket; csv one row per node; html one "
    "self-contained page with plots; prometheus the fleet's counts for the textfile collector.",
)
@output_option
@click.option("--latest", is_flag=True, help="When several files name the same node, keep only its newest report.")
@click.option("--strict", is_flag=True, help="Count warnings as unhealthy too (exit 1).")
@click.option(
    "--recheck",
    is_flag=True,
    help="Re-diagnose every report's facts with this cudadoctor's checks instead of using the findings it carries.",
)
@click.option(
    "--names",
    type=click.Choice(["host", "file"]),
    default="host",
    show_default=True,
    help="Name nodes by the host name in each report (else its file name; also when the report's host name is a "
    "per-report pseudonym, which names nothing: the recipes write {host}.json on each node), or always by the file "
    "name (for reports collected from Kubernetes pods, whose host names are pod names).",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Do not shorten the lists of node names and configurations (text and markdown)."
)
def fleet_cmd(
    paths: Tuple[str, ...], fmt: str, output: Optional[str], latest: bool, strict: bool, recheck: bool, names: str, verbose: bool
) -> None:
    """Summarise the reports of many nodes: the majority configuration, every node that
    deviates (and in what), findings by code with the nodes that have each, and the files that
    could not be read.

    DIR is searched recursively for *.json (hidden files skipped); FILEs are read as given.
    Reports written by `cudadoctor check --format json` carry their findings; facts files
    from `cudadoctor collect` are diagnosed here; results of `cudadoctor smoke` (and of each
    rank of `smoke --distributed`) are summarised in their own section. Files are only ever
    parsed as JSON, at most 8 MiB each.

    Exit codes: 0 all nodes healthy (no error findings) and of one configuration, every smoke
    run passed, and every file readable; 1 a node has error findings (with --strict: warnings),
    deviates from the majority configuration, a smoke run failed, or a file could not be read;
    2 usage error or nothing readable.
    """
    try:
        result = run_fleet(list(paths), latest=latest, strict=strict, recheck=recheck, names=names)
    except FleetUsageError as e:
        raise BadInput(str(e)) from None
    if fmt == "html":  # a page gets passed around: home directories and secrets in file names go, as everywhere
        from ..privacy import redactor_for

        result = redactor_for([], live=True).redact(result)
    written = emit(render_fleet(result, fmt, verbose=verbose), output)
    s = result["summary"]
    if written:
        click.echo(f"cudadoctor: wrote {written} — {s['text']}", err=True)
    raise SystemExit(s["exit_code"])
