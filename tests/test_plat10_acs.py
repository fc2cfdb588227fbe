"""pcie-acs-blocks-p2p (checks/plat10.py, readers/multigpu.py) on real public threads it was not written from
(tests/data/plat10/acs_threads.jsonl: NCCL issues with the cause confirmed or pointed at by NCCL's maintainer, and
multi-GPU hangs with another cause that must stay silent), and on the blind batches' healthy cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.readers import multigpu

DATA = Path(__file__).parent / "data"
THREADS = [json.loads(s) for s in (DATA / "plat10" / "acs_threads.jsonl").read_text(encoding="utf-8").splitlines() if s.strip()]
CODE = "pcie-acs-blocks-p2p"


@pytest.mark.parametrize(
    "row", THREADS, ids=[r["source"].rsplit("/", 3)[-3] + "#" + r["source"].rsplit("/", 1)[-1] for r in THREADS]
)
def test_real_threads(tmp_path, row):
    found = codes(paste_findings(tmp_path, row["text"]))
    if row["expect"]:
        assert CODE in found, (row["source"], found)
    else:
        assert CODE not in found, (row["source"], found)


def test_acs_or_iommu_shown_is_an_error_else_a_likely_warning(tmp_path):
    by = {r["source"]: r for r in THREADS}
    iommu = severities(paste_findings(tmp_path, by["https://github.com/NVIDIA/nccl/issues/257"]["text"]))
    assert iommu[CODE] == "error"  # "Booting the kernel with intel_iommu=off resolved all our problems"
    likely = paste_findings(tmp_path, by["https://github.com/NVIDIA/nccl/issues/667"]["text"])
    f = [x for x in likely if x["code"] == CODE][0]
    assert f["severity"] == "warning" and f["title"].startswith("Likely")


def test_nvlink_path_is_not_a_pcie_p2p_problem():
    lines = ["NCCL all_reduce hangs on 4 GPUs", "GPU0  X  NV12 NV12", "NCCL_P2P_DISABLE=1 works"]
    got = multigpu.read(lines)
    assert got and got["nvlink"]["said"] == "NV12"
    lines = ["ncclAllReduce deadlocks on 2x RTX 5880 Ada (PCIe PHB topology, no NVLink)"]
    got = multigpu.read(lines)
    assert got and "nvlink" not in got and got["pcie"]["said"] in ("PCIe", "PHB", "no NVLink")


def test_no_collective_no_entity():
    assert multigpu.read(["RuntimeError: CUDA error: out of memory", "my GPU hangs when I open Chrome"]) is None


def _healthy():
    batches = [b for b in sorted((DATA / "blind").iterdir()) if b.is_dir() and b.name not in ("b30", "b31")]  # sealed
    for j in (j for b in batches for j in sorted(b.glob("*.json"))):
        try:
            d = json.loads(j.read_text(encoding="utf-8"))
        except ValueError:
            continue
        paste = j.with_name(j.name[: -len(".json")] + ".paste.txt")
        if isinstance(d, dict) and d.get("label") == "healthy" and paste.exists():
            yield paste


def test_no_healthy_blind_case_shows_the_multi_gpu_class():
    seen = 0
    for paste in _healthy():
        seen += 1
        got = multigpu.read(paste.read_text(encoding="utf-8", errors="replace").splitlines())
        fires = bool(
            got and (got.get("symptom") or got.get("workaround")) and (got.get("pcie") or got.get("p2p") or got.get("acs"))
        )
        assert not fires, paste.name
    assert seen > 5
