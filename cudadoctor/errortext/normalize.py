"""THE cleaner of pasted text, and the part each line plays in a traceback.

Every reader of pasted or recorded text goes through here (the error-text engine, the collect_env
and issue readers through readers/_text.py): one place knows what an issue, a mail, a terminal, a
notebook or a log does to text.

What is undone, in this order:

* the document: a UTF-8 BOM, UTF-16 read as UTF-8 (a NUL after every character), Windows CRLF and
  old-Mac CR, rsyslog's escaped newlines (``#012``), a Jupyter notebook (.ipynb) or one of its outputs as JSON (the outputs' text and
  tracebacks are the text), a JSON-escaped fragment of one (``"...\n..."``, ``"\u001b[0;31m..."``);
* every line: ANSI colour codes (and their remnants when the ESC was lost), control characters,
  zero-width characters, ``>`` quoting (Markdown, e-mail), HTML tags GitHub keeps (``<details>``,
  ``<summary>``, ``<pre>``, ``<br>``...) and HTML escapes (``&lt; &gt; &amp; &#39;``), journalctl and
  syslog prefixes (``Mar 01 12:00:00 host kernel: ``), dmesg timestamps (``[ 34.193759] ``,
  ``[Tue Mar  1 12:00:00 2022] ``), full-width punctuation (NFKC: ``：`` → ``:``) and curly quotes;
* for matching (:func:`normalize`): Markdown code fences and inline backticks, box-drawing
  tracebacks, and kernel messages the log wraps over lines that each start again with ``NVRM:``
  (joined back into one line).

:func:`clean_lines` keeps one entry per line (fences included) for the readers, which need the
user's line structure; :func:`normalize` is what signatures are matched against.
Roles: final | exception | warning | context | frame (see :func:`line_roles`).
"""

from __future__ import annotations

import functools
import html
import json
import re
import unicodedata
from typing import Any, List, Optional, Sequence

from ..document import clean

#: The tail of the text that is read (tracebacks end with what matters).
MAX_TEXT = 256 * 1024
#: No real line is longer; the bound keeps every pattern below linear.
MAX_LINE_CHARS = 8192

# --- the document ----------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# Colour codes whose ESC was lost in a copy-paste ("[31mRuntimeError[0m") or written as ^[ / \x1b / \u001b.
_ANSI_REMNANT = re.compile(r"(?:\^\[|\\x1b|\\033|\\u001b|\\e)?\[(?:\d{1,3}(?:;\d{1,3})*)?m")
_SYSLOG_ESCAPED = re.compile(r"\S#012(?:NVRM|\S)|^(?:[A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d) \S+ [^:\n]{1,60}: .*#012", re.M)
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200d\u2060\ufeff]")


