"""An issue's title and body → one answer, as a maintainer would give it, precision first.

The diagnosis is the one every command makes: the issue is read as `check --from-text` reads a
paste (readers/issue.py: collect_env, nvidia-smi, package lists, tracebacks, error lines), the
checks run on those facts and the error-text engine adjudicates (report.diagnose). This module
only decides what of that report may be *said* in a public thread:

* **a cause** when exactly one cause stands: an error finding (or, when no error stands and torch
  cannot be seen to work, a warning) whose code names a cause rather than a symptom, that no fact
  contradicts, at the configured confidence. A finding's confidence is ``high`` when facts read
  from the issue (versions, GPU, driver, packages) establish it, and only ``medium`` when the error
  text alone does: the same error line is, in real threads, confirmed with different causes
  ("no kernel image is available" for torch's build, a companion package's build, or an
  extension built with an old toolkit);
* **looks healthy** when the facts show torch using the GPU and no check finds anything wrong;
* otherwise **asks for more**: what is missing, and a short checklist of exactly the outputs that
  would decide it (collect_env, nvidia-smi, the full traceback, the package list), plus, for a
  symptom code, the commands that tell its causes apart.

Pure: no I/O. Everything quoted back is redacted as every other output is (privacy.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..facts import Facts, FactsError
from ..model import Finding
from .config import BotConfig
from .event import Issue
from .shared import shared_causes

ANSWER_KIND = "cudadoctor-bot-answer"
ANSWER_SCHEMA = 1

#: Evidence keys that hold the error text itself rather than a fact read from the issue.
TEXT_KEYS = frozenset(
    {
        "user_error",
        "user_error.text",
        "matched",
        "signature",
        "implies",
        "how",
        "torch.error.message",
        "torch.error.type",
        "contradicted_by",
        "capability_source",
        "build_archs_source",
    }
)


@dataclass(frozen=True)
class Symptom:
    """A code that names what broke, not why: its own docs list several causes with different fixes."""

    what: str  # the symptom, in words
    causes: str  # the causes its docs list, in words
    asks: Tuple[Tuple[str, str], ...]  # (id, what to run or paste) that tell them apart
    standard: Tuple[str, ...]  # which of the standard asks (ASKS) help decide it, when the issue lacks them
    from_text_only: bool = False  # a symptom only when the error text alone made it (facts can establish it)


#: Symptom codes (their explanations, `cudadoctor explain CODE`, list the causes quoted here).
#: A bot that named one of these would name the symptom and guess the fix.
SYMPTOMS: Dict[str, Symptom] = {
    "no-nvidia-driver": Symptom(
        "no NVIDIA driver answers",
        "no driver installed, a kernel module that was not built for the running kernel, Secure Boot "
        "refusing an unsigned module, a container or job started without GPU access",
        (
            ("lsmod", "`lsmod | grep nvidia` and `sudo dmesg | grep -i -E 'nvidia|nvrm|secure'` (Linux)"),
            ("where", "whether this runs in a container (`docker run` with `--gpus all`?), a Slurm job, WSL or a VM"),
        ),
        ("nvidia-smi", "collect_env"),
    ),
    "torch-import-failed": Symptom(
        "`import torch` fails",
        "a missing or shadowed shared library, a NumPy ABI mismatch, two half-installed torch versions, "
        "a Windows DLL that cannot load",
        (("import", 'the whole output of `python -c "import torch"`, run in the same environment'),),
        ("traceback", "pip-list"),
    ),
    "dll-load-failure": Symptom(
        "Windows cannot load one of torch's DLLs",
        "a missing Visual C++ runtime, torch 2.4.0's missing libomp140, cuDNN's zlibwapi.dll, DLLs left by "
        "an older torch, a paging file too small to map the CUDA DLLs",
        (
            ("dll", "the exact DLL name and WinError number from the error"),
            ("vcredist", "the output of `where msvcp140.dll vcruntime140_1.dll` in a Command Prompt"),
        ),
        ("traceback", "pip-list"),
    ),
    "torch-not-installed": Symptom(
        "Python cannot find torch",
        "torch installed into another environment, no wheel for this Python version or platform, a local "
        "file or folder named `torch` shadowing the package",
        (("which", 'the output of `python -c "import sys; print(sys.executable, sys.version)"` and `python -m pip --version`'),),
        ("pip-list",),
    ),
    # The check's own title for the text "all CUDA-capable devices are busy or unavailable" lists three causes;
    # `nvidia-smi -q`'s compute mode establishes the first.
    "gpu-compute-mode-restricted": Symptom(
        "the GPU refused a CUDA context",
        "an exclusive or prohibited compute mode, another process holding the GPU, or under WSL the Windows GPU layer",
        (
            (
                "compute-mode",
                "the output of `nvidia-smi -q -d COMPUTE` and `nvidia-smi --query-compute-apps=pid,used_memory --format=csv`",
            ),
        ),
        ("nvidia-smi",),
        from_text_only=True,
    ),
}

#: The standard asks, in the order they are listed.
ASKS: Dict[str, str] = {
    "traceback": "The **full error**: the whole traceback, from `Traceback (most recent call last):` to the last line, "
    "pasted as text in a code block (not a screenshot).",
    "collect_env": "The output of `python -m torch.utils.collect_env`, run in the environment that fails.",
    "nvidia-smi": "The output of `nvidia-smi` (or its exact error message if it fails).",
    "pip-list": "The package list of that environment: `python -m pip list` (or `conda list` in a conda environment).",
}

#: Areas whose causes a package list decides.
_PACKAGE_AREAS = ("torch", "packages", "libraries", "toolkit")


def _parts(facts: Dict[str, Any]) -> List[str]:
    return [p.get("kind", "") for p in (facts.get("pasted") or {}).get("parts", []) if p.get("used")]


def _fact_evidence(f: Finding) -> Dict[str, Any]:
    """The finding's evidence that is a fact read from the issue (not the error text, not unknown)."""
    return {k: v for k, v in f.evidence.items() if k not in TEXT_KEYS and v not in (None, "", [], {})}


