"""JSON: the whole report, sorted keys, versioned. This is the contract (docs/report-schema.md)."""

from __future__ import annotations

import json

from ..report import Report


def dumps(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, default=str) + "\n"


def render_json(report: Report) -> str:
    return dumps(report.to_dict())
