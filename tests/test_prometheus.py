"""`--format prometheus` on check, devices, smoke and fleet: parsed with the Prometheus client's own
parser (prometheus_client, test-only) and, where installed, checked by `promtool check metrics`."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest

from conftest import FIXTURES, REPO, load_fixture, run_cli, torch_python, write_json

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is a test dependency: pip install -e '.[test]'")

sys.path.insert(0, str(REPO / "benchmarks"))
import fleet_10k as gen  # noqa: E402

PROMTOOL = shutil.which("promtool")
Sample = Dict[Tuple[str, Tuple[Tuple[str, str], ...]], float]


def parse(text: str) -> Sample:
    """Every sample, keyed by (name, sorted labels); the parser raises on anything malformed."""
    out: Sample = {}
    for fam in parser.text_string_to_metric_families(text):
        assert fam.type == "gauge", fam.name
        assert fam.documentation, f"{fam.name} has no HELP"
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in out, f"duplicate sample {key}"
            out[key] = s.value
    return out


def value(samples: Sample, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def promtool(text: str) -> None:
    """promtool's own check (syntax and the naming lint), when Debian's prometheus package is installed."""
    if not PROMTOOL:
        return
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), r.stdout + r.stderr


def check_prom(tmp_path: Path, facts_name: str, *extra: str) -> Tuple[Sample, str]:
    out = tmp_path / "node.prom"
    r = run_cli("check", "--facts", str(FIXTURES / "facts" / facts_name), "--format", "prometheus", "-o", str(out), *extra)
    assert r.returncode in (0, 1), r.stderr
    text = out.read_text()
    promtool(text)
    return parse(text), text


def test_ecc_node_names_the_failing_gpu_and_the_finding(tmp_path):
    s, text = check_prom(tmp_path, "hgx-8x-h100-ecc.json")
    assert value(s, "cudadoctor_finding", code="gpu-ecc-errors", severity="error") == 1
    assert value(s, "cudadoctor_findings", severity="error") == 1
    assert value(s, "cudadoctor_gpus") == 8
    healthy = {dict(k[1])["gpu"]: v for k, v in s.items() if k[0] == "cudadoctor_gpu_healthy"}
    failed = [g for g, v in healthy.items() if v == 0]
    assert len(healthy) == 8 and len(failed) == 1
    facts = load_fixture("hgx-8x-h100-ecc.json")
    bad = [d for d in facts["nvml"]["devices"] if (d.get("ecc_errors") or {}).get("volatile", {}).get("uncorrected")]
    assert failed == [str(bad[0]["index"])]
    assert value(s, "cudadoctor_gpu_ecc_errors", gpu=failed[0], counter="volatile", type="uncorrected") == \
        bad[0]["ecc_errors"]["volatile"]["uncorrected"]
    # degraded: seven GPUs still work
    assert value(s, "cudadoctor_pytorch_gpu_usable") == 1
    assert value(s, "cudadoctor_verdict", state="degraded") == 1


def test_versions_are_labels_of_one_info_metric_and_the_timestamp_is_the_reports(tmp_path):
    s, text = check_prom(tmp_path, "hgx-8x-h100-healthy.json")
    facts = load_fixture("hgx-8x-h100-healthy.json")
    info = [dict(k[1]) for k, v in s.items() if k[0] == "cudadoctor_versions_info"]
    assert len(info) == 1 and value(s, "cudadoctor_versions_info", **info[0]) == 1
    assert info[0]["driver"] == facts["nvml"]["driver_version"]
    assert info[0]["torch"] == facts["torch"]["version"]
    assert info[0]["variant"] == facts["torch"]["version"].split("+")[1]
    ts = value(s, "cudadoctor_report_timestamp_seconds")
    import time

    assert abs(ts - time.time()) < 600  # diagnosed now, from a saved file
    # no label that differs per node or per run
    labels = {name for (metric, lbls) in s for name, _ in lbls}
    assert not labels & {"host", "hostname", "node", "instance", "uuid", "serial", "file", "path", "pid"}


def test_pcie_width_and_throttle_reasons(tmp_path):
    s, _ = check_prom(tmp_path, "hgx-8x-h100-pcie-x8.json")
    widths = {dict(k[1])["gpu"]: v for k, v in s.items() if k[0] == "cudadoctor_gpu_pcie_link_width_lanes"}
    maxes = {dict(k[1])["gpu"]: v for k, v in s.items() if k[0] == "cudadoctor_gpu_pcie_link_width_max_lanes"}
    facts = load_fixture("hgx-8x-h100-pcie-x8.json")
    narrow = {str(d["index"]) for d in facts["nvml"]["devices"] if d["pcie"]["width_current"] < d["pcie"]["width_max"]}
    assert narrow and {g for g in widths if widths[g] < maxes[g]} == narrow
    s, _ = check_prom(tmp_path, "hgx-8x-h100-throttled.json")
    from cudadoctor.devices import CLOCK_EVENT_REASONS

    facts = load_fixture("hgx-8x-h100-throttled.json")
    for d in facts["nvml"]["devices"]:
        mask = d["clock_event_reasons"]["mask"]
        for bit, key, _ in CLOCK_EVENT_REASONS:
            assert value(s, "cudadoctor_gpu_clock_event_reason", gpu=str(d["index"]), reason=key) == (1 if mask & bit else 0)
    from cudadoctor.devices import THROTTLE_REASONS

    active = {dict(k[1])["reason"] for k, v in s.items() if k[0] == "cudadoctor_gpu_clock_event_reason" and v == 1}
    assert active & set(THROTTLE_REASONS)  # the fixture's point: a GPU slowed against the user's wish


def test_untrusted_label_values_are_escaped_and_parse(tmp_path):
    facts = load_fixture("hgx-8x-h100-healthy.json")
    facts["nvml"]["devices"][0]["name"] = 'H100 "evil"\\name\nnext_metric 1'
    facts["nvml"]["driver_version"] = "580\x1b[31m"
    r = run_cli("check", "--facts", str(write_json(tmp_path / "f.json", facts)), "--format", "prometheus")
    promtool(r.stdout)
    s = parse(r.stdout)
    names = [dict(k[1])["name"] for k in s if k[0] == "cudadoctor_gpu_info"]
    assert 'H100 "evil"\\name next_metric 1' in names
    assert not any(k[0] == "next_metric" for k in s)
    info = [dict(k[1]) for k in s if k[0] == "cudadoctor_versions_info"][0]
    assert "\x1b" not in info["driver"]


def test_check_on_this_machine_writes_a_textfile_atomically(tmp_path):
    """The recipe's command, live: no GPU here, so PyTorch cannot use one (0, or absent when unknown)."""
    out = tmp_path / "textfile" / "cudadoctor.prom"
    r = run_cli("check", "--format", "prometheus", "-o", str(out))
    assert r.returncode in (0, 1), r.stderr
    assert sorted(os.listdir(out.parent)) == ["cudadoctor.prom"]  # no temporary file left for the collector to read
    text = out.read_text()
    promtool(text)
    s = parse(text)
    assert s.get(("cudadoctor_pytorch_gpu_usable", ()), 0) == 0
    assert ("cudadoctor_report_timestamp_seconds", ()) in s
    assert any(k[0] == "cudadoctor_versions_info" for k in s)


