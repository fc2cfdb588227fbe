"""What a `cudadoctor smoke` document carries, whatever its shape: the one place that knows where
smoke keeps its numbers (read by the Prometheus renderer and by fleet).

Smoke documents come as a single-GPU result, a distributed job report (stages per rank under
``ranks``) or one rank's result, old (``{schema}``) or new (``{kind, schema_version}``); this reads
them all defensively: a field that is missing or not a number is None, never an error.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Mapping, Optional


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def epoch(iso: Any) -> Optional[float]:
    """An ISO 8601 time as Unix seconds (UTC when no zone is given); None when not a time."""
    if not isinstance(iso, str) or not iso:
        return None
    try:
        t = _dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.timezone.utc)
    return t.timestamp()


def smoke_numbers(doc: Mapping[str, Any]) -> Dict[str, Any]:
    """The numbers a smoke document carries, whatever its shape.

    Reads the single-GPU result, a job report (stages per rank under ``ranks``) and one rank's
    result, old (``{schema}``) or new (``{kind, schema_version}``): every stage list found, first
    value of each field wins. The only place that knows where smoke keeps its numbers.
    """
    stages: List[Dict[str, Any]] = [s for s in doc.get("stages") or [] if isinstance(s, dict)]
    for r in doc.get("ranks") or []:
        if isinstance(r, dict):
            stages += [s for s in r.get("stages") or [] if isinstance(s, dict)]
    ev: Dict[str, Dict[str, Any]] = {}
    verdicts: Dict[str, str] = {}
    for s in stages:
        name = str(s.get("name"))
        e = s.get("evidence")
        for k, v in e.items() if isinstance(e, dict) else ():
            ev.setdefault(name, {}).setdefault(k, v)
        if verdicts.get(name) != "fail":
            verdicts[name] = str(s.get("verdict"))
    bw = doc.get("bandwidth")
    if not isinstance(bw, dict):
        bw = ev.get("bandwidth", {})
    tr, tp, tx = ev.get("training", {}), ev.get("throughput", {}), ev.get("transfers", {})
    return {
        "passed": {"pass": 1, "fail": 0}.get(str(doc.get("status"))),
        "elapsed_s": _num(doc.get("elapsed_s")),
        "when": epoch(doc.get("generated_at") or doc.get("finished_at")),
        "test_accuracy": _num(tr.get("test_accuracy")),
        "time_to_accuracy_s": _num(tr.get("time_to_target_s")),
        "training_samples_per_s": _num(tr.get("samples_per_s")),
        "cpu_samples_per_s": _num(tp.get("cpu_samples_per_s")),
        "device_samples_per_s": _num(tp.get("device_samples_per_s")),
        "speedup": _num(tp.get("speedup")),
        "transfers_gbps": {k[:-5]: _num(v) for k, v in tx.items() if k.endswith("_gbps") and _num(v) is not None},
        "busbw_gbps": _num(bw.get("busbw_gbps")),
        "algbw_gbps": _num(bw.get("algbw_gbps")),
        "stages": verdicts,
    }
