"""`cudadoctor triage`: from the error a user saw to the likely causes, ranked, with the fix."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Tuple

import click

from .. import exitcodes, registry
from ..privacy import Redactor, redactor_for
from ..render.markdown import fence, md_code, md_escape
from ..report import diagnose
from ..errortext import dumps, triage
from ._privacy import show_pii_option, warn_show_pii
from ._shared import BadInput, emit, output_option, python_option, read_facts, read_text_arg

_SEV = {"error": "✗", "warning": "!", "info": "i"}
_ROLE = {"final": "the final error", "exception": "an earlier error", "warning": "a warning",
         "context": "a log line", "frame": "a traceback frame"}


def _clean(s: Any) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in str(s))


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


def _distinct(matches: List[Dict[str, Any]], n: int = 2) -> List[Dict[str, Any]]:
    """The best match of each signature, at most n."""
    out, seen = [], set()
    for m in matches:
        if m["signature"] not in seen:
            seen.add(m["signature"])
            out.append(m)
    return out[:n]


def render_text(res: Dict[str, Any]) -> str:
    out: List[str] = ["cudadoctor triage — likely causes of this error, most likely first", ""]
    cands = res["candidates"]
    if not cands:
        out.append("No known error signature matched this text.")
        out.append("Run `cudadoctor check --error-file FILE` on the affected machine for a full diagnosis,")
        out.append("or `cudadoctor report` to make a report for a support ticket.")
    for i, c in enumerate(cands, 1):
        conf = c["confidence"] + (", confirmed by the facts" if c["confirmed_by_facts"] else
                                  ", not reported by the checks on these facts" if c["confirmed_by_facts"] is False else "")
        out.append(f"{i}. {_SEV.get(c['severity'], '?')} {c['code']}: {_clean(c['title'])}  [{conf}]")
        if c.get("root_cause_of"):
            out.append(f"     root cause: the facts show this, and it explains {c['root_cause_of']} named by the error")
        for m in _distinct(c["matches"]):
            out.append(f"     matched: \"{_clean(m['text'])}\" (line {m['line']}, {_ROLE.get(m['role'], m['role'])})")
        fix = c["fix"]
        if fix["commands"]:
            out.append("     fix: " + _clean(fix["commands"][0]))
            out.extend("          " + _clean(x) for x in fix["commands"][1:])
            if fix["why"]:
                out.append("     why: " + _clean(fix["why"]))
        elif fix["why"]:
            out.append("     fix: " + _clean(fix["why"]))
        out.append(f"     more: cudadoctor explain {c['code']}")
    if res["more_candidates"]:
        out.append(f"   … {res['more_candidates']} less likely code(s) not shown (--top N)")
    if res["facts_findings"]:
        out.append("")
        out.append("Also found in the facts (not named by the error text):")
        for f in res["facts_findings"]:
            out.append(f"  {_SEV.get(f['severity'], '?')} {f['code']}: {_clean(f['title'])}")
    if not res["with_facts"] and cands:
        out.append("")
        out.append("Not checked against a machine: add --live on the affected machine, or --facts REPORT.json, to confirm.")
    for p in res["problems"]:
        out.append(f"! {_clean(p)}")
    return "\n".join(out) + "\n"


def render_markdown(res: Dict[str, Any]) -> str:
    out: List[str] = ["## cudadoctor triage", ""]
    fe = res["input"].get("final_exception")
    if fe:
        out += [f"Final error: {md_code(fe)}", ""]
    cands = res["candidates"]
    if not cands:
        out += ["No known error signature matched this text.", ""]
    for i, c in enumerate(cands, 1):
        conf = c["confidence"] + (", confirmed by the facts" if c["confirmed_by_facts"] else
                                  ", not reported by the checks on these facts" if c["confirmed_by_facts"] is False else "")
        out += [f"### {i}. `{c['code']}` ({c['severity']}): {md_escape(c['title'])}", "", f"Confidence: {md_escape(conf)}.", ""]
        if c.get("root_cause_of"):
            out += [f"Root cause: the facts show this, and it explains `{c['root_cause_of']}` named by the error.", ""]
        for m in _distinct(c["matches"]):
            out.append(f"- matched {md_code(m['text'])} on line {m['line']} ({md_escape(_ROLE.get(m['role'], m['role']))})")
        out.append("")
        fix = c["fix"]
        if fix["commands"]:
            out += ["Fix:", "", fence("\n".join(fix["commands"]), "sh"), ""]
            if fix["why"]:
                out += [f"Why: {md_escape(fix['why'])}", ""]
        elif fix["why"]:
            out += [f"Fix: {md_escape(fix['why'])}", ""]
    if res["facts_findings"]:
        out += ["### Also found in the facts", ""]
        out += [f"- `{f['code']}` ({f['severity']}): {md_escape(f['title'])}" for f in res["facts_findings"]]
        out.append("")
    return "\n".join(out)


@click.command("triage")
@click.argument("text", nargs=-1)
@click.option("-f", "--file", "file", metavar="FILE", help="Read the error message or whole traceback from FILE ('-' for stdin).")
@click.option("--live", is_flag=True, help="Also probe this machine (as `check` does) and confirm the causes against its facts.")
@click.option("--quick", is_flag=True, help="With --live: do not import torch (faster, less to confirm with).")
@python_option
@click.option("--facts", "facts_file", metavar="FILE", help="Confirm against a saved report or facts file (support's view of the user's machine).")
@click.option("--from-collect-env", "from_collect_env", metavar="FILE",
              help="Confirm against the output of `python -m torch.utils.collect_env` the user posted ('-' for stdin).")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True, help="How many likely codes to show.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@output_option
@show_pii_option
def triage_cmd(text: Tuple[str, ...], file: Optional[str], live: bool, quick: bool, python: Optional[str],
               facts_file: Optional[str], from_collect_env: Optional[str], top: int, fmt: str, output: Optional[str],
               show_pii: bool) -> None:
    """Name the likely causes of an error message or traceback, ranked, with the fix.

    TEXT is the error (quote it), or '-' / -f FILE for a whole traceback as pasted in an issue
    (Markdown fences, ANSI colours and Windows paths are fine). By default only the text is
    read (instant); --live also probes this machine, --facts FILE uses a saved report and
    --from-collect-env FILE the collect_env output a user posted.
    Output is redacted unless --show-pii.

    Exit codes: 0 at least one likely cause found; 1 nothing recognised; 2 bad input.
    """
    warn_show_pii(show_pii)
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
    if facts is not None:
        from .check import attach_error

        attach_error(facts, err)  # exactly as `check --error-file` does, so both rank the same texts
        report = diagnose(facts, reg)
    res = triage(err, reg, report, top=top)
    r = Redactor(pii=False) if show_pii else redactor_for([facts] if facts else [], live=True)
    res = r.redact(res)
    if fmt == "json":
        body = dumps(res)
    elif fmt == "markdown":
        body = render_markdown(res)
    else:
        body = render_text(res)
    emit(body, output)
    raise SystemExit(exitcodes.OK if res["candidates"] else exitcodes.FINDINGS)
