"""The GPU health checks (checks/health.py, checks/gpu_state.py) on recorded facts: right code on the sick GPU, none on healthy ones."""

from __future__ import annotations

import copy

import pytest

from conftest import load_fixture
from cudadoctor import registry
from cudadoctor.checks import gpu_state, health
from cudadoctor.errortext import code_matches
from cudadoctor.facts import Facts, new_facts
from cudadoctor.report import diagnose

HEALTH_CHECKS = health.register() + gpu_state.register()  # hardware faults + how the GPUs are set and used
HEALTH_CODES = {c.code for chk in HEALTH_CHECKS for c in chk.codes}


def run_health(facts: dict):
    fx = Facts(facts)
    return [f for chk in HEALTH_CHECKS for f in chk(fx)]


def codes(findings):
    return sorted((f.code, f.severity, f.evidence.get("gpu")) for f in findings)


@pytest.fixture
def healthy():
    return load_fixture("hgx-8x-h100-healthy.json")


def dev(facts: dict, i: int) -> dict:
    return facts["nvml"]["devices"][i]


def test_healthy_node_gets_no_health_finding_and_no_finding_at_all(healthy):
    assert run_health(healthy) == []
    report = diagnose(healthy, registry.load(plugins=False))
    assert report.findings == [], [f.code for f in report.findings]
    assert report.verdict()["state"] == "yes"


@pytest.mark.parametrize("name,expect", [
    ("hgx-8x-h100-ecc.json", [("gpu-ecc-errors", "error", 3), ("gpu-memory-remap", "warning", 3)]),
    ("hgx-8x-h100-throttled.json", [("gpu-throttled", "warning", 5)]),
    ("hgx-8x-h100-pcie-x8.json", [("pcie-link-degraded", "warning", 6)]),
])
def test_sick_recorded_nodes(name, expect):
    facts = load_fixture(name)
    assert codes(run_health(facts)) == expect
    # and nothing else in the whole catalogue fires on them
    report = diagnose(facts, registry.load(plugins=False))
    assert sorted((f.code, f.severity, f.evidence.get("gpu")) for f in report.findings) == expect


def test_every_finding_names_its_gpu(healthy):
    f = copy.deepcopy(healthy)
    dev(f, 1)["ecc_errors"]["volatile"]["uncorrected"] = 1
    dev(f, 2)["clock_event_reasons"]["mask"] = 0x80
    dev(f, 4)["compute_mode"] = "Prohibited"
    for finding in run_health(f):
        assert finding.evidence["gpu"] in (1, 2, 4) and finding.evidence["name"] == "NVIDIA H100 80GB HBM3"
        assert finding.fix.commands and finding.fix.why


def test_ecc_aggregate_only_and_corrected_thresholds(healthy):
    f = copy.deepcopy(healthy)
    dev(f, 0)["ecc_errors"]["aggregate"]["uncorrected"] = 3
    dev(f, 1)["ecc_errors"]["volatile"]["corrected"] = health.CORRECTED_VOLATILE_WARN
    dev(f, 2)["ecc_errors"]["volatile"]["corrected"] = health.CORRECTED_VOLATILE_WARN - 1
    dev(f, 3)["ecc_errors"]["aggregate"]["corrected"] = health.CORRECTED_AGGREGATE_WARN
    got = run_health(f)
    assert codes(got) == [("gpu-ecc-errors", "warning", 0), ("gpu-ecc-errors", "warning", 1), ("gpu-ecc-errors", "warning", 3)]
    assert "3 uncorrectable ECC errors over its life" in got[0].title


def test_unknown_ecc_counts_are_not_judged(healthy):
    f = copy.deepcopy(healthy)
    for d in f["nvml"]["devices"]:
        d.pop("ecc_errors")
        d["remapped_rows"] = None
    assert run_health(f) == []


def test_remap_failure_is_an_error_and_pending_pages_a_warning(healthy):
    f = copy.deepcopy(healthy)
    dev(f, 0)["remapped_rows"]["failure"] = True
    dev(f, 1)["retired_pages"] = {"pending": True, "single_bit": 2, "double_bit": 1}
    got = run_health(f)
    assert codes(got) == [("gpu-memory-remap", "error", 0), ("gpu-memory-remap", "warning", 1)]
    assert "RMA" in " ".join(got[0].fix.commands)


