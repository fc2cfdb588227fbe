"""The fleet summary: group the nodes :mod:`cudadoctor.fleet` read into configurations, name the
majority and every deviating node, count findings by code, and decide the exit code.

The result is the ``cudadoctor-fleet`` document (``fleet --format json``); every fleet renderer
(cudadoctor/render/fleet.py, fleet_html.py, prometheus.py) only reads it.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import __version__
from .document import envelope
from .fleet import (
    FLEET_KIND,
    KEY_NAMES,
    KEYS,
    Diagnoser,
    FleetUsageError,
    Node,
    SmokeRun,
    Unreadable,
    find_files,
    natural_key,
    plural,
    read_all,
    shared_diagnoser,
    smoke_summary,
)
from .model import severity_rank

Config = Tuple[str, ...]


def keep_latest(nodes: List[Node]) -> Tuple[List[Node], List[Dict[str, str]]]:
    """One node per name, the newest report; and the files left out."""
    superseded: List[Dict[str, str]] = []
    best: Dict[str, Node] = {}
    for n in nodes:
        cur = best.get(n.name)
        if cur is None or (n.when, n.file) > (cur.when, cur.file):
            if cur is not None:
                superseded.append({"node": cur.name, "file": cur.file, "by": n.file})
            best[n.name] = n
        else:
            superseded.append({"node": n.name, "file": n.file, "by": cur.file})
    return list(best.values()), superseded


def configurations(nodes: List[Node]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]], List[Tuple[Config, List[Node]]]]:
    """Every configuration, most common first, with what differs from the majority; the deviating nodes."""
    groups: Dict[Config, List[Node]] = {}
    for n in nodes:
        groups.setdefault(tuple(n.config[k] for k in KEY_NAMES), []).append(n)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    majority_cfg = ordered[0][0] if ordered else ()
    configs: List[Dict[str, Any]] = []
    deviating: List[Dict[str, Any]] = []
    for i, (cfg, members) in enumerate(ordered):
        d = {k: {"value": v, "majority": m} for k, v, m in zip(KEY_NAMES, cfg, majority_cfg) if v != m}
        configs.append(
            {
                "config": dict(zip(KEY_NAMES, cfg)),
                "count": len(members),
                "majority": i == 0,
                "differs": d,
                "nodes": [m.label for m in members],
            }
        )
        if i:
            deviating.extend({"node": m.label, "file": m.file, "differs": d} for m in members)
    deviating.sort(key=lambda x: natural_key(x["node"]))
    return configs, deviating, ordered


def findings_by_code(nodes: List[Node], titles: Optional[Callable[[str], Optional[str]]]) -> List[Dict[str, Any]]:
    """Each finding code with its worst severity, its title and the nodes that have it; worst first."""
    by_code: Dict[str, Dict[str, Any]] = {}
    for n in nodes:
        for code, sev in n.findings.items():
            e = by_code.setdefault(code, {"code": code, "severity": sev, "title": "", "nodes": []})
            if severity_rank(sev) < severity_rank(e["severity"]):
                e["severity"] = sev
            if not e["title"]:
                e["title"] = (titles(code) if titles else None) or n.titles.get(code, "")
            e["nodes"].append(n.label)
    findings = sorted(by_code.values(), key=lambda e: (severity_rank(e["severity"]), -len(e["nodes"]), e["code"]))
    for e in findings:
        e["count"] = len(e["nodes"])
    return findings


def _summary(
    nodes: List[Node],
    unreadable: List[Unreadable],
    superseded: List[Dict[str, str]],
    configs: List[Dict[str, Any]],
    deviating: List[Dict[str, Any]],
    sm: Optional[Dict[str, Any]],
    strict: bool,
) -> Dict[str, Any]:
    with_errors = [n.label for n in nodes if n.count("error")]
    with_warnings = [n.label for n in nodes if n.count("warning")]
    bad_nodes = set(with_errors) | {d["node"] for d in deviating} | (set(with_warnings) if strict else set())
    smoke_bad = (sm["failed"] + sm["errors"]) if sm else 0
    code = 0 if ((nodes or sm) and not bad_nodes and not unreadable and not smoke_bad) else 1
    summary = {
        "files": len(nodes) + len(unreadable) + len(superseded) + (sm["runs"] if sm else 0),
        "smoke_runs": sm["runs"] if sm else 0,
        "smoke_failed": smoke_bad,
        "nodes": len(nodes),
        "unreadable": len(unreadable),
        "superseded": len(superseded),
        "configurations": len(configs),
        "majority_nodes": configs[0]["count"] if configs else 0,
        "deviating": len(deviating),
        "with_errors": len(with_errors),
        "with_warnings": len(with_warnings),
        "healthy": len(nodes) - len(set(with_errors)),
        "uniform": len(configs) <= 1,
        "exit_code": code,
    }
    summary["text"] = _verdict_text(summary, len(bad_nodes), strict)
    return summary


def _node_row(n: Node, dev_names: set) -> Dict[str, Any]:
    return {
        "node": n.label,
        "name": n.name,
        "file": n.file,
        "kind": n.kind,
        "config": n.config,
        "errors": n.count("error"),
        "warnings": n.count("warning"),
        "infos": n.count("info"),
        "codes": sorted(n.findings, key=lambda c: (severity_rank(n.findings[c]), c)),
        "deviates": n.label in dev_names,
        "rediagnosed": n.rediagnosed,
    }


def analyse(
    nodes: List[Node],
    unreadable: List[Unreadable],
    latest: bool = False,
    strict: bool = False,
    titles: Optional[Callable[[str], Optional[str]]] = None,
    smoke: Optional[List[SmokeRun]] = None,
) -> Dict[str, Any]:
    """The fleet summary as a JSON-ready dict (the ``--format json`` contract)."""
    superseded: List[Dict[str, str]] = []
    if latest:
        nodes, superseded = keep_latest(nodes)
    by_name = Counter(n.name for n in nodes)
    for n in nodes:
        n.display = f"{n.name} ({n.file})" if by_name[n.name] > 1 else n.name
    nodes = sorted(nodes, key=lambda n: (natural_key(n.name), n.file))
    configs, deviating, _ = configurations(nodes)
    sm = smoke_summary(smoke or [])
    dev_names = {d["node"] for d in deviating}
    return envelope(
        FLEET_KIND,
        {
            "tool": {
                "name": "cudadoctor",
                "version": __version__,
                "generated_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            },
            "keys": [{"key": k, "label": lbl} for k, lbl in KEYS],
            "summary": _summary(nodes, unreadable, superseded, configs, deviating, sm, strict),
            "majority": {"config": configs[0]["config"], "count": configs[0]["count"]} if configs else None,
            "configurations": configs,
            "deviating_nodes": deviating,
            "findings": findings_by_code(nodes, titles),
            "nodes": [_node_row(n, dev_names) for n in nodes],
            "unreadable": [{"file": u.file, "reason": u.reason} for u in unreadable],
            "superseded": superseded,
            "smoke": sm,
        },
    )


def _verdict_text(s: Dict[str, Any], attention: int, strict: bool) -> str:
    smoke = ""
    if s.get("smoke_runs"):
        smoke = (
            f"; smoke: {s['smoke_failed']:,} of {plural(s['smoke_runs'], 'run')} failed"
            if s["smoke_failed"]
            else f"; smoke: all {plural(s['smoke_runs'], 'run')} passed"
        )
    if not s["nodes"]:
        tail = f"; {plural(s['unreadable'], 'file')} could not be read" if s["unreadable"] else ""
        return (smoke[2:] + tail) if smoke else "no readable report"
    return _nodes_verdict(s, attention, strict) + smoke


def _nodes_verdict(s: Dict[str, Any], attention: int, strict: bool) -> str:
    parts = []
    if s["with_errors"]:
        parts.append(f"{s['with_errors']:,} with errors")
    if strict and s["with_warnings"]:
        parts.append(f"{s['with_warnings']:,} with warnings")
    if s["deviating"]:
        parts.append(f"{s['deviating']:,} deviating from the majority configuration")
    tail = f"; {plural(s['unreadable'], 'file')} could not be read" if s["unreadable"] else ""
    if not parts:
        if s["unreadable"]:
            return f"the {plural(s['nodes'], 'node')} read are healthy and uniform, but {plural(s['unreadable'], 'file')} could not be read"
        return f"all {plural(s['nodes'], 'node')} healthy and uniform"
    return f"{attention:,} of {plural(s['nodes'], 'node')} need attention: {', '.join(parts)}{tail}"


def run(
    paths: Sequence[str],
    latest: bool = False,
    strict: bool = False,
    recheck: bool = False,
    diagnose: Optional[Diagnoser] = None,
    names: str = "host",
) -> Dict[str, Any]:
    """Find, read (:mod:`cudadoctor.fleet`) and analyse: the ``cudadoctor-fleet`` document.

    Raises :class:`~cudadoctor.fleet.FleetUsageError` when there is nothing usable.
    """
    files = find_files(paths)
    if not files:
        raise FleetUsageError(f"no report files (*.json) in {', '.join(paths)}")
    nodes, bad, smoke = read_all(files, diagnose, recheck, names)
    if not nodes and not smoke:
        first = f" (first: {bad[0].file}: {bad[0].reason})" if bad else ""
        raise FleetUsageError(f"none of the {plural(len(files), 'file')} is a readable cudadoctor report{first}")
    reg = getattr(diagnose, "registry", None) or getattr(shared_diagnoser(), "registry", None)

    def title(code: str) -> Optional[str]:
        c = reg.code(code) if reg is not None else None
        return c.title if c is not None else None

    return analyse(nodes, bad, latest=latest, strict=strict, titles=title, smoke=smoke)
