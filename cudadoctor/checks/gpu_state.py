"""How each GPU is set and used: throttling, PCIe link, compute mode, MIG, memory held by others, persistence.

Every check reads NVML's per-device facts (``nvml.devices[]``, see docs/devices.md) and names the
GPU in its evidence as ``gpu`` (NVML index), ``name`` and ``pci_bus_id``, so `cudadoctor devices`
can attach the finding to that GPU. A value NVML could not give is unknown and is never judged;
where a check's readings are absent (a paste), the user's error text can still give its code.
"""

from __future__ import annotations

import re

from typing import Iterator, List, Optional, Tuple

from cudadoctor.interpret.gpus import BUSY_UTILIZATION, THROTTLE_REASONS, reason_label, reason_names
from cudadoctor.facts import Facts
from cudadoctor.interpret import is_wsl, os_key
from cudadoctor.errortext import of_facts as evidence_of
from cudadoctor.errortext import kb_document, memfigures

from cudadoctor.model import Code, Finding, Fix, check

from ._common import gpu_label, gpu_who, nvml_devices, search, text_finding, text_of

_OOM_WORDS, held_elsewhere, _human = memfigures.OOM_WORDS, memfigures.held_elsewhere, memfigures.human
_oom_figures, _pool_figures, _threshold = memfigures.oom_figures, memfigures.pool_figures, memfigures.threshold

#: Share of a GPU's memory held by other processes from which it counts as occupied.
OCCUPIED_SHARE = 0.8

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
        "diagnosis ran, by processes other than cudadoctor's own probe; or, from an error text, an "
        "out-of-memory message whose own figures show most of the GPU held OUTSIDE the failing process: "
        "total capacity - free - what the process held (torch's allocator message in every release, "
        "TensorFlow 0.x-1.13's free memory at start-up, CuPy's pool: templates and thresholds in "
        "kb/errors/occupied8.json with their sources); or CUDA's own out-of-memory at context creation, "
        "or the reporter saying the memory stays taken after a program ended. An out-of-memory error "
        "whose figures show the process held the memory itself is an ordinary one (a model or batch "
        "too large) and is not reported.",
        "why": 'A job started now gets only what is left and fails with "CUDA out of memory" on '
        "a GPU that looks idle to it; on shared machines this is usually another user's job, a "
        "forgotten notebook kernel, or a crashed job whose process lingers (DataLoader or "
        "multiprocessing workers of a killed run keep their memory and may not show in nvidia-smi).",
        "confirm": "`nvidia-smi --query-compute-apps=pid,used_memory --format=csv` (inside a "
        "container the pids belong to the host and may not be visible); `sudo fuser -v /dev/nvidia*` "
        "lists every process holding the GPU, also those nvidia-smi does not show.",
        "fix": "Use another GPU (CUDA_VISIBLE_DEVICES), wait for the job, or stop the process "
        "holding the memory (`kill PID` if it is yours).",
    },
    links=(
        "https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
        "https://github.com/pytorch/pytorch/pull/13751",
    ),
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


@check(GPU_THROTTLED)
def gpu_throttled(fx: Facts) -> Iterator[Finding]:
    """Thermal / power-brake / HW slowdown active; idle, app clocks, SW power cap are normal."""
    for d in nvml_devices(fx):
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
            gpu_who(d),
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
                title=f"{gpu_label(d)} reported HW Slowdown at the moment it was asked{clocks}; confirm it is held",
                evidence=ev,
                fix=Fix(
                    cmds, "HW Slowdown alone can show briefly while clocks change; held over time it halves the clocks or worse."
                ),
                severity="info",
            )
            continue
        heat = f"; {temp} °C against a slowdown threshold of {slow} °C" if temp is not None and slow else ""
        yield GPU_THROTTLED.finding(
            title=f"{gpu_label(d)} is being slowed down: {labels}{clocks}{heat}",
            evidence=ev,
            fix=Fix(cmds, "Thermal and power-brake slowdowns cut the clocks; cooling or power delivery is the usual cause."),
        )


