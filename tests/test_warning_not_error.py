"""What a report shows that is NOT an error of the machine. TensorFlow's loader logs a CUDA library it cannot open at glog's WARNING level and runs on without the GPU
(tensorflow/stream_executor/platform/default/dso_loader.cc; cudart_stub.cc adds "Ignore above cudart dlerror if you
do not have a GPU set up on your machine"). That line alone is a warning, not an error: a CPU-only machine prints it
too. A real failure beside it (glog's E level, a traceback) keeps the error."""

from __future__ import annotations

from pathlib import Path
from checkcli import SPEAKS, paste_findings


def _findings(tmp_path: Path, text: str) -> list:
    return [(f["severity"], f["code"]) for f in paste_findings(tmp_path, text) if f["severity"] in SPEAKS]


# A public README quoting a transformers pipeline run on a Windows machine without CUDA (found with the code index,
# "Ignore above cudart dlerror"): the run goes on and prints its results.
WINDOWS_CPU_RUN = """$ python pipeline7.py
2022-03-07 09:27:47.076782: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found
2022-03-07 09:27:47.077518: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.
No model was supplied, defaulted to distilroberta-base (https://huggingface.co/distilroberta-base)
"""

# A Linux notebook log (TF 2.x under xla's path) with the same warning.
LINUX_XLA_PATH = """2026-08-08 07:53:49.545821: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /opt/hostedtoolcache/Python/3.9.25/x64/lib
2026-08-08 07:53:49.545845: I tensorflow/compiler/xla/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.
"""

# The same warning followed by a driver failure at glog's E level (a public README of a sentiment-analysis package).
WITH_CUINIT_FAILURE = """2021-04-13 01:06:31.523647: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found
2021-04-13 01:06:44.295588: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'nvcuda.dll'; dlerror: nvcuda.dll not found
2021-04-13 01:06:44.302965: E tensorflow/stream_executor/cuda/cuda_driver.cc:313] failed call to cuInit: UNKNOWN ERROR (303)
"""


def test_tensorflow_loader_warning_alone_is_a_warning(tmp_path):
    for text in (WINDOWS_CPU_RUN, LINUX_XLA_PATH):
        got = _findings(tmp_path, text)
        assert ("warning", "cuda-library-missing") in got, got
        assert not [c for s, c in got if s == "error"], got


def test_a_failure_beside_the_warning_keeps_an_error(tmp_path):
    got = _findings(tmp_path, WITH_CUINIT_FAILURE)
    assert [c for s, c in got if s == "error"], got


# A program's own driver check (the NVENC SDK samples' wording, as OBS/ffmpeg wrappers print it): "Installed 0.0" means
# it could not read the driver at all, which is not a driver too old; a real lower version is.
def test_a_program_that_read_no_driver_version_does_not_show_an_old_driver(tmp_path):
    got = _findings(tmp_path, "Insufficient NVIDIA driver version, Required 378.66, Installed 0.0\nFailed to initialize CUDA.\n")
    assert "driver-too-old" not in [c for s, c in got], got
    got = _findings(tmp_path, "Insufficient NVIDIA driver version, Required 378.66, Installed 375.26\n")
    assert ("error", "driver-too-old") in got, got
