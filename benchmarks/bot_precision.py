"""How often the issue bot's comment names a cause, and how often that cause is right.

Every labelled real case we may read is wrapped in the `issues: opened` event GitHub sends and
answered as the action answers it (cudadoctor.bot.answer.decide):

* the shared cases (/work/shared/cases, or $CUDADOCTOR_SHARED_CASES), the holdout cases
  (tests/data/holdout_cases) and blind batch b10 (tests/data/blind/b10). Never the sealed batches.
  A case with `<id>.paste.txt` is the reporter's own title (first line) and body (up to a `---`
  line: what follows is later comments); otherwise the body is the one a bug template asks for:
  the error text in a code block, then the collect_env output in a code block, titled by the
  error's first line;
* the error-text corpus (tests/data/error_corpus/*.jsonl): each real error text alone as the body
  (a reporter who pasted only the error), reported separately: its labels are the code the text
  implies (its README's labelling rule), not always the thread's root cause.

Right: the named code is the case's label. A label `uncatalogued:NAME` counts as NAME once cudadoctor has
a code of that name (the case was labelled before the code existed; its label names the same cause). A
healthy case must never get a cause.

    python benchmarks/bot_precision.py [--confidence high|medium] [--markdown] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASE_DIRS = (
    Path(os.environ.get("CUDADOCTOR_SHARED_CASES", "/work/shared/cases")),
    ROOT / "tests" / "data" / "holdout_cases",
    ROOT / "tests" / "data" / "blind" / "b10",
)
CORPUS = ROOT / "tests" / "data" / "error_corpus"


def issue_of_case(folder: Path, cid: str, case: Dict[str, Any]) -> Tuple[str, str]:
    """(title, body) of a case as its reporter would have opened the issue."""
    paste = folder / f"{cid}.paste.txt"
    if paste.exists():
        lines = paste.read_text(encoding="utf-8").split("\n")
        rest = lines[1:]
        stripped = [x.strip() for x in rest]
        if "---" in stripped:
            rest = rest[: stripped.index("---")]
        return lines[0].strip(), "\n".join(rest).strip() + "\n"
    err = case.get("error") or ""
    ef = folder / f"{cid}.error.txt"
    if ef.exists():
        err = ef.read_text(encoding="utf-8")
    env = (folder / f"{cid}.txt").read_text(encoding="utf-8")
    title = (err.strip().splitlines() or ["Problem with the GPU setup"])[0].strip()[:120]
    body = "## Bug\n\n"
    if err.strip():
        body += f"```\n{err.strip()}\n```\n\n"
    return title, body + f"## Environment\n\n```\n{env.strip()}\n```\n"


def event_payload(number: int, title: str, body: str, source: str, action: str = "opened") -> Dict[str, Any]:
    """The `issues` event payload GitHub sends (the fields the bot reads, with their real names)."""
    repo = "example/project"
    return {
        "action": action,
        "issue": {
            "number": number,
            "title": title,
            "body": body,
            "html_url": f"https://github.com/{repo}/issues/{number}",
            "user": {"login": "reporter", "type": "User"},
            "labels": [],
            "state": "open",
        },
        "repository": {"full_name": repo, "html_url": f"https://github.com/{repo}"},
        "sender": {"login": "reporter", "type": "User"},
        "cudadoctor_case_source": source,  # where the text comes from (GitHub never sends this key; ignored)
    }


def cases(dirs: Tuple[Path, ...] = CASE_DIRS) -> Iterator[Tuple[str, str, str, str, str]]:
    """(id, label, source, title, body) of every labelled case."""
    for folder in dirs:
        if not folder.is_dir():
            print(f"bot_precision: {folder} is not there; its cases are left out", file=sys.stderr)
            continue
        for p in sorted(folder.glob("*.json")):
            cid = p.name[: -len(".json")]
            if not (folder / f"{cid}.txt").exists():
                continue  # not a case (first-sight.json)
            case = json.loads(p.read_text(encoding="utf-8"))
            title, body = issue_of_case(folder, cid, case)
            yield cid, case["label"], case.get("source", ""), title, body


def corpus() -> Iterator[Tuple[str, str, str, str, str]]:
    for f in sorted(CORPUS.glob("*.jsonl")):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                e = json.loads(line)
                text = e["text"].strip()
                title = text.splitlines()[0][:120]
                yield f"{f.stem}:{i}", e["code"], e.get("source", ""), title, f"```\n{text}\n```\n"


def answer(title: str, body: str, source: str, reg: Any, cfg: Any) -> Dict[str, Any]:
    from cudadoctor.bot.answer import decide
    from cudadoctor.bot.event import parse

    issue = parse(json.dumps(event_payload(1, title, body, source)).encode())
    return decide(issue, reg, cfg)


def score(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    named = [r for r in rows if r["answer"] == "cause"]
    right = [r for r in named if r["named"] == r["label"]]
    healthy = [r for r in rows if r["label"] == "healthy"]
    return {
        "cases": len(rows),
        "named": len(named),
        "right": len(right),
        "precision": len(right) / len(named) if named else 1.0,
        "named_share": len(named) / len(rows) if rows else 0.0,
        "asks": sum(r["answer"] == "ask" for r in rows),
        "healthy_answers": sum(r["answer"] == "healthy" for r in rows),
        "healthy_cases": len(healthy),
        "healthy_named": sum(r["answer"] == "cause" for r in healthy),
        "healthy_said_healthy": sum(r["answer"] == "healthy" for r in healthy),
        "healthy_answers_on_broken": [r["id"] for r in rows if r["answer"] == "healthy" and r["label"] != "healthy"],
        "wrong": [f"{r['id']}: named {r['named']}, label {r['label']}" for r in named if r["named"] != r["label"]],
    }


def run(which: Iterator[Tuple[str, str, str, str, str]], confidence: str) -> List[Dict[str, Any]]:
    from cudadoctor import registry
    from cudadoctor.bot.config import BotConfig

    reg = registry.load()
    cfg = BotConfig(confidence=confidence)
    rows = []
    for cid, label, source, title, body in which:
        if label.startswith("uncatalogued:") and reg.code(label.split(":", 1)[1]) is not None:
            label = label.split(":", 1)[1]  # catalogued since the case was labelled
        a = answer(title, body, source, reg, cfg)
        rows.append(
            {
                "id": cid,
                "label": label,
                "source": source,
                "answer": a["answer"],
                "named": (a.get("cause") or {}).get("code"),
                "considered": [c["code"] for c in a.get("considered", [])],
            }
        )
    return rows


def _line(name: str, s: Dict[str, Any]) -> str:
    return (
        f"{name}: {s['cases']} cases; names a cause on {s['named']} ({100 * s['named_share']:.1f} %), "
        f"right {s['right']}/{s['named']} ({100 * s['precision']:.1f} %); asks for more on {s['asks']} "
        f"({100 * s['asks'] / max(s['cases'], 1):.1f} %); looks healthy on {s['healthy_answers']}; "
        f"healthy cases {s['healthy_cases']}: named a cause on {s['healthy_named']}, said healthy on {s['healthy_said_healthy']}"
        + (
            f"; said healthy on {len(s['healthy_answers_on_broken'])} cases labelled with a cause"
            if s["cases"] and s["healthy_cases"]
            else ""
        )
    )


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--confidence", choices=("high", "medium"), default="high")
    ap.add_argument("--markdown", action="store_true", help="also print every case's answer as a table")
    ap.add_argument("--no-corpus", action="store_true", help="leave the error-text corpus out")
    ap.add_argument("--json", type=Path, help="write every answer and both scores here")
    a = ap.parse_args(argv)
    rows = run(cases(), a.confidence)
    s = score(rows)
    out: Dict[str, Any] = {"confidence": a.confidence, "cases": s, "rows": rows}
    print(_line("labelled cases (shared + holdout + b10)", s))
    for w in s["wrong"]:
        print(f"  wrong: {w}")
    for folder in CASE_DIRS:
        ids = {cid for cid, *_rest in cases((folder,))}
        if ids:
            print(
                "  "
                + _line(
                    str(folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder),
                    score([r for r in rows if r["id"] in ids]),
                )
            )
    if not a.no_corpus:
        crow = run(corpus(), a.confidence)
        cs = score(crow)
        out["corpus"], out["corpus_rows"] = cs, crow
        print(_line("error corpus (the error text alone)", cs))
        for w in cs["wrong"]:
            print(f"  wrong: {w}")
    if a.markdown:
        print("\n| id | label | answer |\n|---|---|---|")
        for r in rows:
            got = r["named"] if r["answer"] == "cause" else r["answer"]
            mark = "" if r["answer"] != "cause" or r["named"] == r["label"] else " **wrong**"
            print(f"| {r['id']} | {r['label']} | {got}{mark} |")
    if a.json:
        a.json.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
