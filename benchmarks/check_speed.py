"""How long `cudadoctor check` takes next to importing torch and torch's collect_env.

    VENV/bin/python benchmarks/check_speed.py [--rounds N] [--python PATH] [--compare NAME=CHECKOUT ...]

Runs the commands interleaved, round after round in a shuffled order (so a busy machine slows all
of them alike), and prints the median wall time of each, its spread, and the ratios budgeted:
check <= 0.8x `import torch` (issue 13), check <= 0.5x collect_env, check --quick < 0.5 s.

--compare NAME=CHECKOUT adds `cudadoctor check` run from another checkout (a copy of the
code with or without a speed-up) to every round, and prints what it costs or saves against this
one, round by round: that is how a speed-up shows it buys its keep (issue 13: at least 50 ms).
Run it with the interpreter of a venv that has torch and cudadoctor installed the way the README
installs them (`pip install . torch==...`): cudadoctor is then measured as users run it, the
`cudadoctor` command next to that interpreter. With --python PATH, cudadoctor runs from this
interpreter and diagnoses the torch of PATH (`cudadoctor check --python PATH`).

Why `check` can beat `python -c "import torch"` by so much: the probe child imports torch exactly as
a user does, but (1) it starts before cudadoctor's own CLI has loaded, (2) it pauses the cyclic
garbage collector during the import (a fifth of the import's time here goes to collection passes),
and (3) once its result is written it tells the parent on a pipe and skips the interpreter's
teardown, which with torch and the CUDA libraries loaded costs ~0.6 s. Its floor is the import
itself. collect_env pays for the import, the teardown and its subprocesses (pip list, and on
other machines nvidia-smi and conda, which make it slower still).

Each command is run once first and must succeed (check exits 0 or 1 with a verdict line), so a
broken setup is an error here, not a fast median.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time


def wall(argv, env) -> float:
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=None, help="interpreter whose torch to measure (default: this one)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="NAME=CHECKOUT",
        help="also run `python -m cudadoctor check` from CHECKOUT (repeatable)",
    )
    args = ap.parse_args()
    env = dict(os.environ, NO_COLOR="1")
    envs = {}
    script = os.path.join(os.path.dirname(sys.executable), "cudadoctor")
    me = [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "cudadoctor"]
    target = ["--python", args.python] if args.python else []
    python = args.python or sys.executable
    cmds = {
        "import torch": [python, "-c", "import torch"],
        "cudadoctor check": me + ["check"] + target,
        "cudadoctor check --quick": me + ["check", "--quick"] + target,
        "collect_env": [python, "-m", "torch.utils.collect_env"],
    }
    for spec in args.compare:
        name, _, checkout = spec.partition("=")
        cmds[name] = me + ["check"] + target  # the same launcher: only the code differs
        envs[name] = dict(env, PYTHONPATH=os.path.abspath(checkout))
    print("cudadoctor:", " ".join(me), "| torch from:", python)
    for name, argv in cmds.items():  # warm the page cache once, and make sure each command works
        r = subprocess.run(argv, capture_output=True, text=True, env=envs.get(name, env), check=False)
        ok = (
            r.returncode in (0, 1) and ("PyTorch" in r.stdout)
            if name not in ("import torch", "collect_env")
            else r.returncode == 0
        )
        if not ok:
            tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
            print(f"{name} does not work here (exit {r.returncode}): {tail[0]}", file=sys.stderr)
            return 2
    times = {k: [] for k in cmds}
    load = []
    for _ in range(args.rounds):
        order = list(cmds)
        random.shuffle(order)
        for k in order:
            times[k].append(wall(cmds[k], envs.get(k, env)))
        load.append(os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        lo, hi = _quartiles(times[k])
        print(
            f"{k:<26} median {v:6.3f} s   (quartiles {lo:.3f}-{hi:.3f}, min {min(times[k]):.3f}, max {max(times[k]):.3f}, n={len(times[k])})"
        )

    def spread(other: str) -> str:
        """The same ratio round by round (each round runs the commands within seconds of each other,
        so a load that drifts over minutes cancels out) and from the fastest runs (least noise)."""
        per = sorted(c / o for c, o in zip(times["cudadoctor check"], times[other]))
        best = min(times["cudadoctor check"]) / min(times[other])
        return f"   [per round: median {statistics.median(per):.2f}, {per[0]:.2f}-{per[-1]:.2f}; fastest runs: {best:.2f}]"

    r1 = med["cudadoctor check"] / med["import torch"]
    r2 = med["cudadoctor check"] / med["collect_env"]
    q = med["cudadoctor check --quick"]
    print(f"check / import torch  = {r1:.2f}  (budget 0.80: {'ok' if r1 <= 0.80 else 'OVER'}){spread('import torch')}")
    print(f"check / collect_env   = {r2:.2f}  (budget 0.50: {'ok' if r2 <= 0.50 else 'OVER'}){spread('collect_env')}")
    print(f"check --quick         = {q:.3f} s (budget 0.50 s: {'ok' if q < 0.5 else 'OVER'})")
    for name in envs:
        d = [o - c for o, c in zip(times[name], times["cudadoctor check"])]
        lo, hi = _quartiles(d)
        print(
            f"{name} - this check      = median {statistics.median(d) * 1000:+.0f} ms per round "
            f"(quartiles {lo * 1000:+.0f} to {hi * 1000:+.0f}; fastest runs {(min(times[name]) - min(times['cudadoctor check'])) * 1000:+.0f} ms)"
        )
    print(f"load average (1 min) during the rounds: {min(load):.2f} to {max(load):.2f} on {os.cpu_count()} CPUs")
    return 0


def _quartiles(v):
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4)
    return q[0], q[2]


if __name__ == "__main__":
    raise SystemExit(main())
