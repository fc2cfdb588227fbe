"""Session 24 (issue 21): causes that had no code, each recurring across blind batches and the public threads of its
class."""

from __future__ import annotations

import json

from checkcli import codes, paste_findings, run_check, severities, write

from cudadoctor.facts import new_facts

# numba#10166 (Windows 11, Game Ready 580.88, numba 0.61.2), as the reporter wrote it.
NUMBA_INDEXERROR = """GeForce Game Ready Driver version 580.88 is breaking Numba
I am using Numba version 0.61.2 with Python 3.10.11 on Windows 11 24H2. After updating to version 580.88 of the GeForce Game Ready Driver, executing code that includes the following function declaration results in an exception:

@cuda.jit("void(float32[:,:], float32[:,:])", cache=True)
def interp_kernel_f32(input, output):

Traceback (most recent call last):
...
File "devices.py", line 40, in getitem
return self.lst[devnum]
IndexError: list index out of range
"""
# numba#10188: a segfault in numba's cudadrv after an upgrade to 580.65.06 (trimmed).
NUMBA_SEGFAULT = """System has recently been upgraded to the below drivers
| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |
Fatal Python error: Segmentation fault
  File "/home/u/.conda/envs/CLIC/lib/python3.13/site-packages/numba/cuda/cudadrv/driver.py", line 327 in safe_cuda_api_call
  File "/home/u/.conda/envs/CLIC/lib/python3.13/site-packages/numba/cuda/cudadrv/devices.py", line 120 in _get_or_create_context
"""


def _facts(tmp_path, driver, *dists):
    fx = new_facts("live")
    fx["nvml"] = {"status": "ok", "driver_version": driver}
    fx["packages"] = {
        "complete": True,
        "distributions": [{"name": n, "version": v, "installer": "pip", "listed_by": "pip"} for n, v in dists],
        "listings": {"pip": "listed", "conda": "not-collected"},
    }
    return write(tmp_path, json.dumps(fx), "facts.json")


def test_numba_builtin_cuda_target_on_an_r580_driver(tmp_path):
    for text in (NUMBA_INDEXERROR, NUMBA_SEGFAULT):
        found = paste_findings(tmp_path, text)
        assert severities(found).get("numba-cuda-target-crashes-on-r580") == "error", text[:40]
    # the same crash under driver 576: not this cause
    older = NUMBA_SEGFAULT.replace("580.65.06", "576.57")
    assert "numba-cuda-target-crashes-on-r580" not in codes(paste_findings(tmp_path, older))
    # numba 0.63 has the fix
    fixed = NUMBA_INDEXERROR.replace("Numba version 0.61.2", "Numba version 0.63.1")
    assert "numba-cuda-target-crashes-on-r580" not in codes(paste_findings(tmp_path, fixed))


def test_numba_and_an_r580_driver_installed_with_nothing_failing_is_a_warning(tmp_path):
    found = run_check("--facts", str(_facts(tmp_path, "580.95.05", ("numba", "0.61.2"))))
    assert severities(found).get("numba-cuda-target-crashes-on-r580") == "warning"
    fix = " ".join(c for f in found if f["code"] == "numba-cuda-target-crashes-on-r580" for c in f["fix"]["commands"])
    assert "numba>=0.63" in fix and "numba-cuda" in fix
    # numba-cuda installed beside it, numba 0.63, or a 57x driver: nothing to say
    for facts in (
        _facts(tmp_path, "580.95.05", ("numba", "0.61.2"), ("numba-cuda", "0.20.0")),
        _facts(tmp_path, "580.95.05", ("numba", "0.63.1")),
        _facts(tmp_path, "575.64.05", ("numba", "0.61.2")),
    ):
        assert "numba-cuda-target-crashes-on-r580" not in codes(run_check("--facts", str(facts)))
