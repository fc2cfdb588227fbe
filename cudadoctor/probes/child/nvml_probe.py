"""Child probe: ask the NVIDIA driver (NVML, through nvidia-ml-py) about the driver and GPUs.

    python nvml_probe.py RESULT.json

Standalone (stdlib, pynvml and probe_result.py beside it). Runs in a child so that a driver call that blocks or crashes
becomes a fact. Every per-device field is asked separately: one unsupported query makes that
field unknown (with the reason), not the whole device. The stage written before each call names
the call, so when one blocks the parent knows which.

Health and capability fields (see docs/devices.md): ECC mode and error counts, retired pages and
row remapping, clock-event (throttle) reasons, clocks, memory bus width, PCIe link, utilisation,
power, temperature, compute processes (pid and memory only, never command lines), MIG instances,
NVLink links, and the pairwise P2P status.
"""

import sys
import threading
import time

from probe_result import write_result

_t0 = time.perf_counter()
result = {"probe": "nvml", "status": "running", "stage": "start"}
_out = sys.argv[-1]

# NVML return codes (nvml.h) -> our status words for the load/init step.
INIT_STATUS = {
    1: "uninitialized",
    4: "no-permission",
    9: "driver-not-loaded",
    10: "timeout",
    12: "library-missing",
    13: "function-missing",
    15: "gpu-lost",
    17: "operating-system",
    18: "driver-library-mismatch",
    999: "unknown-error",
}

NOT_SUPPORTED = 3
NOT_FOUND = 6
INVALID_ARGUMENT = 2

# nvml.h constants, spelled out so that an older binding without a name still works.
CLOCK_GRAPHICS, CLOCK_SM, CLOCK_MEM = 0, 1, 2
ERR_CORRECTED, ERR_UNCORRECTED = 0, 1
VOLATILE_ECC, AGGREGATE_ECC = 0, 1
TEMPERATURE_GPU = 0
THRESHOLD_SHUTDOWN, THRESHOLD_SLOWDOWN = 0, 1
RETIRE_SINGLE_BIT, RETIRE_DOUBLE_BIT = 0, 1
P2P_READ, P2P_NVLINK = 0, 2
P2P_STATUS = {
    0: "ok",
    1: "chipset-not-supported",
    2: "gpu-not-supported",
    3: "topology-not-supported",
    4: "disabled-by-regkey",
    5: "not-supported",
    6: "unknown",
}
NVLINK_REMOTE = {0: "gpu", 1: "ibmnpu", 2: "nvswitch", 255: "unknown"}
MAX_NVLINKS = 36  # NVML_NVLINK_MAX_LINKS in current bindings (H100: 18 used)
MAX_PROCESSES = 64
WATCHDOG_S = 0.1  # how often a stage that has not been written out yet is saved


_lock = threading.RLock()
_saved_stage = [None]


def save():
    with _lock:
        write_result(result, _out, _t0)
        _saved_stage[0] = result.get("stage")


def stage(name):
    """Name the call under way. Cheap: the watchdog writes it out only if the call takes long."""
    with _lock:
        result["stage"] = name


def _watchdog():
    # NVML calls go through ctypes, which releases the GIL: while one blocks in the driver this
    # thread still runs, and writes the stage naming that call (the parent reads it after the kill).
    while True:
        time.sleep(WATCHDOG_S)
        try:
            with _lock:
                if result.get("stage") != _saved_stage[0]:
                    save()
        except Exception:  # e.g. the main thread changed the result mid-dump: next tick
            pass


def text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def err_info(e):
    code = getattr(e, "value", None)
    if not isinstance(code, int):
        code = None
    return {"code": code, "message": (str(e) or type(e).__name__)[:500]}


def _set(d, dotted, value):
    parts = dotted.split(".")
    for p in parts[:-1]:
        nxt = d.get(p)
        if not isinstance(nxt, dict):
            nxt = d[p] = {}
        d = nxt
    d[parts[-1]] = value


