"""diff: "works on node A, fails on node B" -- what differs that can matter, most likely first."""

from __future__ import annotations

import copy
import json
import sys

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, load_fixture, run_cli, write_json
from cudadoctor import registry
from cudadoctor.cli import cli
from cudadoctor.diff import compare
from cudadoctor.report import diagnose

CUDA = "live-torch2141-cu130-nodriver.json"  # torch 2.14.1+cu130, torchvision 0.29.1, no driver
CPU = "live-torch2130-cpu-tv0280.json"  # torch 2.13.0+cpu, PyPI torchvision 0.28.0 (fails to load)
REG = registry.load(plugins=False)


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def diff_of(a: dict, b: dict) -> dict:
    return compare(a, b, diagnose(copy.deepcopy(a), REG), diagnose(copy.deepcopy(b), REG))


def keys(d: dict) -> list:
    return [x["key"] for x in d["differences"]]


def test_cuda_torch_vs_cpu_torch_lists_variant_then_torchvision_pairing():
    r = invoke("diff", str(FIXTURES / "facts" / CUDA), str(FIXTURES / "facts" / CPU), "--format", "json")
    assert r.exit_code == 1, r.output
    d = json.loads(r.output)
    assert keys(d)[:2] == ["torch.build", "companion.torchvision"], keys(d)
    build = d["differences"][0]
    assert "2.14.1+cu130" in build["a"] and "CUDA 13.0" in build["a"]
    assert "2.13.0+cpu" in build["b"] and "CPU-only" in build["b"] and "CPU-only" in build["why"]
    tv = d["differences"][1]
    assert "0.29.1" in tv["a"] and "extension loads" in tv["a"]
    assert "0.28.0" in tv["b"] and "torch for CPU only" in tv["b"] and "libc10_cuda.so" in tv["b"]
    # Same machine: the driver, the OS and the GPUs are ruled out, not listed.
    assert {"NVIDIA driver", "GPUs", "operating system"} <= set(d["same"])
    # Noise is never compared.
    assert not [k for k in keys(d) if any(n in k for n in ("hostname", "collected", "duration", "import_s", "memory"))]
    text = invoke("diff", str(FIXTURES / "facts" / CUDA), str(FIXTURES / "facts" / CPU)).output
    lines = text.splitlines()
    first = [ln for ln in lines if ln[:4].strip().rstrip(".").isdigit()]
    assert first[0].endswith("PyTorch build") and first[1].endswith("torchvision (pairing with torch)"), first


def test_same_report_twice_is_no_difference_even_with_noise(tmp_path):
    a = load_fixture(CUDA)
    b = copy.deepcopy(a)
    b["system"]["hostname"] = "other-node"
    b["tool"]["collected_at"] = "2027-01-01T00:00:00+00:00"
    b["tool"]["duration_s"] = 99.0
    b["torch"]["import_s"] = 12.5
    b["python"]["executable"] = "/opt/other/venv/bin/python"
    b["nvml"]["elapsed_s"] = 3.0
    r = run_cli("diff", str(write_json(tmp_path / "a.json", a)), str(write_json(tmp_path / "b.json", b)), "--format", "json")
    assert r.returncode == 0, r.stdout
    d = json.loads(r.stdout)
    assert d["differences"] == [] and d["only_in_a"] == [] and d["only_in_b"] == [] and d["matters"] is False


def with_driver(f: dict, version: str, cuda: str) -> dict:
    f = copy.deepcopy(f)
    f["nvml"] = {"status": "ok", "driver_version": version, "cuda_driver_version": cuda, "device_count": 1,
                 "devices": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0",
                              "uuid": "GPU-8e6b2d0a-1b2c-3d4e-5f60-718293a4b5c6", "serial": "1324021012345",
                              "memory": {"total_bytes": 85899345920, "free_bytes": 80000000000, "used_bytes": 5899345920},
                              "compute_mode": "Default"}]}
    f["system"]["pci_nvidia_devices"] = [{"address": "0000:07:00.0", "device_id": "0x20b2", "class": "0x030200", "driver": "nvidia"}]
    return f


def test_works_on_a_fails_on_b_driver_ranks_after_variant_and_before_pairing():
    a = with_driver(load_fixture(CUDA), "580.95.05", "13.0")
    b = with_driver(load_fixture(CPU), "535.104.05", "12.2")
    b["nvml"]["devices"][0]["memory"]["free_bytes"] = 1  # noise
    b["nvml"]["devices"][0]["uuid"] = "GPU-00000000-1111-2222-3333-444444444444"  # noise
    d = diff_of(a, b)
    assert keys(d)[:3] == ["torch.build", "driver", "companion.torchvision"], keys(d)
    assert d["differences"][1]["a"] == "580.95.05 (CUDA ≤ 13.0)" and d["differences"][1]["b"].startswith("535.104.05")
    assert "GPUs" in d["same"]  # free memory and UUIDs are not differences


