"""The facts document: one versioned, JSON-serialisable record of what the probes found.

Everything downstream (checks, renderers, diff, fleet) runs from a facts document, live or
loaded from a file. Unknown is represented by a missing key or ``None`` — never by a default
that looks like an answer. See docs/facts.md for the schema.

:class:`Facts` wraps the dict with typed, dotted-path getters so that checks stay robust to
facts files from elsewhere: a value of the wrong type reads as unknown (``None``), never as a
crash.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from typing import Any, Dict, List, Optional, Union

from . import SCHEMA_VERSION
from .project import upgrade_advice

FACTS_KIND = "cudadoctor-facts"
REPORT_KIND = "cudadoctor-report"
#: Largest facts/report file we read. Real ones are tens of kB.
MAX_INPUT_BYTES = 32 * 1024 * 1024

SECTIONS = ("tool", "system", "python", "nvml", "torch", "packages", "environment", "toolkit", "windows")

_MISSING = object()


class FactsError(ValueError):
    """A facts or report file that cannot be used; the message is one line for the user."""


class Facts:
    """Read-only view of a facts dict with typed dotted-path access."""

    # The getters are named after the types they return (``str``, ``bool``, ``list``, ``dict``), which
    # shadows those builtins in this class body: annotations here spell them ``builtins.str`` etc.

    __slots__ = ("data",)

    def __init__(self, data: Dict[builtins.str, Any]):
        self.data = data

    def get(self, path: builtins.str, default: Any = None) -> Any:
        cur: Any = self.data
        for part in path.split("."):
            if isinstance(cur, dict):
                cur = cur.get(part, _MISSING)
            elif isinstance(cur, list) and part.isdigit():
                i = int(part)
                cur = cur[i] if i < len(cur) else _MISSING
            else:
                return default
            if cur is _MISSING:
                return default
        return default if cur is None else cur

    def str(self, path: builtins.str) -> Optional[builtins.str]:
        v = self.get(path)
        return v if isinstance(v, str) and v != "" else None

    def bool(self, path: builtins.str) -> Optional[builtins.bool]:
        v = self.get(path)
        return v if isinstance(v, bool) else None

    def int(self, path: builtins.str) -> Optional[int]:
        v = self.get(path)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def num(self, path: builtins.str) -> Optional[float]:
        v = self.get(path)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def list(self, path: builtins.str) -> Optional[List[Any]]:
        v = self.get(path)
        return v if isinstance(v, list) else None

    def dicts(self, path: builtins.str) -> List[Dict[builtins.str, Any]]:
        """The dict items of a list (anything else in it is skipped); [] when unknown."""
        return [x for x in (self.list(path) or []) if isinstance(x, dict)]

    def dict(self, path: builtins.str) -> Optional[Dict[builtins.str, Any]]:
        v = self.get(path)
        return v if isinstance(v, dict) else None

    def __contains__(self, path: builtins.str) -> builtins.bool:
        return self.get(path, _MISSING) is not _MISSING

    # Small derived views used by several checks. They only read facts.

    @property
    def origin(self) -> builtins.str:
        return self.str("origin") or "live"

    def env(self, name: builtins.str) -> Optional[builtins.str]:
        """An environment variable as recorded (None when not set or not recorded)."""
        v = self.get("environment.vars." + name)
        return v if isinstance(v, str) else None

    def env_recorded(self) -> builtins.bool:
        # A paste's assignments (readers/issue.py) are some variables, not the recorded environment.
        return self.dict("environment.vars") is not None and not self.bool("environment.vars_partial")

    def distribution(self, name: builtins.str) -> Optional[Dict[builtins.str, Any]]:
        """The installed distribution ``name`` (normalised name match), first found."""
        want = normalize_name(name)
        for d in self.dicts("packages.distributions"):
            if normalize_name(str(d.get("name", ""))) == want:
                return d
        return None

    def user_error(self) -> builtins.str:
        """The error text the user saw, when given (``--error``), else ''."""
        return self.str("user_error.text") or ""


def as_object(v: Any) -> Dict[str, Any]:
    """``v`` when it is a JSON object, else {}: for reading a part of a document that may be missing or malformed."""
    return v if isinstance(v, dict) else {}


def normalize_name(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def new_facts(origin: str = "live") -> Dict[str, Any]:
    """An empty facts document of the current schema."""
    doc: Dict[str, Any] = {"schema_version": SCHEMA_VERSION, "kind": FACTS_KIND, "origin": origin}
    for s in SECTIONS:
        doc[s] = {}
    doc["probe_errors"] = []
    return doc


def sanitize(obj: Any, depth: int = 0) -> Any:
    """Make a facts structure safe to serialise anywhere: no lone surrogates (non-UTF-8 bytes in
    paths or environment values arrive as surrogate escapes), no absurd nesting."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
            return obj
        except UnicodeEncodeError:
            escapes_only = all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in obj)
            return obj.encode("utf-8", "surrogateescape" if escapes_only else "replace").decode("utf-8", "replace")
    if depth > 64:
        return None
    if isinstance(obj, dict):
        return {(sanitize(k, depth + 1) if isinstance(k, str) else str(k)): sanitize(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [sanitize(v, depth + 1) for v in obj]
    return obj


def decode_json(data: Union[str, bytes]) -> Any:
    """The JSON value of a user-supplied document; :class:`FactsError` (one line, no file name) otherwise."""
    if isinstance(data, bytes):
        if len(data) > MAX_INPUT_BYTES:
            raise FactsError(f"file is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; not a cudadoctor report")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise FactsError(f"not UTF-8 text (byte {e.start}); not a cudadoctor JSON report") from None
    text = data
    if not text.strip():
        raise FactsError("empty file; expected a cudadoctor JSON report or facts file")
    try:
        return json.loads(text)
    except RecursionError:
        raise FactsError("JSON nested too deeply") from None
    except ValueError as e:
        msg = re.sub(r"\s+at$", "", str(getattr(e, "msg", e)))
        pos = getattr(e, "pos", None)
        # The text ended inside a value: the error is at the end, or a string never closed.
        truncated = pos is not None and (not text[pos:].strip() or msg.startswith("Unterminated string"))
        where = f" at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise FactsError(f"{'truncated JSON' if truncated else 'not valid JSON'} ({msg}{where})") from None


def _check_schema(version: Any) -> None:
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FactsError(f"missing or invalid schema_version {_short(version)}")
    if version > SCHEMA_VERSION:
        raise FactsError(
            f"written by a newer cudadoctor (schema {version}; this one reads up to {SCHEMA_VERSION}); " + upgrade_advice()
        )


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def facts_of(doc: Any) -> Dict[str, Any]:
    """The facts dict of a decoded report or facts document (a shallow copy with every section a dict).

    Raises :class:`FactsError` (one line, no file name) for anything unusable. Not sanitised: callers
    that print or re-serialise the whole document pass it through :func:`sanitize`.
    """
    if not isinstance(doc, dict):
        raise FactsError(f"expected a JSON object (a cudadoctor report or facts file), got {type(doc).__name__}")
    kind = doc.get("kind")
    if kind == REPORT_KIND:
        facts = doc.get("facts")
        if not isinstance(facts, dict):
            raise FactsError("report has no 'facts' object")
        _check_schema(doc.get("schema_version"))
        facts = dict(facts)
        facts.setdefault("schema_version", doc.get("schema_version"))
        facts.setdefault("kind", FACTS_KIND)
    elif kind == FACTS_KIND:
        facts = dict(doc)
    else:
        raise FactsError(
            f"not a cudadoctor report or facts file (kind={_short(kind)}); "
            "for `python -m torch.utils.collect_env` output use --from-collect-env"
        )
    _check_schema(facts.get("schema_version"))
    for s in SECTIONS:
        if s in facts and facts[s] is not None and not isinstance(facts[s], dict):
            raise FactsError(f"section '{s}' should be an object, got a {type(facts[s]).__name__}")
        if facts.get(s) is None:
            facts[s] = {}
    if not isinstance(facts.get("probe_errors"), list):
        facts["probe_errors"] = []
    return facts


def parse_document(text: Union[str, bytes], name: str = "input") -> Dict[str, Any]:
    """Parse a facts document or a whole report; returns the facts dict.

    Raises :class:`FactsError` with a one-line message for anything unusable.
    """
    try:
        facts = facts_of(decode_json(text))
    except FactsError as e:
        raise FactsError(f"{name}: {e}") from None
    facts.setdefault("origin", "file")
    return sanitize(facts)  # lone surrogates from "\\udcff" escapes must not reach the output


def read_input(path: str, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a user-supplied file ('-' = stdin), at most ``limit``; FactsError otherwise."""
    import sys

    name = "stdin" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            if os.path.isdir(path):
                raise FactsError(f"{path}: is a directory, expected {what}")
            with open(path, "rb") as f:
                data = f.read(limit + 1)
    except FileNotFoundError:
        raise FactsError(f"{name}: no such file") from None
    except PermissionError:
        raise FactsError(f"{name}: permission denied") from None
    except OSError as e:
        raise FactsError(f"{name}: cannot read ({e.strerror or e})") from None
    if len(data) > limit:
        raise FactsError(f"{name}: larger than {limit // (1024 * 1024)} MiB; expected {what}")
    return data


def load_facts(path: str) -> Dict[str, Any]:
    """Read a facts document or report from ``path`` ('-' for stdin)."""
    return parse_document(read_input(path, "a cudadoctor report or facts file"), "stdin" if path == "-" else path)