def _decode_document(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    # UTF-16 (PowerShell's `>`) read as UTF-8 leaves a NUL after every ASCII character.
    if text.count("\x00") > len(text) // 4:
        text = text.replace("\x00", "").lstrip("\ufffd")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "#012" in text and _SYSLOG_ESCAPED.search(text):
        # rsyslog writes a message's control characters as #ooo: "..., but#012NVRM: this kernel module ..."
        text = text.replace("#012", "\n").replace("#011", "\t")
    notebook = _from_notebook(text)
    if notebook is not None:
        return notebook
    return _unescape_json_fragment(text)


def _joined(v: Any) -> str:
    """A notebook's multi-line string: a list of lines (each ending in \\n) or one string."""
    if isinstance(v, list):
        return "".join(x for x in v if isinstance(x, str))
    return v if isinstance(v, str) else ""


def _output_text(o: Any) -> str:
    """The text a notebook output shows: a stream's text, an error's traceback (or ename: evalue), text/plain."""
    if not isinstance(o, dict):
        return ""
    if isinstance(o.get("traceback"), list) and o["traceback"]:
        return "\n".join(x for x in o["traceback"] if isinstance(x, str))
    if o.get("ename") or o.get("evalue"):
        return f"{o.get('ename') or 'Error'}: {o.get('evalue') or ''}"
    if "text" in o:
        return _joined(o["text"])
    data = o.get("data")
    return _joined(data.get("text/plain")) if isinstance(data, dict) else ""


def _from_notebook(text: str) -> Optional[str]:
    """The outputs of a Jupyter notebook (a whole .ipynb, one cell, or outputs) pasted as JSON; None otherwise."""
    s = text.strip()
    if s[:1] not in ("{", "[") or '"output' not in s:
        return None
    try:
        doc = json.loads(s)
    except ValueError:
        return None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if isinstance(cells, list):
        outs = [o for c in cells if isinstance(c, dict) for o in (c.get("outputs") or [])]
    elif isinstance(doc, dict) and isinstance(doc.get("outputs"), list):
        outs = doc["outputs"]
    elif isinstance(doc, dict) and "output_type" in doc:
        outs = [doc]
    elif isinstance(doc, list) and doc and all(isinstance(o, dict) and "output_type" in o for o in doc):
        outs = doc
    else:
        return None
    parts = [_output_text(o).rstrip("\n") for o in outs]
    return "\n".join(p for p in parts if p.strip())


_JSON_STRING_LINE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*,?\s*$')


def _unescape_json_fragment(text: str) -> str:
    """Part of a notebook or a JSON log pasted as it is stored: escaped newlines, quotes, ANSI codes."""
    lines = [x for x in text.split("\n") if x.strip()]
    quoted = [m for m in (_JSON_STRING_LINE.match(x) for x in lines) if m]
    if len(quoted) >= 3 and len(quoted) * 2 > len(lines):
        # A list of JSON strings, one per line (a notebook's "traceback": [...] or "text": [...]).
        out = []
        for line in text.split("\n"):
            m = _JSON_STRING_LINE.match(line)
            if m:
                try:
                    out.append(json.loads(f'"{m.group(1)}"').rstrip("\n"))
                    continue
                except ValueError:
                    pass
            out.append(line)
        return "\n".join(out)
    if text.count("\\n") >= 3 and text.count("\n") < text.count("\\n"):
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
        text = re.sub(r"\\\\", r"\\", text)
    return text


# --- every line ------------------------------------------------------------------------------

_QUOTE = re.compile(r"^(?:\s{0,3}>)+ ?")
_HTML_TAG = re.compile(
    r"</?(?:details|summary|code|pre|br|p|div|span|b|i|em|strong|kbd|samp|sub|sup|tt|blockquote)\b[^>\n]{0,200}>", re.I
)
_ENTITY = re.compile(r"&(?:[a-z]{2,8}|#\d{2,6}|#x[0-9a-f]{2,5});", re.I)
#: journalctl / syslog ("Mar 01 12:00:00 host kernel: ", "2024-03-01T12:00:00+0000 host nvidia-persistenced[812]: ").
_JOURNAL = re.compile(
    r"^(?:[A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r" [\w.-]+ [\w.@/()-]{1,60}(?:\[\d+\])?: "
)
#: dmesg's timestamps: "[   34.193759] " and `dmesg -T`'s "[Tue Mar  1 12:00:00 2022] ".
#: An RFC 3339 timestamp before each line: `docker logs -t`, `kubectl logs --timestamps`, GitHub Actions' raw logs
#: ("2023-10-12T15:26:03.891534028Z Could not load library ...", b168-06).
_ISO_STAMP = re.compile(r"^2\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\s+")
_DMESG = re.compile(r"^\[\s*\d+\.\d+\] ?|^\[[A-Z][a-z]{2} [A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d \d{4}\] ?")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
                         "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
                         "\u3002": ".", "\u3001": ",", "\u00a0": " "})  # fmt: skip


#: A CJK character touching ASCII letters or digits ("提示找不到libcudart.so.9.0", "显卡是RTX3090"): Python's \b
#: sees no boundary there (both are word characters), so every pattern anchored with \b would miss the name.
#: The cleaner puts a space between them, as a writer of English would.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_CJK_ASCII = re.compile(rf"(?<=[{_CJK}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[{_CJK}])")


#: A C++ mangled symbol whose underscores a Markdown renderer took for emphasis ("undefined symbol:
#: *ZNK3c1017SymbolicShapeMeta18init*is_contiguousEv" for _ZNK3c10..._init_is_contiguousEv, b163-06): restored, so
#: the symbol signatures read it.
_MANGLED_EMPHASIS = re.compile(r"(?<![\w*])\*(Z(?:N|L|St)K?\d\w*(?:\*\w+)*)\*?(?![\w*])")


def _mangled(m: "re.Match[str]") -> str:
    return "_" + m.group(1).replace("*", "_")


