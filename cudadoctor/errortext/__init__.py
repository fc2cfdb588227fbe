"""The one error-text engine: normalise pasted text, match signatures (data), rank codes with the facts.

`check` (through report.diagnose), `triage`, `report` and `diff` all use :func:`rank`.
"""

from .engine import (
    ENGINE_CHECK,
    TRIAGE_KIND,
    TRIAGE_SCHEMA,
    Candidate,
    Match,
    adjudicate,
    confidence,
    diagnosis_of,
    dumps,
    find_matches,
    rank,
    specificity,
    triage,
)
from .normalize import MAX_TEXT, ROLE_WEIGHT, line_roles, normalize
from .signatures import Signature, code_pattern, for_codes, kb_signatures
from .sources import error_texts

__all__ = [
    "ENGINE_CHECK",
    "TRIAGE_KIND",
    "TRIAGE_SCHEMA",
    "Candidate",
    "Match",
    "adjudicate",
    "confidence",
    "diagnosis_of",
    "dumps",
    "find_matches",
    "rank",
    "specificity",
    "triage",
    "MAX_TEXT",
    "ROLE_WEIGHT",
    "line_roles",
    "normalize",
    "Signature",
    "code_pattern",
    "for_codes",
    "kb_signatures",
    "error_texts",
]
