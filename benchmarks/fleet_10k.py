"""How fast is `cudadoctor fleet` over 10,000 reports?

    python benchmarks/fleet_10k.py [--nodes 10000] [--keep DIR]

Generates N realistic reports into a temporary directory and times the real command
(`python -m cudadoctor fleet DIR --format json`) in a subprocess, then prints reports/s.

The reports come from the facts recorded on this project's machine
(tests/fixtures/facts/live-torch2141-cu130-nodriver.json: torch 2.14.1+cu130, no GPU, no driver),
turned into cluster nodes with variations: the majority has driver 580.95.05 and 8 H100s; a few
have an older driver, a CPU build of torch, A100s instead of H100s, a GPU missing, or run in a
container without GPUs (the recording as it is); some nodes left facts files (`collect`) instead
of reports, which fleet diagnoses; one file is corrupt and one truncated. Each variant goes
through the real pipeline once (cudadoctor.report.diagnose + the JSON renderer), so the findings
are what `cudadoctor check` says; only host names and times differ between copies.
The same generator builds the test fleet in tests/test_fleet.py.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "facts" / "live-torch2141-cu130-nodriver.json"
HOST = "@@HOST@@"
WHEN = "@@WHEN@@"


def _gpus(name: str, cc: str, n: int, mem: int, sms: int) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    nvml = [
        {
            "index": i,
            "name": name,
            "uuid": f"GPU-{i:08x}-0000-0000-0000-{HOST}",
            "pci_bus_id": f"00000000:{0x18 + i:02X}:00.0",
            "compute_capability": cc,
            "memory": {"total_bytes": mem, "free_bytes": mem - 2**29, "used_bytes": 2**29},
            "mig_mode": {"current": 0, "pending": 0},
            "persistence_mode": 1,
            "compute_mode": "Default",
            "errors": {},
        }
        for i in range(n)
    ]
    major, minor = (int(x) for x in cc.split("."))
    torch = [
        {
            "index": i,
            "name": name,
            "capability": [major, minor],
            "total_memory": mem,
            "multi_processor_count": sms,
            "kernel_ok": True,
            "kernel_s": 0.02,
        }
        for i in range(n)
    ]
    return nvml, torch


def with_driver(
    facts: Dict[str, Any],
    driver: str = "580.95.05",
    cuda: str = "13.0",
    gpu: str = "NVIDIA H100 80GB HBM3",
    cc: str = "9.0",
    n: int = 8,
    mem: int = 85520809984,
    sms: int = 132,
) -> Dict[str, Any]:
    """The recorded facts as a node with a loaded driver and ``n`` GPUs that torch can use."""
    f = copy.deepcopy(facts)
    nvml, tdev = _gpus(gpu, cc, n, mem, sms)
    f["nvml"] = {
        "status": "ok",
        "driver_version": driver,
        "cuda_driver_version": cuda,
        "device_count": n,
        "devices": nvml,
        "bindings_version": "13.580.82",
        "elapsed_s": 0.05,
    }
    s = f["system"]
    s["container"] = None
    s["nvidia_kernel_driver"] = driver
    s["kernel_modules"] = {"nvidia": True, "nvidia_uvm": True, "nvidia_drm": True, "nvidia_modeset": True, "nouveau": False}
    s["pci_nvidia_devices"] = [
        {"address": g["pci_bus_id"][4:].lower(), "device_id": "0x2330", "class": "0x030200", "driver": "nvidia"} for g in nvml
    ]
    s["dev_nvidia"] = ["/dev/nvidiactl", "/dev/nvidia-uvm"] + [f"/dev/nvidia{i}" for i in range(n)]
    t = f["torch"]
    t.pop("cuda_init_error", None)
    t["cuda_available"] = True
    t["device_count"] = n
    t["devices"] = tdev
    f["probe_errors"] = []
    return f


def cpu_torch(facts: Dict[str, Any]) -> Dict[str, Any]:
    """The CPU build of the same torch release installed on a node with GPUs."""
    f = with_driver(facts)
    t = f["torch"]
    t.update(
        {
            "version": "2.14.1+cpu",
            "cuda": None,
            "cuda_compiled": False,
            "cuda_available": False,
            "device_count": 0,
            "devices": [],
            "arch_list": [],
            "cudnn_version": None,
            "cudnn_compiled": None,
        }
    )
    for d in f["packages"].get("distributions", []):
        if d.get("name") == "torch":
            d["version"] = "2.14.1+cpu"
    return f


def variants(facts: Dict[str, Any]) -> Dict[str, Tuple[Dict[str, Any], str]]:
    """name -> (facts, 'report' | 'facts')."""
    return {
        "majority": (with_driver(facts), "report"),
        "old-driver": (with_driver(facts, driver="535.104.05", cuda="12.2"), "report"),
        "cpu-torch": (cpu_torch(facts), "report"),
        "a100": (with_driver(facts, gpu="NVIDIA A100-SXM4-80GB", cc="8.0", mem=85899345920, sms=108), "report"),
        "gpu-missing": (with_driver(facts, n=7), "report"),
        "no-gpu-container": (copy.deepcopy(facts), "report"),
        "facts-only": (with_driver(facts), "facts"),
    }


def templates(facts: Dict[str, Any]) -> Dict[str, str]:
    """Each variant rendered once through the real pipeline, with HOST/WHEN markers to fill in."""
    sys.path.insert(0, str(REPO))
    from cudadoctor import registry
    from cudadoctor.render.json import dumps
    from cudadoctor.report import diagnose

    reg = registry.load(plugins=False)
    out = {}
    for name, (f, kind) in variants(facts).items():
        f = copy.deepcopy(f)
        f["system"]["hostname"] = HOST
        f["tool"]["collected_at"] = WHEN
        if kind == "facts":
            out[name] = dumps(f)
        else:
            doc = diagnose(f, reg).to_dict()
            doc["tool"]["generated_at"] = WHEN
            out[name] = dumps(doc)
    return out


#: How the variants are spread over N nodes: counts for the small ones, the rest is the majority.
SPREAD = {"old-driver": 3, "cpu-torch": 2, "a100": 2, "gpu-missing": 1, "no-gpu-container": 1, "facts-only": 10}


def generate(directory: Path, n: int, facts: Dict[str, Any] = None, spread: Dict[str, int] = None) -> Dict[str, List[str]]:
    """Write ``n`` node files plus one corrupt and one truncated file; returns variant -> host names."""
    facts = facts if facts is not None else json.loads(FIXTURE.read_text())
    spread = dict(SPREAD if spread is None else spread)
    if n >= 1000:  # keep the deviating share realistic at scale: about 1%
        spread = {k: v * max(1, n // 1000) for k, v in spread.items()}
    tpl = templates(facts)
    kinds: List[str] = []
    for name, count in spread.items():
        kinds += [name] * count
    kinds += ["majority"] * (n - len(kinds))
    # Spread the deviating nodes through the numbering, deterministically.
    step = 7919  # a prime larger than any count used here
    order = sorted(range(n), key=lambda i: (i * step) % n)
    hosts: Dict[str, List[str]] = {}
    directory.mkdir(parents=True, exist_ok=True)
    for slot, i in enumerate(order):
        kind = kinds[slot]
        host = f"gpu{i:05d}"
        hosts.setdefault(kind, []).append(host)
        when = f"2026-11-22T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}+00:00"
        (directory / f"{host}.json").write_text(tpl[kind].replace(HOST, host).replace(WHEN, when), encoding="utf-8")
    whole = tpl["majority"].replace(HOST, "gpu-corrupt").replace(WHEN, "2026-11-22T00:00:00+00:00")
    (directory / "corrupt.json").write_bytes(b"\x00\xff" + whole.encode()[100:2000])
    (directory / "truncated.json").write_text(whole[: len(whole) // 2], encoding="utf-8")
    return hosts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    ap.add_argument("--format", default="json", choices=["text", "json", "markdown", "csv"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleet10k-") as tmp:
        d = Path(args.keep) if args.keep else Path(tmp) / "reports"
        t0 = time.perf_counter()
        generate(d, args.nodes)
        t1 = time.perf_counter()
        size = sum(p.stat().st_size for p in d.iterdir())
        print(f"generated {args.nodes:,} reports + 2 broken files ({size / 2**20:.0f} MiB) in {t1 - t0:.1f} s")
        cmd = [sys.executable, "-m", "cudadoctor", "fleet", str(d), "--format", args.format]
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        t2, c2 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        t3, c3 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        secs = t3 - t2
        cpu = (c3.ru_utime - c2.ru_utime) + (c3.ru_stime - c2.ru_stime)
        print(f"$ python -m cudadoctor fleet DIR --format {args.format}   (exit {r.returncode})")
        if args.format == "json" and r.returncode in (0, 1):
            s = json.loads(r.stdout)["summary"]
            print(
                f"  nodes {s['nodes']:,}, configurations {s['configurations']}, deviating {s['deviating']}, "
                f"with errors {s['with_errors']}, unreadable {s['unreadable']}"
            )
        elif r.stderr:
            print(r.stderr.strip())
        print(
            f"fleet: {secs:.2f} s wall for {args.nodes + 2:,} files = {(args.nodes + 2) / secs:,.0f} reports/s "
            f"({os.cpu_count()} CPUs)"
        )
        # CPU time: what the machine's other work does not change (fleet is one process); with the wall time
        # and the load, a figure measured on a shared machine says what it means
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"fleet: {cpu:.2f} s of CPU (user + system); load average {load:.1f} at the end")
        return 0 if r.returncode in (0, 1) else 1


if __name__ == "__main__":
    sys.exit(main())
