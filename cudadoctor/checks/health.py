"""Is each GPU's hardware sound? ECC errors, memory repair, a GPU lost from the bus (gpu_state.py: how it is set and used).

Every check reads NVML's per-device facts (``nvml.devices[]``, see docs/devices.md) and names the
GPU in its evidence as ``gpu`` (NVML index), ``name`` and ``pci_bus_id``, so `cudadoctor devices`
can attach the finding to that GPU. A value NVML could not give is unknown and is never judged.
"""

from __future__ import annotations

import re
from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret.gpus import lost_error
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match, gpu_label, gpu_target, gpu_who, nvml_devices, text_finding

MEMORY_ERRORS_DOC = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"
XID_DOC = "https://docs.nvidia.com/deploy/xid-errors/index.html"

#: Corrected (single-bit) ECC errors at or above which a warning is given. cudadoctor's choice:
#: ECC corrects these, but a count this high since the driver loaded (or over the board's life)
#: is worth a look at row remapping / retired pages and the trend.
CORRECTED_VOLATILE_WARN = 100
CORRECTED_AGGREGATE_WARN = 1000

GPU_ECC_ERRORS = Code(
    code="gpu-ecc-errors",
    title="The GPU reports uncorrectable (or many corrected) ECC memory errors",
    area="gpu",
    severity="error",
    explanation={
        "what": "NVML's ECC error counters for a GPU show uncorrectable (double-bit) errors since "
        "the driver loaded (volatile: error) or over the board's life (aggregate only: warning), "
        f"or at least {CORRECTED_VOLATILE_WARN} corrected errors since the driver loaded / "
        f"{CORRECTED_AGGREGATE_WARN} over its life (warning).",
        "why": "An uncorrectable ECC error means data in GPU memory was corrupted: the CUDA context "
        'that touched it is killed ("uncorrectable ECC error encountered") and results computed '
        "before may be wrong. Until the GPU is reset the damaged memory can be hit again. Many "
        "corrected errors are a sign of memory wearing out.",
        "confirm": "`nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i N` shows the counters and "
        "the repair state; `sudo dmesg | grep -i xid` shows Xid 48 (double-bit ECC) or 63/64 "
        "(row remapping) events.",
        "fix": "Drain the GPU (stop scheduling work on it), then reset it (`sudo nvidia-smi -r -i N`, "
        "with no process using it) or reboot, so the driver retires/remaps the bad memory. If "
        "uncorrectable errors come back after the reset, or row remapping failed, contact the vendor "
        "for a replacement (RMA).",
    },
    links=(MEMORY_ERRORS_DOC, XID_DOC),
)

GPU_MEMORY_REMAP = Code(
    code="gpu-memory-remap",
    title="GPU memory repair is pending or failed: a reset (or a replacement) is due",
    area="gpu",
    severity="error",
    explanation={
        "what": "The GPU has memory rows waiting to be remapped (A100 and newer) or pages waiting "
        "to be retired (older datacenter GPUs) — applied at the next GPU reset — or row remapping "
        "failed because the bank has no spare rows left.",
        "why": "Until the reset, the faulty memory is still in use and can corrupt data or kill jobs "
        "again. A failed remapping cannot be repaired in the field: the GPU keeps hitting the bad "
        "memory.",
        "confirm": "`nvidia-smi -q -d ROW_REMAPPER -i N` (Pending: Yes / Remapping Failure Occurred: "
        "Yes) or `nvidia-smi -q -d PAGE_RETIREMENT -i N` (Pending Page Blacklist: Yes).",
        "fix": "Pending: drain the GPU and reset it (`sudo nvidia-smi -r -i N`) or reboot the node. "
        "Failure: take the GPU out of service and contact the vendor for an RMA.",
    },
    links=(MEMORY_ERRORS_DOC, "https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html"),
)

GPU_LOST = Code(
    code="gpu-lost",
    title="A GPU has fallen off the bus (NVML: GPU is lost / Unknown Error)",
    area="gpu",
    severity="error",
    explanation={
        "what": 'NVML answers "GPU is lost" for a GPU (or for initialisation), or "Unknown '
        'Error" when asked for its handle — how a GPU that fell off the PCIe bus (Xid 79) shows.',
        "why": "The driver can no longer reach the GPU: every CUDA call on it fails, jobs on it hang "
        "or die, and it does not come back by itself.",
        "confirm": "`sudo dmesg | grep -i -E 'xid|fallen off the bus'` (Xid 79: GPU has fallen off "
        'the bus); `nvidia-smi` shows ERR! or "Unable to determine the device handle for GPU".',
        "fix": "Drain the node, then try a GPU reset (`sudo nvidia-smi -r -i N`); if that fails, "
        "reboot (a cold power cycle if needed). If it happens again, check power and cooling and "
        "reseat the card; repeated Xid 79 means a hardware fault: contact the vendor.",
    },
    links=(XID_DOC,),
)


