"""`cudadoctor list-checks` and `cudadoctor explain CODE` as text, Markdown or JSON."""

from __future__ import annotations

import textwrap
from typing import Any, Dict, List

from ..document import dumps

SECTION_TITLES = {"what": "What it detects", "why": "Why it breaks", "confirm": "How to confirm", "fix": "How to fix"}


def render_checks(rows: List[Dict[str, Any]], problems: List[Dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return dumps({"checks": rows, "problems": problems})
    out: List[str] = []
    for r in rows:
        out.append(f"{r['check']}  [{r['source']}]")
        out.extend(f"    {k['code']:<28} {k['severity']:<8} {k['title']}" for k in r["codes"])
    out.extend(f"! {p['source']}: could not load ({p['phase']}): {p['message']}" for p in problems)
    return "\n".join(out) + ("\n" if out else "")


def explain_text(code) -> str:
    out = [f"{code.code} ({code.severity}, {code.area}): {code.title}", ""]
    for key in code.SECTIONS:
        out.append(SECTION_TITLES[key])
        out.extend(textwrap.fill(code.explanation[key], width=88, initial_indent="    ", subsequent_indent="    ").splitlines())
        out.append("")
    sigs = _signatures(code)
    if sigs:
        out.append("Error texts it recognises (regular expressions, cudadoctor/kb/errors/)")
        out.extend(f"    {s.regex}" for s in sigs)
        out.append("")
    if code.links:
        out.append("References")
        out.extend(f"    {u}" for u in code.links)
    return "\n".join(out).rstrip() + "\n"


def explain_markdown(code) -> str:
    out = [f"# `{code.code}`", "", f"**{code.title}** — severity: {code.severity}; area: {code.area}.", ""]
    for key in code.SECTIONS:
        out += [f"## {SECTION_TITLES[key]}", "", code.explanation[key], ""]
    if _signatures(code):
        out += [
            "## Error texts it recognises",
            "",
            "Signature data with the public threads each wording comes from: `cudadoctor/kb/errors/*.json` "
            f"(`cudadoctor explain {code.code}` lists them).",
            "",
        ]
    if code.links:
        out += ["## References", ""] + [f"- <{u}>" for u in code.links] + [""]
    return "\n".join(out)


def _signatures(code: Any) -> List[Any]:
    """Every signature of ``code``: its data in kb/errors/ and the ones it declares itself."""
    from ..errortext import of_code

    return of_code(code)


def render_explain(code: Any, fmt: str) -> str:
    if fmt == "json":
        d = code.to_dict()
        d["signatures"] = [s.regex for s in _signatures(code)]
        return dumps(d)
    if fmt == "markdown":
        return explain_markdown(code)
    return explain_text(code)
