"""Posting the answer: one comment on the issue, found by its hidden marker and edited in place; labels.

Stdlib only (urllib). Reads ``GITHUB_TOKEN``, ``GITHUB_API_URL`` (GitHub Enterprise too) and the
repository from the event. REST calls (https://docs.github.com/en/rest/issues/comments and
/issues/labels, checked 2026-11-27):

* ``GET  /repos/{owner}/{repo}/issues/{number}/comments?per_page=100&page=N`` to find our comment;
* ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` to edit it (skipped when the text is the same);
* ``POST /repos/{owner}/{repo}/issues/{number}/comments`` to create it the first time;
* ``POST /repos/{owner}/{repo}/issues/{number}/labels`` to add labels (existing ones are kept);
* ``DELETE /repos/{owner}/{repo}/issues/{number}/labels/{name}`` to remove a label the bot added
  earlier that no longer fits (``needs-info`` once a cause is named).

In dry-run the comment goes to the job summary (``$GITHUB_STEP_SUMMARY``) and nothing is posted.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..render.github_comment import MARKER

#: Pages of 100 comments read to find ours (an issue with more than 3000 comments gets a new one).
MAX_PAGES = 30
TIMEOUT_S = 30


class PostError(RuntimeError):
    """A GitHub API call failed: one line naming the call and the status."""


class GitHub:
    def __init__(self, token: str, api_url: str = "https://api.github.com", repository: str = ""):
        if not token:
            raise PostError("GITHUB_TOKEN is not set: give the action `github-token` (the default is the workflow's token)")
        if "/" not in repository:
            raise PostError(f"repository {repository!r} is not owner/name")
        self.token = token
        self.api = api_url.rstrip("/")
        self.repo = repository
        self.calls: List[Tuple[str, str]] = []  # (method, path): what was done, for the log and the tests

    def call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.api}{path}", data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("X-GitHub-Api-Version", "2022-11-28")
        req.add_header("User-Agent", "cudadoctor-bot")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        self.calls.append((method, path))
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:  # noqa: S310 (the API URL is GitHub's)
                raw = r.read()
        except urllib.error.HTTPError as e:
            detail = e.read()[:300].decode("utf-8", "replace")
            raise PostError(f"{method} {path}: HTTP {e.code} {' '.join(detail.split())}") from None
        except (urllib.error.URLError, OSError) as e:
            raise PostError(f"{method} {path}: {getattr(e, 'reason', e)}") from None
        return json.loads(raw) if raw.strip() else None

    def find_comment(self, number: int) -> Optional[Dict[str, Any]]:
        """Our comment on the issue (the first with the marker), or None."""
        for page in range(1, MAX_PAGES + 1):
            got = self.call("GET", f"/repos/{self.repo}/issues/{number}/comments?per_page=100&page={page}")
            if not isinstance(got, list):
                raise PostError(f"GET comments of #{number}: expected a list")
            for c in got:
                if isinstance(c, dict) and MARKER in str(c.get("body") or ""):
                    return c
            if len(got) < 100:
                return None
        return None


def post(gh: GitHub, number: int, comment: str, labels: List[str], remove: Sequence[str] = ()) -> Dict[str, Any]:
    """One comment (created, or edited in place), then the labels; ``remove``: labels to take off. Returns what was done."""
    done: Dict[str, Any] = {"comment": None, "comment_id": None, "labels": [], "removed": []}
    mine = gh.find_comment(number)
    if mine is None:
        made = gh.call("POST", f"/repos/{gh.repo}/issues/{number}/comments", {"body": comment})
        done["comment"], done["comment_id"] = "created", (made or {}).get("id")
    elif str(mine.get("body") or "") == comment:
        done["comment"], done["comment_id"] = "unchanged", mine.get("id")
    else:
        gh.call("PATCH", f"/repos/{gh.repo}/issues/comments/{mine['id']}", {"body": comment})
        done["comment"], done["comment_id"] = "edited", mine.get("id")
    if labels:
        gh.call("POST", f"/repos/{gh.repo}/issues/{number}/labels", {"labels": labels})
        done["labels"] = list(labels)
    for name in remove:
        if name not in labels:
            gh.call("DELETE", f"/repos/{gh.repo}/issues/{number}/labels/{urllib.parse.quote(name, safe='')}")
            done["removed"].append(name)
    return done


def to_summary(path: str, number: int, comment: str, labels: List[str]) -> None:
    """Dry-run: the comment and labels, appended to the job summary file."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"### cudadoctor would comment on #{number} (dry run)\n\n")
        f.write(comment.replace(MARKER, "").strip() + "\n\n")
        f.write(f"Labels: {', '.join(labels) if labels else 'none'}\n\n")
