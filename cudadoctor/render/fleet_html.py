"""`cudadoctor fleet --format html`: one self-contained page for many nodes.

The page reads only the fleet summary (the ``cudadoctor-fleet`` document): the majority
configuration, each deviating group with its nodes, findings by code, the nodes that need
attention and every node's status, and plots where a picture says it faster. It loads nothing
at view time (no script, no font, no image from elsewhere: styles and pictures are inline), so
it opens from a mail attachment or an air-gapped share.

Plots are drawn by matplotlib as inline SVG when the ``cudadoctor[html]`` extra is installed;
without it the page has the same tables and says how to get the plots. SVG rather than a
JavaScript plotting library keeps the page small (10,000 nodes make well under 5 MB) and
scripts out of a page that carries text from untrusted reports. Every value from the reports
is cleaned (:func:`cudadoctor.document.clean`) and HTML-escaped.
"""

from __future__ import annotations

import html
import io
import statistics
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import __version__
from ..document import clean
from ..fleet import KEY_NAMES, LABELS

#: Names listed per group before "+N more" (the CSV and JSON outputs have them all).
NAMES_SHOWN = 200
#: Rows in the table of nodes that need attention.
ATTENTION_ROWS = 2000

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:16px;color:#1b1f24}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right}.verdict{font-size:16px;padding:8px 12px;border-radius:6px;margin:8px 0}
.ok{background:#dafbe1}.bad{background:#ffebe9}.error{color:#cf222e;font-weight:600}.warning{color:#9a6700;font-weight:600}
.info{color:#57606a}.deviates{color:#8250df;font-weight:600}.names{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.plots{display:flex;flex-wrap:wrap;gap:16px}.plot{border:1px solid #d0d7de;border-radius:6px;padding:6px}
.plot svg{max-width:100%;height:auto}.plot figcaption{max-width:520px}.note{color:#57606a;font-size:12px}details summary{cursor:pointer}
"""


def e(v: Any) -> str:
    """An untrusted value as HTML text."""
    return html.escape(clean(v), quote=True)


def _names(names: Sequence[str], limit: int = NAMES_SHOWN) -> str:
    shown = ", ".join(e(n) for n in list(names)[:limit])
    more = len(names) - min(len(names), limit)
    return shown + (f", … (+{more:,} more)" if more else "")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        out.append(
            "<tr>" + "".join(f"<td class=n>{c}</td>" if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)) + "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def render_html(result: Dict[str, Any]) -> str:
    s = result.get("summary") or {}
    plots = figures(result)
    ok = s.get("exit_code") == 0
    body = [
        f"<h1>cudadoctor fleet — {s.get('nodes', 0):,} nodes from {s.get('files', 0):,} files</h1>",
        f"<div class='verdict {'ok' if ok else 'bad'}' id=verdict>{'✓' if ok else '✗'} {e(s.get('text', ''))}</div>",
        _counts(s),
        _majority(result),
        _deviating(result),
        _plots(plots),
        _findings(result),
        _smoke(result),
        _attention(result),
        _all_nodes(result),
        _unreadable(result),
        f"<p class=note>cudadoctor {e(__version__)} · generated {e((result.get('tool') or {}).get('generated_at', ''))} · "
        "node names are as the reports give them (pseudonyms unless the reports were made with --show-pii)</p>",
    ]
    return (
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>cudadoctor fleet</title><style>{_CSS}</style></head><body>"
        + "\n".join(b for b in body if b)
        + "</body></html>\n"
    )


def _counts(s: Dict[str, Any]) -> str:
    rows = [
        (lbl, f"{s.get(k, 0):,}")
        for k, lbl in (
            ("nodes", "nodes"),
            ("majority_nodes", "in the majority configuration"),
            ("deviating", "deviating"),
            ("with_errors", "with errors"),
            ("with_warnings", "with warnings"),
            ("configurations", "configurations"),
            ("unreadable", "unreadable files"),
            ("smoke_runs", "smoke runs"),
            ("smoke_failed", "smoke runs failed"),
        )
    ]
    return _table(["", "count"], rows, numeric=(1,))


def _majority(result: Dict[str, Any]) -> str:
    m = result.get("majority")
    if not m:
        return ""
    share = m["count"] / max(1, (result.get("summary") or {}).get("nodes", 1))
    head = "Majority configuration" if share > 0.5 else "Most common configuration"
    rows = [(e(LABELS.get(k, k)), e(m["config"].get(k, ""))) for k in KEY_NAMES]
    return f"<h2 id=majority>{head} ({m['count']:,} nodes)</h2>" + _table(["", "value"], rows)


def _deviating(result: Dict[str, Any]) -> str:
    configs = result.get("configurations") or []
    if len(configs) <= 1:
        return "<h2 id=deviating>Deviating nodes</h2><p>All nodes share one configuration.</p>" if configs else ""
    out = [
        f"<h2 id=deviating>Deviating nodes ({(result.get('summary') or {}).get('deviating', 0):,}, "
        f"in {len(configs) - 1:,} other configurations)</h2>"
    ]
    rows = []
    for c in configs[1:]:
        what = "; ".join(
            f"{e(LABELS.get(k, k))} <b>{e(v['value'])}</b> (majority {e(v['majority'])})" for k, v in c["differs"].items()
        )
        rows.append((f"{c['count']:,}", what, f"<span class='names deviates'>{_names(c['nodes'])}</span>"))
    out.append(_table(["nodes", "differs from the majority in", "which"], rows, numeric=(0,)))
    return "".join(out)


def _findings(result: Dict[str, Any]) -> str:
    fs = result.get("findings") or []
    if not fs:
        return "<h2 id=findings>Findings by code</h2><p>No findings on any node.</p>"
    rows = [
        (
            f"<code>{e(f['code'])}</code>",
            f"<span class={e(f['severity'])}>{e(f['severity'])}</span>",
            e(f.get("title", "")),
            f"{f['count']:,}",
            f"<span class=names>{_names(f['nodes'])}</span>",
        )
        for f in fs
    ]
    return (
        "<h2 id=findings>Findings by code</h2>"
        + _table(["code", "severity", "title", "nodes", "which"], rows, numeric=(3,))
        + "<p class=note>cudadoctor explain CODE tells what a code means and how to fix it.</p>"
    )


def _smoke(result: Dict[str, Any]) -> str:
    sm = result.get("smoke")
    if not sm:
        return ""
    out = [
        f"<h2 id=smoke>Smoke ({sm['runs']:,} runs: {sm['passed']:,} passed, {sm['failed']:,} failed, "
        f"{sm['errors']:,} could not run)</h2>"
    ]
    if sm.get("failed_stages"):
        out.append(
            _table(
                ["failed stage", "runs", "which", "first message"],
                [
                    (e(x["stage"]), f"{x['count']:,}", f"<span class=names>{_names(x['ranks'])}</span>", e(x["message"]))
                    for x in sm["failed_stages"]
                ],
                numeric=(1,),
            )
        )
    return "".join(out)


def _status(n: Dict[str, Any]) -> str:
    if n.get("errors"):
        return "<span class=error>error</span>"
    if n.get("deviates"):
        return "<span class=deviates>deviates</span>"
    if n.get("warnings"):
        return "<span class=warning>warning</span>"
    return "ok"


def _attention(result: Dict[str, Any]) -> str:
    nodes = [n for n in result.get("nodes") or [] if n.get("errors") or n.get("warnings") or n.get("deviates")]
    if not nodes:
        return ""
    devs = {d["node"]: d["differs"] for d in result.get("deviating_nodes") or []}
    rows = []
    for n in nodes[:ATTENTION_ROWS]:
        differs = ", ".join(e(LABELS.get(k, k)) for k in devs.get(n["node"], {}))
        rows.append(
            (
                f"<span class=names>{e(n['node'])}</span>",
                _status(n),
                f"{n.get('errors', 0)}",
                f"{n.get('warnings', 0)}",
                " ".join(f"<code>{e(c)}</code>" for c in n.get("codes") or []),
                differs,
            )
        )
    more = len(nodes) - len(rows)
    return (
        f"<h2 id=attention>Nodes that need attention ({len(nodes):,})</h2>"
        + _table(["node", "status", "errors", "warnings", "codes", "deviates in"], rows, numeric=(2, 3))
        + (f"<p class=note>… {more:,} more: see --format csv.</p>" if more else "")
    )


def _all_nodes(result: Dict[str, Any]) -> str:
    nodes = result.get("nodes") or []
    if not nodes:
        return ""
    ok = [n["node"] for n in nodes if not (n.get("errors") or n.get("warnings") or n.get("deviates"))]
    return (
        f"<h2 id=nodes>Per-node health</h2><p>{len(ok):,} of {len(nodes):,} nodes are healthy and in the majority "
        f"configuration.</p><details><summary>All {len(ok):,} healthy nodes</summary>"
        f"<p class=names>{', '.join(e(x) for x in ok)}</p></details>"
    )


def _unreadable(result: Dict[str, Any]) -> str:
    bad = result.get("unreadable") or []
    if not bad:
        return ""
    rows = [(f"<span class=names>{e(u['file'])}</span>", e(u["reason"])) for u in bad[:500]]
    return f"<h2 id=unreadable>Files that could not be read ({len(bad):,})</h2>" + _table(["file", "reason"], rows)


def _plots(plots: Optional[List[Tuple[str, str]]]) -> str:
    if plots is None:
        return (
            "<h2 id=plots>Plots</h2><p class=note id=no-plots>Plots need the optional plotting library: "
            "<code>pip install 'cudadoctor[html]'</code> (matplotlib). The tables below have the same numbers.</p>"
        )
    if not plots:
        return ""
    return (
        "<h2 id=plots>Plots</h2><div class=plots>"
        + "".join(f"<figure class=plot id='plot-{e(key)}'>{svg}</figure>" for key, svg in plots)
        + "</div>"
    )


# ------------------------------------------------------------------------------------ plots


def figures(result: Dict[str, Any]) -> Optional[List[Tuple[str, str]]]:
    """(key, inline SVG) for each plot there is data for; None when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 9, "svg.hashsalt": "cudadoctor"})
    out: List[Tuple[str, str]] = []
    nodes = result.get("nodes") or []
    for key, title, label in (
        ("driver", "NVIDIA driver versions", "driver"),
        ("torch", "torch versions (CUDA variant)", "torch"),
    ):
        counts = _distribution(nodes, key)
        if counts:
            out.append((f"{label}-versions", _svg(plt, _bars(plt, counts, title))))
    heat = _codes_by_gpu(result)
    if heat:
        out.append(("health-codes", _svg(plt, heat)))
    runs = ((result.get("smoke") or {}).get("results")) or []
    for key, title, unit in (
        ("samples_per_s", "smoke throughput per node", "samples/s"),
        ("busbw_gbps", "all_reduce bus bandwidth per rank", "GB/s"),
        ("h2d_gbps", "host→device bandwidth (pinned) per node", "GB/s"),
    ):
        pts = [(str(r.get("rank")), float(r[key])) for r in runs if isinstance(r.get(key), (int, float))]
        if pts:
            fig, names = _per_node(plt, pts, title, unit)
            caption = f"outliers (red): {_names(names, 50)}" if names else "no outliers"
            out.append((key.replace("_", "-"), _svg(plt, fig) + f"<figcaption class='note outliers'>{caption}</figcaption>"))
    return out


def _svg(plt: Any, fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # no XML prolog or DOCTYPE inside the page


def _distribution(nodes: List[Dict[str, Any]], key: str) -> List[Tuple[str, int]]:
    counts: Dict[str, int] = {}
    for n in nodes:
        c = n.get("config") or {}
        v = c.get(key, "unknown")
        if key == "torch" and c.get("variant") not in (None, "unknown", "none"):
            v = f"{v} ({c['variant']})"
        counts[clean(v)] = counts.get(clean(v), 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(top) > 15:
        top = top[:14] + [("other", sum(n for _, n in top[14:]))]
    return top


def _bars(plt: Any, counts: List[Tuple[str, int]], title: str) -> Any:
    fig, ax = plt.subplots(figsize=(5.2, 0.35 * len(counts) + 1.0))
    labels = [k for k, _ in counts][::-1]
    vals = [v for _, v in counts][::-1]
    colors = ["#2da44e" if i == len(vals) - 1 else "#8250df" for i in range(len(vals))]
    ax.barh(labels, vals, color=colors)
    ax.set_xscale("log" if max(vals) > 50 * max(1, min(vals)) else "linear")
    for y, v in enumerate(vals):
        ax.text(v, y, f" {v:,}", va="center")
    ax.set_title(title + " (nodes; majority in green)")
    ax.spines[["top", "right"]].set_visible(False)
    return fig


def _codes_by_gpu(result: Dict[str, Any]) -> Any:
    """A heat map: finding codes (rows) by GPU model (columns), the number of nodes in each cell."""
    import matplotlib.pyplot as plt

    cells: Dict[Tuple[str, str], int] = {}
    for n in result.get("nodes") or []:
        gpu = clean((n.get("config") or {}).get("gpu", "unknown"))
        for code in n.get("codes") or []:
            cells[(code, gpu)] = cells.get((code, gpu), 0) + 1
    if not cells:
        return None
    codes = sorted({c for c, _ in cells}, key=lambda c: -sum(v for (k, _), v in cells.items() if k == c))[:20]
    gpus = sorted({g for _, g in cells})[:12]
    grid = [[cells.get((c, g), 0) for g in gpus] for c in codes]
    fig, ax = plt.subplots(figsize=(1.3 * len(gpus) + 3.5, 0.32 * len(codes) + 1.4))
    ax.imshow(grid, cmap="Reds", aspect="auto")
    ax.set_xticks(range(len(gpus)), [g[:24] for g in gpus], rotation=20, ha="right")
    ax.set_yticks(range(len(codes)), codes)
    top = max(max(row) for row in grid) or 1
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v:
                ax.text(j, i, f"{v:,}", ha="center", va="center", fontsize=8, color="white" if v > top / 2 else "black")
    ax.set_title("finding codes by GPU model (nodes)")
    return fig


def outliers(values: List[float]) -> List[int]:
    """Indexes of values far from the median: beyond 3.5 robust z-scores (MAD), or below half the median."""
    if len(values) < 3:
        return []
    med = statistics.median(values)
    mad = statistics.median(abs(v - med) for v in values) or (abs(med) * 0.05) or 1.0
    return [i for i, v in enumerate(values) if abs(v - med) / (1.4826 * mad) > 3.5 or v < med / 2]


def _per_node(plt: Any, pts: List[Tuple[str, float]], title: str, unit: str) -> Tuple[Any, List[str]]:
    pts = sorted(pts, key=lambda p: p[1])
    vals = [v for _, v in pts]
    bad = outliers(vals)
    fig, ax = plt.subplots(figsize=(5.2, 2.8))
    if len(vals) <= 200:
        ax.plot(range(len(vals)), vals, "o", color="#0969da", markersize=3)
    else:  # one line, not one marker per node: the SVG stays small
        ax.plot(range(len(vals)), vals, "-", color="#0969da", linewidth=1.2)
    ax.axhline(statistics.median(vals), color="#57606a", linestyle="--", linewidth=0.8, label="median")
    if bad:
        ax.plot(bad, [vals[i] for i in bad], "o", color="#cf222e", markersize=5, label=f"outliers ({len(bad)})")
    ax.set_xlabel("nodes, slowest first")
    ax.set_ylabel(unit)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    return fig, [pts[i][0] for i in bad]
