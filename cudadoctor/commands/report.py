"""`cudadoctor report`: everything a support ticket needs, in one go, safe to share.

Writes PATH.json (the whole report: machine-readable, re-diagnosable with
`cudadoctor check --facts PATH.json`) and PATH.md (paste-ready Markdown with short
"<fill in>" prompts for what only the user knows), both redacted unless --show-pii, and prints
where it wrote them and what to attach.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from typing import Any, Dict, Optional

import click

from .. import exitcodes, registry
from ..privacy import describe, shareable
from ..probes import DEFAULT_TIMEOUTS
from ..render.json import render_json
from ..render.ticket import ticket_markdown
from ..report import Report, diagnose
from ._privacy import show_pii_option, warn_show_pii
from ._shared import BadInput, python_option
from .check import gather


def base_path(output: Optional[str], now: Optional[_dt.datetime] = None) -> str:
    """PATH without extension: -o as given (a trailing .json/.md dropped; a directory gets the
    default name inside it), or ./cudadoctor-report-YYYYmmdd-HHMMSS."""
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    default = f"cudadoctor-report-{stamp}"
    if not output:
        return default
    if os.path.isdir(output) or output.endswith(("/", os.sep)):
        return os.path.join(output, default)
    root, ext = os.path.splitext(output)
    return root if ext.lower() in (".json", ".md", ".markdown") else output


def _run_smoke(report: Report, python: Optional[str], data_dir: Optional[str]) -> Dict[str, Any]:
    """The smoke result to attach; not run when the diagnosis already says no GPU can be used."""
    import sys

    from ..smoke.runner import run_smoke

    v = report.verdict()
    if v["state"] == "no":
        return {"status": "not-run", "reason": f"{v['text']}: the smoke test needs a GPU PyTorch can use (see the findings)"}
    click.echo("cudadoctor: running the smoke test (training MNIST on the GPU)...", err=True)
    return run_smoke(python or sys.executable, "cuda", data_dir, False, False, None, SMOKE_TIMEOUT_S, False)


SMOKE_TIMEOUT_S = 300.0


def _write(path: str, text: str) -> None:
    from ..outpath import write_atomic

    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write_atomic(path, text)
    except OSError as e:
        raise BadInput(f"cannot write {path}: {e.strerror or e}") from None


@click.command("report")
@click.option(
    "-o",
    "--output",
    metavar="PATH",
    help="Write PATH.json and PATH.md (default: ./cudadoctor-report-<date>-<time>; a directory gets that name "
    "inside it; placeholders such as {host} and {date} as for every -o).",
)
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE",
    help="Make the report from a saved facts file or JSON report instead of this machine.",
)
@click.option(
    "--from-collect-env",
    "from_collect_env",
    metavar="FILE",
    help="Make the report from the output of `python -m torch.utils.collect_env` in FILE ('-' for stdin).",
)
@click.option(
    "--from-text",
    "from_text",
    metavar="FILE",
    help="Make the report from a whole pasted issue or ticket in FILE ('-' for stdin), as `cudadoctor check --from-text`.",
)
@click.option(
    "--error", "error", metavar="TEXT", help="The error message you saw (goes into the report and is used as evidence)."
)
@click.option("--error-file", "error_file", metavar="FILE", help="Read the error message or traceback from FILE ('-' for stdin).")
@python_option
@click.option("--quick", is_flag=True, help="Do not import torch (less complete; well under a second).")
@click.option("--deep", is_flag=True, help="Import torchvision/torchaudio fully.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    metavar="SECONDS",
    help=f"Time limit for importing torch and initialising CUDA (default {DEFAULT_TIMEOUTS['torch']:.0f}).",
)
@click.option("--smoke", is_flag=True, help="Also run `cudadoctor smoke` (train MNIST on the GPU) and attach its result.")
@click.option("--smoke-data-dir", metavar="DIR", help="With --smoke: where MNIST is (as `cudadoctor smoke --data-dir`).")
@show_pii_option
def report_cmd(
    output: Optional[str],
    facts_file: Optional[str],
    from_collect_env: Optional[str],
    from_text: Optional[str],
    error: Optional[str],
    error_file: Optional[str],
    python: Optional[str],
    quick: bool,
    deep: bool,
    timeout: Optional[float],
    smoke: bool,
    smoke_data_dir: Optional[str],
    show_pii: bool,
) -> None:
    """Write a report to attach to a support ticket: PATH.json and paste-ready PATH.md.

    Both are redacted unless --show-pii: home directory as ~, user and host names, GPU UUIDs and
    serials as pseudonyms, secrets never included (see docs/support.md).
    Exit codes: 0 written (whatever the diagnosis); 2 bad input or cannot write.
    """
    warn_show_pii(show_pii)
    if output:
        from ..outpath import OutputPathError, expand

        try:
            output = expand(output)  # placeholders as every -o: {host}, {date}, {rank}...
        except OutputPathError as e:
            raise BadInput(str(e)) from None
    base = base_path(output)
    t0 = time.perf_counter()
    if smoke and (facts_file or from_collect_env or from_text):
        raise BadInput("--smoke runs on this machine; it cannot go with --facts, --from-collect-env or --from-text")
    if smoke_data_dir and not smoke:
        raise BadInput("--smoke-data-dir goes with --smoke")
    facts = gather(
        facts_file, python, quick, timeout, error, error_file, deep=deep, from_collect_env=from_collect_env, from_text=from_text
    )
    t1 = time.perf_counter()
    reg = registry.load()
    report = diagnose(facts, reg, timings={"probes_s": t1 - t0, "plugins_s": time.perf_counter() - t1})
    if smoke:
        report.extra["smoke"] = _run_smoke(report, python, smoke_data_dir)
    report = shareable(report, show_pii, live=True)
    json_path, md_path = base + ".json", base + ".md"
    _write(json_path, render_json(report))
    _write(md_path, ticket_markdown(report, os.path.basename(json_path)))
    v = report.verdict()
    click.echo(f"Wrote {json_path}\n      {md_path}")
    click.echo("")
    click.echo(f"  {v['text']}.")
    click.echo("")
    click.echo("For the ticket:")
    click.echo(
        f"  1. Paste {os.path.basename(md_path)} into the ticket and fill in the <fill in> parts (what you ran, what you expected)."
    )
    click.echo(
        f"  2. Attach {os.path.basename(json_path)}: support re-diagnoses it with `cudadoctor check --facts {os.path.basename(json_path)}`."
    )
    line = describe(report.facts.get("redaction"))
    if line:
        click.echo("")
        click.echo(line)
    raise SystemExit(exitcodes.OK)
