"""Score every blind batch (or the ones named) in one process: the same two forms and the same judge as
benchmarks/score_blind.py, without a subprocess per case (about 40 s for 1,400 threads instead of an hour).

    PYTHONPATH=. python benchmarks/score_all_blind.py OUT.json [b56 b57 ...]
    python benchmarks/score_all_blind.py --diff BEFORE.json AFTER.json   # what changed, case by case

Use it to check a change on every thread before committing; a batch's frozen first-sight figure is still
score_blind.py's, run once by its collector.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def score(out: str, batches: list) -> None:
    sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
    import score_blind as sb

    from cudadoctor import registry
    from cudadoctor.commands._shared import BadInput
    from cudadoctor.commands.check import gather
    from cudadoctor.privacy import shareable
    from cudadoctor.report import diagnose

    reg = registry.load(plugins=False)

    def findings(**kw):
        try:
            facts = gather(
                None, None, False, None, None, kw.get("error_file"), from_collect_env=kw.get("ce"), from_text=kw.get("text")
            )
            rep = shareable(diagnose(facts, reg), False, live=True)
            return [{"severity": f.severity, "code": f.code} for f in rep.findings]
        except (BadInput, SystemExit):
            return None  # refused: a miss, as in score_blind.py

    root = REPO / "tests" / "data" / "blind"
    rows = []
    for b in batches or sorted(d.name for d in root.glob("b*") if d.is_dir()):
        for j in sorted((root / b).glob(f"{b}-*.json")):
            cid, label = j.stem, json.loads(j.read_text(encoding="utf-8"))["label"]
            r = {"id": cid, "label": label}
            err = j.with_name(f"{cid}.error.txt")
            got = findings(ce=str(j.with_name(f"{cid}.txt")), error_file=str(err) if err.exists() else None)
            r["facts_right"], r["facts_top"], r["facts_got"] = sb._judge(label, got)
            paste = j.with_name(f"{cid}.paste.txt")
            if paste.exists():
                r["paste_right"], r["paste_top"], r["paste_got"] = sb._judge(label, findings(text=str(paste)))
            rows.append(r)
    Path(out).write_text(json.dumps(rows, indent=0) + "\n", encoding="utf-8")
    print(
        f"{len(rows)} threads: facts {sum(r['facts_right'] for r in rows)}, paste {sum(bool(r.get('paste_right')) for r in rows)}"
    )


def diff(before: str, after: str) -> None:
    a = {r["id"]: r for r in json.loads(Path(before).read_text())}
    b = {r["id"]: r for r in json.loads(Path(after).read_text())}
    for form in ("facts", "paste"):
        for cid in sorted(set(a) & set(b)):
            was, now = bool(a[cid].get(f"{form}_right")), bool(b[cid].get(f"{form}_right"))
            if was != now:
                print(
                    f"{form} {'GAIN' if now else 'LOSS'} {cid} {a[cid]['label']}: {a[cid].get(f'{form}_got')} -> {b[cid].get(f'{form}_got')}"
                )


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="write every result here (JSON)")
    ap.add_argument("batches", nargs="*", help="batch folders to score (default: all of tests/data/blind)")
    ap.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"), help="list the cases whose result changed")
    a = ap.parse_args()
    if a.diff:
        diff(*a.diff)
    elif a.out:
        os.environ.setdefault("NO_COLOR", "1")
        score(a.out, a.batches)
    else:
        ap.error("give OUT.json to score, or --diff BEFORE AFTER")
