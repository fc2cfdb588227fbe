"""The readers' view of pasted text: the one cleaner, cudadoctor.errortext.normalize (quotes, fences,
tags, HTML escapes, ANSI, CRLF, UTF-16, notebooks, log prefixes), under the names the readers use."""

from __future__ import annotations

from ..errortext import (  # the package, whole (see its docstring)
    MAX_LINE_CHARS,
    clean_lines as raw_lines,
    decode as _decode,
    is_fence,
    stripped_lines as _clean_lines,
)

__all__ = ["MAX_LINE_CHARS", "raw_lines", "_clean_lines", "_decode", "is_fence"]
