"""`cudadoctor triage` as text, Markdown or JSON: only reads the triage result (cudadoctor/triage.py)."""

from __future__ import annotations

from typing import Any, Dict, List

from ..document import clean as _clean
from ..errortext import dumps
from .markdown import fence, md_code, md_escape
from .mdtext import paste_next

_SEV = {"error": "✗", "warning": "!", "info": "i"}
_ROLE = {
    "final": "the final error",
    "exception": "an earlier error",
    "warning": "a warning",
    "context": "a log line",
    "frame": "a traceback frame",
}


def _distinct(matches: List[Dict[str, Any]], n: int = 2) -> List[Dict[str, Any]]:
    """The best match of each signature, at most n."""
    out, seen = [], set()
    for m in matches:
        if m["signature"] not in seen:
            seen.add(m["signature"])
            out.append(m)
    return out[:n]


def _agreement(c: Dict[str, Any]) -> str:
    """What the facts say of a candidate: they confirm it, rule it out (naming the fact), or do not report it."""
    against = c.get("contradicted_by") or []
    if against:
        first = against[0]
        value = first.get("value", first.get("equals"))
        shown = f"{first.get('fact', '?')} = {value}" if value is not None else str(first.get("fact", "?"))
        return f", but the facts disagree: {first.get('why', '')} ({shown})"
    if c["confirmed_by_facts"]:
        return ", confirmed by the facts"
    if c["confirmed_by_facts"] is False:
        return ", not reported by the checks on these facts"
    return ""


def render_text(res: Dict[str, Any]) -> str:
    out: List[str] = ["cudadoctor triage — likely causes of this error, most likely first", ""]
    cands = res["candidates"]
    if not cands:
        out.append("No known error signature matched this text: it does not show a cause.")
        out.append("Run `cudadoctor check --error-file FILE` on the affected machine for a full diagnosis,")
        out.append("or `cudadoctor report` to make a report for a support ticket.")
        if res.get("next"):
            out.append("")
            out.append("Or paste:")
            for n in res["next"]:
                out.append(f"  {_clean(n.get('run') or n.get('paste') or '')}")
                out.append(f"      {_clean(n.get('why', ''))}")
    for i, c in enumerate(cands, 1):
        conf = c["confidence"] + _agreement(c)
        out.append(f"{i}. {_SEV.get(c['severity'], '?')} {c['code']}: {_clean(c['title'])}  [{conf}]")
        if c.get("root_cause_of"):
            out.append(f"     root cause: the facts show this, and it explains {c['root_cause_of']} named by the error")
        for m in _distinct(c["matches"]):
            out.append(f'     matched: "{_clean(m["text"])}" (line {m["line"]}, {_ROLE.get(m["role"], m["role"])})')
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
        out += ["No known error signature matched this text: it does not show a cause.", ""]
        out += paste_next("Paste next:", res.get("next") or [])
    for i, c in enumerate(cands, 1):
        conf = c["confidence"] + _agreement(c)
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


def render_triage(res: Dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return dumps(res)
    if fmt == "markdown":
        return render_markdown(res)
    return render_text(res)
