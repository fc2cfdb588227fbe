"""`cudadoctor smoke --distributed`: one rank of a torchrun job whose rank 0 writes ONE combined
report (see docs/smoke.md, "Distributed: one combined report"). The per-rank mode (--distributed --per-rank) is
cudadoctor/smoke/distributed.py.

Each rank process (a torchrun worker running `python -m cudadoctor smoke --distributed`) does:

1. check in: set ``arrived/<rank>`` in the job's TCPStore (torchrun's agent store, or one rank 0 hosts
   when launched by hand); rank 0 waits at most --rank-timeout seconds and names the ranks whose key is
   missing, then releases everyone with ``go`` (or stops the job with ``abort``);
2. run combined_workload.py (standalone: stdlib + torch) in a CHILD process under a watchdog: device stage,
   process group, exact all-reduce, exact broadcast, bandwidth sweep; a crash or a hang of the child is
   a failed stage of this rank, not a dead rank;
3. post its per-rank result as ``result/<rank>``; a rank whose child failed sets ``abort`` so that the
   other ranks stop their children instead of waiting in a collective;
4. rank 0 waits at most --rank-timeout for every ``result/<rank>``, names what is missing (with each
   missing rank's last progress mark), writes ONE combined report and publishes its status as ``report``.

This module imports torch.distributed for the store only (no CUDA, no collectives here): under torchrun
the interpreter has torch, it imported it to launch us. Everything else is the standard library, and
the pure parts (route lookup, blame, rendering) are testable without torch.
"""
from __future__ import annotations

import ipaddress
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..probes.system import SECRET_NAME, scrub_value
from .runner import _kill_group, _read_result, _signal_name, _StderrPump

CHILD = Path(__file__).resolve().with_name("combined_workload.py")
SCHEMA = 1
STAGES = ("device", "init", "allreduce", "broadcast", "bandwidth")
DEFAULT_RANK_TIMEOUT_S = 60.0
POLL_S = 0.1
KIB, MIB = 1024, 1024 * 1024

LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
               "ROLE_RANK", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
               "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_USE_AGENT_STORE",
               "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS")
ENV_PREFIXES = ("NCCL_", "TORCH_NCCL_", "GLOO_", "TORCH_DISTRIBUTED_", "TP_SOCKET_IFNAME", "UCX_", "FI_")

RUN_HINT = "torchrun --standalone --nproc-per-node N -m cudadoctor smoke --distributed"


class LaunchError(Exception):
    """The environment is not a distributed launch we can use (bad input, exit 2)."""


# ----------------------------------------------------------------------------------------------------
# Launch environment, network interface, NCCL/Gloo variables (pure or stdlib)
# ----------------------------------------------------------------------------------------------------

def launch_info(environ) -> Dict[str, Any]:
    """RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT/LOCAL_RANK as torchrun sets them; LaunchError if unusable."""
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if not environ.get(k)]
    if missing:
        raise LaunchError(f"--distributed needs a launcher: {', '.join(missing)} not set. Start it with: {RUN_HINT}")
    try:
        rank, world = int(environ["RANK"]), int(environ["WORLD_SIZE"])
        port = int(environ["MASTER_PORT"])
        local_rank = int(environ.get("LOCAL_RANK") or 0)
    except ValueError:
        raise LaunchError("RANK, WORLD_SIZE, LOCAL_RANK and MASTER_PORT must be integers "
                          f"(got RANK={environ.get('RANK')!r} WORLD_SIZE={environ.get('WORLD_SIZE')!r} "
                          f"MASTER_PORT={environ.get('MASTER_PORT')!r})") from None
    if world < 1 or not 0 <= rank < world:
        raise LaunchError(f"RANK={rank} is not in 0..WORLD_SIZE-1 (WORLD_SIZE={world})")
    if not 0 < port < 65536:
        raise LaunchError(f"MASTER_PORT={port} is not a TCP port")
    return {"rank": rank, "world_size": world, "local_rank": local_rank, "master_addr": environ["MASTER_ADDR"],
            "master_port": port, "agent_store": environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
            "run_id": environ.get("TORCHELASTIC_RUN_ID") or "none",
            "attempt": environ.get("TORCHELASTIC_RESTART_COUNT") or "0",
            "launcher": "torchrun" if environ.get("TORCHELASTIC_RUN_ID") else "environment variables"}


def relevant_env(environ) -> Dict[str, str]:
    """NCCL_*, TORCH_NCCL_*, GLOO_* ... and the launcher's variables (secret-looking names dropped)."""
    out = {}
    for k in sorted(environ):
        if SECRET_NAME.search(k):
            continue
        if k in LAUNCH_VARS or k.startswith(ENV_PREFIXES):
            out[k] = scrub_value(str(environ[k])[:1024])
    return out


