"""JUnit XML, the test-report format CI systems read (Jenkins, GitLab, Azure Pipelines, GitHub).

One ``<testcase>`` per check that ran: a ``<failure>`` for an error finding, an ``<error>`` for a
check that crashed, overran or returned garbage (the test itself broke), ``<skipped>`` when the
check had nothing to judge (its area has nothing there or is unknown: no GPU visible, NVML not
readable), passed otherwise; warnings and notes go to the case's ``<system-out>``. The suite's
properties carry the verdict. Only reads the report, like every renderer.

The element and attribute set is the common subset of the JUnit schemas those systems accept
(testsuites > testsuite > testcase > failure | error | skipped | system-out; properties).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Dict, List

from .. import __version__
from ..model import Finding
from ..report import Report

# Characters XML 1.0 does not allow, even escaped (control characters but tab, LF, CR; surrogates; U+FFFE/F).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(s: object) -> str:
    return _NOT_XML.sub("\ufffd", str(s))


def _finding_text(f: Finding) -> str:
    lines = [f"{f.severity} {f.code}: {f.title}"]
    if f.fix.commands:
        lines.append("fix: " + "\n     ".join(f.fix.commands))
    if f.fix.why:
        lines.append("why: " + f.fix.why)
    for k, v in f.evidence.items():
        lines.append(f"evidence: {k} = {v}")
    lines.append(f"more: cudadoctor explain {f.code}")
    return "\n".join(lines)


#: Checks whose subject is the absence itself: never "not applicable" for want of what they look for.
_ABOUT_ABSENCE = {"no-gpu-visible"}


def _not_applicable(report: Report, codes: List[str], area_status: Dict[str, str], area_detail: Dict[str, str]) -> str:
    """Why the check had nothing to judge, or "" when it had."""
    if _ABOUT_ABSENCE.intersection(codes):
        return ""
    areas = {code.area for c in codes if (code := report.registry.code(c))}
    if not areas or not all(area_status.get(a) in ("none", "unknown") for a in areas):
        return ""
    return "not applicable: " + "; ".join(f"{a}: {area_detail.get(a, 'unknown')}" for a in sorted(areas))


def render_junit(report: Report) -> str:
    from .summary import areas as area_lines

    rows = area_lines(report)
    status = {key: st for key, _, st, _ in rows}
    detail = {key: str(d) for key, _, _, d in rows}
    by_code: Dict[str, List[Finding]] = {}
    for f in report.findings:
        by_code.setdefault(f.code, []).append(f)

    suites = ET.Element("testsuites", name="cudadoctor")
    suite = ET.SubElement(suites, "testsuite", name="cudadoctor check", timestamp=_x(report.generated_at or ""))
    props = ET.SubElement(suite, "properties")
    v = report.verdict()
    for name, value in (
        ("cudadoctor.version", __version__),
        ("verdict", v["state"]),
        ("verdict.text", v["text"]),
        ("python", (report.facts.get("tool") or {}).get("python_target") or ""),
    ):
        ET.SubElement(props, "property", name=name, value=_x(value))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total = 0.0
    seen = set()
    for run in report.checks:
        counts["tests"] += 1
        total += run.duration_s
        case = ET.SubElement(
            suite, "testcase", name=_x(run.name), classname=_x(run.source.replace(":", ".")), time=f"{run.duration_s:.6f}"
        )
        found = [f for c in run.codes for f in by_code.get(c, [])]
        seen.update(run.codes)
        errors = [f for f in found if f.severity == "error"]
        if run.status != "ok":
            counts["errors"] += 1
            el = ET.SubElement(case, "error", message=_x(f"check {run.status}: {run.error}"[:1000]), type=_x(run.status))
            el.text = _x(run.error)
        elif errors:
            counts["failures"] += 1
            el = ET.SubElement(case, "failure", message=_x(errors[0].title), type=_x(errors[0].code))
            el.text = _x("\n\n".join(_finding_text(f) for f in errors))
        elif not found:
            why = _not_applicable(report, run.codes, status, detail)
            if why:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_x(why))
        rest = [f for f in found if f.severity != "error"]
        if rest:
            ET.SubElement(case, "system-out").text = _x("\n\n".join(_finding_text(f) for f in rest))
    # Findings no check declares (the runner's own: check-crashed, probe-failed) as cases of their own.
    for f in report.findings:
        if f.code in seen:
            continue
        counts["tests"] += 1
        case = ET.SubElement(suite, "testcase", name=_x(f.code), classname="cudadoctor.tool", time="0")
        if f.severity == "error" or f.code == "check-crashed":
            counts["errors" if f.code == "check-crashed" else "failures"] += 1
            tag = "error" if f.code == "check-crashed" else "failure"
            ET.SubElement(case, tag, message=_x(f.title), type=_x(f.code)).text = _x(_finding_text(f))
        else:
            ET.SubElement(case, "system-out").text = _x(_finding_text(f))
    for el in (suite, suites):
        for k, n in counts.items():
            el.set(k, str(n))
        el.set("time", f"{total:.6f}")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
