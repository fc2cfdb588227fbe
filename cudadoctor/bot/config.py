"""The bot's configuration: ``.github/cudadoctor.yml`` in the calling repository, then the action's inputs.

Every key is optional::

    confidence: high        # high (default) | medium: the least confidence at which a cause is named
    answer-edits: true      # answer `issues: edited` too (the one comment is edited in place)
    command: /cudadoctor    # a comment with this on a line of its own asks for a (re-)run
    dry-run: false          # write the comment to the job summary instead of posting it
    footer: "Answered by cudadoctor; a maintainer will follow up."
    labels:
      cause: [cuda-setup]           # added when a cause is named
      ask: [needs-info]             # added when the answer asks for more
      healthy: []                   # added when the GPU setup looks fine
      families:                     # by the named code's area (cudadoctor list-checks shows areas)
        driver: [driver]
        torch: [pytorch-install]
      codes:                        # by the named code itself
        gpu-arch-unsupported: [unsupported-gpu]

Inputs given to the action (non-empty) override the file. Unknown keys are an error (one line), so
a typo never silently turns a setting off.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

from ..facts import FactsError
from ..model import AREAS

CONFIDENCES = ("high", "medium")
DEFAULT_FOOTER = (
    "<sub>Answered automatically by [cudadoctor](https://pypi.org/project/cudadoctor/) from the text of this issue; "
    "it names a cause only when the issue shows it. A maintainer will follow up.</sub>"
)
_KEYS = {"confidence", "answer-edits", "command", "dry-run", "footer", "labels"}
_LABEL_KEYS = {"cause", "ask", "healthy", "families", "codes"}


@dataclass(frozen=True)
class BotConfig:
    confidence: str = "high"
    answer_edits: bool = True
    command: str = "/cudadoctor"
    dry_run: bool = False
    footer: str = DEFAULT_FOOTER
    label_cause: Tuple[str, ...] = ()
    label_ask: Tuple[str, ...] = ()
    label_healthy: Tuple[str, ...] = ()
    label_families: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    label_codes: Dict[str, Tuple[str, ...]] = field(default_factory=dict)

    def labels_for(self, kind: str, code: Optional[str], area: Optional[str]) -> List[str]:
        """The labels an answer of this kind (cause / ask / healthy) gets; code and area when a cause is named."""
        out = list({"cause": self.label_cause, "ask": self.label_ask, "healthy": self.label_healthy}.get(kind, ()))
        if kind == "cause":
            out += self.label_families.get(area or "", ())
            out += self.label_codes.get(code or "", ())
        return list(dict.fromkeys(out))

    def managed_labels(self) -> List[str]:
        """Every label the bot may add: one no longer right for the issue's answer is removed."""
        out = list(self.label_cause) + list(self.label_ask) + list(self.label_healthy)
        for v in list(self.label_families.values()) + list(self.label_codes.values()):
            out += v
        return list(dict.fromkeys(out))


def _labels(v: Any, where: str) -> Tuple[str, ...]:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise FactsError(f"{where}: expected a label or a list of labels")
    if any(len(x) > 50 for x in v):
        raise FactsError(f"{where}: a GitHub label is at most 50 characters")
    return tuple(x.strip() for x in v)


def _bool(v: Any, where: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true"
    raise FactsError(f"{where}: expected true or false, got {v!r}")


def from_mapping(doc: Any, name: str = ".github/cudadoctor.yml", base: Optional[BotConfig] = None) -> BotConfig:
    """A config from a parsed mapping (the YAML file's content); FactsError (one line) on a bad key or value."""
    cfg = base or BotConfig()
    if doc is None:
        return cfg
    if not isinstance(doc, dict):
        raise FactsError(f"{name}: expected a mapping of settings at the top level")
    unknown = sorted(set(map(str, doc)) - _KEYS)
    if unknown:
        raise FactsError(f"{name}: unknown setting(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    changes: Dict[str, Any] = {}
    if "confidence" in doc:
        if doc["confidence"] not in CONFIDENCES:
            raise FactsError(f"{name}: confidence must be one of {', '.join(CONFIDENCES)}, got {doc['confidence']!r}")
        changes["confidence"] = doc["confidence"]
    if "answer-edits" in doc:
        changes["answer_edits"] = _bool(doc["answer-edits"], f"{name}: answer-edits")
    if "dry-run" in doc:
        changes["dry_run"] = _bool(doc["dry-run"], f"{name}: dry-run")
    if "command" in doc:
        c = doc["command"]
        if not isinstance(c, str) or not c.strip() or any(ch.isspace() for ch in c.strip()):
            raise FactsError(f"{name}: command must be one word such as /cudadoctor")
        changes["command"] = c.strip()
    if "footer" in doc:
        if not isinstance(doc["footer"], str):
            raise FactsError(f"{name}: footer must be text")
        changes["footer"] = doc["footer"].strip()
    labels = doc.get("labels")
    if labels is not None:
        if not isinstance(labels, dict):
            raise FactsError(f"{name}: labels must be a mapping (cause, ask, healthy, families, codes)")
        bad = sorted(set(map(str, labels)) - _LABEL_KEYS)
        if bad:
            raise FactsError(f"{name}: unknown labels setting(s) {', '.join(bad)} (known: {', '.join(sorted(_LABEL_KEYS))})")
        for k in ("cause", "ask", "healthy"):
            if k in labels:
                changes[f"label_{k}"] = _labels(labels[k], f"{name}: labels.{k}")
        fam = labels.get("families") or {}
        if not isinstance(fam, dict):
            raise FactsError(f"{name}: labels.families must map areas to labels")
        bad = sorted(set(map(str, fam)) - set(AREAS))
        if bad:
            raise FactsError(f"{name}: labels.families: unknown area(s) {', '.join(bad)} (areas: {', '.join(AREAS)})")
        changes["label_families"] = {str(k): _labels(v, f"{name}: labels.families.{k}") for k, v in fam.items()}
        codes = labels.get("codes") or {}
        if not isinstance(codes, dict):
            raise FactsError(f"{name}: labels.codes must map finding codes to labels")
        changes["label_codes"] = {str(k): _labels(v, f"{name}: labels.codes.{k}") for k, v in codes.items()}
    return replace(cfg, **changes)


def check_codes(cfg: BotConfig, known: Any, name: str = ".github/cudadoctor.yml") -> None:
    """A label keyed by a code cudadoctor does not have is a typo: say so (one line)."""
    bad = sorted(c for c in cfg.label_codes if known(c) is None)
    if bad:
        raise FactsError(f"{name}: labels.codes: unknown code(s) {', '.join(bad)} (see `cudadoctor list-checks`)")


def parse_yaml(text: str, name: str = ".github/cudadoctor.yml") -> Any:
    """The YAML file's content. PyYAML is needed only when there is a file (the `bot` extra)."""
    try:
        import yaml
    except ImportError:
        raise FactsError(f"{name}: reading it needs PyYAML (pip install 'cudadoctor[bot]')") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise FactsError(f"{name}: not valid YAML ({' '.join(str(e).split())[:200]})") from None


def with_inputs(cfg: BotConfig, inputs: Dict[str, Optional[str]]) -> BotConfig:
    """The action's inputs (strings; empty = not given) over the file's settings."""
    doc = {k: v for k, v in inputs.items() if v is not None and v.strip() != ""}
    return from_mapping(doc, "action input", base=cfg) if doc else cfg
