#!/usr/bin/env python3
"""cudadoctor smoke workload -- STANDALONE child process of `cudadoctor smoke`.

Run as:  python workload.py --config '{"device": "cuda"}' --out RESULT.json

Imports only the standard library and torch, and its siblings data.py and kit.py by path, never
cudadoctor: the parent may run it with a different interpreter than its own. The result file
(kit.Recorder) is rewritten after every stage, so a crash half-way leaves the finished stages. torch is
imported lazily: an interpreter without torch can import this module.
"""

import copy
import importlib.util
import math
import os
import platform
import sys
import time

T_PROCESS = time.perf_counter()
HERE = os.path.dirname(os.path.abspath(__file__))


if "cudadoctor_smoke_kit" not in sys.modules:  # kit.py by path (kit.load_sibling loads the others)
    _spec = importlib.util.spec_from_file_location("cudadoctor_smoke_kit", os.path.join(HERE, "kit.py"))
    assert _spec is not None and _spec.loader is not None
    sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules[_spec.name])
kit = sys.modules["cudadoctor_smoke_kit"]
data = kit.load_sibling("data")
DataError, read_idx = data.DataError, data.read_idx
Fail, Skip, rel_err, check_residency = kit.Fail, kit.Skip, kit.rel_err, kit.check_residency
BATCH, MEAN, STD = kit.BATCH, kit.MEAN, kit.STD
STAGES = ("device", "agreement", "training", "throughput", "mixed-precision", "cudnn", "transfers")


