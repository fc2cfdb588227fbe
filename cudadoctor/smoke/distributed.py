"""Parent side of `cudadoctor smoke --distributed`: one rank of a torchrun / srun launch.

Standard library only; never imports torch. Reads where this process stands in the job
(:func:`rendezvous`), runs cudadoctor/smoke/dist_workload.py in a watched child (the same
watchdog as the single-GPU smoke: a crash or a hang becomes a failed stage naming where it
happened), and returns the result (the smoke's schema 1 plus a ``distributed`` block).
"""
from __future__ import annotations

import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Dict, Mapping, Optional

from .runner import SCHEMA, _read_result, _stage, died_in_stage, run_watched

WORKLOAD = Path(__file__).resolve().with_name("dist_workload.py")
STAGES = ("init", "membership", "all-reduce", "bandwidth", "ddp")
DEFAULT_PORT = 29500


class RendezvousError(ValueError):
    """This process is not one rank of a launch: a one-line message for the user."""


def _int(env: Mapping[str, str], *names: str) -> Optional[int]:
    for n in names:
        v = env.get(n)
        if v is not None and v.strip():
            try:
                return int(v)
            except ValueError:
                raise RendezvousError(f"{n}={v!r} is not an integer") from None
    return None


def rendezvous(env: Mapping[str, str]) -> Dict[str, object]:
    """Rank, world size, local rank and master of this process, from torchrun's variables
    (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or else Slurm's (SLURM_PROCID,
    SLURM_NTASKS, SLURM_LOCALID; MASTER_ADDR must then be exported by the job script)."""
    rank = _int(env, "RANK", "SLURM_PROCID")
    world = _int(env, "WORLD_SIZE", "SLURM_NTASKS")
    if rank is None or world is None:
        raise RendezvousError(
            "--distributed runs as one rank of a launch: start it with torchrun "
            "(torchrun --nproc-per-node=N --no-python cudadoctor smoke --distributed) or srun; "
            "RANK/WORLD_SIZE (or SLURM_PROCID/SLURM_NTASKS) are not set")
    local = _int(env, "LOCAL_RANK", "SLURM_LOCALID")
    if local is None:
        local = 0 if world == 1 else None
    if local is None:
        raise RendezvousError("LOCAL_RANK (or SLURM_LOCALID) is not set: which GPU is this rank's?")
    if not 0 <= rank < world:
        raise RendezvousError(f"rank {rank} is outside 0..{world - 1} (WORLD_SIZE {world})")
    if local < 0:
        raise RendezvousError(f"LOCAL_RANK {local} is negative")
    addr = (env.get("MASTER_ADDR") or "").strip()
    if not addr:
        if world == 1:
            addr = "127.0.0.1"
        else:
            raise RendezvousError(
                "MASTER_ADDR is not set: under srun export it in the job script, e.g. "
                "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)")
    port = _int(env, "MASTER_PORT")
    port = DEFAULT_PORT if port is None else port
    if not 0 < port < 65536:
        raise RendezvousError(f"MASTER_PORT {port} is not a port number")
    return {"rank": rank, "world_size": world, "local_rank": local, "master_addr": addr, "master_port": port}


