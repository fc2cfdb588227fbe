"""ptxas's "Unsupported .version X; current version is 'Y'" read through the PTX ISA table (kb/ptx_isa.json).

The driver's JIT ("ptxas application ptx input") refusing newer PTX is driver-too-old, naming both CUDA releases and the
driver the newer one needs; a ptxas binary run on a file (Triton, XLA) or nvJitLink is not the driver. Real texts, each
from the thread named beside it.
"""

from __future__ import annotations

import pytest
from checkcli import paste_findings

from cudadoctor.checks.ptx11 import driver_jit_too_old
from cudadoctor.kb import _load

NUMBA_OPENPCDET = (  # https://github.com/open-mmlab/OpenPCDet/issues/934 (fixed by driver 460.91.03 -> 465.19.01)
    "numba.cuda.cudadrv.driver.CudaAPIError: [222] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\n"
    "ptxas application ptx input, line 9; fatal   : Unsupported .version 7.3; current version is '7.2'\n"
    "ptxas fatal   : Ptx assembly aborted due to errors\n"
)
NUMBA_390 = (  # https://github.com/numba/numba/issues/3794 (driver 390.87; cudatoolkit 9.0 instead of 10 fixed it)
    "LinkerError: [218] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\n"
    "ptxas application ptx input, line 9; fatal   : Unsupported .version 6.3; current version is '6.1'\n"
    "ptxas fatal   : Ptx assembly aborted due to errors\n"
    "| NVIDIA-SMI 390.87                 Driver Version: 390.87                    |\n"
)
VITS2 = (  # https://github.com/daniilrobnikov/vits2/issues/20 (numba's cuLinkAddData on the driver's JIT)
    "numba.cuda.cudadrv.driver.CudaAPIError: [222] Call to cuLinkAddData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
    "ptxas application ptx input, line 9; fatal : Unsupported .version 8.7; current version is '8.4'\n"
)
TRITON_FILE = (  # https://github.com/triton-lang/triton/issues/5929 (a CUDA 12.6 ptxas.exe reading Triton's PTX 8.6)
    "ptxas C:\\Users\\JJ\\AppData\\Local\\Temp\\tmpafhfmeeh.ptx, line 5; fatal   : Unsupported .version 8.6; current "
    "version is '8.5'\nptxas fatal   : Ptx assembly aborted due to errors\n"
)
JAX_FILE = (  # https://github.com/jax-ml/jax/issues/25344 (system CUDA 12.2 ptxas; driver 550.127.08)
    "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CustomCall failed: ptxas exited with non-zero error code 65280, "
    "output: ptxas /tmp/tempfile-ng30101-48db254e-784897-628d6ac249c58, line 5; fatal   : Unsupported .version 8.4; "
    "current version is '8.2'\nptxas fatal   : Ptx assembly aborted due to errors\n"
)
NVJITLINK = (  # https://github.com/NVIDIA/numba-cuda/issues/163 (pynvjitlink's own ptxas)
    "pynvjitlink.api.NvJitLinkError: NVJITLINK_ERROR_PTX_COMPILE error when calling nvJitLinkAddData\n"
    "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.7; current version is '8.4'\n"
)


def test_the_table_is_the_ptx_release_history():
    t = _load("ptx_isa")
    assert t["sources"] and t["checked"]
    table = t["ptx_to_cuda"]
    # spot values of NVIDIA's release history: 6.3 = CUDA 10.0, 7.8 = 11.8, 8.5 = 12.5 (12.6 added none), 8.6 = 12.7
    assert (table["6.3"], table["7.8"], table["8.5"], table["8.6"], table["8.8"]) == ("10.0", "11.8", "12.5", "12.7", "12.9")
    versions = [tuple(map(int, k.split("."))) for k in table]
    assert versions == sorted(versions)


@pytest.mark.parametrize(
    "text,want,have",
    [(NUMBA_OPENPCDET, "11.3", "11.2"), (NUMBA_390, "10.0", "9.1"), (VITS2, "12.8", "12.4")],
)
def test_the_drivers_jit_names_both_releases(text, want, have):
    got = driver_jit_too_old(text)
    assert got and (got.want_cuda, got.have_cuda) == (want, have)


@pytest.mark.parametrize("text", [TRITON_FILE, JAX_FILE, NVJITLINK])
def test_a_ptxas_binary_or_nvjitlink_is_not_the_driver(text):
    assert driver_jit_too_old(text) is None


def test_numba_on_driver_390_gets_driver_too_old_with_the_driver_cuda_10_needs(tmp_path):
    got = paste_findings(tmp_path, NUMBA_390)
    old = [f for f in got if f["code"] == "driver-too-old"]
    assert old and old[0]["severity"] == "error"
    assert "CUDA 10.0" in old[0]["title"] and "CUDA 9.1" in old[0]["title"]
    assert any("410.48" in c for c in old[0]["fix"]["commands"])  # CUDA 10.0's GA driver (kb/cuda_drivers.json)


def test_pasted_in_memory_form_without_a_driver_is_still_the_drivers_jit(tmp_path):
    got = paste_findings(tmp_path, NUMBA_OPENPCDET)
    old = [f for f in got if f["code"] == "driver-too-old"]
    assert old and "7.2 (CUDA 11.2)" in old[0]["title"]


@pytest.mark.parametrize("text", [TRITON_FILE, JAX_FILE])
def test_a_toolkit_ptxas_is_not_called_an_old_driver(tmp_path, text):
    got = paste_findings(tmp_path, text)
    assert not [f for f in got if f["code"] == "driver-too-old" and "PTX JIT" in f["title"]]


def test_a_driver_new_enough_for_the_ptx_is_not_blamed(tmp_path):
    text = NUMBA_OPENPCDET + "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\n"
    got = paste_findings(tmp_path, text)
    assert not [f for f in got if f["code"] == "driver-too-old" and "PTX JIT" in f["title"]]
