"""Memory figures in out-of-memory messages: how much of the GPU the failing process held, and how much was free.

An out-of-memory error is ordinary when the process itself holds the GPU's memory (a model or batch too large);
it is gpu-memory-occupied when the message's own figures show most of the GPU held OUTSIDE the process (another
user's job, a killed run's leftover workers, a notebook kernel). The figures are read with the templates of
kb/errors/occupied8.json ``memory_figures`` (each framework's wording at a release tag, with its source):
torch's caching allocator (1.0-1.4 "cached", 1.5-2.0 "reserved in total by PyTorch", 2.1+ "has a total capacity
of ... of which ... is free"), TensorFlow 0.x-1.13's device log (free memory at start-up), CuPy's pool.

:func:`figures_find` is an evidence provider (errortext/evidence.py PROVIDERS), so triage, `check --error-file` and
`check --from-text` read the same figures; checks/gpu_state.py words the finding. Pure: no I/O beyond the kb's
read-only package data.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, List, Optional, Tuple

from .match import Match
from .normalize import ROLE_WEIGHT, line_roles
from .signatures import Signature, kb_document

#: Failure words that say an allocation failed (any framework): beside start-up figures they say the shortage bit.
OOM_WORDS = re.compile(r"out of memory|\bOOM\b|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|ALLOC_FAILED", re.I)

_UNITS = {"B": 1, "BYTES": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40, "KB": 2**10, "MB": 2**20, "GB": 2**30}

#: The out-of-memory messages' templates and the thresholds, as data with their sources (kb/errors/occupied8.json
#: ``memory_figures``): torch's caching allocator in each release's words, TensorFlow 1.x's device start-up log,
#: CuPy's memory pool.
_FIGURES_DOC = "occupied8.json"


@functools.lru_cache(maxsize=None)
def _figures() -> Tuple[
    Dict[str, Any], Tuple[Tuple[Dict[str, Any], "re.Pattern[str]"], ...], Tuple[Tuple[Dict[str, Any], "re.Pattern[str]"], ...]
]:
    doc: Dict[str, Any] = kb_document(_FIGURES_DOC)["memory_figures"]
    templates = tuple((t, re.compile(t["regex"], re.I)) for t in doc["templates"])
    pools = tuple((t, re.compile(t["regex"], re.I)) for t in doc["pool_templates"])
    return dict(doc["thresholds"]), templates, pools


@functools.lru_cache(maxsize=None)
def _start_up_failure() -> "re.Pattern[str]":
    """A line saying the shortage bit after start-up figures: a failed allocation, a cuDNN/cuBLAS handle not created."""
    return re.compile(kb_document(_FIGURES_DOC)["memory_figures"]["start_up_failures"]["regex"], re.I)


def threshold(name: str) -> float:
    return float(_figures()[0][name])


def _bytes(n: str, unit: str) -> float:
    try:
        return float(n) * _UNITS.get(unit.upper(), 1)
    except ValueError:
        return 0.0


def _size(m: "re.Match[str]", name: str) -> float:
    return _bytes(m.group(f"{name}_n"), m.group(f"{name}_u"))


def oom_figures(text: str) -> Optional[Tuple[str, float, float, float, str]]:
    """(GPU, total, free, held by the failing process, the message) from an out-of-memory message's figures (torch's,
    any release; TensorFlow 1.x's free memory at start-up): the templates of kb/errors/occupied8.json."""
    got = oom_match(text)
    return got[1] if got else None


def oom_match(text: str) -> Optional[Tuple[Dict[str, Any], Tuple[str, float, float, float, str]]]:
    """(template, figures) of the first template of kb/errors/occupied8.json found in the text (see _oom_figures)."""
    flat = re.sub(r"\s+", " ", text)
    best: Optional[Tuple[Dict[str, Any], Tuple[str, float, float, float, str]]] = None
    for t, rx in _figures()[1]:
        for m in rx.finditer(flat):
            got = _read_figures(t, m, flat)
            if got is None:
                continue
            # Several GPUs listed (TensorFlow's start-up log): the one with most memory held outside the process.
            if best is None or _elsewhere_share(got) > _elsewhere_share(best[1]):
                best = (t, got)
        if best is not None:
            return best
    return None


def _elsewhere_share(got: Tuple[str, float, float, float, str]) -> float:
    _, total, free, mine, _ = got
    return (total - free - mine) / total if total > 0 else 0.0


def _read_figures(t: Dict[str, Any], m: "re.Match[str]", flat: str) -> Optional[Tuple[str, float, float, float, str]]:
    total, free = _size(m, "total"), _size(m, "free")
    own = t["own"]
    if own == "allocated+held":  # torch 1.0-1.4: "cached" is held beyond what is allocated
        mine = _size(m, "alloc") + _size(m, "held")
    elif own == "held":
        mine = _size(m, "held")
    elif own == "none-yet":  # logged before the process allocated anything
        mine = 0.0
    else:
        tail = flat[m.end() : m.end() + 1200]
        mp = re.search(t["this_process"], tail, re.I)
        if mp:
            mine = _size(mp, "held")
        else:
            # No "this process has" line: NVML did not list this process under its own pid (in a container the
            # pids differ), so its share is what PyTorch holds; a "Process N" line may then be this process itself.
            ts = re.search(t["torch_split"], tail, re.I)
            if not ts:
                return None
            mine = _size(ts, "alloc") + _size(ts, "held")
        return m.group("gpu"), total, free, mine, (m.group(0) + " " + tail[:600]).strip()
    return m.group("gpu") or "", total, free, mine, m.group(0)


