"""Markdown escaping for untrusted text: inline text, code spans, fenced blocks.

Shared by every Markdown renderer (markdown.py, devices.py, smoke.py, ...); kept apart from
markdown.py so that render/devices.py can escape without importing the report renderer that
imports it (no import circle).
"""

from __future__ import annotations

import re

from ..document import clean

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+!|~$])")
#: U+2060 WORD JOINER: invisible, and breaks GitHub's @mention, #123 and email autolinking,
#: which run on the rendered text (where HTML entities are already decoded).
_WJ = "\u2060"


def md_escape(s: object) -> str:
    """Escape text for inline Markdown (also safe in a table cell): no markup, no HTML, no links.

    Every Markdown punctuation character is backslash-escaped (``&`` becomes ``&amp;``); URL
    schemes and ``www.`` are broken with an entity so GFM does not autolink them; ``@`` and ``#``
    get an invisible word joiner so ticket systems do not turn them into mentions, email links or
    issue references. Control and format characters (newlines, bidi overrides) become spaces.
    """
    text = clean(s).strip()
    text = text.replace("&", "&amp;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    # Safe at the start of a line too: no list item, setext underline or ordered list.
    text = re.sub(r"^([-=])(?=[\s=-]|$)", r"\\\1", text)
    text = re.sub(r"^(\d{1,9})([.)])(?=\s|$)", r"\1\\\2", text)
    # Autolinks: GitHub turns scheme:// URLs and www. into links; break them with an entity.
    text = text.replace("://", "&#58;//")
    text = re.sub(r"(?i)(mailto|xmpp):", r"\1&#58;", text)
    text = re.sub(r"(?i)www\.", "www&#46;", text)
    text = re.sub(r"(@|\\#)(?=[A-Za-z0-9])", "\\1" + _WJ, text)
    # Emoji shortcodes (:tada:) render as images on GitHub.
    text = re.sub(r":(?=[A-Za-z0-9_+-]+:)", ":" + _WJ, text)
    return text


def md_code(s: object, limit: int = 300) -> str:
    """An inline code span for an untrusted value: one line, and a delimiter it cannot close.

    Code spans show text literally (no links, mentions or HTML). Not for table cells, where a
    ``|`` would still split the cell: use :func:`md_escape` there.
    """
    text = clean(s)[:limit]
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = (
        " "
        if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ") and text.strip())
        else ""
    )
    return f"{ticks}{pad}{text}{pad}{ticks}" if text else "(empty)"


def fence(body: str, lang: str = "") -> str:
    """A fenced code block that the body cannot close early."""
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{body.rstrip()}\n{ticks}"


def paste_next(heading: str, items: list) -> list:
    """What to paste next as a Markdown list under ``heading`` (the verdict's and triage's ``next`` items:
    ``run`` a command, or ``paste`` a part of a log, and ``why``); nothing without items."""
    if not items:
        return []
    out = [heading, ""]
    for n in items:
        what = md_code(n["run"]) if n.get("run") else md_escape(n.get("paste", ""))
        out.append(f"- {what}: {md_escape(n.get('why', ''))}")
    return out + [""]
