#!/usr/bin/env python3
"""cudadoctor smoke workload -- STANDALONE child process.

Run as:  python workload.py --config '{"device": "cuda"}' --out RESULT.json

Imports only the standard library and torch (torchvision optional), never
cudadoctor: the parent may run it with a different interpreter than its own.
Results are written progressively to --out (write to a temp file + atomic
rename after every stage), so a crash half-way leaves the finished stages.

Result file (schema 1):
  {"schema": 1, "state": "running"|"finished", "device": ...,
   "status": "pass"|"fail"|"error"|null, "plan": [[stage, device], ...],
   "current": {"name", "device", "started_unix"} | null,
   "stages": [{"name", "device", "verdict", "duration_s", "message", "evidence"}],
   "data": {...}, "env": {...}, "error": null | {"kind", "message", ...}}

torch is imported lazily so that this module can be imported (e.g. for the
IDX reader) by an interpreter without torch.
"""
import argparse
import faulthandler
import gzip
import hashlib
import json
import math
import os
import platform
import signal
import struct
import sys
import time
import traceback
import zlib

T_PROCESS = time.perf_counter()

SCHEMA = 1
MEAN, STD = 0.1307, 0.3081
LAYERS = (784, 512, 256, 128, 64, 10)
ACCURACY_BAR_MNIST = 0.97
ACCURACY_BAR_SYNTHETIC = 0.95
STAGES = ("device", "agreement", "training", "throughput", "mixed-precision", "cudnn", "transfers")

# Training recipe (see docs/smoke.md): resident data, batch 512, Adam with
# beta2=0.99, He init, label smoothing 0.1, one-cycle LR over 1.5 epochs.
BATCH = 512
LR = 4e-3
BUDGET_EPOCHS = 1.5
DEFAULT_MAX_EPOCHS = 4

MNIST_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
# md5 of the official uncompressed files (informational: a mismatch is reported, not fatal)
MNIST_RAW_MD5 = {
    "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
}
MNIST_GZ_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)


# ----------------------------------------------------------------------------
# IDX reader (pure stdlib)
# ----------------------------------------------------------------------------

