"""Doctor-style text: one line per area, then each finding with its code and fix, then a verdict."""

from __future__ import annotations

import json
from typing import List

from .. import __version__
from ..document import clean as _clean
from ..report import Report
from .devices import check_section
from .summary import SYMBOLS, areas

_COLORS = {"ok": "32", "info": "32", "error": "31", "warning": "33", "unknown": "2", "crashed": "35", "none": "2"}


def _c(text: str, status: str, color: bool) -> str:
    return f"\033[{_COLORS.get(status, '0')}m{text}\033[0m" if color else text


def render_text(report: Report, verbose: bool = False, color: bool = False) -> str:
    out: List[str] = [f"cudadoctor {__version__} — can PyTorch use your NVIDIA GPU?", ""]
    rows = areas(report)
    width = max(len(label) for _, label, _, _ in rows)
    for _, label, status, detail in rows:
        out.append(f"[{_c(SYMBOLS[status], status, color)}] {label.ljust(width)}  {_clean(detail)}")
    devices = check_section(report)
    if devices:
        out += [""] + devices
    if report.findings:
        out.append("")
    for f in report.findings:
        sym = "i" if f.severity == "info" else SYMBOLS["crashed" if f.code == "check-crashed" else f.severity]
        out.append(f"{_c(sym, f.severity, color)} {_c(f.code, f.severity, color)}: {_clean(f.title)}")
        if f.fix.commands:
            out.append("    fix: " + _clean(f.fix.commands[0]))
            out.extend("         " + _clean(c) for c in f.fix.commands[1:])
        if f.fix.why:
            out.append("    why: " + _clean(f.fix.why))
        if verbose:
            for k, v in f.evidence.items():
                val = v if isinstance(v, str) else json.dumps(v, default=str)
                lines = val.splitlines() or [""]
                out.append(f"    evidence: {_clean(k)} = {_clean(lines[0])}")
                out.extend("              " + _clean(x) for x in lines[1:12])
            for link in f.links:
                out.append("    see: " + _clean(link))
        out.append(f"    more: cudadoctor explain {f.code}")
    if verbose:
        out.append("")
        out.append("timings:")
        for name, p in sorted((report.facts.get("tool", {}).get("probes") or {}).items()):
            if isinstance(p, dict):
                err = f" — {_clean(p.get('error'))}" if p.get("error") else ""
                out.append(f"    probe {name:<12} {p.get('status', '?'):<8} {p.get('duration_s', 0):7.3f} s{err}")
        for k, v in report.timings.items():
            out.append(f"    {k:<18} {v:7.3f} s")
    v = report.verdict()
    sym = {"yes": "ok", "no": "error", "degraded": "error", "unknown": "unknown"}[v["state"]]
    out.append("")
    out.append(_c(f"{SYMBOLS[sym]} {v['text']}.", sym, color))
    out += next_lines(v)
    return "\n".join(out) + "\n"


def next_lines(v: dict) -> List[str]:
    """What to paste next, when the paste showed no cause (the verdict's ``next``)."""
    nxt = v.get("next") or []
    if not nxt:
        return []
    out = ["", "To tell, paste the output of:" if all("run" in n for n in nxt) else "To tell, paste:"]
    for n in nxt:
        out.append(f"  {_clean(n.get('run') or n.get('paste') or '')}")
        out.append(f"      {_clean(n.get('why', ''))}")
    return out
