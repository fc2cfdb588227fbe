#!/usr/bin/env python3
"""cudadoctor distributed smoke (--combined) workload (--distributed) -- STANDALONE child of one rank.

Run as:  python combined_workload.py --config '{...}' --out RESULT.json

Started by cudadoctor/smoke/combined.py (the rank's own process, itself a torchrun worker) and
watched by it. Imports only the standard library, torch and, by path, workload.py beside it (for the
device stage), never cudadoctor. The result file is rewritten after every stage (temp file + atomic
rename), so a crash or a hang leaves what was finished.

Stages, in the same order on every rank:
  device     this rank's device works (the single-GPU smoke's device stage: cuda:LOCAL_RANK or cpu)
  init       init_process_group over the store the parent checked in to (timeout = rank timeout)
  allreduce  every rank contributes (rank+1)*(1 + i%7) in float32; the sum must be EXACTLY
             n(n+1)/2 * (1 + i%7) on every rank (a small and a multi-chunk size)
  broadcast  rank 0 sends a known integer pattern; every rank must receive it EXACTLY
  bandwidth  all_reduce sweep (in place, float32), warm-up excluded; time = the slowest rank's mean;
             algbw = bytes/time, busbw = algbw * 2(n-1)/n (nccl-tests, doc/PERFORMANCE.md)

Progress goes to the store as progress/<rank> = {"seq", "step", "state": "calling"|"done", "t"} before
and after every collective step, so that rank 0 can name a rank that never joined a collective.
Every collective is time-bounded twice: the process group's own timeout and a watchdog thread here
that records the stage as timed out and ends this process (safe: it is a child, not the rank).

Test hook: CUDADOCTOR_DIST_FAULT=rank<N>:<hang|exit|segv|kill|wrong>[@<stage>] (default stage allreduce).
"""
import argparse
import faulthandler
import importlib.util
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = 1
STAGES = ("device", "init", "allreduce", "broadcast", "bandwidth")
WATCHDOG_GRACE_S = 10.0   # the process group's own timeout fires first; this catches what ignores it
KIB, MIB = 1024, 1024 * 1024