class DataError(Exception):
    """kind: 'data-missing' | 'data-corrupt' | 'download-failed'."""

    def __init__(self, kind, message, path=None, looked_in=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path
        self.looked_in = looked_in or []

    def to_dict(self):
        d = {"kind": self.kind, "message": self.message}
        if self.path:
            d["path"] = self.path
        if self.looked_in:
            d["looked_in"] = self.looked_in
        return d


# type code -> (struct format char, item size, name)
IDX_TYPES = {
    0x08: ("B", 1, "uint8"),
    0x09: ("b", 1, "int8"),
    0x0B: ("h", 2, "int16"),
    0x0C: ("i", 4, "int32"),
    0x0D: ("f", 4, "float32"),
    0x0E: ("d", 8, "float64"),
}


class IdxArray:
    """A decoded IDX file: shape, dtype name and the raw big-endian payload."""

    __slots__ = ("shape", "dtype", "data", "path")

    def __init__(self, shape, dtype, data, path):
        self.shape, self.dtype, self.data, self.path = shape, dtype, data, path

    def __len__(self):
        return self.shape[0]

    def tolist(self):
        fmt, size, _ = next(v for v in IDX_TYPES.values() if v[2] == self.dtype)
        if size == 1:
            return list(self.data) if fmt == "B" else list(struct.unpack(f"{len(self.data)}b", self.data))
        return list(struct.unpack(f">{len(self.data) // size}{fmt}", self.data))


def _parse_idx_header(buf, path):
    if len(buf) < 4:
        raise DataError("data-corrupt", f"{path}: file too short for an IDX header ({len(buf)} bytes)", path=path)
    zero, code, ndim = buf[0] << 8 | buf[1], buf[2], buf[3]
    if zero != 0 or code not in IDX_TYPES or not 1 <= ndim <= 8:
        raise DataError("data-corrupt",
                        f"{path}: not an IDX file (magic bytes {bytes(buf[:4]).hex()}; expected 0000 + type code "
                        f"+ number of dimensions)", path=path)
    hdr = 4 + 4 * ndim
    if len(buf) < hdr:
        raise DataError("data-corrupt", f"{path}: truncated IDX header ({len(buf)} of {hdr} bytes)", path=path)
    shape = struct.unpack(f">{ndim}I", bytes(buf[4:hdr]))
    return IDX_TYPES[code], shape, hdr


def read_idx(path):
    """Read an IDX file (raw or .gz) and validate it. Raises DataError('data-corrupt')."""
    path = os.fspath(path)
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                buf = f.read()
        else:
            with open(path, "rb") as f:
                buf = f.read()
    except FileNotFoundError:
        raise DataError("data-missing", f"{path}: no such file", path=path)
    except (EOFError, OSError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise DataError("data-corrupt", f"{path}: cannot decompress/read ({type(e).__name__}: {e}); "
                        "the file is truncated or damaged", path=path)
    (fmt, size, name), shape, hdr = _parse_idx_header(buf, path)
    count = 1
    for d in shape:
        count *= d
    want = hdr + count * size
    if len(buf) < want:
        raise DataError("data-corrupt",
                        f"{path}: truncated: header says shape {list(shape)} ({want} bytes) but the file has "
                        f"{len(buf)} bytes", path=path)
    if len(buf) > want:
        raise DataError("data-corrupt",
                        f"{path}: {len(buf) - want} unexpected trailing bytes after the {list(shape)} array",
                        path=path)
    return IdxArray(tuple(shape), name, memoryview(buf)[hdr:], path)


def check_idx_header(path):
    """Cheap validation of an uncompressed IDX file (header + size from stat)."""
    with open(path, "rb") as f:
        head = f.read(4 + 4 * 8)
    (fmt, size, name), shape, hdr = _parse_idx_header(head, path)
    count = 1
    for d in shape:
        count *= d
    want = hdr + count * size
    have = os.path.getsize(path)
    if have != want:
        raise DataError("data-corrupt",
                        f"{path}: {'truncated' if have < want else 'oversized'}: header says shape {list(shape)} "
                        f"({want} bytes) but the file has {have} bytes", path=path)
    return shape


# ----------------------------------------------------------------------------
# Locating / downloading / loading MNIST
# ----------------------------------------------------------------------------

def default_roots():
    roots = []
    env = os.environ.get("CUDADOCTOR_DATA_DIR")
    if env:
        roots.append(env)
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    roots += [os.path.join(os.getcwd(), "data"), os.path.join(home, "data"), os.path.join(home, "datasets"),
              os.path.join(xdg, "cudadoctor", "data"), os.path.join(home, ".torch", "datasets")]
    out = []
    for r in roots:
        r = os.path.abspath(r)
        if r not in out:
            out.append(r)
    return out


def download_root(data_dir):
    if data_dir:
        return os.path.abspath(os.path.expanduser(data_dir))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "cudadoctor", "data")


def _find_in_dir(d):
    """Return {key: path} for the MNIST files present in directory d (raw preferred over .gz)."""
    found = {}
    for key, base in MNIST_FILES.items():
        for cand in (base, base + ".gz", base.replace("-idx", ".idx")):
            p = os.path.join(d, cand)
            if os.path.isfile(p):
                found[key] = p
                break
    return found


def locate_mnist(data_dir=None):
    """Find the four MNIST files. Returns (dir, {key: path}); raises DataError('data-missing')."""
    roots = [os.path.abspath(os.path.expanduser(data_dir))] if data_dir else default_roots()
    looked, partial = [], []
    for root in roots:
        for d in (os.path.join(root, "MNIST", "raw"), os.path.join(root, "mnist", "raw"),
                  os.path.join(root, "MNIST"), os.path.join(root, "raw"), root):
            looked.append(d)
            if not os.path.isdir(d):
                continue
            found = _find_in_dir(d)
            if len(found) == len(MNIST_FILES):
                return d, found
            if found:
                missing = [MNIST_FILES[k] for k in MNIST_FILES if k not in found]
                partial.append(f"{d} has only {len(found)} of 4 files (missing: {', '.join(missing)})")
    where = "--data-dir " + roots[0] if data_dir else "the usual places"
    msg = (f"MNIST not found in {where}. Looked in:\n  " + "\n  ".join(looked)
           + ("\n" + "\n".join(partial) if partial else "")
           + "\nFix it either way:\n"
           "  1. point to an existing copy:  --data-dir DIR  (DIR/MNIST/raw/train-images-idx3-ubyte[.gz] ..., "
           "the torchvision layout)\n"
           f"  2. download it (network):     --download  (into {download_root(data_dir)})\n"
           "  (or --synthetic to verify the GPU on generated data without MNIST)")
    raise DataError("data-missing", msg, looked_in=looked)


def download_mnist(root, tv):
    """Download into root/MNIST/raw. Network is used ONLY here (--download)."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    if tv is not None:
        try:
            for train in (True, False):
                tv.datasets.MNIST(root=root, train=train, download=True)
            return
        except Exception as e:  # fall through to the stdlib downloader
            sys.stderr.write(f"torchvision download failed ({e}); trying the stdlib downloader\n")
    import urllib.request
    for name, md5 in MNIST_GZ_MD5.items():
        dest = os.path.join(raw, name)
        if os.path.isfile(dest) and _md5(dest) == md5:
            continue
        errors = []
        for mirror in MNIST_MIRRORS:
            try:
                with urllib.request.urlopen(mirror + name, timeout=60) as r:
                    blob = r.read()
                if hashlib.md5(blob).hexdigest() != md5:
                    raise ValueError("md5 mismatch")
                with open(dest + ".part", "wb") as f:
                    f.write(blob)
                os.replace(dest + ".part", dest)
                break
            except Exception as e:
                errors.append(f"{mirror}{name}: {e}")
        else:
            raise DataError("download-failed", "could not download MNIST:\n  " + "\n  ".join(errors), path=raw)


def _md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def torchvision_status():
    """(module or None, 'ok' | 'ok x.y' | 'missing' | 'broken: <msg>')."""
    try:
        import torchvision
        import torchvision.datasets  # noqa: F401
        return torchvision, "ok"
    except ModuleNotFoundError as e:
        if e.name == "torchvision":
            return None, "missing"
        return None, f"broken: {type(e).__name__}: {e}"
    except Exception as e:
        return None, f"broken: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def load_mnist(torch, d, files, tv):
    """Load the four files into uint8/long CPU tensors. Returns (xtr, ytr, xte, yte, source, checksums)."""
    for key, p in files.items():
        if not p.endswith(".gz"):
            check_idx_header(p)  # clear truncation errors before anyone else parses
    source = "idx"
    arrays = None
    torchvision_layout = (os.path.basename(d) == "raw" and os.path.basename(os.path.dirname(d)) == "MNIST"
                          and all(not p.endswith(".gz") for p in files.values()))
    if tv is not None and torchvision_layout:
        try:
            root = os.path.dirname(os.path.dirname(d))
            tr = tv.datasets.MNIST(root=root, train=True, download=False)
            te = tv.datasets.MNIST(root=root, train=False, download=False)
            arrays = (tr.data, tr.targets, te.data, te.targets)
            source = "torchvision"
        except Exception as e:
            sys.stderr.write(f"torchvision.datasets.MNIST failed ({type(e).__name__}: {e}); reading IDX directly\n")
    if arrays is None:
        out = []
        for key in ("train_images", "train_labels", "test_images", "test_labels"):
            a = read_idx(files[key])
            if a.dtype != "uint8":
                raise DataError("data-corrupt", f"{a.path}: expected uint8 data, found {a.dtype}", path=a.path)
            t = torch.frombuffer(bytearray(a.data), dtype=torch.uint8).reshape(a.shape)
            out.append(t if key.endswith("images") else t.long())
        arrays = tuple(out)
    xtr, ytr, xte, yte = arrays
    for imgs, labels, ik, lk in ((xtr, ytr, "train_images", "train_labels"), (xte, yte, "test_images", "test_labels")):
        if imgs.dim() != 3 or tuple(imgs.shape[1:]) != (28, 28):
            raise DataError("data-corrupt", f"{files[ik]}: expected N x 28 x 28 images, found {list(imgs.shape)}",
                            path=files[ik])
        if labels.dim() != 1 or labels.shape[0] != imgs.shape[0]:
            raise DataError("data-corrupt", f"{files[lk]}: {list(labels.shape)} labels for {imgs.shape[0]} images",
                            path=files[lk])
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0 or hi > 9:
            raise DataError("data-corrupt", f"{files[lk]}: label values {lo}..{hi} outside 0..9", path=files[lk])
    checks = {}
    for p in files.values():
        base = os.path.basename(p)
        ref = MNIST_RAW_MD5.get(base) or MNIST_GZ_MD5.get(base)
        checks[base] = "official" if ref and _md5(p) == ref else "differs from the official file"
    return xtr, ytr.long(), xte, yte.long(), source, checks


# Seven-segment "digits": learnable, digit-like, no data needed.
_SEGMENTS = {  # (row0, row1, col0, col1) on a 28x28 canvas, inclusive-exclusive
    "a": (4, 7, 8, 20), "b": (4, 14, 17, 20), "c": (13, 24, 17, 20), "d": (21, 24, 8, 20),
    "e": (13, 24, 8, 11), "f": (4, 14, 8, 11), "g": (12, 15, 8, 20),
}
_DIGIT_SEGMENTS = ["abcdef", "bc", "abged", "abgcd", "fgbc", "afgcd", "afgedc", "abc", "abcdefg", "abcdfg"]


def synthetic_digits(torch, n, seed):
    """n seven-segment digits (uint8 N x 28 x 28) with random shift, stroke intensity and noise."""
    g = torch.Generator().manual_seed(seed)
    protos = torch.zeros(10, 28, 28)
    for digit, segs in enumerate(_DIGIT_SEGMENTS):
        for s in segs:
            r0, r1, c0, c1 = _SEGMENTS[s]
            protos[digit, r0:r1, c0:c1] = 1.0
    labels = torch.randint(0, 10, (n,), generator=g)
    imgs = protos[labels]
    pad = torch.nn.functional.pad(imgs, (4, 4, 4, 4))
    dy = torch.randint(0, 9, (n,), generator=g)
    dx = torch.randint(0, 9, (n,), generator=g)
    rows = (dy[:, None] + torch.arange(28)[None, :])[:, :, None].expand(n, 28, 28)
    cols = (dx[:, None] + torch.arange(28)[None, :])[:, None, :].expand(n, 28, 28)
    imgs = pad[torch.arange(n)[:, None, None], rows, cols]
    imgs = imgs * (0.5 + 0.5 * torch.rand(n, 1, 1, generator=g)) + 0.25 * torch.randn(n, 28, 28, generator=g)
    return (imgs.clamp(0, 1) * 255).round().to(torch.uint8), labels


# ----------------------------------------------------------------------------
# Result file
# ----------------------------------------------------------------------------

class Recorder:
    def __init__(self, out, device):
        self.out = out
        self.r = {"schema": SCHEMA, "state": "running", "device": device, "status": None, "plan": [],
                  "current": None, "stages": [], "data": {}, "env": {}, "error": None}

    def save(self):
        tmp = f"{self.out}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(self.r, f, indent=1, default=str)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.out)

    def begin(self, name, device):
        self.r["current"] = {"name": name, "device": device, "started_unix": time.time()}
        self.save()

    def end(self, name, device, verdict, duration, message, evidence):
        self.r["stages"].append({"name": name, "device": device, "verdict": verdict,
                                 "duration_s": round(duration, 4), "message": message, "evidence": evidence})
        self.r["current"] = None
        self.save()


class Skip(Exception):
    pass


class Fail(Exception):
    def __init__(self, message, evidence=None):
        super().__init__(message)
        self.evidence = evidence or {}


def _inject_fault(name, device):
    """Test hook: CUDADOCTOR_SMOKE_FAULT=<stage>:<abort|segv|hang|raise>."""
    spec = os.environ.get("CUDADOCTOR_SMOKE_FAULT", "")
    if not spec or ":" not in spec:
        return
    stage, kind = spec.split(":", 1)
    if stage != name:
        return
    if kind == "abort":
        os.abort()
    if kind == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if kind == "hang":
        while True:
            time.sleep(3600)
    if kind == "raise":
        raise RuntimeError("injected fault")


# ----------------------------------------------------------------------------
# The smoke itself
# ----------------------------------------------------------------------------

class Progress:
    def __init__(self, enabled, label, total):
        self.enabled, self.label, self.total = enabled, label, max(1, total)
        self.last = 0.0
        self.t0 = time.perf_counter()

    def update(self, n, extra="", force=False):
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        frac = min(1.0, n / self.total)
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r{self.label} [{bar:<30}] {n}/{self.total} {now - self.t0:5.1f}s {extra}   ")
        sys.stderr.flush()

    def close(self, extra=""):
        if self.enabled:
            self.update(self.total, extra, force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()


def rel_err(a, b):
    """max|a-b| / max|b|: error relative to the scale of the reference."""
    a = a.detach().double().cpu()
    b = b.detach().double().cpu()
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / (scale if scale > 0 else 1.0)


class Smoke:
    def __init__(self, cfg, rec):
        self.cfg = cfg
        self.rec = rec
        self.progress = bool(cfg.get("progress"))
        self.torch = None
        self.nn = None
        self.data = None          # dict of CPU tensors
        self.data_error = None
        self.cpu_throughput = None
        self.dead = {}            # device -> reason
        self.seed = int(cfg.get("seed", 0))

    # -- helpers --------------------------------------------------------------
    def mlp(self):
        nn = self.nn
        layers = []
        for i in range(len(LAYERS) - 1):
            lin = nn.Linear(LAYERS[i], LAYERS[i + 1])
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
            layers.append(lin)
            if i < len(LAYERS) - 2:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    def sync(self, dev):
        if dev.type == "cuda":
            self.torch.cuda.synchronize(dev)

    def stage(self, name, device, fn):
        rec = self.rec
        rec.begin(name, device)
        t0 = time.perf_counter()
        evidence = {}
        try:
            if device in self.dead:
                raise Skip(f"device unusable after an earlier error: {self.dead[device]}")
            _inject_fault(name, device)
            verdict, message, evidence = fn()
        except Skip as e:
            verdict, message = "skip", str(e)
        except Fail as e:
            verdict, message, evidence = "fail", str(e), e.evidence
        except DataError:
            raise
        except Exception as e:
            verdict = "fail"
            message = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            evidence = {"traceback": traceback.format_exc(limit=6)[-3000:]}
            if device.startswith("cuda"):
                try:
                    self.torch.cuda.synchronize(device)
                except Exception as e2:
                    self.dead[device] = f"{type(e2).__name__}: {str(e2).splitlines()[0] if str(e2) else ''}"
        rec.end(name, device, verdict, time.perf_counter() - t0, message, evidence)
        return verdict

    # -- data -----------------------------------------------------------------
    def get_data(self):
        if self.data is not None:
            return self.data
        if self.data_error is not None:
            raise Skip(f"no data: {self.data_error.kind}")
        torch = self.torch
        t0 = time.perf_counter()
        info = self.rec.r["data"]
        try:
            if self.cfg.get("synthetic"):
                xtr, ytr = synthetic_digits(torch, 20000, seed=1234)
                xte, yte = synthetic_digits(torch, 5000, seed=4321)
            else:
                xtr, ytr, xte, yte, source, checks = load_mnist(torch, info["dir"], info["files"], self.tv)
                info["source"] = source
                info["checksums"] = checks
        except DataError as e:
            self.data_error = e
            raise
        info["n_train"], info["n_test"] = int(xtr.shape[0]), int(xte.shape[0])
        info["load_s"] = round(time.perf_counter() - t0, 3)
        self.data = {"xtr": xtr, "ytr": ytr, "xte": xte, "yte": yte}
        self.rec.save()
        return self.data

    # -- stages ---------------------------------------------------------------
    def st_device(self, device):
        torch = self.torch
        ev = {"torch": torch.__version__, "torch_cuda": torch.version.cuda,
              "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
        if device == "cpu":
            x = torch.arange(1024, dtype=torch.float32)
            ok = float((x * 2).sum()) == 1024 * 1023.0
            ev.update({"threads": torch.get_num_threads(), "machine": platform.machine(),
                       "processor": platform.processor() or None})
            if not ok:
                raise Fail("tiny CPU kernel gave a wrong result", ev)
            return "pass", f"CPU, {torch.get_num_threads()} threads (torch {torch.__version__})", ev
        if torch.version.cuda is None:
            raise Fail(f"torch {torch.__version__} is a CPU-only build: it cannot use any NVIDIA GPU "
                       f"(install a CUDA build of torch)", ev)
        try:
            torch.cuda.init()
        except Exception as e:
            raise Fail(f"CUDA failed to initialise: {type(e).__name__}: {str(e).strip()}", ev)
        n = torch.cuda.device_count()
        ev["device_count"] = n
        idx = torch.device(device).index or 0
        if idx >= n:
            raise Fail(f"{device} requested but only {n} CUDA device(s) are visible", ev)
        dev = torch.device("cuda", idx)
        p = torch.cuda.get_device_properties(dev)
        free, total = torch.cuda.mem_get_info(dev)
        ev.update({"name": p.name, "capability": f"{p.major}.{p.minor}", "total_memory_mib": p.total_memory >> 20,
                   "free_memory_mib": free >> 20, "multiprocessors": p.multi_processor_count,
                   "arch_list": torch.cuda.get_arch_list()})
        t0 = time.perf_counter()
        x = torch.arange(1 << 20, device=dev, dtype=torch.float32)
        s = float((x * 2).sum())  # host sync: the kernel really ran
        ev["kernel_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        want = float((1 << 20) * ((1 << 20) - 1))
        if abs(s - want) > want * 1e-6:
            raise Fail(f"tiny kernel on {device} returned {s}, expected {want}", ev)
        return "pass", f"{p.name} (sm_{p.major}{p.minor}, {p.total_memory >> 20} MiB)", ev

    def _tf32_matmul(self, dev):
        torch = self.torch
        if dev.type != "cuda":
            return False
        cap = torch.cuda.get_device_capability(dev)
        return cap[0] >= 8 and (torch.backends.cuda.matmul.allow_tf32
                                or torch.get_float32_matmul_precision() != "highest")

    def st_agreement(self, device):
        torch, nn = self.torch, self.nn
        dev = torch.device(device)
        g = torch.Generator().manual_seed(self.seed + 7)
        torch.manual_seed(self.seed + 7)
        ref = self.mlp()
        x = torch.randn(256, 784, generator=g)
        y = torch.randint(0, 10, (256,), generator=g)

        def run(model, xx, yy):
            model.zero_grad(set_to_none=True)
            out = model(xx)
            loss = nn.functional.cross_entropy(out, yy)
            loss.backward()
            return out.detach(), loss.detach(), [p.grad.detach() for p in model.parameters()]

        import copy
        m64 = copy.deepcopy(ref).double()
        o64, l64, g64 = run(m64, x.double(), y)
        mcpu = copy.deepcopy(ref)
        o32, l32, g32 = run(mcpu, x, y)
        err_cpu = max([rel_err(o32, o64)] + [rel_err(a, b) for a, b in zip(g32, g64)])
        ev = {"batch": 256, "reference": "float64 on CPU", "metric": "max|a-b| / max|reference| over outputs and "
              "every parameter gradient", "cpu_float32_vs_float64": err_cpu}
        tol32 = 1e-4
        if dev.type == "cpu":
            ev["tolerance"] = tol32
            if not (err_cpu <= tol32):
                raise Fail(f"CPU float32 disagrees with float64: {err_cpu:.2e} > {tol32:.0e}", ev)
            return "pass", f"CPU float32 vs float64: {err_cpu:.1e} <= {tol32:.0e} (no second device to compare)", ev
        tf32 = self._tf32_matmul(dev)
        tol = 2e-2 if tf32 else tol32
        mdev = copy.deepcopy(ref).to(dev)
        od, ld, gd = run(mdev, x.to(dev), y.to(dev))
        self.sync(dev)
        err_dev64 = max([rel_err(od, o64)] + [rel_err(a, b) for a, b in zip(gd, g64)])
        err_devcpu = max([rel_err(od, o32)] + [rel_err(a, b) for a, b in zip(gd, g32)])
        ev.update({"tf32_matmul": tf32, "tolerance": tol, "device_vs_float64": err_dev64,
                   "device_vs_cpu_float32": err_devcpu, "loss_cpu": float(l32), "loss_device": float(ld)})
        bad = [k for k in ("device_vs_float64", "device_vs_cpu_float32") if not (ev[k] <= tol)]
        if bad:
            raise Fail(f"{device} disagrees with the CPU: " + ", ".join(f"{k}={ev[k]:.2e}" for k in bad)
                       + f" > tolerance {tol:.0e}", ev)
        return "pass", (f"outputs+gradients match CPU: {err_devcpu:.1e} (vs float64 {err_dev64:.1e}) <= {tol:.0e}"
                        f"{' (TF32 on)' if tf32 else ''}"), ev

    def _normalise(self, x_u8, dev):
        x = x_u8.to(dev, non_blocking=False).reshape(x_u8.shape[0], -1).float()
        return x.div_(255.0).sub_(MEAN).div_(STD)

    def st_training(self, device):
        torch, nn = self.torch, self.nn
        data = self.get_data()
        dev = torch.device(device)
        synthetic = bool(self.cfg.get("synthetic"))
        bar = ACCURACY_BAR_SYNTHETIC if synthetic else ACCURACY_BAR_MNIST
        max_epochs = self.cfg.get("epochs") or DEFAULT_MAX_EPOCHS
        t_start = time.perf_counter()
        # dataset resident on the device, normalised once
        xtr = self._normalise(data["xtr"], dev)
        ytr = data["ytr"].to(dev)
        xte = self._normalise(data["xte"], dev)
        yte = data["yte"].to(dev)
        n = xtr.shape[0]
        torch.manual_seed(self.seed)
        model = self.mlp().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.99))
        steps_per_epoch = n // BATCH
        budget = max(1, int(min(BUDGET_EPOCHS, max_epochs) * steps_per_epoch))
        max_steps = int(max_epochs * steps_per_epoch)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=LR, total_steps=budget, pct_start=0.2)
        evals = {int(budget * f) for f in (2 / 3, 5 / 6, 1.0)}
        losses = torch.zeros(max_steps, device=dev)
        ev = {"batch": BATCH, "optimizer": f"Adam(lr={LR}, betas=(0.9, 0.99)), one-cycle over {budget} steps",
              "accuracy_bar": bar, "max_epochs": max_epochs}
        # residency check (a run that silently used the CPU is a failure)
        where = {"params": {str(p.device) for p in model.parameters()}, "train_data": str(xtr.device),
                 "test_data": str(xte.device)}
        ev["tensor_devices"] = {k: sorted(v) if isinstance(v, set) else v for k, v in where.items()}
        ok, why = check_residency(torch, dev, model, (xtr, ytr, xte, yte))
        if dev.type == "cuda":
            ev["memory_allocated_mib"] = round(torch.cuda.memory_allocated(dev) / 2**20, 1)
        if not ok:
            raise Fail(f"training would not run on {device}: {why}", ev)
        prog = Progress(self.progress, f"training {device}", min(max_steps, budget))
        history = []
        acc = 0.0
        step = 0
        t_train = time.perf_counter()
        reached_at = None
        phase2 = None

        def evaluate():
            model.eval()
            with torch.no_grad():
                correct = torch.zeros((), dtype=torch.long, device=dev)
                for i in range(0, xte.shape[0], 5000):
                    correct += (model(xte[i:i + 5000]).argmax(1) == yte[i:i + 5000]).sum()
            model.train()
            return correct.item() / xte.shape[0]  # one host sync per evaluation

        while step < max_steps and reached_at is None:
            perm = torch.randperm(n, device=dev)
            for i in range(0, n - BATCH + 1, BATCH):
                idx = perm[i:i + BATCH]
                out = model(xtr[idx])
                loss = nn.functional.cross_entropy(out, ytr[idx], label_smoothing=0.1)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses[step] = loss.detach()  # stays on the device: no per-step sync
                step += 1
                if step <= budget:
                    sched.step()
                elif phase2 is None:
                    phase2 = True
                prog.update(step, f"acc {acc:.4f}" if history else "")
                check = step in evals or (step > budget and (step - budget) % max(1, steps_per_epoch // 4) == 0)
                if check:
                    acc = evaluate()
                    history.append({"step": step, "epoch": round(step / steps_per_epoch, 3), "test_accuracy": acc,
                                    "elapsed_s": round(time.perf_counter() - t_train, 3)})
                    if acc >= bar:
                        reached_at = time.perf_counter()
                        break
                    if step == budget:  # not there yet: continue gently (lower constant LR)
                        for gr in opt.param_groups:
                            gr["lr"] = LR / 10
                if step >= max_steps:
                    break
        if reached_at is None:
            acc = evaluate()
        self.sync(dev)
        t_end = time.perf_counter()
        prog.close(f"acc {acc:.4f}")
        lh = losses[:step].tolist()
        k = max(1, min(10, step // 4))
        first, last = sum(lh[:k]) / k, sum(lh[-k:]) / k
        ev.update({"steps": step, "epochs": round(step / steps_per_epoch, 3), "test_accuracy": acc,
                   "history": history, "loss_first": first, "loss_last": last,
                   "train_s": round(t_end - t_train, 3), "setup_s": round(t_train - t_start, 3),
                   "samples_per_s": round(step * BATCH / (t_end - t_train), 1)})
        if reached_at is not None:
            ev["time_to_target_s"] = round(reached_at - t_train, 3)
            ev["process_time_to_target_s"] = round(reached_at - T_PROCESS, 3)
        if dev.type == "cuda":
            ev["max_memory_allocated_mib"] = round(torch.cuda.max_memory_allocated(dev) / 2**20, 1)
        ok, why = check_residency(torch, dev, model, (xtr, ytr, xte, yte))
        if not ok:
            raise Fail(f"tensors left {device}: {why}", ev)
        if not all(math.isfinite(v) for v in lh):
            raise Fail("loss became non-finite", ev)
        if not last < 0.5 * first:
            raise Fail(f"loss did not fall: {first:.3f} -> {last:.3f}", ev)
        what = "synthetic seven-segment digits" if synthetic else "MNIST"
        if acc < bar:
            raise Fail(f"test accuracy {acc:.4f} < {bar} on {what} after {step} steps ({ev['epochs']} epochs)", ev)
        return "pass", (f"{what}: test accuracy {acc:.4f} >= {bar} after {ev['epochs']} epochs in "
                        f"{ev['time_to_target_s']:.2f} s; loss {first:.2f} -> {last:.2f}"), ev

    def _steps_per_s(self, dev, steps=20, warmup=3, batch=1024):
        torch, nn = self.torch, self.nn
        g = torch.Generator().manual_seed(3)
        x = torch.randn(batch * 4, 784, generator=g).to(dev)
        y = torch.randint(0, 10, (batch * 4,), generator=g).to(dev)
        torch.manual_seed(3)
        model = self.mlp().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for i in range(warmup + steps):
            if i == warmup:
                self.sync(dev)
                t0 = time.perf_counter()
            j = (i % 4) * batch
            loss = nn.functional.cross_entropy(model(x[j:j + batch]), y[j:j + batch])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        self.sync(dev)
        dt = time.perf_counter() - t0
        if not math.isfinite(float(loss.detach())):
            raise Fail("throughput run produced a non-finite loss")
        return steps * batch / dt, dt

    def st_throughput(self, device):
        torch = self.torch
        dev = torch.device(device)
        steps, batch = 20, 1024
        if self.cpu_throughput is None:
            self.cpu_throughput = self._steps_per_s(torch.device("cpu"), steps, 3, batch)
        cpu, cpu_s = self.cpu_throughput
        ev = {"steps": steps, "batch": batch, "what": "MLP forward+backward+Adam step",
              "cpu_samples_per_s": round(cpu, 1), "cpu_s": round(cpu_s, 3)}
        if dev.type == "cpu":
            ev["speedup"] = None
            return "pass", f"CPU {cpu:,.0f} samples/s (nothing to compare against)", ev
        d, d_s = self._steps_per_s(dev, steps, 5, batch)
        ev.update({"device_samples_per_s": round(d, 1), "device_s": round(d_s, 3), "speedup": round(d / cpu, 2)})
        msg = f"{device} {d:,.0f} samples/s vs CPU {cpu:,.0f} samples/s: {d / cpu:.1f}x"
        if d < cpu:
            raise Fail(msg + " -- the GPU is SLOWER than the CPU", ev)
        return "pass", msg, ev

    def st_mixed(self, device):
        torch, nn = self.torch, self.nn
        dev = torch.device(device)
        data = self.get_data()
        if dev.type == "cuda":
            dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        else:
            dtype = torch.bfloat16
        use_scaler = dtype == torch.float16
        torch.manual_seed(self.seed + 1)
        model = self.mlp().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        scaler = torch.amp.GradScaler(dev.type) if use_scaler else None
        x = self._normalise(data["xtr"][:BATCH * 4], dev)
        y = data["ytr"][:BATCH * 4].to(dev)
        losses = []
        out_dtype = None
        for i in range(8):
            j = (i % 4) * BATCH
            with torch.autocast(device_type=dev.type, dtype=dtype):
                out = model(x[j:j + BATCH])
                loss = nn.functional.cross_entropy(out, y[j:j + BATCH])
            out_dtype = out.dtype
            opt.zero_grad(set_to_none=True)
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            losses.append(loss.detach().float())
        losses = torch.stack(losses).tolist()
        finite_params = all(bool(torch.isfinite(p).all()) for p in model.parameters())
        ev = {"dtype": str(dtype).replace("torch.", ""), "grad_scaler": use_scaler, "steps": 8,
              "autocast_output_dtype": str(out_dtype).replace("torch.", ""), "losses": losses,
              "params_finite": finite_params}
        if scaler:
            ev["final_scale"] = float(scaler.get_scale())
        if out_dtype != dtype:
            raise Fail(f"autocast did not engage: output dtype {out_dtype}, expected {dtype}", ev)
        if not finite_params or not all(math.isfinite(v) for v in losses):
            raise Fail("mixed precision produced non-finite values", ev)
        return "pass", f"{ev['dtype']} autocast{' + GradScaler' if use_scaler else ''}: 8 steps finite, " \
                       f"loss {losses[0]:.2f} -> {losses[-1]:.2f}", ev

    def st_cudnn(self, device):
        torch, nn = self.torch, self.nn
        dev = torch.device(device)
        if dev.type == "cpu":
            raise Skip("cuDNN is NVIDIA's GPU library; the CPU path uses oneDNN/native kernels")
        cudnn = torch.backends.cudnn
        ev = {"available": cudnn.is_available(), "enabled": cudnn.enabled,
              "version": cudnn.version() if cudnn.is_available() else None, "allow_tf32": cudnn.allow_tf32}
        if not ev["available"] or not ev["enabled"]:
            raise Fail("cuDNN is not available to this torch build" if not ev["available"]
                       else "cuDNN is disabled (torch.backends.cudnn.enabled = False)", ev)
        data = self.get_data()
        torch.manual_seed(self.seed + 2)
        net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
        x_cpu = ((data["xtr"][:64].float() / 255 - MEAN) / STD).unsqueeze(1)
        y_cpu = data["ytr"][:64]
        with torch.no_grad():
            ref = net(x_cpu)
        import copy
        netd = copy.deepcopy(net).to(dev)
        xd = x_cpu.to(dev)
        ev["cudnn_acceptable_input"] = bool(cudnn.is_acceptable(xd))
        opt = torch.optim.SGD(netd.parameters(), lr=0.01)
        out = netd(xd)
        loss = nn.functional.cross_entropy(out, y_cpu.to(dev))
        loss.backward()
        opt.step()
        self.sync(dev)
        tf32 = bool(cudnn.allow_tf32) and torch.cuda.get_device_capability(dev)[0] >= 8
        tol = 2e-2 if tf32 else 1e-4
        err = rel_err(out, ref)
        ev.update({"conv_output_vs_cpu": err, "tolerance": tol, "loss": float(loss),
                   "grads_finite": all(bool(torch.isfinite(p.grad).all()) for p in netd.parameters())})
        if not ev["cudnn_acceptable_input"]:
            raise Fail("cuDNN declined the conv input (torch.backends.cudnn.is_acceptable is False)", ev)
        if not (err <= tol) or not ev["grads_finite"]:
            raise Fail(f"conv net on {device} disagrees with the CPU ({err:.1e} > {tol:.0e}) or has non-finite "
                       "gradients", ev)
        return "pass", f"conv net step via cuDNN {ev['version']}; output vs CPU {err:.1e} <= {tol:.0e}", ev

    def st_transfers(self, device):
        torch = self.torch
        dev = torch.device(device)
        if dev.type == "cpu":
            raise Skip("host<->device copies need a GPU")
        nbytes, reps = 64 << 20, 10
        dbuf = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        ev = {"bytes": nbytes, "reps": reps, "unit": "GB/s (1e9 bytes/s), timed with CUDA events"}
        for kind in ("pageable", "pinned"):
            host = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, pin_memory=(kind == "pinned"))
            back = torch.empty(nbytes, dtype=torch.uint8, pin_memory=(kind == "pinned"))
            nb = kind == "pinned"
            for direction in ("h2d", "d2h"):
                dbuf.copy_(host, non_blocking=nb) if direction == "h2d" else back.copy_(dbuf, non_blocking=nb)
                torch.cuda.synchronize(dev)
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(reps):
                    if direction == "h2d":
                        dbuf.copy_(host, non_blocking=nb)
                    else:
                        back.copy_(dbuf, non_blocking=nb)
                e.record()
                e.synchronize()
                ms = s.elapsed_time(e)
                ev[f"{direction}_{kind}_gbps"] = round(nbytes * reps / (ms / 1000) / 1e9, 2)
            torch.cuda.synchronize(dev)
            if not torch.equal(host, back):
                raise Fail(f"{kind} round trip corrupted data", ev)
        notes = []
        if ev["h2d_pinned_gbps"] < 3:
            notes.append("pinned H2D below 3 GB/s: check the PCIe link (x1/x4 slot, Gen1 fallback, riser)")
        ev["notes"] = notes
        msg = (f"H2D pinned {ev['h2d_pinned_gbps']} / pageable {ev['h2d_pageable_gbps']} GB/s, "
               f"D2H pinned {ev['d2h_pinned_gbps']} / pageable {ev['d2h_pageable_gbps']} GB/s; round trip intact")
        return "pass", msg + (f" ({notes[0]})" if notes else ""), ev


def check_residency(torch, dev, model, tensors):
    """(ok, reason): every parameter and tensor lives on dev (same type and index)."""
    def same(d):
        if d.type != dev.type:
            return False
        if dev.type == "cuda":
            return (d.index or 0) == (dev.index or 0)
        return True
    bad = [f"parameter {n} on {p.device}" for n, p in model.named_parameters() if not same(p.device)]
    bad += [f"tensor #{i} on {t.device}" for i, t in enumerate(tensors) if not same(t.device)]
    if not bad and dev.type == "cuda":
        try:
            if torch.cuda.memory_allocated(dev) == 0:
                bad.append(f"torch.cuda.memory_allocated({dev}) is 0")
        except Exception as e:
            bad.append(f"torch.cuda.memory_allocated({dev}) failed: {e}")
    return (not bad), "; ".join(bad[:5])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="{}", help="JSON object (or @file)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    cfg_text = args.config
    if cfg_text.startswith("@"):
        with open(cfg_text[1:]) as f:
            cfg_text = f.read()
    cfg = json.loads(cfg_text)
    device = cfg.get("device") or "cuda"
    rec = Recorder(args.out, device)
    faulthandler.enable()  # a segfault prints the Python stack to stderr for the parent
    if hasattr(faulthandler, "register"):  # on the watchdog's SIGTERM: show where we hung, then die
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)
    if cfg.get("timeout_s"):
        t = float(cfg["timeout_s"])
        faulthandler.dump_traceback_later(max(t * 0.9, t - 3), exit=False)
    rec.r["env"] = {"python": sys.version.split()[0], "executable": sys.executable, "pid": os.getpid()}
    data = rec.r["data"]
    # 1. data: located before torch is imported, so a missing dataset fails fast
    try:
        if cfg.get("synthetic"):
            data.update({"source": "synthetic", "path": None,
                         "description": "seven-segment digits 0-9, random shift +-4 px, stroke intensity, noise",
                         "accuracy_bar": ACCURACY_BAR_SYNTHETIC})
        else:
            if cfg.get("download"):
                data["downloaded_to"] = download_root(cfg.get("data_dir"))
            else:
                d, files = locate_mnist(cfg.get("data_dir"))
                data.update({"dir": d, "path": d, "files": files, "accuracy_bar": ACCURACY_BAR_MNIST})
                for p in files.values():
                    if not p.endswith(".gz"):
                        check_idx_header(p)
    except DataError as e:
        rec.r["error"] = e.to_dict()
        rec.r["status"] = "error"
        rec.r["state"] = "finished"
        rec.save()
        return 2 if e.kind == "data-missing" else 3
    rec.begin("device", device if device != "all" else "cuda")
    import torch  # noqa: E402 (may crash: the parent records that as a failed device stage)
    smoke = Smoke(cfg, rec)
    smoke.torch, smoke.nn = torch, torch.nn
    tv, tv_status = torchvision_status()
    smoke.tv = tv
    data["torchvision"] = tv_status
    rec.r["env"].update({"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                         "torchvision": getattr(tv, "__version__", None)})
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg["threads"]))
    if cfg.get("download") and not cfg.get("synthetic"):
        try:
            root = download_root(cfg.get("data_dir"))
            download_mnist(root, tv)
            d, files = locate_mnist(root)
            data.update({"dir": d, "path": d, "files": files, "accuracy_bar": ACCURACY_BAR_MNIST})
        except DataError as e:
            rec.r.update({"error": e.to_dict(), "status": "error", "state": "finished", "current": None})
            rec.save()
            return 3
    if device == "all":
        try:
            n = torch.cuda.device_count() if torch.version.cuda else 0
        except Exception:
            n = 0
        devices = [f"cuda:{i}" for i in range(n)] or ["cuda"]
    else:
        devices = [device]
    rec.r["plan"] = [[s, d] for d in devices for s in STAGES]
    rec.save()
    fns = {"device": smoke.st_device, "agreement": smoke.st_agreement, "training": smoke.st_training,
           "throughput": smoke.st_throughput, "mixed-precision": smoke.st_mixed, "cudnn": smoke.st_cudnn,
           "transfers": smoke.st_transfers}
    for dev in devices:
        ok = smoke.stage("device", dev, lambda: fns["device"](dev))
        for name in STAGES[1:]:
            if ok != "pass":
                rec.begin(name, dev)
                rec.end(name, dev, "skip", 0.0, "device stage failed", {})
                continue
            try:
                smoke.stage(name, dev, lambda: fns[name](dev))
            except DataError as e:
                rec.r["error"] = e.to_dict()
                rec.end(name, dev, "skip", 0.0, f"no data: {e.kind}", {})
    verdicts = [s["verdict"] for s in rec.r["stages"]]
    if rec.r["error"]:
        rec.r["status"] = "error"
    else:
        rec.r["status"] = "fail" if "fail" in verdicts else "pass"
    rec.r["state"] = "finished"
    rec.r["current"] = None
    rec.r["env"]["total_s"] = round(time.perf_counter() - T_PROCESS, 3)
    rec.save()
    faulthandler.cancel_dump_traceback_later()
    return {"pass": 0, "fail": 1}.get(rec.r["status"], 3)


if __name__ == "__main__":
    sys.exit(main())