def run_distributed(python: str, device: str, timeout_s: float, rdzv: Dict[str, object],
                    progress: bool = False) -> dict:
    """Run this rank's distributed smoke with ``python`` in a watched child; the result dict."""
    kind = "cpu" if device == "cpu" else "cuda"
    collective_timeout = max(5.0, timeout_s * 0.4)
    cfg = {"device": kind, "rank": rdzv["rank"], "world_size": rdzv["world_size"],
           "local_rank": rdzv["local_rank"], "timeout_s": timeout_s, "collective_timeout_s": collective_timeout}
    dist_info = {**rdzv, "host": socket.gethostname(), "backend": None, "collective_timeout_s": collective_timeout}
    base = {"schema": SCHEMA, "kind": "cudadoctor-smoke-distributed", "device": kind, "status": "error", "stages": [],
            "data": {"source": None, "path": None, "torchvision": None}, "error": None, "timeout_s": timeout_s,
            "python": python, "distributed": dist_info}
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1",
               RANK=str(rdzv["rank"]), WORLD_SIZE=str(rdzv["world_size"]), LOCAL_RANK=str(rdzv["local_rank"]),
               MASTER_ADDR=str(rdzv["master_addr"]), MASTER_PORT=str(rdzv["master_port"]))
    with tempfile.TemporaryDirectory(prefix="cudadoctor-dsmoke-") as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [python, str(WORKLOAD), "--config", json.dumps(cfg), "--out", out]
        # torchrun stops every rank when one fails: catch_sigterm says so in this rank's report
        # instead of dying without one (and without leaving the child behind)
        w = run_watched(cmd, env, progress, timeout_s, catch_sigterm=True)
        if isinstance(w, str):
            base["error"] = {"kind": "bad-interpreter", "message": f"cannot run {python}: {w}"}
            return base
        child = _read_result(out)
    return _assemble(base, child, w.rc, w.timed_out, w.killed, w.elapsed, timeout_s, w.stderr_tail, w.terminated)


def _assemble(r: dict, child: Optional[dict], rc, timed_out: bool, killed, elapsed: float, timeout_s: float,
              stderr_tail: str, terminated: Optional[str] = None) -> dict:
    r["elapsed_s"] = round(elapsed, 3)
    r["exit_code"] = rc
    if child:
        r["stages"] = child.get("stages", [])
        r["env"] = child.get("env", {})
        got = child.get("distributed") or {}
        r["distributed"].update({k: v for k, v in got.items() if v is not None and k in ("backend", "host")})
    finished = bool(child) and child.get("state") == "finished"
    current = (child or {}).get("current") or {}
    plan = [p[0] for p in (child or {}).get("plan") or []] or list(STAGES)
    all_done = bool(child) and not current and {s.get("name") for s in r["stages"]} >= set(plan)
    if (finished and not timed_out and rc is not None and rc >= 0) or all_done:
        failed = [s for s in r["stages"] if s.get("verdict") == "fail"]
        r["status"] = "fail" if failed else (child.get("status") or "pass")
        if failed:
            s = failed[0]
            r["error"] = {"kind": "stage-failed", "message": f"stage '{s['name']}' failed: {s.get('message')}",
                          "stage": s["name"]}
            hint = _hint(s, r)
            if hint:
                r["error"]["hint"] = hint
        if not finished:  # every stage had a verdict; it was stopped while leaving the process group
            how = f"stopped by the launcher ({terminated})" if terminated else ("timed out" if timed_out else f"exit code {rc}")
            r.setdefault("notes", []).append(f"the rank was {how} after its last stage, while leaving the process group")
        return r
    stage_name, stage_dev, what, kind, dur, ev = died_in_stage(
        child, rc, timed_out, killed, timeout_s, elapsed, stderr_tail, "init", r["device"], terminated)
    r["stages"].append(_stage(stage_name, stage_dev, "fail", what, dur, ev))
    done = {s["name"] for s in r["stages"]}
    for name in STAGES:
        if name not in done:
            r["stages"].append(_stage(name, stage_dev, "skip", f"not run: the rank died in '{stage_name}'"))
    r["status"] = "fail"
    r["error"] = {"kind": kind, "message": what, "stage": stage_name, "signal": ev["signal"],
                  "stderr_tail": stderr_tail}
    hint = _hint({"name": stage_name, "message": what + "\n" + stderr_tail}, r)
    if hint:
        r["error"]["hint"] = hint
    return r


