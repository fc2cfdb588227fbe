"""The one error-text engine: normalise pasted text, match signatures (data), rank codes with the facts.

normalize (the one cleaner) → evidence (the one pass over a run's error texts, every provider in
:data:`PROVIDERS`) → rank. `check` (through report.diagnose), `triage`, `report` and `diff` all use
:func:`rank`; the checks read the same pass through :func:`said` / :func:`search`.
"""

from .engine import (
    ENGINE_CHECK,
    TRIAGE_KIND,
    TRIAGE_SCHEMA,
    Candidate,
    adjudicate,
    confidence,
    diagnosis_of,
    dumps,
    rank,
    triage,
)
from .evidence import PROVIDERS, Evidence, of_facts, of_texts, said, search, text_of
from .match import Match, find_matches, specificity
from .normalize import MAX_TEXT, ROLE_WEIGHT, line_roles, normalize
from .signatures import Signature, code_pattern, for_codes, kb_signatures
from .sources import error_texts

__all__ = [
    "ENGINE_CHECK",
    "TRIAGE_KIND",
    "TRIAGE_SCHEMA",
    "Candidate",
    "Match",
    "PROVIDERS",
    "Evidence",
    "of_facts",
    "of_texts",
    "said",
    "search",
    "text_of",
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
