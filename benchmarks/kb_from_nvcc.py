"""Regenerate cudadoctor/kb/host_compilers.json and kb/nvcc_archs.json from NVIDIA's nvcc wheels.

For each CUDA release given (a folder holding that release's crt/host_config.h and ptxas, unpacked from the
nvidia-cuda-nvcc-cu12 / nvidia-cuda-nvcc + nvidia-cuda-crt wheels on PyPI), reads:

* host_config.h: the newest GCC (`#if __GNUC__ > N` -> N), the clang range (`__clang_major__ >= N` -> N - 1)
  and the MSVC range (`_MSC_VER < A || _MSC_VER >= B`) nvcc accepts without -allow-unsupported-compiler;
* `ptxas --help`: every real (sm_) and virtual (compute_) target the release's assembler accepts
  (ptxas runs on Linux x86_64 without a GPU).

    python benchmarks/kb_from_nvcc.py DIR/12.0.140 DIR/12.1.105 ...  (folder names are the wheel versions)
    python benchmarks/kb_from_nvcc.py --merge DIR/11.7.99 DIR/11.8.89  (adds releases, keeps the others)

The nvidia-cuda-nvcc-cu11 wheels (11.7.99, 11.8.89) are the oldest nvcc on PyPI; older releases are not covered.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

KB = Path(__file__).resolve().parent.parent / "cudadoctor" / "kb"
CHECKED = "2026-11-29"


def host_limits(text: str) -> dict:
    out: dict = {}
    m = re.search(r"#if __GNUC__ > (\d+)\s*\n[^\n]*\n?\s*#error -- unsupported GNU version", text)
    if m is None:
        m = re.search(r"#if __GNUC__ > (\d+)", text)
    if m:
        out["gcc_max"] = int(m.group(1))
    m = re.search(r"#error -- unsupported GNU version! gcc versions (?:earlier|older) than (\d+)", text)
    if m:
        out["gcc_min"] = int(m.group(1))
    m = re.search(r"#error -- unsupported clang version! clang version must be less than (\d+) and greater than ([\d.]+)", text)
    if m:
        out["clang_max"] = int(m.group(1)) - 1
        out["clang_min_exclusive"] = m.group(2)
    m = re.search(r"#if _MSC_VER < (\d+) \|\| _MSC_VER >= (\d+)", text)
    if m:
        out["msvc_min"] = int(m.group(1))
        out["msvc_max_exclusive"] = int(m.group(2))
    m = re.search(r"Only the versions between (\d{4}) and (\d{4}) \(inclusive\) are supported", text)
    if m:
        out["visual_studio"] = [int(m.group(1)), int(m.group(2))]
    return out


def ptxas_targets(ptxas: Path) -> list:
    h = subprocess.run([str(ptxas), "--help"], capture_output=True, text=True, timeout=60).stdout
    block = h[h.index("--gpu-name") :]
    block = block[block.index("Allowed values for this option:") : block.index("\n\n")]
    return sorted(set(re.findall(r"'((?:sm|compute)_\d+[af]?)'", block)), key=_key)


def _key(a: str) -> tuple:
    m = re.match(r"(sm|compute)_(\d+)([af]?)", a)
    assert m
    return (m.group(1), int(m.group(2)), m.group(3))


def main(dirs: list, merge: bool = False) -> None:
    host: dict = {}
    archs: dict = {}
    if merge:
        host = dict(json.loads((KB / "host_compilers.json").read_text())["cuda"])
        archs = dict(json.loads((KB / "nvcc_archs.json").read_text())["releases"])
    for d in map(Path, dirs):
        v = d.name  # wheel version, e.g. 12.4.131
        mm = ".".join(v.split(".")[:2])
        host[mm] = {"release": v, **host_limits((d / "host_config.h").read_text())}
        archs[mm] = {"release": v, "targets": ptxas_targets(d / "ptxas")}
    first: dict = {}
    last: dict = {}
    order = sorted(archs, key=lambda s: tuple(map(int, s.split("."))))
    for mm in order:
        for a in archs[mm]["targets"]:
            first.setdefault(a, mm)
            last[a] = mm
    sources = [
        {
            "title": "nvidia-cuda-nvcc-cu11 wheels 11.7.99 and 11.8.89 (crt/host_config.h, ptxas)",
            "url": "https://pypi.org/project/nvidia-cuda-nvcc-cu11/#history",
        },
        {
            "title": "nvidia-cuda-nvcc-cu12 wheels 12.0-12.9 (crt/host_config.h, ptxas)",
            "url": "https://pypi.org/project/nvidia-cuda-nvcc-cu12/#history",
        },
        {
            "title": "nvidia-cuda-nvcc and nvidia-cuda-crt wheels 13.0-13.5 (ptxas, crt/host_config.h)",
            "url": "https://pypi.org/project/nvidia-cuda-nvcc/#history",
        },
        {
            "title": "CUDA Installation Guide for Linux: supported host compilers",
            "url": "https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html#host-compiler-support-policy",
        },
    ]
    (KB / "host_compilers.json").write_text(
        json.dumps(
            {
                "checked": CHECKED,
                "sources": sources,
                "notes": [
                    "Made by benchmarks/kb_from_nvcc.py from each release's crt/host_config.h (its last patch on PyPI): the version checks nvcc applies unless -allow-unsupported-compiler is given.",
                    "gcc_max: the newest GCC major accepted (`#if __GNUC__ > N` errors). clang_max: the newest clang major (`__clang_major__ >= N+1` errors). msvc_min / msvc_max_exclusive: the _MSC_VER range.",
                    "CUDA 11.6 and older have no nvcc wheel on PyPI; their limits are not in this table (unknown, never guessed).",
                ],
                "cuda": dict(sorted(host.items(), key=lambda kv: tuple(map(int, kv[0].split("."))))),
            },
            indent=1,
        )
        + "\n"
    )
    (KB / "nvcc_archs.json").write_text(
        json.dumps(
            {
                "checked": CHECKED,
                "sources": sources[:3],
                "notes": [
                    "Made by benchmarks/kb_from_nvcc.py: the --gpu-name values each release's ptxas accepts (sm_XY real targets, compute_XY virtual ones, a/f suffixes).",
                    "first/last: the first and last CUDA release in this table that knows the target; a target whose last is the newest release here is still supported. Releases before 11.7 are not covered (no nvcc wheel on PyPI).",
                ],
                "releases": {mm: archs[mm] for mm in order},
                "targets": {a: {"first": first[a], "last": last[a]} for a in sorted(first, key=_key)},
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="one folder per CUDA release, named by its wheel version")
    ap.add_argument("--merge", action="store_true", help="add these releases to the tables instead of replacing them")
    a = ap.parse_args()
    main(a.dirs, a.merge)