def _hint(stage: dict, r: dict) -> Optional[str]:
    """What a failure in a collective stage most often means."""
    msg = str(stage.get("message") or "")
    d = r.get("distributed") or {}
    master = f"{d.get('master_addr')}:{d.get('master_port')}"
    if "Duplicate GPU" in msg or "both use the same GPU" in msg:
        return "two ranks share a GPU: one rank per GPU (--nproc-per-node = GPUs per node, LOCAL_RANK -> cuda:LOCAL_RANK)"
    timeoutish = any(w in msg.lower() for w in ("timed out", "timeout", "connection refused", "connect", "socket"))
    if stage.get("name") == "init" and timeoutish:
        return (f"not every one of the {d.get('world_size')} ranks reached {master} in time: a rank failed before "
                "joining (see its report), MASTER_ADDR/MASTER_PORT are not reachable from every node (firewall), "
                "or the ranks disagree on WORLD_SIZE")
    if timeoutish:
        return ("a collective did not complete: another rank failed or left (see the other ranks' reports), or the "
                "ranks cannot reach each other over the network the backend chose (NCCL: NCCL_SOCKET_IFNAME, "
                "NCCL_IB_HCA, run with NCCL_DEBUG=INFO; gloo: GLOO_SOCKET_IFNAME)")
    return None


def render_header(result: dict) -> str:
    d = result.get("distributed") or {}
    return (f"rank {d.get('rank')} of {d.get('world_size')} (local rank {d.get('local_rank')}) on {d.get('host')}, "
            f"backend {d.get('backend') or '?'}, master {d.get('master_addr')}:{d.get('master_port')}")


def numbers(result: dict) -> list:
    out = []
    for s in result.get("stages", []):
        ev = s.get("evidence") or {}
        if s["name"] == "membership" and ev.get("hosts"):
            out.append(("nodes", f"{ev.get('nodes')}: " + ", ".join(f"{h} ranks {r}" for h, r in list(ev["hosts"].items())[:8])
                        + (" …" if len(ev["hosts"]) > 8 else "")))
        if s["name"] == "bandwidth" and "busbw_gbps" in ev:
            out.append(("all_reduce", f"{ev['bytes'] >> 20} MiB in {ev['time_ms']} ms: algorithm bandwidth "
                        f"{ev['algbw_gbps']} GB/s, bus bandwidth {ev['busbw_gbps']} GB/s"))
        if s["name"] == "ddp" and "step_ms" in ev:
            out.append(("ddp", f"{ev['steps']} steps, {ev['step_ms']} ms/step, loss {ev['mean_loss_first5']} -> "
                        f"{ev['mean_loss_last5']}"))
    return out


def render(result: dict, fmt: str) -> str:
    from .render import render as smoke_render

    if fmt == "json":
        return smoke_render(result, "json")
    body = smoke_render(result, fmt)
    head = render_header(result)
    nums = numbers(result)
    hint = (result.get("error") or {}).get("hint")
    if fmt == "markdown":
        lines = body.rstrip("\n").split("\n")
        lines[0] = lines[0].replace("cudadoctor smoke", "cudadoctor smoke --distributed", 1)
        lines[1:1] = ["", head.replace("|", "\\|")]
        extra = [f"| {k} | {str(v).replace('|', chr(92) + '|')} |" for k, v in nums]
        if extra:
            lines += ["", "| | |", "|---|---|"] + extra
        if hint:
            lines += ["", f"Hint: {hint}"]
        return "\n".join(lines) + "\n"
    lines = body.rstrip("\n").split("\n")
    lines[0] = lines[0].replace("cudadoctor smoke", "cudadoctor smoke --distributed", 1)
    lines.insert(1, head)
    if nums:
        w = max(len(k) for k, _ in nums)
        at = next((i for i, ln in enumerate(lines) if ln.startswith("error (")), len(lines))
        if at < len(lines):
            at -= 1  # before the blank line that precedes the error
        lines[at:at] = [""] + [f"  {k:<{w}}  {v}" for k, v in nums]
    if hint:
        lines += ["", f"hint: {hint}"]
    return "\n".join(lines) + "\n"