_DRAIN = (
    "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT  # which GPU, and whether it has spare memory left",
    "# drain that GPU (stop scheduling work on it), then with no process on it:",
    "sudo nvidia-smi -r -i <N>  # or reboot the node",
    "# uncorrectable errors again after the reset: contact the vendor (RMA)",
)


@check(GPU_ECC_ERRORS)
def gpu_ecc_errors(fx: Facts) -> Iterator[Finding]:
    """Uncorrectable ECC errors (volatile: error; aggregate only: warning); many corrected ones: warning.
    Without counters (a paste, a report without NVML), the user's error text."""
    if not any(isinstance(d.get("ecc_errors"), dict) for d in nvml_devices(fx)):
        yield from text_finding(
            GPU_ECC_ERRORS,
            fx,
            "The error is an uncorrectable ECC error: the GPU's memory failed",
            _DRAIN,
            "The reset lets the driver retire or remap the bad memory; until then jobs can hit it again.",
        )
        return
    for d in nvml_devices(fx):
        vu = Facts(d).int("ecc_errors.volatile.uncorrected")
        au = Facts(d).int("ecc_errors.aggregate.uncorrected")
        vc = Facts(d).int("ecc_errors.volatile.corrected")
        ac = Facts(d).int("ecc_errors.aggregate.corrected")
        ev = dict(gpu_who(d), volatile_uncorrected=vu, aggregate_uncorrected=au, volatile_corrected=vc, aggregate_corrected=ac)
        i = d.get("index")
        drain = (
            f"sudo nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {i}",
            f"# drain GPU {i} (stop scheduling work on it), then with no process on it:",
            f"sudo nvidia-smi -r -i {i}  # or reboot the node",
            "# uncorrectable errors again after the reset: contact the vendor (RMA)",
        )
        if vu:
            yield GPU_ECC_ERRORS.finding(
                title=f"{gpu_label(d)} has had {vu} uncorrectable ECC error{'s' if vu != 1 else ''} since the driver loaded",
                evidence=ev,
                fix=Fix(drain, "The reset lets the driver retire or remap the bad memory; until then jobs can hit it again."),
            )
        elif au:
            yield GPU_ECC_ERRORS.finding(
                title=f"{gpu_label(d)} has had {au} uncorrectable ECC error{'s' if au != 1 else ''} over its life (none since the driver loaded)",
                evidence=ev,
                fix=Fix(
                    (
                        f"sudo nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {i}",
                        "# watch the volatile counter; a new uncorrectable error or a remapping failure means: drain, reset, RMA",
                    ),
                    "Past uncorrectable errors were handled by a reset; the repair state shows whether spare memory is left.",
                ),
                severity="warning",
            )
        elif (vc is not None and vc >= CORRECTED_VOLATILE_WARN) or (ac is not None and ac >= CORRECTED_AGGREGATE_WARN):
            n, when = (
                (vc, "since the driver loaded") if vc is not None and vc >= CORRECTED_VOLATILE_WARN else (ac, "over its life")
            )
            yield GPU_ECC_ERRORS.finding(
                title=f"{gpu_label(d)} has corrected {n} ECC errors {when}",
                evidence=ev,
                fix=Fix(
                    (
                        f"sudo nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {i}",
                        "# if the count keeps rising: drain the GPU, reset it, and contact the vendor",
                    ),
                    "ECC corrected these, but a high and rising count is how failing memory shows first.",
                ),
                severity="warning",
            )


