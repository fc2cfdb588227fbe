"""Score a blind batch of real cases (tests/data/blind/bNN/) in the two forms a support engineer uses.

Each case is `<id>.json` (label, source URL, facts, resolution), `<id>.txt` (collect_env text),
`<id>.error.txt` (the user's error line(s), optional) and `<id>.paste.txt` (the reporter's verbatim paste).

    python benchmarks/score_blind.py tests/data/blind/b10 [--markdown] [--json OUT]

Form "facts": `check --from-collect-env X.txt [--error-file X.error.txt] --format json`.
Form "paste": `check --from-text X.paste.txt --format json` (a refusal, exit 2, is a miss).
Right: the label is the code of an error or warning finding; a healthy case is right with no error finding.
"Top": the label is the first error finding's code (or, with no error, the first warning's).
A label `uncatalogued:NAME` (a confirmed cause without a code when the batch was frozen) is matched by a
finding with code NAME once the catalogue has a code NAME, or the code tests/data/blind/label_aliases.json names
for NAME (the cause got a code under another name); such cases are listed in a note, since the batch's frozen
first-sight figure did not count them.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def _run(args: list) -> tuple:
    env = dict(os.environ, NO_COLOR="1")
    r = subprocess.run([sys.executable, "-m", "cudadoctor", *args], capture_output=True, text=True, timeout=120, env=env)
    if r.returncode not in (0, 1):
        return None, (r.stderr or r.stdout).strip().splitlines()[-1:] or ["exit %d" % r.returncode]
    try:
        return json.loads(r.stdout)["findings"], None
    except (ValueError, KeyError) as e:
        return None, [f"unreadable output: {e}"]


REPO = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def _codes() -> frozenset:
    """Every code the catalogue has now (built-in checks, no plugins)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from cudadoctor import registry

    return frozenset(registry.load(plugins=False).codes)


@functools.lru_cache(maxsize=1)
def _aliases() -> dict:
    """tests/data/blind/label_aliases.json: uncatalogued NAME -> the code its cause got under another name."""
    doc = json.loads((REPO / "tests" / "data" / "blind" / "label_aliases.json").read_text(encoding="utf-8"))
    return {name: a["code"] for name, a in doc["aliases"].items()}


def effective_label(label: str, codes=None) -> str:
    """The label a finding must carry: `uncatalogued:NAME` is NAME once the catalogue has a code NAME
    (the cause got a code after the batch was frozen), or the code label_aliases.json names for NAME when
    the catalogue has it; any other label is itself."""
    if label.startswith("uncatalogued:"):
        name = label.partition(":")[2].strip()
        have = _codes() if codes is None else codes
        if name in have:
            return name
        alias = _aliases().get(name)
        if alias in have:
            return alias
    return label


def _judge(label: str, findings) -> tuple:
    label = effective_label(label)
    if findings is None:
        return False, False, []
    got = [(f["severity"], f["code"]) for f in findings]
    errors = [c for s, c in got if s == "error"]
    warns = [c for s, c in got if s == "warning"]
    if label == "healthy":
        return not errors, not errors and not warns, errors + warns
    right = label in errors + warns
    top = (errors or warns or [None])[0] == label
    return right, top, errors + warns


def score_case(folder: Path, cid: str) -> dict:
    case = json.loads((folder / f"{cid}.json").read_text(encoding="utf-8"))
    label = case["label"]
    out = {"id": cid, "label": label, "source": case.get("source")}
    if effective_label(label) != label:
        out["catalogued_since"] = effective_label(label)
    args = ["check", "--from-collect-env", str(folder / f"{cid}.txt"), "--format", "json"]
    if (folder / f"{cid}.error.txt").exists():
        args += ["--error-file", str(folder / f"{cid}.error.txt")]
    findings, err = _run(args)
    out["facts_right"], out["facts_top"], out["facts_got"] = _judge(label, findings)
    out["facts_refused"] = err
    if (folder / f"{cid}.paste.txt").exists():
        findings, err = _run(["check", "--from-text", str(folder / f"{cid}.paste.txt"), "--format", "json"])
        out["paste_right"], out["paste_top"], out["paste_got"] = _judge(label, findings)
        out["paste_refused"] = err
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--markdown", action="store_true", help="print a per-case table")
    ap.add_argument("--json", type=Path, help="write every result here")
    a = ap.parse_args()
    ids = sorted(
        p.name[: -len(".json")] for p in a.folder.glob("*.json") if (p.parent / (p.name[: -len(".json")] + ".txt")).exists()
    )
    if not ids:
        print(f"score_blind: no cases in {a.folder}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda cid: score_case(a.folder, cid), ids))
    n = len(rows)
    fr = sum(r["facts_right"] for r in rows)
    ft = sum(r["facts_top"] for r in rows)
    pasted = [r for r in rows if "paste_right" in r]
    pr = sum(r["paste_right"] for r in pasted)
    pt = sum(r["paste_top"] for r in pasted)
    refused = sum(bool(r.get("paste_refused")) for r in pasted)
    if a.markdown:
        print("| id | label | facts + error | paste |")
        print("|---|---|---|---|")
        for r in rows:
            f = "right" if r["facts_right"] else "**wrong**: " + (", ".join(r["facts_got"]) or "no finding")
            p = "—"
            if "paste_right" in r:
                if r.get("paste_refused"):
                    p = "**refused**: " + " ".join(r["paste_refused"])[:120]
                else:
                    p = "right" if r["paste_right"] else "**wrong**: " + (", ".join(r["paste_got"]) or "no finding")
            print(f"| {r['id']} | {r['label']} | {f} | {p} |")
        print()
    since = [r for r in rows if r.get("catalogued_since")]
    if since:
        print(f"note: {len(since)} label(s) `uncatalogued:NAME` now have a code NAME and are scored against it:")
        for r in since:
            got = ", ".join(f for f, k in (("facts", "facts_right"), ("paste", "paste_right")) if r.get(k)) or "neither form"
            print(f"  {r['id']}: {r['label']} -> {r['catalogued_since']} (right: {got})")
    print(f"facts + error line: {fr}/{n} right ({100 * fr / n:.0f} %), top cause {ft}/{n}")
    if pasted:
        m = len(pasted)
        print(f"verbatim paste:     {pr}/{m} right ({100 * pr / m:.0f} %), top cause {pt}/{m}, refused {refused}")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
