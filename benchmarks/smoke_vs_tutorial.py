#!/usr/bin/env python3
"""Side by side on the CPU: the tutorial-style MNIST MLP program vs `cudadoctor smoke`'s workload.

    python benchmarks/smoke_vs_tutorial.py [--python /path/to/python-with-torch] [--data-dir DIR]

Both run as fresh child processes with the same interpreter on the same data; the
number compared is "process start -> test accuracy >= 97%" (imports, data loading
and everything else included). The training-loop-only times are printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKLOAD = REPO / "cudadoctor" / "smoke" / "workload.py"

# The program people copy, written faithfully: torchvision dataset, per-sample
# ToTensor + Normalize through a DataLoader, batch 64, SGD(lr=0.1, momentum=0.5),
# test accuracy printed after every epoch, 3 epochs.
TUTORIAL = r"""
import time, json, sys
T0 = time.perf_counter()
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms
TI = time.perf_counter()  # imports done

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 256)
        self.fc3 = nn.Linear(256, 128)
        self.fc4 = nn.Linear(128, 64)
        self.fc5 = nn.Linear(64, 10)

    def forward(self, x):
        x = x.view(-1, 784)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        x = F.relu(self.fc4(x))
        return self.fc5(x)

root = sys.argv[1]
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
train_loader = torch.utils.data.DataLoader(datasets.MNIST(root, train=True, download=False, transform=transform),
                                           batch_size=64, shuffle=True)
test_loader = torch.utils.data.DataLoader(datasets.MNIST(root, train=False, transform=transform), batch_size=1000)
device = torch.device("cpu")
model = Net().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
T1 = time.perf_counter()
reached = None
for epoch in range(1, 4):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 100 == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}] Loss: {loss.item():.6f}",
                  file=sys.stderr)
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data.to(device))
            correct += output.argmax(dim=1).eq(target.to(device)).sum().item()
    acc = correct / len(test_loader.dataset)
    now = time.perf_counter()
    print(f"Epoch {epoch}: test accuracy {acc:.4f} at {now - T0:.1f} s", file=sys.stderr)
    if acc >= 0.97 and reached is None:
        reached = {"epoch": epoch, "accuracy": acc, "process_s": now - T0, "data_train_s": now - TI, "train_s": now - T1}
end = time.perf_counter()
print(json.dumps({"reached": reached, "final_accuracy": acc, "process_s": end - T0, "data_train_s": end - TI, "train_s": end - T1}))
"""


def run_tutorial(python: str, data_dir: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix="_tutorial.py", delete=False) as f:
        f.write(TUTORIAL)
    try:
        t0 = time.perf_counter()
        p = subprocess.run([python, f.name, data_dir], capture_output=True, text=True, timeout=1800)
        wall = time.perf_counter() - t0
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        sys.exit(f"tutorial program failed:\n{p.stderr[-3000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["wall_s"] = wall
    return r


def run_smoke(python: str, data_dir: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        cfg = {"device": "cpu", "data_dir": data_dir}
        t0 = time.perf_counter()
        p = subprocess.run(
            [python, str(WORKLOAD), "--config", json.dumps(cfg), "--out", out], capture_output=True, text=True, timeout=900
        )
        wall = time.perf_counter() - t0
        r = json.load(open(out))
    if r.get("error"):
        sys.exit(f"smoke workload error: {r['error']['message']}")
    tr = next(s for s in r["stages"] if s["name"] == "training")
    if tr["verdict"] != "pass":
        sys.exit(f"smoke training did not pass: {tr['message']}\n{p.stderr[-2000:]}")
    ev = tr["evidence"]
    return {
        "accuracy": ev["test_accuracy"],
        "epochs": ev["epochs"],
        "process_s": ev["process_time_to_target_s"],
        "train_s": ev["time_to_target_s"],
        "wall_s": wall,
        "status": r["status"],
        # data on disk -> accuracy: load + normalise/move to the device + training (imports excluded)
        "data_train_s": r["data"]["load_s"] + ev["setup_s"] + ev["time_to_target_s"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.environ.get("CUDADOCTOR_TEST_TORCH_PYTHON") or sys.executable)
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("CUDADOCTOR_TEST_MNIST_ROOT") or str(REPO.parent / "shared" / "data"),
        help="root holding MNIST/raw (default: ../shared/data beside the repo)",
    )
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON too")
    a = ap.parse_args()
    print(f"interpreter: {a.python}\ndata: {a.data_dir}\nrunning the smoke workload (--device cpu) ...", flush=True)
    smoke = run_smoke(a.python, a.data_dir)
    print(
        f"  test accuracy {smoke['accuracy']:.4f} after {smoke['epochs']} epochs: "
        f"{smoke['process_s']:.2f} s from process start ({smoke['train_s']:.2f} s of training); "
        f"whole smoke {smoke['wall_s']:.1f} s",
        flush=True,
    )
    print("running the tutorial-style program (3 epochs) ...", flush=True)
    tut = run_tutorial(a.python, a.data_dir)
    if tut["reached"]:
        rt = tut["reached"]
        print(
            f"  test accuracy {rt['accuracy']:.4f} after epoch {rt['epoch']}: {rt['process_s']:.2f} s from process "
            f"start ({rt['train_s']:.2f} s of training); 3 epochs {tut['process_s']:.1f} s",
            flush=True,
        )
        t_proc, t_data, t_train, note = rt["process_s"], rt["data_train_s"], rt["train_s"], ""
    else:
        t_proc, t_data, t_train = tut["process_s"], tut["data_train_s"], tut["train_s"]
        note = " (tutorial never reached 97% in 3 epochs: its full time is used, a LOWER bound)"
        print(f"  final test accuracy {tut['final_accuracy']:.4f}: never reached 97%{note}")
    ratio = smoke["process_s"] / t_proc
    ratio_train = smoke["train_s"] / t_train
    ratio_data = smoke["data_train_s"] / t_data
    print(
        f"\ntime to >=97% test accuracy, process start included: smoke {smoke['process_s']:.2f} s vs tutorial "
        f"{t_proc:.2f} s -> ratio {ratio:.3f} (1/{1 / ratio:.1f}){note}"
    )
    print(
        f"data load + training (imports excluded):             smoke {smoke['data_train_s']:.2f} s vs tutorial "
        f"{t_data:.2f} s -> ratio {ratio_data:.3f} (1/{1 / ratio_data:.1f})  <- the goal's measure"
    )
    print(
        f"training loop only:                                  smoke {smoke['train_s']:.2f} s vs tutorial "
        f"{t_train:.2f} s -> ratio {ratio_train:.3f} (1/{1 / ratio_train:.1f})"
    )
    print(
        f"goal (data load + training) <= 0.1: {'MET' if ratio_data <= 0.1 else 'NOT met'}; "
        f"with interpreter + torch import included: {'MET' if ratio <= 0.1 else 'NOT met'}"
    )
    if a.json:
        print(
            json.dumps(
                {
                    "smoke": smoke,
                    "tutorial": tut,
                    "ratio_process": ratio,
                    "ratio_data_train": ratio_data,
                    "ratio_train": ratio_train,
                }
            )
        )
    return 0 if ratio_data <= 0.1 else 1


if __name__ == "__main__":
    sys.exit(main())
