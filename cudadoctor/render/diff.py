"""`cudadoctor diff` as text, Markdown or JSON: only reads the comparison (cudadoctor/diff/)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from ..diff import DIFF_KIND
from ..document import clean as _clean
from ..document import dumps, envelope
from .markdown import md_code, md_escape

_SEV = {"error": "✗", "warning": "!", "info": "i"}


def render_text(d: Dict[str, Any]) -> str:
    out: List[str] = ["cudadoctor diff — what differs between two machines that can matter", ""]
    out += _sides(d, "  {tag}: ", _clean, _clean)
    out.append("")
    diffs = d["differences"]
    if diffs:
        out.append("Differences that can matter, most likely cause first:")
        for i, x in enumerate(diffs, 1):
            out.append(f"{i:>3}. {_clean(x['label'])}")
            out.append(f"       A: {_clean(x['a'])}")
            out.append(f"       B: {_clean(x['b'])}")
            if x["why"]:
                out.append(f"       why: {_clean(x['why'])}")
    else:
        out.append("No differences that can matter.")
    for tag, key in (("A", "only_in_a"), ("B", "only_in_b")):
        if d[key]:
            out.append("")
            out.append(f"Findings only on {tag}:")
            for f in d[key]:
                out.append(f"  {_SEV.get(f['severity'], '?')} {f['code']}: {_clean(f['title'])}")
                for c in f["fix"][:3]:
                    out.append(f"      fix: {_clean(c)}")
    if d["unknown"]:
        out.append("")
        out.append("Known on one side only (not compared):")
        for x in d["unknown"]:
            out.append("  " + _unknown(x, _clean))
    if d["same"]:
        out.append("")
        out.append("Same on both: " + ", ".join(_clean(s) for s in d["same"]))
    out.append("")
    out.append(_verdict(d))
    return "\n".join(out) + "\n"


def _sides(d: Dict[str, Any], head: str, name: Callable[[Any], str], text: Callable[[Any], str]) -> List[str]:
    """One line per side: its name, and its verdict when it has one."""
    out = []
    for tag, side in (("A", d["a"]), ("B", d["b"])):
        summ = (side.get("summary") or {}).get("text", "")
        out.append(head.format(tag=tag) + name(side["name"]) + (f" — {text(summ)}" if summ else ""))
    return out


def _unknown(x: Dict[str, Any], esc: Callable[[Any], str]) -> str:
    """A fact known on one side only."""
    a = x["a"] if x["a"] is not None else "unknown"
    b = x["b"] if x["b"] is not None else "unknown"
    return f"{esc(x['label'])}: A: {esc(a)} · B: {esc(b)}"


def _verdict(d: Dict[str, Any]) -> str:
    n, oa, ob = len(d["differences"]), len(d["only_in_a"]), len(d["only_in_b"])
    if not d["matters"]:
        return "No differences that can matter between A and B."
    parts = [f"{n} difference{'s' if n != 1 else ''} that can matter"]
    if oa or ob:
        parts.append(f"findings only on A: {oa}, only on B: {ob}")
    return "; ".join(parts) + "."


def render_markdown(d: Dict[str, Any]) -> str:
    out: List[str] = ["## cudadoctor diff", ""]
    out += _sides(d, "- **{tag}**: ", md_code, md_escape)
    out.append("")
    if d["differences"]:
        out += [
            "### Differences that can matter (most likely cause first)",
            "",
            "| # | What | A | B | Why it can matter |",
            "|---|---|---|---|---|",
        ]
        for i, x in enumerate(d["differences"], 1):
            out.append(f"| {i} | {md_escape(x['label'])} | {md_escape(x['a'])} | {md_escape(x['b'])} | {md_escape(x['why'])} |")
        out.append("")
    else:
        out += ["No differences that can matter.", ""]
    for tag, key in (("A", "only_in_a"), ("B", "only_in_b")):
        if d[key]:
            out += [f"### Findings only on {tag}", ""]
            for f in d[key]:
                out.append(f"- {_SEV.get(f['severity'], '?')} `{f['code']}` ({f['severity']}): {md_escape(f['title'])}")
            out.append("")
    if d["unknown"]:
        out += ["### Known on one side only (not compared)", ""]
        for x in d["unknown"]:
            out.append("- " + _unknown(x, md_escape))
        out.append("")
    if d["same"]:
        out += ["Same on both: " + ", ".join(md_escape(s) for s in d["same"]), ""]
    out += [f"**{md_escape(_verdict(d))}**", ""]
    return "\n".join(out)


def render_diff(d: Dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return dumps(envelope(DIFF_KIND, d))
    if fmt == "markdown":
        return render_markdown(d)
    return render_text(d)
