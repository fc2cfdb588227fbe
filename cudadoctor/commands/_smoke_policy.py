"""The smoke's exit-code policy and how a distributed report may be shown: shared by
commands/smoke.py and commands/_smoke_distributed.py (apart, so neither imports the other back)."""

from __future__ import annotations

from typing import Dict, Optional

from .. import exitcodes
from ..privacy import Redactor, redactor_for

# data problems are bad input (2) like any other missing/broken input file
_ERROR_EXIT: Dict[Optional[str], int] = {
    "data-missing": exitcodes.BAD_INPUT,
    "data-corrupt": exitcodes.BAD_INPUT,
    "download-failed": exitcodes.BAD_INPUT,
    "bad-interpreter": exitcodes.BAD_INPUT,
}


def exit_code_for(result: dict) -> int:
    """The smoke's one exit-code policy (single GPU and job report): 0 pass; 1 a stage failed (a crash or a
    hang of the workload, a rank at fault); 2 bad input (data missing or corrupt, bad --python); 3 internal."""
    if result.get("status") == "pass":
        return exitcodes.OK
    if result.get("status") == "fail":
        return exitcodes.FINDINGS
    return _ERROR_EXIT.get((result.get("error") or {}).get("kind"), exitcodes.INTERNAL)


def shareable_distributed(report: dict, show_pii: bool) -> dict:
    """A distributed smoke report as it may be shown: every rank's host name (and a MASTER_ADDR that
    is a name) becomes a pseudonym, like everything else, unless --show-pii. With a site key
    (CUDADOCTOR_PSEUDONYM_KEY) a host has the same pseudonym in every rank's report."""
    from ..privacy import hosts_in

    if show_pii:
        return Redactor(pii=False).redact(report)
    return redactor_for([], live=True, extra_hosts=hosts_in(report)).redact(report)
