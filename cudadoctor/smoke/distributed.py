"""`cudadoctor smoke --distributed`: one rank of a torchrun (or srun) job; rank 0 writes ONE job report.

Each rank checks in to the job's TCPStore, runs dist_workload.py in a watched child (a crash or a hang
is a failed stage of this rank), posts its row, and tells the others to stop (``abort``) when it failed;
rank 0 waits at most --rank-timeout for every check-in and row and makes the report (job.combine).
docs/smoke.md has the protocol. Only the store comes from torch here (no CUDA, no collectives).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

from ..probes.network import network_info
from ..probes.system import SECRET_NAME, scrub_value
from . import job
from .kit import fault_for, stage_row
from .runner import Terminated, Watched, died_in_stage, raise_terminated, run_child

CHILD = Path(__file__).resolve().with_name("dist_workload.py")
STAGES = ("device", "init", "all-reduce", "broadcast", "training", "bandwidth")
DEFAULT_RANK_TIMEOUT_S = 60.0
DEFAULT_PORT = 29500
POLL_S = 0.1
KIB, MIB = 1024, 1024 * 1024

# the launcher's variables (torchrun's, then Slurm's) and two that decide what a rank uses
LAUNCH_VARS = tuple(
    "RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE GROUP_RANK GROUP_WORLD_SIZE ROLE_RANK ROLE_WORLD_SIZE MASTER_ADDR "
    "MASTER_PORT TORCHELASTIC_RUN_ID TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_USE_AGENT_STORE "
    "SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_JOB_ID CUDA_VISIBLE_DEVICES OMP_NUM_THREADS".split()
)
ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_", "GLOO_", "TORCH_DISTRIBUTED_", "TP_SOCKET_IFNAME", "UCX_", "FI_")

BACKENDS = ("auto", "nccl", "gloo")
RUN_HINT = "torchrun --standalone --nproc-per-node N -m cudadoctor smoke --distributed"


class LaunchError(Exception):
    """The environment is not a distributed launch we can use (bad input, exit 2); one line."""


# -- Where this rank stands: the one launch parser (torchrun's variables, else Slurm's)


def _int(env: Mapping[str, str], *names: str) -> Optional[int]:
    for n in names:
        v = env.get(n)
        if v is not None and v.strip():
            try:
                return int(v)
            except ValueError:
                raise LaunchError(f"{n}={v!r} is not an integer") from None
    return None


def launch_info(environ: Mapping[str, str]) -> Dict[str, Any]:
    """Rank, world size, local rank and master of this process, from torchrun's variables (RANK,
    WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or else Slurm's (SLURM_PROCID, SLURM_NTASKS,
    SLURM_LOCALID; MASTER_ADDR must then be exported by the job script). LaunchError if unusable."""
    rank, world = _int(environ, "RANK", "SLURM_PROCID"), _int(environ, "WORLD_SIZE", "SLURM_NTASKS")
    if rank is None or world is None:
        raise LaunchError(
            "--distributed runs as one rank of a launch: RANK/WORLD_SIZE (or SLURM_PROCID/"
            f"SLURM_NTASKS) are not set. Start it with: {RUN_HINT} (or srun)"
        )
    local = _int(environ, "LOCAL_RANK", "SLURM_LOCALID")
    if local is None and world != 1:
        raise LaunchError("LOCAL_RANK (or SLURM_LOCALID) is not set: which GPU is this rank's?")
    if world < 1 or not 0 <= rank < world:
        raise LaunchError(f"RANK={rank} is not in 0..WORLD_SIZE-1 (WORLD_SIZE={world})")
    addr = (environ.get("MASTER_ADDR") or "").strip() or ("127.0.0.1" if world == 1 else "")
    if not addr:
        raise LaunchError(
            "MASTER_ADDR is not set: under srun export it in the job script, e.g. "
            'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)'
        )
    port = _int(environ, "MASTER_PORT")
    port = DEFAULT_PORT if port is None else port
    if not 0 < port < 65536:
        raise LaunchError(f"MASTER_PORT={port} is not a TCP port")
    torchrun = bool(environ.get("TORCHELASTIC_RUN_ID"))
    return {
        "rank": rank,
        "world_size": world,
        "local_rank": local or 0,
        "local_world_size": _int(environ, "LOCAL_WORLD_SIZE"),
        "master_addr": addr,
        "master_port": port,
        "agent_store": environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
        "run_id": environ.get("TORCHELASTIC_RUN_ID") or environ.get("SLURM_JOB_ID") or "none",
        "attempt": environ.get("TORCHELASTIC_RESTART_COUNT") or "0",
        "launcher": "torchrun" if torchrun else "slurm" if environ.get("SLURM_PROCID") else "environment variables",
    }


def choose_backend(device: str, requested: Optional[str]) -> str:
    """The process group's backend: ``auto`` (or nothing) is NCCL for --device cuda and Gloo for the CPU;
    Gloo may also run on GPUs (CUDA tensors). LaunchError for an unknown name or NCCL on the CPU."""
    want = (requested or "auto").strip().lower()
    if want not in BACKENDS:
        raise LaunchError(f"backend {requested!r}: expected one of {', '.join(BACKENDS)}")
    if want == "nccl" and device == "cpu":
        raise LaunchError("the NCCL backend needs GPUs: --backend nccl goes with --device cuda")
    return want if want != "auto" else "nccl" if device == "cuda" else "gloo"


# -- Network interface, NCCL/Gloo variables (pure or stdlib); the store


def relevant_env(environ) -> Dict[str, str]:
    """NCCL_*, TORCH_NCCL_*, GLOO_* ... and the launcher's variables (secret-looking names dropped)."""
    return {
        k: scrub_value(str(environ[k])[:1024])
        for k in sorted(environ)
        if not SECRET_NAME.search(k) and (k in LAUNCH_VARS or k.startswith(ENV_PREFIXES))
    }


