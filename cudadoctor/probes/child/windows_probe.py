"""Child probe (Windows): why a DLL of torch would not load, without loading it.

    python windows_probe.py RESULT.json

Standalone (stdlib only). Runs under the interpreter being diagnosed. It finds torch's package
directory without importing torch, reads the import tables of every DLL in torch\\lib (a small
PE parser), and resolves each imported DLL the way the Windows loader does for torch:
torch\\lib itself (torch adds it with os.add_dll_directory and loads with
LOAD_LIBRARY_SEARCH_DEFAULT_DIRS), the nvidia-* wheels' bin directories, CUDA_PATH\\bin, System32,
and — for loads that fall back to the standard search order — the directories on PATH.
API-set names (api-ms-win-*, ext-ms-*) are resolved by the OS itself.

It also records the Visual C++ runtime DLLs in System32 (and their file versions when the Win32
version API is available), PATH directories that carry CUDA DLLs (a system CUDA or an old torch
can shadow torch's own), and DLLs in torch\\lib that the wheel's RECORD does not list (leftovers of
an older install).

All functions take the paths they read, so tests run them against a fake file tree on any OS.
"""

import json
import os
import re
import struct
import sys
import time

VC_RUNTIME = ("msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll", "msvcp140_1.dll", "concrt140.dll")
CUDA_DLL = re.compile(
    r"^(cudart64_|cublas64_|cublaslt64_|cudnn|cufft64_|curand64_|cusolver64_|cusparse64_|nvrtc64_|nvjitlink|zlibwapi)", re.I
)


class PEError(ValueError):
    pass


def pe_imports(data):
    """DLL names a PE file imports (normal and delay-load), in table order, without duplicates."""
    if len(data) < 0x40 or data[:2] != b"MZ":
        raise PEError("not a PE file (no MZ header)")
    (e_lfanew,) = struct.unpack_from("<I", data, 0x3C)
    if e_lfanew + 24 > len(data) or data[e_lfanew : e_lfanew + 4] != b"PE\0\0":
        raise PEError("not a PE file (no PE signature)")
    coff = e_lfanew + 4
    _machine, nsections, _, _, _, opt_size, _ = struct.unpack_from("<HHIIIHH", data, coff)
    opt = coff + 20
    (magic,) = struct.unpack_from("<H", data, opt)
    if magic == 0x20B:  # PE32+
        dd_off, n_rva_off = opt + 112, opt + 108
    elif magic == 0x10B:  # PE32
        dd_off, n_rva_off = opt + 96, opt + 92
    else:
        raise PEError("unknown optional header magic 0x%x" % magic)
    (n_rva,) = struct.unpack_from("<I", data, n_rva_off)
    dirs = [struct.unpack_from("<II", data, dd_off + 8 * i) for i in range(min(n_rva, 16))]
    sections = []
    sec = opt + opt_size
    for i in range(nsections):
        vsize, vaddr, rawsize, rawptr = struct.unpack_from("<IIII", data, sec + 40 * i + 8)
        sections.append((vaddr, max(vsize, rawsize), rawptr))

    def off(rva):
        for vaddr, size, rawptr in sections:
            if vaddr <= rva < vaddr + size:
                return rva - vaddr + rawptr
        raise PEError("RVA 0x%x outside every section" % rva)

    def cstr(rva):
        o = off(rva)
        end = data.find(b"\0", o, o + 512)
        if end < 0:
            raise PEError("unterminated name")
        return data[o:end].decode("ascii", "replace")

    names = []
    if len(dirs) > 1 and dirs[1][0]:
        o = off(dirs[1][0])
        for _ in range(4096):
            oft, _ts, _fc, name_rva, ft = struct.unpack_from("<IIIII", data, o)
            if not (oft or name_rva or ft):
                break
            names.append(cstr(name_rva))
            o += 20
    if len(dirs) > 13 and dirs[13][0]:
        o = off(dirs[13][0])
        for _ in range(4096):
            fields = struct.unpack_from("<IIIIIIII", data, o)
            if not any(fields):
                break
            names.append(cstr(fields[1]))
            o += 32
    seen, out = set(), []
    for n in names:
        if n.lower() not in seen:
            seen.add(n.lower())
            out.append(n)
    return out


def listdir_lower(d):
    try:
        return {n.lower(): n for n in os.listdir(d)}
    except OSError:
        return {}


def find_torch_dir(path_entries):
    for entry in path_entries:
        d = os.path.join(entry or os.getcwd(), "torch")
        if os.path.isfile(os.path.join(d, "__init__.py")):
            return d
    return None


