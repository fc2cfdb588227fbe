"""JSON: the whole report, sorted keys, versioned. This is the contract (docs/report-schema.md)."""

from __future__ import annotations

from ..document import dumps
from ..report import Report

__all__ = ["dumps", "render_json"]


def render_json(report: Report) -> str:
    return dumps(report.to_dict())
