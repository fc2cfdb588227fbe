"""Is each GPU healthy? ECC, memory repair, throttling, PCIe link, compute mode, MIG, memory, loss.

Every check reads NVML's per-device facts (``nvml.devices[]``, see docs/devices.md) and names the
GPU in its evidence as ``gpu`` (NVML index), ``name`` and ``pci_bus_id``, so `cudadoctor devices`
can attach the finding to that GPU. A value NVML could not give is unknown and is never judged.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

from cudadoctor.devices import (
    BUSY_UTILIZATION,
    THROTTLE_REASONS,
    lost_error,
    reason_label,
    reason_names,
)
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

MEMORY_ERRORS_DOC = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"
XID_DOC = "https://docs.nvidia.com/deploy/xid-errors/index.html"

#: Corrected (single-bit) ECC errors at or above which a warning is given. cudadoctor's choice:
#: ECC corrects these, but a count this high since the driver loaded (or over the board's life)
#: is worth a look at row remapping / retired pages and the trend.
CORRECTED_VOLATILE_WARN = 100
CORRECTED_AGGREGATE_WARN = 1000
#: Share of a GPU's memory held by other processes from which it counts as occupied.
OCCUPIED_SHARE = 0.8

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
    signatures=(r"uncorrectable ECC error encountered", r"cudaErrorECCUncorrectable", r"CUDA_ERROR_ECC_UNCORRECTABLE"),
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

GPU_THROTTLED = Code(
    code="gpu-throttled",
    title="The GPU's clocks are being held down by a hardware, thermal or power-brake slowdown",
    area="gpu",
    severity="warning",
    explanation={
        "what": "NVML's current clock-event (throttle) reasons include HW Thermal Slowdown, HW Power "
        "Brake Slowdown, SW Thermal Slowdown or HW Slowdown. Idle, Applications Clocks Setting, "
        "Display Clock Setting, Sync Boost and SW Power Cap are normal and never flagged (a power "
        "cap under full load, or one the owner set, is a choice). HW Slowdown alone can show "
        "briefly during clock changes, so on its own it is reported as info.",
        "why": "Thermal or power-brake slowdown cuts the clocks — often to a fraction — so training "
        "runs slower than the hardware should, and usually points at cooling (fans, airflow, "
        "inlet temperature) or power delivery (a PSU or cable, the board's external power brake).",
        "confirm": "`nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i N` a few times under load: "
        "the Clocks Event Reasons and their counters, the temperature against the slowdown "
        "threshold, the power draw against the limit.",
        "fix": "Check cooling (fans, dust, airflow, data-centre inlet temperature) and power cabling; "
        "HW Power Brake means the board's power-brake signal was asserted (e.g. by the system's "
        "power supply). If it persists with good cooling and power, drain the node and contact "
        "the vendor.",
    },
    links=("https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html",),
)

PCIE_LINK_DEGRADED = Code(
    code="pcie-link-degraded",
    title="The GPU's PCIe link runs narrower (or, while busy, slower) than it can",
    area="gpu",
    severity="warning",
    explanation={
        "what": "The PCIe link width is below the maximum the GPU and slot support (e.g. x8 of "
        f"x16), or the link generation is below its maximum while the GPU is busy (utilisation "
        f"≥ {BUSY_UTILIZATION}%). An idle GPU lowering its generation to save power is normal and "
        "not flagged; a lower generation with unknown utilisation is not judged.",
        "why": "Host↔GPU transfers (data loading, checkpointing, CPU offload) are limited by the "
        "link: x8 halves and one generation down halves the bandwidth again. A link that trained "
        "narrower than its maximum usually means a badly seated card, a riser or retimer problem, "
        "or a slot wired for fewer lanes.",
        "confirm": "`nvidia-smi -q -d PCIE -i N` (or `nvidia-smi --query-gpu=pcie.link.gen.current,"
        "pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv`) while the GPU "
        "is under load; `sudo lspci -vv -s BUS | grep -E 'LnkCap|LnkSta'`.",
        "fix": "Reseat the card (and any riser), move it to a full x16 slot, check BIOS PCIe "
        "settings; on a server, drain the node and have the link checked. The generation check "
        "needs load: run it while a job is on the GPU.",
    },
    links=("https://github.com/NVIDIA/NVSentinel/issues/890",),
)

GPU_COMPUTE_MODE_RESTRICTED = Code(
    code="gpu-compute-mode-restricted",
    title="The GPU's compute mode restricts who may use it (Exclusive-Process or Prohibited)",
    area="gpu",
    severity="warning",
    explanation={
        "what": "The GPU is in Prohibited compute mode (no process may create a CUDA context: error), "
        "or in Exclusive-Process/Exclusive-Thread mode (one process at a time: an error when "
        "another process already holds it, else a warning).",
        "why": "In Prohibited mode every CUDA call fails; in exclusive mode a second process — a "
        "second rank on the same GPU, a notebook left open, a monitoring tool using CUDA — fails with "
        '"CUDA-capable device(s) is/are busy or unavailable".',
        "confirm": "`nvidia-smi -q -d COMPUTE -i N` shows the mode; `nvidia-smi --query-compute-apps="
        "pid,used_memory --format=csv` who holds the GPU.",
        "fix": "Ask the administrator to set the Default mode (`sudo nvidia-smi -c DEFAULT -i N`), "
        "or stop the process holding the GPU, or run one process per GPU as the cluster intends.",
    },
    links=("https://docs.nvidia.com/deploy/nvidia-smi/index.html",),
    signatures=(
        r"CUDA-capable device\(s\) is/are busy or unavailable",
        r"cudaErrorDevicesUnavailable",
        r"all CUDA-capable devices are busy or unavailable",
    ),
)

MIG_NO_INSTANCES = Code(
    code="mig-no-instances",
    title="MIG is enabled on the GPU but no MIG instance exists for this process to use",
    area="gpu",
    severity="error",
    explanation={
        "what": "The GPU is in MIG (Multi-Instance GPU) mode but NVML lists no MIG device on it, so "
        "CUDA enumerates nothing there.",
        "why": "With MIG on, CUDA programs can only run on MIG instances, never on the whole GPU. "
        "With none created (or none exposed to this container), torch.cuda.device_count() does "
        'not count this GPU and work falls back to the CPU or fails with "no CUDA-capable device".',
        "confirm": "`nvidia-smi -L` lists MIG devices under each GPU; `nvidia-smi mig -lgi` lists GPU instances.",
        "fix": "Create instances (`sudo nvidia-smi mig -cgi 1g.10gb,1g.10gb -C -i N` — profile names "
        "from `nvidia-smi mig -lgip`), or disable MIG (`sudo nvidia-smi -mig 0 -i N`, then reset the "
        "GPU). In Kubernetes, request a MIG resource (e.g. nvidia.com/mig-1g.10gb).",
    },
    links=("https://docs.nvidia.com/datacenter/tesla/mig-user-guide/",),
)

GPU_MEMORY_OCCUPIED = Code(
    code="gpu-memory-occupied",
    title="Other processes hold most of the GPU's memory",
    area="gpu",
    severity="warning",
    explanation={
        "what": f"At least {int(OCCUPIED_SHARE * 100)}% of the GPU's memory is in use while this "
        "diagnosis ran, by processes other than cudadoctor's own probe.",
        "why": 'A job started now gets only what is left and fails with "CUDA out of memory" on '
        "a GPU that looks idle to it; on shared machines this is usually another user's job, a "
        "forgotten notebook kernel, or a crashed job whose process lingers.",
        "confirm": "`nvidia-smi --query-compute-apps=pid,used_memory --format=csv` (inside a "
        "container the pids belong to the host and may not be visible).",
        "fix": "Use another GPU (CUDA_VISIBLE_DEVICES), wait for the job, or stop the process "
        "holding the memory (`kill PID` if it is yours).",
    },
    signatures=(r"CUDA out of memory",),
)

PERSISTENCE_MODE_OFF = Code(
    code="persistence-mode-off",
    title="Persistence mode is off on a multi-GPU Linux machine",
    area="gpu",
    severity="info",
    explanation={
        "what": "On Linux with several GPUs, NVML reports persistence mode Disabled.",
        "why": "Without persistence the driver tears the GPUs down when the last client exits and "
        "initialises them again for the next one, which adds seconds to every job start (more with "
        "many GPUs) and loses settings such as application clocks. NVIDIA recommends the "
        "persistence daemon on compute servers.",
        "confirm": "`nvidia-smi -q | grep -i persistence` or the Persistence-M column of `nvidia-smi`.",
        "fix": "Enable the daemon: `sudo systemctl enable --now nvidia-persistenced` (or, legacy, `sudo nvidia-smi -pm 1`).",
    },
    links=("https://docs.nvidia.com/deploy/driver-persistence/index.html",),
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
    signatures=(r"GPU is lost", r"fallen off the bus", r"Unable to determine the device handle for GPU", r"\bXid\b.*\b79\b"),
)


def _devices(fx: Facts) -> List[Dict[str, Any]]:
    return [d for d in fx.dicts("nvml.devices") if isinstance(d.get("index"), int)]


def _who(d: Dict[str, Any]) -> Dict[str, Any]:
    return {"gpu": d.get("index"), "name": d.get("name"), "pci_bus_id": d.get("pci_bus_id")}


def _label(d: Dict[str, Any]) -> str:
    name = d.get("name") if isinstance(d.get("name"), str) else "GPU"
    return f"GPU {d.get('index')} ({name})"


@check(GPU_ECC_ERRORS)
def gpu_ecc_errors(fx: Facts) -> Iterator[Finding]:
    """Uncorrectable ECC errors (volatile: error; aggregate only: warning); many corrected ones: warning."""
    for d in _devices(fx):
        vu = Facts(d).int("ecc_errors.volatile.uncorrected")
        au = Facts(d).int("ecc_errors.aggregate.uncorrected")
        vc = Facts(d).int("ecc_errors.volatile.corrected")
        ac = Facts(d).int("ecc_errors.aggregate.corrected")
        ev = dict(_who(d), volatile_uncorrected=vu, aggregate_uncorrected=au, volatile_corrected=vc, aggregate_corrected=ac)
        i = d.get("index")
        drain = (
            f"sudo nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i {i}",
            f"# drain GPU {i} (stop scheduling work on it), then with no process on it:",
            f"sudo nvidia-smi -r -i {i}  # or reboot the node",
            "# uncorrectable errors again after the reset: contact the vendor (RMA)",
        )
        if vu:
            yield GPU_ECC_ERRORS.finding(
                title=f"{_label(d)} has had {vu} uncorrectable ECC error{'s' if vu != 1 else ''} since the driver loaded",
                evidence=ev,
                fix=Fix(drain, "The reset lets the driver retire or remap the bad memory; until then jobs can hit it again."),
            )
        elif au:
            yield GPU_ECC_ERRORS.finding(
                title=f"{_label(d)} has had {au} uncorrectable ECC error{'s' if au != 1 else ''} over its life (none since the driver loaded)",
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
                title=f"{_label(d)} has corrected {n} ECC errors {when}",
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
    """Row remapping failed (error) or pending, retired pages pending (warning: reset due)."""
    for d in _devices(fx):
        i = d.get("index")
        failure = Facts(d).get("remapped_rows.failure")
        pending = Facts(d).get("remapped_rows.pending")
        pages_pending = Facts(d).get("retired_pages.pending")
        ev = dict(_who(d), remapped_rows=d.get("remapped_rows"), retired_pages=d.get("retired_pages"))
        if failure is True:
            yield GPU_MEMORY_REMAP.finding(
                title=f"{_label(d)}: row remapping failed — the memory has no spare rows left",
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
                title=f"{_label(d)} has memory {what}: a GPU reset is due",
                evidence=ev,
                fix=Fix(
                    (f"# drain GPU {i}, then with no process on it:", f"sudo nvidia-smi -r -i {i}  # or reboot the node"),
                    "The repair is applied at the next reset; until then the faulty memory is still in use.",
                ),
                severity="warning",
            )


@check(GPU_THROTTLED)
def gpu_throttled(fx: Facts) -> Iterator[Finding]:
    """Thermal / power-brake / HW slowdown active; idle, app clocks, SW power cap are normal."""
    for d in _devices(fx):
        names = reason_names(Facts(d).int("clock_event_reasons.mask"))
        if not names:
            continue
        bad = [n for n in names if n in THROTTLE_REASONS]
        if not bad:
            continue
        i = d.get("index")
        sm, sm_max = Facts(d).int("clocks.sm"), Facts(d).int("max_clocks.sm")
        temp, slow = Facts(d).int("temperature_c"), Facts(d).int("temperature_slowdown_c")
        usage, limit = Facts(d).int("power.usage_mw"), Facts(d).int("power.enforced_limit_mw")
        ev = dict(
            _who(d),
            reasons=[reason_label(n) for n in names],
            sm_clock_mhz=sm,
            sm_clock_max_mhz=sm_max,
            temperature_c=temp,
            temperature_slowdown_c=slow,
            power_usage_w=round(usage / 1000) if usage is not None else None,
            power_limit_w=round(limit / 1000) if limit is not None else None,
            utilization_gpu=Facts(d).int("utilization.gpu"),
        )
        labels = ", ".join(reason_label(n) for n in bad)
        clocks = f" (SM clock {sm} of {sm_max} MHz)" if sm and sm_max else ""
        cmds = (
            f"nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER -i {i}  # repeat under load: is it held?",
            "# check fans, airflow, inlet temperature and power cabling; if it persists: drain the node, contact the vendor",
        )
        if bad == ["hw_slowdown"]:
            yield GPU_THROTTLED.finding(
                title=f"{_label(d)} reported HW Slowdown at the moment it was asked{clocks}; confirm it is held",
                evidence=ev,
                fix=Fix(
                    cmds, "HW Slowdown alone can show briefly while clocks change; held over time it halves the clocks or worse."
                ),
                severity="info",
            )
            continue
        heat = f"; {temp} °C against a slowdown threshold of {slow} °C" if temp is not None and slow else ""
        yield GPU_THROTTLED.finding(
            title=f"{_label(d)} is being slowed down: {labels}{clocks}{heat}",
            evidence=ev,
            fix=Fix(cmds, "Thermal and power-brake slowdowns cut the clocks; cooling or power delivery is the usual cause."),
        )


@check(PCIE_LINK_DEGRADED)
def pcie_link_degraded(fx: Facts) -> Iterator[Finding]:
    """Link width below its maximum (always), or generation below its maximum while busy."""
    for d in _devices(fx):
        wc, wm = Facts(d).int("pcie.width_current"), Facts(d).int("pcie.width_max")
        gc, gm = Facts(d).int("pcie.gen_current"), Facts(d).int("pcie.gen_max")
        util = Facts(d).int("utilization.gpu")
        i = d.get("index")
        ev = dict(_who(d), width_current=wc, width_max=wm, gen_current=gc, gen_max=gm, utilization_gpu=util)
        bus_id = d.get("pci_bus_id")
        bus = bus_id if isinstance(bus_id, str) else "BUS"
        confirm = (
            f"nvidia-smi -q -d PCIE -i {i}  # while a job runs on the GPU",
            f"sudo lspci -vv -s {bus[-12:] if bus != 'BUS' else bus} | grep -E 'LnkCap|LnkSta'",
            "# reseat the card / riser, use a full x16 slot, check the BIOS PCIe settings",
        )
        if wc and wm and wc < wm:
            yield PCIE_LINK_DEGRADED.finding(
                title=f"{_label(d)}: PCIe link is x{wc}, the GPU and slot support x{wm}"
                + (f" (Gen{gc} of Gen{gm})" if gc and gm else ""),
                evidence=ev,
                fix=Fix(
                    confirm, "Link width does not drop at idle: a narrower link means fewer lanes trained (seating, riser, slot)."
                ),
            )
        elif gc and gm and gc < gm and util is not None and util >= BUSY_UTILIZATION:
            yield PCIE_LINK_DEGRADED.finding(
                title=f"{_label(d)}: PCIe link runs at Gen{gc} while the GPU is busy ({util}% utilised); it supports Gen{gm}",
                evidence=ev,
                fix=Fix(confirm, "An idle GPU drops its link generation to save power; a busy one should run at its maximum."),
            )


@check(GPU_COMPUTE_MODE_RESTRICTED)
def gpu_compute_mode_restricted(fx: Facts) -> Iterator[Finding]:
    """Prohibited (error), exclusive with a holder (error), exclusive and free (warning)."""
    for d in _devices(fx):
        mode = d.get("compute_mode")
        if mode not in ("Prohibited", "Exclusive_Process", "Exclusive_Thread"):
            continue
        i = d.get("index")
        procs = [p for p in (d.get("processes") or []) if isinstance(p, dict)]
        holders = [
            f"pid {p.get('pid')}" + (f" ({p['used_memory_bytes'] / 2**30:.1f} GiB)" if Facts(p).int("used_memory_bytes") else "")
            for p in procs
        ]
        ev = dict(_who(d), compute_mode=mode, processes=holders)
        reset = f"sudo nvidia-smi -c DEFAULT -i {i}  # administrator: back to the Default compute mode"
        if mode == "Prohibited":
            yield GPU_COMPUTE_MODE_RESTRICTED.finding(
                title=f"{_label(d)} is in Prohibited compute mode: no process may use it for CUDA",
                evidence=ev,
                fix=Fix(
                    (reset, "# or use another GPU: export CUDA_VISIBLE_DEVICES=..."),
                    "Prohibited mode refuses every CUDA context on this GPU.",
                ),
                severity="error",
            )
        elif holders:
            yield GPU_COMPUTE_MODE_RESTRICTED.finding(
                title=f"{_label(d)} is in {mode.replace('_', '-')} mode and already held by {', '.join(holders)}",
                evidence=ev,
                fix=Fix(
                    (
                        "nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
                        "# wait for that process, stop it if it is yours (kill PID), or use another GPU",
                        reset,
                    ),
                    'Exclusive mode allows one CUDA process at a time; a second one gets "busy or unavailable".',
                ),
                severity="error",
            )
        else:
            yield GPU_COMPUTE_MODE_RESTRICTED.finding(
                title=f"{_label(d)} is in {mode.replace('_', '-')} mode: only one process at a time may use it",
                evidence=ev,
                fix=Fix(
                    ("# run one process per GPU (e.g. one rank per GPU, DataLoader workers without CUDA)", reset),
                    'A second process on this GPU gets "CUDA-capable device(s) is/are busy or unavailable".',
                ),
            )


@check(MIG_NO_INSTANCES)
def mig_no_instances(fx: Facts) -> Iterator[Finding]:
    """MIG enabled and NVML lists no MIG device on the GPU."""
    for d in _devices(fx):
        if Facts(d).get("mig_mode.current") is not True:
            continue
        migs = d.get("mig_devices")
        if not isinstance(migs, list) or migs:
            continue  # unknown, or instances exist
        i = d.get("index")
        yield MIG_NO_INSTANCES.finding(
            title=f"{_label(d)} is in MIG mode but has no MIG instance, so CUDA cannot use it",
            evidence=dict(_who(d), mig_mode=d.get("mig_mode"), mig_devices=0),
            fix=Fix(
                (
                    f"sudo nvidia-smi mig -lgip -i {i}  # the profiles this GPU offers",
                    f"sudo nvidia-smi mig -cgi <profile>[,<profile>...] -C -i {i}  # create GPU + compute instances",
                    f"# or turn MIG off: sudo nvidia-smi -mig 0 -i {i}, then reset the GPU",
                ),
                "With MIG on, CUDA runs only on MIG instances; with none, the GPU is invisible to PyTorch.",
            ),
        )


@check(GPU_MEMORY_OCCUPIED)
def gpu_memory_occupied(fx: Facts) -> Iterator[Finding]:
    """Most of a GPU's memory held by other processes (cudadoctor's own torch probe excluded)."""
    own = fx.int("torch.pid")
    for d in _devices(fx):
        total, used = Facts(d).int("memory.total_bytes"), Facts(d).int("memory.used_bytes")
        if not total or used is None:
            continue
        procs = [p for p in (d.get("processes") or []) if isinstance(p, dict)]
        ours = sum(Facts(p).int("used_memory_bytes") or 0 for p in procs if own is not None and p.get("pid") == own)
        others = [p for p in procs if own is None or p.get("pid") != own]
        held = used - ours
        if held < OCCUPIED_SHARE * total:
            continue
        top = sorted(others, key=lambda p: -(Facts(p).int("used_memory_bytes") or 0))[:5]
        who = (
            ", ".join(
                f"pid {p.get('pid')}"
                + (f": {p['used_memory_bytes'] / 2**30:.1f} GiB" if Facts(p).int("used_memory_bytes") else "")
                for p in top
            )
            or "processes this environment cannot see (another container or user)"
        )
        yield GPU_MEMORY_OCCUPIED.finding(
            title=f"{_label(d)}: {held / 2**30:.1f} of {total / 2**30:.1f} GiB are in use by other processes ({who})",
            evidence=dict(_who(d), used_bytes=used, total_bytes=total, processes=top),
            fix=Fix(
                (
                    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
                    "# use another GPU (CUDA_VISIBLE_DEVICES=...), wait, or stop the process if it is yours: kill PID",
                ),
                "A new job only gets the memory that is left and runs out of memory on a GPU that looks idle.",
            ),
        )


@check(PERSISTENCE_MODE_OFF)
def persistence_mode_off(fx: Facts) -> Iterator[Finding]:
    """Linux, not WSL, two or more GPUs, persistence mode off on some."""
    if (fx.str("system.os") or "").lower() != "linux" or fx.bool("system.wsl"):
        return
    devs = _devices(fx)
    if len(devs) < 2:
        return
    off = [d.get("index") for d in devs if d.get("persistence_mode") is False]
    if not off:
        return
    yield PERSISTENCE_MODE_OFF.finding(
        title=f"Persistence mode is off on {len(off)} of {len(devs)} GPUs (GPU {', '.join(str(i) for i in off)})",
        evidence={"gpus_off": off, "gpu_count": len(devs)},
        fix=Fix(
            ("sudo systemctl enable --now nvidia-persistenced", "# legacy alternative: sudo nvidia-smi -pm 1"),
            "Keeping the driver initialised saves seconds on every job start and keeps GPU settings.",
        ),
    )


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
    for d in fx.dicts("nvml.devices"):
        lost = lost_error(d)
        if not lost:
            continue
        code = lost.get("code")
        how = "GPU is lost" if code == 15 else "Unknown Error (how a GPU that fell off the bus often answers)"
        yield GPU_LOST.finding(
            title=f"{_label(d) if d.get('name') else 'GPU ' + str(d.get('index'))}: NVML answers {how}",
            evidence=dict(_who(d), nvml_call=lost.get("call"), nvml_error=lost.get("message"), nvml_code=code),
            fix=Fix(tuple(c.replace("<N>", str(d.get("index"))) for c in fix.commands), fix.why),
        )


def register():
    return [
        gpu_lost,
        gpu_ecc_errors,
        gpu_memory_remap,
        gpu_throttled,
        pcie_link_degraded,
        gpu_compute_mode_restricted,
        mig_no_instances,
        gpu_memory_occupied,
        persistence_mode_off,
    ]