def human(n: float) -> str:
    """A size as a person reads it: '1,024 bytes', '3.7 MiB', '10.9 GiB'."""
    if n < 2**20:
        return f"{int(n):,} bytes"
    if n < 2**30:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 2**30:.1f} GiB"


def pool_figures(text: str) -> Optional[Tuple[int, int, str]]:
    """(bytes asked for, bytes the process's memory pool held before, the message) from CuPy's out-of-memory message."""
    flat = re.sub(r"\s+", " ", text)
    for t, rx in _figures()[2]:
        m = rx.search(flat)
        if not m:
            continue
        request, held = int(m.group("request").replace(",", "")), int(m.group("held").replace(",", ""))
        if t["held_is"] == "after":  # CuPy 2-6's "total": what the pool would hold had it succeeded
            held = max(held - request, 0)
        return request, held, m.group(0)
    return None


#: torch 2.1+ names each process NVML lists on the GPU: "Process 224599 has 21.48 GiB memory in use."
_PROCESS = re.compile(r"(?<!this )Process (\d+) has ([\d.]+) ?(bytes|[KMGT]i?B) memory in use", re.I)


def listed_processes(message: str) -> List[Tuple[int, float]]:
    """(pid, bytes) of every process torch 2.1+'s message names, largest first (one may be the failing process itself
    when its own "this process has" line is missing: in a container NVML's pids are the host's)."""
    out = [(int(p), _bytes(n, u)) for p, n, u in _PROCESS.findall(message)]
    return sorted(out, key=lambda x: -x[1])


def held_elsewhere(text: str) -> Optional[Dict[str, Any]]:
    """What the figures of an out-of-memory message in ``text`` say about memory held outside the failing process:
    {"template", "gpu", "total", "free", "mine", "elsewhere", "message", "failed"} when most of the GPU was held
    elsewhere (kb thresholds), {"template", "request", "held", "message"} for a pool's tiny failed allocation, else
    None (no figures, or the process held the memory itself)."""
    got = oom_match(text)
    if got:
        template, (gpu, total, free, mine, line) = got
        elsewhere = total - free - mine
        if total <= 0 or mine > total or elsewhere < threshold("held_elsewhere_share") * total:
            return None
        return {
            "template": template,
            "gpu": gpu,
            "total": total,
            "free": free,
            "mine": mine,
            "elsewhere": elsewhere,
            "message": line,
            "processes": listed_processes(line) if template["own"] == "this-process-or-torch" else [],
            "failed": template["own"] != "none-yet" or bool(_start_up_failure().search(text)),
        }
    pool = pool_figures(text)
    tiny = threshold("tiny_bytes")
    if pool and pool[0] <= tiny and pool[1] <= tiny:
        return {"template": None, "request": pool[0], "held": pool[1], "message": pool[2], "failed": True}
    return None


CHECKED = "2026-11-28"


def _signature(implies: str, regex: str, sources: Tuple[str, ...]) -> Signature:
    return Signature(
        code="gpu-memory-occupied",
        regex=regex,
        confidence="high",
        implies=implies,
        sources=sources,
        checked=CHECKED,
        origin="entity",
    )


def figures_find(text: str, where: str) -> Tuple[Dict[str, List[Match]], List[str]]:
    """Evidence provider: a gpu-memory-occupied match where an out-of-memory message's figures show most of the GPU
    held outside the failing process (a failure beside start-up figures; start-up figures alone are left to the check)."""
    if not _PREFILTER.search(text):
        return {}, []
    got = held_elsewhere(text)
    if not got or not got["failed"]:
        return {}, []
    lines = text.split("\n")
    roles = line_roles(lines)
    head = re.sub(r"\s+", " ", got["message"])[:24].strip()
    idx = next((i for i, ln in enumerate(lines) if head and head in re.sub(r"\s+", " ", ln)), 0)
    if "total" in got:
        implies = (
            f"GPU {got['gpu'] or '?'}: {human(got['elsewhere'])} of {human(got['total'])} held outside the failing process "
            f"({human(got['free'])} free, {human(got['mine'])} its own)"
        )
    else:
        implies = f"an allocation of {human(got['request'])} failed while the process's pool held {human(got['held'])}"
    sources = tuple((got["template"] or _figures()[2][0][0]).get("sources") or ())
    sig = _signature(implies, re.escape(head) or "out of memory", sources)
    score = 0.85 * ROLE_WEIGHT[roles[idx]] * (1 + 0.1 * idx / max(len(lines), 1))
    return {
        "gpu-memory-occupied": [Match(sig.regex, got["message"][:300], idx + 1, lines[idx], roles[idx], score, where, sig)]
    }, []


#: A cheap test before the templates run: every template's text has one of these.
_PREFILTER = re.compile(r"total capac|memory: |allocated so far|out of memory to allocate", re.I)
