"""The knowledge tables taken from NVIDIA's sources (kb/cuda_errors.json, kb/library_errors.json, kb/xid.json):
every entry parses, spot checks against the sources, and the extraction re-run where its sources are installed."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from cudadoctor import kb
from cudadoctor import registry

ROOT = Path(__file__).resolve().parent.parent


def _codes():
    return set(registry.load(plugins=False).codes)


def test_every_error_entry_parses_and_maps_to_a_catalogue_code():
    codes = _codes()
    tables = kb.error_tables()
    assert set(tables) == {label for _f, _k, label in kb.ERROR_TABLES}
    for label, rows in tables.items():
        assert rows, label
        names = [e["name"] for e in rows]
        assert len(names) == len(set(names)), label
        for e in rows:
            assert isinstance(e["value"], int) and e["value"] >= 0 and e["name"], (label, e)
            if "code" in e:
                assert e["code"] in codes, (label, e)
                assert e["confidence"] in ("high", "medium", "low") and len(e["why"]) > 10, (label, e)
            else:
                assert "confidence" not in e and "why" not in e, (label, e)


def test_cuda_error_tables_match_the_headers_on_spot_checks():
    """Values and texts as NVIDIA's CUDA 13.0 headers, libcudart and docs pages have them."""
    rt = {e["name"]: e for e in kb.error_tables()["CUDA runtime API"]}
    drv = {e["name"]: e for e in kb.error_tables()["CUDA driver API"]}
    assert len(drv) == 101 and len(rt) == 134
    assert rt["cudaErrorInsufficientDriver"]["value"] == 35
    assert rt["cudaErrorInsufficientDriver"]["message"] == "CUDA driver version is insufficient for CUDA runtime version"
    assert rt["cudaErrorNoDevice"]["value"] == 100 and rt["cudaErrorNoDevice"]["message"] == "no CUDA-capable device is detected"
    assert rt["cudaErrorNoKernelImageForDevice"]["value"] == 209
    assert rt["cudaErrorStubLibrary"]["value"] == 34 and drv["CUDA_ERROR_STUB_LIBRARY"]["value"] == 34
    assert drv["CUDA_ERROR_NO_BINARY_FOR_GPU"]["value"] == 209 and drv["CUDA_ERROR_UNSUPPORTED_PTX_VERSION"]["value"] == 222
    assert (drv["CUDA_ERROR_SYSTEM_NOT_READY"]["value"], drv["CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"]["value"]) == (802, 803)
    assert drv["CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"]["value"] == 804
    assert rt["cudaErrorSystemDriverMismatch"]["message"] == "system has unsupported display driver / cuda driver combination"
    assert (
        "mismatch between the versions of the display driver and the CUDA driver"
        in drv["CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"]["doc"]
    )
    assert rt["cudaErrorDevicesUnavailable"]["value"] == drv["CUDA_ERROR_DEVICE_UNAVAILABLE"]["value"] == 46
    # The pre-10.1 numbering (CUDA 10.0 Runtime API): 38 no device, 48 no kernel image.
    old = {e["name"]: e for e in kb.error_tables()["CUDA runtime API (CUDA 10.0 and older)"]}
    assert old["cudaErrorNoDevice"]["value"] == 38 and old["cudaErrorNoKernelImageForDevice"]["value"] == 48
    assert old["cudaErrorInsufficientDriver"]["value"] == 35


def test_the_mapping_follows_the_meaning():
    by = {e["name"]: e.get("code") for rows in kb.error_tables().values() for e in rows}
    assert by["cudaErrorInsufficientDriver"] == "driver-too-old"
    assert by["CUDA_ERROR_NO_DEVICE"] == by["cudaErrorNoDevice"] == "no-gpu-visible"
    assert by["CUDA_ERROR_NO_BINARY_FOR_GPU"] == by["cudaErrorNoKernelImageForDevice"] == "gpu-arch-unsupported"
    assert by["CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"] == "cuda-forward-compat"
    assert by["CUDA_ERROR_SYSTEM_NOT_READY"] == "fabric-manager-missing"
    assert by["CUDA_ERROR_STUB_LIBRARY"] == "stub-libcuda"
    assert by["CUDA_ERROR_DEVICE_UNAVAILABLE"] == "gpu-compute-mode-restricted"
    assert by["cudaErrorIllegalAddress"] is None and by["CUDA_ERROR_OUT_OF_MEMORY"] is None
    assert by["CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"] is None  # see benchmarks/kb_from_headers.py