def test_library_origin_and_ld_library_path():
    a = load_fixture(CUDA)
    b = copy.deepcopy(a)
    for lib in b["torch"]["loaded_libraries"]["libraries"]:
        if lib["name"].startswith("libcudnn_graph"):
            lib["path"] = lib["realpath"] = "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.1.0"
    b["environment"]["vars"]["LD_LIBRARY_PATH"] = "/usr/lib/x86_64-linux-gnu:/usr/local/cuda-12.4/lib64"
    b["environment"]["vars"]["SLURM_JOB_ID"] = "4242"  # noise
    d = diff_of(a, b)
    assert keys(d) == ["env.LD_LIBRARY_PATH", "library.libcudnn_graph"], keys(d)
    lib = d["differences"][1]
    assert "wheel: nvidia/cudnn/lib/libcudnn_graph.so.9" in lib["a"] and "system: /usr/lib/x86_64-linux-gnu/" in lib["b"]
    assert d["differences"][0]["a"] == "(not set)"


def test_visibility_variables_rank_high_and_wheels_are_summarised():
    a = load_fixture(CUDA)
    b = copy.deepcopy(a)
    b["environment"]["vars"]["CUDA_VISIBLE_DEVICES"] = ""
    for dist in b["packages"]["distributions"]:
        if dist["name"] == "nvidia-nvjitlink":
            dist["version"] = "13.0.39"
    d = diff_of(a, b)
    assert keys(d) == ["env.CUDA_VISIBLE_DEVICES", "wheels.cuda"], keys(d)
    assert "nvidia-nvjitlink 13.5.37 → 13.0.39" in d["differences"][1]["why"]


def test_libraries_on_one_side_many_wheels_and_other_packages():
    a = load_fixture(CUDA)
    b = copy.deepcopy(a)
    libs = b["torch"]["loaded_libraries"]["libraries"]
    libs[:] = [lib for lib in libs if not lib["name"].startswith("libnccl")]
    libs.append({"name": "libcuda.so.1", "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"})
    wheels = [x for x in b["packages"]["distributions"] if x["name"].startswith(("nvidia-", "cuda-"))]
    for dist in wheels:
        dist["version"] += ".1"
    b["packages"]["distributions"].append({"name": "Flash_Attn", "version": "2.6.3"})
    d = diff_of(a, b)
    assert keys(d) == ["libraries.loaded", "wheels.cuda", "package.flash-attn"], keys(d)
    libs_row, wheels_row, pkg = d["differences"]
    assert (libs_row["a"], libs_row["b"]) == ("libnccl", "libcuda")
    assert "CUDA libraries loaded" not in d["same"]  # a one-sided library is a difference, not a same
    assert wheels_row["a"] == wheels_row["b"] == f"{len(wheels)} wheels"
    assert wheels_row["why"].count(" → ") == 12 and wheels_row["why"].endswith(f"; … {len(wheels) - 12} more")
    assert (pkg["a"], pkg["b"], pkg["weight"]) == ("not installed", "2.6.3", 35)
    # No CUDA library loaded on one side (a CPU build): compared by count, and the wheels as a summary.
    b = copy.deepcopy(a)
    b["torch"]["loaded_libraries"]["libraries"] = []
    b["packages"]["distributions"] = [x for x in b["packages"]["distributions"] if not x["name"].startswith(("nvidia-", "cuda-"))]
    d = diff_of(a, b)
    rows = {x["key"]: (x["a"], x["b"], x["weight"]) for x in d["differences"]}
    assert rows["libraries.count"] == (str(len(a["torch"]["loaded_libraries"]["libraries"])), "none", 60) and rows["wheels.cuda"][1:] == ("none", 61), rows


def test_unknown_on_one_side_is_not_a_difference():
    a = load_fixture(CUDA)
    b = copy.deepcopy(a)
    b["environment"] = {}
    b["torch"] = {"status": "skipped", "source": "version.py", "installed": True, "version": "2.14.1+cu130", "cuda": "13.0"}
    d = diff_of(a, b)
    unknown = {x["key"] for x in d["unknown"]}
    assert {"torch.import", "env"} <= unknown, unknown
    assert "torch.build" not in keys(d)


