"""The event payload GitHub Actions writes to ``$GITHUB_EVENT_PATH``, read into the issue to answer.

Payload shapes (https://docs.github.com/en/webhooks/webhook-events-and-payloads#issues and
#issue_comment, checked 2026-11-27): ``issues`` has ``action`` (opened, edited, ...), ``issue``
(``number``, ``title``, ``body``, ``user``, ``html_url``, ``labels``) and ``repository``;
``issue_comment`` has the same plus ``comment`` (``body``, ``user``). A pull request's comments
come as ``issue_comment`` too, with ``issue.pull_request`` set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple

from ..facts import FactsError, as_object, decode_json

#: Issue bodies are at most 65536 characters on GitHub; anything much larger is not an event.
MAX_EVENT_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    repository: str  # owner/name
    url: str
    event: str  # "issues" or "issue_comment"
    action: str
    sender_is_bot: bool = False
    comment: Optional[str] = None
    labels: Tuple[str, ...] = ()  # the labels the issue has now

    @property
    def text(self) -> str:
        """What is diagnosed: the title, then the body."""
        return f"{self.title}\n\n{self.body}".strip()


def parse(data: bytes, name: str = "event") -> Issue:
    """The issue of an ``issues`` or ``issue_comment`` event payload; FactsError (one line) otherwise."""
    if len(data) > MAX_EVENT_BYTES:
        raise FactsError(f"{name}: larger than {MAX_EVENT_BYTES // (1024 * 1024)} MiB: not a GitHub event payload")
    try:
        doc = decode_json(data)
    except FactsError as e:
        raise FactsError(f"{name}: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("issue"), dict):
        raise FactsError(f"{name}: not an `issues` or `issue_comment` event payload (no `issue` object)")
    issue = doc["issue"]
    number = issue.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise FactsError(f"{name}: the issue has no number")
    title = issue.get("title")
    body = issue.get("body")
    if not isinstance(title, str) or not isinstance(body, (str, type(None))):
        raise FactsError(f"{name}: the issue's title or body is not text")
    comment = as_object(doc.get("comment"))
    is_comment = bool(comment)
    sender = as_object(comment.get("user")) if is_comment else as_object(doc.get("sender"))
    if issue.get("pull_request"):
        event = "pull_request_comment" if is_comment else "pull_request"
    else:
        event = "issue_comment" if is_comment else "issues"
    return Issue(
        number=number,
        title=title,
        body=body or "",
        repository=str(as_object(doc.get("repository")).get("full_name") or ""),
        url=str(issue.get("html_url") or ""),
        event=event,
        action=str(doc.get("action") or ""),
        sender_is_bot=sender.get("type") == "Bot",
        comment=str(comment.get("body") or "") if is_comment else None,
        labels=tuple(str(x.get("name")) for x in issue.get("labels") or [] if isinstance(x, dict) and x.get("name")),
    )


def asks_for_us(comment: str, command: str) -> bool:
    """Whether a comment is the command (``/cudadoctor``) on a line of its own."""
    return bool(re.search(rf"(?m)^\s*{re.escape(command)}\s*$", comment))


def why_not(issue: Issue, answer_edits: bool, command: str) -> Optional[str]:
    """None when this event should be answered, else the one-line reason it is not."""
    if issue.event.startswith("pull_request"):
        return "a pull request, not an issue"
    if issue.sender_is_bot:
        return "sent by a bot (never answer bots, including this one)"
    if issue.event == "issues":
        if issue.action == "opened":
            return None
        if issue.action == "edited":
            return None if answer_edits else "an edit, and answer-edits is off"
        return f"issue action {issue.action!r} (answered: opened, edited)"
    if issue.action != "created":
        return f"comment action {issue.action!r} (answered: created)"
    if not asks_for_us(issue.comment or "", command):
        return f"a comment without {command} on a line of its own"
    return None