def _load_workload():
    spec = importlib.util.spec_from_file_location("cudadoctor_smoke_workload", os.path.join(HERE, "workload.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


wl = _load_workload()


def sweep_sizes(min_bytes, max_bytes):
    """Powers of two from min_bytes to max_bytes inclusive."""
    out, s = [], int(min_bytes)
    while s <= max_bytes:
        out.append(s)
        s *= 2
    return out


def sweep_iters(nbytes):
    """(warm-up, timed) iterations for a size: the same on every rank (a mismatch would hang)."""
    if nbytes <= 1 * MIB:
        return 5, 20
    if nbytes <= 16 * MIB:
        return 3, 10
    return 2, 5


def busbw_factor(n):
    """nccl-tests' all-reduce bus bandwidth correction: 2(n-1)/n."""
    return 2.0 * (n - 1) / n if n > 0 else 0.0


def parse_fault(spec, rank):
    """CUDADOCTOR_DIST_FAULT for this rank -> (kind, stage) or None. Several may be comma-separated."""
    for part in (spec or "").split(","):
        part = part.strip()
        if not part.startswith("rank") or ":" not in part:
            continue
        who, what = part.split(":", 1)
        try:
            r = int(who[4:])
        except ValueError:
            continue
        if r != rank:
            continue
        kind, _, stage = what.partition("@")
        return kind, (stage or "allreduce")
    return None


class Watchdog(threading.Thread):
    """Ends the process when an armed operation does not return in time, after recording why."""

    def __init__(self, on_expire):
        super().__init__(daemon=True)
        self.on_expire = on_expire
        self.lock = threading.Lock()
        self.deadline = None
        self.what = None
        self.seconds = None

    def arm(self, what, seconds):
        with self.lock:
            self.what, self.seconds, self.deadline = what, seconds, time.monotonic() + seconds

    def disarm(self):
        with self.lock:
            self.deadline = None

    def run(self):
        while True:
            time.sleep(0.2)
            with self.lock:
                expired = self.deadline is not None and time.monotonic() > self.deadline
                what, seconds = self.what, self.seconds
            if expired:
                try:
                    self.on_expire(what, seconds)
                finally:
                    os._exit(4)


class DistSmoke:
    def __init__(self, cfg, rec):
        self.cfg = cfg
        self.rec = rec
        self.rank = int(cfg["rank"])
        self.world = int(cfg["world_size"])
        self.local_rank = int(cfg.get("local_rank") or 0)
        self.timeout = float(cfg.get("rank_timeout_s") or 60)
        self.fault = parse_fault(os.environ.get("CUDADOCTOR_DIST_FAULT", ""), self.rank)
        self.torch = self.dist = self.store = None
        self.seq = 0
        self.dev = None
        self.watchdog = Watchdog(self._expired)

    # -- bookkeeping ------------------------------------------------------------------------------
    def progress(self, step, state):
        p = {"seq": self.seq, "step": step, "state": state, "t": time.time()}
        self.rec.r["progress"] = p
        if self.store is not None:
            try:
                self.store.set(f"progress/{self.rank}", json.dumps(p))
            except Exception:
                pass  # the store is the parent's business; the collective will tell

    def _expired(self, what, seconds):
        cur = self.rec.r.get("current") or {}
        name = cur.get("name") or "?"
        started = cur.get("started_unix") or time.time()
        self.rec.r["stages"].append({
            "name": name, "device": cur.get("device"), "verdict": "fail",
            "duration_s": round(time.time() - started, 4),
            "message": f"{what} did not return within {seconds:g} s (watchdog; the process group's own timeout "
                       f"did not end it)",
            "evidence": {"watchdog": True, "operation": what, "timeout_s": seconds}})
        self.rec.r.update({"current": None, "state": "finished", "status": "fail",
                           "error": {"kind": "timeout", "message": f"{what} timed out after {seconds:g} s",
                                     "stage": name}})
        self.rec.save()
        faulthandler.dump_traceback(all_threads=True)
        sys.stderr.flush()

    def inject(self, stage):
        if not self.fault or self.fault[1] != stage:
            return
        kind = self.fault[0]
        sys.stderr.write(f"CUDADOCTOR_DIST_FAULT: rank {self.rank} {kind} at stage {stage}\n")
        sys.stderr.flush()
        if kind == "hang":
            while True:
                time.sleep(3600)
        if kind == "exit":
            os._exit(17)
        if kind == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        if kind == "kill":  # the whole rank dies: its worker process (our parent), then us
            os.kill(os.getppid(), signal.SIGKILL)
            os._exit(137)

    def stage(self, name, fn):
        rec = self.rec
        rec.begin(name, self.device_name)
        t0 = time.perf_counter()
        try:
            self.inject(name)
            verdict, message, evidence = fn()
        except wl.Skip as e:
            verdict, message, evidence = "skip", str(e), {}
        except wl.Fail as e:
            verdict, message, evidence = "fail", str(e), e.evidence
        except Exception as e:
            text = str(e).strip()
            verdict = "fail"
            message = f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"[:600]
            evidence = {"traceback": traceback.format_exc(limit=6)[-3000:]}
        finally:
            self.watchdog.disarm()
        rec.end(name, self.device_name, verdict, time.perf_counter() - t0, message, evidence)
        return verdict

    def collective(self, step, fn, *args, **kw):
        """One collective call: progress marks around it, armed watchdog."""
        self.seq += 1
        self.progress(step, "calling")
        self.watchdog.arm(f"{step} (rank {self.rank})", self.timeout + WATCHDOG_GRACE_S)
        try:
            return fn(*args, **kw)
        finally:
            self.watchdog.disarm()
            self.progress(step, "done")

    def sync(self):
        if self.dev.type == "cuda":
            self.torch.cuda.synchronize(self.dev)

    @property
    def device_name(self):
        return "cpu" if self.cfg["device"] == "cpu" else f"cuda:{self.local_rank}"

    # -- stages -----------------------------------------------------------------------------------
    def st_device(self):
        torch = self.torch
        smoke = wl.Smoke({"device": self.device_name}, self.rec)
        smoke.torch, smoke.nn = torch, torch.nn
        self.seq += 1
        self.progress("device", "calling")
        verdict, message, ev = smoke.st_device(self.device_name)
        self.progress("device", "done")
        self.dev = torch.device(self.device_name)
        if self.dev.type == "cuda":
            torch.cuda.set_device(self.dev)
            p = torch.cuda.get_device_properties(self.dev)
            for attr in ("uuid", "pci_bus_id", "pci_device_id", "pci_domain_id"):
                v = getattr(p, attr, None)
                if v is not None:
                    ev[attr] = str(v)
        return verdict, f"rank {self.rank}: {message}", ev

    def st_init(self):
        torch, dist = self.torch, self.dist
        backend = self.cfg["backend"]
        ok = {"gloo": dist.is_gloo_available(), "nccl": dist.is_nccl_available()}.get(backend, True)
        ev = {"backend": backend, "gloo_available": dist.is_gloo_available(),
              "nccl_available": dist.is_nccl_available(), "timeout_s": self.timeout}
        if backend == "nccl":
            try:
                ev["nccl_version"] = ".".join(str(x) for x in torch.cuda.nccl.version())
            except Exception as e:
                ev["nccl_version"] = f"unknown ({type(e).__name__})"
        if not ok:
            raise wl.Fail(f"torch {torch.__version__} was built without {backend.upper()} support "
                          f"(torch.distributed.is_{backend}_available() is False)", ev)
        pg_store = dist.PrefixStore("pg/", self.store)
        kw = {}
        if backend == "nccl":
            kw["device_id"] = self.dev
        t0 = time.perf_counter()
        try:
            self.collective("init", dist.init_process_group, backend=backend, store=pg_store, rank=self.rank,
                            world_size=self.world, timeout=timedelta(seconds=self.timeout), **kw)
        except TypeError:  # an older torch without device_id
            kw.pop("device_id", None)
            self.collective("init", dist.init_process_group, backend=backend, store=pg_store, rank=self.rank,
                            world_size=self.world, timeout=timedelta(seconds=self.timeout))
        ev["init_s"] = round(time.perf_counter() - t0, 3)
        ev["world_size"] = dist.get_world_size()
        ev["rank"] = dist.get_rank()
        if ev["world_size"] != self.world or ev["rank"] != self.rank:
            raise wl.Fail(f"process group says rank {ev['rank']} of {ev['world_size']}, launcher said "
                          f"{self.rank} of {self.world}", ev)
        return "pass", f"{backend} process group of {self.world} ranks in {ev['init_s']:.2f} s", ev

    def _pattern(self, numel, contribution):
        torch = self.torch
        i = torch.arange(numel, dtype=torch.int64)
        return ((i % 7 + 1) * contribution).to(torch.float32)

    def st_allreduce(self):
        dist = self.dist
        n = self.world
        contribution = self.rank + 1
        if self.fault and self.fault[0] == "wrong":
            contribution += 1  # test hook: this rank contributes a wrong value
        expected_sum = n * (n + 1) // 2
        sizes = [256, (4 * MIB) // 4 + 3]  # 1 KiB, and 4 MiB + 3 elements (several chunks, ragged end)
        ev = {"op": "all_reduce(SUM)", "dtype": "float32", "contribution": f"(rank+1)*(1 + i%7)",
              "expected": f"{expected_sum}*(1 + i%7)", "sizes_elements": sizes, "checks": []}
        for numel in sizes:
            x = self._pattern(numel, contribution).to(self.dev)
            self.collective(f"allreduce {numel * 4} B", dist.all_reduce, x, op=dist.ReduceOp.SUM)
            self.sync()
            got = x.cpu()
            want = self._pattern(numel, expected_sum)
            bad = (got != want).nonzero()
            chk = {"elements": numel, "exact": int(bad.numel()) == 0, "wrong_elements": int(bad.shape[0])}
            if bad.numel():
                j = int(bad[0, 0])
                chk.update({"first_wrong_index": j, "got": float(got[j]), "expected": float(want[j])})
            ev["checks"].append(chk)
            if bad.numel():
                raise wl.Fail(f"all_reduce of {numel} float32 is WRONG on rank {self.rank}: element {j} is "
                              f"{float(got[j]):g}, expected {float(want[j]):g} (sum of (rank+1)*{j % 7 + 1} over "
                              f"{n} ranks); {chk['wrong_elements']} of {numel} elements wrong", ev)
        return "pass", (f"sum over {n} ranks exact on rank {self.rank} ({len(sizes)} sizes, "
                        f"element 0 = {expected_sum} = n(n+1)/2)"), ev

    def st_broadcast(self):
        torch, dist = self.torch, self.dist
        numel = (1 * MIB) // 4 + 5
        i = torch.arange(numel, dtype=torch.int64)
        want = ((i * 2654435761) % 65521).to(torch.float32)  # integers < 2^16: exact in float32
        x = (want.clone() if self.rank == 0 else torch.full((numel,), -1.0)).to(self.dev)
        self.collective("broadcast", dist.broadcast, x, src=0)
        self.sync()
        got = x.cpu()
        bad = (got != want).nonzero()
        ev = {"op": "broadcast(src=0)", "elements": numel, "dtype": "float32",
              "pattern": "(i * 2654435761) % 65521", "wrong_elements": int(bad.shape[0])}
        if bad.numel():
            j = int(bad[0, 0])
            raise wl.Fail(f"broadcast from rank 0 is WRONG on rank {self.rank}: element {j} is {float(got[j]):g}, "
                          f"expected {float(want[j]):g}; {ev['wrong_elements']} of {numel} elements wrong", ev)
        return "pass", f"{numel} elements from rank 0 received exactly on rank {self.rank}", ev

    def st_bandwidth(self):
        torch, dist = self.torch, self.dist
        n = self.world
        sw = self.cfg.get("sweep") or {}
        sizes = sweep_sizes(sw.get("min_bytes", KIB), sw.get("max_bytes", 64 * MIB))
        rows = []
        buf = torch.zeros(max(sizes) // 4, dtype=torch.float32, device=self.dev)
        timing = torch.zeros(1, dtype=torch.float64, device=self.dev)
        for nbytes in sizes:
            x = buf[: nbytes // 4]
            warm, iters = sweep_iters(nbytes)
            if sw.get("iters"):
                warm, iters = 1, int(sw["iters"])
            step = f"bandwidth {nbytes} B"
            for _ in range(warm):
                self.collective(step + " warm-up", dist.all_reduce, x)
            self.sync()
            self.collective(step + " barrier", dist.barrier)
            self.sync()
            self.seq += 1
            self.progress(step, "calling")
            self.watchdog.arm(f"{step} x{iters} (rank {self.rank})", self.timeout + WATCHDOG_GRACE_S)
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(x)
            self.sync()
            dt = (time.perf_counter() - t0) / iters
            self.watchdog.disarm()
            self.progress(step, "done")
            timing.fill_(dt)
            self.collective(step + " max-time", dist.all_reduce, timing, op=dist.ReduceOp.MAX)
            t = float(timing.item())
            algbw = nbytes / t / 1e9
            rows.append({"bytes": nbytes, "elements": nbytes // 4, "warmup": warm, "iters": iters,
                         "time_us": round(t * 1e6, 2), "rank_time_us": round(dt * 1e6, 2),
                         "algbw_gbps": _sig(algbw), "busbw_gbps": _sig(algbw * busbw_factor(n))})
        if not bool((buf == 0).all()):
            raise wl.Fail("the zero-filled sweep buffer is not zero after the sweep", {"rows": rows})
        best = max(rows, key=lambda r: r["busbw_gbps"])
        ev = {"op": "all_reduce(SUM), in place", "dtype": "float32", "world_size": n,
              "busbw_factor": round(busbw_factor(n), 6), "unit": "GB/s = 1e9 bytes/s",
              "time": "mean per operation of the timed iterations, slowest rank (max over ranks)",
              "rows": rows, "peak_busbw_gbps": best["busbw_gbps"], "peak_at_bytes": best["bytes"]}
        return "pass", (f"{len(rows)} sizes {_size(sizes[0])}..{_size(sizes[-1])}; peak busbw "
                        f"{best['busbw_gbps']:.3g} GB/s at {_size(best['bytes'])}"), ev


def _sig(x, digits=6):
    """x to `digits` significant digits (bandwidths span 1e-4 .. 1e3 GB/s)."""
    return float(f"{x:.{digits}g}")


def _size(b):
    if b >= MIB and b % MIB == 0:
        return f"{b // MIB} MiB"
    if b >= KIB and b % KIB == 0:
        return f"{b // KIB} KiB"
    return f"{b} B"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="JSON object")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    cfg = json.loads(args.config)
    rec = wl.Recorder(args.out, cfg.get("device"))
    rec.r.update({"rank": cfg["rank"], "progress": None})
    faulthandler.enable()
    if hasattr(faulthandler, "register"):
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    if cfg.get("timeout_s"):
        t = float(cfg["timeout_s"])
        faulthandler.dump_traceback_later(max(t * 0.9, t - 3), exit=False)
    rec.r["env"] = {"python": sys.version.split()[0], "executable": sys.executable, "pid": os.getpid(),
                    "hostname": socket.gethostname()}
    rec.r["plan"] = [[s, None] for s in STAGES]
    ds = DistSmoke(cfg, rec)
    ds.watchdog.start()
    rec.r["plan"] = [[s, ds.device_name] for s in STAGES]
    rec.begin("device", ds.device_name)
    import torch  # noqa: E402 (may crash: the parent records that as a failed device stage)
    import torch.distributed as dist  # noqa: E402
    ds.torch, ds.dist = torch, dist
    rec.r["env"].update({"torch": torch.__version__, "torch_cuda": torch.version.cuda})
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg["threads"]))
    # the parent already checked in to this store; a failure to reach it is a failure of this rank
    try:
        ds.store = dist.PrefixStore(cfg["prefix"], dist.TCPStore(
            cfg["master_addr"], int(cfg["master_port"]), None, False, timedelta(seconds=ds.timeout)))
    except Exception as e:
        ds.store = None
        rec.r["error"] = {"kind": "store", "message": f"cannot reach the store at {cfg['master_addr']}:"
                                                      f"{cfg['master_port']}: {type(e).__name__}: {e}"}
    ok = ds.stage("device", ds.st_device)
    for name, fn in (("init", ds.st_init), ("allreduce", ds.st_allreduce), ("broadcast", ds.st_broadcast),
                     ("bandwidth", ds.st_bandwidth)):
        if ok != "pass" or ds.store is None:
            rec.begin(name, ds.device_name)
            why = "device stage failed" if ok != "pass" and name == "init" else \
                "the store is unreachable" if ds.store is None else "an earlier stage failed"
            rec.end(name, ds.device_name, "skip", 0.0, f"not run: {why}", {})
            continue
        ok = ds.stage(name, fn)
    if dist.is_initialized():
        try:
            dist.destroy_process_group()
        except Exception:
            pass
    verdicts = [s["verdict"] for s in rec.r["stages"]]
    rec.r["status"] = "fail" if ("fail" in verdicts or rec.r["error"]) else "pass"
    rec.r.update({"state": "finished", "current": None})
    rec.save()
    faulthandler.cancel_dump_traceback_later()
    return 0 if rec.r["status"] == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
