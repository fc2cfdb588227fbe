"""Write cudadoctor/kb/package_platforms.json: for GPU packages that publish builds for Linux only, the platforms of
every wheel each has ever put on PyPI, read from PyPI's JSON API (https://pypi.org/pypi/NAME/json).

    python benchmarks/package_platforms.py            # query PyPI, write the table
    python benchmarks/package_platforms.py --check    # query PyPI, say what changed; write nothing

Needs the network (PyPI); the shipped table is read without it. A package is kept only when none of its releases has a
Windows or macOS wheel: the table says where a package does NOT exist, so a package with even one such wheel is left
out (its absence there is not certain). `PACKAGES` is the list to query, each with the names a report uses for it.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

OUT = Path(__file__).resolve().parents[1] / "cudadoctor" / "kb" / "package_platforms.json"

#: name on PyPI -> (what it is, the names a report may use for it besides the PyPI name)
PACKAGES: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "cucim": ("RAPIDS cuCIM (GPU image I/O and processing)", ("cuCIM",)),
    "cucim-cu11": ("RAPIDS cuCIM for CUDA 11", ()),
    "cucim-cu12": ("RAPIDS cuCIM for CUDA 12", ()),
    "nvidia-dali-cuda110": ("NVIDIA DALI for CUDA 11", ("nvidia-dali", "nvidia dali", "DALI")),
    "nvidia-dali-cuda120": ("NVIDIA DALI for CUDA 12", ()),
    "nvidia-dali-cuda130": ("NVIDIA DALI for CUDA 13", ()),
    "qiskit-aer-gpu": ("Qiskit Aer's GPU simulator", ()),
    "qiskit-aer-gpu-cu11": ("Qiskit Aer's GPU simulator for CUDA 11", ()),
    "fbgemm-gpu": ("FBGEMM_GPU (TorchRec's kernels)", ("fbgemm_gpu", "FBGEMM_GPU", "FBGEMM", "fbgemm_gpu_py.so", "torchrec")),
    "fbgemm-gpu-cpu": ("FBGEMM_GPU's CPU build", ()),
    "fbgemm-gpu-genai": ("FBGEMM GenAI kernels", ()),
    "custatevec-cu11": ("NVIDIA cuStateVec for CUDA 11", ()),
    "custatevec-cu12": ("NVIDIA cuStateVec for CUDA 12", ("cuStateVec",)),
    "cutensornet-cu12": ("NVIDIA cuTensorNet for CUDA 12", ("cuTensorNet",)),
    "cuquantum-python-cu11": ("NVIDIA cuQuantum Python for CUDA 11", ()),
    "cuquantum-python-cu12": ("NVIDIA cuQuantum Python for CUDA 12", ("cuquantum-python", "cuQuantum")),
    "cuda-quantum-cu12": ("NVIDIA CUDA-Q for CUDA 12", ("cuda-quantum", "CUDA-Q", "cudaq")),
    "pennylane-lightning-gpu": ("PennyLane's lightning.gpu device", ("lightning.gpu",)),
    "vllm": ("vLLM", ("vLLM",)),
    "jax-cuda11-plugin": ("JAX's CUDA 11 plugin", ()),
    "jax-cuda12-plugin": ("JAX's CUDA 12 plugin", ("jax[cuda12]", "jax[cuda12_pip]", "jax[cuda12_local]")),
    "jax-cuda13-plugin": ("JAX's CUDA 13 plugin", ("jax[cuda13]",)),
    "jax-cuda12-pjrt": ("JAX's CUDA 12 PJRT runtime", ()),
    "cudf-cu12": ("RAPIDS cuDF for CUDA 12", ("cudf", "cuDF")),
    "cuml-cu12": ("RAPIDS cuML for CUDA 12", ("cuml", "cuML")),
    "cugraph-cu12": ("RAPIDS cuGraph for CUDA 12", ("cugraph", "cuGraph")),
    "cuvs-cu12": ("RAPIDS cuVS for CUDA 12", ("cuvs", "cuVS")),
    "raft-dask-cu12": ("RAPIDS RAFT (Dask) for CUDA 12", ()),
    "kvikio-cu12": ("RAPIDS KvikIO for CUDA 12", ("kvikio", "KvikIO")),
    "faiss-gpu": ("Faiss's GPU build (community wheels)", ()),
    "faiss-gpu-cu11": ("Faiss's GPU build for CUDA 11", ()),
    "faiss-gpu-cu12": ("Faiss's GPU build for CUDA 12", ()),
    "nvidia-cufile-cu12": ("NVIDIA cuFile (GPUDirect Storage) for CUDA 12", ("cuFile", "GPUDirect Storage")),
}
#: Platforms that prove a package is not Linux-only.
NOT_LINUX = ("windows", "macos")


def platform_of(filename: str) -> List[str]:
    """The platforms of one file on PyPI: 'linux-x86_64', 'linux-aarch64', 'windows', 'macos', 'any' (a pure wheel),
    'sdist' (a source archive)."""
    if filename.endswith((".tar.gz", ".zip", ".tar.bz2")):
        return ["sdist"]
    out = []
    for tag in filename[: -len(".whl")].split("-")[-1].split("."):
        if "linux" in tag:
            out.append("linux-aarch64" if "aarch64" in tag else "linux-x86_64" if "x86_64" in tag else "linux-" + tag)
        elif tag.startswith("win"):
            out.append("windows")
        elif tag.startswith("macosx"):
            out.append("macos")
        elif tag == "any":
            out.append("any")
        else:
            out.append(tag)
    return out


def query(name: str) -> Dict[str, object]:
    url = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 - a fixed https URL
        d = json.load(r)
    seen: Counter = Counter()
    releases = 0
    for files in d["releases"].values():
        releases += bool(files)
        for f in files:
            seen.update(platform_of(f["filename"]))
    return {"latest": d["info"]["version"], "releases": releases, "files": dict(sorted(seen.items())), "source": url}


def build() -> Dict[str, object]:
    packages: Dict[str, object] = {}
    left_out: Dict[str, str] = {}
    for name, (what, aliases) in PACKAGES.items():
        q = query(name)
        files: Dict[str, int] = q["files"]  # type: ignore[assignment]
        if any(p in files for p in NOT_LINUX):
            left_out[name] = "has " + ", ".join(p for p in NOT_LINUX if p in files) + " wheels"
            continue
        packages[name] = {
            "what": what,
            "aliases": list(aliases),
            "platforms": sorted(p for p in files if p.startswith("linux-")),
            "sdist": "sdist" in files,
            "latest": q["latest"],
            "releases": q["releases"],
            "source": q["source"],
        }
    return {"packages": packages, "left_out": left_out}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the shipped table; write nothing")
    args = ap.parse_args(argv)
    new = build()
    old = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {}
    if args.check:
        changed = sorted(
            k
            for k in set(new["packages"]) | set(old.get("packages", {}))
            if new["packages"].get(k, {}).get("platforms") != old.get("packages", {}).get(k, {}).get("platforms")
        )
        print("unchanged" if not changed else "changed: " + ", ".join(changed))
        return 1 if changed else 0
    table = {
        "about": old.get("about", ""),
        "checked": _dt.date.today().isoformat(),
        "sources": old.get("sources", []),
        "notes": old.get("notes", []),
        **new,
    }
    OUT.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(new['packages'])} packages, {len(new['left_out'])} left out", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