# ---------------------------------------------------------------------------------- smoke

def smoke_samples(doc: dict) -> Sample:
    from cudadoctor.render.prometheus import smoke_metrics

    text = smoke_metrics(doc)
    promtool(text)
    return parse(text)


def test_single_gpu_smoke_numbers():
    doc = json.loads((FIXTURES / "smoke" / "single-cpu-synthetic-pass.json").read_text())
    s = smoke_samples(doc)
    training = next(x["evidence"] for x in doc["stages"] if x["name"] == "training")
    throughput = next(x["evidence"] for x in doc["stages"] if x["name"] == "throughput")
    assert value(s, "cudadoctor_smoke_passed") == 1
    assert value(s, "cudadoctor_smoke_test_accuracy_ratio") == training["test_accuracy"]
    assert value(s, "cudadoctor_smoke_time_to_accuracy_seconds") == training["time_to_target_s"]
    assert value(s, "cudadoctor_smoke_throughput_samples_per_second", device="cpu") == throughput["cpu_samples_per_s"]
    assert value(s, "cudadoctor_smoke_stage_passed", stage="training") == 1
    assert ("cudadoctor_smoke_stage_passed", (("stage", "cudnn"),)) not in s  # skipped: absent, not 0
    # a GPU run's numbers, as the workload writes them
    gpu = copy.deepcopy(doc)
    for st in gpu["stages"]:
        if st["name"] == "throughput":
            st["evidence"].update(device_samples_per_s=41000.0, speedup=9.1)
        if st["name"] == "transfers":
            st.update(verdict="pass", evidence={"h2d_pinned_gbps": 24.5, "h2d_pageable_gbps": 11.0,
                                                "d2h_pinned_gbps": 26.0, "d2h_pageable_gbps": 9.5})
    s = smoke_samples(gpu)
    assert value(s, "cudadoctor_smoke_gpu_speedup_ratio") == 9.1
    assert value(s, "cudadoctor_smoke_transfer_bytes_per_second", direction="h2d", memory="pinned") == 24.5e9
    assert value(s, "cudadoctor_smoke_throughput_samples_per_second", device="gpu") == 41000.0


def test_distributed_smoke_rank_and_job_shapes():
    rank0 = json.loads((FIXTURES / "smoke" / "dist-gloo-pass-rank0.json").read_text())
    bw = next(x["evidence"] for x in rank0["stages"] if x["name"] == "bandwidth")
    s = smoke_samples(rank0)
    assert value(s, "cudadoctor_smoke_allreduce_busbw_bytes_per_second") == pytest.approx(bw["busbw_gbps"] * 1e9)
    # the job shape (one document, stages per rank), with the new envelope
    fault = [json.loads((FIXTURES / "smoke" / f"dist-gloo-ddp-fault-rank{r}.json").read_text()) for r in (0, 1)]
    job = {"kind": "cudadoctor-smoke-job", "schema_version": 2, "status": "fail",
           "ranks": [{"rank": i, "stages": f["stages"]} for i, f in enumerate(fault)]}
    s = smoke_samples(job)
    assert value(s, "cudadoctor_smoke_passed") == 0
    assert value(s, "cudadoctor_smoke_stage_passed", stage="ddp") == 0
    assert value(s, "cudadoctor_smoke_stage_passed", stage="bandwidth") == 1


