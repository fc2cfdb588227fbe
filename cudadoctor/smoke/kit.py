"""What both smoke workload children share: the result file, stage verdicts, fault injection, the
MNIST network and its training loop (the recipe: docs/smoke.md).

STANDALONE (standard library; torch is passed in): loaded by path by workload.py and dist_workload.py,
which may run under another interpreter than cudadoctor's; the parent side imports it too.
"""

import argparse
import faulthandler
import importlib.util
import json
import math
import os
import signal
import sys
import time
import traceback

MEAN, STD = 0.1307, 0.3081
LAYERS = (784, 512, 256, 128, 64, 10)
BATCH = 512
LR = 4e-3
BUDGET_EPOCHS = 1.5
DEFAULT_MAX_EPOCHS = 4
FAULT_VAR = "CUDADOCTOR_SMOKE_FAULT"


def load_sibling(name):
    """cudadoctor/smoke/<name>.py loaded by path (once per process), without importing cudadoctor."""
    key = f"cudadoctor_smoke_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, os.path.join(os.path.dirname(__file__), name + ".py"))
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


class Recorder:
    """The child's result file, rewritten after every change (temp file + atomic rename), so that a
    crash or a hang leaves what was finished and says which stage was under way."""

    def __init__(self, out, device):
        self.out = out
        self.r = dict(state="running", device=device, status=None, plan=[], current=None, stages=[], data={}, env={}, error=None)

    def save(self):
        tmp = f"{self.out}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(self.r, f, indent=1, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.out)

    def begin(self, name, device):
        self.r["current"] = {"name": name, "device": device, "started_unix": time.time()}
        self.save()

    def end(self, name, device, verdict, duration, message, evidence):
        self.r["stages"].append(stage_row(name, device, verdict, message, duration, evidence))
        self.r["current"] = None
        self.save()

    def skip_rest(self, names, device, why):
        for name in names:
            self.begin(name, device)
            self.end(name, device, "skip", 0.0, why, {})

    def finish(self):
        if self.r["status"] is None:
            self.r["status"] = "fail" if any(s["verdict"] == "fail" for s in self.r["stages"]) else "pass"
        self.r.update({"state": "finished", "current": None})
        self.save()
        faulthandler.cancel_dump_traceback_later()
        return {"pass": 0, "fail": 1}.get(self.r["status"], 3)


def stage_row(name, device, verdict, message, duration=0.0, evidence=None):
    """One stage of a result, as every smoke output lists it."""
    return {
        "name": name,
        "device": device,
        "verdict": verdict,
        "duration_s": round(duration, 4),
        "message": message,
        "evidence": evidence or {},
    }


class Skip(Exception):
    pass


class Fail(Exception):
    def __init__(self, message, evidence=None):
        super().__init__(message)
        self.evidence = evidence or {}


def run_stage(rec, name, device, fn, rank=None):
    """Run one stage: (verdict, message, evidence) from fn, a Skip, a Fail or any exception; recorded."""
    rec.begin(name, device)
    t0 = time.perf_counter()
    evidence = {}
    try:
        inject_fault(name, rank)
        verdict, message, evidence = fn()
    except Skip as e:
        verdict, message = "skip", str(e)
    except Fail as e:
        verdict, message, evidence = "fail", str(e), e.evidence
    except Exception as e:
        text = str(e).strip()
        verdict = "fail"
        message = f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"[:600]
        evidence = {"traceback": traceback.format_exc(limit=6)[-3000:]}
    rec.end(name, device, verdict, time.perf_counter() - t0, message, evidence)
    return verdict


