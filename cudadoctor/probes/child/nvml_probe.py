"""Child probe: ask the NVIDIA driver (NVML, through nvidia-ml-py) about the driver and GPUs.

    python nvml_probe.py RESULT.json

Standalone (stdlib + pynvml). Runs in a child so that a driver call that blocks or crashes
becomes a fact. Every per-device field is asked separately: one unsupported query makes that
field unknown (with the reason), not the whole device.
"""

import json
import os
import sys
import time

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


def save():
    result["elapsed_s"] = round(time.perf_counter() - _t0, 4)
    tmp = _out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, default=str)
    os.replace(tmp, _out)


def text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


def err_info(e):
    return {"code": getattr(e, "value", None), "message": str(e)[:500]}


class Device:
    """Collects fields for one device; a failing query records its error instead."""

    def __init__(self, nv, handle, index):
        self.nv, self.h, self.d = nv, handle, {"index": index, "errors": {}}

    def field(self, key, fn):
        try:
            self.d[key] = fn()
        except self.nv.NVMLError as e:
            self.d[key] = None
            if getattr(e, "value", None) != 3:  # NOT_SUPPORTED is just unknown
                self.d["errors"][key] = err_info(e)
            else:
                self.d["errors"][key] = {"code": 3, "message": "Not Supported"}
        except Exception as e:  # an older binding without the function, etc.
            self.d[key] = None
            self.d["errors"][key] = {"code": None, "message": "%s: %s" % (type(e).__name__, e)}


def collect_device(nv, i):
    h = nv.nvmlDeviceGetHandleByIndex(i)
    dev = Device(nv, h, i)
    f = dev.field
    f("name", lambda: text(nv.nvmlDeviceGetName(h)))
    f("uuid", lambda: text(nv.nvmlDeviceGetUUID(h)))
    f("serial", lambda: text(nv.nvmlDeviceGetSerial(h)))
    f("pci_bus_id", lambda: text(nv.nvmlDeviceGetPciInfo(h).busId))
    f("compute_capability", lambda: "%d.%d" % tuple(nv.nvmlDeviceGetCudaComputeCapability(h)))

    def mem():
        m = nv.nvmlDeviceGetMemoryInfo(h)
        return {"total_bytes": int(m.total), "free_bytes": int(m.free), "used_bytes": int(m.used)}

    f("memory", mem)

    def mig():
        cur, pending = nv.nvmlDeviceGetMigMode(h)
        return {"current": bool(cur), "pending": bool(pending)}

    f("mig_mode", mig)
    f("persistence_mode", lambda: bool(nv.nvmlDeviceGetPersistenceMode(h)))
    modes = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}
    f("compute_mode", lambda: modes.get(nv.nvmlDeviceGetComputeMode(h), "unknown"))
    f("minor_number", lambda: int(nv.nvmlDeviceGetMinorNumber(h)))
    return dev.d


def main():
    result["stage"] = "import"
    save()
    try:
        import pynvml as nv
    except ImportError as e:
        result["status"] = "bindings-missing"
        result["error"] = "nvidia-ml-py is not installed: %s" % e
        save()
        return
    result["bindings_version"] = getattr(nv, "__version__", None)
    result["stage"] = "init"
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
    result["stage"] = "system"
    save()
    for key, fn in (
        ("driver_version", lambda: text(nv.nvmlSystemGetDriverVersion())),
        ("nvml_version", lambda: text(nv.nvmlSystemGetNVMLVersion())),
        ("cuda_driver_version_int", lambda: int(nv.nvmlSystemGetCudaDriverVersion_v2())),
    ):
        try:
            result[key] = fn()
        except Exception as e:
            result[key] = None
            result.setdefault("errors", {})[key] = str(e)[:300]
    v = result.get("cuda_driver_version_int")
    if isinstance(v, int) and v > 0:
        result["cuda_driver_version"] = "%d.%d" % (v // 1000, (v % 1000) // 10)
    try:
        count = nv.nvmlDeviceGetCount()
    except nv.NVMLError as e:
        result["status"] = "error"
        result["error"] = "nvmlDeviceGetCount: %s" % e
        save()
        return
    result["device_count"] = int(count)
    devices = []
    for i in range(count):
        result["stage"] = "device:%d" % i
        save()
        try:
            devices.append(collect_device(nv, i))
        except nv.NVMLError as e:
            devices.append({"index": i, "error": err_info(e)})
        result["devices"] = devices
    result["devices"] = devices
    try:
        nv.nvmlShutdown()
    except Exception:
        pass
    result["status"] = "ok"
    result["stage"] = "done"
    save()


if __name__ == "__main__":
    main()
