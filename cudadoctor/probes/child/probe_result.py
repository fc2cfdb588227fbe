"""The result file the child probes share: written whole after every stage, so that whatever a probe
found before a crash or a hang is there for the parent to read.

Imported by the child scripts beside it (their folder is ``sys.path[0]``); stdlib only, Python 3.6+,
like them.
"""

import json
import os
import time


def write_result(result, path, t0):
    """Write ``result``, with the seconds since ``t0`` as ``elapsed_s``, to ``path`` by atomic rename."""
    result["elapsed_s"] = round(time.perf_counter() - t0, 4)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, default=str)
    os.replace(tmp, path)
