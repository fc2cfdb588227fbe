"""The issue bot's answer as a GitHub comment (Markdown): only reads the answer (cudadoctor/bot/answer.py).

The comment starts with a hidden marker (:data:`MARKER`), by which later runs find it and edit it
in place instead of posting a second one.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..document import clean as _clean
from .markdown import md_code, md_escape

MARKER = "<!-- cudadoctor-bot: one comment, edited in place -->"

_READ = {
    "collect_env": "collect_env",
    "nvidia-smi": "nvidia-smi",
    "nvidia-smi-q": "nvidia-smi -q",
    "devicequery": "deviceQuery",
    "pip-list": "pip list",
    "pip-freeze": "pip freeze",
    "conda-list": "conda list",
    "nvcc": "nvcc --version",
    "traceback": "a traceback",
    "error": "error lines",
}


def _one_line(s: Any, limit: int = 300) -> str:
    text = " ".join(_clean(str(s)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fence(text: str) -> List[str]:
    body = "\n".join(_clean(line) for line in text.split("\n")).rstrip()
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return [ticks + "text", body, ticks]


def _read_line(read: List[str]) -> str:
    what = [_READ.get(k, k) for k in read if k in _READ]
    return (
        ("Read from this issue: " + ", ".join(what) + ".")
        if what
        else "Nothing in this issue could be read as an error or an environment report."
    )


def _link(code: str, links: List[str], docs_url: Optional[str]) -> str:
    parts = []
    if docs_url:
        parts.append(f"[what `{code}` means and how to confirm it]({docs_url.replace('{code}', code)})")
    else:
        parts.append(f"`cudadoctor explain {code}` says what it means and how to confirm it")
    if links:
        parts.append(f"reference: {links[0]}")
    return "; ".join(parts)


def render(answer: Dict[str, Any], footer: str = "", docs_url: Optional[str] = None) -> str:
    """The comment's Markdown; empty for an event that is not answered."""
    kind = answer.get("answer")
    if kind is None:
        return ""
    out: List[str] = [MARKER]
    if kind == "cause":
        c = answer["cause"]
        # Titles and fix texts carry values read from the issue (GPU names, versions, paths): escaped, so that an
        # issue cannot make the bot's comment mention people, link, or render HTML.
        out += [f"**Likely cause: {md_escape(_one_line(c['title']))}** ({md_code(c['code'])})", ""]
        out.append("**Evidence** (from this issue):")
        for e in c["evidence"]:
            label = "error" if e["what"] == "error" else md_code(e["what"])
            out.append(f"- {label}: {md_code(_one_line(e['quote'], 200))}")
        out.append("")
        fix = c["fix"]
        out.append("**Fix**" + (f": {md_escape(_one_line(fix['why'], 500))}" if fix.get("why") else ""))
        cmds = [x for x in fix.get("commands") or [] if x.strip()]
        if cmds:
            out += [""] + _fence("\n".join(cmds))
        out += ["", "More: " + _link(c["code"], c.get("links") or [], docs_url) + "."]
        out += ["", f"<sub>{_read_line(answer.get('read') or [])} Named from {c['established_by']}.</sub>"]
    elif kind == "healthy":
        out += [
            "**The GPU setup looks fine.** The environment in this issue shows PyTorch able to use the GPU, and none of "
            "cudadoctor's checks finds a setup problem in it (driver, CUDA build, GPU architecture, libraries, packages). "
            "The cause is probably not the GPU setup.",
            "",
        ]
        obs = answer.get("observed") or []
        if obs:
            out += ["**Seen in this issue:**"] + [f"- {o['what']}: {md_code(_one_line(o['quote'], 200))}" for o in obs] + [""]
        out.append(f"<sub>{_read_line(answer.get('read') or [])}</sub>")
    else:
        out += [
            "**Not enough to name a cause yet**: " + _one_line(answer.get("missing") or "", 600) + ".",
            "",
            "To decide it, please add to this issue (edit it, or reply):",
            "",
        ]
        asks = answer.get("asks") or []
        if asks:
            out += [f"- [ ] {a['ask']}" for a in asks]
        else:
            out[-2] = (
                "Everything cudadoctor would ask for is already here, and it still does not establish one cause: a maintainer will look."
            )
            out.pop()
        out += ["", f"<sub>{_read_line(answer.get('read') or [])}</sub>"]
    if footer:
        out += ["", footer]
    return "\n".join(out) + "\n"