@pytest.mark.skipif(torch_python() is None, reason="no torch interpreter (set CUDADOCTOR_TEST_TORCH_PYTHON)")
def test_smoke_cli_writes_its_numbers(tmp_path):
    """The real smoke (CPU, generated digits), as the textfile recipe runs it."""
    out = tmp_path / "cudadoctor-smoke.prom"
    py = str(torch_python())
    r = run_cli("smoke", "--device", "cpu", "--synthetic", "--python", py, "--format", "prometheus", "-o", str(out), timeout=600)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    promtool(text)
    s = parse(text)
    assert value(s, "cudadoctor_smoke_passed") == 1
    assert value(s, "cudadoctor_smoke_test_accuracy_ratio") >= 0.95  # the synthetic bar
    assert value(s, "cudadoctor_smoke_throughput_samples_per_second", device="cpu") > 0
    assert value(s, "cudadoctor_smoke_duration_seconds") > 0


def test_devices_writes_the_gpu_metrics_alone(tmp_path):
    r = run_cli("devices", "--facts", str(FIXTURES / "facts" / "hgx-8x-h100-ecc.json"), "--format", "prometheus")
    assert r.returncode == 1, r.stderr  # a GPU failed
    promtool(r.stdout)
    s = parse(r.stdout)
    assert {k[0] for k in s} >= {"cudadoctor_gpus", "cudadoctor_gpu_healthy", "cudadoctor_gpu_ecc_errors"}
    assert all(k[0].startswith("cudadoctor_gpu") for k in s)
    assert sorted(v for k, v in s.items() if k[0] == "cudadoctor_gpu_healthy") == [0] + [1] * 7


def test_smoke_cli_prometheus_refuses_distributed_in_one_line():
    r = run_cli("smoke", "--distributed", "--device", "cpu", "--format", "prometheus")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "fleet" in r.stderr, r.stderr


# ---------------------------------------------------------------------------------- fleet

def test_fleet_counts_match_its_json(tmp_path):
    d = tmp_path / "reports"
    gen.generate(d, 30)
    for f in (FIXTURES / "smoke").glob("*.json"):
        shutil.copy(f, d / f.name)
    r = run_cli("fleet", str(d), "--format", "json")
    doc = json.loads(r.stdout)
    out = tmp_path / "fleet.prom"
    r = run_cli("fleet", str(d), "--format", "prometheus", "-o", str(out))
    assert r.returncode == 1, r.stderr
    text = out.read_text()
    promtool(text)
    s = parse(text)
    summ = doc["summary"]
    assert value(s, "cudadoctor_fleet_nodes") == summ["nodes"] == 30
    assert value(s, "cudadoctor_fleet_deviating_nodes") == summ["deviating"] > 0
    assert value(s, "cudadoctor_fleet_nodes_with_errors") == summ["with_errors"]
    assert value(s, "cudadoctor_fleet_unreadable_files") == 2
    assert value(s, "cudadoctor_fleet_ok") == 0
    for f in doc["findings"]:
        assert value(s, "cudadoctor_fleet_finding_nodes", code=f["code"], severity=f["severity"]) == f["count"]
    per_config = [v for k, v in s.items() if k[0] == "cudadoctor_fleet_configuration_nodes"]
    assert sum(per_config) == summ["nodes"]
    assert value(s, "cudadoctor_fleet_smoke_runs") == 5
    assert value(s, "cudadoctor_fleet_smoke_failed_runs") == doc["smoke"]["failed"] + doc["smoke"]["errors"]
    assert not any(("node", n["node"]) in k[1] for k in s for n in doc["nodes"])  # counts, not one series per node


def test_fleet_many_configurations_are_capped():
    from cudadoctor.render.prometheus import fleet_metrics

    configs = [{"config": {"driver": f"5{i:02d}.0", "torch": "2.14.1", "variant": "cu130", "gpu": "H100", "gpus": "8"},
                "count": 100 - i, "majority": i == 0} for i in range(50)]
    s = parse(fleet_metrics({"summary": {"nodes": sum(c["count"] for c in configs)}, "configurations": configs}))
    rows = {dict(k[1])["config"]: v for k, v in s.items() if k[0] == "cudadoctor_fleet_configuration_nodes"}
    assert len(rows) == 21 and rows["other"] == sum(c["count"] for c in configs[20:])


@pytest.mark.skipif(not PROMTOOL, reason="promtool not installed (Debian: apt-get install prometheus)")
def test_promtool_rejects_what_it_should():
    """The promtool helper is a real check: a counter-style name on a gauge fails its lint."""
    bad = "# HELP x_total a\n# TYPE x_total gauge\nx_total 1\n"
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=bad, capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 or r.stdout.strip() or r.stderr.strip()