def start(doc, argv):
    """A workload child's command line (--config JSON --out FILE): (cfg, its Recorder). A segfault prints the
    Python stack for the parent; so does the watchdog's SIGTERM; and so does a stack dump shortly before
    the parent's timeout, to show where a hang is."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--config", default="{}", help="JSON object")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    cfg = json.loads(args.config)
    cfg["device"] = cfg.get("device") or "cuda"
    rec = Recorder(args.out, cfg["device"])
    rec.r["env"] = {"python": sys.version.split()[0], "executable": sys.executable, "pid": os.getpid()}
    faulthandler.enable()
    if hasattr(faulthandler, "register"):
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    if cfg.get("timeout_s"):
        t = float(cfg["timeout_s"])
        faulthandler.dump_traceback_later(max(t * 0.9, t - 3), exit=False)
    return cfg, rec


def import_torch(cfg, rec):
    """torch, imported (this may crash: the parent records that as a failed device stage)."""
    import torch

    rec.r["env"].update({"torch": torch.__version__, "torch_cuda": torch.version.cuda})
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg["threads"]))
    return torch


# -- Fault injection (tests): CUDADOCTOR_SMOKE_FAULT=<stage>:<kind>[@<rank>][,...]


def fault_for(stage, rank=None, spec=None):
    """The fault kind injected at ``stage`` (for ``rank``, when the entry names one), or None.
    Kinds: raise, hang, abort, segv, exit (the child ends with code 17), kill (the rank's worker and
    the child are killed), wrong (the rank contributes a wrong value to the exact all-reduce)."""
    spec = os.environ.get(FAULT_VAR, "") if spec is None else spec
    for part in spec.split(","):
        where, _, kind = part.strip().partition(":")
        kind, _, only = kind.partition("@")
        if where == stage and kind and (not only or (rank is not None and only == str(rank))):
            return kind
    return None


def inject_fault(stage, rank=None):
    kind = fault_for(stage, rank)
    if kind is None or kind == "wrong":
        return
    sys.stderr.write(f"{FAULT_VAR}: {kind} at stage {stage}" + (f" on rank {rank}" if rank is not None else "") + "\n")
    sys.stderr.flush()
    if kind == "raise":
        raise RuntimeError("injected fault")
    if kind == "hang":
        while True:
            time.sleep(3600)
    if kind == "abort":
        os.abort()
    if kind == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if kind == "exit":
        os._exit(17)
    if kind == "kill":  # the whole rank dies: its worker process (our parent), then us
        os.kill(os.getppid(), signal.SIGKILL)
        os._exit(137)


# -- The network and its training


class Progress:
    """A progress bar on stderr (the parent forwards it when asked), at most ten updates a second."""

    def __init__(self, enabled, label, total=1):
        self.enabled, self.label, self.total, self.last, self.t0 = enabled, label, max(1, total), 0.0, time.perf_counter()

    def update(self, n, extra="", force=False):
        now = time.perf_counter()
        if self.enabled and (force or now - self.last >= 0.1):
            self.last = now
            bar = "#" * int(min(1.0, n / self.total) * 30)
            sys.stderr.write(f"\r{self.label} [{bar:<30}] {n}/{self.total} {now - self.t0:5.1f}s {extra}   ")
            sys.stderr.flush()

    def close(self, extra=""):
        self.update(self.total, extra, force=True)
        if self.enabled:
            sys.stderr.write("\n")


def rel_err(a, b):
    """max|a-b| / max|b|: error relative to the scale of the reference."""
    a = a.detach().double().cpu()
    b = b.detach().double().cpu()
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / (scale if scale > 0 else 1.0)


def mlp(nn):
    """The MNIST network: 784-512-256-128-64-10, ReLU, He init."""
    layers = []
    for i in range(len(LAYERS) - 1):
        lin = nn.Linear(LAYERS[i], LAYERS[i + 1])
        nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if i < len(LAYERS) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def sync(torch, dev):
    """Wait for the device's queued work (timings; the CPU has none)."""
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def gpu_count(torch):
    """The CUDA devices this process sees (0 for a CPU-only torch, or when CUDA cannot say)."""
    try:
        return torch.cuda.device_count() if torch.version.cuda else 0
    except Exception:
        return 0


def normalise(x_u8, dev):
    x = x_u8.to(dev, non_blocking=False).reshape(x_u8.shape[0], -1).float()
    return x.div_(255.0).sub_(MEAN).div_(STD)


def resident(data, dev):
    """The data set on ``dev``, normalised once: (xtr, ytr, xte, yte)."""
    return (normalise(data["xtr"], dev), data["ytr"].to(dev), normalise(data["xte"], dev), data["yte"].to(dev))


def check_residency(torch, dev, model, tensors):
    """(ok, reason): every parameter and tensor lives on dev (same type and index)."""

    def same(d):
        return d.type == dev.type and (dev.type != "cuda" or (d.index or 0) == (dev.index or 0))

    bad = [f"parameter {n} on {p.device}" for n, p in model.named_parameters() if not same(p.device)]
    bad += [f"tensor #{i} on {t.device}" for i, t in enumerate(tensors) if not same(t.device)]
    if not bad and dev.type == "cuda":
        try:
            if torch.cuda.memory_allocated(dev) == 0:
                bad.append(f"torch.cuda.memory_allocated({dev}) is 0")
        except Exception as e:
            bad.append(f"torch.cuda.memory_allocated({dev}) failed: {e}")
    return (not bad), "; ".join(bad[:5])


