"""One rank of the distributed smoke: run by cudadoctor/smoke/distributed.py in a watched child.

Standalone script (standard library + torch), so that it runs under another interpreter
(``--python``). It is started once per rank by the cluster's launcher (torchrun, srun) through
``cudadoctor smoke --distributed``, joins the process group and checks, stage by stage:

init        the rank's device (cuda:LOCAL_RANK, or cuda:0 when each task is given one GPU) exists;
            init_process_group (nccl on CUDA, gloo on
            the CPU) completes, i.e. every rank arrived at MASTER_ADDR:MASTER_PORT in time
membership  all_gather_object of who is where: ranks 0..W-1 each exactly once, no two ranks of one
            host on the same GPU (NCCL refuses that as "Duplicate GPU detected")
all-reduce  sum of (rank + 1) over 2^20 float32 elements equals W(W+1)/2 exactly everywhere; a
            broadcast from rank 0 arrives bit for bit; all_gather returns every rank's tensor
bandwidth   all_reduce of 64 MiB (CPU: 8 MiB), warm-up then timed: algorithm bandwidth = bytes /
            time, bus bandwidth = algbw x 2(W-1)/W (the nccl-tests definition), for comparison
            with the interconnect's nominal figure; informational
ddp         the smoke's MLP under DistributedDataParallel, started from different weights on each
            rank, trained 30 steps on each rank's own data: after the initial broadcast and after
            training (Adam, lr 1e-3), every rank holds the same weights (fingerprints gathered
            and compared) and the mean loss fell by more than 10%

The result file is written after every stage (the Recorder of workload.py), so a crash or a hang
leaves the finished stages, and the parent names the stage it died in. A hang in a collective is
the typical symptom of a rank that cannot reach the others (firewall, wrong NCCL_SOCKET_IFNAME,
InfiniBand down) or of a rank that never started.
"""

import argparse
import datetime
import faulthandler
import json
import os
import signal
import socket
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workload import LAYERS, Fail, Recorder, Skip  # noqa: E402  (same directory, standard library only)

STAGES = ("init", "membership", "all-reduce", "bandwidth", "ddp")


def _inject_fault(name, rank):
    """Test hook: CUDADOCTOR_SMOKE_FAULT=<stage>:<raise|hang|abort|exit>[@<rank>]."""
    spec = os.environ.get("CUDADOCTOR_SMOKE_FAULT", "")
    if ":" not in spec:
        return
    stage, kind = spec.split(":", 1)
    only = None
    if "@" in kind:
        kind, only = kind.split("@", 1)
    if stage != name or (only is not None and only != str(rank)):
        return
    if kind == "raise":
        raise RuntimeError("injected fault")
    if kind == "hang":
        while True:
            time.sleep(3600)
    if kind == "abort":
        os.abort()
    if kind == "exit":
        os._exit(7)