class Device:
    """Collects fields for one device; a failing query records its error instead.

    Keys may be dotted ("ecc_errors.volatile.uncorrected"): the value goes in a nested dict and
    the error, if any, under the dotted key in ``errors``.
    """

    def __init__(self, nv, handle, index, where="device:%d"):
        self.nv, self.h, self.d = nv, handle, {"index": index, "errors": {}}
        self.where = where % index

    def field(self, key, fn):
        stage("%s:%s" % (self.where, key))
        try:
            value = fn()
        except self.nv.NVMLError as e:
            info = err_info(e)
            if info["code"] == NOT_SUPPORTED:  # NOT_SUPPORTED is just unknown
                info = {"code": NOT_SUPPORTED, "message": "Not Supported"}
        except Exception as e:  # an older binding without the function, a version mismatch...
            info = {"code": None, "message": ("%s: %s" % (type(e).__name__, e))[:500]}
        else:
            with _lock:
                _set(self.d, key, value)
            return True
        with _lock:
            _set(self.d, key, None)
            self.d["errors"][key] = info
        return False

    def value(self, key):
        cur = self.d
        for p in key.split("."):
            if not isinstance(cur, dict):
                return None
            cur = cur.get(p)
        return cur


def _clock_reasons(nv, h):
    """The current clock-event (throttle) reasons bit mask; the newer call first."""
    fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
    if fn is not None:
        try:
            return {"mask": int(fn(h)), "api": "nvmlDeviceGetCurrentClocksEventReasons"}
        except nv.NVMLError as e:
            if getattr(e, "value", None) not in (13,):  # FUNCTION_NOT_FOUND: driver older than the binding
                raise
    return {"mask": int(nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)), "api": "nvmlDeviceGetCurrentClocksThrottleReasons"}


def _processes(nv, h):
    out = []
    for p in list(nv.nvmlDeviceGetComputeRunningProcesses(h))[:MAX_PROCESSES]:
        used = getattr(p, "usedGpuMemory", None)
        item = {"pid": int(p.pid), "used_memory_bytes": int(used) if isinstance(used, int) else None}
        for attr, key in (("gpuInstanceId", "gpu_instance_id"), ("computeInstanceId", "compute_instance_id")):
            v = getattr(p, attr, None)
            if isinstance(v, int) and v != 0xFFFFFFFF:
                item[key] = v
        out.append(item)
    return out


def _mig_devices(nv, h, parent_index):
    count = int(nv.nvmlDeviceGetMaxMigDeviceCount(h))
    out = []
    for k in range(count):
        try:
            mh = nv.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except nv.NVMLError as e:
            if getattr(e, "value", None) in (NOT_FOUND, INVALID_ARGUMENT):
                continue  # an empty slot
            raise
        m = Device(nv, mh, k, where="device:%d:mig:%%d" % parent_index)
        m.field("uuid", lambda: text(nv.nvmlDeviceGetUUID(mh)))
        m.field("memory", lambda: _memory(nv, mh))
        m.field("gpu_instance_id", lambda: int(nv.nvmlDeviceGetGpuInstanceId(mh)))
        m.field("compute_instance_id", lambda: int(nv.nvmlDeviceGetComputeInstanceId(mh)))

        def attrs():
            a = nv.nvmlDeviceGetAttributes(mh)
            return {
                "multiprocessor_count": int(a.multiprocessorCount),
                "gpu_instance_slice_count": int(a.gpuInstanceSliceCount),
                "compute_instance_slice_count": int(a.computeInstanceSliceCount),
                "memory_size_mb": int(a.memorySizeMB),
            }

        m.field("attributes", attrs)
        out.append(m.d)
    return out


def _nvlinks(nv, h):
    """Links in state enabled/disabled, up to the first link index the GPU does not have."""
    links = []
    for link in range(MAX_NVLINKS):
        try:
            state = nv.nvmlDeviceGetNvLinkState(h, link)
        except nv.NVMLError as e:
            code = getattr(e, "value", None)
            if link == 0 and code == NOT_SUPPORTED:
                raise  # no NVLink on this GPU: the field is "Not Supported"
            if code in (NOT_SUPPORTED, INVALID_ARGUMENT, NOT_FOUND):
                break  # past the last link this GPU has
            links.append({"link": link, "error": err_info(e)})
            continue
        item = {"link": link, "active": bool(state)}
        if state:
            for key, fn in (
                ("version", lambda: int(nv.nvmlDeviceGetNvLinkVersion(h, link))),
                ("remote_pci_bus_id", lambda: text(nv.nvmlDeviceGetNvLinkRemotePciInfo(h, link).busId)),
                ("remote_type", lambda: NVLINK_REMOTE.get(int(nv.nvmlDeviceGetNvLinkRemoteDeviceType(h, link)), "unknown")),
            ):
                try:
                    item[key] = fn()
                except Exception:
                    item[key] = None
        links.append(item)
    return links


