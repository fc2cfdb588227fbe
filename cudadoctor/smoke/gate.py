"""The smoke's diagnosis: when the workload's device stage fails, say why the way `check` does.

A healthy GPU imports torch once per smoke (in the workload child): the diagnosis, which imports torch
again in check's own probe child, runs only after the workload has shown that the device is not usable
(its device stage failed, or the child died or hung there), never in series before it.

Standard library plus cudadoctor's own diagnosis; never imports torch in this process.
"""

from __future__ import annotations

import time
from typing import Optional

from ..document import envelope
from .runner import run_smoke


def diagnosis_gate(python: str, device: str) -> Optional[dict]:
    """A failed smoke result naming the diagnosis when `check` says PyTorch cannot use a GPU, else None."""
    from .. import registry
    from ..probes import collect
    from ..report import diagnose

    t0 = time.monotonic()
    report = diagnose(collect(python=python), registry.load())
    verdict = report.verdict()
    if verdict["state"] != "no":
        return None
    errors = [f for f in report.findings if f.severity == "error"]
    return envelope(
        "cudadoctor-smoke",
        {
            "device": device,
            "status": "fail",
            "python": python,
            "stages": [
                {
                    "name": "device",
                    "verdict": "fail",
                    "device": device,
                    "duration_s": round(time.monotonic() - t0, 3),
                    "message": "the GPU is not usable: " + ", ".join(dict.fromkeys(f.code for f in errors)),
                    "evidence": {"verdict": verdict["text"]},
                }
            ],
            "data": {"source": None, "path": None, "torchvision": None},
            "error": {
                "kind": "gpu-unusable",
                "message": verdict["text"] + " (nothing was trained; details: cudadoctor check)",
                "diagnosis": [{"code": f.code, "title": f.title, "fix": list(f.fix.commands), "why": f.fix.why} for f in errors],
            },
        },
    )


#: Errors that stop the workload before it tries the device: then whether the GPU is usable is still unknown,
#: and a GPU that is not says more than the missing data set (the user ran smoke to check the GPU).
_BEFORE_THE_DEVICE = ("data-missing", "data-corrupt", "download-failed")


def needs_diagnosis(result: dict) -> bool:
    """Whether the workload could not use its device (a device stage failed: the child's own verdict, or the
    stage it died or hung in), or stopped before trying it."""
    if any(s.get("name") == "device" and s.get("verdict") == "fail" for s in result.get("stages") or []):
        return True
    return (result.get("error") or {}).get("kind") in _BEFORE_THE_DEVICE


def smoke_with_diagnosis(
    python: str,
    device: str,
    data_dir: Optional[str],
    download: bool,
    synthetic: bool,
    epochs: Optional[int],
    timeout_s: float,
    progress: bool,
    fetch: bool = False,
) -> dict:
    """The workload first; the diagnosis only when its device stage failed. The workload's own stages are kept
    (what it saw), and the diagnosis names the cause and its fix in ``error`` (kind ``gpu-unusable``)."""
    result = run_smoke(python, device, data_dir, download, synthetic, epochs, timeout_s, progress, fetch=fetch)
    if device == "cpu" or not needs_diagnosis(result):
        return result
    gate = diagnosis_gate(python, device)
    if gate is None:  # check finds nothing that stops the GPU: the workload's own account stands
        return result
    if not result.get("stages"):  # stopped before the device (no data): the diagnosis is the whole answer
        gate["error"]["workload"] = result.get("error")
        return gate
    seen = result.get("error") or {}
    result["error"] = dict(gate["error"], workload=seen) if seen else gate["error"]
    result["status"] = "fail"
    for s in result.get("stages") or []:
        if s.get("name") == "device" and s.get("verdict") == "fail":
            s.setdefault("evidence", {})["diagnosis"] = [d["code"] for d in gate["error"]["diagnosis"]]
    return result
