"""`cudadoctor devices` as a user runs it, and the merged NVML + torch + knowledge-base device model."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, load_fixture, run_cli, write_json
from cudadoctor.cli import cli
from cudadoctor.devices import bandwidth_gbs, build, bus_key, match_torch

FACTS = FIXTURES / "facts"
NVML = FIXTURES / "nvml"
HEALTHY = str(FACTS / "hgx-8x-h100-healthy.json")

# Every property the device report shows per GPU (deviceQuery's, NVML's, PyTorch's).
LABELS = ["NVML index / torch index", "UUID", "Serial", "PCI bus id", "CUDA capability", "Multiprocessors", "CUDA cores",
          "SM clock", "Warp size", "Max threads per block", "Max threads per multiprocessor", "Registers per block",
          "Registers per multiprocessor", "Total global memory", "Free", "Memory bus width", "Memory clock",
          "Theoretical bandwidth", "L2 cache", "Shared memory per block", "Shared memory per multiprocessor", "ECC",
          "Memory repair", "Clock event reasons", "Temperature", "Power", "Performance state", "Utilisation",
          "Compute processes", "Compute mode", "Persistence mode", "MIG", "PCIe", "NVLink",
          "Architecture in this build", "Test kernel"]


def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def value(text: str, label: str) -> str:
    """The value printed on the first row labelled ``label`` (columns are padded to the longest label)."""
    for line in text.splitlines():
        if line.startswith(f"    {label}  ") or line.startswith(f"    {label} "):
            return line[4 + len(label):].strip()
    raise AssertionError(f"no row {label!r}")


def test_no_gpu_here_says_why_and_exits_1():
    """On this GPU-less machine (live probes)."""
    r = run_cli("devices", timeout=120)
    if "No NVIDIA GPU" not in r.stdout:
        pytest.skip("this machine has an NVIDIA GPU")
    assert r.returncode == 1, r.stdout + r.stderr
    first = [ln for ln in r.stdout.splitlines() if ln.startswith("No NVIDIA GPU")][0]
    assert "PCI bus" in first or "driver" in first, first  # the reason, not just the fact
    assert "Result = FAIL (no NVIDIA GPU)" in r.stdout
    r = run_cli("devices", "--format", "json", timeout=120)
    model = json.loads(r.stdout)
    assert model["devices"] == [] and model["problem"].startswith("No NVIDIA GPU: ")


def test_multi_gpu_report_has_every_field_per_gpu_and_the_peer_matrix():
    r = invoke("devices", "--facts", HEALTHY)
    assert r.exit_code == 0, r.output
    out = r.output
    blocks = out.split('\nDevice ')[1:]
    assert len(blocks) == 8
    for block in blocks:
        for label in LABELS:
            assert f"    {label} " in block, (label, block[:200])
        unknown = [ln.split()[:3] for ln in block.splitlines() if "unknown" in ln]
        assert unknown == [], unknown  # registers per block: from the architecture (kb), as deviceQuery prints it
        assert re.search(r"Registers per block\s+65536\n", block), block
        assert value(block, "Registers per block") == "65536"
        assert "Result = PASS (a test kernel ran)" in block
    assert value(out, "Multiprocessors") == "132" and value(out, "CUDA cores") == "16896 (128 per multiprocessor)"
    assert value(out, "L2 cache") == "50 MiB"
    assert "3352.3 GB/s = 2 × 2619 MHz × 5120 bit / 8" in out
    assert "sm_90: yes, native code (SASS) in the build" in out
    assert "Peer access (GPU row can access GPU column's memory; source: torch.cuda.can_device_access_peer" in out
    matrix = out.split("Peer access")[1].split("\n\n")[0].splitlines()
    assert len(matrix) == 1 + 1 + 8 and matrix[2].split() == ["0", "-"] + ["Y*"] * 7
    assert "GPU 7: 18 of 18 links active (NVLink 4) — 18 to NVSwitch" in out
    assert out.rstrip().endswith("Result = PASS: 8 PASS, 0 FAIL, 0 UNKNOWN of 8 GPUs")


def test_serials_are_hidden_unless_asked():
    out = invoke("devices", "--facts", HEALTHY).output
    assert "hidden (use --show-serials)" in out and "1654223001200" not in out
    out = invoke("devices", "--facts", HEALTHY, "--show-serials").output
    assert value(out, "Serial") == "1654223001200"
    model = json.loads(invoke("devices", "--facts", HEALTHY, "--format", "json").output)
    assert model["devices"][0]["serial"] is None and model["devices"][0]["serial_hidden"] is True
    # and the compact Devices section of `check` never shows them
    assert "16542230012" not in invoke("check", "--facts", HEALTHY).output.split("\n\n")[1]


def test_json_model_contract():
    model = json.loads(invoke("devices", "--facts", HEALTHY, "--format", "json").output)
    assert model["kind"] == "cudadoctor-devices" and model["schema_version"] == 1
    d = model["devices"][0]
    assert d["sources"]["multiprocessors"] == "torch" and d["sources"]["cores_per_sm"] == "kb"
    assert d["sources"]["memory_bandwidth_gbs"] == "derived" and d["memory_bandwidth_gbs"] == 3352.3
    assert d["registers_per_block"] == 65536 and d["sources"]["registers_per_block"] == "kb"
    assert model["peer_access"]["access"][0][1] == "yes" and model["peer_access"]["nvlink"][0][1] is True


def test_markdown_report():
    out = invoke("devices", "--facts", HEALTHY, "--format", "markdown").output
    assert out.startswith("## cudadoctor devices") and out.count("### Device ") == 8
    assert "| Memory | Theoretical bandwidth | 3352.3 GB/s = 2 × 2619 MHz × 5120 bit / 8 |" in out
    assert "### Multi-GPU" in out


@pytest.mark.parametrize("name,gpu,code", [
    ("hgx-8x-h100-ecc.json", 3, "gpu-ecc-errors"),
    ("hgx-8x-h100-throttled.json", 5, "gpu-throttled"),
    ("hgx-8x-h100-pcie-x8.json", 6, "pcie-link-degraded"),
])
def test_sick_gpu_is_named_in_its_block(name, gpu, code):
    r = invoke("devices", "--facts", str(FACTS / name))
    block = r.output.split(f'\nDevice {gpu}: ')[1].split("\nDevice ")[0]
    assert code in block.split("  Findings")[1]
    others = [b for b in r.output.split("\nDevice ")[1:] if not b.startswith(f"{gpu}:")]
    assert all(code not in b for b in others)
    if code == "gpu-ecc-errors":
        assert r.exit_code == 1 and "Result = FAIL (gpu-ecc-errors: GPU 3" in block
        assert "errors since driver load: 14 corrected, 2 uncorrected" in block
    else:
        assert r.exit_code == 0 and f"Result = PASS (a test kernel ran; warnings: {code})" in block


def test_check_has_a_compact_devices_section():
    out = invoke("check", "--facts", str(FACTS / "hgx-8x-h100-pcie-x8.json")).output
    section = out.split("Devices (details: cudadoctor devices):\n")[1].split("\n\n")[0].splitlines()
    assert len(section) == 8
    assert section[6] == ("  GPU 6  NVIDIA H100 80GB HBM3 · sm_90 (in build) · 132 SMs · 79.6 GiB (39.1 GiB free) · "
                          "PCIe Gen5 x8 · 61 °C · kernel ok → PASS (pcie-link-degraded)")
    md = invoke("check", "--facts", HEALTHY, "--format", "markdown").output
    assert "### Devices" in md and "| 7 | NVIDIA H100 80GB HBM3 · sm\\_90 \\(in build\\)" in md
    # no GPU, no section
    assert "Devices (details" not in invoke("check", "--facts", str(FACTS / "live-torch2141-cu130-nodriver.json")).output


def _facts_with(fn):
    f = load_fixture("hgx-8x-h100-healthy.json")
    fn(f)
    return f


@pytest.mark.parametrize("arch_list,shown,result", [
    (["sm_80", "compute_80"], "sm_90: PTX only", "PASS"),
    (["sm_75", "sm_80", "sm_86"], "sm_90: NO — not in this build's arch list (sm_75 sm_80 sm_86)", "FAIL"),
])
def test_arch_in_build(tmp_path, arch_list, shown, result):
    f = _facts_with(lambda f: f["torch"].update(arch_list=arch_list))
    r = invoke("devices", "--facts", str(write_json(tmp_path / "f.json", f)))
    assert shown in r.output and f"Result = {result}" in r.output
    assert r.exit_code == (1 if result == "FAIL" else 0)


def test_failed_kernel_fails_the_device(tmp_path):
    err = "CUDA error: no kernel image is available for execution on the device"
    f = _facts_with(lambda f: f["torch"]["devices"][2].update(kernel_ok=False, kernel_error=err))
    r = invoke("devices", "--facts", str(write_json(tmp_path / "f.json", f)))
    assert r.exit_code == 1
    assert f"Result = FAIL (the test kernel failed: {err})" in r.output.split("\nDevice 2: ")[1]


def test_lost_gpu_is_shown_and_fails(tmp_path):
    f = _facts_with(lambda f: f["nvml"]["devices"].__setitem__(4, {"index": 4, "error": {"code": 15, "message": "GPU is lost"}}))
    r = invoke("devices", "--facts", str(write_json(tmp_path / "f.json", f)))
    block = r.output.split("\nDevice 4: ")[1].split("\nDevice ")[0]
    assert "NVML cannot open this GPU: GPU is lost (code 15)" in block
    assert "Result = FAIL (the GPU is lost (NVML: GPU is lost); gpu-lost:" in block
    assert r.exit_code == 1


def test_torch_devices_are_matched_by_uuid_then_pci_not_by_index():
    f = load_fixture("hgx-8x-h100-healthy.json")
    t = list(reversed(f["torch"]["devices"][:3]))  # CUDA_VISIBLE_DEVICES=2,1,0
    for i, d in enumerate(t):
        d["index"] = i
    m = match_torch(f["nvml"]["devices"], t)
    assert {k: [x["index"] for x in v] for k, v in m.items()} == {0: [2], 1: [1], 2: [0]}
    for d in t:
        d["uuid"] = None  # old torch: no uuid, PCI address still matches
    assert {k: [x["index"] for x in v] for k, v in match_torch(f["nvml"]["devices"], t).items()} == {0: [2], 1: [1], 2: [0]}
    f["torch"]["devices"] = t
    f["torch"]["device_count"] = 3
    model = build(f)
    assert [d["torch_index"] for d in model["devices"][:4]] == [2, 1, 0, None]
    assert model["devices"][3]["result"] == "UNKNOWN"
    assert "PyTorch does not see this GPU" in model["devices"][3]["unknown"]["kernel_ok"]


def test_bus_key():
    assert bus_key("00000000:0A:00.0") == (0, 0x0A, 0) == bus_key("0000:0a:00.0")
    assert bus_key("garbage") is None and bus_key(None) is None


@pytest.mark.parametrize("clock,width,published", [
    (2619, 5120, 3350),   # H100 SXM5 80GB HBM3: 3.35 TB/s (NVIDIA H100 datasheet)
    (1593, 5120, 2039),   # A100 SXM4 80GB HBM2e: 2039 GB/s (NVIDIA A100 datasheet)
    (1215, 5120, 1555),   # A100 SXM4 40GB HBM2: 1555 GB/s
    (10501, 384, 1008),   # RTX 4090 GDDR6X: 1008 GB/s (NVIDIA/nvbench#207: "384-bit DDR @10501MHz")
    (5001, 256, 320),     # Tesla T4 GDDR6: 320 GB/s
    (6001, 128, 192),     # RTX 3050 Ti Laptop GDDR6 12 Gbps: 192 GB/s
])
def test_bandwidth_formula_against_published_figures(clock, width, published):
    assert abs(bandwidth_gbs(clock, width) - published) / published < 0.01


def test_unknown_is_never_zero():
    assert bandwidth_gbs(None, 5120) is None and bandwidth_gbs(2619, 0) is None


@pytest.mark.parametrize("name,checks", [
    ("rtx4090.json", {"name": "NVIDIA GeForce RTX 4090", "multiprocessors": 128, "cuda_cores": 16384,
                      "memory_bandwidth_gbs": 1008.1, "ecc_enabled": None, "pcie_gen_current": 1, "result": "UNKNOWN"}),
    ("rtx3050ti-laptop.json", {"multiprocessors": 20, "memory_bandwidth_gbs": 192.0, "pcie_width_max": 8}),
    ("a100-80gb-mig.json", {"mig_enabled": True, "memory_bandwidth_gbs": 2039.0, "multiprocessors": 108}),
])
def test_live_devices_over_recorded_nvml(name, checks):
    """The whole path: real NVML child over a recording, model, JSON renderer (torch absent here)."""
    r = run_cli("devices", "--format", "json",
                env={"PYTHONPATH": str(NVML), "CUDADOCTOR_FAKE_NVML": str(NVML / name)}, timeout=120)
    model = json.loads(r.stdout)
    (d,) = model["devices"]
    for k, v in checks.items():
        assert d[k] == v, (k, d[k])
    if name.startswith("a100"):
        assert [m["multiprocessors"] for m in d["mig_instances"]] == [42, 28, 14, 14]
    if name == "rtx4090.json":
        assert d["unknown"]["ecc_enabled"] == "NVML: Not Supported"
        assert d["sources"]["multiprocessors"] == "derived"  # 16384 cores / 128 per SM, no torch here
        assert r.returncode == 0  # UNKNOWN is not a failure


def test_mig_without_instances_fails_the_gpu():
    r = run_cli("devices", env={"PYTHONPATH": str(NVML), "CUDADOCTOR_FAKE_NVML": str(NVML / "a100-80gb-mig-empty.json")},
                timeout=120)
    assert r.returncode == 1
    assert value(r.stdout, "MIG") == "enabled; NO instances: CUDA cannot use this GPU"
    assert "Result = FAIL (mig-no-instances:" in r.stdout


def test_bad_input_is_one_line_exit_2(tmp_path):
    r = run_cli("devices", "--facts", str(tmp_path / "missing.json"))
    assert r.returncode == 2 and r.stderr.strip() == f"cudadoctor: error: {tmp_path / 'missing.json'}: no such file"
    r = run_cli("devices", "--python", str(tmp_path))
    assert r.returncode == 2 and "not an executable file" in r.stderr and "Traceback" not in r.stderr


def test_torch_alone_when_nvml_cannot_list_the_gpus(tmp_path):
    f = _facts_with(lambda f: f.update(nvml={"status": "no-permission", "error": "Insufficient Permissions", "error_code": 4}))
    model = build(f)
    assert len(model["devices"]) == 8 and model["problem"] is None
    d = model["devices"][0]
    assert d["name"] == "NVIDIA H100 80GB HBM3" and d["multiprocessors"] == 132 and d["result"] == "PASS"
    assert d["memory_bandwidth_gbs"] == 3352.3  # from torch's memory clock and bus width
    assert d["unknown"]["pcie_width_current"] == "NVML could not be asked (no-permission)"
