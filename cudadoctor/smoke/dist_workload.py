#!/usr/bin/env python3
"""cudadoctor distributed smoke workload -- STANDALONE child of one rank of `smoke --distributed`.

Run as:  python dist_workload.py --config '{...}' --out RESULT.json  (by cudadoctor/smoke/distributed.py)

Standard library and torch, and its siblings by path; never cudadoctor. The stages run in the same order
on every rank (docs/smoke.md). Around every collective the rank's progress mark goes to the store, so that
rank 0 can name a rank that never joined; a watchdog thread ends this process, after recording why, when
a collective outlives the rank timeout or another rank failed (the store's ``abort``).
"""

import contextlib
import importlib.util
import json
import os
import socket
import sys
import threading
import time
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("cudadoctor_smoke_workload", os.path.join(HERE, "workload.py"))
assert _spec is not None and _spec.loader is not None
if _spec.name not in sys.modules:  # workload.py by path: it loads kit.py and data.py
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_spec.name])
wl = sys.modules[_spec.name]
kit, data = wl.kit, wl.data
STAGES = ("device", "init", "all-reduce", "broadcast", "training", "bandwidth")
WATCHDOG_GRACE_S = 10.0  # the process group's own timeout fires first; this catches what ignores it
KIB, MIB = 1024, 1024 * 1024


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


def rank_device(device, backend, local_rank, gpus, local_world=None):
    """(this rank's device, why it cannot run or None): cuda:LOCAL_RANK; over Gloo, with more ranks on this
    host than GPUs, cuda:(LOCAL_RANK % GPUs). NCCL cannot share a GPU between ranks. No GPU at all: the
    device stage says why."""
    if device == "cpu" or gpus < 1 or local_rank < gpus:
        return ("cpu" if device == "cpu" else f"cuda:{local_rank}"), None
    if backend == "gloo":
        return f"cuda:{local_rank % gpus}", None
    ranks = f"{local_world} ranks" if local_world else f"more than {gpus} ranks (local rank {local_rank})"
    return (
        f"cuda:{local_rank}",
        f"NCCL cannot share a GPU between ranks: {ranks} on this host, {gpus} GPU(s) visible (use --backend gloo)",
    )


class Watchdog(threading.Thread):
    """Ends the process when an armed operation does not return in time, or when another rank set
    ``abort``, after recording why."""

    def __init__(self, ds):
        super().__init__(daemon=True)
        self.ds = ds
        self.lock = threading.Lock()
        self.deadline = self.what = self.seconds = None

    def arm(self, what, seconds):
        with self.lock:
            self.what, self.seconds, self.deadline = what, seconds, time.monotonic() + seconds

    def disarm(self):
        with self.lock:
            self.deadline = None

    def run(self):
        while True:
            time.sleep(0.25)
            with self.lock:
                expired = self.deadline is not None and time.monotonic() > self.deadline
                what, seconds = self.what, self.seconds
            abort = None if expired else self.ds.abort_from_other()
            if expired:
                kind, why = "timeout", f"{what} did not return within {seconds:g} s (watchdog)"
            elif abort:
                kind, why = "aborted", f"rank {abort.get('rank')} failed: {abort.get('reason')}"
            else:
                continue
            try:
                self.ds.stop(kind, why)
            finally:
                os._exit(4)


