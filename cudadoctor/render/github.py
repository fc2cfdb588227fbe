"""GitHub Actions workflow commands: one annotation per finding, when ``GITHUB_ACTIONS=true``.

``::error title=CODE::message`` (``::warning``, ``::notice`` for the other severities) on
stderr, where the runner reads workflow commands as well as from stdout, so the report on stdout (or
in ``-o FILE``) stays what was asked for. Escaped as GitHub's toolkit does (actions/toolkit,
packages/core/src/command.ts): in the message ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``; in a
property value also ``:`` → ``%3A`` and ``,`` → ``%2C``.
"""

# No `from __future__ import annotations` here: it would bind the name of annotations() below.
import os
from typing import List, Mapping, Optional

from ..report import Report

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def enabled(env: Optional[Mapping[str, str]] = None) -> bool:
    return (os.environ if env is None else env).get("GITHUB_ACTIONS") == "true"


def annotations(report: Report) -> List[str]:
    """The workflow-command lines for the report's findings (already redacted: it is the shareable report)."""
    out = []
    for f in report.findings:
        cmd = _COMMAND.get(f.severity, "notice")
        msg = f.title
        if f.fix.commands:
            msg += "\nfix: " + "\n".join(f.fix.commands)
        if f.fix.why:
            msg += "\nwhy: " + f.fix.why
        msg += f"\nmore: cudadoctor explain {f.code}"
        out.append(f"::{cmd} title={escape_property(f.code)}::{escape_data(msg)}")
    return out


def annotate(report: Report, env: Optional[Mapping[str, str]] = None) -> None:
    """Write the annotations to stderr when running under GitHub Actions; nothing otherwise."""
    if not enabled(env):
        return
    import sys

    lines = annotations(report)
    if lines and sys.stderr is not None:
        try:
            sys.stderr.write("\n".join(lines) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
