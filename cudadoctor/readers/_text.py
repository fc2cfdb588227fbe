"""The readers' view of pasted text: the one cleaner, cudadoctor.errortext.normalize (quotes, fences,
tags, HTML escapes, ANSI, CRLF, UTF-16, notebooks, log prefixes), under the names the readers use."""

from __future__ import annotations

from ..errortext import (  # the package, whole (see its docstring)
    MAX_LINE_CHARS,
    clean_lines as raw_lines,
    decode as _decode,
    is_fence as _opens_or_closes,
    stripped_lines as _clean_lines,
)

import re

#: A line that is one code span on its own: "```libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent```",
#: "```import mxnet```" (GitHub renders it inline): content, not a fence that opens or closes a block.
_ONE_LINE_CODE = re.compile(r"^\s*(`{3,}|~{3,})(?!\s*[\w+.-]*\s*$)(?P<body>.*\S.*?)\1\s*$")


def is_fence(line: str) -> bool:
    """A line that opens or closes a Markdown code fence (errortext.normalize.is_fence), unless it is a whole code
    span on one line (three backticks, content, three backticks), which is the line's content."""
    return _opens_or_closes(line) and not _ONE_LINE_CODE.match(line)


__all__ = ["MAX_LINE_CHARS", "raw_lines", "_clean_lines", "_decode", "is_fence"]
