"""Replays of the first real-GPU run: one NVIDIA H100 80GB HBM3, driver 580.159.04, torch 2.11.0+cu130,
recorded 2026-11-27 (tests/fixtures/h100/README.md). Every renderer and verdict on what a real GPU gave, and
the two readers of the same machine's GPU (NVML through the probe, `nvidia-smi -q` as pasted) agreeing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.readers.nvidia_smi_q import read_query

H100 = Path(__file__).parent / "fixtures" / "h100"


def _json(name: str) -> dict:
    return json.loads((H100 / name).read_text(encoding="utf-8"))


def _cli(*args: str):
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def test_check_on_the_recorded_h100_facts_says_pytorch_can_use_it_because_a_kernel_ran():
    code, out = _cli("check", "--facts", str(H100 / "collect.json"), "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["summary"]["state"] == "yes" and "kernel ran" in doc["summary"]["text"]
    assert not [f for f in doc["findings"] if f["severity"] in ("error", "warning")], doc["findings"]
    recorded = _json("check.json")
    assert [f["code"] for f in doc["findings"]] == [f["code"] for f in recorded["findings"]]


def test_check_text_on_the_h100_names_the_gpu_the_build_and_the_verdict():
    code, out = _cli("check", "--facts", str(H100 / "collect.json"))
    assert code == 0, out
    for line in ("580.159.04", "NVIDIA H100 80GB HBM3 (sm_90)", "2.11.0+cu130", "cuda.is_available() = True"):
        assert line in out, (line, out)
    assert "PyTorch can use 1 GPU" in out


def test_devices_on_the_h100_agree_with_torch_and_with_the_recording():
    code, out = _cli("devices", "--facts", str(H100 / "collect.json"), "--format", "json")
    assert code == 0, out
    (dev,) = json.loads(out)["devices"]
    props = json.loads((H100 / "torch-properties.out").read_text())["devices"][0]
    assert dev["name"] == props["name"] and dev["compute_capability"] == f"{props['major']}.{props['minor']}"
    assert dev["multiprocessors"] == props["multi_processor_count"] == 132
    assert dev["result"] == "PASS" and dev["kernel_ok"] is True
    recorded = _json("devices.json")["devices"][0]
    for key in ("architecture", "cuda_cores", "memory_total_bytes", "memory_bus_width_bits", "sm_clock_max_mhz",
                "pcie_gen_max", "pcie_width_max", "ecc_enabled", "persistence_mode", "mig_enabled", "compute_mode"):
        assert dev[key] == recorded[key], key


def test_devices_on_the_h100_give_registers_per_block_from_the_architecture_and_say_why_nvlink_is_unknown():
    code, out = _cli("devices", "--facts", str(H100 / "collect.json"), "--format", "json")
    (dev,) = json.loads(out)["devices"]
    assert dev["registers_per_block"] == 65536 and dev["sources"]["registers_per_block"] == "kb"
    code, text = _cli("devices", "--facts", str(H100 / "collect.json"))
    nvlink = next(ln for ln in text.splitlines() if ln.strip().startswith("NVLink"))
    assert "Not Supported" in nvlink and "no NVLink on this GPU" not in nvlink, nvlink


# Every field both nvidia-smi -q and NVML (the probe's recording of the same machine) report.
# Clocks now, temperature, power drawn and utilisation change between two readings and are left out.
SHARED_FIELDS = (
    "name", "pci_bus_id", "persistence_mode", "mig_mode", "compute_mode", "ecc_mode", "ecc_errors", "remapped_rows",
    "pcie", "max_clocks", "memory.total_bytes", "memory.free_bytes", "memory.used_bytes", "power.limit_mw",
    "power.default_limit_mw", "performance_state", "minor_number", "index", "processes",
)


def _get(d: dict, dotted: str):
    for part in dotted.split("."):
        d = d[part]
    return d


@pytest.mark.parametrize("field", SHARED_FIELDS)
def test_nvidia_smi_q_and_nvml_agree_on_the_h100(field):
    smi = read_query((H100 / "nvidia-smi-q.out").read_text().splitlines())
    nvml = _json("collect.json")["nvml"]
    assert smi["driver_version"] == nvml["driver_version"] and smi["cuda_driver_version"] == nvml["cuda_driver_version"]
    (s,) = smi["devices"]
    (n,) = nvml["devices"]
    assert _get(s, field) == _get(n, field), (field, _get(s, field), _get(n, field))


def test_nvidia_smi_q_memory_adds_up_like_nvml():
    """-q prints the driver's reserved memory apart (480 MiB here); NVML counts it as used."""
    (s,) = read_query((H100 / "nvidia-smi-q.out").read_text().splitlines())["devices"]
    m = s["memory"]
    assert m["reserved_bytes"] == 480 * 2**20 and m["used_bytes"] + m["free_bytes"] == m["total_bytes"]


def test_the_h100_collect_env_text_is_a_healthy_case():
    code, out = _cli("check", "--from-collect-env", str(H100 / "torch-collect_env.out"), "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert not [f for f in doc["findings"] if f["severity"] == "error"], doc["findings"]
    facts = doc["facts"]
    assert facts["torch"]["version"] == "2.11.0+cu130" and facts["nvml"]["driver_version"] == "580.159.04"


def test_the_recorded_smoke_renders_as_a_pass_with_every_stage():
    from cudadoctor.render import smoke as smoke_render

    r = _json("smoke.json")
    text = smoke_render.render_text(r)
    assert text.splitlines()[0].endswith("PASS"), text
    stages = [s["name"] for s in r["stages"]]
    assert stages == ["device", "agreement", "training", "throughput", "mixed-precision", "cudnn", "transfers"]
    assert all(s["verdict"] == "pass" for s in r["stages"])
    tr = next(s for s in r["stages"] if s["name"] == "training")["evidence"]
    assert tr["test_accuracy"] >= 0.97 and "0.97" in text
    for line in (H100 / "smoke.out").read_text().splitlines()[1:8]:  # the stage lines as the run printed them
        assert line.split()[1] in text


def test_fleet_over_the_h100_recordings_is_healthy_and_names_the_configuration():
    files = [str(H100 / n) for n in ("check.json", "smoke.json", "smoke-job-gloo-2.json")]
    code, out = _cli("fleet", *files)
    assert code == 0, out
    assert "NVIDIA driver 580.159.04" in out and "2.11.0+cu130" in out and "1 × NVIDIA H100 80GB HBM3" in out
    assert "3 passed, 0 failed" in out
    code, out = _cli("fleet", *files, "--format", "json")
    doc = json.loads(out)
    assert doc["kind"].startswith("cudadoctor-fleet")


def test_the_refused_two_rank_nccl_job_on_one_gpu_is_a_failure_that_names_the_counts():
    job = _json("smoke-job-nccl-2.json")
    assert job["kind"] == "cudadoctor-smoke-job" and job["status"] == "fail"
    code, out = _cli("fleet", str(H100 / "smoke-job-nccl-2.json"))
    assert code == 1, out
    assert "gloo" in json.dumps(job).lower()