# -- Optimisers, written out: constructing any torch.optim optimiser imports torch._dynamo (and sympy) through
# its @torch._disable_dynamo methods — 2.6 s on the project's CPU machine, more than the training takes. These
# are torch's algorithms step for step (Adam as torch.optim.Adam with foreach=False, OneCycleLR's cosine
# schedule with beta1 cycling), checked against torch.optim in tests/test_smoke.py.


class _Optimiser:
    """What the smoke and GradScaler use of an optimiser: ``param_groups`` (one), ``zero_grad``, ``step``."""

    param_groups: list

    def zero_grad(self, set_to_none=True):
        for p in self.param_groups[0]["params"]:
            p.grad = None


class Adam(_Optimiser):
    """torch.optim.Adam(params, lr, betas, eps=1e-8), no weight decay."""

    def __init__(self, torch, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        self.torch = torch
        self.param_groups = [{"params": list(params), "lr": lr, "betas": tuple(betas), "eps": eps}]
        self.state = {}

    def step(self):
        torch = self.torch
        g = self.param_groups[0]
        lr, (beta1, beta2), eps = g["lr"], g["betas"], g["eps"]
        with torch.no_grad():
            for p in g["params"]:
                if p.grad is None:
                    continue
                st = self.state.get(p)
                if st is None:
                    st = self.state[p] = {"step": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
                st["step"] += 1
                t = st["step"]
                st["m"].lerp_(p.grad, 1 - beta1)
                st["v"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (st["v"].sqrt() / math.sqrt(1 - beta2**t)).add_(eps)
                p.addcdiv_(st["m"], denom, value=-lr / (1 - beta1**t))


class SGD(_Optimiser):
    """torch.optim.SGD(params, lr), no momentum."""

    def __init__(self, torch, params, lr):
        self.torch = torch
        self.param_groups = [{"params": list(params), "lr": lr}]

    def step(self):
        with self.torch.no_grad():
            for p in self.param_groups[0]["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-self.param_groups[0]["lr"])


class OneCycle:
    """torch.optim.lr_scheduler.OneCycleLR(opt, max_lr, total_steps, pct_start) with its defaults: cosine
    annealing, div_factor 25, final_div_factor 1e4, beta1 cycled between 0.95 and 0.85."""

    def __init__(self, opt, max_lr, total_steps, pct_start=0.3, div_factor=25.0, final_div_factor=1e4):
        initial = max_lr / div_factor
        self.opt, self.total = opt, total_steps
        end1 = float(pct_start * total_steps) - 1
        # (end step, lr from -> to, beta1 from -> to), as OneCycleLR's two phases
        self.phases = [(end1, initial, max_lr, 0.95, 0.85), (total_steps - 1, max_lr, initial / final_div_factor, 0.85, 0.95)]
        self.n = 0
        self._set()

    @staticmethod
    def _cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    def _set(self):
        start = 0.0
        for end, lr0, lr1, b0, b1 in self.phases:
            if self.n <= end or end == self.phases[-1][0]:
                pct = (self.n - start) / (end - start)
                g = self.opt.param_groups[0]
                g["lr"] = self._cos(lr0, lr1, pct)
                g["betas"] = (self._cos(b0, b1, pct), g["betas"][1])
                return
            start = end

    def step(self):
        self.n += 1
        self._set()


def _curve(values: list, points: int = 24) -> list:
    """The loss history in at most ``points`` bucket means (for the sparkline and the JSON)."""
    if not values:
        return []
    n = min(points, len(values))
    edges = [round(i * len(values) / n) for i in range(n + 1)]
    return [round(sum(values[a:b]) / (b - a), 4) for a, b in zip(edges, edges[1:]) if b > a]


def _accuracy(torch, net, xte, yte, shard, all_reduce):
    """Test accuracy; with a shard, of this rank's share, summed over the ranks by ``all_reduce``."""
    rank, world = shard
    xs, ys = xte[rank::world], yte[rank::world]
    net.eval()
    with torch.no_grad():
        correct = torch.zeros((), dtype=torch.long, device=xs.device)
        for i in range(0, xs.shape[0], 5000):
            correct += (net(xs[i : i + 5000]).argmax(1) == ys[i : i + 5000]).sum()
    net.train()
    counts = torch.stack([correct, torch.tensor(xs.shape[0], device=xs.device)])
    if all_reduce is not None:
        all_reduce(counts)
    return counts[0].item() / counts[1].item()  # one host sync per evaluation


def fit(torch, model, data, bar, max_epochs, progress=None, shard=(0, 1), all_reduce=None):
    """Train ``model`` (on the data's device; a DDP wrapper for a job) on resident ``data`` until the
    test accuracy reaches ``bar`` or ``max_epochs`` ran. Returns the evidence; judge it with :func:`judge`."""
    xtr, ytr, xte, yte = data
    rank, world = shard
    net = getattr(model, "module", model)
    n, dev = xtr.shape[0], xtr.device
    opt = Adam(torch, model.parameters(), lr=LR, betas=(0.9, 0.99))
    steps_per_epoch = n // BATCH
    budget = max(1, int(min(BUDGET_EPOCHS, max_epochs) * steps_per_epoch))
    max_steps = int(max_epochs * steps_per_epoch)
    sched = OneCycle(opt, max_lr=LR, total_steps=budget, pct_start=0.2)
    evals = {int(budget * f) for f in (2 / 3, 5 / 6, 1.0)}
    losses = torch.zeros(max_steps, device=dev)
    history, acc, step, reached_at = [], 0.0, 0, None
    progress = progress or Progress(False, "")
    progress.total = max(1, min(max_steps, budget))
    t_train = time.perf_counter()
    while step < max_steps and reached_at is None:
        perm = torch.randperm(n, device=dev)  # the same on every rank: the same seed
        for i in range(0, n - BATCH + 1, BATCH):
            idx = perm[i : i + BATCH][rank::world]
            loss = torch.nn.functional.cross_entropy(model(xtr[idx]), ytr[idx], label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses[step] = loss.detach()  # stays on the device: no per-step sync
            step += 1
            if step <= budget:
                sched.step()
            progress.update(step, f"acc {acc:.4f}" if history else "")
            if step in evals or (step > budget and (step - budget) % max(1, steps_per_epoch // 4) == 0):
                acc = _accuracy(torch, net, xte, yte, shard, all_reduce)
                history.append(
                    {
                        "step": step,
                        "epoch": round(step / steps_per_epoch, 3),
                        "test_accuracy": acc,
                        "elapsed_s": round(time.perf_counter() - t_train, 3),
                    }
                )
                if acc >= bar:
                    reached_at = time.perf_counter()
                    break
                if step == budget:  # not there yet: continue gently (lower constant LR)
                    for gr in opt.param_groups:
                        gr["lr"] = LR / 10
            if step >= max_steps:
                break
    if reached_at is None:
        acc = _accuracy(torch, net, xte, yte, shard, all_reduce)
    sync(torch, dev)
    t_end = time.perf_counter()
    progress.close(f"acc {acc:.4f}")
    lh = losses[:step].tolist()
    k = max(1, min(10, step // 4))
    ev = {
        "batch": BATCH,
        "optimizer": f"Adam(lr={LR}, betas=(0.9, 0.99)), one-cycle over {budget} steps",
        "accuracy_bar": bar,
        "max_epochs": max_epochs,
        "steps": step,
        "epochs": round(step / steps_per_epoch, 3),
        "test_accuracy": acc,
        "history": history,
        "loss_curve": _curve(lh),
        "loss_first": sum(lh[:k]) / k,
        "loss_last": sum(lh[-k:]) / k,
        "train_s": round(t_end - t_train, 3),
        "samples_per_s": round(step * BATCH / (t_end - t_train), 1),
        "losses_finite": all(math.isfinite(v) for v in lh),
    }
    if reached_at is not None:
        ev["time_to_target_s"] = round(reached_at - t_train, 3)
    return ev


def judge(ev, what):
    """The training verdict: (verdict, message, evidence), or a Fail."""
    first, last, acc, bar = ev["loss_first"], ev["loss_last"], ev["test_accuracy"], ev["accuracy_bar"]
    if not ev["losses_finite"]:
        raise Fail("loss became non-finite", ev)
    if not last < 0.5 * first:
        raise Fail(f"loss did not fall: {first:.3f} -> {last:.3f}", ev)
    if acc < bar:
        raise Fail(f"test accuracy {acc:.4f} < {bar} on {what} after {ev['steps']} steps ({ev['epochs']} epochs)", ev)
    took = f"after {ev['epochs']} epochs in {ev['time_to_target_s']:.2f} s"
    return "pass", f"{what}: test accuracy {acc:.4f} >= {bar} {took}; loss {first:.2f} -> {last:.2f}", ev