def test_library_tables_match_their_sources_on_spot_checks():
    t = kb.error_tables()
    nccl = {e["name"]: e for e in t["NCCL"]}
    assert nccl["ncclSystemError"]["value"] == 2
    assert nccl["ncclSystemError"]["message"] == "unhandled system error (run with NCCL_DEBUG=INFO for details)"
    assert nccl["ncclRemoteError"]["value"] == 6
    cudnn = {e["name"]: e for e in t["cuDNN"]}
    assert cudnn["CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"]["value"] == 3007
    assert cudnn["CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"]["value"] == 1002
    cudnn8 = {e["name"]: e["value"] for e in t["cuDNN 8"]}
    assert cudnn8["CUDNN_STATUS_NOT_INITIALIZED"] == 1 and cudnn8["CUDNN_STATUS_VERSION_MISMATCH"] == 14
    cublas = {e["name"]: e for e in t["cuBLAS"]}
    assert cublas["CUBLAS_STATUS_ARCH_MISMATCH"]["value"] == 8
    assert (
        cublas["CUBLAS_STATUS_ARCH_MISMATCH"]["message"]
        == "the function requires an architectural feature absent from the device"
    )
    # CUPTI: cupti_result.h (CUDA 13.0); 35 is what profilers print as "failed with error 35"
    cupti = {e["name"]: e for e in t["CUPTI"]}
    assert cupti["CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"]["value"] == 35
    assert cupti["CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"]["code"] == "gpu-perf-counters-restricted"
    assert "restricted access to the NVIDIA GPU performance counters" in cupti["CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"]["message"]
    assert cupti["CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"]["value"] == 39
    assert cupti["CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED"]["value"] == 38
    assert cupti["CUPTI_ERROR_UNKNOWN"]["value"] == 999 and "CUPTI_ERROR_FORCE_INT" not in cupti


def test_xid_table():
    codes = _codes()
    rows = kb._load("xid")["xids"]
    assert len(rows) > 100 and len({r["xid"] for r in rows}) == len(rows)
    for r in rows:
        assert r.get("description") or r.get("mnemonic"), r
        assert r.get("code") in codes | {None}, r
    assert kb.xid(79)["description"] == "GPU has fallen off the bus" and kb.xid(79)["code"] == "gpu-lost"
    assert kb.xid(48)["mnemonic"] == "ROBUST_CHANNEL_GPU_ECC_DBE" and kb.xid(48)["code"] == "gpu-ecc-errors"
    assert kb.xid(63)["code"] == kb.xid(64)["code"] == "gpu-memory-remap"
    assert kb.xid(119)["mnemonic"] == "GSP_RPC_TIMEOUT"
    assert kb.xid(13).get("code") is None and kb.xid(9999) is None
    assert kb.xid(110)["mnemonic"] == "SEC_FAULT_ERROR" and kb.xid(140)["code"] == "gpu-ecc-errors"  # catalog rows


def _nvidia_site():
    for p in sys.path:
        d = Path(p) / "nvidia"
        if (d / "cu13" / "include" / "cuda.h").exists() and (d / "cudnn" / "include" / "cudnn_graph.h").exists():
            return d
    return None


