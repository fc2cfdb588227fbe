"""The one error-text engine: normalise pasted text, match signatures (data), rank codes with the facts.

normalize (the one cleaner) → evidence (the one pass over a run's error texts, every provider in
:data:`PROVIDERS`) → rank. `check` (through report.diagnose), `triage`, `report` and `diff` all use
:func:`rank`; the checks read the same pass through :func:`said` / :func:`search`.

Import it from this package (``from cudadoctor.errortext import said``), not from its modules: the
package is imported whole, so a thread importing it waits for another one that is (``check``
imports the checks in the background while the main thread reads a paste).
"""

from .entities import MissingLibrary, missing_libraries, short_name, wanted_cuda
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
from .floors import floor_spans, stated_floor
from .stated import (
    ASYNC_ALLOCATOR,
    ASYNC_ALLOCATOR_DEFAULT,
    CUDA_TENSOR_PRINTED,
    ROCM_IN_USE,
    TENSORFLOW_VERSION,
    WRONG_NUMBERS,
)
from .evidence import PROVIDERS, Evidence, of_facts, of_texts, said, search, text_of
from .match import Match, code_matches, code_pattern, find_matches, for_codes, of_code, specificity
from .normalize import MAX_LINE_CHARS, MAX_TEXT, ROLE_WEIGHT, clean_lines, decode, is_fence, line_roles, normalize, stripped_lines
from .signatures import Signature, compiled, kb_document, kb_documents, kb_signatures, program_patterns
from .sources import error_texts

__all__ = [
    "MissingLibrary",
    "floor_spans",
    "stated_floor",
    "ASYNC_ALLOCATOR",
    "ASYNC_ALLOCATOR_DEFAULT",
    "ROCM_IN_USE",
    "CUDA_TENSOR_PRINTED",
    "TENSORFLOW_VERSION",
    "WRONG_NUMBERS",
    "missing_libraries",
    "short_name",
    "wanted_cuda",
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
    "MAX_LINE_CHARS",
    "MAX_TEXT",
    "clean_lines",
    "decode",
    "is_fence",
    "stripped_lines",
    "compiled",
    "of_code",
    "kb_document",
    "kb_documents",
    "program_patterns",
    "ROLE_WEIGHT",
    "line_roles",
    "normalize",
    "Signature",
    "code_pattern",
    "code_matches",
    "for_codes",
    "kb_signatures",
    "error_texts",
]
