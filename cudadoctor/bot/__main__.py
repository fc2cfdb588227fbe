"""`python -m cudadoctor.bot`: what the GitHub Action runs (action.yml) — answer the event's issue and post it.

    python -m cudadoctor.bot [--event FILE] [--config FILE] [--confidence high|medium] [--dry-run true|false]
                             [--answer-edits true|false] [--footer TEXT] [--command /cudadoctor] [--docs-url URL]

Defaults come from the Actions environment: ``$GITHUB_EVENT_PATH``, ``.github/cudadoctor.yml`` when it
exists, ``$GITHUB_TOKEN``, ``$GITHUB_API_URL``, ``$GITHUB_STEP_SUMMARY``; the answer kind goes to
``$GITHUB_OUTPUT`` (``answer``, ``code``, ``comment-id``). Exit codes: 0 answered (or nothing to answer),
2 bad input or configuration, 3 the GitHub API refused a call. Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, List, Optional

from ..facts import FactsError, read_input
from ..render.github_comment import render
from .cli import answer_for, load_config
from .post import GitHub, PostError, post, to_summary

DEFAULT_CONFIG = ".github/cudadoctor.yml"


def _outputs(values: Dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            for k, v in values.items():
                f.write(f"{k}={' '.join(str(v).split())}\n")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cudadoctor.bot", description=__doc__.splitlines()[0])
    ap.add_argument("--event", default=os.environ.get("GITHUB_EVENT_PATH", ""))
    ap.add_argument("--config", default=None, help=f"default: {DEFAULT_CONFIG} when it exists")
    for name in ("confidence", "dry-run", "answer-edits", "footer", "command"):
        ap.add_argument(f"--{name}", default=None)
    ap.add_argument("--docs-url", default="", help="link for a code's explanation, with {code} in it")
    a = ap.parse_args(argv)
    try:
        if not a.event:
            raise FactsError("no event: give --event FILE (in Actions, $GITHUB_EVENT_PATH)")
        config = a.config if a.config else (DEFAULT_CONFIG if os.path.isfile(DEFAULT_CONFIG) else None)
        inputs = {
            "confidence": a.confidence,
            "dry-run": a.dry_run,
            "answer-edits": a.answer_edits,
            "footer": a.footer,
            "command": a.command,
        }
        cfg = load_config(config, inputs)
        issue, ans = answer_for(read_input(a.event, "a GitHub event payload", 16 * 1024 * 1024), cfg, a.event)
    except FactsError as e:
        print(f"cudadoctor-bot: error: {e}", file=sys.stderr)
        return 2
    if ans["skipped"]:
        print(f"cudadoctor-bot: #{issue.number} not answered: {ans['skipped']}", file=sys.stderr)
        _outputs({"answer": "skipped", "code": "", "comment-id": ""})
        return 0
    comment = render(ans, cfg.footer, a.docs_url or None)
    code = (ans.get("cause") or {}).get("code") or ""
    if cfg.dry_run:
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            to_summary(summary, issue.number, comment, ans["labels"])
        else:
            sys.stdout.write(comment)
        print(f"cudadoctor-bot: #{issue.number}: {ans['answer']} {code} (dry run: nothing posted)".rstrip(), file=sys.stderr)
        _outputs({"answer": ans["answer"], "code": code, "comment-id": ""})
        return 0
    try:
        gh = GitHub(
            os.environ.get("GITHUB_TOKEN", ""), os.environ.get("GITHUB_API_URL") or "https://api.github.com", issue.repository
        )
        stale = [x for x in cfg.managed_labels() if x in issue.labels and x not in ans["labels"]]
        done = post(gh, issue.number, comment, ans["labels"], stale)
    except PostError as e:
        print(f"cudadoctor-bot: error: {e}", file=sys.stderr)
        return 3
    print(
        f"cudadoctor-bot: #{issue.number}: {ans['answer']} {code}; comment {done['comment']}; labels {done['labels'] or 'none'}; removed {done['removed'] or 'none'}",
        file=sys.stderr,
    )
    _outputs({"answer": ans["answer"], "code": code, "comment-id": str(done["comment_id"] or "")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
