"""The real NVML child probe, run over recorded devices through the fake pynvml (tests/fixtures/nvml).

Every NVML error the bindings raise, at every place the child meets it, becomes a fact with the
bindings' own message; a call that blocks is killed by the parent's time limit.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from cudadoctor.probes import proc

NVML = FIXTURES / "nvml"
CHILD = proc.child_script("nvml_probe.py")


def recording(name: str) -> dict:
    return json.loads((NVML / name).read_text())


def run_child(rec: dict, tmp_path: Path, timeout: float = 30) -> tuple:
    path = tmp_path / "recording.json"
    path.write_text(json.dumps(rec))
    import sys

    r = proc.run([sys.executable, CHILD], timeout=timeout, result_file=True,
                 env=proc.child_env({"PYTHONPATH": str(NVML), "CUDADOCTOR_FAKE_NVML": str(path)}))
    return r, r.data or {}


def test_h100_capability_and_health_fields(tmp_path):
    r, data = run_child(recording("h100-sxm5-80gb.json"), tmp_path)
    assert r.status == "ok" and data["status"] == "ok", (r.stderr_tail, data)
    assert data["driver_version"] == "580.159.04" and data["cuda_driver_version"] == "13.0"
    (d,) = data["devices"]
    assert d["name"] == "NVIDIA H100 80GB HBM3" and d["compute_capability"] == "9.0"
    assert d["num_cores"] == 16896 and d["memory_bus_width"] == 5120
    assert d["max_clocks"] == {"graphics": 1980, "sm": 1980, "memory": 2619}
    assert d["ecc_mode"] == {"current": True, "pending": True}
    assert d["ecc_errors"] == {"volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 0, "uncorrected": 0}}
    assert d["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert d["pcie"] == {"gen_current": 5, "gen_max": 5, "gen_gpu_max": 5, "width_current": 16, "width_max": 16}
    assert d["clock_event_reasons"] == {"mask": 1, "api": "nvmlDeviceGetCurrentClocksEventReasons"}
    assert d["power"]["enforced_limit_mw"] == 700000 and d["temperature_c"] == 28
    assert [lk["link"] for lk in d["nvlinks"]] == list(range(18)) and all(lk["active"] and lk["version"] == 4 for lk in d["nvlinks"])
    # Hopper has no page retirement (it remaps rows): unknown, with NVML's reason, never "no pages".
    assert d["retired_pages"] == {"pending": None} and d["errors"]["retired_pages.pending"] == {"code": 3, "message": "Not Supported"}
    assert data["elapsed_s"] < 1.0


def test_eight_gpus_p2p_and_speed(tmp_path):
    r, data = run_child(recording("hgx-8x-h100.json"), tmp_path)
    assert data["status"] == "ok" and data["device_count"] == 8
    assert [d["pci_bus_id"][9:11] for d in data["devices"]] == ["0A", "18", "23", "2C", "87", "90", "B9", "C2"]
    assert data["p2p"]["read"][0] == [None] + ["ok"] * 7 and data["p2p"]["nvlink"][7][0] == "ok"
    # Keep the child fast: it runs on every `check`. Measured 0.04 s for 8 GPUs on this machine.
    assert data["elapsed_s"] < 1.0, data["elapsed_s"]


def test_consumer_gpu_unsupported_fields_are_unknown_not_zero(tmp_path):
    _, data = run_child(recording("rtx4090.json"), tmp_path)
    (d,) = data["devices"]
    assert d["ecc_mode"] is None and d["errors"]["ecc_mode"]["code"] == 3
    assert "ecc_errors" not in d  # not asked when ECC is off or unknown
    assert d["nvlinks"] is None and d["errors"]["nvlinks"]["code"] == 3
    assert d["mig_mode"] is None and "mig_devices" not in d
    assert d["pcie"]["gen_current"] == 1 and d["utilization"] == {"gpu": 0, "memory": 0}
    assert d["serial"] is None and d["errors"]["serial"]["code"] == 3


def test_laptop_gpu(tmp_path):
    _, data = run_child(recording("rtx3050ti-laptop.json"), tmp_path)
    (d,) = data["devices"]
    assert d["name"] == "NVIDIA GeForce RTX 3050 Ti Laptop GPU" and d["compute_capability"] == "8.6"
    assert d["pcie"]["width_max"] == 8 and d["power"]["limit_mw"] is None and d["power"]["enforced_limit_mw"] == 60000


def test_mig_partitioned_a100(tmp_path):
    _, data = run_child(recording("a100-80gb-mig.json"), tmp_path)
    (d,) = data["devices"]
    assert d["mig_mode"] == {"current": True, "pending": True}
    assert [m["attributes"]["multiprocessor_count"] for m in d["mig_devices"]] == [42, 28, 14, 14]
    assert all(m["uuid"].startswith("MIG-") for m in d["mig_devices"])
    assert d["utilization"] is None  # N/A under MIG
    _, data = run_child(recording("a100-80gb-mig-empty.json"), tmp_path)
    assert data["devices"][0]["mig_devices"] == []


def test_old_driver_falls_back_to_throttle_reasons(tmp_path):
    rec = recording("h100-sxm5-80gb.json")
    rec["devices"][0]["nvmlDeviceGetCurrentClocksEventReasons"] = {"error": 13}  # FUNCTION_NOT_FOUND
    rec["devices"][0]["nvmlDeviceGetCurrentClocksThrottleReasons"] = 0x40
    _, data = run_child(rec, tmp_path)
    assert data["devices"][0]["clock_event_reasons"] == {"mask": 0x40, "api": "nvmlDeviceGetCurrentClocksThrottleReasons"}


# NVML return codes at initialisation -> status word and the bindings' own message.
INIT_ERRORS = [
    (1, "uninitialized", "Uninitialized"),
    (4, "no-permission", "Insufficient Permissions"),
    (9, "driver-not-loaded", "Driver Not Loaded"),
    (10, "timeout", "Timeout"),
    (12, "library-missing", "NVML Shared Library Not Found"),
    (15, "gpu-lost", "GPU is lost"),
    (18, "driver-library-mismatch", "RM has detected an NVML/RM version mismatch."),
    (999, "unknown-error", "Unknown Error"),
]


@pytest.mark.parametrize("code,status,message", INIT_ERRORS)
def test_init_errors(tmp_path, code, status, message):
    rec = {"system": {"nvmlInit": {"error": code}}, "devices": []}
    r, data = run_child(rec, tmp_path)
    assert r.status == "ok", r.stderr_tail
    assert (data["status"], data["error"], data["error_code"]) == (status, message, code)


def test_bindings_missing(tmp_path):
    _, data = run_child({"import_error": "No module named 'pynvml'"}, tmp_path)
    assert data["status"] == "bindings-missing" and "No module named 'pynvml'" in data["error"]


def test_device_count_fails(tmp_path):
    _, data = run_child({"system": {"nvmlDeviceGetCount": {"error": 15}}, "devices": []}, tmp_path)
    assert data["status"] == "gpu-lost" and "GPU is lost" in data["error"]


@pytest.mark.parametrize("code,message", [(15, "GPU is lost"), (999, "Unknown Error"), (4, "Insufficient Permissions")])
def test_one_gpu_without_a_handle_does_not_hide_the_others(tmp_path, code, message):
    rec = recording("hgx-8x-h100.json")
    rec["devices"] = rec["devices"][:2]
    rec["devices"][1]["handle"] = {"error": code}
    rec.pop("p2p")
    _, data = run_child(rec, tmp_path)
    assert data["status"] == "ok"
    assert data["devices"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert data["devices"][1] == {"index": 1, "error": {"code": code, "message": message}}
    assert "p2p" not in data  # needs two reachable GPUs


def test_field_errors_are_recorded_per_field(tmp_path):
    rec = recording("h100-sxm5-80gb.json")
    d = rec["devices"][0]
    d["nvmlDeviceGetComputeRunningProcesses"] = {"error": 4}  # no permission to list processes
    d["nvmlDeviceGetTemperature"] = {"error": 15}  # the GPU fell off the bus mid-way
    d["nvmlDeviceGetMemoryInfo"] = {"exception": "NVMLLibraryMismatchError",
                                    "message": "Unversioned function called and the pyNVML version does not match the NVML lib version."}
    _, data = run_child(rec, tmp_path)
    dev = data["devices"][0]
    assert dev["processes"] is None and dev["errors"]["processes"] == {"code": 4, "message": "Insufficient Permissions"}
    assert dev["errors"]["temperature_c"] == {"code": 15, "message": "GPU is lost"}
    assert dev["memory"] is None and dev["errors"]["memory"]["message"].startswith("NVMLLibraryMismatchError: Unversioned function")
    assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["pcie"]["width_max"] == 16  # the rest still answered


def _blocking(tmp_path: Path, where: str) -> Path:
    rec = recording("h100-sxm5-80gb.json")
    if where == "init":
        rec["system"]["nvmlInit"] = {"block": 3600}
    else:
        rec["devices"][0][where] = {"block": 3600}
    p = tmp_path / "blocking.json"
    p.write_text(json.dumps(rec))
    return p


def test_a_blocking_call_times_out_the_child_not_the_tool(tmp_path):
    p = _blocking(tmp_path, "nvmlDeviceGetRemappedRows")
    start = time.monotonic()
    r = run_cli("devices", "--timeout", "2", "--format", "json",
                env={"PYTHONPATH": str(NVML), "CUDADOCTOR_FAKE_NVML": str(p)}, timeout=60)
    took = time.monotonic() - start
    assert took < 15, took
    assert r.returncode == 1, r.stderr
    model = json.loads(r.stdout)
    assert model["nvml_incomplete"] == "device:0:remapped_rows"
    (d,) = model["devices"]
    assert d["result"] == "FAIL" and "blocked in remapped_rows" in d["result_why"][0]
    assert d["name"] == "NVIDIA H100 80GB HBM3"  # what NVML said before it blocked is kept
    assert d["pcie_width_max"] is None and "NVML stopped answering" in d["unknown"]["pcie_width_max"]


def test_blocking_init(tmp_path):
    p = _blocking(tmp_path, "init")
    r = run_cli("devices", "--timeout", "1", env={"PYTHONPATH": str(NVML), "CUDADOCTOR_FAKE_NVML": str(p)}, timeout=60)
    assert r.returncode == 1
    assert "the NVIDIA driver did not answer in time (NVML blocked during init)" in r.stdout


@pytest.mark.parametrize("name", ["healthy", "ecc", "throttled", "pcie-x8"])
def test_facts_files_are_what_the_child_says_about_their_recordings(tmp_path, name):
    """The nvml sections of tests/fixtures/facts/hgx-8x-h100-*.json are this child's output, not hand edits."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_recordings", NVML / "make_recordings.py")
    mk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mk)
    variant = {"healthy": lambda r: r, "ecc": mk.sick_ecc, "throttled": mk.sick_throttled, "pcie-x8": mk.sick_pcie}[name]
    assert variant(copy.deepcopy(recording("hgx-8x-h100.json")))["devices"] != [] and \
        recording("hgx-8x-h100.json") == json.loads(json.dumps(mk.RECORDINGS["hgx-8x-h100.json"]))
    _, data = run_child(variant(copy.deepcopy(mk.RECORDINGS["hgx-8x-h100.json"])), tmp_path)
    data.pop("probe", None)
    data.pop("elapsed_s", None)
    data["bindings_version"] = None
    facts = json.loads((FIXTURES / "facts" / f"hgx-8x-h100-{name}.json").read_text())
    assert facts["nvml"] == json.loads(json.dumps(data))