@check(PCIE_LINK_DEGRADED)
def pcie_link_degraded(fx: Facts) -> Iterator[Finding]:
    """Link width below its maximum (always), or generation below its maximum while busy."""
    for d in nvml_devices(fx):
        wc, wm = Facts(d).int("pcie.width_current"), Facts(d).int("pcie.width_max")
        gc, gm = Facts(d).int("pcie.gen_current"), Facts(d).int("pcie.gen_max")
        util = Facts(d).int("utilization.gpu")
        i = d.get("index")
        ev = dict(gpu_who(d), width_current=wc, width_max=wm, gen_current=gc, gen_max=gm, utilization_gpu=util)
        bus_id = d.get("pci_bus_id")
        bus = bus_id if isinstance(bus_id, str) else "BUS"
        confirm = (
            f"nvidia-smi -q -d PCIE -i {i}  # while a job runs on the GPU",
            f"sudo lspci -vv -s {bus[-12:] if bus != 'BUS' else bus} | grep -E 'LnkCap|LnkSta'",
            "# reseat the card / riser, use a full x16 slot, check the BIOS PCIe settings",
        )
        if wc and wm and wc < wm:
            yield PCIE_LINK_DEGRADED.finding(
                title=f"{gpu_label(d)}: PCIe link is x{wc}, the GPU and slot support x{wm}"
                + (f" (Gen{gc} of Gen{gm})" if gc and gm else ""),
                evidence=ev,
                fix=Fix(
                    confirm, "Link width does not drop at idle: a narrower link means fewer lanes trained (seating, riser, slot)."
                ),
            )
        elif gc and gm and gc < gm and util is not None and util >= BUSY_UTILIZATION:
            yield PCIE_LINK_DEGRADED.finding(
                title=f"{gpu_label(d)}: PCIe link runs at Gen{gc} while the GPU is busy ({util}% utilised); it supports Gen{gm}",
                evidence=ev,
                fix=Fix(confirm, "An idle GPU drops its link generation to save power; a busy one should run at its maximum."),
            )


@check(GPU_COMPUTE_MODE_RESTRICTED)
def gpu_compute_mode_restricted(fx: Facts) -> Iterator[Finding]:
    """Prohibited (error), exclusive with a holder (error), exclusive and free (warning); without the
    GPUs' compute mode, the user's "busy or unavailable"."""
    if not any(d.get("compute_mode") for d in nvml_devices(fx)):
        wsl = is_wsl(fx) is True  # under WSL the same words come from the WSL GPU layer failing, too
        if os_key(fx) == "windows" and not wsl:
            # A display (WDDM) GPU on Windows is always in the Default compute mode: only a TCC-mode GPU can be made
            # exclusive. Without the mode read, the refusal points first at the driver install.
            yield from text_finding(
                GPU_COMPUTE_MODE_RESTRICTED,
                fx,
                "The GPU refused a CUDA context on Windows: a display GPU there is always in the Default compute mode, "
                "so the likely cause is a broken or partial driver install (reinstall it clean); an exclusive mode is "
                "possible only for a GPU in TCC mode",
                (
                    "nvidia-smi --query-gpu=index,driver_model.current,compute_mode --format=csv  # WDDM/TCC, and the mode",
                    "# reinstall the NVIDIA driver with 'Perform a clean installation' (or DDU first), then reboot",
                    "nvidia-smi -c DEFAULT -i <N>  # administrator, only if a TCC-mode GPU shows an exclusive mode",
                ),
                "CUDA reports 'busy or unavailable' when it cannot create a context: a restricted compute mode, or a "
                "driver that does not serve the GPU properly.",
                severity="warning",
            )
            return
        # Without the GPUs' compute mode the words alone do not show it: the same refusal comes from an unlicensed
        # vGPU guest, a broken driver install and (under WSL) the Windows GPU layer. A warning naming them all and the
        # commands that tell them apart; the error is for a mode the facts show (below).
        yield from text_finding(
            GPU_COMPUTE_MODE_RESTRICTED,
            fx,
            "The GPU refused a CUDA context: an exclusive or prohibited compute mode with another process holding it, "
            "an unlicensed vGPU guest, or a broken driver install"
            + (", or (under WSL) the Windows GPU layer failing after a Windows or driver update" if wsl else ""),
            (
                "nvidia-smi --query-gpu=index,compute_mode --format=csv  # Exclusive_Process / Prohibited: the mode",
                "nvidia-smi --query-compute-apps=pid,used_memory --format=csv  # who holds it",
                "nvidia-smi -q | grep -i -A2 licen  # a vGPU guest: License Status Unlicensed",
                "sudo nvidia-smi -c DEFAULT -i <N>  # administrator: back to the Default compute mode",
                "# none of these: reinstall the NVIDIA driver cleanly and reboot",
            ),
            'Exclusive mode allows one CUDA process at a time and Prohibited none; others get "busy or unavailable".',
            severity="warning",
        )
        return
    for d in nvml_devices(fx):
        mode = d.get("compute_mode")
        if mode not in ("Prohibited", "Exclusive_Process", "Exclusive_Thread"):
            continue
        i = d.get("index")
        procs = [p for p in (d.get("processes") or []) if isinstance(p, dict)]
        holders = [
            f"pid {p.get('pid')}" + (f" ({p['used_memory_bytes'] / 2**30:.1f} GiB)" if Facts(p).int("used_memory_bytes") else "")
            for p in procs
        ]
        ev = dict(gpu_who(d), compute_mode=mode, processes=holders)
        reset = f"sudo nvidia-smi -c DEFAULT -i {i}  # administrator: back to the Default compute mode"
        if mode == "Prohibited":
            yield GPU_COMPUTE_MODE_RESTRICTED.finding(
                title=f"{gpu_label(d)} is in Prohibited compute mode: no process may use it for CUDA",
                evidence=ev,
                fix=Fix(
                    (reset, "# or use another GPU: export CUDA_VISIBLE_DEVICES=..."),
                    "Prohibited mode refuses every CUDA context on this GPU.",
                ),
                severity="error",
            )
        elif holders:
            yield GPU_COMPUTE_MODE_RESTRICTED.finding(
                title=f"{gpu_label(d)} is in {mode.replace('_', '-')} mode and already held by {', '.join(holders)}",
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
                title=f"{gpu_label(d)} is in {mode.replace('_', '-')} mode: only one process at a time may use it",
                evidence=ev,
                fix=Fix(
                    ("# run one process per GPU (e.g. one rank per GPU, DataLoader workers without CUDA)", reset),
                    'A second process on this GPU gets "CUDA-capable device(s) is/are busy or unavailable".',
                ),
            )