def recorded_files(site_dir):
    """Lower-cased relative paths the torch wheel's RECORD lists (None when there is no RECORD)."""
    try:
        infos = [n for n in os.listdir(site_dir) if n.lower().startswith("torch-") and n.endswith(".dist-info")]
    except OSError:
        return None
    for info in infos:
        try:
            with open(os.path.join(site_dir, info, "RECORD"), encoding="utf-8", errors="replace") as f:
                return {line.split(",", 1)[0].replace("\\", "/").lower() for line in f if line.strip()}
        except OSError:
            continue
    return None


def file_version(path):
    """File version via the Win32 version API (None elsewhere or when it has none)."""
    if sys.platform != "win32":
        return None
    try:
        import ctypes
        from ctypes import wintypes

        ver = ctypes.WinDLL("version")
        size = ver.GetFileVersionInfoSizeW(path, None)
        if not size:
            return None
        buf = ctypes.create_string_buffer(size)
        if not ver.GetFileVersionInfoW(path, 0, size, buf):
            return None
        p = ctypes.c_void_p()
        n = wintypes.UINT()
        if not ver.VerQueryValueW(buf, "\\", ctypes.byref(p), ctypes.byref(n)):
            return None
        ffi = ctypes.cast(p, ctypes.POINTER(wintypes.DWORD * 13)).contents
        ms, ls = ffi[2], ffi[3]
        return "%d.%d.%d.%d" % (ms >> 16, ms & 0xFFFF, ls >> 16, ls & 0xFFFF)
    except Exception:
        return None


def probe(torch_dir, system32, path_dirs, cuda_path=None, read=None):
    """The Windows DLL facts for the torch package at ``torch_dir``."""
    read = read or (lambda p: open(p, "rb").read())
    out = {"torch_dir": torch_dir, "system32": system32}
    sys_files = listdir_lower(system32)
    out["vc_runtime"] = {
        n: (
            {"path": os.path.join(system32, sys_files[n]), "version": file_version(os.path.join(system32, sys_files[n]))}
            if n in sys_files
            else None
        )
        for n in VC_RUNTIME
    }
    cuda_dirs = []
    for d in path_dirs:
        files = sorted(v for k, v in listdir_lower(d).items() if k.endswith(".dll") and CUDA_DLL.match(k))
        if files:
            cuda_dirs.append({"dir": d, "dlls": files[:50]})
    out["path_cuda_dlls"] = cuda_dirs
    if not torch_dir:
        out["torch_lib"] = None
        return out
    lib = os.path.join(torch_dir, "lib")
    lib_files = listdir_lower(lib)
    site = os.path.dirname(torch_dir)
    # Directories torch itself adds to the DLL search path (torch/__init__.py, _load_dll_libraries).
    search = [lib]
    nvidia = os.path.join(site, "nvidia")
    for sub in sorted(listdir_lower(nvidia).values()):
        for leaf in ("bin", os.path.join("bin", "x86_64")):
            d = os.path.join(nvidia, sub, leaf)
            if os.path.isdir(d):
                search.append(d)
    if cuda_path:
        search.append(os.path.join(cuda_path, "bin"))
    search.append(system32)
    dir_files = {d: listdir_lower(d) for d in search}
    path_files = [(d, listdir_lower(d)) for d in path_dirs]
    dlls = sorted(v for k, v in lib_files.items() if k.endswith(".dll"))
    missing, from_path, unreadable = [], [], []
    for name in dlls:
        try:
            imports = pe_imports(read(os.path.join(lib, name)))
        except (OSError, PEError, struct.error) as e:
            unreadable.append({"dll": name, "error": str(e)[:200]})
            continue
        for imp in imports:
            low = imp.lower()
            if low.startswith(("api-ms-win-", "ext-ms-")):
                continue
            if any(low in files for files in dir_files.values()):
                continue
            hit = next((d for d, files in path_files if low in files), None)
            if hit:
                from_path.append({"dll": imp, "needed_by": name, "found_in": hit})
            else:
                missing.append({"dll": imp, "needed_by": name})
    record = recorded_files(site)
    unlisted = None
    if record is not None:
        unlisted = [n for n in dlls if ("torch/lib/" + n).lower() not in record]
    out["torch_lib"] = {
        "dlls": len(dlls),
        "missing": missing[:100],
        "from_path": from_path[:100],
        "unreadable": unreadable[:20],
        "not_in_record": unlisted,
        "search_dirs": search,
    }
    return out


def main():
    t0 = time.perf_counter()
    path = sys.argv[-1]
    system_root = os.environ.get("SystemRoot") or os.environ.get("SYSTEMROOT") or r"C:\Windows"
    result = probe(
        torch_dir=find_torch_dir(sys.path),
        system32=os.path.join(system_root, "System32"),
        path_dirs=[p for p in os.environ.get("PATH", "").split(os.pathsep) if p][:200],
        cuda_path=os.environ.get("CUDA_PATH"),
    )
    result["status"] = "ok"
    result["elapsed_s"] = round(time.perf_counter() - t0, 4)
    with open(path + ".tmp", "w") as f:
        json.dump(result, f)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
