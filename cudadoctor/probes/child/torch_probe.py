"""Child probe: import torch and ask it what it can do. Run as a script, never imported.

    python torch_probe.py [--no-kernel] RESULT.json

Standalone on purpose (stdlib and probe_result.py beside it, Python 3.6+): it runs under the
interpreter being diagnosed, which may not have cudadoctor installed. It writes its findings to RESULT.json
after every stage (atomic rename), with ``stage`` naming the stage under way, so if torch
crashes or hangs the parent still knows everything up to that point and where it stopped.
"""

import gc
import os
import sys
import time
import traceback
import warnings

from probe_result import write_result

CUDA_LIB_MARKERS = (
    "libcuda.",
    "libcudart",
    "libcublas",
    "libcublaslt",
    "libcudnn",
    "libnvrtc",
    "libnvjitlink",
    "libcusparse",
    "libcufft",
    "libcurand",
    "libcusolver",
    "libnccl",
    "libnvtoolsext",
    "libnvtx",
    "libcupti",
    "libnvidia-ml",
    "libtorch_cuda",
    "libc10_cuda",
    "libcufile",
    "libnvshmem",
    "libcudss",
    "libnvperf",
    "libnvidia-ptxjitcompiler",
    "libnvidia-nvvm",
    "libcaffe2_nvrtc",
    # Windows DLL names
    "cudart64",
    "cublas64",
    "cublaslt64",
    "cudnn",
    "nvrtc64",
    "nvjitlink",
    "cusparse64",
    "cufft64",
    "curand64",
    "cusolver64",
    "nvcuda.dll",
    "nvml.dll",
    "c10_cuda.dll",
    "torch_cuda.dll",
    "zlibwapi",
    "libomp140",
    "fbgemm.dll",
    "msvcp140",
    "vcruntime140",
    "nvtoolsext64",
    "caffe2_nvrtc",
)

result = {"probe": "torch", "stage": "start", "status": "running", "python": sys.version.split()[0], "pid": os.getpid()}
_out = sys.argv[-1]
_t0 = time.perf_counter()
# The parent's "result is final" pipe: kept from torch and from anything it starts.
_notify_env = os.environ.pop("CUDADOCTOR_NOTIFY_FD", "")
_notify_fd = int(_notify_env) if _notify_env.isdigit() else None
if _notify_fd is not None:
    try:
        os.set_inheritable(_notify_fd, False)
    except OSError:
        _notify_fd = None


def save():
    write_result(result, _out, _t0)


def stage(name):
    result["stage"] = name
    save()


def exc_info(e):
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return {
        "type": type(e).__name__,
        "message": str(e)[:4000],
        "traceback_tail": "".join(tb)[-3000:],
    }


# -- What the import cost in compiling: modules compiled from source because no current .pyc was there, and
# whether their caches could be written (so only this import paid) or not (every import pays).

NETWORK_FS = ("nfs", "nfs4", "lustre", "gpfs", "cifs", "smb3", "smbfs", "9p", "ceph", "beegfs", "wekafs", "panfs", "fuse")


class CompileCounter:
    """Counts, around one import, the modules SourceLoader compiled from source (no current bytecode cache) and
    the seconds spent compiling them. A wrapper around CPython's own step: the import itself is unchanged."""

    def __init__(self):
        self.compiled, self.seconds, self.paths = 0, 0.0, []
        self._loader = self._orig = None

    def __enter__(self):
        try:
            import importlib._bootstrap_external as be

            self._loader, self._orig = be.SourceLoader, be.SourceLoader.source_to_code
        except (ImportError, AttributeError):
            return self
        orig, counter = self._orig, self

        def source_to_code(loader, data, path, *args, **kwargs):
            t = time.perf_counter()
            try:
                return orig(loader, data, path, *args, **kwargs)
            finally:
                counter.compiled += 1
                counter.seconds += time.perf_counter() - t
                if len(counter.paths) < 4000:
                    counter.paths.append(path)

        self._loader.source_to_code = source_to_code
        return self

    def __exit__(self, *exc):
        if self._loader is not None:
            self._loader.source_to_code = self._orig
        return False


def filesystem_of(path):
    """(fstype, mount point) of the mount holding ``path``, from /proc/self/mountinfo (Linux); (None, None) elsewhere."""
    try:
        real = os.path.realpath(path)
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return None, None
    best = (None, None)
    for ln in lines:
        left, _, right = ln.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or not rfields:
            continue
        mnt = fields[4].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[1] or ""):
            best = (rfields[0], mnt)
    return best


