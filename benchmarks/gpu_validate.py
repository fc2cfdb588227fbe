#!/usr/bin/env python3
"""Validate every GPU path of cudadoctor on a machine with an NVIDIA GPU, in one command.

    python benchmarks/gpu_validate.py --out RESULTS_DIR [--python PY] [--data-dir DIR] [--budget-s 460]

It installs nothing and uses no network: it runs cudadoctor from this checkout (PYTHONPATH) with the
interpreter given (default: this one, which must have torch). Every step is a child process with a
time limit; a step that fails is recorded and the next one runs. Everything lands in RESULTS_DIR:

- one ``<step>.out`` / ``<step>.err`` / ``<step>.json`` per step, ``steps.json`` (name, command,
  exit code, seconds, verdict, note for each), ``summary.md`` (the table printed last);
- ``recordings/``: what CI replays: the ``collect`` facts, ``check`` report, ``devices`` JSON and
  smoke JSON, all redacted as cudadoctor redacts every output (no ``--show-pii``);
- ``results.tar.gz``: the whole folder in one file (the device machine returns few files).

It never changes the GPU's settings: no compute-mode, persistence, MIG, clock or power change,
no reset. The broken states it makes are all in the process environment or the working directory:
``CUDA_VISIBLE_DEVICES`` empty / out of range / an unknown UUID, a ``torch.py`` in the working
directory, a second copy of libcudart forced in with ``LD_PRELOAD``, and (when a wheel is given
with ``--torchvision-wheel``) another torchvision release first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))


@dataclass
class Step:
    name: str
    cmd: List[str]
    rc: Optional[int] = None
    seconds: float = 0.0
    verdict: str = "not run"  # pass | fail | skip | not run
    note: str = ""
    extra: Dict[str, object] = field(default_factory=dict)


class Validator:
    def __init__(self, out: Path, python: str, data_dir: Optional[str], budget_s: float) -> None:
        self.out = out
        self.python = python
        self.data_dir = data_dir
        self.deadline = time.monotonic() + budget_s
        self.steps: List[Step] = []
        self.env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
            NO_COLOR="1",
            PYTHONUNBUFFERED="1",
        )
        (out / "recordings").mkdir(parents=True, exist_ok=True)

    # -- running ------------------------------------------------------------------------------
    def run(
        self,
        name: str,
        args: List[str],
        timeout: float = 120,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        judge: Optional[Callable[[subprocess.CompletedProcess], "tuple[str, str]"]] = None,
        cudadoctor: bool = True,
    ) -> Step:
        cmd = [self.python, "-m", "cudadoctor", *args] if cudadoctor else args
        step = Step(name, cmd)
        self.steps.append(step)
        left = self.deadline - time.monotonic()
        if left < 5:
            step.verdict, step.note = "skip", "time budget spent"
            return step
        t0 = time.monotonic()
        try:
            p = subprocess.run(
                cmd, capture_output=True, text=True, timeout=min(timeout, left), env=env or self.env, cwd=cwd or str(REPO)
            )
        except subprocess.TimeoutExpired as e:
            step.seconds = time.monotonic() - t0
            step.verdict, step.note = "fail", f"timed out after {step.seconds:.0f} s"
            (self.out / f"{name}.out").write_text(
                (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            )
            return step
        except OSError as e:
            step.verdict, step.note = "fail", f"could not start: {e}"
            return step
        step.seconds = time.monotonic() - t0
        step.rc = p.returncode
        (self.out / f"{name}.out").write_text(p.stdout)
        (self.out / f"{name}.err").write_text(p.stderr)
        if judge is None:
            step.verdict = "pass" if p.returncode == 0 else "fail"
            step.note = "" if p.returncode == 0 else _last_line(p.stderr) or _last_line(p.stdout)
        else:
            try:
                step.verdict, step.note = judge(p)
            except Exception as e:  # noqa: BLE001 - a judge's bug must not end the validation
                step.verdict, step.note = "fail", f"could not judge the output: {type(e).__name__}: {e}"
        return step

    def record(self, name: str, src: str) -> None:
        dst = self.out / "recordings" / name
        try:
            shutil.copyfile(self.out / src, dst)
        except OSError:
            pass

    # -- the steps ----------------------------------------------------------------------------
    def machine(self) -> None:
        self.run("nvidia-smi", ["nvidia-smi"], cudadoctor=False, timeout=30)
        self.run("nvidia-smi-q", ["nvidia-smi", "-q"], cudadoctor=False, timeout=30)
        props = (
            "import json, torch; print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, "
            "'cudnn': torch.backends.cudnn.version(), 'available': torch.cuda.is_available(), "
            "'devices': [dict(name=p.name, total_memory=p.total_memory, major=p.major, minor=p.minor, "
            "multi_processor_count=p.multi_processor_count) for p in "
            "(torch.cuda.get_device_properties(i) for i in range(torch.cuda.device_count()))]}))"
        )
        self.run("torch-properties", [self.python, "-c", props], cudadoctor=False, timeout=120)

    def diagnosis(self) -> None:
        self.run("check-text", ["check", "-v"], judge=_no_error_finding_text)
        self.run(
            "check-json",
            ["check", "--format", "json", "-o", str(self.out / "check.json")],
            judge=self._no_errors_json("check.json"),
        )
        self.record("check.json", "check.json")
        self.run("collect", ["collect", "-o", str(self.out / "collect.json")])
        self.record("collect.json", "collect.json")
        self.run("devices-text", ["devices"])
        self.run("devices-json", ["devices", "--format", "json", "-o", str(self.out / "devices.json")])
        self.record("devices.json", "devices.json")
        self.run("report", ["report", "-o", str(self.out / "report")], timeout=300)
        self.compare_devices()

    def compare_devices(self) -> None:
        """The device report's figures beside torch's own get_device_properties and nvidia-smi -q."""
        step = Step("devices-vs-torch-and-smi", ["(compare devices.json, torch-properties.out, nvidia-smi-q.out)"])
        self.steps.append(step)
        try:
            dev = json.loads((self.out / "devices.json").read_text())
            props = json.loads((self.out / "torch-properties.out").read_text().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError) as e:
            step.verdict, step.note = "fail", f"missing input: {e}"
            return
        smi = (self.out / "nvidia-smi-q.out").read_text() if (self.out / "nvidia-smi-q.out").exists() else ""
        text = json.dumps(dev)
        problems = []
        for i, p in enumerate(props.get("devices", [])):
            if p["name"] not in text:
                problems.append(f"GPU {i}: name {p['name']!r} not in the devices report")
            if f"{p['major']}.{p['minor']}" not in text:
                problems.append(f"GPU {i}: compute capability {p['major']}.{p['minor']} not in the devices report")
            if str(p["multi_processor_count"]) not in text:
                problems.append(f"GPU {i}: {p['multi_processor_count']} SMs not in the devices report")
            if smi and p["name"] not in smi:
                problems.append(f"GPU {i}: name {p['name']!r} not in nvidia-smi -q")
        step.extra = {"torch": props, "problems": problems}
        if not props.get("devices"):
            step.verdict, step.note = "skip", "torch sees no GPU: nothing to compare"
            return
        step.verdict, step.note = (
            ("fail", "; ".join(problems)) if problems else ("pass", f"{len(props.get('devices', []))} GPU(s) agree")
        )

    def smoke(self) -> None:
        data = ["--data-dir", self.data_dir] if self.data_dir else ["--synthetic"]
        self.run("smoke", ["smoke", *data], timeout=180)
        self.run("smoke-all", ["smoke", "--device", "all", *data], timeout=240)
        self.run("smoke-json", ["smoke", "--format", "json", "-o", str(self.out / "smoke.json"), *data], timeout=180)
        self.record("smoke.json", "smoke.json")
        torchrun = [self.python, "-m", "torch.distributed.run", "--standalone"]
        self.run(
            "smoke-distributed-nccl-1",
            [
                *torchrun,
                "--nproc-per-node",
                "1",
                "-m",
                "cudadoctor",
                "smoke",
                "--distributed",
                "-o",
                str(self.out / "smoke-job.json"),
                *data,
            ],
            cudadoctor=False,
            timeout=240,
        )
        self.record("smoke-job.json", "smoke-job.json")
        # two ranks over Gloo with CUDA tensors: on a one-GPU machine both ranks share cuda:0
        gloo_job = self.out / "smoke-job-gloo-2.json"
        self.run(
            "smoke-distributed-gloo-2",
            [
                *torchrun,
                "--nproc-per-node",
                "2",
                "-m",
                "cudadoctor",
                "smoke",
                "--distributed",
                "--backend",
                "gloo",
                "--format",
                "json",
                "-o",
                str(gloo_job),
                *data,
            ],
            cudadoctor=False,
            timeout=240,
            judge=_gloo_job_judge(gloo_job),
        )
        self.record("smoke-job-gloo-2.json", "smoke-job-gloo-2.json")
        # NCCL with more ranks than GPUs must fail at once, naming the counts (with 2+ GPUs it simply passes)
        nccl_job = self.out / "smoke-job-nccl-2.json"
        self.run(
            "smoke-distributed-nccl-2",
            [
                *torchrun,
                "--nproc-per-node",
                "2",
                "-m",
                "cudadoctor",
                "smoke",
                "--distributed",
                "--backend",
                "nccl",
                "--format",
                "json",
                "-o",
                str(nccl_job),
                *data,
            ],
            cudadoctor=False,
            timeout=240,
            judge=_nccl_two_ranks_judge(nccl_job),
        )

    def speed(self) -> None:
        if not self.data_dir:
            self.steps.append(Step("speed-vs-tutorial", [], verdict="skip", note="needs real MNIST (--data-dir)"))
            return
        from smoke_vs_tutorial import TUTORIAL

        gpu_tutorial = self.out / "tutorial_gpu.py"
        gpu_tutorial.write_text(TUTORIAL.replace('torch.device("cpu")', 'torch.device("cuda")'))
        self.run(
            "tutorial-gpu", [self.python, str(gpu_tutorial), self.data_dir], cudadoctor=False, timeout=300, judge=_tutorial_judge
        )
        t0 = time.monotonic()
        smoke = self.run(
            "smoke-timed", ["smoke", "--format", "json", "--data-dir", self.data_dir], timeout=180, judge=_smoke_json_judge
        )
        smoke.extra["wall_s"] = round(time.monotonic() - t0, 2)

    def broken_states(self) -> None:
        cases = [
            ("cvd-empty", {"CUDA_VISIBLE_DEVICES": ""}, "no-gpu-visible"),
            ("cvd-out-of-range", {"CUDA_VISIBLE_DEVICES": "7"}, "no-gpu-visible"),
            ("cvd-unknown-uuid", {"CUDA_VISIBLE_DEVICES": "GPU-00000000-0000-0000-0000-000000000000"}, "no-gpu-visible"),
        ]
        for name, extra, code in cases:
            self.run(f"broken-{name}", ["check", "--format", "json"], env=dict(self.env, **extra), judge=_expect_code(code))
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "torch.py").write_text("# a user's own script named torch.py\nprint('hello')\n")
            self.run(
                "broken-local-torch-py", ["check", "--format", "json"], cwd=tmp, judge=_expect_code("shadowed-by-local-file")
            )
        copies = self._second_cudart()
        if copies:
            self.run(
                "broken-ld-preload-cudart",
                ["check", "--format", "json"],
                env=dict(self.env, LD_PRELOAD=copies),
                judge=_expect_code("library-shadowing"),
            )
        else:
            self.steps.append(Step("broken-ld-preload-cudart", [], verdict="skip", note="no libcudart.so.* found to copy"))

    def _second_cudart(self) -> str:
        found = sorted(
            glob.glob(
                str(
                    Path(self.python).resolve().parents[1]
                    / "lib"
                    / "python3*"
                    / "site-packages"
                    / "nvidia"
                    / "**"
                    / "libcudart.so.*"
                ),
                recursive=True,
            )
        )
        found += sorted(glob.glob("/usr/local/cuda*/lib64/libcudart.so.*"))
        if not found:
            return ""
        dst = self.out / "second-copy"
        dst.mkdir(exist_ok=True)
        target = dst / Path(found[0]).name
        shutil.copyfile(found[0], target)
        return str(target)

    def gpu_tests(self) -> None:
        self.run(
            "pytest-gpu",
            [self.python, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", str(REPO / "tests")],
            cudadoctor=False,
            timeout=300,
            judge=_pytest_judge,
        )

    # -- results ------------------------------------------------------------------------------
    def _no_errors_json(self, file: str) -> Callable[[subprocess.CompletedProcess], "tuple[str, str]"]:
        def judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
            report = json.loads((self.out / file).read_text())
            errors = [f["code"] for f in report.get("findings", []) if f.get("severity") == "error"]
            return (
                ("fail", "error findings: " + ", ".join(errors)) if errors else ("pass", f"exit {p.returncode}, no error finding")
            )

        return judge

    def write(self) -> str:
        (self.out / "steps.json").write_text(json.dumps([asdict(s) for s in self.steps], indent=2, default=str) + "\n")
        rows = ["| step | verdict | seconds | note |", "|---|---|---|---|"]
        rows += [f"| {s.name} | {s.verdict} | {s.seconds:.1f} | {s.note.replace('|', '/')[:160]} |" for s in self.steps]
        table = "\n".join(rows) + "\n"
        (self.out / "summary.md").write_text(table)
        with tarfile.open(self.out / "results.tar.gz", "w:gz") as tar:
            for p in sorted(self.out.rglob("*")):
                if p.is_file() and p.name != "results.tar.gz":
                    tar.add(p, arcname=str(p.relative_to(self.out)))
        return table


def _last_line(text: str) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def _no_error_finding_text(p: subprocess.CompletedProcess) -> "tuple[str, str]":
    return ("pass", "exit 0") if p.returncode == 0 else ("fail", f"exit {p.returncode}: {_last_line(p.stdout)}")


def _expect_code(code: str) -> Callable[[subprocess.CompletedProcess], "tuple[str, str]"]:
    def judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
        report = json.loads(p.stdout)
        codes = sorted({f["code"] for f in report.get("findings", [])})
        return ("pass" if code in codes else "fail", f"expected {code}; got {', '.join(codes) or 'none'}")

    return judge


def _tutorial_judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
    r = json.loads(p.stdout.strip().splitlines()[-1])
    reached = r.get("reached")
    if not reached:
        return "fail", f"never reached 97% (final {r.get('final_accuracy')})"
    return "pass", f"97% after epoch {reached['epoch']}: {reached['process_s']:.2f} s from process start"


def _smoke_json_judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
    doc = json.loads(p.stdout)
    for stage in doc.get("stages", []):
        if stage.get("name") == "training":
            ev = stage.get("evidence", {})
            return (
                ("pass" if stage.get("verdict") == "pass" else "fail"),
                f"accuracy {ev.get('test_accuracy')}, {ev.get('process_time_to_target_s')} s from process start to the bar",
            )
    return "fail", "no training stage in the smoke output"


def _gloo_job_judge(path: Path) -> Callable[[subprocess.CompletedProcess], "tuple[str, str]"]:
    def judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
        rep = json.loads(path.read_text())
        devices = [r.get("device") for r in rep.get("ranks", [])]
        ok = p.returncode == 0 and rep.get("status") == "pass" and rep.get("backend") == "gloo"
        ok = ok and len(devices) == 2 and all(str(d).startswith("cuda:") for d in devices)
        return ("pass" if ok else "fail"), f"exit {p.returncode}, {rep.get('status')}, {rep.get('backend')} on {devices}"

    return judge


def _nccl_two_ranks_judge(path: Path) -> Callable[[subprocess.CompletedProcess], "tuple[str, str]"]:
    def judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
        rep = json.loads(path.read_text())
        devices = [r.get("device") for r in rep.get("ranks", [])]
        if rep.get("status") == "pass":  # two GPUs or more: each rank has its own
            return ("pass" if len(set(devices)) == 2 else "fail"), f"passed on {devices}"
        reasons = " ".join(c.get("reason", "") for c in rep.get("culprits", []))
        ok = p.returncode == 1 and "NCCL cannot share a GPU between ranks" in reasons and rep.get("elapsed_s", 1e9) < 120
        return ("pass" if ok else "fail"), f"exit {p.returncode}: {reasons[:200]}"

    return judge


def _pytest_judge(p: subprocess.CompletedProcess) -> "tuple[str, str]":
    return ("pass" if p.returncode == 0 else "fail"), _last_line(p.stdout)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="results folder (created)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with torch (default: this one)")
    ap.add_argument(
        "--data-dir", default=None, help="root holding MNIST/raw (default: ../shared/data if present, else --synthetic)"
    )
    ap.add_argument("--budget-s", type=float, default=460.0, help="stop starting steps after this many seconds (default 460)")
    ap.add_argument("--only", default="", help="comma-separated step groups: machine,diagnosis,smoke,speed,broken,tests")
    a = ap.parse_args(argv)
    data_dir = a.data_dir
    if data_dir is None and (REPO.parent / "shared" / "data" / "MNIST" / "raw").is_dir():
        data_dir = str(REPO.parent / "shared" / "data")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    v = Validator(out, a.python, data_dir, a.budget_s)
    groups = {
        "machine": v.machine,
        "diagnosis": v.diagnosis,
        "smoke": v.smoke,
        "speed": v.speed,
        "broken": v.broken_states,
        "tests": v.gpu_tests,
    }
    chosen = [g for g in a.only.split(",") if g] or list(groups)
    unknown = [g for g in chosen if g not in groups]
    if unknown:
        print(f"gpu_validate: unknown step group(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    for g in chosen:
        groups[g]()
    print(v.write(), end="")
    failed = [s.name for s in v.steps if s.verdict == "fail"]
    print(
        f"\n{len(v.steps)} steps: {sum(s.verdict == 'pass' for s in v.steps)} passed, {len(failed)} failed, "
        f"{sum(s.verdict == 'skip' for s in v.steps)} skipped; results in {out}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
