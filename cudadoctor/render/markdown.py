"""Markdown ready to paste into a GitHub issue or a ticket.

Everything from the facts is untrusted (GPU names, paths, environment values, error text): it is
escaped so a report cannot inject markup, links or HTML into a ticket system, and code blocks
use a fence longer than any backtick run inside them.
"""

from __future__ import annotations

import json
import re
from typing import List

from .. import __version__
from ..privacy import describe as describe_redaction
from ..report import Report
from .devices import check_section
from .mdtext import fence, md_code, md_escape, paste_next
from .summary import SYMBOLS, areas


def _safe_link(url: str) -> str:
    if re.match(r"^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~:/?#@!$&'*+,;=%-]*)?$", url):
        return f"<{url}>"
    return md_escape(url)


def render_markdown(report: Report, verbose: bool = False) -> str:
    v = report.verdict()
    sym = {"yes": "✅", "no": "❌", "degraded": "⚠️", "unknown": "❔"}[v["state"]]
    out: List[str] = ["## cudadoctor report", "", f"**{sym} {md_escape(v['text'])}.**", ""]
    out += paste_next("To tell, paste:", v.get("next") or [])
    out += ["| Area | Status | Details |", "|---|---|---|"]
    for _, label, status, detail in areas(report):
        out.append(f"| {md_escape(label)} | {SYMBOLS[status]} | {md_escape(detail)} |")
    out.append("")
    out += check_section(report, "markdown")
    if report.findings:
        out.append("### Findings")
        out.append("")
        for f in report.findings:
            out.append(
                f"#### {SYMBOLS['crashed' if f.code == 'check-crashed' else f.severity]} `{f.code}` ({f.severity}): {md_escape(f.title)}"
            )
            out.append("")
            if f.fix.commands:
                out.append("Fix:")
                out.append("")
                out.append(fence("\n".join(f.fix.commands), "sh"))
                out.append("")
            if f.fix.why:
                out.append(f"Why: {md_escape(f.fix.why)}")
                out.append("")
            if f.evidence:
                out.append("Evidence:")
                out.append("")
                for k, val in f.evidence.items():
                    sval = val if isinstance(val, str) else json.dumps(val, default=str)
                    if len(sval.splitlines()) > 1:
                        out.append(f"- {md_escape(k)}:")
                        out.append("")
                        out.append(fence(sval))
                    else:
                        out.append(f"- {md_escape(k)}: {md_code(sval)}")
                out.append("")
            if f.links:
                out.append("See: " + ", ".join(_safe_link(u) for u in f.links))
                out.append("")
    else:
        out += ["No findings.", ""]
    out.append("<details><summary>Facts (JSON)</summary>")
    out.append("")
    out.append(fence(json.dumps(report.facts, sort_keys=True, indent=1, ensure_ascii=False, default=str), "json"))
    out.append("")
    out.append("</details>")
    out.append("")
    privacy = describe_redaction(report.facts.get("redaction"))
    if privacy:
        out += [f"🔒 {md_escape(privacy)}", ""]
    kb = report.to_dict()["tool"].get("kb_date")
    out.append(
        f"<sub>cudadoctor {__version__} · schema {report.to_dict()['schema_version']}"
        + (f" · knowledge base {md_escape(kb)}" if kb else "")
        + "</sub>"
    )
    return "\n".join(out) + "\n"
