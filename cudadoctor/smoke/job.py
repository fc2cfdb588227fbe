"""The job report of `cudadoctor smoke --distributed`, from every rank's result (pure: no I/O, no torch).

Rank 0 gathers each rank's row (its stages, status, error and last progress mark), the check-ins and
the progress marks, and :func:`combine` makes ONE report (kind ``cudadoctor-smoke-job``): the ranks,
the ranks at fault (:func:`blame`), the bandwidth sweep and the training, and the verdict.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..document import envelope

SECONDARY = ("aborted", "terminated", "collective")  # failures that follow from another rank's


def _progress_text(p: Optional[dict], now: float) -> str:
    if not p:
        return "no progress mark"
    ago = f", {now - p['t']:.1f} s ago" if p.get("t") else ""
    state = "in" if p.get("state") == "calling" else "finished"
    return f"last progress: {state} '{p.get('step')}' (step {p.get('seq')}{ago})"


def _culprit(rank: int, kind: str, reason: str) -> Dict[str, Any]:
    return {"rank": rank, "kind": kind, "reason": reason}


def latest_progress(a: Optional[dict], b: Optional[dict]) -> Optional[dict]:
    """The further of two progress marks (by step number, then calling < done)."""
    marks = [p for p in (a, b) if isinstance(p, dict)]
    return max(marks, key=lambda p: (p.get("seq") or 0, p.get("state") != "calling")) if marks else None


def blame(
    world_size: int,
    arrived: Dict[int, dict],
    results: Dict[int, dict],
    progress: Dict[int, dict],
    now: float,
    rank_timeout: float,
    terminated: bool = False,
    started: bool = True,
) -> List[Dict[str, Any]]:
    """The ranks at fault, each {"rank", "kind", "reason"} (not the ranks that only failed because of them):
    ranks that never checked in; with no result; with a failure of their own; and ranks *behind* (their
    last progress mark is at an earlier step than the furthest rank's: they never called the collective the
    others waited in). A crash while waiting for a rank behind is the library giving up (NCCL's watchdog),
    not a fault. An empty list for a failed job: every rank reached the same step, the collective failed."""
    out: List[Dict[str, Any]] = []
    for r in range(world_size):
        if r not in arrived and r not in results:
            why = "not started, crashed before connecting, or cannot reach MASTER_ADDR:MASTER_PORT"
            out.append(_culprit(r, "never-arrived", f"rank {r} never checked in within {rank_timeout:g} s ({why})"))
        elif r not in results and started:
            why = (
                "the launcher ended the job before it reported (its worker process probably died)"
                if terminated
                else f"no result within {rank_timeout:g} s (stalled, or its worker process died)"
            )
            host = (arrived.get(r) or {}).get("hostname")
            on = f" on {host}" if host else ""
            out.append(_culprit(r, "no-result", f"rank {r}{on}: {why}; {_progress_text(progress.get(r), now)}"))
    failing = [r for r, res in results.items() if res.get("status") != "pass"]
    if not failing and not out:
        return out
    marks = {r: latest_progress((results.get(r) or {}).get("progress"), progress.get(r)) for r in range(world_size)}
    seqs = {r: p.get("seq") or 0 for r, p in marks.items() if p}
    furthest = max(seqs.values()) if seqs else 0
    behind = [r for r in range(world_size) if (r in results or r in arrived) and seqs.get(r, 0) < furthest]
    named = {c["rank"] for c in out}
    for r in sorted(failing):
        e = results[r].get("error") or {}
        kind = e.get("kind")
        if kind in SECONDARY:
            continue
        waiting = (marks.get(r) or {}).get("state") == "calling" and seqs.get(r, 0) == furthest
        if kind == "crash" and waiting and any(b != r for b in behind):
            continue
        out.append(_culprit(r, kind or "fail", f"rank {r}: {e.get('message') or 'failed'}"))
        named.add(r)
    for r in behind:
        if r not in named:
            why = f"it never reached the collective the others waited in (step {furthest})"
            out.append(_culprit(r, "stalled", f"rank {r} stalled: {why}; {_progress_text(marks.get(r), now)}"))
    return sorted(out, key=lambda c: c["rank"])


def shared_gpus(results: Dict[int, dict]) -> List[Dict[str, Any]]:
    """Ranks on the same host whose device stage reports the same GPU UUID (a CUDA_VISIBLE_DEVICES or
    LOCAL_RANK mix-up; NCCL refuses it with "Duplicate GPU detected"). Pure."""
    seen: Dict[tuple, List[int]] = {}
    for r, res in sorted(results.items()):
        dev = next((s for s in res.get("stages") or [] if s.get("name") == "device"), None)
        uuid = ((dev or {}).get("evidence") or {}).get("uuid")
        if uuid:
            seen.setdefault((res.get("hostname"), uuid), []).append(r)
    fix = "check CUDA_VISIBLE_DEVICES and that each rank selects cuda:LOCAL_RANK"
    return [
        _culprit(ranks[1], "shared-gpu", f"ranks {', '.join(map(str, ranks))} on {host} use the same GPU (UUID {uuid}): {fix}")
        for (host, uuid), ranks in seen.items()
        if len(ranks) > 1
    ]


def _missing_row(r: int, arrived: dict, progress: dict, culprits: list, started: bool) -> dict:
    reason = next((c["reason"] for c in culprits if c["rank"] == r), None)
    status = "missing" if reason or started else "not-started"
    reason = reason or ("no result" if started else "not started: the job stopped before it began")
    return {
        "rank": r,
        "status": status,
        "hostname": (arrived.get(r) or {}).get("hostname"),
        "stages": [],
        "progress": progress.get(r),
        "error": {"kind": status, "message": reason},
    }


def _stage_evidence(row: dict, name: str) -> Optional[dict]:
    return next(
        (dict(s.get("evidence") or {}) for s in row.get("stages") or [] if s.get("name") == name and s.get("verdict") == "pass"),
        None,
    )


def _bandwidth(own: dict, backend: str, device: str) -> Optional[dict]:
    bw = _stage_evidence(own, "bandwidth")
    if bw is not None:
        bw["note"] = f"{backend} on {'CPU tensors' if device == 'cpu' else 'GPUs'}" + (
            " over TCP: these numbers measure the CPUs, memory and the TCP stack (loopback when all "
            "ranks are on one machine), not a GPU interconnect"
            if backend == "gloo"
            else ": compare busbw with the bottleneck link (NVLink, PCIe, network)"
        )
    return bw


def _error(status: str, culprits: list, results: Dict[int, dict]) -> Optional[dict]:
    if status == "pass":
        return None
    if culprits:
        reasons = "; ".join(c["reason"] for c in culprits)
        return {"kind": "rank-failure", "ranks": sorted({c["rank"] for c in culprits}), "message": reasons}
    msgs = sorted({(r.get("error") or {}).get("message", "") for r in results.values() if r.get("status") != "pass"})
    why = "every rank reached the same step; the collective itself failed: " + " | ".join(msgs)
    return {"kind": "collective", "ranks": [], "message": why}


def combine(
    job: Dict[str, Any],
    results: Dict[int, dict],
    arrived: Dict[int, dict],
    progress: Dict[int, dict],
    now: float,
    started: bool = True,
) -> Dict[str, Any]:
    """The job report. ``job``: rank (this one, 0), world_size, device, backend, rank_timeout_s, info (the
    launch), network, env, terminated, elapsed_s."""
    n, T = job["world_size"], job["rank_timeout_s"]
    culprits = blame(n, arrived, results, progress, now, T, job["terminated"], started)
    shared = shared_gpus(results) if job["backend"] == "nccl" else []  # Gloo may share a GPU on purpose
    culprits += shared
    status = "pass" if (len(results) == n and all(r.get("status") == "pass" for r in results.values()) and not shared) else "fail"
    own = results.get(job["rank"]) or {}
    info = job["info"]
    return envelope(
        "cudadoctor-smoke-job",
        {
            "status": status,
            "device": job["device"],
            "backend": job["backend"],
            "world_size": n,
            "rank_timeout_s": T,
            "master": {"addr": info["master_addr"], "port": info["master_port"]},
            "launcher": {
                "kind": info["launcher"],
                "run_id": info["run_id"],
                "restart_count": info["attempt"],
                "agent_store": info["agent_store"],
            },
            "network": job["network"],
            "env": job["env"],
            "ranks": [results.get(r) or _missing_row(r, arrived, progress, culprits, started) for r in range(n)],
            "culprits": culprits,
            "bandwidth": _bandwidth(own, job["backend"], job["device"]),
            "training": _stage_evidence(own, "training"),
            "data": own.get("data"),
            "error": _error(status, culprits, results),
            "terminated_by_launcher": job["terminated"],
            "elapsed_s": job["elapsed_s"],
            "generated_unix": now,
        },
    )


def rank_document(row: Dict[str, Any], info: Dict[str, Any], backend: str) -> Dict[str, Any]:
    """One rank's own file (--per-rank, kind ``cudadoctor-smoke-rank``): its row and where it stood in the job."""
    d = {
        "rank": row.get("rank"),
        "world_size": info["world_size"],
        "local_rank": info["local_rank"],
        "host": row.get("hostname"),
        "backend": backend,
        "master_addr": info["master_addr"],
        "master_port": info["master_port"],
        "run_id": info["run_id"],
    }
    return envelope("cudadoctor-smoke-rank", dict(row, distributed=d))