class DistSmoke:
    def __init__(self, cfg, rec):
        self.cfg, self.rec = cfg, rec
        self.rank = int(cfg["rank"])
        self.world = int(cfg["world_size"])
        self.local_rank = int(cfg.get("local_rank") or 0)
        self.timeout = float(cfg.get("rank_timeout_s") or 60)
        self.torch = self.dist = self.store = self.dev = None
        self.seq = 0
        self.watchdog = Watchdog(self)
        self.device_name = "cpu" if cfg["device"] == "cpu" else f"cuda:{self.local_rank}"  # until place()
        self.unplaceable = None

    def place(self):
        """This rank's device, now that torch can count the GPUs (see :func:`rank_device`)."""
        gpus = kit.gpu_count(self.torch) if self.cfg["device"] != "cpu" else 0
        local_world = self.cfg.get("local_world_size")
        self.device_name, self.unplaceable = rank_device(
            self.cfg["device"], self.cfg["backend"], self.local_rank, gpus, local_world
        )
        self.rec.r["rank_device"] = self.device_name

    # -- bookkeeping ------------------------------------------------------------------------------
    def progress(self, step, state):
        p = {"seq": self.seq, "step": step, "state": state, "t": time.time()}
        self.rec.r["progress"] = p
        if self.store is not None:
            with contextlib.suppress(Exception):  # the store is the parent's business; the collective will tell
                self.store.set(f"progress/{self.rank}", json.dumps(p))

    def abort_from_other(self):
        try:
            if self.store is None or not self.store.check(["abort"]):
                return None
            a = json.loads(self.store.get("abort"))
        except Exception:
            return None
        return a if isinstance(a, dict) and a.get("rank") != self.rank else None

    def stop(self, kind, message):
        """Record how this child is being stopped (from the watchdog thread)."""
        cur = self.rec.r.get("current") or {}
        name = cur.get("name") or "?"
        message = f"stopped in stage '{name}': {message}"
        self.rec.r.update({"state": "finished", "status": "fail", "error": {"kind": kind, "message": message, "stage": name}})
        self.rec.end(
            name, cur.get("device"), "fail", time.time() - (cur.get("started_unix") or time.time()), message, {"watchdog": kind}
        )
        import faulthandler

        faulthandler.dump_traceback(all_threads=True)  # where this rank was, for the report
        sys.stderr.flush()

    @contextlib.contextmanager
    def marked(self, step, watch=None):
        """Progress marks around one step; with ``watch`` (what it is), the watchdog armed for it."""
        self.seq += 1
        self.progress(step, "calling")
        if watch:
            self.watchdog.arm(f"{watch} (rank {self.rank})", self.timeout + WATCHDOG_GRACE_S)
        try:
            yield
        finally:
            self.watchdog.disarm()
            self.progress(step, "done")

    def collective(self, step, fn, *args, **kw):
        with self.marked(step, watch=step):
            return fn(*args, **kw)

    # -- stages -----------------------------------------------------------------------------------
    def st_device(self):
        torch = self.torch
        if self.unplaceable:
            raise kit.Fail(self.unplaceable, {"backend": self.cfg["backend"], "local_rank": self.local_rank})
        smoke = wl.Smoke({"device": self.device_name}, self.rec, torch)
        with self.marked("device"):
            verdict, message, ev = smoke.st_device(self.device_name)
        self.dev = torch.device(self.device_name)
        if self.dev.type == "cuda":
            torch.cuda.set_device(self.dev)
            p = torch.cuda.get_device_properties(self.dev)
            ids = {a: getattr(p, a, None) for a in ("uuid", "pci_bus_id", "pci_device_id", "pci_domain_id")}
            ev.update({a: str(v) for a, v in ids.items() if v is not None})
        return verdict, f"rank {self.rank}: {message}", ev

    def st_init(self):
        torch, dist = self.torch, self.dist
        backend = self.cfg["backend"]
        ev = {
            "backend": backend,
            "gloo_available": dist.is_gloo_available(),
            "nccl_available": dist.is_nccl_available(),
            "timeout_s": self.timeout,
        }
        if backend == "nccl":
            try:
                ev["nccl_version"] = ".".join(str(x) for x in torch.cuda.nccl.version())
            except Exception as e:
                ev["nccl_version"] = f"unknown ({type(e).__name__})"
        if not ev[f"{backend}_available"]:
            why = f"torch.distributed.is_{backend}_available() is False"
            raise kit.Fail(f"torch {torch.__version__} was built without {backend.upper()} support ({why})", ev)
        pg = dict(backend=backend, store=dist.PrefixStore("pg/", self.store), rank=self.rank, world_size=self.world)
        nccl = {"device_id": self.dev} if backend == "nccl" else {}  # NCCL: the communicator is created here
        t0 = time.perf_counter()
        self.collective("init", dist.init_process_group, timeout=timedelta(seconds=self.timeout), **pg, **nccl)
        ev.update({"init_s": round(time.perf_counter() - t0, 3), "world_size": dist.get_world_size(), "rank": dist.get_rank()})
        if ev["world_size"] != self.world or ev["rank"] != self.rank:
            says = f"process group says rank {ev['rank']} of {ev['world_size']}"
            raise kit.Fail(f"{says}, launcher said {self.rank} of {self.world}", ev)
        return "pass", f"{backend} process group of {self.world} ranks in {ev['init_s']:.2f} s", ev

    def _pattern(self, numel, contribution):
        i = self.torch.arange(numel, dtype=self.torch.int64)
        return ((i % 7 + 1) * contribution).to(self.torch.float32)

    def st_all_reduce(self):
        dist, n = self.dist, self.world
        contribution = self.rank + 1
        if kit.fault_for("all-reduce", self.rank) == "wrong":
            contribution += 1  # test hook: this rank contributes a wrong value
        expected_sum = n * (n + 1) // 2
        sizes = [256, (4 * MIB) // 4 + 3]  # 1 KiB, and 4 MiB + 3 elements (several chunks, ragged end)
        ev = {
            "op": "all_reduce(SUM)",
            "dtype": "float32",
            "contribution": "(rank+1)*(1 + i%7)",
            "expected": f"{expected_sum}*(1 + i%7)",
            "sizes_elements": sizes,
            "checks": [],
        }
        for numel in sizes:
            x = self._pattern(numel, contribution).to(self.dev)
            self.collective(f"all-reduce {numel * 4} B", dist.all_reduce, x, op=dist.ReduceOp.SUM)
            kit.sync(self.torch, self.dev)
            chk = _compare(x.cpu(), self._pattern(numel, expected_sum))
            ev["checks"].append(chk)
            if not chk["exact"]:
                j = chk["first_wrong_index"]
                self.wrong(f"all_reduce of {numel} float32", chk, f" (sum of (rank+1)*{j % 7 + 1} over {n} ranks)", ev)
        sums = f"{len(sizes)} sizes, element 0 = {expected_sum} = n(n+1)/2"
        return "pass", f"sum over {n} ranks exact on rank {self.rank} ({sums})", ev

    def wrong(self, what, chk, why, ev):
        raise kit.Fail(
            f"{what} is WRONG on rank {self.rank}: element {chk['first_wrong_index']} is {chk['got']:g}, expected "
            f"{chk['expected']:g}{why}; {chk['wrong_elements']} of {chk['elements']} elements wrong",
            ev,
        )

    def st_broadcast(self):
        torch, dist = self.torch, self.dist
        numel = (1 * MIB) // 4 + 5
        i = torch.arange(numel, dtype=torch.int64)
        want = ((i * 2654435761) % 65521).to(torch.float32)  # integers < 2^16: exact in float32
        x = (want.clone() if self.rank == 0 else torch.full((numel,), -1.0)).to(self.dev)
        self.collective("broadcast", dist.broadcast, x, src=0)
        kit.sync(self.torch, self.dev)
        ev = dict(_compare(x.cpu(), want), op="broadcast(src=0)", dtype="float32", pattern="(i * 2654435761) % 65521")
        if not ev["exact"]:
            self.wrong("broadcast from rank 0", ev, "", ev)
        return "pass", f"{numel} elements from rank 0 received exactly on rank {self.rank}", ev

    def _fingerprints(self, model):
        """Every rank's (sum, weighted sum) of its parameters, gathered: identical replicas agree."""
        torch = self.torch
        v = torch.cat([p.detach().double().flatten() for p in model.parameters()])
        w = torch.arange(1, v.numel() + 1, dtype=torch.float64, device=v.device).remainder(97).add(1)
        mine = torch.stack([v.sum(), (v * w).sum()])
        parts = [torch.zeros(2, dtype=torch.float64, device=self.dev) for _ in range(self.world)]
        self.collective("training fingerprints", self.dist.all_gather, parts, mine)
        return [p.cpu().tolist() for p in parts]

    def st_training(self):
        torch, dist = self.torch, self.dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        err = self.rec.r["data"].get("error")
        if err:
            raise kit.Fail(f"no data on rank {self.rank}: {err['message']}", {"data": err})
        t0 = time.perf_counter()
        cpu = data.load(torch, self.cfg, self.rec.r["data"])
        bar = self.rec.r["data"]["accuracy_bar"]
        tensors = kit.resident(cpu, self.dev)
        torch.manual_seed(int(self.cfg.get("seed", 0)))  # the same start, permutation and steps on every rank
        with self.marked("training"):
            ddp = DDP(kit.mlp(torch.nn).to(self.dev), device_ids=[self.dev.index] if self.dev.type == "cuda" else None)
            t_fit = time.perf_counter()
            epochs = self.cfg.get("epochs") or kit.DEFAULT_MAX_EPOCHS
            ev = kit.fit(torch, ddp, tensors, bar, epochs, shard=(self.rank, self.world), all_reduce=dist.all_reduce)
        fps = self._fingerprints(ddp.module)
        ev.update(
            {
                "setup_s": round(t_fit - t0, 3),
                "ranks": self.world,
                "per_rank_batch": len(range(self.rank, kit.BATCH, self.world)),
                "replicas_identical": all(f == fps[0] for f in fps),
            }
        )
        if not ev["replicas_identical"]:
            odd = [r for r, f in enumerate(fps) if f != fps[0]]
            why = "gradients were not averaged the same everywhere"
            raise kit.Fail(f"replicas diverged after {ev['steps']} DDP steps (rank(s) {odd} differ from rank 0): {why}", ev)
        what = "synthetic seven-segment digits" if self.cfg.get("synthetic") else "MNIST"
        verdict, message, ev = kit.judge(ev, f"{what} on {self.world} ranks (DDP)")
        return verdict, message + ", replicas identical", ev

    def _timed(self, x, nbytes, iters):
        """Mean seconds per all_reduce of x on this rank, then the slowest rank's."""
        step = f"bandwidth {nbytes} B"
        with self.marked(step, watch=f"{step} x{iters}"):
            t0 = time.perf_counter()
            for _ in range(iters):
                self.dist.all_reduce(x)
            kit.sync(self.torch, self.dev)
            dt = (time.perf_counter() - t0) / iters
        timing = self.torch.full((1,), dt, dtype=self.torch.float64, device=self.dev)
        self.collective(step + " max-time", self.dist.all_reduce, timing, op=self.dist.ReduceOp.MAX)
        return dt, float(timing.item())

    def st_bandwidth(self):
        torch, dist, n = self.torch, self.dist, self.world
        if n < 2:
            raise kit.Skip("one rank: no interconnect to measure")
        sw = self.cfg.get("sweep") or {}
        sizes = sweep_sizes(sw.get("min_bytes", KIB), sw.get("max_bytes", 64 * MIB))
        rows = []
        buf = torch.zeros(max(sizes) // 4, dtype=torch.float32, device=self.dev)
        for nbytes in sizes:
            x = buf[: nbytes // 4]
            warm, iters = (1, int(sw["iters"])) if sw.get("iters") else sweep_iters(nbytes)
            for _ in range(warm):
                self.collective(f"bandwidth {nbytes} B warm-up", dist.all_reduce, x)
            kit.sync(self.torch, self.dev)
            self.collective(f"bandwidth {nbytes} B barrier", dist.barrier)
            dt, t = self._timed(x, nbytes, iters)
            algbw = nbytes / t / 1e9
            rows.append(
                {
                    "bytes": nbytes,
                    "elements": nbytes // 4,
                    "warmup": warm,
                    "iters": iters,
                    "time_us": round(t * 1e6, 2),
                    "rank_time_us": round(dt * 1e6, 2),
                    "algbw_gbps": _sig(algbw),
                    "busbw_gbps": _sig(algbw * busbw_factor(n)),
                }
            )
        if not bool((buf == 0).all()):
            raise kit.Fail("the zero-filled sweep buffer is not zero after the sweep", {"rows": rows})
        best = max(rows, key=lambda r: r["busbw_gbps"])
        ev = {
            "op": "all_reduce(SUM), in place",
            "dtype": "float32",
            "world_size": n,
            "busbw_factor": round(busbw_factor(n), 6),
            "unit": "GB/s = 1e9 bytes/s",
            "time": "mean per operation of the timed iterations, slowest rank (max over ranks)",
            "rows": rows,
            "peak_busbw_gbps": best["busbw_gbps"],
            "peak_at_bytes": best["bytes"],
            "busbw_gbps": rows[-1]["busbw_gbps"],
            "algbw_gbps": rows[-1]["algbw_gbps"],
            "bytes": rows[-1]["bytes"],
        }
        peak = f"peak busbw {best['busbw_gbps']:.3g} GB/s at {_size(best['bytes'])}"
        return "pass", f"{len(rows)} sizes {_size(sizes[0])}..{_size(sizes[-1])}; {peak}", ev


def _compare(got, want):
    """Exactness of a received tensor: the count of wrong elements and the first one."""
    bad = (got != want).nonzero()
    out = {"elements": int(want.numel()), "exact": int(bad.numel()) == 0, "wrong_elements": int(bad.shape[0])}
    if bad.numel():
        j = int(bad[0, 0])
        out.update({"first_wrong_index": j, "got": float(got[j]), "expected": float(want[j])})
    return out


def _sig(x, digits=6):
    """x to `digits` significant digits (bandwidths span 1e-4 .. 1e3 GB/s)."""
    return float(f"{x:.{digits}g}")


def _size(b):
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if b >= unit and b % unit == 0:
            return f"{b // unit} {name}"
    return f"{b} B"


def _connect(ds, cfg, dist):
    """The job's store (the parent already checked in to it); a failure is a failure of this rank."""
    try:
        ds.store = dist.PrefixStore(
            cfg["prefix"], dist.TCPStore(cfg["master_addr"], int(cfg["master_port"]), None, False, timedelta(seconds=ds.timeout))
        )
    except Exception as e:
        where = f"{cfg['master_addr']}:{cfg['master_port']}"
        ds.rec.r["error"] = {"kind": "store", "message": f"cannot reach the store at {where}: {type(e).__name__}: {e}"}


def main(argv=None):
    cfg, rec = kit.start(__doc__, argv)
    rec.r.update({"rank": cfg["rank"], "progress": None})
    rec.r["env"]["hostname"] = socket.gethostname()
    ds = DistSmoke(cfg, rec)
    try:
        data.locate(cfg, rec.r["data"])  # before torch: the training stage says what is missing
    except data.DataError as e:
        rec.r["data"]["error"] = e.to_dict()
    rec.begin("device", ds.device_name)
    ds.torch = kit.import_torch(cfg, rec)
    import torch.distributed as dist  # noqa: E402

    ds.dist = dist
    ds.place()
    rec.r["plan"] = [[s, ds.device_name] for s in STAGES]
    _connect(ds, cfg, dist)
    ds.watchdog.start()
    # Collectives must be called in the same order on every rank: after a failed stage this rank stops
    # (and its parent tells the others) instead of pairing its next collective with another stage's.
    for i, name in enumerate(STAGES):
        if ds.store is None:
            rec.skip_rest(STAGES[i:], ds.device_name, "not run: the store is unreachable")
            break
        if kit.run_stage(rec, name, ds.device_name, getattr(ds, "st_" + name.replace("-", "_")), ds.rank) == "fail":
            rec.skip_rest(STAGES[i + 1 :], ds.device_name, f"not run: stage '{name}' did not pass on this rank")
            break
    if dist.is_initialized():
        with contextlib.suppress(Exception):
            dist.destroy_process_group()
    if rec.r["error"]:
        rec.r["status"] = "fail"
    return rec.finish()


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # not through interpreter teardown, where a library's C++ thread may abort the process
