"""Facts documents built from the shared real cases' recorded `facts` field.

Each case in ../shared/cases (see its README) records what the public issue thread stated. This
helper maps those fields to the facts schema the way the collect_env reader does (origin
"collect_env": torch.version/cuda/cuda_available, nvml.driver_version/devices, toolkit.nvcc_version
from "CUDA runtime version", python.version/bits, system.os, packages.distributions with
installer pip|conda, environment.vars, user_error.text), so the checks can be measured on the
cases before and independently of the text parser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

from cudadoctor.facts import new_facts

CASES = Path(__file__).resolve().parents[2] / "shared" / "cases"


def case_ids():
    return sorted(p.stem for p in CASES.glob("*.json")) if CASES.is_dir() else []


def load_case(case_id: str) -> Dict[str, Any]:
    return json.loads((CASES / f"{case_id}.json").read_text())


def case_error(case_id: str) -> Optional[str]:
    p = CASES / f"{case_id}.error.txt"
    return p.read_text() if p.exists() else None


def facts_from_case(case_id: str) -> Dict[str, Any]:
    case = load_case(case_id)
    f = case["facts"]
    doc = new_facts("collect_env")
    if f.get("os"):
        doc["system"]["os"] = f["os"]
    if f.get("python"):
        doc["python"]["version"] = f["python"]
        doc["python"]["bits"] = f.get("python_bits") or 64
    if f.get("python_platform"):
        doc["python"]["platform"] = f["python_platform"]
    dists = []
    for name, ver in (f.get("packages") or {}).items():
        dists.append({"name": name, "version": ver, "installer": "pip"})
    if f.get("torch"):
        doc["torch"]["version"] = f["torch"]
        doc["torch"]["cuda"] = f.get("torch_cuda")  # explicitly null: a CPU build
        doc["torch"]["status"] = "ok"
        if f.get("is_cuda_available") is not None:
            doc["torch"]["cuda_available"] = f["is_cuda_available"]
        if not any(d["name"] == "torch" for d in dists):
            dists.append({"name": "torch", "version": f["torch"], "installer": "pip"})
        if f.get("torch_importable") is False:
            doc["torch"] = {"status": "import-failed"}
    elif f.get("torch_cuda"):
        doc["torch"]["cuda"] = f["torch_cuda"]
        if f.get("is_cuda_available") is not None:
            doc["torch"]["cuda_available"] = f["is_cuda_available"]
    elif f.get("is_cuda_available") is not None:
        doc["torch"]["cuda_available"] = f["is_cuda_available"]
    for name, ver in (f.get("conda_packages") or {}).items():
        # as the collect_env reader names them: conda's `pytorch` is the `torch` distribution
        d = {"name": "torch" if name == "pytorch" else name, "version": ver, "installer": "conda"}
        if name == "pytorch":
            d["package"] = "pytorch"
        dists.append(d)
    if dists:
        doc["packages"]["distributions"] = dists
    if f.get("driver"):
        doc["nvml"]["driver_version"] = f["driver"]
        doc["nvml"]["status"] = "ok"
    if f.get("gpus"):
        doc["nvml"]["devices"] = [{"index": i, "name": n} for i, n in enumerate(f["gpus"])]
        doc["nvml"]["status"] = "ok"
    if f.get("cuda_runtime"):
        doc["toolkit"]["nvcc_version"] = f["cuda_runtime"]
    if f.get("cudnn"):
        c = str(f["cudnn"])
        import re

        m = re.search(r"(\d+\.\d+\.\d+)$", c)
        doc["toolkit"]["system_cudnn"] = [{"path": c if "/" in c else None, "version": m.group(1) if m else c}]
    if f.get("env"):
        doc["environment"]["vars"] = dict(f["env"])
    err = case_error(case_id)
    if err:
        doc["user_error"] = {"text": err}
    return doc