def test_findings_on_one_side_only():
    a = load_fixture(CUDA)
    b = copy.deepcopy(a)
    b["torch"] = {"status": "not-installed"}
    b["packages"]["distributions"] = [x for x in b["packages"]["distributions"] if x["name"] != "torch"]
    b["packages"]["torch_sources"] = []
    d = diff_of(a, b)
    assert [f["code"] for f in d["only_in_b"]] == ["torch-not-installed"] and d["only_in_a"] == []
    assert keys(d)[0] == "torch.build" and d["differences"][0]["b"] == "not installed"


def test_markdown_and_text_formats(tmp_path):
    a = load_fixture(CUDA)
    a["nvml"] = with_driver(a, "580.95.05", "13.0")["nvml"]
    a["nvml"]["devices"][0]["name"] = "<img src=x onerror=alert(1)> | [x](https://evil.example)"
    pa, pb = write_json(tmp_path / "a.json", a), FIXTURES / "facts" / CPU
    md = run_cli("diff", str(pa), str(pb), "--format", "markdown").stdout
    assert md.startswith("## cudadoctor diff") and "| 1 | PyTorch build |" in md
    cmarkgfm = pytest.importorskip("cmarkgfm")
    h = cmarkgfm.github_flavored_markdown_to_html(md, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)
    assert "<img" not in h and "evil.example\"" not in h
    out = tmp_path / "d.txt"
    r = run_cli("diff", str(pa), str(pb), "-o", str(out))
    assert r.returncode == 1 and "Differences that can matter" in out.read_text()


def test_bad_inputs_one_line_exit_2(tmp_path):
    good = str(FIXTURES / "facts" / CUDA)
    newer = load_fixture(CUDA)
    newer["schema_version"] = 99
    cases = [
        (str(tmp_path / "missing.json"), "no such file"),
        (str(write_json(tmp_path / "list.json", [1, 2])), "expected a JSON object"),
        (str(write_json(tmp_path / "newer.json", newer)), "newer cudadoctor"),
    ]
    (tmp_path / "trunc.json").write_text('{"kind": "cudadoctor-facts", "schema_version": 1, "torch": {')
    cases.append((str(tmp_path / "trunc.json"), "truncated JSON"))
    for bad, msg in cases:
        for args in ((good, bad), (bad, good)):
            r = run_cli("diff", *args)
            assert r.returncode == 2, r.stdout
            assert r.stderr.startswith("cudadoctor: error:") and msg in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


def test_older_report_is_rediagnosed_with_todays_checks(tmp_path):
    """A report written by an older cudadoctor: its stored findings are ignored, today's checks decide."""
    old = {"schema_version": 1, "kind": "cudadoctor-report",
           "tool": {"name": "cudadoctor", "version": "0.0.9", "kb_date": "2025-01-01"},
           "facts": {k: v for k, v in load_fixture(CUDA).items() if k not in ("schema_version", "kind")},
           "findings": [{"code": "retired-code", "severity": "error", "title": "old"}]}
    old["facts"]["tool"]["version"] = "0.0.9"
    p = write_json(tmp_path / "old.json", old)
    d = json.loads(run_cli("diff", str(p), str(FIXTURES / "facts" / CUDA), "--format", "json").stdout)
    assert d["a"]["collected_by"] == "0.0.9" and d["matters"] is False
    r = run_cli("check", "--facts", str(p), "--format", "json")
    assert [f["code"] for f in json.loads(r.stdout)["findings"]] == ["no-nvidia-driver"]


@pytest.mark.parametrize("args", [
    ("check", "--facts", "{f}"),
    ("report", "--facts", "{f}", "-o", "{tmp}/r"),
    ("diff", "{f}", "{good}"),
    ("triage", "--facts", "{f}", "CUDA error"),
])
def test_every_command_that_reads_reports_refuses_a_newer_schema(tmp_path, args):
    newer = {"schema_version": 2, "kind": "cudadoctor-report", "tool": {"version": "9.0.0"},
             "facts": load_fixture(CUDA), "findings": []}
    newer["facts"]["schema_version"] = 2
    f = write_json(tmp_path / "newer.json", newer)
    argv = [a.format(f=f, tmp=tmp_path, good=FIXTURES / "facts" / CUDA) for a in args]
    r = run_cli(*argv)
    assert r.returncode == 2, r.stdout
    assert r.stderr.startswith("cudadoctor: error:") and "newer cudadoctor (schema 2" in r.stderr
    # the upgrade is by the route that installed it (here: this interpreter's pip, from the repository)
    assert f"{sys.executable} -m pip install -U git+https://" in r.stderr and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "r.json").exists()