@pytest.mark.skipif(_nvidia_site() is None, reason="NVIDIA's CUDA 13 wheels (torch's dependencies) are not installed here")
def test_tables_match_the_installed_headers():
    """Re-parse the headers the tables were extracted from; the CUDA 13.0 wheels torch 2.14.1 pulls in."""
    spec = importlib.util.spec_from_file_location("kb_from_headers", ROOT / "benchmarks" / "kb_from_headers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    nv = _nvidia_site()
    h = (nv / "cu13" / "include" / "cuda.h").read_text()
    if "#define CUDA_VERSION 13000" not in h:
        pytest.skip("the installed cuda.h is not CUDA 13.0's")
    cu = mod.enum_items(h, r"typedef enum cudaError_enum\s*\{", r"\}\s*CUresult;")
    assert [(e["value"], e["name"]) for e in cu] == [(e["value"], e["name"]) for e in kb.error_tables()["CUDA driver API"]]
    rt = mod.enum_items(
        (nv / "cu13" / "include" / "driver_types.h").read_text(), r"enum __device_builtin__ cudaError\s*\{", r"\};"
    )
    assert [(e["value"], e["name"]) for e in rt] == [(e["value"], e["name"]) for e in kb.error_tables()["CUDA runtime API"]]
    cupti = mod.enum_items(
        (nv / "cu13" / "include" / "cupti_result.h").read_text(),
        r"(?s)typedef enum \{(?=(?:\s|/\*.*?\*/)*CUPTI_SUCCESS)",
        r"\}\s*CUptiResult;",
    )
    assert [(e["value"], e["name"]) for e in cupti if e["name"] != "CUPTI_ERROR_FORCE_INT"] == [
        (e["value"], e["name"]) for e in kb.error_tables()["CUPTI"]
    ]


def test_docs_page_lists_every_table():
    page = (ROOT / "docs" / "kb-tables.md").read_text()
    for name in kb.TABLES:
        assert f"`{name}.json`" in page, name
    assert json.loads((ROOT / "cudadoctor" / "kb" / "xid.json").read_text())["checked"] == "2026-11-27"


def test_host_compiler_table_matches_host_config_h_on_spot_checks():
    """gcc/clang/MSVC limits as each release's crt/host_config.h writes them (read from NVIDIA's nvcc wheels)."""
    rows = kb._load("host_compilers")["cuda"]
    assert list(rows)[:3] == ["11.7", "11.8", "12.0"] and "12.7" not in rows  # there is no CUDA 12.7
    for mm, r in rows.items():
        assert r["release"].startswith(mm + ".") and r["gcc_max"] >= 11 and r["clang_max"] >= 13, mm
        assert 1900 <= r["msvc_min"] < r["msvc_max_exclusive"], mm
    assert kb.host_compiler_limits("12.1")["gcc_max"] == 12  # "gcc versions later than 12 are not supported"
    assert kb.host_compiler_limits("12.4.131")["gcc_max"] == 13 and kb.host_compiler_limits("12.4")["clang_max"] == 17
    assert kb.host_compiler_limits("12.8")["gcc_max"] == 14 and kb.host_compiler_limits("13.0")["gcc_max"] == 15
    assert kb.host_compiler_limits("13.0")["visual_studio"] == [2019, 2022]
    assert kb.host_compiler_limits("11.8")["gcc_max"] == 11 and kb.host_compiler_limits("11.7.99")["clang_max"] == 13
    assert kb.host_compiler_limits("11.6") is None  # no nvcc wheel on PyPI: unknown, never guessed
    assert kb.cuda_accepting_gcc(13) == "12.4" and kb.cuda_accepting_gcc(14) == "12.8" and kb.cuda_accepting_gcc(99) is None
    assert kb.cuda_accepting_gcc(12) == "12.0"  # 11.8's host_config.h refuses gcc 12
    assert kb.cuda_accepting_gcc(7) is None  # 11.7 accepts gcc 7, but so did CUDA 9.2: not the first


def test_nvcc_target_table_matches_ptxas_on_spot_checks():
    assert kb.nvcc_target_releases("sm_120") == ("12.8", kb.nvcc_releases()[-1])
    assert kb.nvcc_target_releases("sm_52") == ("11.7", "12.9")  # CUDA 13 dropped Maxwell to Volta
    assert kb.nvcc_target_releases("sm_90") == ("11.8", kb.nvcc_releases()[-1])  # Hopper arrived in 11.8
    assert kb.nvcc_target_releases("sm_35") == ("11.7", "11.8")  # CUDA 12.0 dropped Kepler
    assert kb.nvcc_target_releases("compute_70")[1] == "12.9"
    assert kb.nvcc_target_releases("sm_90a")[0] == "12.0" and kb.nvcc_target_releases("sm_121")[0] == "12.9"
    assert kb.nvcc_target_releases("sm_110")[0] == "13.0"  # Thor, renamed from sm_101 in CUDA 13
    assert kb.nvcc_target_releases("sm_101")[1] == "12.9"
    assert kb.nvcc_target_releases("compute_30") is None  # dropped before the oldest covered release


def test_host_compiler_and_toolkit_arch_findings_use_the_tables(tmp_path):
    from click.testing import CliRunner

    from cudadoctor.cli import cli

    facts = str(ROOT / "tests" / "fixtures" / "facts" / "hgx-8x-h100-healthy.json")
    err = tmp_path / "e.txt"
    # Real wordings: https://github.com/ggml-org/llama.cpp/issues/9205 (CUDA 12.4-12.6 refusing gcc 14) and
    # https://github.com/adujardin/zed-openpose/issues/6 (CUDA 9.0 refusing gcc 7: older than the table).
    err.write_text(
        "#error -- unsupported GNU version! gcc versions later than 13 are not supported! The nvcc flag "
        "'-allow-unsupported-compiler' can be used to override this version check; however, using an unsupported "
        "host compiler may cause compilation failure or incorrect run time execution. Use at your own risk."
    )
    out = CliRunner().invoke(cli, ["check", "--facts", facts, "--error-file", str(err), "--format", "json"]).output
    f = [f for f in json.loads(out)["findings"] if f["code"] == "host-compiler-unsupported"][0]
    assert any("CUDA 12.8 or newer (its nvcc accepts gcc 14)" in c for c in f["fix"]["commands"]), f
    err.write_text(
        "/usr/local/cuda-9.0/include/crt/host_config.h:119:2: error: #error -- unsupported GNU version! gcc versions "
        "later than 6 are not supported!"
    )
    out = CliRunner().invoke(cli, ["check", "--facts", facts, "--error-file", str(err), "--format", "json"]).output
    f = [f for f in json.loads(out)["findings"] if f["code"] == "host-compiler-unsupported"][0]
    assert "gcc-6" in f["fix"]["commands"][0] and not any("CUDA 12" in c for c in f["fix"]["commands"]), f
    err.write_text("nvcc fatal   : Unsupported gpu architecture 'compute_120'")
    out = CliRunner().invoke(cli, ["check", "--facts", facts, "--error-file", str(err), "--format", "json"]).output
    f = [f for f in json.loads(out)["findings"] if f["code"] == "toolkit-arch-unsupported"][0]
    assert any("compute_120 needs nvcc 12.8 or newer" in c for c in f["fix"]["commands"]), f
    # CUDA 12.0's ptxas no longer lists sm_35/compute_35 (nvcc's refusal in the form above); the table starts at
    # 11.7, so which release accepted it first is not claimed.
    err.write_text("nvcc fatal   : Unsupported gpu architecture 'compute_35'")
    out = CliRunner().invoke(cli, ["check", "--facts", facts, "--error-file", str(err), "--format", "json"]).output
    f = [f for f in json.loads(out)["findings"] if f["code"] == "toolkit-arch-unsupported"][0]
    assert any("compute_35 is accepted by nvcc up to CUDA 11.8, not after" in c for c in f["fix"]["commands"]), f
    err.write_text("nvcc fatal   : Unsupported gpu architecture 'compute_75'")  # an nvcc older than Turing
    out = CliRunner().invoke(cli, ["check", "--facts", facts, "--error-file", str(err), "--format", "json"]).output
    f = [f for f in json.loads(out)["findings"] if f["code"] == "toolkit-arch-unsupported"][0]
    assert not any("needs nvcc 11.7" in c for c in f["fix"]["commands"]), f  # 10.0 already had it
    # CUDA 11.8 refusing gcc 12 (its crt/host_config.h): 12.0 is the first release that accepts it.
    err.write_text(
        "/usr/local/cuda-11.8/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions "
        "later than 11 are not supported!"
    )
    out = CliRunner().invoke(cli, ["check", "--facts", facts, "--error-file", str(err), "--format", "json"]).output
    f = [f for f in json.loads(out)["findings"] if f["code"] == "host-compiler-unsupported"][0]
    assert any("CUDA 12.0 or newer (its nvcc accepts gcc 12)" in c for c in f["fix"]["commands"]), f


def test_torch_wheel_table_matches_pypi_on_spot_checks():
    """PyPI's torch files as `pip index versions --platform --python-version` lists them (kb/torch_wheels.json)."""
    from cudadoctor.checks.platform import _python_reasons

    assert set(kb._load("torch_wheels")["pypi"]) == {"linux-x86_64", "linux-aarch64", "windows", "macos", "macos-x86_64"}
    assert kb.pypi_torch_versions("3.13", "linux-x86_64")[0] == "2.5.0"  # first cp313 wheels
    assert kb.pypi_torch_versions("3.13", "windows")[0] == "2.6.0" == kb.first_torch_for_python("3.13", "windows")[0]
    assert kb.pypi_torch_versions("3.11", "windows")[0] == "2.0.0" == kb.first_torch_for_python("3.11", "windows")[0]
    assert kb.pypi_torch_versions("3.9", "linux-x86_64")[-1] == "2.8.0"  # 2.9 dropped 3.9
    assert kb.pypi_torch_versions("3.12", "macos-x86_64")[-1] == "2.2.2"  # the last Intel-Mac wheels
    assert kb.torch_wheel_on_pypi("2.5.1", "3.13", "linux-aarch64") is False  # aarch64 cp313 starts with 2.6.0
    assert kb.torch_wheel_on_pypi("2.6", "3.13", "linux-aarch64") is True
    assert (
        kb.torch_wheel_on_pypi("2.5.1", "2.7", "windows") is None and kb.torch_wheel_on_pypi("9.9.9", "3.12", "windows") is None
    )
    # python-unsupported reads it where PyPI's wheels are the only ones (macOS, Windows, Linux aarch64).
    assert _python_reasons("3.11.4", 64, "x86_64", "macos-x86_64", "2.3.0") == [
        "PyPI has no torch 2.3.0 wheel for Python 3.11 on macos-x86_64 (its wheels there: torch 2.0.0 to 2.2.2)"
    ]
    assert _python_reasons("3.11.4", 64, "x86_64", "macos-x86_64", "2.2.2") == []