def _memory(nv, h):
    m = nv.nvmlDeviceGetMemoryInfo(h)
    return {"total_bytes": int(m.total), "free_bytes": int(m.free), "used_bytes": int(m.used)}


def collect_device(nv, i, devices):
    stage("device:%d:handle" % i)
    h = nv.nvmlDeviceGetHandleByIndex(i)
    dev = Device(nv, h, i)
    with _lock:
        devices.append(dev.d)  # visible while it fills in: a blocked call leaves what came before
    f = dev.field
    f("name", lambda: text(nv.nvmlDeviceGetName(h)))
    f("uuid", lambda: text(nv.nvmlDeviceGetUUID(h)))
    f("serial", lambda: text(nv.nvmlDeviceGetSerial(h)))
    f("pci_bus_id", lambda: text(nv.nvmlDeviceGetPciInfo(h).busId))
    f("compute_capability", lambda: "%d.%d" % tuple(nv.nvmlDeviceGetCudaComputeCapability(h)))
    f("memory", lambda: _memory(nv, h))

    def mig():
        cur, pending = nv.nvmlDeviceGetMigMode(h)
        return {"current": bool(cur), "pending": bool(pending)}

    f("mig_mode", mig)
    f("persistence_mode", lambda: bool(nv.nvmlDeviceGetPersistenceMode(h)))
    modes = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}
    f("compute_mode", lambda: modes.get(nv.nvmlDeviceGetComputeMode(h), "unknown"))
    f("minor_number", lambda: int(nv.nvmlDeviceGetMinorNumber(h)))

    # Capability
    f("num_cores", lambda: int(nv.nvmlDeviceGetNumGpuCores(h)))
    f("memory_bus_width", lambda: int(nv.nvmlDeviceGetMemoryBusWidth(h)))
    for key, clock in (("sm", CLOCK_SM), ("memory", CLOCK_MEM), ("graphics", CLOCK_GRAPHICS)):
        f("clocks." + key, lambda c=clock: int(nv.nvmlDeviceGetClockInfo(h, c)))
        f("max_clocks." + key, lambda c=clock: int(nv.nvmlDeviceGetMaxClockInfo(h, c)))

    # Health
    def ecc():
        cur, pending = nv.nvmlDeviceGetEccMode(h)
        return {"current": bool(cur), "pending": bool(pending)}

    if f("ecc_mode", ecc) and dev.value("ecc_mode.current"):
        for cname, counter in (("volatile", VOLATILE_ECC), ("aggregate", AGGREGATE_ECC)):
            for ename, etype in (("corrected", ERR_CORRECTED), ("uncorrected", ERR_UNCORRECTED)):
                f("ecc_errors.%s.%s" % (cname, ename), lambda t=etype, c=counter: int(nv.nvmlDeviceGetTotalEccErrors(h, t, c)))
    f("retired_pages.pending", lambda: bool(nv.nvmlDeviceGetRetiredPagesPendingStatus(h)))
    if dev.value("retired_pages.pending") is not None:  # pre-Ampere datacenter GPUs only
        f("retired_pages.single_bit", lambda: len(nv.nvmlDeviceGetRetiredPages(h, RETIRE_SINGLE_BIT)))
        f("retired_pages.double_bit", lambda: len(nv.nvmlDeviceGetRetiredPages(h, RETIRE_DOUBLE_BIT)))

    def remap():
        corr, unc, pending, failure = nv.nvmlDeviceGetRemappedRows(h)
        return {"correctable": int(corr), "uncorrectable": int(unc), "pending": bool(pending), "failure": bool(failure)}

    f("remapped_rows", remap)
    f("clock_event_reasons", lambda: _clock_reasons(nv, h))
    f("performance_state", lambda: int(nv.nvmlDeviceGetPerformanceState(h)))
    f("pcie.gen_current", lambda: int(nv.nvmlDeviceGetCurrPcieLinkGeneration(h)))
    f("pcie.gen_max", lambda: int(nv.nvmlDeviceGetMaxPcieLinkGeneration(h)))
    f("pcie.gen_gpu_max", lambda: int(nv.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)))
    f("pcie.width_current", lambda: int(nv.nvmlDeviceGetCurrPcieLinkWidth(h)))
    f("pcie.width_max", lambda: int(nv.nvmlDeviceGetMaxPcieLinkWidth(h)))

    def util():
        u = nv.nvmlDeviceGetUtilizationRates(h)
        return {"gpu": int(u.gpu), "memory": int(u.memory)}

    f("utilization", util)
    f("power.limit_mw", lambda: int(nv.nvmlDeviceGetPowerManagementLimit(h)))
    f("power.default_limit_mw", lambda: int(nv.nvmlDeviceGetPowerManagementDefaultLimit(h)))
    f("power.enforced_limit_mw", lambda: int(nv.nvmlDeviceGetEnforcedPowerLimit(h)))
    f("power.usage_mw", lambda: int(nv.nvmlDeviceGetPowerUsage(h)))
    f("temperature_c", lambda: int(nv.nvmlDeviceGetTemperature(h, TEMPERATURE_GPU)))
    f("temperature_slowdown_c", lambda: int(nv.nvmlDeviceGetTemperatureThreshold(h, THRESHOLD_SLOWDOWN)))
    f("temperature_shutdown_c", lambda: int(nv.nvmlDeviceGetTemperatureThreshold(h, THRESHOLD_SHUTDOWN)))
    f("processes", lambda: _processes(nv, h))
    if dev.value("mig_mode.current"):
        f("mig_devices", lambda: _mig_devices(nv, h, i))
    f("nvlinks", lambda: _nvlinks(nv, h))
    return dev.d, h