def _text_lines(f: Finding, diagnosis: Optional[Dict[str, Any]]) -> List[str]:
    """The error lines the finding was made from."""
    lines = [str(f.evidence[k]) for k in ("user_error", "matched", "torch.error.message") if isinstance(f.evidence.get(k), str)]
    if diagnosis and diagnosis.get("code") == f.code:
        lines += [str(diagnosis[k]) for k in ("line", "matched") if diagnosis.get(k)]
    return lines


def _matched(code: str, text: str, registry: Any) -> Optional[str]:
    """The text in the issue's error text by which it points to ``code`` (its best signature match)."""
    from ..errortext import find_matches, for_codes, normalize

    c = registry.code(code)
    if c is None or not text:
        return None
    found, _problems = find_matches([c], normalize(text), "user_error", for_codes([c]))
    ms = sorted(found.get(code, []), key=lambda m: -m.score)
    if not ms:
        return None
    m = ms[0]  # the whole line when the match is inside one, else the matched span (it crosses lines)
    return m.line_text if " ".join(m.text.split()) in " ".join(m.line_text.split()) else m.text


def _unknown_facts(f: Finding) -> List[str]:
    """The facts the check looked at that the issue does not show."""
    return [k for k, v in f.evidence.items() if k not in TEXT_KEYS and v in (None, "", [], {})]


def _confidence(f: Finding, diagnosis: Optional[Dict[str, Any]], registry: Any, error_text: str = "") -> Tuple[str, List[str]]:
    """(confidence, the other causes real threads confirmed for its error text).

    high: facts read from the issue establish it, or an error text that real threads confirmed only with
    this cause; medium: an error text real threads confirmed with other causes too (bot/shared.py), unless
    the issue shows most of the facts its check looked at."""
    lines = _text_lines(f, diagnosis)
    span = _matched(f.code, error_text, registry)
    if span:
        lines.append(span)
    shared = shared_causes(f.code, lines, registry) if lines else None
    others = sorted(set(shared or {}) - {f.code})
    known = _fact_evidence(f)
    if known:
        return ("medium" if others and len(_unknown_facts(f)) > len(known) else "high"), others
    if not lines:
        return "low", others
    return ("medium" if others else "high"), others


_RANK = {"high": 2, "medium": 1, "low": 0}


def _is_symptom(f: Finding) -> bool:
    s = SYMPTOMS.get(f.code)
    return s is not None and not (s.from_text_only and _fact_evidence(f))


def _why_not(f: Finding, conf: str, cfg: BotConfig) -> Optional[str]:
    if "learned" in f.evidence:
        # checks/learned.py: the classifier's "Likely: ..." from the words of the text: a lead, never a diagnosis.
        return "a guess from the error's words (the learned fallback)"
    if _is_symptom(f):
        return "a symptom with several causes"
    if f.evidence.get("contradicted_by"):
        return "contradicted by the facts"
    if _RANK[conf] < _RANK[cfg.confidence]:
        return f"{conf} confidence (named at {cfg.confidence})"
    return None


def _candidates(report: Any, diagnosis: Optional[Dict[str, Any]]) -> Tuple[List[Finding], str]:
    """The findings that could be the cause, and the severity they share."""
    usable = [f for f in report.findings if report.area_of(f) != "tool"]
    errors = [f for f in usable if f.severity == "error"]
    if errors:
        return errors, "error"
    if report.verdict()["state"] == "yes":
        # torch uses the GPU: a warning is not the cause of a report unless the error text names it.
        named = (diagnosis or {}).get("code")
        return [f for f in usable if f.severity == "warning" and f.code == named], "warning"
    return [f for f in usable if f.severity == "warning"], "warning"


