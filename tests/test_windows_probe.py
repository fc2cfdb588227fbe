"""The Windows DLL probe, on a real PE from a Windows wheel and on a fake torch tree.

Windows cannot run here; the probe reads files only, so it runs against a fake file tree
laid out as a pip-installed torch on Windows (torch\\lib, nvidia\\*\\bin, System32, PATH).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cudadoctor" / "probes" / "child"))
import windows_probe as wp  # noqa: E402

REAL_PYD = FIXTURES / "pe" / "markupsafe_speedups.cp311-win_amd64.pyd"  # from markupsafe 3.0.4 win_amd64 wheel (PyPI)


def build_pe(imports, delay=()):
    """A minimal valid PE32+ image whose import (and delay-import) tables name ``imports``."""
    sec_rva, sec_raw = 0x1000, 0x200
    n, d = len(imports), len(delay)
    names_off = (n + 1) * 20 + (d + 1) * 32
    blob_names = b""
    name_rvas = []
    for name in list(imports) + list(delay):
        name_rvas.append(sec_rva + names_off + len(blob_names))
        blob_names += name.encode() + b"\0"
    body = b""
    for i in range(n):
        body += struct.pack("<IIIII", 0, 0, 0, name_rvas[i], sec_rva)
    body += b"\0" * 20
    for i in range(d):
        body += struct.pack("<IIIIIIII", 1, name_rvas[n + i], 0, 0, 0, 0, 0, 0)
    body += b"\0" * 32
    body += blob_names
    dos = bytearray(0x40)
    dos[0:2] = b"MZ"
    struct.pack_into("<I", dos, 0x3C, 0x40)
    coff = struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, 240, 0x2022)
    opt = bytearray(240)
    struct.pack_into("<H", opt, 0, 0x20B)
    struct.pack_into("<I", opt, 108, 16)
    struct.pack_into("<II", opt, 112 + 8 * 1, sec_rva, (n + 1) * 20)
    if d:
        struct.pack_into("<II", opt, 112 + 8 * 13, sec_rva + (n + 1) * 20, (d + 1) * 32)
    section = struct.pack("<8sIIIIIIHHI", b".idata", len(body), sec_rva, len(body), sec_raw, 0, 0, 0, 0, 0xC0000040)
    head = bytes(dos) + b"PE\0\0" + coff + bytes(opt) + section
    return head + b"\0" * (sec_raw - len(head)) + body


def test_real_pe_imports():
    got = wp.pe_imports(REAL_PYD.read_bytes())
    assert got == ["python311.dll", "KERNEL32.dll", "VCRUNTIME140.dll", "api-ms-win-crt-runtime-l1-1-0.dll"]


def test_built_pe_round_trips_with_delay_imports():
    assert wp.pe_imports(build_pe(["c10.dll", "MSVCP140.dll"], delay=["nvcuda.dll"])) == ["c10.dll", "MSVCP140.dll", "nvcuda.dll"]


@pytest.mark.parametrize("data", [b"", b"MZ" + b"\0" * 100, b"not a dll at all" * 10, REAL_PYD.read_bytes()[:300]])
def test_garbage_is_a_pe_error(data):
    with pytest.raises((wp.PEError, struct.error)):
        wp.pe_imports(data)


def windows_tree(tmp: Path, fbgemm_imports, system_dlls=("kernel32.dll", "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"),
                 record=True, extra_lib=()):
    site = tmp / "Lib" / "site-packages"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("")
    (lib / "c10.dll").write_bytes(build_pe(["KERNEL32.dll", "MSVCP140.dll", "VCRUNTIME140.dll", "VCRUNTIME140_1.dll"]))
    (lib / "fbgemm.dll").write_bytes(build_pe(fbgemm_imports))
    (lib / "torch_cpu.dll").write_bytes(build_pe(["c10.dll", "fbgemm.dll", "KERNEL32.dll", "api-ms-win-crt-heap-l1-1-0.dll"]))
    for name in extra_lib:
        (lib / name).write_bytes(build_pe(["KERNEL32.dll"]))
    sys32 = tmp / "Windows" / "System32"
    sys32.mkdir(parents=True)
    for name in system_dlls:
        (sys32 / name).write_bytes(b"MZ")
    if record:
        info = site / "torch-2.4.0+cu121.dist-info"
        info.mkdir()
        (info / "RECORD").write_text("\n".join(f"torch/lib/{n},sha256=x,1" for n in ("c10.dll", "fbgemm.dll", "torch_cpu.dll")) + "\n")
    return site / "torch", sys32


def test_torch_240_fbgemm_needs_libomp140(tmp_path):
    """Case pytorch#131662: torch 2.4.0's fbgemm.dll needs libomp140.x86_64.dll, which it did not ship."""
    torch_dir, sys32 = windows_tree(tmp_path, ["KERNEL32.dll", "libomp140.x86_64.dll", "VCRUNTIME140.dll"])
    facts = wp.probe(str(torch_dir), str(sys32), path_dirs=[])
    assert facts["torch_lib"]["missing"] == [{"dll": "libomp140.x86_64.dll", "needed_by": "fbgemm.dll"}]
    assert facts["torch_lib"]["dlls"] == 3 and facts["torch_lib"]["not_in_record"] == []


def test_missing_vc_runtime_is_seen(tmp_path):
    torch_dir, sys32 = windows_tree(tmp_path, ["KERNEL32.dll"], system_dlls=("kernel32.dll", "msvcp140.dll", "vcruntime140.dll"))
    facts = wp.probe(str(torch_dir), str(sys32), path_dirs=[])
    assert facts["vc_runtime"]["vcruntime140_1.dll"] is None and facts["vc_runtime"]["msvcp140.dll"]["path"].endswith("msvcp140.dll")
    assert {"dll": "VCRUNTIME140_1.dll", "needed_by": "c10.dll"} in facts["torch_lib"]["missing"]


def test_dll_found_only_on_path_and_cuda_dlls_on_path_and_leftovers(tmp_path):
    torch_dir, sys32 = windows_tree(tmp_path, ["KERNEL32.dll", "libiomp5md.dll"], extra_lib=("cudnn_ops_infer64_8.dll",))
    path_dir = tmp_path / "CUDA" / "v11.8" / "bin"
    path_dir.mkdir(parents=True)
    for n in ("cudart64_110.dll", "cudnn64_8.dll", "libiomp5md.dll"):
        (path_dir / n).write_bytes(b"MZ")
    facts = wp.probe(str(torch_dir), str(sys32), path_dirs=[str(path_dir)])
    assert facts["torch_lib"]["missing"] == []
    assert facts["torch_lib"]["from_path"] == [{"dll": "libiomp5md.dll", "needed_by": "fbgemm.dll", "found_in": str(path_dir)}]
    assert facts["path_cuda_dlls"] == [{"dir": str(path_dir), "dlls": ["cudart64_110.dll", "cudnn64_8.dll"]}]
    assert facts["torch_lib"]["not_in_record"] == ["cudnn_ops_infer64_8.dll"]


def test_nvidia_wheel_bin_dirs_are_searched(tmp_path):
    torch_dir, sys32 = windows_tree(tmp_path, ["KERNEL32.dll", "cublas64_12.dll"])
    nv = torch_dir.parent / "nvidia" / "cublas" / "bin"
    nv.mkdir(parents=True)
    (nv / "cublas64_12.dll").write_bytes(b"MZ")
    assert wp.probe(str(torch_dir), str(sys32), path_dirs=[])["torch_lib"]["missing"] == []
