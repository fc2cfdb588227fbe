"""Error texts that real threads confirmed with more than one cause (kb/errors/shared_error_texts.json).

One error line can have several causes: "no kernel image is available for execution on the
device" is torch's build lacking the GPU's architecture in some threads and a companion package's
build lacking it in others. The error-text corpus (tests/data/error_corpus/, real texts with the
cause each thread confirmed) shows which signatures are shared that way: every signature that
matches a corpus text confirmed as another code. The bot names a cause from such a text only when
facts in the issue establish it.

The table is data made from the corpus, with the threads as sources; regenerate it after the
corpus or the signatures change (a test fails while it is stale):

    python -m cudadoctor.bot.shared tests/data/error_corpus cudadoctor/kb/errors/shared_error_texts.json
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence

TABLE = Path(__file__).resolve().parent.parent / "kb" / "errors" / "shared_error_texts.json"


def corpus_entries(folder: Path) -> List[Dict[str, Any]]:
    out = []
    for f in sorted(folder.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def build(entries: Iterable[Dict[str, Any]], registry: Any) -> List[Dict[str, Any]]:
    """Every (code, signature) whose matches in the corpus include texts confirmed as other codes."""
    from ..errortext import find_matches, for_codes, normalize

    codes = [c for c, _src in registry.codes.values()]
    sigs = for_codes(codes)
    seen: Dict[tuple, Dict[str, List[str]]] = {}
    for e in entries:
        found, _problems = find_matches(codes, normalize(e["text"]), "user_error", sigs)
        for code, matches in found.items():
            for m in matches:
                urls = seen.setdefault((code, m.signature), {}).setdefault(e["code"], [])
                if e.get("source") and e["source"] not in urls:
                    urls.append(e["source"])
    rows = []
    for (code, sig), confirmed in sorted(seen.items()):
        if set(confirmed) - {code}:
            rows.append({"code": code, "signature": sig, "confirmed": {k: sorted(v) for k, v in sorted(confirmed.items())}})
    return rows


def document(rows: List[Dict[str, Any]], checked: str) -> Dict[str, Any]:
    sources = sorted({u for r in rows for urls in r["confirmed"].values() for u in urls})
    return {
        "about": "Error texts that real threads confirmed as different causes: the issue bot names a cause for one only "
        "when the issue also shows the facts its check uses (not a signature file: it holds no signatures).",
        "checked": checked,
        "notes": "Signatures (regex, as in error_signatures.json and the codes' own) whose matching real error texts "
        "were confirmed, in their threads, as different causes. Made by `python -m cudadoctor.bot.shared` from "
        "tests/data/error_corpus; `confirmed` maps each confirmed code to its threads.",
        "sources": [{"title": "a thread confirming the cause of a shared error text", "url": u} for u in sources],
        "shared": rows,
    }


@functools.lru_cache(maxsize=1)
def table() -> Dict[tuple, Dict[str, List[str]]]:
    doc = json.loads(TABLE.read_text(encoding="utf-8"))
    return {(r["code"], r["signature"]): r["confirmed"] for r in doc["shared"]}


def shared_causes(code: str, lines: Sequence[str], registry: Any) -> Optional[Dict[str, List[str]]]:
    """The causes real threads confirmed for the texts by which these lines point to ``code``, when those
    include another code; None when a signature of ``code`` that matches is specific to it (as far as the
    corpus shows), or none matches."""
    from ..errortext import find_matches, for_codes, normalize

    c = registry.code(code)
    if c is None:
        return None
    t = table()
    found, _problems = find_matches([c], normalize("\n".join(x for x in lines if x)), "user_error", for_codes([c]))
    out: Dict[str, List[str]] = {}
    for m in found.get(code, []):
        confirmed = t.get((code, m.signature))
        if not confirmed:
            return None  # this text points to the code alone
        for k, v in confirmed.items():
            out.setdefault(k, []).extend(u for u in v if u not in out.get(k, []))
    return out or None


def main(argv: Optional[List[str]] = None) -> int:
    from .. import registry

    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print("usage: python -m cudadoctor.bot.shared CORPUS_DIR OUT.json", file=sys.stderr)
        return 2
    rows = build(corpus_entries(Path(args[0])), registry.load())
    today = _dt.date.today().isoformat()
    Path(args[1]).write_text(json.dumps(document(rows, today), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} shared signatures written to {args[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