@check(MIG_NO_INSTANCES)
def mig_no_instances(fx: Facts) -> Iterator[Finding]:
    """MIG enabled and NVML lists no MIG device on the GPU; without MIG readings, the user's error text."""
    if not any(isinstance(d.get("mig_mode"), dict) for d in nvml_devices(fx)):
        yield from text_finding(
            MIG_NO_INSTANCES,
            fx,
            "The GPU is in MIG mode with no MIG instance, so CUDA cannot use it",
            (
                "nvidia-smi mig -lgi  # the GPU instances that exist",
                "sudo nvidia-smi mig -cgi <profile>[,<profile>...] -C -i <N>  # create GPU + compute instances",
                "# or turn MIG off: sudo nvidia-smi -mig 0 -i <N>, then reset the GPU",
            ),
            "With MIG on, CUDA runs only on MIG instances; with none, the GPU is invisible to PyTorch.",
        )
        return
    for d in nvml_devices(fx):
        if Facts(d).get("mig_mode.current") is not True:
            continue
        migs = d.get("mig_devices")
        if not isinstance(migs, list) or migs:
            continue  # unknown, or instances exist
        i = d.get("index")
        yield MIG_NO_INSTANCES.finding(
            title=f"{gpu_label(d)} is in MIG mode but has no MIG instance, so CUDA cannot use it",
            evidence=dict(gpu_who(d), mig_mode=d.get("mig_mode"), mig_devices=0),
            fix=Fix(
                (
                    f"sudo nvidia-smi mig -lgip -i {i}  # the profiles this GPU offers",
                    f"sudo nvidia-smi mig -cgi <profile>[,<profile>...] -C -i {i}  # create GPU + compute instances",
                    f"# or turn MIG off: sudo nvidia-smi -mig 0 -i {i}, then reset the GPU",
                ),
                "With MIG on, CUDA runs only on MIG instances; with none, the GPU is invisible to PyTorch.",
            ),
        )


#: The out-of-memory messages' figures (torch's, TensorFlow 1.x's, CuPy's) are read in errortext/memfigures.py from the
#: templates of kb/errors/occupied8.json; the same reading gives triage its evidence.
def _held_elsewhere_fix(processes: Optional[List[Tuple[int, float]]] = None) -> Fix:
    named = list(processes or [])[:5]
    who = (
        [
            f"ps -o pid,user,etime,cmd -p {','.join(str(p) for p, _ in named)}  # the processes the message names: "
            + ", ".join(f"{p} ({_human(b)})" for p, b in named),
        ]
        if named
        else []
    )
    return Fix(
        (
            "nvidia-smi --query-compute-apps=pid,used_memory --format=csv  # who holds it",
            *who,
            "sudo fuser -v /dev/nvidia*  # processes nvidia-smi does not list (leftover workers, other containers)",
            "# use another GPU (CUDA_VISIBLE_DEVICES=...), wait, or stop the process if it is yours: kill PID",
        ),
        "The job only gets the memory other processes leave; here most of it was already taken.",
    )


