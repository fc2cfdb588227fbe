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
from ..document import clean
from ..privacy import describe as describe_redaction
from ..report import Report
from .devices import check_section
from .summary import SYMBOLS, areas

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~$])")
#: U+2060 WORD JOINER: invisible, and breaks GitHub's @mention, #123 and email autolinking,
#: which run on the rendered text (where HTML entities are already decoded).
_WJ = "\u2060"


def md_escape(s: object) -> str:
    """Escape text for inline Markdown (also safe in a table cell): no markup, no HTML, no links.

    Every Markdown punctuation character is backslash-escaped (``&`` becomes ``&amp;``); URL
    schemes and ``www.`` are broken with an entity so GFM does not autolink them; ``@`` and ``#``
    get an invisible word joiner so ticket systems do not turn them into mentions, email links or
    issue references. Control and format characters (newlines, bidi overrides) become spaces.
    """
    text = clean(s).strip()
    text = text.replace("&", "&amp;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    # Safe at the start of a line too: no list item, setext underline or ordered list.
    text = re.sub(r"^([-=])(?=[\s=-]|$)", r"\\\1", text)
    text = re.sub(r"^(\d{1,9})([.)])(?=\s|$)", r"\1\\\2", text)
    # Autolinks: GitHub turns scheme:// URLs and www. into links; break them with an entity.
    text = text.replace("://", "&#58;//")
    text = re.sub(r"(?i)(mailto|xmpp):", r"\1&#58;", text)
    text = re.sub(r"(?i)www\.", "www&#46;", text)
    text = re.sub(r"(@|\\#)(?=[A-Za-z0-9])", "\\1" + _WJ, text)
    # Emoji shortcodes (:tada:) render as images on GitHub.
    text = re.sub(r":(?=[A-Za-z0-9_+-]+:)", ":" + _WJ, text)
    return text


def md_code(s: object, limit: int = 300) -> str:
    """An inline code span for an untrusted value: one line, and a delimiter it cannot close.

    Code spans show text literally (no links, mentions or HTML). Not for table cells, where a
    ``|`` would still split the cell: use :func:`md_escape` there.
    """
    text = clean(s)[:limit]
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = (
        " "
        if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip())
        else ""
    )
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else "(empty)"


def fence(body: str, lang: str = "") -> str:
    """A fenced code block that the body cannot close early."""
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


def _safe_link(url: str) -> str:
    if re.match(r"^https://[A-Za-z0-9.-]+(/[A-Za-z0-9._~:/?#@!$&'*+,;=%-]*)?$", url):
        return f"<{url}>"
    return md_escape(url)


def render_markdown(report: Report, verbose: bool = False) -> str:
    v = report.verdict()
    sym = {"yes": "✅", "no": "❌", "degraded": "⚠️", "unknown": "❔"}[v["state"]]
    out: List[str] = ["## cudadoctor report", "", f"**{sym} {md_escape(v['text'])}.**", ""]
    if v.get("next"):
        out += ["To tell, paste:", ""]
        for n in v["next"]:
            what = md_code(n["run"]) if n.get("run") else md_escape(n.get("paste", ""))
            out.append(f"- {what}: {md_escape(n.get('why', ''))}")
        out.append("")
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