def _choose(report: Any, cfg: BotConfig, registry: Any) -> Tuple[Optional[Finding], str, List[Dict[str, Any]]]:
    """The one cause to name (or None), its confidence, and every candidate with why it is not named."""
    diagnosis = report.extra.get("diagnosis")
    cands, sev = _candidates(report, diagnosis)
    considered: List[Dict[str, Any]] = []
    nameable: List[Tuple[Finding, str]] = []
    for f in cands:
        conf, others = _confidence(f, diagnosis, registry, _user_error(report.facts))
        why = _why_not(f, conf, cfg)
        considered.append(
            {"code": f.code, "severity": f.severity, "confidence": conf, "not_named": why or "", "text_also_confirmed_as": others}
        )
        if why is None and f.code not in [g.code for g, _ in nameable]:
            nameable.append((f, conf))
    if not nameable:
        return None, "", considered
    if sev == "warning" and len({f.code for f in cands}) > 1:
        # No error stands and several warnings do: none of them is shown to be the cause.
        for c in considered:
            if not c["not_named"]:
                c["not_named"] = "one of several warnings, none shown to be the cause"
        return None, "", considered
    if len(nameable) > 1:
        # Several causes stand: the error-text engine's root cause decides, when the facts confirm it.
        top = [
            (f, c) for f, c in nameable if diagnosis and diagnosis.get("code") == f.code and diagnosis.get("confirmed_by_facts")
        ]
        if len(top) != 1:
            for c in considered:
                if not c["not_named"]:
                    c["not_named"] = "one of several causes the issue shows"
            return None, "", considered
        nameable = top
    f, conf = nameable[0]
    return f, conf, considered


def _established_by(f: Finding, conf: str) -> str:
    if _fact_evidence(f):
        return "the facts this issue shows"
    if conf == "high":
        return "the error text, which real threads confirm only with this cause"
    return "the error text (medium confidence: real threads confirm this text with other causes too)"


def _user_error(facts: Dict[str, Any]) -> str:
    t = (facts.get("user_error") or {}).get("text")
    return t if isinstance(t, str) else ""


def _quotes(f: Finding, diagnosis: Optional[Dict[str, Any]], registry: Any, error_text: str) -> List[Dict[str, str]]:
    """The evidence, quoted from the issue: the error text that matched, then the facts read."""
    out: List[Dict[str, str]] = []
    line = _matched(f.code, error_text, registry)
    if not line and diagnosis and diagnosis.get("code") == f.code and diagnosis.get("line"):
        line = diagnosis["line"]
    if not line and isinstance(f.evidence.get("user_error"), str):
        line = f.evidence["user_error"]
    if line:
        out.append({"what": "error", "quote": str(line).strip()[:300]})
    for k, v in _fact_evidence(f).items():
        if isinstance(v, (dict, list)):
            v = json.dumps(v, sort_keys=True)
        out.append({"what": k, "quote": str(v)[:200]})
    return out[:8]


def _asks(facts: Dict[str, Any], considered: List[Dict[str, Any]], registry: Any) -> List[Dict[str, str]]:
    """Exactly the outputs that would decide it: the standard ones the issue lacks and that bear on what was
    seen, plus a symptom's own questions."""
    fx = Facts(facts)
    parts = set(_parts(facts))
    codes = [c["code"] for c in considered]
    related = codes + [o for c in considered for o in c.get("text_also_confirmed_as") or []]
    areas = {registry.code(c).area for c in related if registry.code(c) is not None}
    symptoms = [SYMPTOMS[c] for c in codes if c in SYMPTOMS]
    have = {
        "traceback": "traceback" in parts,
        "collect_env": "collect_env" in parts,
        "nvidia-smi": bool(parts & {"nvidia-smi", "nvidia-smi-q", "devicequery"}) or bool(fx.str("nvml.driver_version")),
        "pip-list": bool(parts & {"pip-list", "pip-freeze", "conda-list"}),
    }
    if symptoms:
        wanted = {w for s in symptoms for w in s.standard}
    elif not codes:
        wanted = {"traceback", "collect_env", "nvidia-smi"} | (set() if have["collect_env"] else {"pip-list"})
    else:
        wanted = {"traceback", "collect_env"}
        if areas & {"driver", "gpu", "system"}:
            wanted.add("nvidia-smi")
        if areas & set(_PACKAGE_AREAS):
            wanted.add("pip-list")
    out = [{"id": k, "ask": v} for k, v in ASKS.items() if k in wanted and not have[k]]
    for s in symptoms:
        out += [{"id": i, "ask": a[0].upper() + a[1:] + "."} for i, a in s.asks if i not in [o["id"] for o in out]]
    return out


