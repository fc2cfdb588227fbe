"""A driver-API entry point the loader cannot resolve: the libcuda found predates the CUDA release that added it
(kb/driver_api_symbols.json, from cudaTypedefs.h) -> driver-too-old, unless the driver shown already offers that release.
Texts are verbatim from public threads (URLs beside them), none from the blind batches."""

from __future__ import annotations

import json
from pathlib import Path

from checkcli import codes, paste_findings, severities

from cudadoctor.checks.driver_compat import missing_entry_point

KB = Path(__file__).resolve().parents[1] / "cudadoctor" / "kb" / "driver_api_symbols.json"


def test_the_table_has_sources_a_date_and_the_versioned_names_from_cuda_h():
    t = json.loads(KB.read_text(encoding="utf-8"))
    assert t["checked"] and all(s["url"].startswith("https://") for s in t["sources"])
    intro = t["introduced"]
    # cuda.h: '#define cuCtxCreate cuCtxCreate_v2' (3.2), cuCtxCreate_v3 (11.4); cuGetProcAddress 11.3, _v2 12.0
    assert intro["cuCtxCreate"] == "2.0" and intro["cuCtxCreate_v2"] == "3.2" and intro["cuCtxCreate_v3"] == "11.4"
    assert intro["cuGetProcAddress"] == "11.3" and intro["cuGetProcAddress_v2"] == "12.0"
    assert intro["cuMemAllocAsync"] == "11.2" and intro["cuDevicePrimaryCtxRelease_v2"] == "11.0"
    assert intro["cuStreamGetCaptureInfo_v2"] == "11.3" and intro["cuTensorMapEncodeTiled"] == "12.0"


def test_entry_point_wordings_of_three_loaders():
    # glibc ld.so, Windows' loader, cuda-python's lookup
    assert missing_entry_point("x.so: undefined symbol: cuDevicePrimaryCtxRelease_v2")[:2] == (
        "cuDevicePrimaryCtxRelease_v2",
        "11.0",
    )
    win = "The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the dynamic link library nvcuda.dll"
    assert missing_entry_point(win)[:2] == ("cuDevicePrimaryCtxReset_v2", "11.0")
    assert missing_entry_point('RuntimeError: Function "cuMemAllocAsync" not found')[:2] == ("cuMemAllocAsync", "11.2")


def test_symbols_older_than_any_driver_minimum_or_unknown_claim_nothing():
    # https://github.com/xmrig/xmrig-cuda/issues/108 : cuInit (2.0) missing is no libcuda at all, not an old one
    assert (
        missing_entry_point("./xmrig: symbol lookup error: /root/xmrig/xmrig-cuda/libxmrig-cuda.so: undefined symbol: cuInit")
        is None
    )
    # https://github.com/chelsea0x3b/cudarc/issues/525 : cuCtxGetDevice_v2 is newer than the table (12.6): no release claimed
    assert missing_entry_point('DlSym { desc: "/lib/aarch64-linux-gnu/libcuda.so: undefined symbol: cuCtxGetDevice_v2" }') is None
    # cudart's names are not driver entry points
    assert missing_entry_point("undefined symbol: cudaGetDriverEntryPointByVersion") is None


def test_cuda_python_on_driver_455_is_driver_too_old(tmp_path):
    # https://github.com/NVIDIA/cuda-python/issues/23 (driver 455.23.05 offers CUDA 11.1; cuMemAllocAsync is 11.2)
    text = 'Driver Version: 455.23.05\nRuntimeError: Function "cuMemAllocAsync" not found\n'
    f = paste_findings(tmp_path, text)
    assert severities(f).get("driver-too-old") == "error", codes(f)
    top = next(x for x in f if x["code"] == "driver-too-old")
    assert "cuMemAllocAsync" in top["title"] and "11.2" in top["title"]


def test_windows_entry_point_without_a_driver_is_a_likely_warning(tmp_path):
    # https://github.com/trexminer/T-Rex/issues/118 (a CUDA 11.1 build on a driver that predates it)
    text = "> The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the dynamic link library nvcuda.dll\n"
    f = paste_findings(tmp_path, text)
    assert "driver-too-old" in codes(f)


def test_a_driver_that_offers_the_release_is_not_called_too_old(tmp_path):
    # same symbol, a driver of branch 535 (CUDA 12.2): the libcuda found is not the driver's (a stub, a stale copy)
    text = "Driver Version: 535.104.05\n./prog: symbol lookup error: ./prog: undefined symbol: cuDevicePrimaryCtxRelease_v2\n"
    f = paste_findings(tmp_path, text)
    assert "driver-too-old" not in codes(f)


def test_the_libcuda_file_name_gives_the_driver(tmp_path):
    # https://github.com/ollama/ollama/issues/5493 (ollama's debug log; /proc/driver/nvidia/version said 418.74)
    text = (
        'time=2024-07-04T17:13:20.135+08:00 level=DEBUG source=gpu.go:385 msg="Unable to load nvcuda" '
        'library=/usr/lib64/libcuda.so.418.74 error="symbol lookup for cuCtxCreate_v3 failed: /usr/lib64/libcuda.so.418.74: '
        'undefined symbol: cuCtxCreate_v3"\n'
    )
    f = paste_findings(tmp_path, text)
    top = [x for x in f if x["code"] == "driver-too-old" and x["severity"] == "error"]
    assert top, codes(f)
    assert "418.74" in top[0]["title"] and "11.4" in top[0]["title"]
