"""Regenerate cudadoctor/kb/torch_wheels.json: which torch releases PyPI has a wheel for, per platform and Python.

One `pip index versions torch --only-binary=:all: --platform ... --python-version X.Y` per (platform, Python):
pip answers from PyPI's file listing which releases have a wheel whose tags fit, without downloading any.
Only PyPI (what a plain `pip install torch` sees); the CUDA variants on download.pytorch.org are in
kb/torch_releases.json.

    python benchmarks/kb_torch_wheels.py
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

KB = Path(__file__).resolve().parent.parent / "cudadoctor" / "kb"
CHECKED = "2026-11-27"
PYTHONS = ["3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]
PLATFORMS = {
    "linux-x86_64": [
        "manylinux_2_28_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
        "manylinux2010_x86_64",
        "manylinux1_x86_64",
        "linux_x86_64",
    ],
    "linux-aarch64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64", "linux_aarch64"],
    "windows": ["win_amd64"],
    "macos": [f"macosx_{v}_0_arm64" for v in (15, 14, 13, 12, 11)],
    "macos-x86_64": [f"macosx_10_{v}_x86_64" for v in (15, 14, 13, 9)] + ["macosx_11_0_x86_64"],
}


def versions(platform: str, python: str) -> list:
    args = [
        sys.executable,
        "-m",
        "pip",
        "--isolated",
        "index",
        "versions",
        "torch",
        "--only-binary=:all:",
        "--python-version",
        python,
    ]
    for p in PLATFORMS[platform]:
        args += ["--platform", p]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300).stdout
    m = re.search(r"Available versions: (.*)", out)
    return sorted(m.group(1).split(", "), key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0]))) if m else []


def main() -> None:
    jobs = [(pf, py) for pf in PLATFORMS for py in PYTHONS]
    with ThreadPoolExecutor(4) as ex:
        got = dict(zip(jobs, ex.map(lambda j: versions(*j), jobs)))
    table = {pf: {py: got[(pf, py)] for py in PYTHONS if got[(pf, py)]} for pf in PLATFORMS}
    (KB / "torch_wheels.json").write_text(
        json.dumps(
            {
                "checked": CHECKED,
                "sources": [
                    {"title": "PyPI: torch, release files", "url": "https://pypi.org/project/torch/#files"},
                    {
                        "title": "pip index versions (--platform / --python-version filter the files by wheel tags)",
                        "url": "https://pip.pypa.io/en/stable/cli/pip_index/",
                    },
                ],
                "notes": [
                    "Made by benchmarks/kb_torch_wheels.py: one `pip --isolated index versions torch --only-binary=:all:` (PyPI only, no local wheel folders) per platform and CPython minor, with that platform's wheel tags; nothing downloaded.",
                    "PyPI only: what a plain `pip install torch` can get. The CUDA variants of download.pytorch.org are in torch_releases.json (variants).",
                    "platforms: linux-x86_64 (manylinux1 to manylinux_2_28), linux-aarch64, windows (win_amd64), macos (arm64, macOS 11-15), macos-x86_64 (Intel Macs).",
                    "A (platform, Python) absent here has no torch wheel on PyPI at all; free-threaded builds (cp313t, cp314t) are not listed.",
                ],
                "platform_tags": PLATFORMS,
                "pypi": table,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
