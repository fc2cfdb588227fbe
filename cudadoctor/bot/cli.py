"""`cudadoctor triage --github-event FILE`: the issue bot's answer, offline (what the action posts)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ..facts import FactsError, read_input
from .answer import decide, skipped
from .config import BotConfig, check_codes, from_mapping, parse_yaml
from .event import Issue, parse, why_not


def load_config(path: Optional[str], inputs: Optional[Dict[str, Optional[str]]] = None) -> BotConfig:
    """The repository's config file (when given and present), then the action's inputs."""
    from .config import with_inputs

    cfg = BotConfig()
    if path:
        cfg = from_mapping(
            parse_yaml(read_input(path, "the bot's configuration", 256 * 1024).decode("utf-8", "replace"), path), path
        )
    return with_inputs(cfg, inputs or {})


def answer_for(event: bytes, cfg: BotConfig, name: str = "event") -> Tuple[Issue, Dict[str, Any]]:
    """The issue of an event payload and the answer to it (skipped, with why, when it is not answered)."""
    from .. import registry

    issue = parse(event, name)
    reg = registry.load()
    check_codes(cfg, reg.code)
    why = why_not(issue, cfg.answer_edits, cfg.command)
    return issue, (skipped(issue, why) if why else decide(issue, reg, cfg))


def answer_event(event_path: Optional[str], config_path: Optional[str], fmt: str, other_inputs: bool) -> str:
    """The comment (github-comment) or the answer (json) for the event in ``event_path``; BadInput otherwise."""
    from ..commands._shared import BadInput
    from ..document import dumps
    from ..render.github_comment import render

    if not event_path:
        raise BadInput("--format github-comment and --bot-config go with --github-event FILE")
    if other_inputs:
        raise BadInput(
            "--github-event reads the issue from the event: no TEXT, -f, --facts, --from-collect-env, --live or --show-pii"
        )
    if fmt not in ("github-comment", "json", "text"):  # text (the default) is the comment
        raise BadInput("--github-event answers as --format github-comment (the comment) or json (the answer)")
    try:
        cfg = load_config(config_path)
        _issue, ans = answer_for(read_input(event_path, "a GitHub event payload", 16 * 1024 * 1024), cfg, event_path)
    except FactsError as e:
        raise BadInput(str(e)) from None
    comment = render(ans, cfg.footer)
    if fmt == "json":
        return dumps({**ans, "comment": comment or None})
    return comment
