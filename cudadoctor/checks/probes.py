"""Probes that failed or timed out: what the report could not find out, and why."""

from __future__ import annotations

from typing import Dict, Iterator

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

PROBE_FAILED = Code(
    code="probe-failed",
    title="A probe failed or timed out; some facts are unknown",
    area="tool",
    severity="warning",
    explanation={
        "what": "One of cudadoctor's probes (system, environment, toolkit, nvml, pyenv, torch) "
        "failed, crashed or ran past its time limit. A torch probe that crashed or hung while "
        "initialising CUDA or running a test kernel is an error: PyTorch cannot use the GPU.",
        "why": "Probes run in child processes with time limits so that a hung driver call or a "
        "crashing library becomes a fact instead of freezing the tool. Facts that probe would "
        "have gathered are unknown, and checks that need them say so rather than guessing.",
        "confirm": "The evidence names the probe, how it failed and where it stopped. "
        "`cudadoctor collect -v` shows every probe's status and duration.",
        "fix": "For a crash or hang while initialising CUDA: look at `dmesg` for Xid errors and "
        "at other findings; for a slow filesystem, raise the limit with --timeout.",
    },
)

_CUDA_STAGES = ("cuda_init", "devices", "kernel")
# NVML failures no more specific check explains (a missing or unloaded driver, a version mismatch
# and a lost GPU have codes of their own: no-nvidia-driver, nvml-driver-mismatch, gpu-lost).
_NVML_FAILURES = {
    "bindings-missing": "the nvidia-ml-py bindings are not installed in cudadoctor's environment",
    "no-permission": "this user may not query the driver (permissions on /dev/nvidia*)",
    "uninitialized": "NVML reported it is not initialised",
    "timeout": "the driver did not answer in time",
    "function-missing": "the driver's NVML library lacks a function the bindings need (a very old driver?)",
    "operating-system": "the operating system refused the driver call",
    "unknown-error": "NVML reported an unknown error",
    "error": "NVML failed",
}


@check(PROBE_FAILED)
def probe_failed(fx: Facts) -> Iterator[Finding]:
    nvml = fx.str("nvml.status")
    if nvml in _NVML_FAILURES and not any(p.get("probe") == "nvml" for p in fx.dicts("probe_errors")):
        yield PROBE_FAILED.finding(
            title=f"Could not query the NVIDIA driver (NVML: {nvml}): {_NVML_FAILURES[nvml]}",
            evidence={"nvml.status": nvml, "nvml.error": fx.str("nvml.error"), "nvml.error_code": fx.int("nvml.error_code")},
            fix=Fix(
                ("nvidia-smi", "ls -l /dev/nvidia*") if nvml != "bindings-missing" else ("python -m pip install nvidia-ml-py",),
                "Driver and GPU facts are unknown until NVML answers; nvidia-smi uses the same library and shows the same error.",
            ),
        )
    for p in fx.dicts("probe_errors"):
        name = str(p.get("probe") or "?")
        status = str(p.get("status") or "error")
        message = str(p.get("message") or "")
        if name == "torch" and fx.str("torch.status") == "import-failed":
            continue  # torch-import-failed reports it, with more detail
        stage = fx.str("torch.failed_stage") if name == "torch" else None
        evidence: Dict[str, object] = {"probe": name, "status": status, "message": message[:500]}
        if stage:
            evidence["stage"] = stage
        tail = fx.str("torch.failure.stderr_tail") if name == "torch" else None
        if tail:
            evidence["stderr_tail"] = "\n".join(tail.strip().splitlines()[-6:])
        if name == "nvml" and status == "timeout":
            evidence["nvml.stage"] = fx.str("nvml.stage")
            yield PROBE_FAILED.finding(
                title=f"The NVIDIA driver stopped answering: an NVML call hung ({message})"[:300],
                evidence=evidence,
                fix=Fix(
                    (
                        "sudo dmesg | grep -i -E 'nvrm|xid' | tail",
                        "timeout 30 nvidia-smi || echo 'nvidia-smi hangs too'",
                        "# a driver that hangs usually needs the node drained and rebooted",
                    ),
                    "A driver call that never returns means the driver or a GPU is stuck; CUDA programs will hang the same way.",
                ),
                severity="error",
            )
            continue
        if name == "torch" and stage and stage.startswith(_CUDA_STAGES):
            what = "hung" if status == "timeout" else "crashed"
            yield PROBE_FAILED.finding(
                title=f"PyTorch {what} while {'initialising CUDA' if stage == 'cuda_init' else 'using the GPU'} (stage {stage}): {message}",
                evidence=evidence,
                fix=Fix(
                    ("sudo dmesg | grep -i -E 'nvrm|xid' | tail", "nvidia-smi"),
                    "A crash or hang inside CUDA points at the driver or the GPU itself; the kernel log names Xid errors.",
                ),
                severity="error",
            )
            continue
        yield PROBE_FAILED.finding(
            title=f"The {name} probe {'timed out' if status == 'timeout' else 'failed'}: {message}"[:300],
            evidence=evidence,
            fix=Fix(
                (f"cudadoctor check --timeout 300  # if the {name} probe is merely slow",) if status == "timeout" else (),
                "Facts from this probe are unknown; checks that need them report unknown, never ok.",
            ),
        )


def register():
    return [probe_failed]