def parse_route_table(text: str) -> List[Dict[str, Any]]:
    """/proc/net/route rows: iface, destination, mask (IPv4Address/int), gateway, metric."""
    rows = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        try:
            dest = int(f[1], 16)
            gw = int(f[2], 16)
            flags = int(f[3], 16)
            metric = int(f[6])
            mask = int(f[7], 16)
        except ValueError:
            continue
        if not flags & 0x1:  # RTF_UP
            continue
        # the kernel prints the addresses in host (little-endian on x86/arm) byte order
        to_ip = lambda v: ipaddress.IPv4Address(struct.pack("<I", v))  # noqa: E731
        rows.append({"iface": f[0], "destination": to_ip(dest), "mask": to_ip(mask), "gateway": to_ip(gw),
                     "metric": metric, "prefix": bin(mask).count("1")})
    return rows


def route_interface(ip: str, route_text: str) -> Optional[str]:
    """The interface of the most specific IPv4 route to ip in a /proc/net/route table (None if none)."""
    try:
        addr = ipaddress.IPv4Address(ip)
    except ValueError:
        return None
    if addr.is_loopback:
        return "lo"
    best = None
    for r in parse_route_table(route_text):
        if int(addr) & int(r["mask"]) == int(r["destination"]) & int(r["mask"]):
            key = (r["prefix"], -r["metric"])
            if best is None or key > best[0]:
                best = (key, r["iface"])
    return best[1] if best else None


def _resolve(host: str) -> Optional[str]:
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
        return infos[0][4][0] if infos else None
    except (OSError, UnicodeError):
        return None