@check(GPU_MEMORY_REMAP)
def gpu_memory_remap(fx: Facts) -> Iterator[Finding]:
    """Row remapping failed (error) or pending, retired pages pending (warning: reset due); without
    those readings, the user's error text (Xid 63/64, a row-remapper failure)."""
    if not any(isinstance(d.get("remapped_rows"), dict) or isinstance(d.get("retired_pages"), dict) for d in nvml_devices(fx)):
        yield from text_finding(
            GPU_MEMORY_REMAP,
            fx,
            "The error text reports GPU memory repair (row remapping or page retirement): a reset is due, or the GPU is failing",
            _DRAIN,
            "The repair is applied at the next reset; a failed remap cannot be repaired in the field.",
        )
        return
    for d in nvml_devices(fx):
        i = d.get("index")
        failure = Facts(d).get("remapped_rows.failure")
        pending = Facts(d).get("remapped_rows.pending")
        pages_pending = Facts(d).get("retired_pages.pending")
        ev = dict(gpu_who(d), remapped_rows=d.get("remapped_rows"), retired_pages=d.get("retired_pages"))
        if failure is True:
            yield GPU_MEMORY_REMAP.finding(
                title=f"{gpu_label(d)}: row remapping failed — the memory has no spare rows left",
                evidence=ev,
                fix=Fix(
                    (
                        f"# take GPU {i} out of service (drain the node) and contact the vendor for an RMA",
                        f"sudo nvidia-smi -q -d ROW_REMAPPER -i {i}",
                    ),
                    "A failed remap cannot be repaired in the field; the GPU keeps using bad memory.",
                ),
            )
        elif pending is True or pages_pending is True:
            what = "rows waiting to be remapped" if pending is True else "pages waiting to be retired"
            yield GPU_MEMORY_REMAP.finding(
                title=f"{gpu_label(d)} has memory {what}: a GPU reset is due",
                evidence=ev,
                fix=Fix(
                    (f"# drain GPU {i}, then with no process on it:", f"sudo nvidia-smi -r -i {i}  # or reboot the node"),
                    "The repair is applied at the next reset; until then the faulty memory is still in use.",
                ),
                severity="warning",
            )


#: A PCI bus id as NVML and nvidia-smi print it (domain:bus:device.function); nvidia-smi's ``-i`` takes it.
_BUS_ID = re.compile(r"(?<![0-9A-Fa-f:])((?:[0-9A-Fa-f]{4}|[0-9A-Fa-f]{8}):[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\b")


@check(GPU_LOST)
def gpu_lost(fx: Facts) -> Iterator[Finding]:
    """NVML says GPU is lost (init or a device), or Unknown Error for a device's handle."""
    fix = Fix(
        (
            "sudo dmesg | grep -i -E 'xid|fallen off the bus'",
            "# drain the node, then try: sudo nvidia-smi -r -i <N>",
            "sudo reboot  # if the reset fails (a cold power cycle if needed)",
            "# if it happens again: check power, cooling and seating; repeated Xid 79 = hardware fault, contact the vendor",
        ),
        "A GPU that fell off the bus does not come back by itself; jobs on it hang or fail.",
    )
    if fx.str("nvml.status") == "gpu-lost":
        yield GPU_LOST.finding(
            title="NVML reports that a GPU is lost (it fell off the bus): the driver cannot reach it",
            evidence={
                "nvml.status": "gpu-lost",
                "nvml.error": fx.str("nvml.error"),
                "nvml.error_code": fx.int("nvml.error_code"),
            },
            fix=fix,
        )
        return
    lost_now = [(d, lost) for d in fx.dicts("nvml.devices") for lost in [lost_error(d)] if lost]
    for d, lost in lost_now:
        code = lost.get("code")
        how = "GPU is lost" if code == 15 else "Unknown Error (how a GPU that fell off the bus often answers)"
        yield GPU_LOST.finding(
            title=f"{gpu_label(d)}: NVML answers {how}",
            evidence=dict(gpu_who(d), nvml_call=lost.get("call"), nvml_error=lost.get("message"), nvml_code=code),
            fix=Fix(tuple(c.replace("<N>", gpu_target(d)) for c in fix.commands), fix.why),
        )
    if not lost_now:
        # GPUs listed as answering (collect_env, or NVML at another moment) do not contradict an error that says one
        # fell off the bus: a lost GPU answers again after a reboot, and the report is often taken after it.
        said = error_match(fx, GPU_LOST)
        if said:
            bus = _BUS_ID.search(said[1])
            target = bus.group(1) if bus else "<N>"
            yield GPU_LOST.finding(
                title="The error says a GPU " + (f"({target}) " if bus else "") + "fell off the bus: the driver cannot reach it",
                evidence={said[0]: said[1]},
                fix=Fix(tuple(c.replace("<N>", target) for c in fix.commands), fix.why),
            )


def register():
    return [gpu_lost, gpu_ecc_errors, gpu_memory_remap]