@pytest.mark.parametrize("mask,util,expect", [
    (0x1, 0, []),                                    # Idle
    (0x2, 100, []),                                  # Applications Clocks Setting: the owner's choice
    (0x4, 100, []),                                  # SW Power Cap under full load: normal
    (0x100 | 0x10, 50, []),                          # Display clock, Sync Boost
    (0x8, 100, [("gpu-throttled", "info", 0)]),      # HW Slowdown alone: one sample is weak evidence
    (0x40, 100, [("gpu-throttled", "warning", 0)]),  # HW Thermal Slowdown
    (0x80, 100, [("gpu-throttled", "warning", 0)]),  # HW Power Brake Slowdown
    (0x20 | 0x4, 100, [("gpu-throttled", "warning", 0)]),  # SW Thermal Slowdown
])
def test_throttle_reasons(healthy, mask, util, expect):
    f = copy.deepcopy(healthy)
    dev(f, 0)["clock_event_reasons"]["mask"] = mask
    dev(f, 0)["utilization"]["gpu"] = util
    assert codes(run_health(f)) == expect


@pytest.mark.parametrize("gen,width,util,expect", [
    (1, 16, 0, []),                                         # idle GPU lowering its generation: normal
    (1, 16, None, []),                                      # utilisation unknown: not judged
    (3, 16, 95, [("pcie-link-degraded", "warning", 2)]),    # busy and below its maximum generation
    (5, 8, 0, [("pcie-link-degraded", "warning", 2)]),      # width does not drop at idle
])
def test_pcie_generation_needs_load_width_does_not(healthy, gen, width, util, expect):
    f = copy.deepcopy(healthy)
    dev(f, 2)["pcie"].update(gen_current=gen, width_current=width)
    dev(f, 2)["utilization"] = {"gpu": util, "memory": 0} if util is not None else None
    assert codes(run_health(f)) == expect


def test_compute_modes(healthy):
    f = copy.deepcopy(healthy)
    dev(f, 0)["compute_mode"] = "Prohibited"
    dev(f, 1)["compute_mode"] = "Exclusive_Process"
    dev(f, 1)["processes"] = [{"pid": 8812, "used_memory_bytes": 3 * 2**30}]
    dev(f, 2)["compute_mode"] = "Exclusive_Process"
    got = run_health(f)
    assert codes(got) == [("gpu-compute-mode-restricted", "error", 0), ("gpu-compute-mode-restricted", "error", 1),
                          ("gpu-compute-mode-restricted", "warning", 2)]
    assert "pid 8812 (3.0 GiB)" in got[1].title


def test_memory_occupied_by_others_but_not_by_our_own_probe(healthy):
    f = copy.deepcopy(healthy)
    total = dev(f, 0)["memory"]["total_bytes"]
    for i, pid in ((0, 5150), (1, f["torch"]["pid"])):
        dev(f, i)["memory"].update(used_bytes=int(total * 0.9), free_bytes=int(total * 0.1))
        dev(f, i)["processes"] = [{"pid": pid, "used_memory_bytes": int(total * 0.9)}]
    got = run_health(f)
    assert codes(got) == [("gpu-memory-occupied", "warning", 0)]
    assert "71.7 of 79.6 GiB are in use by other processes (pid 5150: 71.7 GiB)" in got[0].title


def test_memory_occupied_by_processes_we_cannot_see(healthy):
    f = copy.deepcopy(healthy)
    total = dev(f, 3)["memory"]["total_bytes"]
    dev(f, 3)["memory"].update(used_bytes=total - 2**30, free_bytes=2**30)
    (got,) = run_health(f)
    assert got.code == "gpu-memory-occupied" and "cannot see" in got.title


def test_persistence_mode(healthy):
    f = copy.deepcopy(healthy)
    for d in f["nvml"]["devices"]:
        d["persistence_mode"] = False  # as the nvidia-smi banner in NVIDIA/nccl#1264 shows
    (got,) = run_health(f)
    assert (got.code, got.severity) == ("persistence-mode-off", "info") and "8 of 8 GPUs" in got.title
    f["nvml"]["devices"] = f["nvml"]["devices"][:1]
    assert run_health(f) == []  # one GPU: not worth a line
    f = copy.deepcopy(healthy)
    dev(f, 0)["persistence_mode"] = False
    f["system"]["wsl"] = True
    assert run_health(f) == []