def _oom_held_elsewhere(fx: Facts) -> Optional[Finding]:
    """An out-of-memory error whose own figures show most of the GPU held by something other than this process."""
    got = held_elsewhere(text_of(fx))
    if not got:
        return None  # no figures, or the process itself holds the memory: a model or batch too large, not this code
    if "total" not in got:  # a memory pool's tiny allocation failing (CuPy)
        return GPU_MEMORY_OCCUPIED.finding(
            title=f"An allocation of {_human(got['request'])} failed while this process's memory pool held only "
            f"{_human(got['held'])}: the GPU's memory is held by other processes",
            evidence={
                "user_error.text": got["message"][:400],
                "request_bytes": got["request"],
                "held_by_process_bytes": got["held"],
            },
            fix=_held_elsewhere_fix(),
        )
    total, free, mine, elsewhere = got["total"], got["free"], got["mine"], got["elsewhere"]
    gpu = f"GPU {got['gpu']}" if got["gpu"] else "The GPU"
    ev = {"user_error.text": got["message"][:400], "held_elsewhere_bytes": int(elsewhere), "total_bytes": int(total)}
    if got["template"]["own"] == "none-yet":
        # Logged when the framework started, before it allocated anything (TensorFlow 0.x-1.13's device log).
        title = (
            f"{gpu} had only {_human(free)} of {_human(total)} free when {got['template']['framework'].split(' ')[0]} "
            f"started: {_human(elsewhere)} held by other processes"
            + ("; the out-of-memory error that followed met that memory already taken" if got["failed"] else "")
        )
        return GPU_MEMORY_OCCUPIED.finding(
            title=title, evidence=ev, fix=_held_elsewhere_fix(), severity=None if got["failed"] else "info"
        )
    if got.get("processes"):
        ev["processes"] = [f"pid {p}: {_human(b)}" for p, b in got["processes"][:5]]
    return GPU_MEMORY_OCCUPIED.finding(
        title=f"{gpu} ran out of memory with {_human(elsewhere)} of {_human(total)} held outside this process "
        f"({_human(free)} free, {_human(mine)} its own)",
        evidence=ev,
        fix=_held_elsewhere_fix(got.get("processes")),
    )


#: torch's caching allocator's own out-of-memory message (every release): the failing process was allocating,
#: so only its figures (above) can show the memory held elsewhere.
_ALLOCATOR_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError", re.I)


def _held_elsewhere_said(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, line) of an error-text line of gpu-memory-occupied that is not torch's allocator message:
    CUDA's own out-of-memory at context creation, the user saying the memory was not released."""
    if _oom_figures(text_of(fx)) or _pool_figures(text_of(fx)):
        return None  # the message's figures decide (above): they said this process held it
    for m in sorted(evidence_of(fx).of(GPU_MEMORY_OCCUPIED.code), key=lambda m: -m.score):
        if not _ALLOCATOR_OOM.search(m.line_text) and not _ALLOCATOR_OOM.search(m.text):
            return m.where, m.line_text
    return None