class Smoke:
    def __init__(self, cfg, rec, torch):
        self.cfg, self.rec, self.torch, self.nn = cfg, rec, torch, torch.nn
        self.progress = bool(cfg.get("progress"))
        self.data = self.data_error = self.cpu_throughput = None  # the data: a dict of CPU tensors
        self.dead = {}  # device -> reason
        self.seed = int(cfg.get("seed", 0))

    def stage(self, name, device):
        """Run one stage on ``device``; after a CUDA error that broke the device, its later stages are skipped."""
        fn = getattr(self, "st_" + name.replace("-", "_"))
        if device in self.dead:
            fn = self.unusable
        verdict = kit.run_stage(self.rec, name, device, lambda: fn(device))
        if verdict == "fail" and device.startswith("cuda") and "traceback" in self.rec.r["stages"][-1]["evidence"]:
            try:
                self.torch.cuda.synchronize(device)
            except Exception as e2:
                self.dead[device] = f"{type(e2).__name__}: {str(e2).splitlines()[0] if str(e2) else ''}"
        return verdict

    def unusable(self, device):
        raise Skip(f"device unusable after an earlier error: {self.dead[device]}")

    def get_data(self):
        if self.data is None:
            if self.data_error is not None:
                raise Skip(f"no data: {self.data_error.kind}")
            try:
                self.data = data.load(self.torch, self.cfg, self.rec.r["data"])
            except DataError as e:
                self.data_error = e
                self.rec.r["error"] = e.to_dict()
                raise Skip(f"no data: {e.kind}") from None
            self.rec.save()
        return self.data

    def st_device(self, device):
        torch = self.torch
        ev = {
            "torch": torch.__version__,
            "torch_cuda": torch.version.cuda,
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        }
        if device == "cpu":
            x = torch.arange(1024, dtype=torch.float32)
            ok = float((x * 2).sum()) == 1024 * 1023.0
            ev.update(
                {"threads": torch.get_num_threads(), "machine": platform.machine(), "processor": platform.processor() or None}
            )
            if not ok:
                raise Fail("tiny CPU kernel gave a wrong result", ev)
            return "pass", f"CPU, {torch.get_num_threads()} threads (torch {torch.__version__})", ev
        if torch.version.cuda is None:
            raise Fail(
                f"torch {torch.__version__} is a CPU-only build: it cannot use any NVIDIA GPU (install a CUDA build of torch)", ev
            )
        try:
            torch.cuda.init()
        except Exception as e:
            raise Fail(f"CUDA failed to initialise: {type(e).__name__}: {str(e).strip()}", ev) from e
        n = torch.cuda.device_count()
        ev["device_count"] = n
        idx = torch.device(device).index or 0
        if idx >= n:
            raise Fail(f"{device} requested but only {n} CUDA device(s) are visible", ev)
        dev = torch.device("cuda", idx)
        p = torch.cuda.get_device_properties(dev)
        free = torch.cuda.mem_get_info(dev)[0]
        ev.update(
            {
                "name": p.name,
                "capability": f"{p.major}.{p.minor}",
                "total_memory_mib": p.total_memory >> 20,
                "free_memory_mib": free >> 20,
                "multiprocessors": p.multi_processor_count,
                "arch_list": torch.cuda.get_arch_list(),
            }
        )
        t0 = time.perf_counter()
        x = torch.arange(1 << 20, device=dev, dtype=torch.float32)
        s = float((x * 2).sum())  # host sync: the kernel really ran
        ev["kernel_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        want = float((1 << 20) * ((1 << 20) - 1))
        if abs(s - want) > want * 1e-6:
            raise Fail(f"tiny kernel on {device} returned {s}, expected {want}", ev)
        return "pass", f"{p.name} (sm_{p.major}{p.minor}, {p.total_memory >> 20} MiB)", ev

    def st_agreement(self, device):
        torch, nn = self.torch, self.nn
        dev = torch.device(device)
        g = torch.Generator().manual_seed(self.seed + 7)
        torch.manual_seed(self.seed + 7)
        ref = kit.mlp(self.nn)
        x = torch.randn(256, 784, generator=g)
        y = torch.randint(0, 10, (256,), generator=g)

        def run(model, xx, yy):  # (loss, [output, every parameter gradient])
            out = model(xx)
            loss = nn.functional.cross_entropy(out, yy)
            loss.backward()
            return loss.detach(), [out.detach()] + [p.grad.detach() for p in model.parameters()]

        def err(got, want):
            return max(rel_err(a, b) for a, b in zip(got, want))

        _, t64 = run(copy.deepcopy(ref).double(), x.double(), y)
        l32, t32 = run(copy.deepcopy(ref), x, y)
        err_cpu = err(t32, t64)
        ev = {
            "batch": 256,
            "reference": "float64 on CPU",
            "metric": "max|a-b| / max|reference| over outputs and every parameter gradient",
            "cpu_float32_vs_float64": err_cpu,
        }
        tol32 = 1e-4
        if dev.type == "cpu":
            ev["tolerance"] = tol32
            if not (err_cpu <= tol32):
                raise Fail(f"CPU float32 disagrees with float64: {err_cpu:.2e} > {tol32:.0e}", ev)
            return "pass", f"CPU float32 vs float64: {err_cpu:.1e} <= {tol32:.0e} (no second device to compare)", ev
        tf32_asked = torch.backends.cuda.matmul.allow_tf32 or torch.get_float32_matmul_precision() != "highest"
        tf32 = torch.cuda.get_device_capability(dev)[0] >= 8 and tf32_asked
        tol = 2e-2 if tf32 else tol32
        ld, td = run(copy.deepcopy(ref).to(dev), x.to(dev), y.to(dev))
        kit.sync(self.torch, dev)
        err_dev64, err_devcpu = err(td, t64), err(td, t32)
        ev.update(
            {
                "tf32_matmul": tf32,
                "tolerance": tol,
                "device_vs_float64": err_dev64,
                "device_vs_cpu_float32": err_devcpu,
                "loss_cpu": float(l32),
                "loss_device": float(ld),
            }
        )
        bad = [k for k in ("device_vs_float64", "device_vs_cpu_float32") if not (ev[k] <= tol)]
        if bad:
            raise Fail(
                f"{device} disagrees with the CPU: " + ", ".join(f"{k}={ev[k]:.2e}" for k in bad) + f" > tolerance {tol:.0e}", ev
            )
        tf32_on = " (TF32 on)" if tf32 else ""
        return "pass", f"outputs+gradients match CPU: {err_devcpu:.1e} (vs float64 {err_dev64:.1e}) <= {tol:.0e}{tf32_on}", ev

    def st_training(self, device):
        torch = self.torch
        dev = torch.device(device)
        cpu = self.get_data()
        synthetic, bar = bool(self.cfg.get("synthetic")), self.rec.r["data"]["accuracy_bar"]
        t_start = time.perf_counter()
        tensors = kit.resident(cpu, dev)
        torch.manual_seed(self.seed)
        model = kit.mlp(self.nn).to(dev)
        where = {
            "params": sorted({str(p.device) for p in model.parameters()}),
            "train_data": str(tensors[0].device),
            "test_data": str(tensors[2].device),
        }
        ok, why = check_residency(torch, dev, model, tensors)
        if not ok:  # a run that silently used the CPU is a failure
            raise Fail(f"training would not run on {device}: {why}", {"tensor_devices": where})
        prog = kit.Progress(self.progress, f"training {device}")
        t_train = time.perf_counter()
        ev = kit.fit(torch, model, tensors, bar, self.cfg.get("epochs") or kit.DEFAULT_MAX_EPOCHS, prog)
        ev.update({"tensor_devices": where, "setup_s": round(t_train - t_start, 3)})
        if "time_to_target_s" in ev:
            ev["process_time_to_target_s"] = round(t_train + ev["time_to_target_s"] - T_PROCESS, 3)
        if dev.type == "cuda":
            ev["max_memory_allocated_mib"] = round(torch.cuda.max_memory_allocated(dev) / 2**20, 1)
        ok, why = check_residency(torch, dev, model, tensors)
        if not ok:
            raise Fail(f"tensors left {device}: {why}", ev)
        return kit.judge(ev, "synthetic seven-segment digits" if synthetic else "MNIST")

    def _steps_per_s(self, dev, steps=20, warmup=3, batch=1024):
        torch, nn = self.torch, self.nn
        g = torch.Generator().manual_seed(3)
        x = torch.randn(batch * 4, 784, generator=g).to(dev)
        y = torch.randint(0, 10, (batch * 4,), generator=g).to(dev)
        torch.manual_seed(3)
        model = kit.mlp(self.nn).to(dev)
        opt = kit.Adam(torch, model.parameters(), lr=1e-3)
        for i in range(warmup + steps):
            if i == warmup:
                kit.sync(self.torch, dev)
                t0 = time.perf_counter()
            j = (i % 4) * batch
            loss = nn.functional.cross_entropy(model(x[j : j + batch]), y[j : j + batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        kit.sync(self.torch, dev)
        dt = time.perf_counter() - t0
        if not math.isfinite(float(loss.detach())):
            raise Fail("throughput run produced a non-finite loss")
        return steps * batch / dt, dt

    def st_throughput(self, device):
        torch = self.torch
        dev = torch.device(device)
        steps, batch = 20, 1024
        if self.cpu_throughput is None:
            self.cpu_throughput = self._steps_per_s(torch.device("cpu"), steps, 3, batch)
        cpu, cpu_s = self.cpu_throughput
        ev = {
            "steps": steps,
            "batch": batch,
            "what": "MLP forward+backward+Adam step",
            "cpu_samples_per_s": round(cpu, 1),
            "cpu_s": round(cpu_s, 3),
        }
        if dev.type == "cpu":
            ev["speedup"] = None
            return "pass", f"CPU {cpu:,.0f} samples/s (nothing to compare against)", ev
        d, d_s = self._steps_per_s(dev, steps, 5, batch)
        ev.update({"device_samples_per_s": round(d, 1), "device_s": round(d_s, 3), "speedup": round(d / cpu, 2)})
        msg = f"{device} {d:,.0f} samples/s vs CPU {cpu:,.0f} samples/s: {d / cpu:.1f}x"
        if d < cpu:
            raise Fail(msg + " -- the GPU is SLOWER than the CPU", ev)
        return "pass", msg, ev

    def st_mixed_precision(self, device):
        torch, nn = self.torch, self.nn
        dev = torch.device(device)
        cpu = self.get_data()
        dtype = torch.bfloat16 if dev.type != "cuda" or torch.cuda.is_bf16_supported() else torch.float16
        use_scaler = dtype == torch.float16
        torch.manual_seed(self.seed + 1)
        model = kit.mlp(self.nn).to(dev)
        opt = kit.Adam(torch, model.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler(dev.type) if use_scaler else None
        x = kit.normalise(cpu["xtr"][: BATCH * 4], dev)
        y = cpu["ytr"][: BATCH * 4].to(dev)
        losses = []
        out_dtype = None
        for i in range(8):
            j = (i % 4) * BATCH
            with torch.autocast(device_type=dev.type, dtype=dtype):
                out = model(x[j : j + BATCH])
                loss = nn.functional.cross_entropy(out, y[j : j + BATCH])
            out_dtype = out.dtype
            opt.zero_grad(set_to_none=True)
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            losses.append(loss.detach().float())
        losses = torch.stack(losses).tolist()
        finite_params = all(bool(torch.isfinite(p).all()) for p in model.parameters())
        ev = {
            "dtype": str(dtype).replace("torch.", ""),
            "grad_scaler": use_scaler,
            "steps": 8,
            "autocast_output_dtype": str(out_dtype).replace("torch.", ""),
            "losses": losses,
            "params_finite": finite_params,
        }
        if use_scaler:
            ev["final_scale"] = float(scaler.get_scale())
        if out_dtype != dtype:
            raise Fail(f"autocast did not engage: output dtype {out_dtype}, expected {dtype}", ev)
        if not finite_params or not all(math.isfinite(v) for v in losses):
            raise Fail("mixed precision produced non-finite values", ev)
        how = f"{ev['dtype']} autocast{' + GradScaler' if use_scaler else ''}"
        return "pass", f"{how}: 8 steps finite, loss {losses[0]:.2f} -> {losses[-1]:.2f}", ev

    def st_cudnn(self, device):
        torch, nn = self.torch, self.nn
        dev = torch.device(device)
        if dev.type == "cpu":
            raise Skip("cuDNN is NVIDIA's GPU library; the CPU path uses oneDNN/native kernels")
        cudnn = torch.backends.cudnn
        ev = {
            "available": cudnn.is_available(),
            "enabled": cudnn.enabled,
            "version": cudnn.version() if cudnn.is_available() else None,
            "allow_tf32": cudnn.allow_tf32,
        }
        if not ev["available"]:
            raise Fail("cuDNN is not available to this torch build", ev)
        if not ev["enabled"]:
            raise Fail("cuDNN is disabled (torch.backends.cudnn.enabled = False)", ev)
        cpu = self.get_data()
        torch.manual_seed(self.seed + 2)
        net = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 7 * 7, 10),
        )
        x_cpu = ((cpu["xtr"][:64].float() / 255 - MEAN) / STD).unsqueeze(1)
        y_cpu = cpu["ytr"][:64]
        with torch.no_grad():
            ref = net(x_cpu)
        netd = copy.deepcopy(net).to(dev)
        xd = x_cpu.to(dev)
        ev["cudnn_acceptable_input"] = bool(cudnn.is_acceptable(xd))
        opt = kit.SGD(torch, netd.parameters(), lr=0.01)
        out = netd(xd)
        loss = nn.functional.cross_entropy(out, y_cpu.to(dev))
        loss.backward()
        opt.step()
        kit.sync(self.torch, dev)
        tf32 = bool(cudnn.allow_tf32) and torch.cuda.get_device_capability(dev)[0] >= 8
        tol = 2e-2 if tf32 else 1e-4
        err = rel_err(out, ref)
        ev.update(
            {
                "conv_output_vs_cpu": err,
                "tolerance": tol,
                "loss": float(loss),
                "grads_finite": all(bool(torch.isfinite(p.grad).all()) for p in netd.parameters()),
            }
        )
        if not ev["cudnn_acceptable_input"]:
            raise Fail("cuDNN declined the conv input (torch.backends.cudnn.is_acceptable is False)", ev)
        if not (err <= tol) or not ev["grads_finite"]:
            raise Fail(f"conv net on {device} disagrees with the CPU ({err:.1e} > {tol:.0e}) or has non-finite gradients", ev)
        return "pass", f"conv net step via cuDNN {ev['version']}; output vs CPU {err:.1e} <= {tol:.0e}", ev

    def st_transfers(self, device):
        torch = self.torch
        dev = torch.device(device)
        if dev.type == "cpu":
            raise Skip("host<->device copies need a GPU")
        nbytes, reps = 64 << 20, 10
        dbuf = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        ev = {"bytes": nbytes, "reps": reps, "unit": "GB/s (1e9 bytes/s), timed with CUDA events"}
        for kind in ("pageable", "pinned"):
            host = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, pin_memory=(kind == "pinned"))
            back = torch.empty(nbytes, dtype=torch.uint8, pin_memory=(kind == "pinned"))
            nb = kind == "pinned"
            for direction, dst, src in (("h2d", dbuf, host), ("d2h", back, dbuf)):
                dst.copy_(src, non_blocking=nb)  # warm-up
                torch.cuda.synchronize(dev)
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(reps):
                    dst.copy_(src, non_blocking=nb)
                e.record()
                e.synchronize()
                ms = s.elapsed_time(e)
                ev[f"{direction}_{kind}_gbps"] = round(nbytes * reps / (ms / 1000) / 1e9, 2)
            torch.cuda.synchronize(dev)
            if not torch.equal(host, back):
                raise Fail(f"{kind} round trip corrupted data", ev)
        notes = []
        if ev["h2d_pinned_gbps"] < 3:
            notes.append("pinned H2D below 3 GB/s: check the PCIe link (x1/x4 slot, Gen1 fallback, riser)")
        ev["notes"] = notes
        msg = (
            f"H2D pinned {ev['h2d_pinned_gbps']} / pageable {ev['h2d_pageable_gbps']} GB/s, "
            f"D2H pinned {ev['d2h_pinned_gbps']} / pageable {ev['d2h_pageable_gbps']} GB/s; round trip intact"
        )
        return "pass", msg + (f" ({notes[0]})" if notes else ""), ev


def _devices(torch, device):
    if device != "all":
        return [device]
    return [f"cuda:{i}" for i in range(kit.gpu_count(torch))] or ["cuda"]


def _prepare(cfg, rec):
    """Data located (downloaded when asked), torch imported: the Smoke, or None after a data error."""
    info = rec.r["data"]
    try:
        data.locate(cfg, info)
    except DataError as e:
        rec.r.update({"error": e.to_dict(), "status": "error"})
        return None
    rec.begin("device", cfg["device"] if cfg["device"] != "all" else "cuda")
    smoke = Smoke(cfg, rec, kit.import_torch(cfg, rec))
    rec.r["env"]["torchvision"] = tv = data.torchvision_version()
    info["torchvision"] = tv or "not installed"
    return smoke


def main(argv=None):
    cfg, rec = kit.start(__doc__, argv)
    smoke = _prepare(cfg, rec)
    if smoke is None:
        rec.finish()
        return 2 if rec.r["error"]["kind"] == "data-missing" else 3
    devices = _devices(smoke.torch, cfg["device"])
    rec.r["plan"] = [[s, d] for d in devices for s in STAGES]
    rec.save()
    for dev in devices:
        if smoke.stage("device", dev) != "pass":
            rec.skip_rest(STAGES[1:], dev, "device stage failed")
            continue
        for name in STAGES[1:]:
            smoke.stage(name, dev)
    if rec.r["error"]:
        rec.r["status"] = "error"
    rec.r["env"]["total_s"] = round(time.perf_counter() - T_PROCESS, 3)
    return rec.finish()


if __name__ == "__main__":
    sys.exit(main())
