"""Readers of pasted text (cudadoctor/readers/): nvidia-smi, deviceQuery, package lists, whole issues.

Every input is real text from a public thread (tests/fixtures/pasted/README.md names each source);
the few derived files change one value of a real file and say which.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, REPO
from cudadoctor.cli import cli
from cudadoctor.facts import FactsError
from cudadoctor.readers import devicequery, issue, nvidia_smi, packages

PASTED = FIXTURES / "pasted"
MIB = 1024 * 1024
CASES = next((p for p in (REPO.parent / "shared" / "cases", REPO.parent.parent / "shared" / "cases") if p.is_dir()), None)


def text(name: str) -> str:
    return (PASTED / name).read_text(encoding="utf-8")


def smi(name: str) -> dict:
    return nvidia_smi.parse(text(name))


def check(*args, input=None):
    r = CliRunner().invoke(cli, ["check", *args], input=input)
    return r


def findings(r) -> dict:
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    return {f["code"]: f for f in doc["findings"] if f["severity"] in ("error", "warning")}


# --- the banner across driver generations -----------------------------------------------------

def test_banner_367_short_bus_id_joined_header_lines():
    n = smi("nvidia-smi-367-titan-gpustat-16.txt")
    assert n["driver_version"] == "367.57" and "cuda_driver_version" not in n
    d0, d1 = n["devices"]
    assert (d0["name"], d0["name_truncated"], d0["pci_bus_id"]) == ("GeForce GTX TIT...", True, "0000:02:00.0")
    assert d1["memory"] == {"used_bytes": 11778 * MIB, "total_bytes": 12206 * MIB, "free_bytes": 428 * MIB}
    assert "ecc_errors" not in d0 and "ecc_mode" not in d0  # ECC column N/A: unknown, not zero
    assert d1["utilization"] == {"gpu": 76} and d1["performance_state"] == 2
    assert "device_count" not in n  # the paste stops inside the table: the count is not known


def test_banner_390_without_cuda_column_and_old_process_row():
    n = smi("nvidia-smi-390-k80-process.txt")
    assert n["driver_version"] == "390.30" and "cuda_driver_version" not in n
    (d,) = n["devices"]
    assert d["persistence_mode"] is True and d["compute_mode"] == "Default"
    assert d["processes"] == [{"pid": 3701, "used_memory_bytes": 10436 * MIB}]
    assert n["device_count"] == 1


def test_banner_410_two_row_block_and_no_processes():
    n = smi("nvidia-smi-410-k80-openmm-2386.txt")
    assert (n["driver_version"], n["cuda_driver_version"], n["cuda_driver_version_int"]) == ("410.104", "10.0", 10000)
    (d,) = n["devices"]
    assert d["processes"] == [] and "mig_mode" not in d
    assert d["ecc_errors"] == {"volatile": {"uncorrected": 0}}


def test_banner_450_cut_after_first_gpu():
    n = smi("nvidia-smi-450-v100s-k8s-243.txt")
    (d,) = n["devices"]
    assert d["name"] == "Tesla V100S-PCI..." and d["name_truncated"] is True
    assert "mig_mode" not in d  # MIG M. reads N/A
    assert "processes" not in d and "device_count" not in n


def test_banner_550_mig_enabled_ecc_on_util_na():
    n = smi("nvidia-smi-550-a100-mig-pytorch-107300.txt")
    assert [d["index"] for d in n["devices"]] == [0, 1]
    d = n["devices"][0]
    assert d["mig_mode"] == {"current": True} and d["ecc_mode"] == {"current": True}
    assert "ecc_errors" not in d and "utilization" not in d
    assert d["power"] == {"usage_mw": 174000, "enforced_limit_mw": 500000}


def test_banner_575_cuda_version_na_is_absent():
    n = smi("nvidia-smi-575-rtx5070-cuda-na-libc6-shim-14.txt")
    assert n["driver_version"] == "575.64.03"
    assert "cuda_driver_version" not in n and "cuda_driver_version_int" not in n


def test_banner_580_and_590_layouts():
    n = smi("nvidia-smi-580-rtx5090-4090-ogkm-5.txt")
    assert [d["name"] for d in n["devices"]] == ["NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 4090"]
    assert "ecc_mode" not in n["devices"][0] and n["devices"][1]["ecc_mode"] == {"current": False}
    n = smi("nvidia-smi-590-rtx6000d-ogkm-20.txt")
    assert n["cuda_driver_version"] == "13.1"
    assert n["devices"][0]["persistence_mode"] is True and n["devices"][0]["mig_mode"] == {"current": False}


def test_banner_eight_gpus_processes_table_and_trailing_warning():
    n = smi("nvidia-smi-460-v100x8-banner.txt")
    assert n["device_count"] == 8 and [d["index"] for d in n["devices"]] == list(range(8))
    assert all(d["processes"] == [] for d in n["devices"])


def test_mig_devices_table_alone_invents_no_gpu():
    assert nvidia_smi.parse(text("nvidia-smi-mig-devices-nvitop-8.txt")) == {}


@pytest.mark.parametrize("line,status", [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.", "driver-not-loaded"),
    ("Failed to initialize NVML: Driver/library version mismatch", "driver-library-mismatch"),
    ("Failed to initialize NVML: Unknown Error", "unknown-error"),
])
def test_failure_messages_become_nvml_status(line, status):
    n = nvidia_smi.parse(line)
    assert n["status"] == status and n["error"] == line and "devices" not in n


def test_no_devices_were_found():
    n = nvidia_smi.parse("No devices were found\n")
    assert n["devices"] == [] and n["device_count"] == 0


# --- nvidia-smi -q ------------------------------------------------------------------------------

def test_query_healthy_a100x8():
    n = smi("nvidia-smi-q-460-a100x8-healthy.txt")
    assert (n["driver_version"], n["cuda_driver_version"], n["device_count"]) == ("460.32.03", "11.2", 8)
    d = n["devices"][0]
    assert d["index"] == 0 and d["pci_bus_id"] == "00000001:00:00.0" and d["name"] == "A100-SXM4-40GB"
    assert d["pcie"] == {"gen_max": 4, "gen_current": 4, "width_max": 16, "width_current": 16}
    assert d["clock_event_reasons"]["mask"] == 0x1  # Idle only
    assert d["ecc_errors"] == {"volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 0, "uncorrected": 0}}
    assert d["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert "retired_pages" not in d  # N/A on A100
    assert d["memory"]["total_bytes"] == 40536 * MIB and d["temperature_slowdown_c"] == 89
    assert d["persistence_mode"] is False and d["compute_mode"] == "Default" and d["processes"] == []
    assert [x["minor_number"] for x in n["devices"]] == list(range(8))


def test_query_section_without_gpu_header():
    n = smi("nvidia-smi-q-remapped-rows-gpud-80.txt")
    (d,) = n["devices"]
    assert d["remapped_rows"] == {"correctable": 0, "uncorrectable": 4, "pending": True}
    assert d["index_assumed"] is True and "device_count" not in n


def test_query_and_banner_together_prefer_full_names():
    n = nvidia_smi.parse(text("nvidia-smi-460-v100x8-banner.txt") + "\n" + text("nvidia-smi-q-460-a100x8-healthy.txt"))
    assert n["source"] == "nvidia-smi banner+-q"
    assert n["devices"][0]["name"] == "A100-SXM4-40GB"  # the same bus ids: -q's name wins


# --- the checks fire from a paste ---------------------------------------------------------------

@pytest.mark.parametrize("name,code,severity", [
    ("nvidia-smi-q-460-a100x8-ecc-gpu0.txt", "gpu-ecc-errors", "error"),
    ("nvidia-smi-q-remapped-rows-gpud-80.txt", "gpu-memory-remap", "warning"),
    ("nvidia-smi-q-460-a100x8-pcie-x8-gpu0.txt", "pcie-link-degraded", "warning"),
    ("nvidia-smi-q-460-a100x8-hw-thermal-gpu0.txt", "gpu-throttled", "warning"),
    ("nvidia-smi-390-k80-e-process.txt", "gpu-compute-mode-restricted", "error"),
    ("deviceQuery-fail-35-tensorflow-990.txt", "driver-too-old", "error"),
])
def test_health_code_from_paste(name, code, severity):
    r = check("--from-text", str(PASTED / name), "--format", "json")
    got = findings(r)
    assert code in got, r.stdout
    assert got[code]["severity"] == severity


def test_ecc_finding_names_gpu_and_count():
    got = findings(check("--from-text", str(PASTED / "nvidia-smi-q-460-a100x8-ecc-gpu0.txt"), "--format", "json"))
    assert got["gpu-ecc-errors"]["title"].startswith("GPU 0 (A100-SXM4-40GB) has had 2 uncorrectable ECC errors")


@pytest.mark.parametrize("name", ["nvidia-smi-q-460-a100x8-healthy.txt", "nvidia-smi-460-v100x8-banner.txt",
                                  "nvidia-smi-590-rtx6000d-ogkm-20.txt", "nvidia-smi-410-k80-openmm-2386.txt"])
def test_healthy_pastes_have_no_error_finding(name):
    r = check("--from-text", str(PASTED / name), "--format", "json")
    assert r.exit_code == 0, r.stdout
    assert not [c for c, f in findings(r).items() if f["severity"] == "error"]


def test_lost_gpu_handle_line():
    line = "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"
    n = nvidia_smi.parse(line)
    assert n["devices"] == [{"pci_bus_id": "0000:3B:00.0", "error": {"code": 999, "message": "Unknown Error",
                                                                      "call": "nvmlDeviceGetHandleByIndex"}}]
    assert "gpu-lost" in findings(check("--from-text", "-", "--format", "json", input=line + "\n"))


# --- deviceQuery --------------------------------------------------------------------------------

def test_devicequery_pass():
    got = devicequery.parse(text("deviceQuery-gtx770-remode-9.txt"))
    assert got["nvml"]["devices"] == [{"index": 0, "name": "GeForce GTX 770", "compute_capability": "3.0",
                                       "memory": {"total_bytes": 2146762752}}]
    assert got["nvml"]["cuda_driver_version"] == "7.0" and got["devicequery"]["runtime_version"] == "6.5"
    assert got["nvml"]["device_count"] == 1


def test_devicequery_fail_35():
    got = devicequery.parse(text("deviceQuery-fail-35-tensorflow-990.txt"))
    assert got["nvml"] == {}
    assert got["devicequery"] == {"failed_call": "cudaGetDeviceCount", "error_code": 35, "result": "FAIL",
                                  "error": "CUDA driver version is insufficient for CUDA runtime version"}


# --- package lists ------------------------------------------------------------------------------

def _lines(name):
    return text(name).split("\n")


def test_pip_list():
    dists = packages.read_pip_list(_lines("pip-list-pytorch-143288.txt"))
    assert len(dists) == 38
    assert {"name": "nvidia-cudnn-cu12", "version": "9.1.0.70", "installer": "pip", "listed_by": "pip"} in dists


def test_pip_freeze_urls_and_pins():
    dists = {d["name"]: d for d in packages.read_pip_freeze(_lines("pip-freeze-isu-ml-gpu.txt"))}
    assert dists["torch"] == {"name": "torch", "url": "file:///build/pytorch", "installer": "pip", "listed_by": "pip"}
    assert dists["torchvision"]["version"] == "0.12.0a0+9b5a3fe"
    assert dists["torch-scatter"]["url"].startswith("git+https://github.com/rusty1s/pytorch_scatter@")
    assert packages.read_pip_freeze(["-e git+https://github.com/org/proj.git@abc#egg=proj"]) == [
        {"name": "proj", "editable": True, "installer": "pip", "listed_by": "pip"}]


def test_conda_list_with_and_without_header():
    dists = packages.read_conda_list(_lines("conda-list-conda-13413.txt"))
    assert {"name": "cuda-cudart", "version": "12.1.105", "installer": "conda", "listed_by": "conda", "build": "0",
            "channel": "nvidia"} in dists
    grep = {d["name"]: d for d in packages.read_conda_list(_lines("conda-list-grep-pytorch-data-315.txt"))}
    assert grep["torch"]["package"] == "pytorch" and grep["torch"]["build"] == "py3.8_cpu_0"


def test_conda_cpu_build_in_an_issue_is_read_as_packages():
    got = issue.read(text("conda-list-grep-pytorch-data-315.txt"))
    assert [p["kind"] for p in got["parts"] if p["used"]] == ["conda-list"]
    names = {d["name"] for d in got["facts"]["packages"]["distributions"]}
    assert {"torch", "torchvision", "pytorch-mutex"} <= names


# --- whole issues -------------------------------------------------------------------------------

def test_issue_body_collect_env_banner_traceback():
    got = issue.read(text("issue-composed-rtx5090-sm120.md"))
    kinds = {p["kind"]: p["lines"] for p in got["parts"] if p["used"]}
    assert kinds == {"traceback": [10, 15], "nvidia-smi": [20, 34], "collect_env": [41, 67]}
    facts = got["facts"]
    assert facts["origin"] == "collect_env" and facts["torch"]["version"] == "2.6.0+cu126"
    assert facts["nvml"]["driver_version"] == "580.82.09"  # nvidia-smi's, and the disagreement is kept
    assert facts["nvml"]["conflict"] == {"collect_env_driver_version": "570.124.04"}
    assert "no kernel image is available" in got["error_text"] and "sm_120 is not compatible" in got["error_text"]
    r = check("--from-text", str(PASTED / "issue-composed-rtx5090-sm120.md"), "--format", "json")
    assert r.exit_code == 1 and findings(r)["gpu-arch-unsupported"]["severity"] == "error"
    assert "read traceback (lines 10-15), nvidia-smi (lines 20-34), collect_env (lines 41-67)" in r.stderr


@pytest.mark.parametrize("name", ["issue-pytorch-45028-a100-sm80.md", "issue-pytorch-150733-rtx5090d.md"])
def test_real_issue_bodies_give_the_right_code(name):
    r = check("--from-text", str(PASTED / name), "--format", "json")
    assert findings(r)["gpu-arch-unsupported"]["severity"] == "error", r.stdout


def test_issue_parts_and_ignored_ranges():
    got = issue.read(text("issue-pytorch-45028-a100-sm80.md"))
    assert [(p["kind"], p["lines"], p["used"]) for p in got["parts"]] == [
        ("ignored", [1, 1], False), ("error", [4, 6], True), ("ignored", [9, 9], False), ("nvidia-smi", [11, 20], True)]
    assert got["facts"]["origin"] == "text"
    assert got["facts"]["nvml"]["devices"][0]["name"] == "A100-SXM4-40GB"


def test_text_report_names_the_parts():
    r = check("--from-text", str(PASTED / "issue-pytorch-45028-a100-sm80.md"))
    assert "cudadoctor: read error (lines 4-6), nvidia-smi (lines 11-20); ignored lines 1, 9" in r.stderr


@pytest.mark.parametrize("garbage,why", [
    ("\x00\x01\x02" * 50, "binary data"),
    ("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" * 20, "binary data"),
    ("   \n", "empty"),
    ("\x00\x00 \n\x00", "empty"),
])
def test_only_empty_or_binary_text_is_bad_input(garbage, why):
    r = check("--from-text", "-", input=garbage)
    assert r.exit_code == 2
    err = r.stderr.strip()
    assert err.startswith("cudadoctor: error: stdin: pasted text: " + why), err
    assert "\n" not in err and "Traceback" not in r.output


def test_oversized_text_is_bad_input():
    with pytest.raises(FactsError, match="larger than 2 MiB"):
        issue.read("x" * (issue.MAX_TEXT_CHARS + 1))


def test_prose_without_any_known_output_is_read_not_refused():
    """Nothing in it is a known output and no line reads like an error: read, never refused; the
    whole text is the error text, and the report says that the text shows no cause."""
    got = issue.read("hello world\nthis is not a report\n")
    assert [(p["kind"], p["used"]) for p in got["parts"]] == [("text", True)]
    r = check("--from-text", "-", input="hello world\nthis is not a report\n")
    assert r.exit_code == 0, r.output


def test_from_text_excludes_other_sources(tmp_path):
    r = check("--from-text", str(PASTED / "issue-pytorch-45028-a100-sm80.md"), "--from-collect-env", "x.txt")
    assert r.exit_code == 2 and "--from-text" in r.stderr


def test_reader_rejects_non_text():
    with pytest.raises(FactsError):
        issue.read(12)


# --- the shared real cases through --from-text --------------------------------------------------

def _cases():
    return sorted(p for p in CASES.glob("*.txt") if not p.name.endswith(".error.txt")) if CASES else []


@pytest.mark.skipif(CASES is None, reason="shared cases not found")
@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.stem)
def test_shared_case_as_one_pasted_issue(path, tmp_path):
    """collect_env and the error pasted together as one issue body give the case's label, as
    --from-collect-env with --error-file does; healthy cases get no error finding."""
    case = json.loads(path.with_suffix(".json").read_text())
    err = path.with_name(path.stem + ".error.txt")
    body = "### Describe the bug\n\n"
    if err.exists():
        body += "```\n" + err.read_text() + "\n```\n\n"
    body += "### Versions\n\n```\n" + path.read_text() + "\n```\n"
    r = check("--from-text", "-", "--format", "json", input=body)
    got = findings(r)
    if case["label"] == "healthy":
        assert not [c for c, f in got.items() if f["severity"] == "error"], got
    else:
        assert case["label"] in got, (case["label"], sorted(got))


def test_triage_reads_the_same_issue_and_agrees_with_check():
    path = str(PASTED / "issue-composed-rtx5090-sm120.md")
    r = CliRunner().invoke(cli, ["triage", "-f", path, "--format", "json"])
    assert r.exit_code == 0, r.output
    top = json.loads(r.stdout)["candidates"][0]["code"]
    assert top == "gpu-arch-unsupported"
    assert top in findings(check("--from-text", path, "--format", "json"))


def test_handle_errors_with_gpu_index_and_no_devices():
    n = smi("nvidia-smi-wsl-tcc-handle-errors-wsl-13027.txt")
    assert [(d["index"], d["pci_bus_id"], d["error"]["code"]) for d in n["devices"]] == [
        (0, "0000:C1:00.0", 999), (1, "0000:E1:00.0", 999)]
    assert n["device_count"] == 2


# --- any paste is read: the error corpus through the pasted-text reader -------------------------

def _corpus():
    for f in sorted((Path(__file__).parent / "data" / "error_corpus").glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                yield f"{f.stem}:{n}", json.loads(line)


@pytest.mark.parametrize("text,kind", [
    ("nvcc fatal   : Unsupported gpu architecture 'compute_75'", "error"),  # nvcc's own spacing
    ("[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.", "error"),
    ("\tKernel driver in use: nouveau\n\tKernel modules: nouveau, nvidia_drm, nvidia", "error"),
    ("E0000 00:00:1711234567.123456 12345 cuda_dlopen.cc:42] Could not load library", "error"),
    ("2024-03-03T19:18:33.4939555Z nvcc fatal   : Unsupported gpu architecture 'compute_35'", "error"),
    ("Cuda Runtime (CUDA driver is a stub library)", "error"),
    ("torch-1.0.0-cp37-cp37m-linux_x86_64.whl is not a supported wheel on this platform.", "error"),
])
def test_error_lines_in_any_format(text, kind):
    got = issue.read(text)
    assert [p["kind"] for p in got["parts"]] == [kind]
    for line in text.split("\n"):  # every line is kept (the cleaner may drop a log prefix)
        assert line.strip()[-25:] in got["error_text"], (line, got["error_text"])


def test_the_reader_loses_nothing_of_the_error_corpus():
    """Every real error text of the corpus is read (none refused), and pasted alone it reaches its code
    whenever the same text given as --error-file does: the reader keeps every error line."""
    from cudadoctor import registry
    from cudadoctor.facts import new_facts
    from cudadoctor.report import diagnose

    reg = registry.load()
    lost = []
    n = 0
    for where, d in _corpus():
        got = issue.read(d["text"])
        assert got["error_text"].strip() or any(p["used"] and p["kind"] != "ignored" for p in got["parts"]), where
        plain = new_facts("text")
        plain["user_error"] = {"text": d["text"]}
        if d["code"] not in {f.code for f in diagnose(plain, reg).findings if f.severity != "info"}:
            continue
        n += 1
        if d["code"] not in {f.code for f in diagnose(got["facts"], reg).findings if f.severity != "info"}:
            lost.append((where, d["code"]))
    assert n > 200 and not lost, lost


def test_long_logs_read_in_bounded_time():
    """A 12 000-line log (no known output) is read in a few seconds on a shared CI machine, not minutes."""
    import time

    text = "\n".join(
        f"[{i}.0] worker {i}: loading model on GPU 0 RTX 3090 torch 1.8.{i % 10} driver 470.{i % 99} step {i} loss 0.{i}"
        for i in range(12000)
    )
    t = time.perf_counter()
    got = issue.read(text)
    assert time.perf_counter() - t < 15
    assert [p["kind"] for p in got["parts"]] == ["text"]  # no line of it reads like an error: read as a whole
    # a kernel log: its NVRM line is the error text, the harmless lines around it are not
    log = "\n".join(f"[ {i}.000000] usb 1-{i}: new high-speed USB device number {i}" for i in range(3000))
    nvrm = "[ 3000.1] NVRM: API mismatch: the client has the version 535.54.03, but\n"
    for text in (log + "\n" + nvrm, nvrm + log + "\n"):
        got = issue.read(text)
        assert "NVRM: API mismatch" in got["error_text"] and len(got["error_text"]) < 1000, len(got["error_text"])


def test_a_region_that_is_not_a_report_keeps_its_error_line():
    """nvbandwidth's header ("CUDA Runtime Version: 12080") looks like a collect_env field, but the region is no
    report: its lines are read as any others, and the CUDA error inside it is error text
    (https://github.com/NVIDIA/nvbandwidth/issues/40)."""
    text = (
        "```\n$ ./nvbandwidth\nnvbandwidth Version: v0.8\nBuilt from Git version: v0.8\n\nCUDA Runtime Version: 12080\n"
        "CUDA Driver Version: 12080\nDriver Version: 570.133.20\n\ntyrell\n"
        "Device 0: NVIDIA RTX 2000 Ada Generation Laptop GPU (00000000:01:00)\n\nRunning host_to_device_memcpy_ce.\n"
        "[cudaErrorUnsupportedPtxVersion] the provided PTX was compiled with an unsupported toolchain. in expression "
        "cudaGetLastError() in CUresult memsetKernel(CUstream, CUdeviceptr, CUdeviceptr, long long unsigned int, unsigned "
        "int)() : /home/mjm/src/nvbandwidth/kernels.cu:406\n```\n"
    )
    got = issue.read(text)
    assert "collect_env" not in [p["kind"] for p in got["parts"]]
    assert "[cudaErrorUnsupportedPtxVersion] the provided PTX" in got["error_text"]
    assert got["facts"]["nvml"]["driver_version"] == "570.133.20"  # stated beside its label, read as prose
