"""gpu-lost names the GPU nvidia-smi's error names (its PCI bus id) and survives a report that lists the GPUs.

nvidia-smi says "Unable to determine the device handle for GPU0000:4F:00.0: Unknown Error" for a GPU that fell off the
bus: no index, only the bus id, which `nvidia-smi -r -i` accepts. A collect_env report (taken before, or after a reboot)
listing the GPUs as answering does not contradict that error. Texts: tests/data/error_corpus (LLaVA#1466, darknet#86).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import paste_findings, run_check, write

CORPUS = Path(__file__).parent / "data" / "error_corpus"
HOLDOUT = Path(__file__).parent / "data" / "holdout_cases"


def corpus_text(source: str) -> str:
    for f in sorted(CORPUS.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("source") == source:
                return str(row["text"])
    raise AssertionError(f"{source} not in the error corpus")


CASES = [
    ("https://github.com/haotian-liu/LLaVA/issues/1466", "0000:4F:00.0"),
    ("https://github.com/AlexeyAB/darknet/issues/86", "0000:03:00.0"),
]


@pytest.mark.parametrize("source,bus", CASES)
def test_error_line_with_a_report_that_lists_the_gpus(tmp_path, source, bus):
    # e12: a real collect_env of a healthy 8x RTX 3090 machine: its GPUs answered when it was taken
    err = write(tmp_path, corpus_text(source), "error.txt")
    got = run_check("--from-collect-env", str(HOLDOUT / "e12-vllm-build-env-8x3090-healthy.txt"), "--error-file", str(err))
    lost = [f for f in got if f["code"] == "gpu-lost"]
    assert lost and lost[0]["severity"] == "error"
    assert f"sudo nvidia-smi -r -i {bus}" in "\n".join(lost[0]["fix"]["commands"])
    assert bus in lost[0]["title"]


@pytest.mark.parametrize("source,bus", CASES)
def test_pasted_nvidia_smi_error_names_the_gpu_by_its_bus_id(tmp_path, source, bus):
    got = paste_findings(tmp_path, "nvidia-smi\n" + corpus_text(source) + "\n")
    lost = [f for f in got if f["code"] == "gpu-lost"]
    assert lost, got
    text = lost[0]["title"] + "\n" + "\n".join(lost[0]["fix"]["commands"])
    assert "None" not in text
    assert bus.lower() in text.lower()


def test_healthy_report_alone_says_nothing_of_a_lost_gpu():
    got = run_check("--from-collect-env", str(HOLDOUT / "e12-vllm-build-env-8x3090-healthy.txt"))
    assert not [f for f in got if f["code"] == "gpu-lost"]