def _local_ip_towards(ip: str, port: int) -> Optional[str]:
    """The source address the kernel picks to reach ip (a UDP connect sends no packet)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ip, port))
            return s.getsockname()[0]
    except OSError:
        return None


def network_info(master_addr: str, master_port: int, backend: str, environ) -> Dict[str, Any]:
    """Which interface this rank uses: the *_SOCKET_IFNAME a library will obey, else the route to MASTER_ADDR."""
    ip = _resolve(master_addr)
    info: Dict[str, Any] = {"master_addr": master_addr, "master_ip": ip, "local_ip": None, "interface": None,
                            "source": None, "nccl_socket_ifname": environ.get("NCCL_SOCKET_IFNAME"),
                            "gloo_socket_ifname": environ.get("GLOO_SOCKET_IFNAME")}
    if ip:
        info["local_ip"] = _local_ip_towards(ip, master_port)
    var = "NCCL_SOCKET_IFNAME" if backend == "nccl" else "GLOO_SOCKET_IFNAME"
    if environ.get(var):
        info.update(interface=environ[var], source=var)
        return info
    if ip:
        try:
            with open("/proc/net/route") as f:
                route = f.read()
        except OSError:
            route = ""
        iface = route_interface(ip, route)
        if iface:
            info.update(interface=iface, source="route to MASTER_ADDR (/proc/net/route)")
    if backend == "nccl":
        info["note"] = ("NCCL picks its own interface when NCCL_SOCKET_IFNAME is unset (it skips lo and docker* "
                        "unless nothing else is up); NCCL_DEBUG=INFO prints the one it chose")
    return info


def busbw_factor(n: int) -> float:
    """All-reduce bus bandwidth factor 2(n-1)/n (nccl-tests doc/PERFORMANCE.md)."""
    return 2.0 * (n - 1) / n if n > 0 else 0.0


# ----------------------------------------------------------------------------------------------------
# The store (torch.distributed.TCPStore) with JSON values and non-blocking reads
# ----------------------------------------------------------------------------------------------------

class Store:
    def __init__(self, info: Dict[str, Any], timeout_s: float):
        from torch.distributed import PrefixStore, TCPStore  # the only torch this process touches

        self.prefix = f"cudadoctor-smoke/{info['run_id']}/{info['attempt']}/"
        host_it = info["rank"] == 0 and not info["agent_store"]
        self.hosting = host_it
        base = TCPStore(info["master_addr"], info["master_port"], info["world_size"] if host_it else None,
                        host_it, timedelta(seconds=timeout_s), wait_for_workers=False)
        self.base = base
        self.s = PrefixStore(self.prefix, base)

    def set(self, key: str, value: Any) -> None:
        self.s.set(key, json.dumps(value, default=str))

    def first_set(self, key: str, value: Any) -> Any:
        """Set key unless it exists; return the value that is there afterwards."""
        new = json.dumps(value, default=str)
        got = self.s.compare_set(key, "", new)
        try:
            return json.loads(got)
        except (ValueError, TypeError):
            return value

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


# ----------------------------------------------------------------------------------------------------
# Blame: who is at fault, from per-rank results, check-ins and progress marks (pure)
# ----------------------------------------------------------------------------------------------------

SECONDARY = ("aborted", "terminated", "collective")  # failures that follow from another rank's


def _progress_text(p: Optional[dict], now: float) -> str:
    if not p:
        return "no progress mark"
    ago = f", {now - p['t']:.1f} s ago" if p.get("t") else ""
    state = "in" if p.get("state") == "calling" else "finished"
    return f"last progress: {state} '{p.get('step')}' (step {p.get('seq')}{ago})"


def latest_progress(a: Optional[dict], b: Optional[dict]) -> Optional[dict]:
    """The further of two progress marks (by step number, then calling < done)."""
    def key(p):
        return (p.get("seq") or 0, 1 if p.get("state") == "calling" else 2)
    marks = [p for p in (a, b) if isinstance(p, dict)]
    return max(marks, key=key) if marks else None


def blame(world_size: int, arrived: Dict[int, dict], results: Dict[int, dict], progress: Dict[int, dict],
          now: float, rank_timeout: float, terminated: bool = False, started: bool = True) -> List[Dict[str, Any]]:
    """The ranks at fault, each {"rank", "kind", "reason"}; ranks that only failed because of them are not listed.

    At fault: ranks that never checked in; ranks with no result; ranks with a failure of their own (device,
    a WRONG result, the store, a crash or a timeout of their own); and ranks that are *behind*: their last
    progress mark is at an earlier step than the furthest rank's, i.e. they never called the collective the
    others were waiting in. A crash while waiting in a collective that a rank behind never joined is the
    library giving up (NCCL's watchdog aborts the process), not a fault of its own. An empty list for a
    failed job means every rank reached the same step and the collective itself failed.
    """
    out: List[Dict[str, Any]] = []
    for r in range(world_size):
        if r not in arrived and r not in results:
            out.append({"rank": r, "kind": "never-arrived",
                        "reason": f"rank {r} never checked in within {rank_timeout:g} s (not started, crashed "
                                  "before connecting, or cannot reach MASTER_ADDR:MASTER_PORT)"})
        elif r not in results and started:
            why = ("the launcher ended the job before it reported (its worker process probably died)"
                   if terminated else f"no result within {rank_timeout:g} s (stalled, or its worker process died)")
            host = (arrived.get(r) or {}).get("hostname")
            out.append({"rank": r, "kind": "no-result",
                        "reason": f"rank {r}{' on ' + host if host else ''}: {why}; "
                                  f"{_progress_text(progress.get(r), now)}"})
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
        out.append({"rank": r, "kind": kind or "fail", "reason": f"rank {r}: {e.get('message') or 'failed'}"})
        named.add(r)
    for r in behind:
        if r not in named:
            out.append({"rank": r, "kind": "stalled",
                        "reason": f"rank {r} stalled: it never reached the collective the others waited in "
                                  f"(step {furthest}); {_progress_text(marks.get(r), now)}"})
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
    return [{"rank": ranks[1], "kind": "shared-gpu",
             "reason": f"ranks {', '.join(map(str, ranks))} on {host} use the same GPU (UUID {uuid}): check "
                       "CUDA_VISIBLE_DEVICES and that each rank selects cuda:LOCAL_RANK"}
            for (host, uuid), ranks in seen.items() if len(ranks) > 1]


# ----------------------------------------------------------------------------------------------------
# One rank
# ----------------------------------------------------------------------------------------------------

class Terminated(BaseException):
    """SIGTERM (the launcher ending the job). A BaseException so that no `except Exception` around a store
    call swallows it."""


def _on_sigterm(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the report must still be written after it
    raise Terminated(_signal_name(signum))


def _fault_for_parent(rank: int) -> Optional[str]:
    for part in os.environ.get("CUDADOCTOR_DIST_FAULT", "").split(","):
        who, _, what = part.strip().partition(":")
        if who == f"rank{rank}" and what == "absent":
            return what
    return None


def _sweep_cfg() -> Dict[str, int]:
    """CUDADOCTOR_DIST_SWEEP=MAX_BYTES[:ITERS] shrinks the sweep (tests); default 1 KiB..64 MiB."""
    spec = os.environ.get("CUDADOCTOR_DIST_SWEEP", "")
    cfg = {"min_bytes": KIB, "max_bytes": 64 * MIB}
    if spec:
        mx, _, it = spec.partition(":")
        try:
            cfg["max_bytes"] = max(KIB, int(mx))
            if it:
                cfg["iters"] = max(1, int(it))
        except ValueError:
            pass
    return cfg


class Rank:
    def __init__(self, info, device, rank_timeout, timeout_s, python, environ):
        self.info = info
        self.r = info["rank"]
        self.n = info["world_size"]
        self.device = device
        self.backend = "nccl" if device == "cuda" else "gloo"
        self.T = rank_timeout
        self.timeout_s = timeout_s
        self.python = python
        self.env = environ
        self.hostname = socket.gethostname()
        self.store: Optional[Store] = None
        self.own: Optional[dict] = None  # this rank's result, once its workload has ended
        self.t0 = time.monotonic()
        self.terminated = False
        self.net = network_info(info["master_addr"], info["master_port"], self.backend, environ)

    # -- helpers ------------------------------------------------------------------------------------
    def _wait_keys(self, keys: List[str], seconds: float) -> List[str]:
        """Poll until every key exists or the time is up; returns the missing keys."""
        deadline = time.monotonic() + seconds
        missing = list(keys)
        while True:
            missing = [k for k in missing if not self.store.has(k)]
            if not missing or time.monotonic() >= deadline:
                return missing
            time.sleep(POLL_S)

    def _rank_row(self, status, stages, error, **extra) -> Dict[str, Any]:
        row = {"rank": self.r, "local_rank": self.info["local_rank"], "hostname": self.hostname, "pid": os.getpid(),
               "device": "cpu" if self.device == "cpu" else f"cuda:{self.info['local_rank']}", "status": status,
               "stages": stages, "error": error, "network": self.net,
               "elapsed_s": round(time.monotonic() - self.t0, 3)}
        row.update(extra)
        return row

    # -- phases -------------------------------------------------------------------------------------
    def connect(self) -> Optional[dict]:
        """Connect and check in; on failure, a failed per-rank row."""
        try:
            self.store = Store(self.info, self.T)
            self.store.set(f"arrived/{self.r}", {"hostname": self.hostname, "pid": os.getpid(), "t": time.time(),
                                                 "local_rank": self.info["local_rank"]})
            return None
        except Terminated:
            raise
        except Exception as e:
            msg = (f"cannot reach the job's store at {self.info['master_addr']}:{self.info['master_port']} within "
                   f"{self.T:g} s: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
            return self._rank_row("fail", [], {"kind": "store", "message": msg})

    def child(self) -> dict:
        """Run combined_workload.py; watch it (own timeout, abort from another rank, SIGTERM). A failed or killed
        child is a failed stage of this rank."""
        cfg = {"rank": self.r, "world_size": self.n, "local_rank": self.info["local_rank"], "device": self.device,
               "backend": self.backend, "master_addr": self.info["master_addr"],
               "master_port": self.info["master_port"], "prefix": self.store.prefix, "rank_timeout_s": self.T,
               "timeout_s": self.timeout_s, "sweep": _sweep_cfg()}
        with tempfile.TemporaryDirectory(prefix="cudadoctor-dist-") as tmp:
            out = os.path.join(tmp, "result.json")
            env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
            try:
                proc = subprocess.Popen([self.python, str(CHILD), "--config", json.dumps(cfg), "--out", out],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        env=env, start_new_session=True)
            except OSError as e:
                return self._rank_row("fail", [], {"kind": "bad-interpreter", "message": f"cannot run {self.python}: {e}"})
            pump = _StderrPump(proc.stderr, False)
            pump.start()
            deadline = time.monotonic() + self.timeout_s
            why, killed, aborted_by, last_check = None, None, None, 0.0
            try:
                while proc.poll() is None:
                    now = time.monotonic()
                    if now > deadline:
                        why = "timeout"
                    elif now - last_check > 0.25:
                        last_check = now
                        try:
                            a = self.store.get("abort")
                        except Exception:
                            a = None
                        if a and a.get("rank") != self.r:
                            why, aborted_by = "aborted", a
                    if why:
                        killed = _kill_group(proc)
                        break
                    time.sleep(POLL_S)
            except Terminated:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                self.terminated = True
                why, killed = "terminated", _kill_group(proc)
            except BaseException:
                _kill_group(proc)
                raise
            rc = proc.returncode
            pump.join(timeout=2.0)
            try:
                proc.stderr.close()
            except Exception:
                pass
            res = _read_result(out) or {}
        return self._assemble(res, rc, why, killed, aborted_by, pump.tail())

    @staticmethod
    def _stage_error(stages) -> Optional[dict]:
        """The error of the first failed stage: its own failure (device, a WRONG result) or a collective
        that failed while waiting for the others (kind "collective": blame() decides who is behind)."""
        failed = next((s for s in stages if s["verdict"] == "fail"), None)
        if not failed:
            return None
        name, msg = failed["name"], str(failed["message"])
        kind = "collective" if name in STAGES[1:] and "WRONG" not in msg else name
        return {"kind": kind, "stage": name, "message": f"stage '{name}': {msg}"}

    def _assemble(self, res, rc, why, killed, aborted_by, tail) -> dict:
        stages = list(res.get("stages") or [])
        extra = {"progress": res.get("progress"), "env": res.get("env") or {}, "exit_code": rc}
        if res.get("state") == "finished" and why is None and rc is not None and rc >= 0:
            status = res.get("status") or "fail"
            err = res.get("error")
            if err and err.get("kind") == "timeout" and err.get("stage") in STAGES[1:]:
                err = dict(err, kind="collective")  # the watchdog fired while waiting for the others
            if status != "pass" and not err:
                err = self._stage_error(stages)
            return self._rank_row(status, stages, err, stderr_tail=tail if status != "pass" else "", **extra)
        cur = res.get("current") or {}
        # no current stage: before the first one, or after the last one (tearing down the process group)
        stage = cur.get("name") or ("teardown" if stages else "device")
        if why == "timeout":
            what, kind = f"timed out after {self.timeout_s:g} s in stage '{stage}' ({killed})", "timeout"
        elif why == "aborted":
            what = (f"stopped in stage '{stage}' because rank {aborted_by.get('rank')} failed "
                    f"({aborted_by.get('reason')}); child {killed}")
            kind = "aborted"
        elif why == "terminated":
            what, kind = f"terminated by the launcher (SIGTERM) in stage '{stage}'", "terminated"
        elif rc is not None and rc < 0:
            what, kind = f"child killed by signal {-rc} ({_signal_name(-rc)}) in stage '{stage}'", "crash"
        else:
            what = (f"child exited with code {rc} in stage '{stage}' without finishing" if res
                    else f"child exited with code {rc} before writing any result")
            kind = "crash"
        err = {"kind": kind, "stage": stage, "message": what}
        own = self._stage_error(stages)
        if own and (kind in SECONDARY or own["kind"] not in SECONDARY):
            err = dict(own, then=what)  # it had already failed on its own before it was stopped
        started = cur.get("started_unix")
        stages.append({"name": stage, "device": cur.get("device"), "verdict": "fail",
                       "duration_s": round(time.time() - started, 3) if started else 0.0, "message": what,
                       "evidence": {"exit_code": rc, "stderr_tail": tail}})
        done = {s["name"] for s in stages}
        stages += [{"name": s, "device": cur.get("device"), "verdict": "skip", "duration_s": 0.0,
                    "message": f"not run: the workload stopped in '{stage}'", "evidence": {}}
                   for s in STAGES if s not in done]
        return self._rank_row("fail", stages, err, stderr_tail=tail, **extra)

    # -- rank 0 ---------------------------------------------------------------------------------------
    def gather(self, own: dict, wait_s: float, started: bool = True) -> dict:
        keys = [f"result/{r}" for r in range(self.n) if r != self.r]
        if wait_s > 0:
            try:
                self._wait_keys(keys, wait_s)
            except Terminated:
                self.terminated = True
            except Exception:
                pass
        results, arrived, progress = {self.r: own}, {self.r: {"hostname": self.hostname}}, {}
        try:
            self._read_all(results, arrived, progress)
        except Terminated:  # SIGTERM is ignored from now on: read again, quickly
            self.terminated = True
            self._read_all(results, arrived, progress)
        return self.combine(results, arrived, progress, started)

    def _read_all(self, results, arrived, progress) -> None:
        for r in range(self.n):
            for name, d in (("result", results), ("arrived", arrived), ("progress", progress)):
                if r in d:
                    continue
                try:
                    v = self.store.get(f"{name}/{r}")
                except Exception:
                    v = None
                if v is not None:
                    d[r] = v

    def combine(self, results, arrived, progress, started: bool = True) -> dict:
        now = time.time()
        culprits = blame(self.n, arrived, results, progress, now, self.T, self.terminated, started)
        shared = shared_gpus(results)
        culprits += shared
        status = "pass" if (len(results) == self.n and all(r.get("status") == "pass" for r in results.values())
                            and not shared) else "fail"
        own = results.get(self.r) or {}
        bw = next((s.get("evidence") for s in own.get("stages", []) if s["name"] == "bandwidth"
                   and s["verdict"] == "pass"), None)
        if bw is not None:
            bw = dict(bw)
            bw["note"] = (f"{self.backend} on {'CPU tensors' if self.device == 'cpu' else 'GPUs'}"
                          + (" over TCP: these numbers measure the CPUs, memory and the TCP stack (loopback when "
                             "all ranks are on one machine), not a GPU interconnect" if self.backend == "gloo" else
                             ": compare busbw with the bottleneck link (NVLink, PCIe, network)"))
        err = None
        if status != "pass":
            if culprits:
                err = {"kind": "rank-failure", "ranks": sorted({c["rank"] for c in culprits}),
                       "message": "; ".join(c["reason"] for c in culprits)}
            else:
                msgs = sorted({(r.get("error") or {}).get("message", "") for r in results.values()
                               if r.get("status") != "pass"})
                err = {"kind": "collective", "ranks": [],
                       "message": "every rank reached the same step; the collective itself failed: " + " | ".join(msgs)}
        return {
            "schema": SCHEMA, "kind": "cudadoctor-smoke-distributed-combined", "mode": "distributed-combined", "status": status, "device": self.device,
            "backend": self.backend, "world_size": self.n, "rank_timeout_s": self.T,
            "master": {"addr": self.info["master_addr"], "port": self.info["master_port"]},
            "launcher": {"kind": self.info["launcher"], "run_id": self.info["run_id"],
                         "restart_count": self.info["attempt"], "agent_store": self.info["agent_store"]},
            "network": self.net, "env": relevant_env(self.env),
            "ranks": [results.get(r) or self._missing_row(r, arrived, progress, culprits, started)
                      for r in range(self.n)],
            "culprits": culprits, "bandwidth": bw, "error": err,
            "terminated_by_launcher": self.terminated,
            "elapsed_s": round(time.monotonic() - self.t0, 3), "generated_unix": now,
        }

    @staticmethod
    def _missing_row(r, arrived, progress, culprits, started) -> dict:
        reason = next((c["reason"] for c in culprits if c["rank"] == r), None)
        status = "missing"
        if reason is None:
            status, reason = ("not-started", "not started: the job stopped before it began") if not started \
                else ("missing", "no result")
        return {"rank": r, "status": status, "hostname": (arrived.get(r) or {}).get("hostname"), "stages": [],
                "progress": progress.get(r), "error": {"kind": status, "message": reason}}

    def _standalone_report(self, own: dict) -> dict:
        """Rank 0 without a store: what it knows alone."""
        rep = self.combine({self.r: own}, {self.r: {"hostname": self.hostname}}, {})
        return rep

    # -- the whole rank ---------------------------------------------------------------------------------
    def run(self):
        """Returns (report or None, exit code). Only rank 0 returns a report."""
        fault = _fault_for_parent(self.r)
        if fault == "absent":
            sys.stderr.write(f"CUDADOCTOR_DIST_FAULT: rank {self.r} never checks in\n")
            while True:
                time.sleep(3600)
        failed_row = self.connect()
        if failed_row is not None:
            if self.r == 0:
                return self._standalone_report(failed_row), 1
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: "
                             f"{failed_row['error']['message']}\n")
            return None, 1
        if self.r == 0:
            return self._run_rank0()
        return self._run_other()

    def _run_rank0(self):
        missing = self._wait_keys([f"arrived/{r}" for r in range(self.n)], self.T)
        if missing:
            reason = f"rank(s) {', '.join(k.split('/')[1] for k in missing)} never checked in within {self.T:g} s"
            self.store.first_set("abort", {"rank": 0, "reason": reason})
            own = self._rank_row("fail", [], {"kind": "aborted", "message": f"not started: {reason}"})
            rep = self.gather(own, 0, started=False)
            return rep, 1
        self.store.set("go", {"t": time.time()})
        own = self.own = self.child()
        if own["status"] != "pass" and (own.get("error") or {}).get("kind") not in ("aborted",):
            self.store.first_set("abort", {"rank": self.r, "reason": (own.get("error") or {}).get("message", "failed")})
        self.store.set(f"result/{self.r}", own)
        rep = self.gather(own, 0 if self.terminated else self.T)
        try:
            self.store.set("report", {"status": rep["status"]})
            if self.store.hosting:  # keep the store up until the others have read the verdict
                self._wait_keys([f"bye/{r}" for r in range(1, self.n)], min(self.T, 10.0))
        except (Exception, Terminated):
            pass
        return rep, 0 if rep["status"] == "pass" else 1

    def _run_other(self):
        got = None
        deadline = time.monotonic() + 2 * self.T + 10
        while got is None and time.monotonic() < deadline:
            if self.store.has("go"):
                got = "go"
            elif self.store.has("abort"):
                got = "abort"
            else:
                time.sleep(POLL_S)
        if got != "go":
            a = self.store.get("abort") if got else None
            msg = (f"rank 0 stopped the job before it started: {a.get('reason')}" if a
                   else f"rank 0 did not start the job within {2 * self.T + 10:g} s")
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: {msg}\n")
            return None, 1
        own = self.child()
        if own["status"] != "pass" and (own.get("error") or {}).get("kind") not in ("aborted", "terminated"):
            try:
                self.store.first_set("abort", {"rank": self.r, "reason": (own.get("error") or {}).get("message")})
            except Exception:
                pass
        try:
            self.store.set(f"result/{self.r}", own)
        except Exception:
            pass
        if self.terminated:
            return None, 1
        verdict = None
        try:
            deadline = time.monotonic() + self.T + 10
            while verdict is None and time.monotonic() < deadline:
                verdict = self.store.get("report")
                if verdict is None:
                    time.sleep(POLL_S)
            self.store.set(f"bye/{self.r}", 1)
        except Terminated:
            raise
        except Exception:
            pass
        if own["status"] != "pass":
            # No host name here: every output is redacted (docs/support.md); the rank names it.
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: FAIL: "
                             f"{(own.get('error') or {}).get('message')}\n")
        if verdict is None:
            sys.stderr.write(f"cudadoctor smoke --distributed: rank {self.r}: no report from rank 0\n")
            return None, 1
        return None, 0 if (verdict.get("status") == "pass" and own["status"] == "pass") else 1


def run_distributed(device: str, rank_timeout: float, timeout_s: float, python: Optional[str] = None,
                    environ=None):
    """Run this rank. Returns (report or None, exit code); LaunchError when not launched as a job."""
    environ = os.environ if environ is None else environ
    info = launch_info(environ)
    rank = Rank(info, device, rank_timeout, timeout_s, python or sys.executable, environ)
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        try:
            return rank.run()
        except Terminated:
            rank.terminated = True
            if rank.r == 0 and rank.store is not None:
                own = rank.own or rank._rank_row("fail", [], {"kind": "terminated",
                                                              "message": "terminated by the launcher (SIGTERM)"})
                return rank.gather(own, 0), 1
            return None, 1
    finally:
        try:
            signal.signal(signal.SIGTERM, old)
        except (ValueError, TypeError):
            pass


# ----------------------------------------------------------------------------------------------------
# Rendering
# ----------------------------------------------------------------------------------------------------

MARK = {"pass": "✓", "fail": "✗", "skip": "–"}


def _size(b: int) -> str:
    if b >= MIB and b % MIB == 0:
        return f"{b // MIB} MiB"
    if b >= KIB and b % KIB == 0:
        return f"{b // KIB} KiB"
    return f"{b} B"


def _stage_marks(row: dict) -> List[str]:
    by = {s["name"]: s["verdict"] for s in row.get("stages") or []}
    return [MARK.get(by.get(s), "?") if s in by else "·" for s in STAGES]


def _net_line(rep: dict) -> str:
    net = rep.get("network") or {}
    iface = net.get("interface") or "unknown"
    src = f" ({net['source']})" if net.get("source") else ""
    ip = f", local {net['local_ip']}" if net.get("local_ip") else ""
    return f"interface {iface}{src}{ip}"


def _headline(rep: dict) -> str:
    return (f"cudadoctor smoke --distributed ({rep.get('backend')}, {rep.get('world_size')} ranks, device "
            f"{rep.get('device')}): {str(rep.get('status')).upper()}")


def _collective_lines(rep: dict) -> List[str]:
    out = []
    rows = [r for r in rep.get("ranks") or [] if r.get("stages")]
    for name, what in (("allreduce", "all-reduce, exact"), ("broadcast", "broadcast from rank 0, exact")):
        verdicts = [next((s for s in r["stages"] if s["name"] == name), None) for r in rows]
        ok = [v for v in verdicts if v and v["verdict"] == "pass"]
        if ok and len(ok) == rep.get("world_size"):
            ev = ok[0].get("evidence") or {}
            extra = f": sum of {ev.get('contribution')} = {ev.get('expected')}" if name == "allreduce" else \
                f": {ev.get('elements')} elements, pattern {ev.get('pattern')}"
            out.append(f"{what} on every rank{extra}")
    return out


def _bw_rows(rep: dict) -> List[List[str]]:
    bw = rep.get("bandwidth") or {}
    return [[_size(r["bytes"]), f"{r['time_us']:.1f}", f"{r['algbw_gbps']:.3g}", f"{r['busbw_gbps']:.3g}",
             str(r["iters"])] for r in bw.get("rows") or []]


def render_text(rep: dict) -> str:
    lines = [_headline(rep)]
    m = rep.get("master") or {}
    lines.append(f"  master {m.get('addr')}:{m.get('port')}, {_net_line(rep)}; launcher "
                 f"{(rep.get('launcher') or {}).get('kind')}")
    env = {k: v for k, v in (rep.get("env") or {}).items() if k.startswith(ENV_PREFIXES)}
    lines.append("  " + (", ".join(f"{k}={v}" for k, v in env.items()) if env else "no NCCL_*/GLOO_* variables set"))
    lines.append("")
    lines.append("  rank  host             runs on  " + " ".join(f"{s[:9]:<9}" for s in STAGES) + "  result")
    for r in rep.get("ranks") or []:
        marks = _stage_marks(r)
        lines.append(f"  {r.get('rank'):>4}  {str(r.get('hostname') or '?')[:16]:<16} {str(r.get('device') or '?'):<8} "
                     + " ".join(f"{mk:<9}" for mk in marks) + f"  {r.get('status')}")
    coll = _collective_lines(rep)
    if coll:
        lines.append("")
        lines += ["  " + c for c in coll]
    bw = rep.get("bandwidth")
    if bw:
        lines.append("")
        lines.append(f"  all_reduce bandwidth ({bw.get('dtype')}, in place, {bw.get('world_size')} ranks; "
                     f"busbw = algbw x {bw.get('busbw_factor')}; GB/s = 1e9 B/s; slowest rank's mean time):")
        lines.append(f"  {'size':>8}  {'time (us)':>10}  {'algbw GB/s':>10}  {'busbw GB/s':>10}  {'iters':>5}")
        for row in _bw_rows(rep):
            lines.append(f"  {row[0]:>8}  {row[1]:>10}  {row[2]:>10}  {row[3]:>10}  {row[4]:>5}")
        lines.append(f"  note: {bw.get('note')}")
    if rep.get("status") != "pass":
        lines.append("")
        culprits = rep.get("culprits") or []
        if culprits:
            for c in culprits:
                lines.append(f"✗ {c['reason']}")
        elif rep.get("error"):
            lines.append(f"✗ {rep['error']['message']}")
        for r in rep.get("ranks") or []:
            e = r.get("error") or {}
            if r.get("status") != "pass" and e and not any(c["rank"] == r.get("rank") for c in culprits):
                lines.append(f"  rank {r.get('rank')} (follows from the above): {e.get('message')}")
        for r in rep.get("ranks") or []:
            tail = r.get("stderr_tail")
            if r.get("status") != "pass" and tail:
                lines.append(f"  last output of rank {r.get('rank')}'s workload:")
                lines += ["    " + ln for ln in tail.splitlines()[-10:]]
    lines.append("")
    lines.append(f"  total {rep.get('elapsed_s', 0):.1f} s on rank 0 (bounded waits: --rank-timeout "
                 f"{rep.get('rank_timeout_s'):g} s)")
    return "\n".join(lines) + "\n"


def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", "<br>")


def render_markdown(rep: dict) -> str:
    m = rep.get("master") or {}
    lines = [f"## {_headline(rep).replace('cudadoctor smoke --distributed', '`cudadoctor smoke --distributed`')}",
             "", f"- master `{m.get('addr')}:{m.get('port')}`, {_net_line(rep)}",
             f"- launcher: {(rep.get('launcher') or {}).get('kind')}"]
    env = {k: v for k, v in (rep.get("env") or {}).items() if k.startswith(ENV_PREFIXES)}
    lines.append("- " + (", ".join(f"`{k}={v}`" for k, v in env.items()) if env else "no `NCCL_*`/`GLOO_*` variables set"))
    lines += ["", "| rank | host | runs on | " + " | ".join(STAGES) + " | result |",
              "|---:|---|---|" + "---|" * len(STAGES) + "---|"]
    for r in rep.get("ranks") or []:
        lines.append(f"| {r.get('rank')} | {_md(r.get('hostname') or '?')} | {_md(r.get('device') or '?')} | "
                     + " | ".join(_stage_marks(r)) + f" | {r.get('status')} |")
    coll = _collective_lines(rep)
    if coll:
        lines += [""] + [f"- {_md(c)}" for c in coll]
    bw = rep.get("bandwidth")
    if bw:
        lines += ["", f"**all_reduce bandwidth** ({bw.get('dtype')}, in place; busbw = algbw × {bw.get('busbw_factor')}; "
                      "GB/s = 1e9 B/s)", "", "| size | time (µs) | algbw (GB/s) | busbw (GB/s) | iters |",
                  "|---:|---:|---:|---:|---:|"]
        lines += ["| " + " | ".join(row) + " |" for row in _bw_rows(rep)]
        lines += ["", f"_{_md(bw.get('note'))}_"]
    if rep.get("status") != "pass":
        lines += ["", "**Failures:**", ""]
        for c in rep.get("culprits") or []:
            lines.append(f"- {_md(c['reason'])}")
        if not rep.get("culprits") and rep.get("error"):
            lines.append(f"- {_md(rep['error']['message'])}")
        for r in rep.get("ranks") or []:
            if r.get("status") != "pass" and r.get("stderr_tail"):
                lines += ["", f"<details><summary>last output of rank {r.get('rank')}</summary>", "", "```",
                          r["stderr_tail"][-3000:], "```", "</details>"]
    return "\n".join(lines) + "\n"


def render(rep: dict, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(rep, indent=2, default=str) + "\n"
    return {"text": render_text, "markdown": render_markdown}[fmt](rep)
