"""Cleaning pasted text: what an issue, a mail or a terminal does to it (fences, quotes, tags, ANSI, CRLF, UTF-16)."""

from __future__ import annotations

import html
import re
from typing import List

MAX_LINE_CHARS = 8192

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TAG = re.compile(r"</?(?:details|summary|pre|code|br|p|div|span|b|i|kbd|samp|tt)\b[^>\n]{0,200}>", re.IGNORECASE)
_QUOTE = re.compile(r"^(?:\s{0,3}>)+\s?")


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8-sig", "replace")


def _clean_lines(text: str) -> List[str]:
    if text.startswith("\ufeff"):
        text = text[1:]
    # UTF-16 (PowerShell's `>`) read as UTF-8 leaves a NUL after every ASCII character.
    if text.count("\x00") > len(text) // 4:
        text = text.replace("\x00", "").lstrip("\ufffd")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    text = _CTRL.sub("", text)
    out = []
    for raw in text.split("\n"):
        # No real line is this long; the bound keeps every pattern below linear.
        line = _QUOTE.sub("", raw[:MAX_LINE_CHARS])
        if "<" in line:
            line = _TAG.sub("", line)
        if "&" in line and ";" in line:
            line = html.unescape(line)
        line = line.replace("\u00a0", " ").strip()
        if line.startswith("```") or line.startswith("~~~"):
            rest = line.lstrip("`~").strip()
            # "```text" opens a fence; "```Collecting environment information..." is content.
            line = "" if (not rest or re.fullmatch(r"[\w+.-]{1,20}", rest)) else rest
        line = line.strip("`").strip()
        out.append(line)
    return out


def raw_lines(text: str) -> List[str]:
    """One entry per line of ``text`` (so line numbers stay the user's), cleaned of what pasting adds
    (ANSI colours, control characters, '>' quoting, HTML tags and entities) but keeping indentation
    and fence lines, which tell the parts of a pasted issue apart."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.count("\x00") > len(text) // 4:
        text = text.replace("\x00", "").lstrip("\ufffd")
    text = _CTRL.sub("", _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))
    out = []
    for raw in text.split("\n"):
        line = _QUOTE.sub("", raw[:MAX_LINE_CHARS])
        if "<" in line:
            line = _TAG.sub("", line)
        if "&" in line and ";" in line:
            line = html.unescape(line)
        out.append(line.replace("\u00a0", " ").rstrip())
    return out


def is_fence(line: str) -> bool:
    return line.lstrip().startswith(("```", "~~~"))
