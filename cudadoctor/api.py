"""The Python API, for notebooks (Jupyter, Colab, Kaggle) and scripts.

    import cudadoctor
    cudadoctor.check()        # the last line of a cell shows the report
    cudadoctor.devices()
    cudadoctor.smoke()

Each call runs what the command of the same name runs (the same probes in child processes, the
same checks, the same redaction: output is shareable unless ``show_pii=True``) and returns a result
object: its data as attributes (``findings``, ``verdict``, ``ok``, ``to_dict()``), shown as the text
report by ``print()``/``repr()``, and as HTML or Markdown by notebooks (``_repr_html_``,
``_repr_markdown_``). Nothing here prints, exits or raises ``SystemExit``: bad input raises
:class:`ValueError` with the same one-line message the command prints.

Imported only on first use (``cudadoctor.check`` is a lazy attribute), so ``import cudadoctor``
stays cheap.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

__all__ = ["check", "devices", "smoke", "CheckResult", "DevicesResult", "SmokeResult"]


def _interpreter(python: Optional[str]) -> Optional[str]:
    if python is not None and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise ValueError(f"python={python!r}: not an executable file")
    return python


def _facts_from(facts: Any) -> Dict[str, Any]:
    """A facts document from a dict (facts or a JSON report) or a path to one."""
    import json

    from .facts import FactsError, load_facts, parse_document

    try:
        if isinstance(facts, dict):
            return parse_document(json.dumps(facts), "facts")
        return load_facts(os.fspath(facts))
    except FactsError as e:
        raise ValueError(str(e)) from None


_STATUS_COLOR = {
    "ok": "#1a7f37",
    "info": "#1a7f37",
    "error": "#cf222e",
    "warning": "#9a6700",
    "unknown": "#6e7781",
    "crashed": "#8250df",
    "none": "#6e7781",
}


class CheckResult:
    """What ``cudadoctor check`` found: ``findings``, ``verdict``, ``ok``, ``facts``, ``report``."""

    def __init__(self, report: Any, strict: bool = False) -> None:
        self.report = report  # cudadoctor.report.Report, already redacted (unless show_pii)
        self.strict = strict

    @property
    def findings(self) -> List[Any]:
        return list(self.report.findings)

    @property
    def facts(self) -> Dict[str, Any]:
        return self.report.facts

    @property
    def verdict(self) -> Dict[str, Any]:
        return self.report.verdict()

    @property
    def exit_code(self) -> int:
        """What ``cudadoctor check`` would exit with (0, or 1 for error findings)."""
        return self.report.exit_code(self.strict)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> Dict[str, Any]:
        return self.report.to_dict()

    def render(self, fmt: str = "text", verbose: bool = False) -> str:
        from .render import render

        return render(self.report, fmt, verbose=verbose)

    def __str__(self) -> str:
        return self.render("text")

    def __repr__(self) -> str:
        return self.render("text")

    def _repr_markdown_(self) -> str:
        return self.render("markdown")

    def _repr_html_(self) -> str:
        import html

        from .render.summary import SYMBOLS, areas

        e = html.escape
        rows = []
        for _, label, status, detail in areas(self.report):
            rows.append(
                f'<tr><td style="color:{_STATUS_COLOR.get(status, "inherit")};font-weight:bold">'
                f"[{e(SYMBOLS[status])}]</td><td>{e(label)}</td><td>{e(str(detail))}</td></tr>"
            )
        out = [
            '<div class="cudadoctor-report">',
            "<h4>cudadoctor check: can PyTorch use your NVIDIA GPU?</h4>",
            '<table class="cudadoctor-areas">',
            *rows,
            "</table>",
        ]
        for f in self.report.findings:
            sym = "i" if f.severity == "info" else SYMBOLS["crashed" if f.code == "check-crashed" else f.severity]
            color = _STATUS_COLOR.get(f.severity, "inherit")
            out.append(f'<div class="cudadoctor-finding"><p><b style="color:{color}">{e(sym)} {e(f.code)}</b>: {e(f.title)}</p>')
            if f.fix.commands:
                out.append("<pre>" + e("\n".join(f.fix.commands)) + "</pre>")
            if f.fix.why:
                out.append(f"<p>why: {e(f.fix.why)}</p>")
            out.append(f"<p>more: <code>cudadoctor explain {e(f.code)}</code></p></div>")
        v = self.verdict
        state = {"yes": "ok", "no": "error", "degraded": "error", "unknown": "unknown"}[v["state"]]
        out.append(
            f'<p class="cudadoctor-verdict" style="color:{_STATUS_COLOR[state]};font-weight:bold">'
            f"{e(SYMBOLS[state])} {e(v['text'])}.</p></div>"
        )
        return "\n".join(out)


class _Rendered:
    """A result kept as a dict, rendered by a text and a Markdown renderer."""

    title = ""

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        return self.data

    def render(self, fmt: str = "text") -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return self.render("text")

    def __repr__(self) -> str:
        return self.render("text")

    def _repr_markdown_(self) -> str:
        return self.render("markdown")

    def _repr_html_(self) -> str:
        import html

        # The text report, preformatted: its columns line up as on a terminal.
        return (
            f'<div class="cudadoctor-report"><h4>{html.escape(self.title)}</h4>'
            f"<pre>{html.escape(self.render('text'))}</pre></div>"
        )


class DevicesResult(_Rendered):
    """What ``cudadoctor devices`` shows: ``devices`` (one dict per GPU), ``ok``, ``to_dict()``."""

    title = "cudadoctor devices"

    def __init__(self, model: Dict[str, Any], show_serials: bool = False) -> None:
        super().__init__(model)
        self.show_serials = show_serials

    @property
    def devices(self) -> List[Dict[str, Any]]:
        return list(self.data.get("devices") or [])

    @property
    def ok(self) -> bool:
        """Every GPU passed or could not be judged, and there is at least one (the command's exit 0)."""
        d = self.devices
        return bool(d) and not self.data.get("nvml_incomplete") and not any(x.get("result") == "FAIL" for x in d)

    def render(self, fmt: str = "text") -> str:
        from .render.devices import render_devices

        return render_devices(self.data, fmt, show_serials=self.show_serials)


class SmokeResult(_Rendered):
    """What ``cudadoctor smoke`` found: ``status`` (pass | fail | error), ``stages``, ``ok``, ``to_dict()``."""

    title = "cudadoctor smoke"

    @property
    def status(self) -> Optional[str]:
        return self.data.get("status")

    @property
    def stages(self) -> List[Dict[str, Any]]:
        return list(self.data.get("stages") or [])

    @property
    def ok(self) -> bool:
        return self.status == "pass"

    def render(self, fmt: str = "text") -> str:
        from .render.smoke import render

        return render(self.data, fmt)


def check(
    python: Optional[str] = None,
    *,
    facts: Any = None,
    quick: bool = False,
    timeout: Optional[float] = None,
    error: Optional[str] = None,
    strict: bool = False,
    show_pii: bool = False,
) -> CheckResult:
    """Diagnose whether PyTorch can use the NVIDIA GPU, as ``cudadoctor check`` does.

    ``python``: the interpreter to diagnose (default: as the command chooses, in a notebook the
    kernel's own). ``facts``: a saved facts document or JSON report (a dict or a path) instead
    of this machine. ``error``: the error message you saw. ``timeout``: the limit for importing
    torch (seconds).
    """
    from . import registry
    from .facts import sanitize
    from .privacy import shareable
    from .probes import collect
    from .report import diagnose

    if facts is not None:
        data = _facts_from(facts)
    else:
        data = collect(python=_interpreter(python), quick=quick, timeouts={"torch": float(timeout)} if timeout else None)
    if error and error.strip():
        data["user_error"] = {"text": sanitize(error[-20000:])}
    report = diagnose(data, registry.load())
    return CheckResult(shareable(report, show_pii, live=facts is None), strict=strict)


def devices(
    python: Optional[str] = None,
    *,
    facts: Any = None,
    timeout: Optional[float] = None,
    show_serials: bool = False,
    show_pii: bool = False,
) -> DevicesResult:
    """Per GPU: properties, health and PyTorch's view, with a verdict (``cudadoctor devices``)."""
    from . import registry
    from .devices import build
    from .privacy import redactor_for, shareable
    from .probes import collect
    from .report import diagnose

    if facts is not None:
        data = _facts_from(facts)
    else:
        t = float(timeout) if timeout else None
        data = collect(python=_interpreter(python), timeouts={"nvml": t, "torch": t} if t else None)
    report = diagnose(data, registry.load())
    report = shareable(
        report,
        show_pii,
        live=facts is None,
        redactor=None if show_pii else redactor_for([report.facts], live=facts is None, keep_serials=show_serials),
    )
    return DevicesResult(build(report.facts, report.findings, show_serials=show_serials), show_serials)


def smoke(
    device: str = "cuda",
    *,
    python: Optional[str] = None,
    data_dir: Optional[str] = None,
    download: bool = False,
    synthetic: bool = False,
    epochs: Optional[int] = None,
    timeout: float = 300.0,
    show_pii: bool = False,
    offline: bool = False,
) -> SmokeResult:
    """Train the MNIST MLP on ``device`` and check every stage (``cudadoctor smoke``).

    A GPU the workload cannot use is then diagnosed (as the command does), naming the cause and its fix. ``synthetic=True`` trains on generated digits when MNIST is not at hand.
    """
    from .privacy import Redactor, redactor_for
    from .probes.interpreter import choose
    from .smoke.gate import smoke_with_diagnosis

    dev = device.strip().lower()
    if not (dev in ("cuda", "cpu", "all") or (dev.startswith("cuda:") and dev[5:].isdigit())):
        raise ValueError(f"device={device!r}: expected cuda, cuda:N, all or cpu")
    if synthetic and download:
        raise ValueError("synthetic and download exclude each other")
    py = _interpreter(python) or choose(None)[0]
    result = smoke_with_diagnosis(py, dev, data_dir, download, synthetic, epochs, timeout, False, fetch=not offline)
    result = (Redactor(pii=False) if show_pii else redactor_for([], live=True)).redact(result)
    return SmokeResult(result)
