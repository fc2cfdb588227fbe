"""Pasted error text as plain lines, and the part each line plays in a traceback.

Normalising: ANSI colour codes (and their remnants), Markdown fences and quotes, HTML tags and
entities, full-width punctuation, JSON-escaped notebook output, box-drawing tracebacks.
Roles: final | exception | warning | context | frame (see :func:`line_roles`).
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from typing import List, Sequence
from ..document import clean

#: The tail of the text that is read (tracebacks end with what matters).
MAX_TEXT = 256 * 1024

# --- normalising pasted text -----------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Colour codes whose ESC was lost in a copy-paste ("[31mRuntimeError[0m") or written as ^[.
_ANSI_REMNANT = re.compile(r"(?:\^\[|\\x1b|\\033|\\u001b|\\e)?\[(?:\d{1,3}(?:;\d{1,3})*)?m")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})[\w+-]*\s*$")
_HTML_TAG = re.compile(r"</?(?:details|summary|code|pre|br|p|div|span|b|i|em|strong|kbd|samp|sub|sup)\b[^>]*>", re.I)
_LOG_PREFIX = re.compile(r"^\s*(?:\[\s*\d+\.\d+\]\s*)?(?:NVRM:\s*)?(?=\S)")
_BOX = re.compile(r"[│┃┆┊║]")  # rich / box-drawing tracebacks


def _unescape_json_blob(text: str) -> str:
    """Notebook outputs pasted as JSON ("stack": "...\\n...") carry escaped newlines and quotes."""
    if text.count("\\n") >= 3 and text.count("\n") < text.count("\\n"):
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
        text = re.sub(r"\\\\", r"\\", text)
    return text


@functools.lru_cache(maxsize=8)
def normalize(text: str) -> str:
    """Pasted error text as plain lines: what the signatures are matched against."""
    t = text[-MAX_TEXT:]
    t = t.replace("\r\n", "\n").replace("\r", "\n")
    t = _ANSI.sub("", t)
    t = _ANSI_REMNANT.sub("", t)
    t = _unescape_json_blob(t)
    t = unicodedata.normalize("NFKC", t)
    t = _HTML_TAG.sub("", t)
    if "&" in t and re.search(r"&(?:[a-z]{2,6}|#\d{2,5}|#x[0-9a-f]{2,4});", t, re.I):
        t = html.unescape(t)
    lines = []
    for line in t.split("\n"):
        if not line.strip():
            lines.append("")
            continue
        line = re.sub(r"^\s*(?:>\s?)+", "", line)  # Markdown / e-mail quotes
        if "NVRM" in line[:40] or line.lstrip()[:1] == "[":
            line = _LOG_PREFIX.sub("", line)  # dmesg timestamps and NVRM:, so wrapped kernel messages read as one
        if _FENCE.match(line):
            continue
        line = _BOX.sub(" ", line)
        line = line.replace("\\_", "_").replace("\\*", "*").replace("`", "")
        line = clean(line, keep_tabs=True)
        lines.append(line.rstrip())
    return "\n".join(lines).strip("\n")


# --- where in the traceback -----------------------------------------------------------------

_EXC_LINE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Warning)|AssertionError|KeyboardInterrupt)"
    r"(?:\s*\[[^\]]*\])?\s*:"  # Python: "RuntimeError: ...", "torch.cuda.OutOfMemoryError: ...", "OSError [WinError]:"
    r"|^\s*(?:E\s+)?(?:ERROR|Error|error|FATAL|Fatal|fatal|CUDA error|THCudaCheck FAIL|terminate called|"
    r"Segmentation fault|Illegal instruction|Aborted|ImportError|ModuleNotFoundError)\b"
)
# An exception named mid-line: a log prefix or an issue title before it ("[Issue]: OSError: [WinError 126] ...").
_EXC_INLINE = re.compile(r"(?:^|[\s:\]])(?:[A-Za-z_][\w.]{0,80}\.)?[A-Z]\w{0,60}(?:Error|Exception)(?:\s*\[[^\]]{0,40}\])?:\s")
_WARNING_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*Warning\s*:|^\s*(?:WARNING|Warning|warning)\b")
_FRAME_LINE = re.compile(r'^\s*(?:File\s+["\']?|File\s+~|at\s+|#\d+\s|\d+\s+0x|[-=]+>\s*\d+|\d+\s{2,}|Cell In\[)')
_TRACEBACK_HEAD = re.compile(
    r"^\s*(?:\w+\s+)?Traceback \(most recent call last\)|^\s*During handling of the above exception|"
    r"^\s*The above exception was the direct cause"
)

#: Weights of where a match is.
ROLE_WEIGHT = {"final": 1.0, "exception": 0.75, "warning": 0.65, "context": 0.55, "frame": 0.4}


def line_roles(lines: Sequence[str]) -> List[str]:
    """For each line: final | exception | warning | frame | context.

    The final exception is the last error line (not a warning) and the message lines that
    follow it up to the next frame or traceback header; when there is no error line, the last
    warning line plays that part; when there is neither, the text is the message itself and
    every plain line is final.
    """
    roles: List[str] = []
    for line in lines:
        if _TRACEBACK_HEAD.match(line) or _FRAME_LINE.match(line):
            roles.append("frame")
        elif roles and roles[-1] == "frame" and re.match(r"\s+\S", line) and re.match(r"\s*File\b", lines[len(roles) - 1]):
            roles.append("frame")  # the source line printed under a frame: `    raise AssertionError(...)`
        elif _WARNING_LINE.match(line):
            roles.append("warning")
        elif _EXC_LINE.match(line) or _EXC_INLINE.search(line[:400]):
            roles.append("exception")
        else:
            roles.append("context")
    last = max((i for i, r in enumerate(roles) if r == "exception"), default=None)
    if last is None:
        last = max((i for i, r in enumerate(roles) if r == "warning"), default=None)
    if last is None:
        # No recognisable exception: the text is the message itself ("Failed to initialize NVML: ...").
        return ["final" if r == "context" else r for r in roles]
    roles[last] = "final"
    # The message continues on the following plain lines (up to a blank line, a frame or
    # another exception): "AssertionError:\nThe NVIDIA driver on your system is too old...".
    for j in range(last + 1, min(len(roles), last + 16)):
        if not lines[j].strip() or roles[j] != "context":
            break
        roles[j] = "final"
    return roles
