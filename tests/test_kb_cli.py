"""`cudadoctor kb driver|arch|pair|gpu` as a support engineer asks: the answers are the published facts.

Expected values are NVIDIA's and PyTorch's own, not read back from our tables: CUDA 12.8's toolkit
shipped with driver 570.26 (Linux) / 570.65 (Windows) and minor-version compatibility for 12.x starts at
525.60.13 / 527.41 (CUDA toolkit release notes, Table 3; CUDA compatibility guide); sm_120 (RTX 50xx)
first shipped in torch 2.7's cu128 wheels (PyTorch 2.7 release notes); torch 2.6.0 pairs with
torchvision 0.21.0 and torchaudio 2.6.0 (pytorch/vision README); an RTX 4090 is compute capability 8.9
(developer.nvidia.com/cuda-gpus).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import run_cli
from cudadoctor.cli import cli


def kb(*args: str):
    return CliRunner().invoke(cli, ["kb", *args], catch_exceptions=False)


def kb_json(*args: str) -> dict:
    r = kb(*args, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["kind"] == "cudadoctor-kb-answer" and doc["schema_version"] == 1
    assert list(doc) == sorted(doc)
    for t in doc["tables"]:  # every answer names its tables, their dates and sources
        assert t["checked"] and t["sources"] and all(s["url"].startswith("https://") for s in t["sources"])
    return doc


def test_driver_for_cuda_12_8():
    d = kb_json("driver", "12.8")
    assert d["cuda"] == "12.8"
    assert d["toolkit_driver"] == {"linux": "570.26", "windows": "570.65"}
    assert d["minor_compat_min_driver"] == {"linux": "525.60.13", "windows": "527.41"}
    assert d["native_branch"] == 570 and d["torch_variant"] == "cu128"
    assert "2.7" in d["torch_releases"] and "2.6" not in d["torch_releases"]  # cu128 wheels began with 2.7
    text = kb("driver", "12.8").output
    assert "Linux >= 525.60.13, Windows >= 527.41" in text and "Linux 570.26, Windows 570.65" in text


def test_driver_for_an_old_cuda_names_no_branch_the_table_lacks():
    d = kb_json("driver", "9.0")  # CUDA 9.0 GA: 384.81 (Linux), 385.54 (Windows); R384 is the table's oldest branch
    assert d["toolkit_driver"] == {"linux": "384.81", "windows": "385.54"} and d["native_branch"] == 384
    assert d["minor_compat_min_driver"] is None  # minor-version compatibility began with CUDA 11
    old = kb_json("driver", "8.0")
    assert old["native_branch"] is None  # older than every branch known: no branch is claimed
    assert "first driver branch" not in kb("driver", "8.0").output


def test_driver_version_says_its_cuda_and_the_wheels_it_runs():
    d = kb_json("driver", "535.104.05")  # R535: nvidia-smi prints CUDA 12.2
    assert d["cuda"] == "12.2" and d["branch"] == 535
    assert {"cu128", "cu126", "cu118"} <= set(d["torch_variants_it_runs"])  # 12.x by minor-version compatibility
    assert {"cu130", "cu132"} <= set(d["torch_variants_too_new"])  # 13.x needs R580


def test_arch_sm_120():
    d = kb_json("arch", "sm_120")
    assert d["capability"] == "12.0" and "GeForce RTX 5090" in d["gpus"]
    native = {(w["release"], w["variant"]) for w in d["wheels"] if w["runs"] == "sass"}
    assert ("2.7", "cu128") in native and ("2.7", "cu126") not in native
    assert not any(w["release"] == "2.6" for w in d["wheels"])  # no 2.6 wheel runs an RTX 50xx
    for spelling in ("12.0", "120", "SM_120"):
        assert kb_json("arch", spelling)["capability"] == "12.0"


@pytest.mark.parametrize("args", [("torch", "2.6"), ("torch", "2.6.0"), ("torchvision", "0.21"), ("torchaudio", "2.6.0")])
def test_pair_torch_2_6(args):
    d = kb_json("pair", *args)
    assert (d["torch"], d["torchvision"], d["torchaudio"]) == ("2.6.0", "0.21.0", "2.6.0")
    assert d["asked"] == {"package": args[0], "version": args[1]}


def test_gpu_rtx_4090():
    d = kb_json("gpu", "RTX 4090")
    assert d["capability"] == "8.9" and d["arch"] == "sm_89"
    assert kb_json("gpu", "NVIDIA GeForce RTX 4090")["capability"] == "8.9"  # as nvidia-smi prints it
    assert kb("gpu", "RTX 4090").output.startswith("RTX 4090: compute capability 8.9 (sm_89)")


def test_format_before_or_after_the_question():
    assert json.loads(kb("--format", "json", "gpu", "RTX 4090").output)["capability"] == "8.9"
    assert kb("--format", "json", "gpu", "RTX 4090", "--format", "text").output.startswith("RTX 4090: compute")


def test_bare_kb_still_lists_the_sources_and_says_what_to_ask():
    r = kb()
    assert r.exit_code == 0 and "cuda_drivers  (checked" in r.output and "kb driver 12.8" in r.output
    assert json.loads(kb("--format", "json").output)["kind"] == "cudadoctor-kb"


@pytest.mark.parametrize("args,expect", [
    (("driver", "twelve"), "neither a CUDA version"),
    (("driver", "14.9"), "CUDA 14.9 is not in the driver table"),
    (("arch", "sm_999"), "no known GPU or wheel has compute capability 99.9"),
    (("arch", "ampere"), "is not an architecture"),
    (("pair", "torch", "9.9"), "torch 9.9 is not in the release table"),
    (("pair", "numpy", "1.26"), "'numpy' is not one of"),
    (("gpu", "RTX 4099"), "did you mean 'GeForce RTX 4090'"),
    (("gpu", "TITAN X"), "more than one compute capability"),
    (("driver",), "Missing argument 'VERSION'"),
])
def test_bad_questions_are_one_line_exit_2(args, expect):
    r = run_cli("kb", *args)
    assert r.returncode == 2, r.stdout
    assert r.stderr.startswith("cudadoctor: error: ") and r.stderr.count("\n") == 1 and expect in r.stderr, r.stderr
    assert r.stdout == ""
