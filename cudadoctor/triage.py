"""Moved to :mod:`cudadoctor.errortext` (the one error-text engine); kept so old imports work."""

from .errortext import (
    TRIAGE_KIND,
    TRIAGE_SCHEMA,
    Candidate,
    Match,
    confidence,
    dumps,
    find_matches,
    line_roles,
    normalize,
    rank,
    specificity,
    triage,
)

__all__ = [
    "TRIAGE_KIND",
    "TRIAGE_SCHEMA",
    "Candidate",
    "Match",
    "confidence",
    "dumps",
    "find_matches",
    "line_roles",
    "normalize",
    "rank",
    "specificity",
    "triage",
]
