"""`cudadoctor report`'s paste-ready Markdown: prompts for what only the user knows, the diagnosis,
the smoke result when one was run; everything from the machine escaped."""

from __future__ import annotations

from typing import Any, Dict, List

from ..facts import Facts
from ..report import Report
from .markdown import fence, md_code, md_escape, render_markdown

FILL_IN = "\\<fill in\\>"


def ticket_markdown(report: Report, json_name: str) -> str:
    """The paste-ready Markdown: prompts for what only the user knows, then the diagnosis."""
    fx = Facts(report.facts)
    err = fx.user_error()
    out: List[str] = [
        "## What happened",
        "",
        f"- **What I ran** (the command or code): {FILL_IN}",
        f"- **What I expected**: {FILL_IN}",
        f"- **What happened instead**: {FILL_IN if not err else 'the error below'}",
        f"- **Did it work before? What changed** (driver update, new environment, new GPU...): {FILL_IN}",
        "",
    ]
    if err:
        out += ["**The error I saw**", "", fence(err.strip()), ""]
    else:
        out += [f"**The error I saw** (paste the whole traceback): {FILL_IN}", ""]
    body = render_markdown(report)
    out.append(body.rstrip("\n"))
    smoke = report.extra.get("smoke") if report.extra else None
    if isinstance(smoke, dict):
        out += ["", "### Smoke test", "", _smoke_lines(smoke)]
    out += ["", f"Full report attached: {md_code(json_name)} (support re-diagnoses it with `cudadoctor check --facts FILE`).", ""]
    return "\n".join(out)


def _smoke_lines(smoke: Dict[str, Any]) -> str:
    """The smoke result in the ticket: status, one row per stage, the error; all of it escaped."""
    status = str(smoke.get("status") or "unknown")
    out = [f"Result: **{md_escape(status.upper())}**" + (f" — {md_escape(smoke['reason'])}" if smoke.get("reason") else "")]
    stages = [s for s in smoke.get("stages") or [] if isinstance(s, dict)]
    if stages:
        out += ["", "| Stage | Result | Device | Time (s) | Message |", "|---|---|---|---:|---|"]
        for st in stages:
            dur = st.get("duration_s")
            out.append(
                f"| {md_escape(st.get('name', '?'))} | {md_escape(st.get('verdict', '?'))} | {md_escape(st.get('device', ''))} | "
                f"{md_escape(f'{dur:.2f}' if isinstance(dur, (int, float)) else '')} | {md_escape(st.get('message', ''))} |"
            )
    err = smoke.get("error")
    if isinstance(err, dict):
        out += ["", f"Error ({md_escape(err.get('kind', '?'))}):", "", fence(str(err.get("message") or ""))]
    out += ["", "The full smoke result is in the attached JSON (`extra.smoke`)."]
    return "\n".join(out)
