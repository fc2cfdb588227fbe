"""The report: one object that every renderer only reads, and that decides the exit code."""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from . import __version__, exitcodes
from .document import envelope
from .facts import REPORT_KIND, Facts
from .model import Finding
from .registry import Registry
from .runner import CheckRun, run_checks, run_fallbacks


#: Areas whose errors are beside torch's own GPU use: building CUDA code (toolkit) and companion packages.
_BESIDE_TORCH = ("toolkit", "packages")


def _kb_date() -> Optional[str]:
    try:
        from . import kb  # the knowledge base; absent in very old builds
    except ImportError:
        return None
    try:
        return kb.kb_date()
    except Exception:
        return None


@dataclass
class Report:
    facts: Dict[str, Any]
    findings: List[Finding]
    checks: List[CheckRun]
    registry: Registry
    generated_at: str = ""
    timings: Dict[str, float] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)  # e.g. the smoke result, when attached

    @property
    def counts(self) -> Dict[str, int]:
        c = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            c[f.severity] = c.get(f.severity, 0) + 1
        return c

    def exit_code(self, strict: bool = False) -> int:
        c = self.counts
        if c["error"] or (strict and c["warning"]):
            return exitcodes.FINDINGS
        return exitcodes.OK

    def area_of(self, f: Finding) -> str:
        code = self.registry.code(f.code)
        return code.area if code else "tool"

    def verdict(self) -> Dict[str, Any]:
        """The closing line: can PyTorch use the GPU here? Claimed only with evidence: a test kernel ran,
        or torch said so in a live probe or a complete pasted report. Otherwise it says what is unknown
        and, for a paste that shows no cause, what to paste next (interpret/missing.py)."""
        from .interpret.missing import next_pastes, unknowns

        fx = Facts(self.facts)
        c = self.counts
        errors = [f.code for f in self.findings if f.severity == "error"]
        n_dev = fx.int("torch.device_count")
        available = fx.bool("torch.cuda_available")
        kernels = [d.get("kernel_ok") for d in fx.dicts("torch.devices")]
        gpu_only = all(self.area_of(f) == "gpu" for f in self.findings if f.severity == "error")
        pasted = fx.str("origin") in ("text", "collect_env")
        evidence = self._yes_evidence(fx, kernels)
        missing: List[Dict[str, str]] = []
        if errors and available and gpu_only and n_dev and (not kernels or any(kernels)):
            # e.g. one GPU of eight with ECC errors: the others still work.
            state = "degraded"
            text = (
                f"PyTorch can use {n_dev} GPU{'s' if n_dev != 1 else ''}, but {c['error']} error"
                f"{'s need' if c['error'] != 1 else ' needs'} attention ({', '.join(dict.fromkeys(errors))})"
            )
        elif errors and all(self.area_of(f) in _BESIDE_TORCH for f in self.findings if f.severity == "error"):
            # Building CUDA code or a companion package fails: that says nothing of torch's own GPU use.
            n = f"{c['error']} error{'s' if c['error'] != 1 else ''} ({', '.join(dict.fromkeys(errors))})"
            if available and (not kernels or all(k is not False for k in kernels)) and evidence:
                state = "degraded"
                text = f"PyTorch can use {n_dev or 'the'} GPU{'s' if (n_dev or 0) != 1 else ''}, but {n} in building CUDA code or a companion package need attention"
            else:
                state = "unknown"
                missing = unknowns(fx)
                text = (
                    f"{n} to fix, in building CUDA code or a companion package; whether PyTorch itself can use a GPU is not shown"
                )
        elif errors:
            state = "no"
            text = f"PyTorch cannot use a GPU here: {c['error']} error{'s' if c['error'] != 1 else ''} ({', '.join(dict.fromkeys(errors))})"
        elif available and (not kernels or all(k is not False for k in kernels)) and evidence:
            state = "yes"
            text = f"PyTorch can use {n_dev or 'the'} GPU{'s' if (n_dev or 0) != 1 else ''}"
            text += f" ({evidence})" if evidence != "probe" else ""
            if c["warning"]:
                text += f", with {c['warning']} warning{'s' if c['warning'] != 1 else ''}"
        else:
            state = "unknown"
            missing = unknowns(fx)
            if available and not evidence:
                text = (
                    "The text says CUDA is available, but without torch's report of its version and GPUs that is not established"
                )
            else:
                text = "Could not establish whether PyTorch can use a GPU"
            if fx.get("tool.quick"):
                text += " (--quick does not import torch; run without it)"
            else:
                if pasted and not c["warning"]:
                    text += "; the text shows no cause"
                elif c["warning"]:
                    text += f"; {c['warning']} warning{'s' if c['warning'] != 1 else ''} below"
                shown = [m["what"] for m in missing if m["what"] != "kernel" or len(missing) == 1]
                if not pasted:
                    shown = [w for w in shown if w != "error"]  # a machine checked without an error is no gap
                if shown:
                    text += "; unknown: " + ", ".join(shown)
        nxt = next_pastes(fx, missing) if (pasted and state == "unknown") else []
        return {
            "state": state,
            "text": text,
            "errors": c["error"],
            "warnings": c["warning"],
            "infos": c["info"],
            "unknown": missing,
            "next": nxt,
        }

    @staticmethod
    def _yes_evidence(fx: Facts, kernels: List[Any]) -> str:
        """Why "PyTorch can use the GPU" may be said: a kernel ran, torch said so in a live probe, or a
        complete pasted report says so. '' when none holds."""
        if kernels and all(kernels):
            return "a test kernel ran on each"
        origin = fx.str("origin")
        if origin not in ("text", "collect_env"):
            return "torch reports CUDA available; no test kernel ran" if not any(k is not None for k in kernels) else "probe"
        # A pasted report says so with torch's own words, beside the torch it ran and the GPU or driver it saw
        # (collect_env's fields); a sentence "is_available() returns True" alone is not a report.
        said_by_torch = "Is CUDA available" in (fx.dict("collect_env.fields") or {})
        if said_by_torch and fx.str("torch.version") and (fx.dicts("nvml.devices") or fx.str("nvml.driver_version")):
            return "torch reported CUDA available in the pasted report; no test kernel ran"
        return ""

    def to_dict(self) -> Dict[str, Any]:
        return envelope(
            REPORT_KIND,
            {
                "tool": {"name": "cudadoctor", "version": __version__, "kb_date": _kb_date(), "generated_at": self.generated_at},
                "facts": self.facts,
                "findings": [f.to_dict() for f in self.findings],
                "checks": [r.to_dict() for r in self.checks],
                "summary": self.verdict(),
                "timings": {k: round(v, 4) for k, v in self.timings.items()},
                **({"extra": self.extra} if self.extra else {}),
            },
        )