@check(GPU_MEMORY_OCCUPIED)
def gpu_memory_occupied(fx: Facts) -> Iterator[Finding]:
    """Most of a GPU's memory held by other processes (cudadoctor's own torch probe excluded); without
    NVML's readings, the figures of torch's out-of-memory message, else the user's words (CUDA's own
    out-of-memory at context creation, memory not released after a program ended)."""
    if not any(Facts(d).int("memory.total_bytes") for d in nvml_devices(fx)):
        oom = _oom_held_elsewhere(fx)
        if oom:
            yield oom
            return
        said = _held_elsewhere_said(fx)
        if said:
            yield GPU_MEMORY_OCCUPIED.finding(
                title="The GPU's memory is most likely held by another process (a leftover or another job), not by this program",
                evidence={said[0]: said[1]},
                fix=Fix(
                    (
                        "nvidia-smi  # memory in use per GPU, and the processes it can see",
                        "sudo fuser -v /dev/nvidia*  # every process holding the GPU, also those nvidia-smi does not list",
                        "# stop the leftover processes (kill PID), wait for the other job, or use a free GPU: CUDA_VISIBLE_DEVICES=<N>",
                    ),
                    "CUDA needs free GPU memory for its context and libraries before the program allocates anything; "
                    "killed programs' worker processes keep theirs until they end.",
                ),
                severity="warning",
            )
        return
    own = fx.int("torch.pid")
    # Probe readings (taken now, or saved by a probe with its pids) against nvidia-smi pasted in a text.
    live = fx.origin not in ("collect_env", "text")
    text = text_of(fx)
    figures = _oom_figures(text)
    # An out-of-memory error beside a pasted table says the memory was taken when the program met it, unless
    # torch's own figures say the failing process held it itself (the table then shows that process).
    oom_said = bool(_OOM_WORDS.search(text)) and not (
        figures is not None and figures[1] - figures[2] - figures[3] < _threshold("held_elsewhere_share") * figures[1]
    )
    for d in nvml_devices(fx):
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
        who = ", ".join(
            f"pid {p.get('pid')}" + (f": {p['used_memory_bytes'] / 2**30:.1f} GiB" if Facts(p).int("used_memory_bytes") else "")
            for p in top
        ) or ("processes this environment cannot see (another container or user)" if live else "no process listed")
        fix = Fix(
            (
                "nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
                "sudo fuser -v /dev/nvidia*  # also the processes nvidia-smi does not list (leftover workers)",
                "# use another GPU (CUDA_VISIBLE_DEVICES=...), wait, or stop the process if it is yours: kill PID",
            ),
            "A new job only gets the memory that is left and runs out of memory on a GPU that looks idle.",
        )
        ev = dict(gpu_who(d), used_bytes=used, total_bytes=total, processes=top)
        if live:
            yield GPU_MEMORY_OCCUPIED.finding(
                title=f"{gpu_label(d)}: {held / 2**30:.1f} of {total / 2**30:.1f} GiB are in use by other processes ({who})",
                evidence=ev,
                fix=fix,
            )
            continue
        # Pasted nvidia-smi: taken at a moment we do not know, perhaps while the user's own job ran. An
        # out-of-memory error beside it says the memory was taken when the program started.
        yield GPU_MEMORY_OCCUPIED.finding(
            title=f"{gpu_label(d)}: {held / 2**30:.1f} of {total / 2**30:.1f} GiB were in use when nvidia-smi ran ({who})"
            + ("; the out-of-memory error met that memory already taken" if oom_said else ""),
            evidence=dict(ev, out_of_memory_in_text=oom_said),
            fix=fix,
            severity="warning" if oom_said else "info",
        )


@check(PERSISTENCE_MODE_OFF)
def persistence_mode_off(fx: Facts) -> Iterator[Finding]:
    """Linux, not WSL, two or more GPUs, persistence mode off on some; or, from a report, the driver's own start said
    to be slow (kb/errors/b25.json symptoms.slow_driver_init) on a machine not shown to be Windows or WSL."""
    slow = search(fx, kb_document("b25.json")["symptoms"]["slow_driver_init"]["regex"])
    if slow and fx.origin != "live" and os_key(fx) not in ("windows", "macos") and not fx.bool("system.wsl"):
        yield PERSISTENCE_MODE_OFF.finding(
            title="Likely: persistence mode is off, so the driver initialises the GPUs again at every start (cuInit, "
            "nvidia-smi and container starts wait for it)",
            evidence={slow[0]: slow[1]},
            fix=Fix(
                (
                    "nvidia-smi -q | grep -i 'persistence mode'  # Disabled: the driver tears the GPUs down between clients",
                    "sudo systemctl enable --now nvidia-persistenced",
                    "# legacy alternative: sudo nvidia-smi -pm 1",
                ),
                "Without persistence the driver initialises the GPUs for each new client; the daemon keeps them initialised.",
            ),
            severity="warning",
        )
        return
    if (fx.str("system.os") or "").lower() != "linux" or fx.bool("system.wsl"):
        return
    devs = nvml_devices(fx)
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


def register():
    return [
        gpu_throttled,
        pcie_link_degraded,
        gpu_compute_mode_restricted,
        mig_no_instances,
        gpu_memory_occupied,
        persistence_mode_off,
    ]