def bytecode_facts(counter, torch_dir, started_unix):
    """The compile cost of the import and why its caches were missing: written now, or not writable."""
    import importlib.util

    under = [p for p in counter.paths if torch_dir and p.startswith(torch_dir + os.sep)]
    sample = counter.paths[:: max(1, len(counter.paths) // 40)][:40]
    written = 0
    for src in sample:
        try:
            written += os.stat(importlib.util.cache_from_source(src)).st_mtime >= started_unix - 1
        except (OSError, NotImplementedError, ValueError):
            pass
    fstype, mount = filesystem_of(torch_dir) if torch_dir else (None, None)
    return {
        "compiled_modules": counter.compiled,
        "compiled_in_torch": len(under),
        "compile_s": round(counter.seconds, 3),
        "cache_written_sample": [written, len(sample)],
        "dont_write_bytecode": bool(sys.flags.dont_write_bytecode),
        "pythondontwritebytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "pycache_prefix": getattr(sys, "pycache_prefix", None),
        "torch_dir_writable": os.access(torch_dir, os.W_OK) if torch_dir else None,
        "filesystem": fstype,
        "mount_point": mount,
        "network_filesystem": bool(fstype) and fstype.split(".")[0] in NETWORK_FS,
    }


def loaded_libraries():
    """CUDA-related shared libraries this process has mapped, with paths."""
    paths = []
    if sys.platform.startswith("linux"):
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].startswith("/"):
                        paths.append(parts[5].strip().replace(" (deleted)", ""))
        except OSError as e:
            return {"error": str(e), "libraries": []}
    elif sys.platform == "win32":
        paths = _windows_modules()
    elif sys.platform == "darwin":
        return {"error": "not supported on macOS", "libraries": []}
    seen = []
    for p in paths:
        base = os.path.basename(p).lower()
        if any(m in base for m in CUDA_LIB_MARKERS) and p not in seen:
            seen.append(p)
    return {"libraries": [{"name": os.path.basename(p), "path": p, "realpath": os.path.realpath(p)} for p in seen]}


def _windows_modules():
    import ctypes
    from ctypes import wintypes

    psapi = ctypes.WinDLL("psapi")
    kernel32 = ctypes.WinDLL("kernel32")
    proc = kernel32.GetCurrentProcess()
    arr = (wintypes.HMODULE * 4096)()
    needed = wintypes.DWORD()
    if not psapi.EnumProcessModules(proc, arr, ctypes.sizeof(arr), ctypes.byref(needed)):
        return []
    n = min(needed.value // ctypes.sizeof(wintypes.HMODULE), 4096)
    out = []
    buf = ctypes.create_unicode_buffer(1024)
    for i in range(n):
        if psapi.GetModuleFileNameExW(proc, arr[i], buf, 1024):
            out.append(buf.value)
    return out


def jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return str(v)


def device_properties(torch, i):
    props = torch.cuda.get_device_properties(i)
    d = {"index": i}
    for k in dir(props):
        if k.startswith("_"):
            continue
        try:
            v = getattr(props, k)
        except Exception:
            continue
        if callable(v):
            continue
        d[k] = jsonable(v)
    if "major" in d and "minor" in d:
        d["capability"] = "%s.%s" % (d["major"], d["minor"])
    return d


def peer_access(torch, n):
    """torch.cuda.can_device_access_peer(i, j) for every pair (None on the diagonal or on error)."""
    m = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i != j:
                try:
                    m[i][j] = bool(torch.cuda.can_device_access_peer(i, j))
                except BaseException:
                    m[i][j] = None
    return m


def read_version_py(pkg_dir):
    """__version__ and the CUDA variant from a package's version.py, read as text."""
    import re

    out = {}
    try:
        with open(os.path.join(pkg_dir, "version.py")) as f:
            text = f.read(20000)
    except OSError:
        return out
    m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", text, re.M)
    if m:
        out["version"] = m.group(1)
    m = re.search(r"^cuda\s*=\s*['\"]([^'\"]+)", text, re.M)
    if m:
        out["cuda"] = m.group(1)
    return out


def load_extension(torch, name, pkg_dir):
    """Load a companion's compiled extension into this torch, the step its import depends on.

    Much faster than importing the package (torchvision's import alone costs as much as torch's),
    and the loader's own message names the real cause (an undefined symbol, a missing library)
    where the import would only say "operator torchvision::nms does not exist".
    """
    import glob

    info = {"method": "extension", "location": os.path.join(pkg_dir, "__init__.py")}
    info.update(read_version_py(pkg_dir))
    if name == "torchvision":
        pats = ["_C.so", "_C*.so", "_C.pyd", "_C*.pyd"]
    else:
        pats = ["lib/libtorchaudio.so", "lib/_torchaudio*.so", "lib/libtorchaudio.pyd", "lib/_torchaudio*.pyd"]
    libs = []
    for pat in pats:
        for p in sorted(glob.glob(os.path.join(pkg_dir, pat))):
            if p not in libs:
                libs.append(p)
    if not libs:
        info["extension"] = None
        return info
    info["extension"] = libs[0]
    try:
        torch.ops.load_library(libs[0])
        info["extension_loaded"] = True
    except BaseException as e:
        info["extension_loaded"] = False
        info["extension_error"] = str(e)[:1000]
        try:  # the loader's own words: undefined symbol, missing library...
            import ctypes

            ctypes.CDLL(libs[0])
        except OSError as e2:
            info["loader_error"] = str(e2)[:1000]
        except BaseException:
            pass
    if name == "torchvision" and info.get("extension_loaded"):
        try:
            info["cuda_version_op"] = int(torch.ops.torchvision._cuda_version())
        except BaseException as e:
            info["cuda_version_op_error"] = str(e)[:500]
    return info


def full_import(torch, name):
    info = {"method": "import"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            mod = __import__(name)
            info["imported"] = True
            info["version"] = str(getattr(mod, "__version__", "")) or None
            mv = getattr(mod, "version", None)
            info["cuda"] = getattr(mv, "cuda", None)
            info["location"] = getattr(mod, "__file__", None)
            if name == "torchvision":
                try:
                    info["cuda_version_op"] = int(torch.ops.torchvision._cuda_version())
                except Exception as e:
                    info["cuda_version_op_error"] = str(e)[:500]
        except BaseException as e:
            info["imported"] = False
            info["error"] = exc_info(e)
    info["warnings"] = [str(w.message)[:1000] for w in caught][:10]
    return info


def main():
    no_kernel = "--no-kernel" in sys.argv[1:-1]
    deep = "--deep" in sys.argv[1:-1]
    import importlib.util

    stage("find")
    try:
        spec = importlib.util.find_spec("torch")
    except Exception as e:  # a broken torch package can fail here already
        spec = None
        result["find_error"] = exc_info(e)
    if spec is None and "find_error" not in result:
        result["status"] = "not-installed"
        stage("done")
        return
    result["location"] = getattr(spec, "origin", None) if spec else None

    stage("import")
    # The cyclic garbage collector runs dozens of full passes over the objects that importing
    # torch's ~1,500 modules creates: about a fifth of the import's time here. This process is
    # short-lived and ends in os._exit, so collection is simply not needed; the import itself
    # executes exactly as it does for the user.
    gc.disable()
    # numpy's OpenBLAS starts a worker thread per core on import, and each spins for about 0.1 s
    # of CPU waiting for work that never comes here, on the cores check's other probes use. A short
    # spin changes nothing else: the threads are still created (a failure to create them is
    # still seen) and BLAS is never called. A value the user set is kept.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    t, t_unix = time.perf_counter(), time.time()
    torch_dir = os.path.dirname(result["location"]) if result.get("location") else None
    with warnings.catch_warnings(record=True) as caught, CompileCounter() as compiles:
        warnings.simplefilter("always")
        try:
            import torch
        except BaseException as e:  # SystemExit and KeyboardInterrupt too: all are facts
            result["status"] = "import-failed"
            result["error"] = exc_info(e)
            result["import_s"] = round(time.perf_counter() - t, 4)
            result["import_warnings"] = [str(w.message)[:2000] for w in caught][:20]
            result["loaded_libraries"] = loaded_libraries()
            stage("done")
            return
    result["import_s"] = round(time.perf_counter() - t, 4)
    result["bytecode"] = bytecode_facts(compiles, torch_dir, t_unix)
    result["import_warnings"] = [str(w.message)[:2000] for w in caught][:20]
    result["location"] = getattr(torch, "__file__", result.get("location"))

    probe_versions(torch)
    probe_cudnn(torch)
    probe_cuda_init(torch)
    if result.get("cuda_available"):
        probe_devices(torch, no_kernel)
    probe_companions(torch, deep)

    stage("libraries")
    result["loaded_libraries"] = loaded_libraries()
    result["status"] = "ok"
    stage("done")


def probe_versions(torch):
    """What torch was built as: versions, CUDA/cuDNN it was compiled for, the GPU architectures."""
    stage("versions")
    v = getattr(torch, "version", None)
    result["version"] = str(getattr(torch, "__version__", "")) or None
    result["cuda"] = getattr(v, "cuda", None)
    result["hip"] = getattr(v, "hip", None)
    result["debug"] = getattr(v, "debug", None)
    result["git_version"] = getattr(v, "git_version", None)
    try:
        result["cuda_compiled"] = bool(torch.backends.cuda.is_built())
    except Exception:
        result["cuda_compiled"] = result["cuda"] is not None
    try:
        result["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception as e:
        result["arch_list_error"] = exc_info(e)["message"]
    try:
        import torch._C as _C

        cv = _C._cudnn.getCompileVersion() if hasattr(_C, "_cudnn") else None
        result["cudnn_compiled"] = ".".join(str(x) for x in cv) if cv else None
    except Exception:
        pass
    result["loaded_libraries_before_init"] = loaded_libraries()


def probe_cudnn(torch):
    stage("cudnn")
    try:
        cudnn = torch.backends.cudnn
        result["cudnn_version"] = cudnn.version()
        result["cudnn_available"] = bool(cudnn.is_available())
    except BaseException as e:
        result["cudnn_error"] = exc_info(e)


def probe_cuda_init(torch):
    """Whether CUDA initialises, how many devices it sees, and in what words it fails."""
    stage("cuda_init")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.perf_counter()
        try:
            result["cuda_available"] = bool(torch.cuda.is_available())
            result["device_count"] = int(torch.cuda.device_count())
        except BaseException as e:
            result["cuda_init_error"] = exc_info(e)
        result["cuda_init_s"] = round(time.perf_counter() - t, 4)
    result["cuda_init_warnings"] = [str(w.message)[:2000] for w in caught][:20]
    if result.get("cuda_compiled") and not result.get("cuda_available"):
        # is_available() swallows the reason; initialising explicitly says it.
        try:
            torch.cuda.init()
        except BaseException as e:
            result["cuda_init_error"] = exc_info(e)


def probe_devices(torch, no_kernel):
    """Each device's properties (saved one by one), a small kernel on each, peer access between them."""
    stage("devices")
    devices = []
    for i in range(result.get("device_count") or 0):
        try:
            devices.append(device_properties(torch, i))
        except BaseException as e:
            devices.append({"index": i, "error": exc_info(e)["message"]})
        result["devices"] = devices
        save()
    result["devices"] = devices
    if not no_kernel:
        for d in devices:
            run_kernel(torch, d)
    if len(devices) > 1:
        stage("peer_access")
        result["peer_access"] = peer_access(torch, len(devices))


def run_kernel(torch, d):
    """Run a tiny kernel on device ``d`` (an entry of result["devices"]) and check its answer."""
    stage("kernel:%d" % d["index"])
    t = time.perf_counter()
    try:
        x = torch.arange(1024, device="cuda:%d" % d["index"], dtype=torch.float32)
        got = float((x * 2).sum().item())
        d["kernel_ok"] = got == 1047552.0
        if not d["kernel_ok"]:
            d["kernel_error"] = "wrong result %r (expected 1047552.0)" % got
    except BaseException as e:
        d["kernel_ok"] = False
        d["kernel_error"] = exc_info(e)["message"]
    d["kernel_s"] = round(time.perf_counter() - t, 4)


def probe_companions(torch, deep):
    """torchvision and torchaudio, where installed: their extension loaded into this torch, or (deep) imported."""
    import importlib.util

    companions = {}
    for name in ("torchvision", "torchaudio"):
        try:
            spec = importlib.util.find_spec(name)
        except Exception:
            spec = None
        if spec is None or not spec.origin:
            continue
        stage("companion:" + name)
        companions[name] = full_import(torch, name) if deep else load_extension(torch, name, os.path.dirname(spec.origin))
        result["companions"] = companions
    result["companions"] = companions


def finished():
    """Tell the parent the result file is final (see proc.run(notify=True))."""
    if _notify_fd is not None:
        try:
            os.write(_notify_fd, b"1")
        except OSError:
            pass


if __name__ == "__main__":
    main()
    # Everything is in the result file. Tearing down an interpreter with torch and the CUDA
    # libraries loaded takes longer than the probe's own work (0.6-0.7 s here): skip it.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        finished()
    finally:
        os._exit(0)
