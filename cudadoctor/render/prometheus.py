"""Prometheus text exposition (format 0.0.4) of a report, a smoke result or a fleet summary.

Written for node_exporter's textfile collector: ``cudadoctor check --format prometheus -o
/var/lib/node_exporter/textfile/cudadoctor.prom`` (written atomically, so the collector never
reads half a file). The metric list, for Grafana, is in docs/cluster.md.

Conventions (https://prometheus.io/docs/practices/naming/): one ``cudadoctor_`` prefix, base
units in the name (``_seconds``, ``_bytes_per_second``, ``_ratio``), versions as labels of
``_info`` metrics whose value is 1, and no label with a value per node, file or run: the node is
Prometheus's own ``instance`` label. Labels hold only bounded sets (finding codes, severities, GPU
index and model, stage names, versions), cleaned with :func:`cudadoctor.document.clean`.

This module only reads documents; nothing here decides a verdict.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from .. import __version__
from ..document import clean
from ..model import SEVERITIES
from ..smokedoc import epoch, smoke_numbers

Labels = Mapping[str, Any]


class Exposition:
    """Metric families in the order first declared; samples of a family are written together."""

    def __init__(self) -> None:
        self.families: Dict[str, Tuple[str, List[str]]] = {}

    def add(self, name: str, help_text: str, value: Any, labels: Optional[Labels] = None) -> None:
        """One gauge sample; a value that is not a number (unknown) is left out, never written as 0."""
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
            return
        fam = self.families.setdefault(name, (help_text, []))
        fam[1].append(f"{name}{_labels(labels)} {_number(value)}")

    def text(self) -> str:
        out: List[str] = []
        for name, (help_text, samples) in self.families.items():
            out.append(f"# HELP {name} {_help(help_text)}")
            out.append(f"# TYPE {name} gauge")
            out.extend(dict.fromkeys(samples))  # a repeated sample (same labels) would be invalid
        return "\n".join(out) + "\n"


def _help(text: str) -> str:
    return clean(text).replace("\\", "\\\\")


def _labels(labels: Optional[Labels]) -> str:
    if not labels:
        return ""
    parts = []
    for k, v in labels.items():
        if v is None:
            continue
        val = clean(v)[:200].replace("\\", "\\\\").replace('"', '\\"')
        parts.append(f'{k}="{val}"')
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(v: Any) -> str:
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# ------------------------------------------------------------------------------------ check


def report_metrics(report: Any) -> str:
    """The textfile for one node: `cudadoctor check --format prometheus`."""
    doc = report.to_dict()
    m = Exposition()
    _report_part(m, doc)
    from ..devices import build

    _gpu_part(m, build(report.facts, report.findings))
    smoke = (doc.get("extra") or {}).get("smoke")
    if isinstance(smoke, dict):
        _smoke_part(m, smoke)
    return m.text()


def _report_part(m: Exposition, doc: Dict[str, Any]) -> None:
    facts = doc.get("facts") or {}
    torch = facts.get("torch") or {}
    nvml = facts.get("nvml") or {}
    tool = doc.get("tool") or {}
    m.add(
        "cudadoctor_versions_info",
        "Versions on this node (labels); the value is always 1.",
        1,
        {
            "driver": nvml.get("driver_version") or "unknown",
            "cuda_driver": nvml.get("cuda_driver_version") or "unknown",
            "torch": torch.get("version") or "unknown",
            "torch_cuda": torch.get("cuda") or "none",
            "variant": _variant(torch.get("version")),
            "cudadoctor": tool.get("version") or __version__,
            "kb_date": tool.get("kb_date") or "unknown",
        },
    )
    m.add("cudadoctor_report_timestamp_seconds", "When the report was made (Unix time).", epoch(tool.get("generated_at")))
    summary = doc.get("summary") or {}
    state = summary.get("state")
    m.add(
        "cudadoctor_pytorch_gpu_usable",
        "1 if PyTorch can use a GPU here (verdict yes or degraded), 0 if not; absent when it could not be established.",
        {"yes": 1, "degraded": 1, "no": 0}.get(str(state)),
    )
    m.add("cudadoctor_verdict", "The closing verdict as a state set: 1 for the current state.", 1, {"state": state or "unknown"})
    counts = {s: 0 for s in SEVERITIES}
    codes: Dict[Tuple[str, str], int] = {}
    for f in doc.get("findings") or []:
        sev, code = str(f.get("severity")), str(f.get("code"))
        counts[sev] = counts.get(sev, 0) + 1
        codes[(code, sev)] = codes.get((code, sev), 0) + 1
    for sev, n in counts.items():
        m.add("cudadoctor_findings", "Findings on this node by severity.", n, {"severity": sev})
    for (code, sev), n in sorted(codes.items()):
        m.add(
            "cudadoctor_finding",
            "Findings on this node with this code (cudadoctor explain CODE).",
            n,
            {"code": code, "severity": sev},
        )
    m.add("cudadoctor_checks_seconds", "Time the checks took.", _num((doc.get("timings") or {}).get("checks_s")))


def _variant(version: Any) -> str:
    if not isinstance(version, str) or not version:
        return "unknown"
    return version.split("+", 1)[1] if "+" in version else "default"


def _gpu_part(m: Exposition, model: Dict[str, Any]) -> None:
    devices = model.get("devices") or []
    m.add("cudadoctor_gpus", "NVIDIA GPUs NVML lists on this node.", len(devices))
    for d in devices:
        g = {"gpu": d.get("index")}
        m.add(
            "cudadoctor_gpu_info",
            "Each GPU's model, compute capability and compute mode (labels); the value is 1.",
            1,
            dict(
                g,
                name=d.get("name") or "unknown",
                compute_capability=d.get("compute_capability") or "unknown",
                compute_mode=d.get("compute_mode") or "unknown",
            ),
        )
        m.add(
            "cudadoctor_gpu_healthy",
            "1 if the GPU passed (devices' verdict), 0 if it failed; absent when unknown.",
            {"PASS": 1, "FAIL": 0}.get(str(d.get("result"))),
            g,
        )
        m.add("cudadoctor_gpu_kernel_ok", "1 if PyTorch ran a test kernel on the GPU, 0 if it failed.", d.get("kernel_ok"), g)
        m.add(
            "cudadoctor_gpu_compute_mode_prohibited",
            "1 if the compute mode is Prohibited (no CUDA context can be made).",
            d.get("compute_mode") == "Prohibited" if d.get("compute_mode") else None,
            g,
        )
        _gpu_memory_health(m, d, g)
        for key, what in (
            ("pcie_width_current", "link_width_lanes"),
            ("pcie_width_max", "link_width_max_lanes"),
            ("pcie_gen_current", "link_generation"),
            ("pcie_gen_max", "link_generation_max"),
        ):
            m.add(f"cudadoctor_gpu_pcie_{what}", f"PCIe {what.replace('_', ' ')} (NVML).", d.get(key), g)
        reasons = d.get("clock_event_reasons")
        if isinstance(reasons, list):
            from ..devices import CLOCK_EVENT_REASONS

            for _, key, _label in CLOCK_EVENT_REASONS:
                m.add(
                    "cudadoctor_gpu_clock_event_reason",
                    "1 if this clock-event (throttle) reason is active (NVML).",
                    key in reasons,
                    dict(g, reason=key),
                )
        m.add("cudadoctor_gpu_temperature_celsius", "GPU temperature.", d.get("temperature_c"), g)


def _gpu_memory_health(m: Exposition, d: Dict[str, Any], g: Dict[str, Any]) -> None:
    m.add("cudadoctor_gpu_ecc_enabled", "1 if ECC is on.", d.get("ecc_enabled"), g)
    for key, n in (d.get("ecc_errors") or {}).items():
        counter, _, kind = key.partition("_")
        m.add(
            "cudadoctor_gpu_ecc_errors",
            "ECC error counts (NVML; volatile since boot, aggregate for the GPU's life).",
            n,
            dict(g, counter=counter, type=kind),
        )
    rp = d.get("retired_pages") or {}
    m.add("cudadoctor_gpu_retired_pages_pending", "1 if retired pages wait for a reset (pre-Ampere).", rp.get("pending"), g)
    rr = d.get("remapped_rows") or {}
    m.add("cudadoctor_gpu_remap_pending", "1 if row remapping waits for a GPU reset.", rr.get("pending"), g)
    m.add("cudadoctor_gpu_remap_failed", "1 if a row remapping failed (the GPU needs service).", rr.get("failure"), g)
    for kind in ("correctable", "uncorrectable"):
        m.add("cudadoctor_gpu_remapped_rows", "Rows remapped, by cause.", rr.get(kind), dict(g, type=kind))


def devices_metrics(model: Dict[str, Any]) -> str:
    """The per-GPU part alone: `cudadoctor devices --format prometheus`."""
    m = Exposition()
    _gpu_part(m, model)
    return m.text()


# ------------------------------------------------------------------------------------ smoke


def smoke_metrics(doc: Mapping[str, Any]) -> str:
    """The textfile for `cudadoctor smoke --format prometheus`."""
    m = Exposition()
    _smoke_part(m, doc)
    return m.text()


def _smoke_part(m: Exposition, doc: Mapping[str, Any]) -> None:
    n = smoke_numbers(doc)
    m.add("cudadoctor_smoke_passed", "1 if the smoke test passed, 0 if it failed.", n["passed"])
    m.add("cudadoctor_smoke_timestamp_seconds", "When the smoke test finished (Unix time).", n["when"])
    m.add("cudadoctor_smoke_duration_seconds", "Wall time of the smoke test, start-up included.", n["elapsed_s"])
    for stage, verdict in sorted(n["stages"].items()):
        m.add(
            "cudadoctor_smoke_stage_passed",
            "1 if the stage passed, 0 if it failed; absent when skipped.",
            {"pass": 1, "fail": 0}.get(verdict),
            {"stage": stage},
        )
    m.add("cudadoctor_smoke_test_accuracy_ratio", "MNIST test accuracy reached (0-1).", n["test_accuracy"])
    m.add("cudadoctor_smoke_time_to_accuracy_seconds", "Training time to the accuracy bar.", n["time_to_accuracy_s"])
    m.add("cudadoctor_smoke_training_samples_per_second", "Training throughput.", n["training_samples_per_s"])
    for dev, key in (("cpu", "cpu_samples_per_s"), ("gpu", "device_samples_per_s")):
        m.add(
            "cudadoctor_smoke_throughput_samples_per_second",
            "Same training step timed on the CPU and the GPU.",
            n[key],
            {"device": dev},
        )
    m.add("cudadoctor_smoke_gpu_speedup_ratio", "GPU throughput over CPU throughput.", n["speedup"])
    for key, gbps in sorted(n["transfers_gbps"].items()):
        direction, _, memory = key.partition("_")
        m.add(
            "cudadoctor_smoke_transfer_bytes_per_second",
            "Host<->device copy bandwidth (direction h2d/d2h, pinned or pageable host memory).",
            gbps * 1e9,
            {"direction": direction, "memory": memory},
        )
    for key, what in (("busbw_gbps", "bus"), ("algbw_gbps", "algorithm")):
        gbps = n[key]
        m.add(
            f"cudadoctor_smoke_allreduce_{'busbw' if what == 'bus' else 'algbw'}_bytes_per_second",
            f"all_reduce {what} bandwidth (nccl-tests' definition).",
            gbps * 1e9 if gbps is not None else None,
        )


# ------------------------------------------------------------------------------------ fleet


def fleet_metrics(result: Mapping[str, Any], top_configs: int = 20) -> str:
    """The fleet summary as aggregates: counts, not one series per node (nodes report their own)."""
    m = Exposition()
    s = result.get("summary") or {}
    m.add(
        "cudadoctor_fleet_timestamp_seconds",
        "When the fleet summary was made (Unix time).",
        epoch((result.get("tool") or {}).get("generated_at")),
    )
    for key, name, what in (
        ("nodes", "nodes", "Nodes read."),
        ("deviating", "deviating_nodes", "Nodes whose configuration differs from the majority's."),
        ("with_errors", "nodes_with_errors", "Nodes with error findings."),
        ("with_warnings", "nodes_with_warnings", "Nodes with warning findings."),
        ("healthy", "healthy_nodes", "Nodes without error findings."),
        ("configurations", "configurations", "Distinct configurations."),
        ("majority_nodes", "majority_nodes", "Nodes in the majority configuration."),
    ):
        m.add(f"cudadoctor_fleet_{name}", what, s.get(key))
    m.add("cudadoctor_fleet_unreadable_files", "Files that could not be read.", s.get("unreadable"))
    m.add(
        "cudadoctor_fleet_ok",
        "1 if the fleet summary exits 0 (healthy, uniform, all readable).",
        s.get("exit_code") == 0 if "exit_code" in s else None,
    )
    for f in result.get("findings") or []:
        m.add(
            "cudadoctor_fleet_finding_nodes",
            "Nodes with this finding code.",
            f.get("count"),
            {"code": f.get("code"), "severity": f.get("severity")},
        )
    _fleet_configs(m, result.get("configurations") or [], top_configs)
    sm = result.get("smoke") or {}
    if sm:
        m.add("cudadoctor_fleet_smoke_runs", "Smoke results read.", sm.get("runs"))
        m.add(
            "cudadoctor_fleet_smoke_failed_runs",
            "Smoke results that failed or could not run.",
            (sm.get("failed") or 0) + (sm.get("errors") or 0),
        )
        b = (sm.get("bandwidth") or {}).get("busbw_gbps") or {}
        for stat in ("min", "median", "max"):
            v = _num(b.get(stat))
            m.add(
                f"cudadoctor_fleet_smoke_allreduce_busbw_{stat}_bytes_per_second",
                f"{stat} all_reduce bus bandwidth over the runs.",
                v * 1e9 if v is not None else None,
            )
    return m.text()


def _fleet_configs(m: Exposition, configs: Iterable[Dict[str, Any]], top: int) -> None:
    other = 0
    for i, c in enumerate(configs):
        if i >= top:
            other += int(c.get("count") or 0)
            continue
        cfg = c.get("config") or {}
        m.add(
            "cudadoctor_fleet_configuration_nodes",
            'Nodes per configuration (the most common first; the rest summed under config="other").',
            c.get("count"),
            {
                "config": str(i),
                "majority": "true" if c.get("majority") else "false",
                "driver": cfg.get("driver"),
                "torch": cfg.get("torch"),
                "variant": cfg.get("variant"),
                "gpu": cfg.get("gpu"),
                "gpus": cfg.get("gpus"),
            },
        )
    if other:
        m.add("cudadoctor_fleet_configuration_nodes", "", other, {"config": "other", "majority": "false"})
