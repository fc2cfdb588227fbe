"""Run `cudadoctor check` in-process and read its findings: the one helper the rule tests share.

from checkcli import codes, paste_findings, run_check

run_check("--from-text", str(path))               # the JSON findings (exit code 0 or 1 asserted)
paste_findings(tmp_path, text)                    # the same on a text written to a file (--from-text by default)
codes(paste_findings(tmp_path, text))             # the codes of its errors and warnings, in order
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

from click.testing import CliRunner

from cudadoctor.cli import cli

#: What the tests count as a diagnosis (the blind-batch scorer's "right": an error or warning finding).
SPEAKS = ("error", "warning")


def run_check(*args: str, env: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
    """``cudadoctor check ARGS --format json`` in-process: its findings (asserts the exit code is 0 or 1, not 2/crash)."""
    r = CliRunner().invoke(cli, ["check", *args, "--format", "json"], env=env)
    assert r.exit_code in (0, 1), r.output
    return list(json.loads(r.stdout)["findings"])


def write(tmp_path: Path, text: str, name: str = "paste.txt") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def paste_findings(
    tmp_path: Path, text: str, source: str = "--from-text", env: Optional[Dict[str, str]] = None
) -> List[Dict[str, Any]]:
    """``check SOURCE FILE`` on ``text`` written to a file (``--from-text``, ``--error-file``, ``--from-collect-env``)."""
    return run_check(source, str(write(tmp_path, text)), env=env)


def codes(findings: Iterable[Dict[str, Any]], severities: Iterable[str] = SPEAKS) -> List[str]:
    """The codes of the findings at these severities, in the report's order."""
    sev = tuple(severities)
    return [f["code"] for f in findings if f["severity"] in sev]


def severities(findings: Iterable[Dict[str, Any]], of: Iterable[str] = SPEAKS) -> Dict[str, str]:
    """code → severity for the findings at these severities (the last finding of a code wins, as a dict built over them)."""
    out: Dict[str, str] = {}
    for f in findings:
        if f["severity"] in tuple(of):
            out[f["code"]] = f["severity"]
    return out