def p2p_matrix(nv, handles, index):
    """P2P status between every pair of GPUs, for one capability index (read, nvlink)."""
    n = len(handles)
    m = [[None] * n for _ in range(n)]
    for a in range(n):
        for b in range(n):
            if a == b or handles[a] is None or handles[b] is None:
                continue
            stage("p2p:%d:%d:%d" % (index, a, b))
            try:
                m[a][b] = P2P_STATUS.get(int(nv.nvmlDeviceGetP2PStatus(handles[a], handles[b], index)), "unknown")
            except Exception as e:
                m[a][b] = "error: %s" % (str(e) or type(e).__name__)[:100]
    return m


def main():
    threading.Thread(target=_watchdog, daemon=True).start()
    stage("import")
    save()
    try:
        import pynvml as nv
    except ImportError as e:
        result["status"] = "bindings-missing"
        result["error"] = "nvidia-ml-py is not installed: %s" % e
        save()
        return
    result["bindings_version"] = getattr(nv, "__version__", None)
    stage("init")
    save()
    try:
        nv.nvmlInit()
    except nv.NVMLError as e:
        code = getattr(e, "value", None)
        result["status"] = INIT_STATUS.get(code, "error")
        result["error"] = str(e)[:500]
        result["error_code"] = code
        save()
        return
    except Exception as e:
        result["status"] = "error"
        result["error"] = "%s: %s" % (type(e).__name__, e)
        save()
        return
    stage("system")
    for key, fn in (
        ("driver_version", lambda: text(nv.nvmlSystemGetDriverVersion())),
        ("nvml_version", lambda: text(nv.nvmlSystemGetNVMLVersion())),
        ("cuda_driver_version_int", lambda: int(nv.nvmlSystemGetCudaDriverVersion_v2())),
    ):
        stage("system:" + key)
        try:
            result[key] = fn()
        except Exception as e:
            result[key] = None
            result.setdefault("errors", {})[key] = str(e)[:300]
    v = result.get("cuda_driver_version_int")
    if isinstance(v, int) and v > 0:
        result["cuda_driver_version"] = "%d.%d" % (v // 1000, (v % 1000) // 10)
    stage("count")
    try:
        count = int(nv.nvmlDeviceGetCount())
    except Exception as e:
        code = getattr(e, "value", None)
        result["status"] = INIT_STATUS.get(code, "error") if isinstance(code, int) else "error"
        result["error"] = "nvmlDeviceGetCount: %s" % e
        result["error_code"] = code
        save()
        return
    result["device_count"] = count
    devices = result["devices"] = []
    handles = []
    for i in range(count):
        try:
            _, h = collect_device(nv, i, devices)
        except Exception as e:  # the handle itself: a lost GPU answers here
            with _lock:
                devices.append({"index": i, "error": err_info(e)})
            h = None
        handles.append(h)
        save()  # one device done
    if sum(1 for h in handles if h is not None) >= 2:
        result["p2p"] = {"read": p2p_matrix(nv, handles, P2P_READ), "nvlink": p2p_matrix(nv, handles, P2P_NVLINK)}
    stage("shutdown")
    try:
        nv.nvmlShutdown()
    except Exception:
        pass
    with _lock:
        result["status"] = "ok"
        result["stage"] = "done"
        save()


if __name__ == "__main__":
    main()
