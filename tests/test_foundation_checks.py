"""The foundation checks against recorded facts (one real machine) and variations of it."""

from __future__ import annotations

import copy

import pytest

from conftest import load_fixture
from cudadoctor import registry
from cudadoctor.facts import Facts
from cudadoctor.report import diagnose


def codes(facts, severity=None):
    rep = diagnose(facts, registry.load(plugins=False))
    return [f.code for f in rep.findings if severity is None or f.severity == severity]


def finding(facts, code):
    rep = diagnose(facts, registry.load(plugins=False))
    hits = [f for f in rep.findings if f.code == code]
    assert hits, f"no {code} in {[f.code for f in rep.findings]}"
    return hits[0]


def test_recorded_cuda_build_without_driver_is_only_no_driver(facts_nodriver):
    assert codes(facts_nodriver, "error") == ["no-nvidia-driver"]
    f = finding(facts_nodriver, "no-nvidia-driver")
    assert "No NVIDIA GPU in this machine" in f.title
    assert f.evidence["nvml.status"] == "library-missing"


def test_gpu_on_bus_without_driver_says_install_driver(facts_nodriver):
    facts = copy.deepcopy(facts_nodriver)
    facts["system"]["container"] = None
    facts["system"]["pci_nvidia_devices"] = [{"address": "0000:01:00.0", "device_id": "0x2684", "class": "0x030000", "driver": None}]
    facts["system"]["kernel_modules"] = {"nvidia": False, "nouveau": True}
    facts["system"]["distro"] = "Ubuntu 24.04.1 LTS"
    f = finding(facts, "no-nvidia-driver")
    assert "GPU is installed but no NVIDIA driver" in f.title
    assert "sudo ubuntu-drivers install" in f.fix.commands
    assert any("nouveau" in c for c in f.fix.commands)


def test_container_on_gpu_host_without_runtime_is_no_gpu_visible(facts_nodriver):
    facts = copy.deepcopy(facts_nodriver)
    facts["system"]["container"] = "docker"
    facts["system"]["kernel_modules"] = {"nvidia": True, "nouveau": False}
    got = codes(facts, "error")
    assert got == ["no-gpu-visible"]
    assert any("--gpus all" in c for c in finding(facts, "no-gpu-visible").fix.commands)


def _driver_ok(facts, n=1, cvd=None):
    facts = copy.deepcopy(facts)
    facts["nvml"] = {"status": "ok", "driver_version": "580.95.05", "cuda_driver_version": "13.0", "device_count": n,
                     "devices": [{"index": i, "name": "NVIDIA GeForce RTX 4090", "uuid": f"GPU-{i}abc", "compute_capability": "8.9"} for i in range(n)]}
    facts["system"]["kernel_modules"] = {"nvidia": True, "nouveau": False}
    facts["torch"]["cuda_available"] = False
    facts["torch"]["device_count"] = 0
    facts["torch"].pop("cuda_init_error", None)
    if cvd is not None:
        facts["environment"]["vars"]["CUDA_VISIBLE_DEVICES"] = cvd
    return facts


@pytest.mark.parametrize("cvd,expect", [("", "empty"), ("-1", "hides every GPU"), ("2", "device 2"), ("GPU-ffff", "matches no GPU UUID")])
def test_cuda_visible_devices_hiding_everything(facts_nodriver, cvd, expect):
    facts = _driver_ok(facts_nodriver, n=2, cvd=cvd)
    f = finding(facts, "no-gpu-visible")
    assert expect in f.title
    assert f.evidence["CUDA_VISIBLE_DEVICES"] == cvd
    assert "no-nvidia-driver" not in codes(facts)


@pytest.mark.parametrize("cvd", ["0", "1", "1,0", "GPU-1abc", "MIG-whatever"])
def test_cuda_visible_devices_selecting_a_gpu_is_fine(facts_nodriver, cvd):
    assert "no-gpu-visible" not in codes(_driver_ok(facts_nodriver, n=2, cvd=cvd))


def test_cpu_build_on_gpu_machine(facts_nodriver):
    facts = _driver_ok(facts_nodriver)
    facts["torch"]["version"] = "2.13.0+cpu"
    facts["torch"]["cuda"] = None
    f = finding(facts, "cpu-only-torch")
    assert f.severity == "error"
    assert any("uninstall" in c for c in f.fix.commands)
    assert any("torch==2.13.0" in c for c in f.fix.commands)


def test_cpu_build_on_machine_without_gpu_is_fine():
    facts = load_fixture("live-torch2130-cpu-tv0280.json")
    assert "cpu-only-torch" not in codes(facts)


def test_torch_import_failure_reports_what_happened(facts_nodriver):
    facts = copy.deepcopy(facts_nodriver)
    facts["torch"] = {"status": "import-failed", "location": "/x/torch/__init__.py",
                      "error": {"type": "ImportError", "message": "libcudnn.so.9: cannot open shared object file: No such file or directory",
                                "traceback_tail": "Traceback...\nImportError: libcudnn.so.9: cannot open shared object file"}}
    f = finding(facts, "torch-import-failed")
    assert "ImportError: libcudnn.so.9" in f.title


def test_torch_not_installed(facts_nodriver):
    facts = copy.deepcopy(facts_nodriver)
    facts["torch"] = {"status": "not-installed"}
    f = finding(facts, "torch-not-installed")
    assert any(c.startswith("python -m pip install torch") for c in f.fix.commands)


def test_probe_failure_is_reported_and_cuda_hang_is_an_error(facts_nodriver):
    facts = copy.deepcopy(facts_nodriver)
    facts["probe_errors"] = [{"probe": "torch", "status": "timeout", "message": "torch probe timed out after 90 s during stage cuda_init"},
                             {"probe": "toolkit", "status": "timeout", "message": "did not finish within 10 s"}]
    facts["torch"]["failed_stage"] = "cuda_init"
    rep = diagnose(facts, registry.load(plugins=False))
    probe = [f for f in rep.findings if f.code == "probe-failed"]
    assert {f.severity for f in probe} == {"error", "warning"}
    assert any("initialising CUDA" in f.title for f in probe)


def test_garbage_types_in_facts_never_crash_checks(facts_nodriver):
    facts = copy.deepcopy(facts_nodriver)
    facts["torch"]["version"] = 12
    facts["nvml"]["devices"] = "nope"
    facts["system"]["pci_nvidia_devices"] = {"a": 1}
    facts["environment"]["vars"] = ["x"]
    rep = diagnose(facts, registry.load(plugins=False))
    assert not [f for f in rep.findings if f.code == "check-crashed"]


def test_facts_typed_getters():
    fx = Facts({"a": {"b": [1, {"c": "x"}], "n": None, "t": True}})
    assert fx.get("a.b.1.c") == "x"
    assert fx.str("a.b") is None and fx.list("a.b") == [1, {"c": "x"}]
    assert fx.get("a.n", "d") == "d" and fx.bool("a.t") is True and fx.int("a.t") is None


def test_verdict_one_sick_gpu_of_eight_is_degraded_not_unusable():
    from cudadoctor.report import diagnose as dg
    rep = dg(load_fixture("hgx-8x-h100-ecc.json"), registry.load(plugins=False))
    v = rep.verdict()
    assert v["state"] == "degraded" and v["text"].startswith("PyTorch can use 8 GPUs, but 1 error")
    assert rep.exit_code() == 1
    healthy = dg(load_fixture("hgx-8x-h100-healthy.json"), registry.load(plugins=False))
    assert healthy.verdict()["state"] == "yes" and healthy.exit_code() == 0 and not healthy.findings