class Store:
    def __init__(self, info: Dict[str, Any], timeout_s: float):
        from torch.distributed import PrefixStore, TCPStore  # the only torch this process touches

        self.prefix = f"cudadoctor-smoke/{info['run_id']}/{info['attempt']}/"
        self.hosting = info["rank"] == 0 and not info["agent_store"]  # under srun rank 0 hosts it
        size, wait = info["world_size"] if self.hosting else None, timedelta(seconds=timeout_s)
        tcp = TCPStore(info["master_addr"], info["master_port"], size, self.hosting, wait, wait_for_workers=False)
        self.s = PrefixStore(self.prefix, tcp)

    def set(self, key: str, value: Any) -> None:
        self.s.set(key, json.dumps(value, default=str))

    def first_set(self, key: str, value: Any) -> None:
        """Set key unless it exists (the first rank to fail is the one named in ``abort``)."""
        self.s.compare_set(key, "", json.dumps(value, default=str))

    def get(self, key: str) -> Any:
        """The value, or None when the key is not set (never blocks)."""
        if not self.s.check([key]):
            return None
        raw = self.s.get(key)
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw

    def has(self, key: str) -> bool:
        return bool(self.s.check([key]))


# -- One rank


def _sweep_cfg() -> Dict[str, int]:
    """CUDADOCTOR_SMOKE_SWEEP=MAX_BYTES[:ITERS] shrinks the sweep (tests); default 1 KiB..64 MiB."""
    mx, _, it = os.environ.get("CUDADOCTOR_SMOKE_SWEEP", "").partition(":")
    cfg = {"min_bytes": KIB, "max_bytes": 64 * MIB}
    with contextlib.suppress(ValueError):
        if mx:
            cfg["max_bytes"] = max(KIB, int(mx))
        if it:
            cfg["iters"] = max(1, int(it))
    return cfg


