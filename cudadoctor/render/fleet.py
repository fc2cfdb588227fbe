"""Fleet summaries as text, Markdown and CSV (JSON is the document itself; HTML in fleet_html.py).

Everything from the reports is untrusted (host names, GPU names, versions, file names): text
output goes through :func:`cudadoctor.document.clean`, Markdown escapes, CSV defuses formulas.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import __version__
from ..document import clean as _clean
from ..document import dumps
from ..fleet import KEY_NAMES, KEYS, LABELS, UNKNOWN, plural
from .markdown import md_escape as e

_SEV_SYMBOL = {"error": "✗", "warning": "!", "info": "i"}


def _names(names: Sequence[str], limit: Optional[int]) -> str:
    shown = list(names) if limit is None else list(names)[:limit]
    more = len(names) - len(shown)
    return ", ".join(_clean(n) for n in shown) + (f", … (+{more:,} more)" if more else "")


def _cfg_line(config: Dict[str, str]) -> List[Tuple[str, str]]:
    c = config
    torch = c["torch"] if c["variant"] in (UNKNOWN, "none") else f"{c['torch']} ({c['variant']})"
    gpus = c["gpu"] if c["gpus"] == "0" else f"{c['gpus']} × {c['gpu']}"
    return [
        ("NVIDIA driver", c["driver"]),
        ("torch", torch),
        ("GPUs", gpus),
        ("cudadoctor", f"{c['cudadoctor']} (knowledge base {c['kb_date']})"),
    ]


def _differs_text(d: Dict[str, Dict[str, str]]) -> str:
    return "; ".join(f"{LABELS[k]} {v['value']} (majority: {v['majority']})" for k, v in d.items())


def _smoke_text(sm: Optional[Dict[str, Any]], limit: Optional[int]) -> List[str]:
    if not sm:
        return []
    out: List[str] = []
    hosts = len(sm["hosts"])
    ws = "/".join(str(w) for w in sm["world_sizes"])
    out.append(
        f"Smoke ({plural(sm['runs'], 'run')} on {plural(hosts, 'host')}"
        + (f", world size {ws}" if ws else "")
        + f"): {sm['passed']:,} passed, "
        f"{sm['failed']:,} failed" + (f", {sm['errors']:,} could not run" if sm["errors"] else "")
    )
    for st in sm["failed_stages"]:
        out.append(
            f"  ✗ {_clean(st['stage'])}  {plural(st['count'], 'run')}: {_names(st['ranks'], limit)}"
            + (f" — {_clean(st['message'])}" if st["message"] else "")
        )
    bw = sm["bandwidth"]
    if bw:
        b = bw["busbw_gbps"]
        out.append(
            f"  all_reduce bus bandwidth: min {b['min']:g}, median {b['median']:g}, max {b['max']:g} GB/s; "
            "slowest: " + ", ".join(f"{_clean(x['rank'])} {x['busbw_gbps']:g}" for x in bw["slowest"][:3])
        )
    out.append("")
    return out


def render_text(result: Dict[str, Any], verbose: bool = False) -> str:
    s = result["summary"]
    limit = None if verbose else 12
    out = [
        f"cudadoctor fleet — {plural(s['nodes'], 'node')}"
        + (f" and {plural(s['smoke_runs'], 'smoke run')}" if s.get("smoke_runs") else "")
        + f" from {plural(s['files'], 'file')}",
        "",
    ]
    configs = result["configurations"]
    if configs:
        top = configs[0]
        share = top["count"] / s["nodes"]
        head = "Majority configuration" if share > 0.5 else "Most common configuration"
        out.append(f"{head} ({top['count']:,} of {s['nodes']:,} nodes):")
        for label, value in _cfg_line(top["config"]):
            out.append(f"    {label:<13} {_clean(value)}")
        out.append("")
    if not s["nodes"]:
        pass
    elif len(configs) > 1:
        out.append(f"Deviating nodes ({s['deviating']:,}, in {plural(len(configs) - 1, 'other configuration')}):")
        shown = configs[1:] if verbose else configs[1:21]
        for c in shown:
            out.append(f"  ≠ {_clean(_differs_text(c['differs']))}")
            out.append(f"      {plural(c['count'], 'node')}: {_names(c['nodes'], limit)}")
        if len(shown) < len(configs) - 1:
            out.append(f"  … {len(configs) - 1 - len(shown):,} more configurations (-v shows all)")
        out.append("")
    else:
        out.append("All nodes share one configuration.")
        out.append("")
    if result["findings"]:
        out.append("Findings by code:")
        width = max(len(f["code"]) for f in result["findings"])
        for f in result["findings"]:
            out.append(
                f"  {_SEV_SYMBOL.get(f['severity'], '?')} {f['code']:<{width}}  {f['severity']:<7} "
                f"{plural(f['count'], 'node')}: {_names(f['nodes'], limit)}"
            )
        out.append("  (cudadoctor explain CODE tells what a code means and how to fix it)")
        out.append("")
    elif s["nodes"]:
        out.append("No findings on any node.")
        out.append("")
    out += _smoke_text(result.get("smoke"), limit)
    if result["unreadable"]:
        out.append(f"Files that could not be read ({s['unreadable']:,}):")
        bad = result["unreadable"] if verbose else result["unreadable"][:50]
        for u in bad:
            out.append(f"  ? {_clean(u['file'])}: {_clean(u['reason'])}")
        if len(bad) < len(result["unreadable"]):
            out.append(f"  … {len(result['unreadable']) - len(bad):,} more (-v shows all)")
        out.append("")
    if result["superseded"]:
        out.append(f"Older reports skipped (--latest): {s['superseded']:,}")
        out.append("")
    dup = sorted({n["name"] for n in result["nodes"] if n["node"] != n["name"]})
    if dup:
        out.append(
            f"Note: {plural(len(dup), 'node name')} {'appears' if len(dup) == 1 else 'appear'} in more than one file ({_names(dup, 5)}); "
            "shown with the file name (--latest keeps the newest per name)."
        )
        out.append("")
    sym = "✓" if s["exit_code"] == 0 else "✗"
    out.append(f"{sym} {_clean(s['text'])}")
    return "\n".join(out) + "\n"


def render_markdown(result: Dict[str, Any], verbose: bool = False) -> str:
    s = result["summary"]
    limit = None if verbose else 30

    def names(ns: Sequence[str]) -> str:
        shown = list(ns) if limit is None else list(ns)[:limit]
        more = len(ns) - len(shown)
        return ", ".join(e(n) for n in shown) + (f", … (+{more:,} more)" if more else "")

    sym = "✅" if s["exit_code"] == 0 else "❌"
    out = [
        "## cudadoctor fleet report",
        "",
        f"**{sym} {e(s['text'])}.** {plural(s['nodes'], 'node')} from {plural(s['files'], 'file')}.",
        "",
    ]
    configs = result["configurations"]
    if configs:
        out += [
            "### Configurations",
            "",
            "| Nodes | " + " | ".join(lbl for _, lbl in KEYS) + " | Differs from majority |",
            "|---:|" + "---|" * len(KEYS) + "---|",
        ]
        for c in configs:
            cells = [e(c["config"][k]) for k in KEY_NAMES]
            diff = "majority" if c["majority"] else e(", ".join(LABELS[k] for k in c["differs"]))
            out.append(f"| {c['count']:,} | " + " | ".join(cells) + f" | {diff} |")
        out.append("")
    if len(configs) > 1:
        out += ["### Deviating nodes", ""]
        for c in configs[1:]:
            out.append(f"- **{e(_differs_text(c['differs']))}**: {names(c['nodes'])}")
        out.append("")
    if result["findings"]:
        out += ["### Findings by code", "", "| Code | Severity | Nodes | Which |", "|---|---|---:|---|"]
        for f in result["findings"]:
            out.append(f"| `{f['code']}` | {f['severity']} | {f['count']:,} | {names(f['nodes'])} |")
        out.append("")
    sm = result.get("smoke")
    if sm:
        out += [
            "### Smoke",
            "",
            f"{sm['runs']:,} runs: {sm['passed']:,} passed, {sm['failed']:,} failed, {sm['errors']:,} could not run.",
            "",
        ]
        if sm["failed_stages"]:
            out += ["| Failed stage | Runs | Which | First message |", "|---|---:|---|---|"]
            for e_ in sm["failed_stages"]:
                out.append(f"| {e(e_['stage'])} | {e_['count']:,} | {names(e_['ranks'])} | {e(e_['message'])} |")
            out.append("")
        if sm["bandwidth"]:
            b = sm["bandwidth"]["busbw_gbps"]
            out += [f"all_reduce bus bandwidth: min {b['min']:g}, median {b['median']:g}, max {b['max']:g} GB/s.", ""]
    if result["unreadable"]:
        out += ["### Files that could not be read", ""]
        for u in result["unreadable"]:
            out.append(f"- {e(u['file'])}: {e(u['reason'])}")
        out.append("")
    out.append(f"<sub>cudadoctor {__version__} fleet</sub>")
    return "\n".join(out) + "\n"


CSV_COLUMNS = ("node", "file", "status", "errors", "warnings") + KEY_NAMES + ("differs", "codes", "reason")


def _cell(v: object) -> str:
    s = _clean(v)
    return "'" + s if s[:1] in ("=", "+", "-", "@") else s  # no formulas when opened in a spreadsheet


def render_csv(result: Dict[str, Any]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    devs = {d["node"]: d["differs"] for d in result["deviating_nodes"]}
    for n in result["nodes"]:
        status = "error" if n["errors"] else ("deviates" if n["deviates"] else ("warning" if n["warnings"] else "ok"))
        w.writerow(
            [
                _cell(x)
                for x in (
                    n["node"],
                    n["file"],
                    status,
                    n["errors"],
                    n["warnings"],
                    *(n["config"][k] for k in KEY_NAMES),
                    ";".join(devs.get(n["node"], {})),
                    ";".join(n["codes"]),
                    "",
                )
            ]
        )
    for r in (result.get("smoke") or {}).get("results", []):
        w.writerow(
            [
                _cell(x)
                for x in (
                    r["rank"],
                    r["file"],
                    "smoke-" + r["status"],
                    "",
                    "",
                    *([""] * len(KEY_NAMES)),
                    "",
                    r["failed_stage"] or "",
                    r["message"] if r["status"] != "pass" else "",
                )
            ]
        )
    for u in result["unreadable"]:
        w.writerow([_cell(x) for x in ("", u["file"], "unreadable", "", "", *([""] * len(KEY_NAMES)), "", "", u["reason"])])
    return buf.getvalue()


def render(result: Dict[str, Any], fmt: str, verbose: bool = False) -> str:
    if fmt == "json":
        return dumps(result)
    if fmt == "markdown":
        return render_markdown(result, verbose)
    if fmt == "csv":
        return render_csv(result)
    if fmt == "html":
        from .fleet_html import render_html

        return render_html(result)
    if fmt == "prometheus":
        from .prometheus import fleet_metrics

        return fleet_metrics(result)
    return render_text(result, verbose)