def decide(issue: Issue, registry: Any, cfg: BotConfig) -> Dict[str, Any]:
    """The answer to this issue (JSON-like; kind cudadoctor-bot-answer), redacted."""
    from ..commands.check import attach_error
    from ..privacy import hosts_in, redactor_for
    from ..readers import issue as issue_reader
    from ..report import diagnose

    head = {"number": issue.number, "repository": issue.repository, "url": issue.url}
    try:
        got = issue_reader.read(issue.text)
    except FactsError:
        got = None
    if got is None:
        answer: Dict[str, Any] = {
            "answer": "ask",
            "read": [],
            "cause": None,
            "considered": [],
            "missing": "no error message, traceback, collect_env or nvidia-smi output",
            "asks": [{"id": k, "ask": v} for k, v in ASKS.items()],
        }
        return _finish(answer, head, cfg, registry, None)
    facts = got["facts"]
    attach_error(facts, got["error_text"] or "")
    report = diagnose(facts, registry)
    diagnosis = report.extra.get("diagnosis")
    f, conf, considered = _choose(report, cfg, registry)
    read = sorted(set(_parts(facts)) - {"ignored"})
    if f is not None:
        code = registry.code(f.code)
        answer = {
            "answer": "cause",
            "read": read,
            "cause": {
                "code": f.code,
                "title": f.title,
                "area": code.area if code else None,
                "severity": f.severity,
                "confidence": conf,
                "established_by": _established_by(f, conf),
                "evidence": _quotes(f, diagnosis, registry, _user_error(facts)),
                "fix": {"commands": list(f.fix.commands), "why": f.fix.why},
                "links": list(f.links or (code.links if code else ())),
            },
            "considered": considered,
            "missing": None,
            "asks": [],
        }
    elif not considered and report.verdict()["state"] == "yes" and not [x for x in report.findings if x.severity != "info"]:
        answer = {
            "answer": "healthy",
            "read": read,
            "cause": None,
            "considered": [],
            "missing": None,
            "asks": [],
            "observed": _observed(facts),
        }
    else:
        answer = {
            "answer": "ask",
            "read": read,
            "cause": None,
            "considered": considered,
            "missing": _missing(considered, read),
            "asks": _asks(facts, considered, registry),
        }
    r = redactor_for([facts], live=False, extra_hosts=hosts_in(facts))
    return _finish(r.redact(answer), head, cfg, registry, facts)


def _observed(facts: Dict[str, Any]) -> List[Dict[str, str]]:
    """What the issue shows that makes the setup look fine (the healthy answer's evidence)."""
    fx = Facts(facts)
    out = []
    for path, what in (
        ("torch.version", "torch"),
        ("torch.cuda", "CUDA (torch's build)"),
        ("torch.cuda_available", "torch.cuda.is_available()"),
        ("nvml.driver_version", "NVIDIA driver"),
    ):
        v = fx.get(path)
        if v not in (None, ""):
            out.append({"what": what, "quote": str(v)})
    names = [str(d.get("name")) for d in fx.dicts("nvml.devices") if d.get("name")]
    if names:
        out.append({"what": "GPUs", "quote": ", ".join(dict.fromkeys(names))})
    return out


def _missing(considered: Sequence[Dict[str, Any]], read: Sequence[str]) -> str:
    symptoms = [SYMPTOMS[c["code"]] for c in considered if c["code"] in SYMPTOMS]
    if symptoms:
        s = symptoms[0]
        return f"the issue shows that {s.what}, which has several causes ({s.causes}); it does not show which one"
    if len([c for c in considered if not c["not_named"] or c["not_named"].startswith("one of")]) > 1:
        return "the issue is consistent with more than one cause, and does not show which one"
    if considered:
        return "the error text alone fits more than one cause; the facts that would tell them apart are not in the issue"
    if not read:
        return "no error message, traceback, collect_env or nvidia-smi output"
    return "nothing in the issue matches a known setup problem, and it does not show whether torch can use the GPU"


def _finish(answer: Dict[str, Any], head: Dict[str, Any], cfg: BotConfig, registry: Any, facts: Any) -> Dict[str, Any]:
    cause = answer.get("cause") or {}
    answer["labels"] = cfg.labels_for(answer["answer"], cause.get("code"), cause.get("area"))
    return {"kind": ANSWER_KIND, "schema_version": ANSWER_SCHEMA, "issue": head, "skipped": None, **answer}


def skipped(issue: Issue, why: str) -> Dict[str, Any]:
    """The answer to an event that is not answered (an edit with answer-edits off, a plain comment, a bot)."""
    return {
        "kind": ANSWER_KIND,
        "schema_version": ANSWER_SCHEMA,
        "issue": {"number": issue.number, "repository": issue.repository, "url": issue.url},
        "skipped": why,
        "answer": None,
        "labels": [],
    }
