"""The learned fallback: a likely cause from the words of the error text and the stated facts, where no rule said anything.

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
from .companions import names_cpu_build_companion

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
    text = _learned.text_of(error_texts(fx), fx.data)
    if not text.strip():
        return []
    model = _learned.load_model()
    if model is None:
        return []
    top = model.rank(text, top=3)
    if not top or top[0].label not in model.reportable or top[0].label not in CATALOGUE or top[0].probability < model.threshold:
        return []
    if top[0].label == "companion-cpu-only-build" and not names_cpu_build_companion(text):
        return []  # a package's CPU build with no such package named in the text or the facts: no entity to guess about
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


#: A point of the held-out curve is quoted only when it counts at least this many guesses (fewer say little).
MIN_RECORD = 5


def heldout_record(model: Optional[_learned.Model], confidence: float) -> Optional[Dict[str, Any]]:
    """How often the model was right at this confidence on reports it never saw: the point of the held-out batches'
    curve (model.meta["heldout"], train_classifier.heldout_batches) at the highest threshold not above it that
    counts at least MIN_RECORD guesses."""
    curve = ((model.meta.get("heldout") or {}).get("curve") or {}) if model else {}
    points = sorted(
        (float(t), v) for t, v in curve.items() if float(t) <= confidence + 1e-9 and (v.get("reported") or 0) >= MIN_RECORD
    )
    if not points:
        return None
    t, v = points[-1]
    return {"at": t, "right": v.get("right"), "guesses": v.get("reported"), "precision": v.get("precision")}


def _how_often(rec: Optional[Dict[str, Any]]) -> str:
    if not rec or not rec.get("guesses"):
        return "not measured on unseen reports"
    right, n = rec.get("right") or 0, rec["guesses"]
    share = right / n
    words = (
        "always right" if right == n else "right about half the time" if 0.4 <= share < 0.6 else f"right {share:.0%} of the time"
    )
    # the point is cumulative: every unseen guess at rec["at"] or more, so say so rather than "at this confidence"
    return f"{words} on unseen reports at {rec['at']:.0%} confidence or more ({right} of {n})"


@check(*CATALOGUE.values(), name="learned-cause", fallback=True)
def learned_cause(fx: Facts) -> Iterator[Finding]:
    """Where no rule found a cause, the learned classifier's most likely one, as a warning."""
    top = ranked(fx)
    if not top:
        return
    g, code, model = top[0], CATALOGUE[top[0].label], _learned.load_model()
    cv = (model.meta.get("cv") or {}) if model else {}
    rec = heldout_record(model, g.probability)
    confirm = _confirm_commands(code)
    runner_up = top[1] if len(top) > 1 else None
    second = f"; runner-up: {runner_up.label} ({runner_up.probability:.0%})" if runner_up else ""
    yield code.finding(
        title=f"Likely: {code.title} (a learned guess from the error text's words and the stated facts, {g.probability:.0%} "
        f"confident, {_how_often(rec)}{second}; no rule confirmed it: paste the output of `{confirm[0]}` to confirm)",
        evidence={
            "learned": {
                "confidence": round(g.probability, 2),
                "words": list(g.words),
                "next": [{"label": o.label, "confidence": round(o.probability, 2)} for o in top[1:]],
                "threshold": model.threshold if model else None,
                "heldout": rec,
                "paste_next": list(confirm[:-1]) or list(confirm),
                "model": {
                    "trained_at": model.meta.get("trained_at") if model else None,
                    "grouped_cv_precision_at_threshold": cv.get("precision_at_threshold"),
                },
            }
        },
        fix=Fix(
            confirm,
            "A guess from the words of the error and the stated facts, not a diagnosis: run the commands above and "
            f"paste their output to confirm it first. If confirmed: {code.explanation.get('fix', '')}",
        ),
        severity="warning",
    )


def register():
    return [learned_cause]