class DistSmoke:
    def __init__(self, cfg, rec):
        self.cfg = cfg
        self.rec = rec
        self.rank = int(cfg["rank"])
        self.world = int(cfg["world_size"])
        self.local_rank = int(cfg["local_rank"])
        self.kind = "cuda" if str(cfg.get("device", "cuda")).startswith("cuda") else "cpu"
        self.torch = None
        self.dist = None
        self.dev = None
        self.joined = False

    def stage(self, name, fn):
        rec = self.rec
        label = str(self.dev) if self.dev is not None else self.kind
        rec.begin(name, label)
        t0 = time.perf_counter()
        evidence = {}
        try:
            _inject_fault(name, self.rank)
            verdict, message, evidence = fn()
        except Skip as e:
            verdict, message = "skip", str(e)
        except Fail as e:
            verdict, message, evidence = "fail", str(e), e.evidence
        except Exception as e:
            verdict = "fail"
            text = str(e).strip()
            message = f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"[:500]
            evidence = {"traceback": traceback.format_exc(limit=6)[-3000:]}
        rec.end(name, str(self.dev) if self.dev is not None else label, verdict, time.perf_counter() - t0, message,
                evidence)
        return verdict

    def sync(self):
        if self.kind == "cuda":
            self.torch.cuda.synchronize(self.dev)

    # -- stages -----------------------------------------------------------------
    def st_init(self):
        torch, dist = self.torch, self.dist
        ev = {"rank": self.rank, "world_size": self.world, "local_rank": self.local_rank,
              "master": f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}",
              "host": socket.gethostname()}
        if not dist.is_available():
            raise Fail("this torch build has no torch.distributed", ev)
        if self.kind == "cuda":
            if not torch.cuda.is_available():
                raise Fail(f"CUDA is not available to rank {self.rank} (torch {torch.__version__}, "
                           f"torch.version.cuda={torch.version.cuda})", ev)
            n = torch.cuda.device_count()
            ev["visible_gpus"] = n
            ev["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES")
            index = self.local_rank
            if index >= n and n == 1:
                # one GPU bound to each task (srun --gpus-per-task=1): it is this rank's. Two ranks on
                # one GPU would still be caught by the membership stage (same UUID on one host).
                index = 0
                ev["note"] = f"one GPU visible per rank: cuda:0 for LOCAL_RANK {self.local_rank}"
            elif index >= n:
                raise Fail(f"LOCAL_RANK {self.local_rank} but only {n} GPU(s) visible: more ranks on this node "
                           "than GPUs (--nproc-per-node / --ntasks-per-node vs --gpus-per-node)", ev)
            torch.cuda.set_device(index)
            self.dev = torch.device("cuda", index)
            backend = "nccl"
            if not dist.is_nccl_available():
                raise Fail("this torch build has no NCCL backend", ev)
            try:
                ev["nccl_version"] = ".".join(str(x) for x in torch.cuda.nccl.version())
            except Exception:
                pass
        else:
            self.dev = torch.device("cpu")
            backend = "gloo"
        ev["backend"] = backend
        self.rec.r["distributed"]["backend"] = backend
        timeout = datetime.timedelta(seconds=float(self.cfg.get("collective_timeout_s") or 120))
        t0 = time.perf_counter()
        dist.init_process_group(backend=backend, init_method="env://", rank=self.rank, world_size=self.world,
                                timeout=timeout)
        self.joined = True
        # the first collective is where the communicator really forms (NCCL is lazy)
        probe = torch.ones(1, device=self.dev)
        dist.all_reduce(probe)
        self.sync()
        ev["init_s"] = round(time.perf_counter() - t0, 3)
        if probe.item() != self.world:
            raise Fail(f"a first all_reduce of ones gave {probe.item()}, expected {self.world}", ev)
        return "pass", f"{backend} process group of {self.world} rank(s) formed in {ev['init_s']:.2f} s", ev

    def st_membership(self):
        torch, dist = self.torch, self.dist
        me = {"rank": self.rank, "local_rank": self.local_rank, "host": socket.gethostname(), "pid": os.getpid(),
              "device": str(self.dev)}
        if self.kind == "cuda":
            p = torch.cuda.get_device_properties(self.dev)
            me["gpu"] = p.name
            me["gpu_uuid"] = str(getattr(p, "uuid", "")) or None
            if hasattr(p, "pci_bus_id"):
                me["pci"] = f"{getattr(p, 'pci_domain_id', 0):04x}:{p.pci_bus_id:02x}:{getattr(p, 'pci_device_id', 0):02x}"
        everyone = [None] * self.world
        dist.all_gather_object(everyone, me)
        ranks = sorted(int(x["rank"]) for x in everyone)
        hosts = {}
        for x in everyone:
            hosts.setdefault(x["host"], []).append(x["rank"])
        ev = {"hosts": {h: sorted(r) for h, r in sorted(hosts.items())}, "nodes": len(hosts), "ranks": everyone}
        if ranks != list(range(self.world)):
            raise Fail(f"ranks are not 0..{self.world - 1} exactly once: {ranks}", ev)
        seen = {}
        for x in everyone:
            key = (x["host"], x.get("gpu_uuid") or x.get("pci") or x["device"])
            if self.kind == "cuda" and key in seen:
                raise Fail(f"ranks {seen[key]} and {x['rank']} on {x['host']} both use the same GPU "
                           f"({x['device']}, {key[1]}): give each rank its own GPU (LOCAL_RANK / CUDA_VISIBLE_DEVICES)", ev)
            seen[key] = x["rank"]
        per_node = sorted({len(r) for r in hosts.values()})
        return "pass", (f"{self.world} rank(s) on {len(hosts)} node(s), "
                        f"{'/'.join(str(n) for n in per_node)} per node"), ev

    def st_all_reduce(self):
        torch, dist = self.torch, self.dist
        n = 1 << 20
        x = torch.full((n,), float(self.rank + 1), dtype=torch.float32, device=self.dev)
        dist.all_reduce(x)
        expected = self.world * (self.world + 1) / 2
        bad = (x != expected).nonzero()
        ev = {"elements": n, "expected": expected}
        if bad.numel():
            i = int(bad[0, 0])
            raise Fail(f"all_reduce(sum) wrong at {bad.shape[0]} of {n} elements: element {i} = {x[i].item()}, "
                       f"expected {expected}", ev)
        g = torch.Generator().manual_seed(1234)
        ref = torch.randn(n, generator=g)
        y = ref.to(self.dev) if self.rank == 0 else torch.zeros(n, device=self.dev)
        dist.broadcast(y, src=0)
        if not torch.equal(y.cpu(), ref):
            raise Fail("broadcast from rank 0 did not arrive bit for bit", ev)
        parts = [torch.empty(1024, device=self.dev) for _ in range(self.world)]
        dist.all_gather(parts, torch.full((1024,), float(self.rank), device=self.dev))
        wrong = [r for r, t in enumerate(parts) if not bool((t == r).all())]
        if wrong:
            raise Fail(f"all_gather returned wrong data for rank(s) {wrong}", ev)
        return "pass", f"all_reduce, broadcast and all_gather exact over {self.world} rank(s)", ev

    def st_bandwidth(self):
        torch, dist = self.torch, self.dist
        if self.world < 2:
            raise Skip("one rank: no interconnect to measure")
        nbytes = (64 if self.kind == "cuda" else 8) * 2**20
        x = torch.ones(nbytes // 4, dtype=torch.float32, device=self.dev)
        warm, iters = (3, 10) if self.kind == "cuda" else (1, 3)
        for _ in range(warm):
            dist.all_reduce(x)
        self.sync()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        self.sync()
        dt = (time.perf_counter() - t0) / iters
        algbw = nbytes / dt / 1e9
        busbw = algbw * 2 * (self.world - 1) / self.world
        ev = {"bytes": nbytes, "iterations": iters, "time_ms": round(dt * 1e3, 3), "algbw_gbps": round(algbw, 3),
              "busbw_gbps": round(busbw, 3), "backend": self.rec.r["distributed"].get("backend")}
        return "pass", f"all_reduce {nbytes >> 20} MiB: {dt * 1e3:.2f} ms, bus bandwidth {busbw:.2f} GB/s", ev

    def _fingerprint(self, model):
        torch = self.torch
        s1 = torch.zeros((), dtype=torch.float64)
        s2 = torch.zeros((), dtype=torch.float64)
        for i, p in enumerate(model.parameters()):
            v = p.detach().double().cpu().flatten()
            s1 += v.sum()
            s2 += (v * torch.arange(1, v.numel() + 1, dtype=torch.float64).remainder(97).add(1) * (i + 1)).sum()
        return torch.stack([s1, s2])

    def _spread(self, fp):
        torch, dist = self.torch, self.dist
        parts = [torch.zeros(2, dtype=torch.float64, device=self.dev) for _ in range(self.world)]
        dist.all_gather(parts, fp.to(self.dev))
        allfp = torch.stack([p.cpu() for p in parts])
        scale = allfp.abs().max().clamp(min=1e-30)
        return float(((allfp - allfp[0]).abs().max() / scale).item()), allfp

    def st_ddp(self):
        torch, dist = self.torch, self.dist
        nn = torch.nn
        from torch.nn.parallel import DistributedDataParallel as DDP

        torch.manual_seed(1000 + self.rank)  # deliberately different weights on every rank
        layers = []
        for i in range(len(LAYERS) - 1):
            layers.append(nn.Linear(LAYERS[i], LAYERS[i + 1]))
            if i < len(LAYERS) - 2:
                layers.append(nn.ReLU())
        model = nn.Sequential(*layers).to(self.dev)
        ddp = DDP(model, device_ids=[self.dev.index] if self.kind == "cuda" else None)
        ev = {}
        spread0, _ = self._spread(self._fingerprint(model))
        ev["weights_spread_after_wrap"] = spread0
        if spread0 > 1e-12:
            raise Fail(f"DDP did not broadcast rank 0's weights: replicas differ by {spread0:.3g}", ev)
        g = torch.Generator().manual_seed(7)
        teacher = torch.randn(LAYERS[0], LAYERS[-1], generator=g)
        g = torch.Generator().manual_seed(100 + self.rank)  # each rank its own data
        x = torch.randn(512, LAYERS[0], generator=g)
        y = (x @ teacher).argmax(1)
        x, y = x.to(self.dev), y.to(self.dev)
        opt = torch.optim.Adam(ddp.parameters(), lr=1e-3)
        lossf = nn.CrossEntropyLoss()
        steps = 30
        losses = torch.zeros(steps, device=self.dev)
        t0 = time.perf_counter()
        for s in range(steps):
            opt.zero_grad(set_to_none=True)
            loss = lossf(ddp(x), y)
            loss.backward()
            opt.step()
            losses[s] = loss.detach()
        self.sync()
        dt = time.perf_counter() - t0
        first_last = torch.stack([losses[:5].mean(), losses[-5:].mean()])
        dist.all_reduce(first_last)
        first, last = (first_last / self.world).tolist()
        spread, allfp = self._spread(self._fingerprint(model))
        ev.update({"steps": steps, "step_ms": round(dt / steps * 1e3, 3), "mean_loss_first5": round(first, 5),
                   "mean_loss_last5": round(last, 5), "weights_spread_after_training": spread})
        if spread > 1e-12:
            odd = [r for r in range(self.world) if not torch.allclose(allfp[r], allfp[0], rtol=1e-12, atol=0)]
            raise Fail(f"replicas diverged after {steps} DDP steps (relative spread {spread:.3g}; "
                       f"rank(s) {odd} differ from rank 0): gradients were not averaged the same everywhere", ev)
        if not last < first * 0.9:
            raise Fail(f"the mean loss did not fall ({first:.4f} -> {last:.4f}) in {steps} DDP steps", ev)
        return "pass", (f"{steps} DDP steps, replicas identical, mean loss {first:.3f} -> {last:.3f}, "
                        f"{dt / steps * 1e3:.1f} ms/step"), ev


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="{}", help="JSON object")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    cfg = json.loads(args.config)
    device = cfg.get("device") or "cuda"
    rec = Recorder(args.out, device)
    rec.r["distributed"] = {"rank": cfg.get("rank"), "world_size": cfg.get("world_size"),
                            "local_rank": cfg.get("local_rank"), "host": socket.gethostname(),
                            "master": f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}",
                            "backend": None}
    rec.r["plan"] = [[s, device] for s in STAGES]
    faulthandler.enable()
    if hasattr(faulthandler, "register"):
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    if cfg.get("timeout_s"):
        t = float(cfg["timeout_s"])
        faulthandler.dump_traceback_later(max(t * 0.9, t - 3), exit=False)
    rec.r["env"] = {"python": sys.version.split()[0], "executable": sys.executable, "pid": os.getpid(),
                    "nccl_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(("NCCL_", "TORCH_NCCL_"))}}
    rec.begin("init", device)
    import torch  # noqa: E402  (may crash: the parent records that as a failed init stage)
    import torch.distributed as dist  # noqa: E402

    rec.r["env"].update({"torch": torch.__version__, "torch_cuda": torch.version.cuda})
    smoke = DistSmoke(cfg, rec)
    smoke.torch, smoke.dist = torch, dist
    fns = {"init": smoke.st_init, "membership": smoke.st_membership, "all-reduce": smoke.st_all_reduce,
           "bandwidth": smoke.st_bandwidth, "ddp": smoke.st_ddp}
    # Collectives must be called in the same order on every rank: after a failed stage this rank
    # stops (the others then time out in their next collective and say so) instead of pairing
    # its next collective with another stage's.
    failed = None
    for name in STAGES:
        if failed is not None:
            rec.begin(name, str(smoke.dev or device))
            rec.end(name, str(smoke.dev or device), "skip", 0.0, f"not run: stage '{failed}' failed on this rank", {})
            continue
        if smoke.stage(name, fns[name]) == "fail":
            failed = name
    if smoke.joined and failed is None:
        try:
            dist.barrier()
            dist.destroy_process_group()
        except Exception:
            pass
    verdicts = [s["verdict"] for s in rec.r["stages"]]
    rec.r["status"] = "fail" if "fail" in verdicts else "pass"
    rec.r["state"] = "finished"
    rec.r["current"] = None
    rec.save()
    faulthandler.cancel_dump_traceback_later()
    return 0 if rec.r["status"] == "pass" else 1


if __name__ == "__main__":
    sys.exit(main())
