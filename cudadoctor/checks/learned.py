"""The learned fallback: a likely cause from the words of the error text, where no rule said anything.

A fallback check (model.Check.fallback): the runner calls it after every other check and the
error-text engine, and only when none of them made an error or warning finding. It scores the
facts' error texts with the shipped classifier (cudadoctor/learned.py, kb/models/classifier_model.json,
trained on labelled real texts; docs/learned.md) and, when the most likely label is a catalogue
code at or above the model's threshold, reports it as a WARNING titled "Likely: ...", with the
confidence and the words that drove it in ``evidence["learned"]``. It never says "healthy" and
never makes an error: a guess is a lead to confirm, not a diagnosis.

It declares every built-in code (it may report any of them) and owns none.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor import learned as _learned
from cudadoctor.errortext import error_texts
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from . import BUILTIN_MODULES

_THIS = __name__.rsplit(".", 1)[1]


def _catalogue() -> Dict[str, Code]:
    """Every code the other built-in checks declare, by name (their register() lists are plain data)."""
    out: Dict[str, Code] = {}
    for name in BUILTIN_MODULES:
        if name == _THIS:
            continue
        for chk in importlib.import_module(f"cudadoctor.checks.{name}").register():
            for c in chk.codes:
                out.setdefault(c.code, c)
    return out


CATALOGUE = _catalogue()
_CMD = re.compile(r"`([^`]{3,200})`")


def _confirm_commands(code: Code) -> Tuple[str, ...]:
    """The commands the code's "how to confirm" section names (in backticks), then `cudadoctor explain CODE`."""
    cmds = [c.strip() for c in _CMD.findall(code.explanation.get("confirm", "")) if " " in c.strip() or c.strip().isidentifier()]
    return tuple(dict.fromkeys(cmds)) + (f"cudadoctor explain {code.code}",)


def ranked(fx: Facts) -> "list[_learned.Guess]":
    """The classifier's three most likely labels for the facts' error texts when the first is a reportable
    cause at or above the model's threshold; else nothing."""
    text = _learned.text_of(error_texts(fx))
    if not text.strip():
        return []
    model = _learned.load_model()
    if model is None:
        return []
    top = model.rank(text, top=3)
    if not top or top[0].label not in model.reportable or top[0].label not in CATALOGUE or top[0].probability < model.threshold:
        return []
    return top


def judged(facts: Dict[str, Any], diagnosis: Optional[Dict[str, Any]]) -> List[str]:
    """The codes the rules judged on these facts, which the guess may not name (``runner.run_fallbacks``):
    the error-text engine's top cause when the facts contradict it, or when its own check declined it on facts
    about this machine (torch, the driver, the GPUs or the Python known). With none of those known (an error
    text alone) the check's silence is no judgement: the guess may then name the text's top cause."""
    code = (diagnosis or {}).get("code")
    if not code:
        return []
    if (diagnosis or {}).get("contradicted_by"):
        return [code]
    fx = Facts(facts)
    known = (
        fx.str("torch.version")
        or fx.str("torch.status")
        or fx.str("nvml.driver_version")
        or fx.dicts("nvml.devices")
        or fx.str("python.version")
    )
    return [code] if known else []


@check(*CATALOGUE.values(), name="learned-cause", fallback=True)
def learned_cause(fx: Facts) -> Iterator[Finding]:
    """Where no rule found a cause, the learned classifier's most likely one, as a warning."""
    top = ranked(fx)
    if not top:
        return
    g, code, model = top[0], CATALOGUE[top[0].label], _learned.load_model()
    cv = (model.meta.get("cv") or {}) if model else {}
    yield code.finding(
        title=f"Likely: {code.title} (a learned guess from the error text's words, {g.probability:.0%} confident; no rule confirmed it)",
        evidence={
            "learned": {
                "confidence": round(g.probability, 2),
                "words": list(g.words),
                "next": [{"label": o.label, "confidence": round(o.probability, 2)} for o in top[1:]],
                "threshold": model.threshold if model else None,
                "model": {
                    "trained_at": model.meta.get("trained_at") if model else None,
                    "grouped_cv_precision_at_threshold": cv.get("precision_at_threshold"),
                },
            }
        },
        fix=Fix(
            _confirm_commands(code),
            "A guess from the words of the error, not a diagnosis: confirm it with the commands above first. "
            f"If confirmed: {code.explanation.get('fix', '')}",
        ),
        severity="warning",
    )


def register():
    return [learned_cause]
