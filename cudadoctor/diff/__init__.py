"""Compare two machines: what differs that can matter, most likely cause first.

The use case is "works on node A, fails on node B". Both facts documents are re-diagnosed with
today's checks; the result lists

* ``differences``: facts that differ and can break GPU use, ranked by how directly they break it
  (torch variant, torch import, driver, torchvision pairing, GPUs and their visibility, loaded
  libraries and where they came from, library-path variables, nvidia-* wheels, other packages,
  Python, container/OS...);
* ``only_in_a`` / ``only_in_b``: findings present on one side only;
* ``unknown``: facts known on one side only (not compared, never counted as a difference);
* ``same``: what was compared and found equal (what is ruled out).

Noise is never compared: timings, free/used memory, PIDs, timestamps, host names, UUIDs and
serials, PCI slots, interpreter and environment paths.

Everything here is pure: it reads two facts dicts and two reports.

The package: ``describe`` says how each fact reads on one side (through cudadoctor/interpret/),
``areas`` compares them area by area, and this module puts the result together.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set, Tuple

from ..facts import Facts
from ..model import severity_rank
from .areas import AREAS, Comparison, Difference

__all__ = ["DIFF_KIND", "DIFF_SCHEMA", "Difference", "compare"]

DIFF_KIND = "cudadoctor-diff"
DIFF_SCHEMA = 1


def compare(
    fa: Dict[str, Any], fb: Dict[str, Any], report_a: Any = None, report_b: Any = None, names: Tuple[str, str] = ("A", "B")
) -> Dict[str, Any]:
    """The diff of two facts documents (and their reports, for findings on one side only)."""
    c = Comparison(Facts(fa), Facts(fb))
    for area in AREAS:
        area(c)
    c.diffs.sort(key=lambda d: -d.weight)
    c.unknown.sort(key=lambda d: -d.weight)
    only_a, only_b = _one_sided(report_a, report_b)
    return {
        "kind": DIFF_KIND,
        "schema_version": DIFF_SCHEMA,
        "a": _side(names[0], c.a, report_a),
        "b": _side(names[1], c.b, report_b),
        "differences": [d.to_dict() for d in c.diffs],
        "only_in_a": only_a,
        "only_in_b": only_b,
        "unknown": [d.to_dict() for d in c.unknown],
        "same": sorted(set(c.same)),
        "matters": bool(c.diffs or only_a or only_b),
    }


def _side(name: str, fx: Facts, report: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {"name": name, "collected_by": fx.str("tool.version"), "origin": fx.origin}
    if report is not None:
        v = report.verdict()
        out["summary"] = {"state": v["state"], "text": v["text"]}
    return out


def _one_sided(ra: Any, rb: Any) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The findings of each report whose code the other report does not have."""
    if ra is None or rb is None:
        return [], []
    return _findings_not_in(ra, {f.code for f in rb.findings}), _findings_not_in(rb, {f.code for f in ra.findings})


def _findings_not_in(report: Any, other: Set[str]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    seen: Set[str] = set()
    for f in sorted(report.findings, key=lambda f: (severity_rank(f.severity), f.code)):
        if f.code in other or f.code in seen:
            continue
        seen.add(f.code)
        out.append(
            {"code": f.code, "severity": f.severity, "title": f.title, "fix": list(f.fix.commands), "area": report.area_of(f)}
        )
    return out