def test_mig_without_instances():
    from test_devices_nvml import recording, run_child  # the real child over the A100 recordings

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        _, empty = run_child(recording("a100-80gb-mig-empty.json"), Path(tmp))
        _, full = run_child(recording("a100-80gb-mig.json"), Path(tmp))
    got = run_health({"nvml": empty})
    assert codes(got) == [("mig-no-instances", "error", 0)]
    assert "nvidia-smi mig -cgi" in " ".join(got[0].fix.commands)
    assert run_health({"nvml": full}) == []


def test_gpu_lost_everywhere_nvml_can_say_it(healthy):
    assert codes(run_health({"nvml": {"status": "gpu-lost", "error": "GPU is lost", "error_code": 15}})) == [("gpu-lost", "error", None)]
    f = copy.deepcopy(healthy)
    f["nvml"]["devices"][1] = {"index": 1, "error": {"code": 15, "message": "GPU is lost"}}
    f["nvml"]["devices"][2] = {"index": 2, "error": {"code": 999, "message": "Unknown Error"}}
    dev(f, 3)["errors"]["temperature_c"] = {"code": 15, "message": "GPU is lost"}
    got = run_health(f)
    assert codes(got) == [("gpu-lost", "error", 1), ("gpu-lost", "error", 2), ("gpu-lost", "error", 3)]
    assert "Unknown Error" in got[1].title and "nvidia-smi -r -i 2" in " ".join(got[1].fix.commands)


def test_a_gpu_without_permission_for_its_handle_is_not_lost(healthy):
    f = copy.deepcopy(healthy)
    f["nvml"]["devices"][1] = {"index": 1, "error": {"code": 4, "message": "Insufficient Permissions"}}
    assert run_health(f) == []


@pytest.mark.parametrize("text,code", [
    # torch's RuntimeError text for cudaErrorECCUncorrectable
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "gpu-ecc-errors"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "gpu-compute-mode-restricted"),
    ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error", "gpu-lost"),
    ("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", "gpu-lost"),
])
def test_signatures_match_real_error_texts(text, code):
    (c,) = [c for chk in HEALTH_CHECKS for c in chk.codes if c.code == code]
    assert code_matches(c, text)


def test_codes_are_registered_with_docs():
    reg = registry.load(plugins=False)
    for code in HEALTH_CODES:
        c, _ = reg.codes[code]
        assert c.area == "gpu"


@pytest.mark.parametrize("text,code", [
    # vllm-project/vllm#5222: an H100 node's uncorrectable ECC error, pasted without nvidia-smi -q
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "gpu-ecc-errors"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "gpu-compute-mode-restricted"),
    ("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", "gpu-lost"),
])
def test_a_pasted_error_gives_the_code_when_the_gpus_were_not_read(text, code):
    f = new_facts("collect_env")
    f["user_error"] = {"text": text, "source": "user"}
    found = [x for x in run_health(f) if x.code == code]
    # "busy or unavailable" alone does not show the compute mode (a vGPU licence, a broken driver give it too): a warning
    want = "warning" if "busy or unavailable" in text else "error"
    assert len(found) == 1 and found[0].severity == want and text[:40] in str(found[0].evidence)


def test_counters_that_were_read_outrank_the_text():
    """NVML read ECC counters of zero: the text alone does not make a finding (the counters say how the GPU is now)."""
    f = new_facts("live")
    f["nvml"] = {"status": "ok", "devices": [{"index": 0, "name": "NVIDIA H100", "ecc_errors": {
        "volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 0, "uncorrected": 0}}}]}
    f["user_error"] = {"text": "RuntimeError: CUDA error: uncorrectable ECC error encountered", "source": "user"}
    assert not [x for x in run_health(f) if x.code == "gpu-ecc-errors"]


@pytest.mark.parametrize("text,expect", [
    # torch 1.x wording, 8 of 10.76 GiB held outside the process (a real report's figures)
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB total capacity; 2.42 GiB already "
     "allocated; 26.12 MiB free; 2.75 GiB reserved in total by PyTorch)", True),
    # the process itself holds nearly all: a model or batch too large, not memory occupied by others
    ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.70 GiB total capacity; 21.30 GiB already "
     "allocated; 1.02 GiB free; 22.10 GiB reserved in total by PyTorch)", False),
    # torch 2.x wording
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of "
     "which 15.06 MiB is free. Including non-PyTorch memory, this process has 4.31 GiB memory in use.", True),
])
def test_out_of_memory_figures_tell_memory_held_by_others(text, expect):
    f = new_facts("collect_env")
    f["user_error"] = {"text": text, "source": "user"}
    found = [x for x in run_health(f) if x.code == "gpu-memory-occupied"]
    assert bool(found) is expect
