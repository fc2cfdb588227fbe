"""Measure a learned-fallback model where it speaks: the cases of given blind batches on which no rule makes an
error or warning finding, in both forms (collect_env + error line, and the verbatim paste).

    PYTHONPATH=$PWD python benchmarks/learned_heldout.py b24 b25 b26 b27 b28 b29 [--model PATH] [--markdown]

Prints, per silent case, the model's top label, its probability and whether it is the case's label; then per
threshold (0.30 ... 0.90) the guesses made, their precision, the share of silent cases they get right (coverage),
and how many healthy texts (every batch's `healthy` cases in both forms, holdout e01-e14, ../shared/cases) the
model would flag. Run it with PYTHONPATH pointing at another checkout to measure that checkout's shipped model
(it reads the model through that checkout's cudadoctor.learned). docs/learned.md keeps the tables.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parents[1]
BLIND = HERE / "tests" / "data" / "blind"
HOLDOUT = HERE / "tests" / "data" / "holdout_cases"
SHARED = HERE.parent / "shared" / "cases"
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Only the unsealed batches are ever read (train_classifier.BLIND_READABLE, an explicit allow-list).
sys.path.insert(0, str(HERE))
from benchmarks.train_classifier import BLIND_READABLE  # noqa: E402


def _facts(stem: Path, paste: bool) -> Dict[str, Any]:
    """The facts the scorer's two forms read (train_classifier's reader, so both scripts see the same facts)."""
    sys.path.insert(0, str(HERE))
    from benchmarks.train_classifier import _read_case

    return _read_case(stem, paste)


def _cases(folder: Path, forms: Tuple[bool, ...]) -> List[Tuple[str, str, Dict[str, Any]]]:
    """(origin, label, facts) for each case of ``folder`` in each form."""
    out = []
    if folder.parent == BLIND and folder.name not in BLIND_READABLE:
        raise SystemExit(f"{folder.name} is not an unsealed batch (train_classifier.BLIND_READABLE)")
    for j in sorted(folder.glob("*.json")):
        stem = Path(str(j)[: -len(".json")])
        if not Path(f"{stem}.txt").is_file():
            continue
        label = json.loads(j.read_text(encoding="utf-8"))["label"]
        for paste in forms:
            if paste and not Path(f"{stem}.paste.txt").is_file():
                continue
            out.append((f"{folder.name}/{j.stem}{':paste' if paste else ''}", label, _facts(stem, paste)))
    return out


def score(facts: Dict[str, Any], reg, model) -> Optional[Dict[str, Any]]:
    """None when a rule makes an error or warning finding; else the model's top labels on the text the
    fallback reads (and whether the fallback may name it: reportable, not judged by the rules)."""
    from cudadoctor import learned
    from cudadoctor.checks.learned import judged
    from cudadoctor.errortext import error_texts
    from cudadoctor.facts import Facts
    from cudadoctor.report import diagnose

    r = diagnose(facts, reg)
    if any(f.severity in ("error", "warning") for f in r.findings):
        return None
    banned = {f.code for f in r.findings} | set(judged(r.facts, (r.extra or {}).get("diagnosis")))
    if "facts" in inspect.signature(learned.text_of).parameters:
        text = learned.text_of(error_texts(Facts(r.facts)), r.facts)
    else:
        text = learned.text_of(error_texts(Facts(r.facts)))
    top = model.rank(text, top=2) if text.strip() else []
    if not top:
        return {"top": None, "p": 0.0, "second": None, "may": False}
    g = top[0]
    return {
        "top": g.label,
        "p": g.probability,
        "second": top[1].label if len(top) > 1 else None,
        "may": g.label in model.reportable and g.label not in banned,
    }


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="+")
    ap.add_argument("--model", default=None, help="a model file (default: the shipped one)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    from cudadoctor import learned, registry

    model = learned.load_model(args.model)
    reg = registry.load(plugins=False)
    reg.checks = [c for c in reg.checks if not c.fallback]
    rows = []
    for b in args.batches:
        for origin, label, facts in _cases(BLIND / b, (False, True)):
            s = score(facts, reg, model)
            if s is not None:
                rows.append((origin, label, s))
    healthy: List[Tuple[str, Dict[str, Any]]] = []
    for folder in [BLIND / b for b in BLIND_READABLE] + [HOLDOUT, SHARED]:
        if not folder.is_dir():
            continue
        for origin, label, facts in _cases(folder, (False, True)):
            if label == "healthy":
                s = score(facts, reg, model)
                if s is not None:
                    healthy.append((origin, s))
    print(f"model: {model.meta.get('trained_at')} threshold {model.threshold} data {model.meta.get('data', {}).get('sources')}")
    print(
        f"silent cases in {', '.join(args.batches)} (both forms): {len(rows)}; healthy texts where rules are silent: {len(healthy)}"
    )
    if args.markdown:
        print("\n| case | label | top guess | p | right |\n|---|---|---|---|---|")
    for origin, label, s in rows:
        right = s["top"] == label
        if args.markdown:
            print(f"| {origin} | {label} | {s['top']} | {s['p']:.2f} | {'yes' if right else 'no'} |")
        else:
            print(f"{origin:70s} {label:40s} {str(s['top']):30s} {s['p']:.2f} {'RIGHT' if right else ''}")
    print("\n| threshold | guesses | right | precision | coverage of silent cases | healthy flagged |\n|---|---|---|---|---|---|")
    for t in THRESHOLDS:
        said = [(o, lab, s) for o, lab, s in rows if s["may"] and s["p"] >= t]
        right = sum(s["top"] == lab for _o, lab, s in said)
        hf = [o for o, s in healthy if s["may"] and s["p"] >= t]
        prec = f"{right / len(said):.0%}" if said else "-"
        print(
            f"| {t:.1f} | {len(said)} | {right} | {prec} | {right}/{len(rows)} = {right / max(1, len(rows)):.0%} | {len(hf)}/{len(healthy)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
