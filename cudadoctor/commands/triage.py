"""`cudadoctor triage`: from the error a user saw to the likely causes, ranked, with the fix."""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional, Tuple

import click

from .. import exitcodes, registry
from ..privacy import Redactor, redactor_for
from ..render.triage import render_triage
from ..report import diagnose
from ..errortext import triage
from ._privacy import show_pii_option, warn_show_pii
from ._shared import BadInput, emit, output_option, python_option, read_facts, read_text_arg


def read_error_text(args: Tuple[str, ...], file: Optional[str]) -> str:
    """The error text: TEXT arguments, -f FILE, or '-' / piped stdin."""
    if file and args:
        raise BadInput("give the error text either as TEXT or with -f FILE, not both")
    if file:
        text = read_text_arg(file, "an error message or traceback")
    elif args == ("-",):
        text = read_text_arg("-", "an error message or traceback")
    elif args:
        text = " ".join(args)
    elif not sys.stdin.isatty():
        text = read_text_arg("-", "an error message or traceback")
    else:
        raise BadInput("no error text: give it as TEXT, with -f FILE, or '-' to read stdin")
    if not text.strip():
        raise BadInput("the error text is empty")
    return text


def _pasted_issue(text: str) -> Optional[Tuple[Dict[str, Any], str]]:
    """Facts and error text of a pasted issue (readers/issue.py), when it holds more than error text."""
    from ..facts import FactsError
    from ..readers import issue

    try:
        got = issue.read(text)
    except FactsError:
        return None
    structured = any(p["used"] and p["kind"] not in ("error", "traceback", "text") for p in got["parts"])
    # Facts written as prose count when stated apart from the error lines: facts read from the error
    # itself would only "confirm" what the error says.
    said = (got["facts"].get("pasted") or {}).get("prose") or {}
    prose = bool(said.get("filled")) and bool(said.get("apart_from_errors"))
    if not structured and not prose:
        return None
    return got["facts"], got["error_text"] or text


def _next_pastes(res: Dict[str, Any], facts: Optional[Dict[str, Any]]) -> list:
    """When no cause was recognised: what to paste next, from what the facts (if any) do not show."""
    if res["candidates"]:
        return []
    from ..facts import Facts, new_facts
    from ..interpret.missing import next_pastes, unknowns

    fx = Facts(facts if facts is not None else new_facts("text"))
    missing = unknowns(fx)
    if not res["input"].get("final_exception") and not any(m["what"] == "error" for m in missing):
        missing.append({"what": "error", "why": "the whole error, not one line of it"})
    return next_pastes(fx, missing)


def _facts_disagree(res: Dict[str, Any], facts: Dict[str, Any], reg: "registry.Registry") -> None:
    """A cause the facts rule out (the error came from another machine or another time) is never
    "confirmed by the facts": it says which fact disagrees, and goes after the causes the facts allow."""
    from ..facts import Facts
    from ..interpret.agreement import disagreements

    fx = Facts(facts)
    ruled_out = set()
    for c in res["candidates"]:
        found = disagreements(fx, c["code"])
        if not found:
            continue
        ruled_out.add(c["code"])
        code = reg.code(c["code"])
        if code is not None and c["title"].startswith("The error text points to"):
            c["title"] = code.title  # the disagreement is said beside it, once
        c["confirmed_by_facts"] = False
        c["contradicted_by"] = list(c.get("contradicted_by") or []) + [
            d for d in found if d not in (c.get("contradicted_by") or [])
        ]
    res["candidates"].sort(key=lambda c: c["code"] in ruled_out)  # stable: the order stays within each group


@click.command("triage")
@click.argument("text", nargs=-1)
@click.option("-f", "--file", "file", metavar="FILE", help="Read the error message or whole traceback from FILE ('-' for stdin).")
@click.option("--live", is_flag=True, help="Also probe this machine (as `check` does) and confirm the causes against its facts.")
@click.option("--quick", is_flag=True, help="With --live: do not import torch (faster, less to confirm with).")
@python_option
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE",
    help="Confirm against a saved report or facts file (support's view of the user's machine).",
)
@click.option(
    "--from-collect-env",
    "from_collect_env",
    metavar="FILE",
    help="Confirm against the output of `python -m torch.utils.collect_env` the user posted ('-' for stdin).",
)
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True, help="How many likely codes to show.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "markdown", "github-comment"]), default="text", show_default=True
)
@click.option(
    "--github-event",
    "github_event",
    metavar="FILE",
    help="Answer the issue in this GitHub event payload ($GITHUB_EVENT_PATH) as the issue bot does: "
    "--format github-comment (the comment) or json (the answer); docs/github-action.md.",
)
@click.option("--bot-config", "bot_config", metavar="FILE", help="With --github-event: the repository's .github/cudadoctor.yml.")
@output_option
@show_pii_option
def triage_cmd(
    text: Tuple[str, ...],
    file: Optional[str],
    live: bool,
    quick: bool,
    python: Optional[str],
    facts_file: Optional[str],
    from_collect_env: Optional[str],
    top: int,
    fmt: str,
    github_event: Optional[str],
    bot_config: Optional[str],
    output: Optional[str],
    show_pii: bool,
) -> None:
    """Name the likely causes of an error message or traceback, ranked, with the fix.

    TEXT is the error (quote it), or '-' / -f FILE for a whole traceback as pasted in an issue
    (Markdown fences, ANSI colours and Windows paths are fine). By default only the text is
    read (instant); --live also probes this machine, --facts FILE uses a saved report and
    --from-collect-env FILE the collect_env output a user posted.
    Output is redacted unless --show-pii.

    Exit codes: 0 at least one likely cause found; 1 nothing recognised; 2 bad input.
    """
    warn_show_pii(show_pii)
    if github_event or bot_config or fmt == "github-comment":
        from ..bot.cli import answer_event  # the issue bot: its own options, checked there

        emit(
            answer_event(github_event, bot_config, fmt, bool(text or file or facts_file or from_collect_env or live or show_pii)),
            output,
        )
        raise SystemExit(exitcodes.OK)
    if sum(bool(x) for x in (facts_file, from_collect_env, live)) > 1:
        raise BadInput("give one source of facts: --live (this machine), --facts FILE or --from-collect-env FILE")
    if "-" in (facts_file, from_collect_env) and (text == ("-",) or (not text and not file) or file == "-"):
        raise BadInput("stdin can carry the error text or the facts, not both")
    if (quick or python) and not live:
        raise BadInput("--quick and --python go with --live")
    err = read_error_text(text, file)
    reg = registry.load()
    report = None
    facts: Optional[Dict[str, Any]] = None
    if facts_file:
        facts = read_facts(facts_file)
    elif from_collect_env:
        from .check import read_collect_env

        facts = read_collect_env(from_collect_env)
    elif live:
        from .check import gather

        facts = gather(None, python, quick, None, None, None)
    elif (pasted := _pasted_issue(err)) is not None:
        facts, err = pasted  # a whole pasted issue: its collect_env / nvidia-smi / lists are facts too
    if facts is not None:
        from .check import attach_error

        attach_error(facts, err)  # exactly as `check --error-file` does, so both rank the same texts
        report = diagnose(facts, reg)
    res = triage(err, reg, report, top=top)
    if facts is not None:
        _facts_disagree(res, facts, reg)
    res["next"] = _next_pastes(res, facts)
    r = Redactor(pii=False) if show_pii else redactor_for([facts] if facts else [], live=True)
    res = r.redact(res)
    emit(render_triage(res, fmt), output)
    raise SystemExit(exitcodes.OK if res["candidates"] else exitcodes.FINDINGS)