def _stage_error(stages) -> Optional[dict]:
    """The error of the first failed stage: its own failure (device, data, a WRONG result) or a collective
    that failed while waiting for the others (kind "collective": job.blame decides who is behind)."""
    failed = next((s for s in stages if s["verdict"] == "fail"), None)
    if not failed:
        return None
    name, msg = failed["name"], str(failed["message"])
    own = "WRONG" in msg or "no data on rank" in msg or "test accuracy" in msg or "replicas diverged" in msg
    kind = "collective" if name in STAGES[1:] and not own else name
    return {"kind": kind, "stage": name, "message": f"stage '{name}': {msg}"}


class Rank:
    def __init__(self, info, cfg: Dict[str, Any], python: str, environ):
        self.info = info
        self.r, self.n = info["rank"], info["world_size"]
        self.cfg = cfg  # device, rank_timeout_s, timeout_s, data_dir, synthetic, epochs
        self.device = cfg["device"]
        self.device_name = "cpu" if self.device == "cpu" else f"cuda:{info['local_rank']}"
        self.backend = choose_backend(self.device, cfg.get("backend"))
        self.T = cfg["rank_timeout_s"]
        self.python, self.env = python, environ
        self.hostname = socket.gethostname()
        self.store: Optional[Store] = None
        self.own: Optional[dict] = None  # this rank's row, once its workload has ended
        self.t0 = time.monotonic()
        self.terminated = False
        self.net = network_info(info["master_addr"], info["master_port"], self.backend, environ)

    @property
    def s(self) -> Store:
        """The job's store, once connected."""
        assert self.store is not None, "not connected to the store"
        return self.store

    def _wait_keys(self, keys: List[str], seconds: float) -> List[str]:
        """Poll until every key exists or the time is up; returns the missing keys."""
        deadline = time.monotonic() + seconds
        missing = list(keys)
        while True:
            missing = [k for k in missing if not self.s.has(k)]
            if not missing or time.monotonic() >= deadline:
                return missing
            time.sleep(POLL_S)

    def _row(self, status, stages, error, **extra) -> Dict[str, Any]:
        row = {
            "rank": self.r,
            "local_rank": self.info["local_rank"],
            "hostname": self.hostname,
            "pid": os.getpid(),
            "device": self.device_name,
            "status": status,
            "stages": stages,
            "error": error,
            "network": self.net,
            "elapsed_s": round(time.monotonic() - self.t0, 3),
        }
        row.update(extra)
        return row

    def connect(self) -> Optional[dict]:
        """Connect and check in; on failure, a failed row."""
        try:
            self.store = Store(self.info, self.T)
            self.store.set(
                f"arrived/{self.r}",
                {"hostname": self.hostname, "pid": os.getpid(), "t": time.time(), "local_rank": self.info["local_rank"]},
            )
            return None
        except Terminated:
            raise
        except Exception as e:
            where, text = f"{self.info['master_addr']}:{self.info['master_port']}", str(e).strip()
            why = f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
            msg = f"cannot reach the job's store at {where} within {self.T:g} s: {why}"
            return self._row("fail", [], {"kind": "store", "message": msg})

    def child(self) -> dict:
        """Run dist_workload.py under the watchdog (its own timeout; SIGTERM from the launcher). A failed or
        killed child is a failed stage of this rank."""
        cfg = dict(
            self.cfg,
            rank=self.r,
            world_size=self.n,
            local_rank=self.info["local_rank"],
            local_world_size=self.info.get("local_world_size"),
            backend=self.backend,
            master_addr=self.info["master_addr"],
            master_port=self.info["master_port"],
            prefix=self.s.prefix,
            sweep=_sweep_cfg(),
        )
        w, res = run_child(self.python, CHILD, cfg, False, self.cfg["timeout_s"], catch_sigterm=True)
        if isinstance(w, str):
            return self._row("fail", [], {"kind": "bad-interpreter", "message": f"cannot run {self.python}: {w}"})
        self.device_name = (res or {}).get("rank_device") or self.device_name  # as the workload placed it
        if w.terminated:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.terminated = True
        return self._assemble(res or {}, w)

    def _assemble(self, res: dict, w: Watched) -> dict:
        stages = list(res.get("stages") or [])
        extra = {"progress": res.get("progress"), "env": res.get("env") or {}, "exit_code": w.rc, "data": res.get("data")}
        tail = w.stderr_tail
        if res.get("state") == "finished":  # every stage has its verdict, whatever happened afterwards
            status, err = res.get("status") or "fail", res.get("error")
            if err and err.get("kind") == "timeout" and err.get("stage") in STAGES[1:]:
                err = dict(err, kind="collective")  # the watchdog fired while waiting for the others
            if status != "pass" and not err:
                err = _stage_error(stages)
            if w.terminated or w.timed_out or w.rc is None or w.rc < 0:
                how = w.terminated and f"stopped by the launcher ({w.terminated})" or w.killed or f"exit code {w.rc}"
                extra["notes"] = [f"the workload was {how} after its last stage, while leaving the process group"]
            return self._row(status, stages, err, stderr_tail=tail if status != "pass" else "", **extra)
        # no current stage: before the first one, or after the last one (tearing down the process group)
        name, dev, what, kind, dur, ev = died_in_stage(
            res or None, w, self.cfg["timeout_s"], "teardown" if stages else "device", self.device_name
        )
        err = {"kind": kind, "stage": name, "message": what}
        own = _stage_error(stages)
        if own and (kind in job.SECONDARY or own["kind"] not in job.SECONDARY):
            err = dict(own, then=what)  # it had already failed on its own before it was stopped
        stages.append(stage_row(name, dev, "fail", what, round(dur, 3), ev))
        done = {s["name"] for s in stages}
        stages += [stage_row(s, dev, "skip", f"not run: the workload stopped in '{name}'") for s in STAGES if s not in done]
        return self._row("fail", stages, err, stderr_tail=tail, **extra)

    # -- rank 0 ---------------------------------------------------------------------------------------
    def gather(self, own: dict, wait_s: float, started: bool = True) -> dict:
        if wait_s > 0 and self.store is not None:
            try:
                self._wait_keys([f"result/{r}" for r in range(self.n) if r != self.r], wait_s)
            except Terminated:
                self.terminated = True
            except Exception:
                pass
        results, arrived = {self.r: own}, {self.r: {"hostname": self.hostname}}
        progress: Dict[int, dict] = {}
        if self.store is not None:
            try:
                self._read_all(results, arrived, progress)
            except Terminated:  # SIGTERM is ignored from now on: read again, quickly
                self.terminated = True
                self._read_all(results, arrived, progress)
        ctx = {
            "rank": self.r,
            "world_size": self.n,
            "device": self.device,
            "backend": self.backend,
            "rank_timeout_s": self.T,
            "info": self.info,
            "network": self.net,
            "env": relevant_env(self.env),
            "terminated": self.terminated,
            "elapsed_s": round(time.monotonic() - self.t0, 3),
        }
        return job.combine(ctx, results, arrived, progress, time.time(), started)

    def _read_all(self, results, arrived, progress) -> None:
        for r in range(self.n):
            for name, d in (("result", results), ("arrived", arrived), ("progress", progress)):
                try:
                    v = None if r in d else self.s.get(f"{name}/{r}")
                except Exception:
                    v = None
                if v is not None:
                    d[r] = v

    def _post(self, own: dict) -> None:
        """Post this rank's row; a rank that failed (unless it was stopped) tells the others to stop."""
        with contextlib.suppress(Exception):
            if own["status"] != "pass" and (own.get("error") or {}).get("kind") not in ("aborted", "terminated"):
                self.s.first_set("abort", {"rank": self.r, "reason": (own.get("error") or {}).get("message")})
            self.s.set(f"result/{self.r}", own)

    def run(self):
        """(job report or None, exit code, this rank's row). Only rank 0 returns a report."""
        if fault_for("check-in", self.r) == "hang":
            sys.stderr.write(f"CUDADOCTOR_SMOKE_FAULT: rank {self.r} never checks in\n")
            while True:
                time.sleep(3600)
        failed = self.connect()
        if failed is not None:
            if self.r == 0:
                return self.gather(failed, 0), 1, failed
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: {failed['error']['message']}\n")
            return None, 1, failed
        return self._run_rank0() if self.r == 0 else self._run_other()

    def _run_rank0(self):
        missing = self._wait_keys([f"arrived/{r}" for r in range(self.n)], self.T)
        if missing:
            reason = f"rank(s) {', '.join(k.split('/')[1] for k in missing)} never checked in within {self.T:g} s"
            self.s.first_set("abort", {"rank": 0, "reason": reason})
            own = self._row("fail", [], {"kind": "aborted", "message": f"not started: {reason}"})
            return self.gather(own, 0, started=False), 1, own
        self.s.set("go", {"t": time.time()})
        own = self.own = self.child()
        self._post(own)
        rep = self.gather(own, 0 if self.terminated else self.T)
        with contextlib.suppress(Exception, Terminated):
            self.s.set("report", {"status": rep["status"]})
            if self.s.hosting:  # keep the store up until the others have read the verdict
                self._wait_keys([f"bye/{r}" for r in range(1, self.n)], min(self.T, 10.0))
        return rep, 0 if rep["status"] == "pass" else 1, own

    def _wait_go(self) -> Optional[str]:
        """None when rank 0 said go, else why the job did not start."""
        deadline = time.monotonic() + 2 * self.T + 10
        while time.monotonic() < deadline:
            if self.s.has("go"):
                return None
            if self.s.has("abort"):
                return f"rank 0 stopped the job before it started: {(self.s.get('abort') or {}).get('reason')}"
            time.sleep(POLL_S)
        return f"rank 0 did not start the job within {2 * self.T + 10:g} s"

    def _run_other(self):
        why = self._wait_go()
        if why:
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: {why}\n")
            return None, 1, self._row("fail", [], {"kind": "aborted", "message": why})
        own = self.own = self.child()
        self._post(own)
        if self.terminated:
            return None, 1, own
        verdict = None
        try:
            self._wait_keys(["report"], self.T + 10)
            verdict = self.s.get("report")
            self.s.set(f"bye/{self.r}", 1)
        except Terminated:
            raise
        except Exception:
            pass
        if own["status"] != "pass":  # no host name here: every output is redacted; the rank names it
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: FAIL: {(own.get('error') or {}).get('message')}\n")
        if verdict is None:
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: no report from rank 0\n")
            return None, 1, own
        return None, 0 if (verdict.get("status") == "pass" and own["status"] == "pass") else 1, own


def run_distributed(cfg: Dict[str, Any], python: Optional[str] = None, environ=None):
    """Run this rank: (job report or None, exit code, this rank's row); LaunchError when not launched as a job.
    ``cfg``: device (cuda|cpu), rank_timeout_s, timeout_s, and the data options (data_dir, synthetic, epochs)."""
    environ = os.environ if environ is None else environ
    info = launch_info(environ)
    import torch.distributed  # noqa: F401  (for the store: seconds on a busy node, before the clock starts)

    rank = Rank(info, cfg, python or sys.executable, environ)
    old = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        try:
            return rank.run()
        except Terminated:
            rank.terminated = True
            own = rank.own or rank._row("fail", [], {"kind": "terminated", "message": "terminated by the launcher (SIGTERM)"})
            if rank.r == 0 and rank.store is not None:
                return rank.gather(own, 0), 1, own
            return None, 1, own
    finally:
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, old)