def _for_installer(facts: Dict[str, Any], findings: List[Finding]) -> List[Finding]:
    """The built-in findings' ``python -m pip`` commands in the terms of the environment's manager
    (uv, conda, a venv for an OS-managed Python): checks/_installer.adapt_commands, one place for all."""
    from dataclasses import replace

    from .checks._installer import adapt_commands

    fx = Facts(facts)
    out = []
    for f in findings:
        if f.source.startswith("cudadoctor:") and f.fix.commands:
            cmds = adapt_commands(fx, f.fix.commands)
            if cmds != tuple(f.fix.commands):
                f = replace(f, fix=replace(f.fix, commands=cmds))
        out.append(f)
    return out


def _ruled_out_by_facts(
    facts: Dict[str, Any], findings: List[Finding], diagnosis: Optional[Dict[str, Any]]
) -> "tuple[List[Finding], Optional[Dict[str, Any]]]":
    """An error text whose cause the probed facts rule out (no NVIDIA GPU for an sm_120 error, no driver
    for "driver too old": text from another machine or another time) is an info that names the fact
    that disagrees, never an error "confirmed" by these facts (interpret/agreement.py)."""
    from dataclasses import replace

    from .interpret.agreement import disagreements

    fx = Facts(facts)
    if not fx.user_error():
        return findings, diagnosis
    out = []
    for f in findings:
        against = disagreements(fx, f.code) if f.severity in ("error", "warning") else []
        if against:
            f = replace(
                f,
                severity="info",
                title=f"The error text points to {f.code}, but the facts disagree: {against[0]['why']}",
                evidence={**f.evidence, "disagrees": [f"{a['fact']} = {a['value']}: {a['why']}" for a in against]},
            )
        out.append(f)
    if diagnosis is not None:
        against = disagreements(fx, str(diagnosis.get("code")))
        if against:
            diagnosis = {
                **diagnosis,
                "confirmed_by_facts": False,
                "contradicted_by": list(diagnosis.get("contradicted_by") or []) + against,
            }
    return out, diagnosis


def diagnose(facts: Dict[str, Any], registry: Registry, timings: Optional[Dict[str, float]] = None) -> Report:
    t = time.perf_counter()
    findings, runs = run_checks(registry, Facts(facts))
    from .errortext import adjudicate  # the error-text engine: the top cause, as triage names it

    findings, diagnosis = adjudicate(facts, findings, runs, registry)
    findings, diagnosis = _ruled_out_by_facts(facts, findings, diagnosis)
    from .checks.learned import judged  # a learned guess where no rule said anything, never one the rules judged

    findings, runs = run_fallbacks(registry, Facts(facts), findings, runs, judged(facts, diagnosis))
    findings = _for_installer(facts, findings)
    tm = dict(timings or {})
    tm["checks_s"] = time.perf_counter() - t
    return Report(
        facts=facts,
        findings=findings,
        checks=runs,
        registry=registry,
        generated_at=_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        timings=tm,
        extra={"diagnosis": diagnosis} if diagnosis else {},
    )