def _clean_line(line: str) -> str:
    line = _QUOTE.sub("", line[:MAX_LINE_CHARS])
    if "*Z" in line:
        line = _MANGLED_EMPHASIS.sub(_mangled, line)
    if "<" in line:
        caption = _SUMMARY.match(line)
        if caption and not _EXC_LINE.match(caption.group(1)):
            return ""  # a collapsed block's caption ("Full traceback") is not what was printed
        line = _HTML_TAG.sub("", line)
    if "&" in line and ";" in line and _ENTITY.search(line):
        line = html.unescape(line)
    line = _QUOTE.sub("", line)  # "&gt; quoted" once unescaped
    if line[:1] in "ADFJMNOSTW12":
        line = _JOURNAL.sub("", line)
    if line[:1] == "2" and line[10:11] == "T":
        line = _ISO_STAMP.sub("", line)
    if line.lstrip()[:1] == "[":
        stamp = _DMESG.match(line.lstrip())
        if stamp:  # the timestamp and the indentation before it; other indentation is the user's
            line = line.lstrip()[stamp.end() :]
    if not line.isascii():
        line = _CJK_ASCII.sub(" ", unicodedata.normalize("NFKC", line).translate(_QUOTES))
    return line


def clean_lines(text: str) -> List[str]:
    """One entry per line of ``text`` (fences and indentation kept, so a reader sees the user's
    structure), cleaned of what pasting, logging and notebooks add (see the module's docstring)."""
    t = _decode_document(text)
    t = _ANSI_REMNANT.sub("", _ANSI.sub("", t))
    t = _CTRL.sub("", t)
    return [_clean_line(x).rstrip() for x in t.split("\n")]


# --- for matching ----------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*[\w+.-]*\s*$")
_BOX = re.compile(r"[│┃┆┊║]")  # rich / box-drawing tracebacks
_SUMMARY = re.compile(r"^\s*<summary\b[^>]{0,200}>(.{0,200}?)</summary>\s*$", re.I)
_NVRM = re.compile(r"^\s*NVRM: ?")


def is_fence(line: str) -> bool:
    """A line that opens or closes a Markdown code fence (```` ``` ````, ```` ```python ````, ``~~~``),
    possibly with content after it (```` ```Collecting environment information... ````)."""
    return line.lstrip().startswith(("```", "~~~"))


def stripped_lines(text: str) -> List[str]:
    """:func:`clean_lines`, each stripped, a fence line blank ("```Collecting ..." keeps its content),
    backticks around a line removed: the lines of a pasted report, one per line of the user's text."""
    out = []
    for line in clean_lines(text):
        line = line.strip()
        if is_fence(line):
            rest = line.lstrip("`~").strip()
            # "```text" opens a fence; "```Collecting environment information..." is content.
            line = "" if (not rest or re.fullmatch(r"[\w+.-]{1,20}", rest)) else rest
        out.append(line.strip("`").strip())
    return out


def decode(data: bytes) -> str:
    """Bytes of a pasted file as text: UTF-16 with its BOM (PowerShell's `>`), else UTF-8 (BOM or not)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8-sig", "replace")


@functools.lru_cache(maxsize=16)
def normalize(text: str) -> str:
    """Pasted error text as plain lines: what the signatures are matched against."""
    lines: List[str] = []
    nvrm_open = False  # the previous line is a kernel message that has not ended
    cleaned = clean_lines(text if text.lstrip()[:1] in ("{", "[") else text[-MAX_TEXT:])
    size, first = 0, len(cleaned)
    while first > 0 and size + len(cleaned[first - 1]) < MAX_TEXT:  # the tail: tracebacks end with what matters
        first -= 1
        size += len(cleaned[first]) + 1
    for line in cleaned[first:]:
        if not line.strip():
            lines.append("")
            nvrm_open = False
            continue
        if _FENCE.match(line):
            continue
        line = _BOX.sub(" ", line)
        line = line.replace("\\_", "_").replace("\\*", "*").replace("`", "")
        line = clean(line, keep_tabs=True).rstrip()
        if _NVRM.match(line):
            if nvrm_open and lines:
                # dmesg wraps one kernel message over lines that each start again with "NVRM:".
                lines[-1] = lines[-1] + " " + _NVRM.sub("", line).strip()
                nvrm_open = not lines[-1].endswith((".", "!", "?"))
                continue
            nvrm_open = not line.endswith((".", "!", "?"))
        else:
            nvrm_open = False
        lines.append(line)
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

_ANNOTATION = re.compile(r"^\s*(?:hint|note|help):\s", re.I)

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
    j = last + 1
    while j < min(len(roles), last + 16):
        if not lines[j].strip():
            # A tool's annotation of the error after a blank line ("hint: ...", uv and pip; "note: ...",
            # "help: ...") is part of its message.
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k < len(lines) and roles[k] == "context" and _ANNOTATION.match(lines[k]):
                j = k
                continue
            break
        if roles[j] != "context":
            break
        roles[j] = "final"
        j += 1
    return roles
