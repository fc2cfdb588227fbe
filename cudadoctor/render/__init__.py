"""Renderers: they only read a :class:`~cudadoctor.report.Report`; they decide nothing."""

from __future__ import annotations

from ..report import Report


def render(report: Report, fmt: str, verbose: bool = False, color: bool = False) -> str:
    if fmt == "json":
        from .json import render_json

        return render_json(report)
    if fmt == "junit":
        from .junit import render_junit

        return render_junit(report)  # noqa: E702
    if fmt == "markdown":
        from .markdown import render_markdown

        return render_markdown(report, verbose=verbose)
    if fmt == "prometheus":
        from .prometheus import report_metrics

        return report_metrics(report)
    from .text import render_text

    return render_text(report, verbose=verbose, color=color)
