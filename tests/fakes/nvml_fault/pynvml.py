"""A fake nvidia-ml-py for fault injection, put first on PYTHONPATH by tests.

CUDADOCTOR_FAKE_NVML selects the fault:
  import-error        the module cannot be imported (bindings missing)
  init:<code>         nvmlInit raises NVMLError(<code>) (NVML return codes, nvml.h)
  init:block          nvmlInit never returns
  count:block         nvmlDeviceGetCount never returns (after a successful init)
"""

import os
import time

FAULT = os.environ.get("CUDADOCTOR_FAKE_NVML", "")
if FAULT == "import-error":
    raise ImportError("libnvidia-ml.so.1: cannot open shared object file (fake)")

_MESSAGES = {1: "Uninitialized", 4: "Insufficient Permissions", 9: "Driver Not Loaded", 10: "Timeout",
             12: "NVML Shared Library Not Found", 13: "Function Not Found", 15: "GPU is lost",
             17: "Operating System Error", 18: "RM has detected an NVML/RM version mismatch.", 999: "Unknown Error"}


class NVMLError(Exception):
    def __init__(self, value):
        self.value = value

    def __str__(self):
        return _MESSAGES.get(self.value, "Unknown Error")


def nvmlInit():
    if FAULT == "init:block":
        time.sleep(3600)
    if FAULT.startswith("init:"):
        raise NVMLError(int(FAULT.split(":")[1]))


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return "580.95.05"


def nvmlSystemGetNVMLVersion():
    return "13.580.95.05"


def nvmlSystemGetCudaDriverVersion_v2():
    return 13000


def nvmlDeviceGetCount():
    if FAULT == "count:block":
        time.sleep(3600)
    return 0
