"""MNIST for the smoke workloads: find it, (optionally) download it, read it, or generate digits.

STANDALONE (standard library; torch passed in): loaded by path by the workload children, which may run
under another interpreter than cudadoctor's. Only :func:`download_mnist` (--download) uses the network.
"""

import gzip
import hashlib
import os
import struct
import zlib

ACCURACY_BAR_MNIST = 0.97
ACCURACY_BAR_SYNTHETIC = 0.95

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
MNIST_MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")
#: A site's own mirror (a URL prefix holding the four .gz files), used instead of the public ones: CUDADOCTOR_MNIST_MIRROR.
MIRROR_VAR = "CUDADOCTOR_MNIST_MIRROR"
MNIST_GZ_BYTES = 11594722  # the four official .gz files together


def mirrors():
    own = os.environ.get(MIRROR_VAR, "").strip()
    return (own.rstrip("/") + "/",) if own else MNIST_MIRRORS


class DataError(Exception):
    """kind: 'data-missing' | 'data-corrupt' | 'download-failed'."""

    def __init__(self, kind, message, path=None, looked_in=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path
        self.looked_in = looked_in or []

    def to_dict(self):
        extra = {"path": self.path, "looked_in": self.looked_in}
        return {"kind": self.kind, "message": self.message, **{k: v for k, v in extra.items() if v}}


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

    def tolist(self):
        fmt, size, _ = next(v for v in IDX_TYPES.values() if v[2] == self.dtype)
        return list(struct.unpack(f">{len(self.data) // size}{fmt}", self.data))


def _parse_idx_header(buf, path, have):
    """(dtype name, shape, header size) of the IDX file of ``have`` bytes that starts with ``buf``; DataError
    ('data-corrupt') when the header is bad or the size is not the one it announces."""
    if len(buf) < 4:
        raise DataError("data-corrupt", f"{path}: file too short for an IDX header ({len(buf)} bytes)", path=path)
    zero, code, ndim = buf[0] << 8 | buf[1], buf[2], buf[3]
    if zero != 0 or code not in IDX_TYPES or not 1 <= ndim <= 8:
        raise DataError(
            "data-corrupt",
            f"{path}: not an IDX file (magic bytes {bytes(buf[:4]).hex()}; expected 0000 + type code + number of dimensions)",
            path=path,
        )
    hdr = 4 + 4 * ndim
    if len(buf) < hdr:
        raise DataError("data-corrupt", f"{path}: truncated IDX header ({len(buf)} of {hdr} bytes)", path=path)
    shape = struct.unpack(f">{ndim}I", bytes(buf[4:hdr]))
    count = 1
    for d in shape:
        count *= d
    _, size, name = IDX_TYPES[code]
    want = hdr + count * size
    if have != want:
        what = "truncated" if have < want else f"{have - want} unexpected trailing bytes"
        says = f"header says shape {list(shape)} ({want} bytes) but the file has {have} bytes"
        raise DataError("data-corrupt", f"{path}: {what}: {says}", path=path)
    return name, shape, hdr


def read_idx(path):
    """Read an IDX file (raw or .gz) and validate it. Raises DataError('data-corrupt')."""
    path = os.fspath(path)
    try:
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
            buf = f.read()
    except FileNotFoundError:
        raise DataError("data-missing", f"{path}: no such file", path=path) from None
    except (EOFError, OSError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise DataError(
            "data-corrupt",
            f"{path}: cannot decompress/read ({type(e).__name__}: {e}); the file is truncated or damaged",
            path=path,
        ) from e
    name, shape, hdr = _parse_idx_header(buf, path, len(buf))
    return IdxArray(tuple(shape), name, memoryview(buf)[hdr:], path)


def check_idx_header(path):
    """Cheap validation of an uncompressed IDX file (its header, and its size from stat)."""
    with open(path, "rb") as f:
        head = f.read(4 + 4 * 8)
    return _parse_idx_header(head, path, os.path.getsize(path))[1]


def default_roots():
    """Where MNIST is looked for without --data-dir, in order: $CUDADOCTOR_DATA_DIR, ./data, ~/data,
    ~/datasets, where --download puts it, ~/.torch/datasets."""
    home = os.path.expanduser("~")
    roots = [os.environ.get("CUDADOCTOR_DATA_DIR"), os.path.join(os.getcwd(), "data"), os.path.join(home, "data")]
    roots += [os.path.join(home, "datasets"), download_root(None), os.path.join(home, ".torch", "datasets")]
    return list(dict.fromkeys(os.path.abspath(r) for r in roots if r))


def _home(path):
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home not in ("/", "") and path.startswith(home + os.sep) else path


def ensure_mnist(data_dir, say):
    """The parent's step before the workload (no --offline): MNIST where it is, else downloaded into the cache (or
    --data-dir), saying so through ``say``. Returns the data dir to hand the workload; raises DataError."""
    try:
        locate_mnist(data_dir)
        return data_dir
    except DataError as e:
        if e.kind != "data-missing":
            raise
    root = download_root(data_dir)
    say(f"cudadoctor smoke: MNIST is not on this machine; downloading it (4 files, {MNIST_GZ_BYTES / 1e6:.0f} MB) into {root}")
    download_mnist(root, say)
    say(f"cudadoctor smoke: MNIST saved in {os.path.join(root, 'MNIST', 'raw')} (MD5 checksums verified)")
    return root


def download_root(data_dir):
    if data_dir:
        return os.path.abspath(os.path.expanduser(data_dir))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "cudadoctor", "data")


def _find_in_dir(d):
    """Return {key: path} for the MNIST files present in directory d (raw preferred over .gz)."""
    found = {}
    for key, base in MNIST_FILES.items():
        cands = [os.path.join(d, c) for c in (base, base + ".gz", base.replace("-idx", ".idx"))]
        found[key] = next((p for p in cands if os.path.isfile(p)), None)
    return {k: p for k, p in found.items() if p}


def locate_mnist(data_dir=None):
    """Find the four MNIST files. Returns (dir, {key: path}); raises DataError('data-missing')."""
    roots = [os.path.abspath(os.path.expanduser(data_dir))] if data_dir else default_roots()
    looked, partial = [], []
    for root in roots:
        for d in (os.path.normpath(os.path.join(root, sub)) for sub in ("MNIST/raw", "mnist/raw", "MNIST", "raw", "")):
            looked.append(d)
            if not os.path.isdir(d):
                continue
            found = _find_in_dir(d)
            if len(found) == len(MNIST_FILES):
                return d, found
            if found:
                missing = [MNIST_FILES[k] for k in MNIST_FILES if k not in found]
                partial.append(f"{d} has only {len(found)} of 4 files (missing: {', '.join(missing)})")
    if data_dir:
        where = f"in --data-dir {roots[0]} (looked in its MNIST/raw, mnist/raw, MNIST, raw and itself)"
    else:
        where = "in the usual places (" + ", ".join(_home(r) for r in roots) + "; each with MNIST/raw and the like)"
    msg = (
        f"MNIST is not {where}"
        + ("; " + "; ".join(partial) if partial else "")
        + f". Without --offline, smoke downloads it (11 MB, checksums verified) into {_home(download_root(data_dir))}; "
        "or point to a copy with --data-dir DIR, or train on generated digits with --synthetic."
    )
    raise DataError("data-missing", msg, looked_in=looked)


def download_mnist(root, say=None):
    """Download the four .gz files (MD5-checked) into root/MNIST/raw, torchvision's layout. The only place the
    smoke uses the network. ``say`` gets one line per file fetched."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    import urllib.request

    for name, md5 in MNIST_GZ_MD5.items():
        dest = os.path.join(raw, name)
        if os.path.isfile(dest):
            with open(dest, "rb") as f:
                if _official(name, f.read(), md5):
                    continue
        errors = []
        for mirror in mirrors():
            if say:
                say(f"  {name} from {mirror}")
            try:
                with urllib.request.urlopen(mirror + name, timeout=60) as r:
                    blob = r.read()
                if not _official(name, blob, md5):
                    raise ValueError("not the official file (MD5 mismatch)")
                with open(dest + ".part", "wb") as f:
                    f.write(blob)
                os.replace(dest + ".part", dest)
                break
            except Exception as e:
                errors.append(f"{mirror}{name}: {e}")
        else:
            raise DataError(
                "download-failed",
                f"could not download MNIST ({errors[-1]}); point to a copy with --data-dir DIR, set {MIRROR_VAR} to a "
                "mirror you can reach, or train on generated digits with --synthetic",
                path=raw,
                looked_in=errors,
            )


def _official(name, blob, gz_md5):
    """The official .gz file, or a recompressed copy of the official content (a site mirror may gzip it anew)."""
    if hashlib.md5(blob).hexdigest() == gz_md5:
        return True
    try:
        return hashlib.md5(gzip.decompress(blob)).hexdigest() == MNIST_RAW_MD5[name[: -len(".gz")]]
    except (OSError, EOFError, zlib.error):
        return False


def _md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def torchvision_version():
    """torchvision's version from its package metadata, or None when it is not installed. The smoke reads the
    IDX files itself and never imports torchvision: its import pulls torchvision.ops -> torch._dynamo -> sympy,
    seconds the smoke does not need (a broken torchvision is `cudadoctor check`'s to diagnose)."""
    from importlib import metadata

    try:
        return metadata.version("torchvision")
    except metadata.PackageNotFoundError:
        return None


def load_mnist(torch, files):
    """The four files (raw or gzip; their headers checked by :func:`found`) as uint8/long CPU tensors, and
    whether each is the official file: (xtr, ytr, xte, yte, checksums)."""
    arrays = []
    for key in ("train_images", "train_labels", "test_images", "test_labels"):
        a = read_idx(files[key])
        if a.dtype != "uint8":
            raise DataError("data-corrupt", f"{a.path}: expected uint8 data, found {a.dtype}", path=a.path)
        t = torch.frombuffer(bytearray(a.data), dtype=torch.uint8).reshape(a.shape)
        arrays.append(t if key.endswith("images") else t.long())
    xtr, ytr, xte, yte = arrays
    for imgs, labels, ik, lk in ((xtr, ytr, "train_images", "train_labels"), (xte, yte, "test_images", "test_labels")):
        if imgs.dim() != 3 or tuple(imgs.shape[1:]) != (28, 28):
            raise DataError("data-corrupt", f"{files[ik]}: expected N x 28 x 28 images, found {list(imgs.shape)}", path=files[ik])
        if labels.dim() != 1 or labels.shape[0] != imgs.shape[0]:
            raise DataError(
                "data-corrupt", f"{files[lk]}: {list(labels.shape)} labels for {imgs.shape[0]} images", path=files[lk]
            )
        lo, hi = int(labels.min()), int(labels.max())
        if lo < 0 or hi > 9:
            raise DataError("data-corrupt", f"{files[lk]}: label values {lo}..{hi} outside 0..9", path=files[lk])
    checks = {}
    for p in files.values():
        base = os.path.basename(p)
        ref = MNIST_RAW_MD5.get(base) or MNIST_GZ_MD5.get(base)
        checks[base] = "official" if ref and _md5(p) == ref else "differs from the official file"
    return xtr, ytr, xte, yte, checks


# Seven-segment "digits": learnable, digit-like, no data needed.
_SEGMENTS = {  # (row0, row1, col0, col1) on a 28x28 canvas, inclusive-exclusive
    "a": (4, 7, 8, 20),
    "b": (4, 14, 17, 20),
    "c": (13, 24, 17, 20),
    "d": (21, 24, 8, 20),
    "e": (13, 24, 8, 11),
    "f": (4, 14, 8, 11),
    "g": (12, 15, 8, 20),
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


def locate(cfg, info):
    """Before torch is imported, so that a missing data set fails fast: where the data is (downloaded first
    with --download), into ``info`` (the result's data block). Raises DataError."""
    if cfg.get("synthetic"):
        info.update(
            {
                "source": "synthetic",
                "path": None,
                "accuracy_bar": ACCURACY_BAR_SYNTHETIC,
                "description": "seven-segment digits 0-9, random shift +-4 px, stroke intensity, noise",
            }
        )
    elif cfg.get("download"):
        info["downloaded_to"] = root = download_root(cfg.get("data_dir"))
        download_mnist(root)
        found(info, *locate_mnist(root))
    else:
        found(info, *locate_mnist(cfg.get("data_dir")))


def found(info, d, files):
    info.update({"dir": d, "path": d, "files": files, "accuracy_bar": ACCURACY_BAR_MNIST})
    for p in files.values():
        if not p.endswith(".gz"):
            check_idx_header(p)


def load(torch, cfg, info):
    """The data set as CPU tensors {xtr, ytr, xte, yte} (uint8 images, long labels); ``info`` says
    what was loaded. Raises DataError."""
    import time

    t0 = time.perf_counter()
    if cfg.get("synthetic"):
        xtr, ytr = synthetic_digits(torch, 20000, seed=1234)
        xte, yte = synthetic_digits(torch, 5000, seed=4321)
    else:
        if "dir" not in info:
            raise DataError("data-missing", "no MNIST located (see the data error above)")
        xtr, ytr, xte, yte, checks = load_mnist(torch, info["files"])
        info.update({"source": "idx", "checksums": checks})
    info["n_train"], info["n_test"] = int(xtr.shape[0]), int(xte.shape[0])
    info["load_s"] = round(time.perf_counter() - t0, 3)
    return {"xtr": xtr, "ytr": ytr, "xte": xte, "yte": yte}
