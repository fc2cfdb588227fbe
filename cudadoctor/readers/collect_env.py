"""Read the text of ``python -m torch.utils.collect_env`` (or vLLM's collect_env) into facts.

Support staff get bug reports with a pasted collect_env output and nothing else. This module
turns that text into a facts document (``origin: "collect_env"``) so the same checks can judge
it. It is a pure function of the text: no I/O, no guessing. A field the text does not state stays
missing; every raw key/value read is kept under ``facts["collect_env"]`` as evidence.

What the fields mean follows the source of collect_env.py (torch 1.0 .. 2.x, and vLLM's copy):

* ``PyTorch version: N/A`` -- ``import torch`` failed (or torch is not installed); every other
  torch field then says ``N/A`` too.
* ``CUDA used to build PyTorch: None`` -- printed only when torch imported, CUDA is not
  available and nvidia-smi/nvcc gave nothing: ``torch.version.cuda`` was None, a CPU build.
  ``Could not collect`` with a known PyTorch version means the same (collect_env replaces every
  None with that phrase). ``N/A`` with a ROCm version beside it is a ROCm build.
* ``No CUDA`` in the runtime/GPU/driver/cuDNN fields -- torch imported, could not use CUDA, and
  ``nvidia-smi``, ``nvidia-smi -L`` and ``nvcc --version`` all failed.
* ``CUDA runtime version`` is what ``nvcc --version`` says (the local toolkit), not torch's
  runtime; ``cuDNN version`` lists libcudnn files on the system (ldconfig), not torch's own.
* ``GPU models and configuration`` is ``nvidia-smi -L`` with UUIDs removed, except on ROCm
  builds and macOS where it is ``torch.cuda.get_device_name()``.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from .. import __version__
from ..facts import FactsError, new_facts, sanitize
from ._collect_env_lines import CORE_KEYS, MAX_VALUE_CHARS, _GPU_LINE, _Reader
from ._text import _clean_lines, _decode
from .packages import _conda_line, _norm, _pip_line
from ..interpret.versions import mm_str, vtuple

#: Largest text accepted (characters). Real outputs are a few kB; a whole issue thread is < 200 kB.
MAX_TEXT_CHARS = 2 * 1024 * 1024
#: collect_env prints a few hundred lines; a paste with a long traceback around it a few thousand.
MAX_TEXT_LINES = 50_000

UNKNOWN = "Could not collect"
_VERSION = re.compile(r"^\d+(?:\.\d+)*(?:[.+\-a-zA-Z0-9_]*)$")
_TRUE = {"true", "yes"}
_FALSE = {"false", "no"}


def parse_collect_env(text: str) -> Dict[str, Any]:
    """Parse collect_env output (any layout, messy paste) into a facts document.

    Raises :class:`FactsError` (one line) when the text is not collect_env output at all.
    """
    if isinstance(text, bytes):
        text = _decode(text)
    if not isinstance(text, str):
        raise FactsError(f"collect_env: expected text, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise FactsError(
            f"collect_env: text is larger than {MAX_TEXT_CHARS // (1024 * 1024)} MiB; "
            "expected the output of python -m torch.utils.collect_env"
        )
    if not text.strip():
        raise FactsError("collect_env: text is empty; expected the output of python -m torch.utils.collect_env")
    if text.count("\n") > MAX_TEXT_LINES:
        raise FactsError(
            f"collect_env: more than {MAX_TEXT_LINES} lines; expected the output of python -m torch.utils.collect_env"
        )
    lines = _clean_lines(text)
    reader = _Reader()
    reader.feed(lines)
    if not text.rstrip(" \t").endswith(("\n", "\r")) and _truncated(reader, _layout(reader)):
        # The text stops mid-line inside the report: its last line may be cut short
        # ("GPU 3: NVIDIA GeForc"), so it is kept as evidence only.
        reader = _Reader()
        reader.feed(lines, cut_last=True)
    if len(reader.fields.keys() & CORE_KEYS) < 2:
        raise FactsError(
            "collect_env: not the output of python -m torch.utils.collect_env "
            "(no fields such as 'PyTorch version:' or 'Is CUDA available:' found)"
        )
    return sanitize(_to_facts(reader))  # lone surrogates in the text must not reach the output


# ---------------------------------------------------------------------------------------------
# Meaning: the raw fields into the facts schema (docs/facts.md).


def _unknown(value: Optional[str]) -> bool:
    return (
        value is None
        or value.strip() in ("", UNKNOWN, "N/A", "Could not collect.")
        or value.strip().lower() == "could not collect"
    )


def _bool(value: Optional[str]) -> Optional[bool]:
    if value is None:
        return None
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    return None


def _version(value: Optional[str]) -> Optional[str]:
    """A version-looking token ('2.6.0+cu126', '10.1.243'), else None."""
    if value is None or _unknown(value):
        return None
    v = value.strip().split()[0] if value.strip() else ""
    return v if _VERSION.match(v) else None


def _layout(r: _Reader) -> str:
    f = r.fields
    vllm_keys = {"vLLM Version", "vLLM Build Flags", "ROCM Version", "Neuron SDK Version"}
    if r.sections:
        return "vllm-sections"
    if f.keys() & vllm_keys:
        return "vllm-flat"
    if any(
        (_bool(f.get(k)) is not None and f.get(k, "").strip().lower() in ("yes", "no"))
        for k in ("Is debug build", "Is CUDA available")
    ):
        return "torch-1.x-yesno"
    if f.keys() & {"Is XNNPACK available", "CUDA_MODULE_LOADING set to", "CPU", "Is XPU available"}:
        return "torch-2.x"
    return "torch-1.x"


def _to_facts(r: _Reader) -> Dict[str, Any]:
    f = r.fields
    facts = new_facts("collect_env")
    facts["tool"] = {"version": __version__, "source": "collect_env"}
    layout = _layout(r)
    evidence: Dict[str, Any] = {"layout": layout, "fields": {k: f[k] for k in r.order}}
    if r.gpu_lines:
        evidence["gpu_lines"] = r.gpu_lines[:256]
    if r.cudnn_lines:
        evidence["cudnn_lines"] = r.cudnn_lines[:256]
    if r.cpu_lines:
        evidence["cpu_lines"] = r.cpu_lines
    if r.repeats:
        evidence["second_report_ignored"] = True
    if r.cut_line is not None:
        evidence["last_line_ignored"] = r.cut_line[:MAX_VALUE_CHARS]
    truncated = _truncated(r, layout)
    evidence["truncated"] = truncated
    facts["collect_env"] = evidence

    hip_build = _version(f.get("ROCM used to build PyTorch")) is not None
    _torch(facts, f, r, hip_build)
    _system(facts, f, r)
    _python(facts, f, facts["system"].get("os"))
    _gpu_and_driver(facts, f, r, hip_build)
    _toolkit(facts, f, r)
    _packages(facts, r, truncated)
    _vllm(facts, f)
    _environment(facts, r, layout)
    if r.other:
        # What the user pasted around the report (their error, a traceback) is evidence too:
        # checks match error signatures in user_error.text.
        other = "\n".join(r.other)
        facts["collect_env"]["other_text"] = other
        facts["user_error"] = {"text": other, "source": "collect_env"}
    return facts


def _truncated(r: _Reader, layout: str) -> bool:
    """Did the text stop before the end of the report? (The package list is always last.)"""
    if layout == "vllm-sections":
        return not r.env_section
    if not r.saw_libs_header:
        return True
    return not r.saw_conda_line


def _torch(facts: Dict[str, Any], f: Dict[str, str], r: _Reader, hip_build: bool) -> None:
    t = facts["torch"]
    raw = f.get("PyTorch version")
    version = _version(raw)
    imported = version is not None
    if imported:
        t["version"] = version
        t["status"] = "ok"
    elif raw is not None and raw.strip() == "N/A" and _bool(f.get("Is CUDA available")) is True:
        # only an imported torch answers "Is CUDA available: True": the version alone was unreadable
        t["importable"] = True
    elif raw is not None and raw.strip() == "N/A":
        # collect_env prints N/A when `import torch` raised (ImportError, OSError...) or torch is
        # absent. A torch package in the lists tells the two apart.
        t["importable"] = False
        if _listed_torch(r):
            t["status"] = "import-failed"
            t["error"] = {"type": "Unknown", "message": "collect_env could not import torch", "how": "raised"}
            if "Python platform" not in f:
                # collect_env before torch 1.8 listed packages with the `pip`/`pip3` on PATH, not
                # `python -m pip`: the torch it lists may belong to another interpreter.
                facts["collect_env"]["pip_on_path"] = True
        elif _distributions(r)[1].get("pip") in ("listed", "none"):
            t["status"] = "not-installed"  # pip's list was printed and has no torch
    cuda_raw = f.get("CUDA used to build PyTorch")
    if cuda_raw is not None:
        c = cuda_raw.strip()
        if c == "None":
            t["cuda"] = None  # printed only for torch.version.cuda is None: a CPU build
        elif _version(c):
            t["cuda"] = _version(c)
        elif imported and (c == UNKNOWN or c.lower() == "could not collect") and _cpu_said(f):
            t["cuda"] = None  # replace_nones: torch imported and torch.version.cuda was None
        elif imported and c == "N/A" and hip_build:
            t["cuda"] = None  # ROCm builds print N/A here; torch.version.cuda is None
    if imported and "cuda" not in t and not hip_build:
        listed = _listed_build(r, t["version"])
        if listed is not None:
            t["cuda"] = None if listed == "cpu" else listed  # the build the package list names for this torch
    hip_raw = f.get("ROCM used to build PyTorch")
    if hip_raw is not None:
        if _version(hip_raw):
            t["hip"] = hip_raw.strip().split()[0]
        elif imported and hip_raw.strip() == "N/A":
            t["hip"] = None
    for key, name in (("HIP runtime version", "hip_runtime_version"), ("MIOpen runtime version", "miopen_runtime_version")):
        v = _version(f.get(key))
        if v:
            t[name] = v
    debug = _bool(f.get("Is debug build"))
    if debug is not None:
        t["debug"] = debug
    avail = _bool(f.get("Is CUDA available"))
    if avail is not None:
        t["cuda_available"] = avail
    xpu = _bool((f.get("Is XPU available") or "").split("\n")[0])
    if xpu is not None:
        t["xpu_available"] = xpu
    loading = f.get("CUDA_MODULE_LOADING set to")
    if loading is not None and not _unknown(loading):
        t["cuda_module_loading"] = loading.strip()
    xnn = _bool(f.get("Is XNNPACK available"))
    if xnn is not None:
        t["xnnpack_available"] = xnn


def _cpu_said(f: Dict[str, str]) -> bool:
    """Does "CUDA used to build PyTorch: Could not collect" stand for torch.version.cuda = None?

    collect_env prints "Could not collect" for every None (replace_nones), so beside an imported torch
    it says a CPU build — but only in a report whose "Is CUDA available" is torch's own bool: an imported
    torch always answers True or False there. "Is CUDA available: True" is a CUDA build; "Could not
    collect" (or no such line) there is a rendering where every unknown reads "Could not collect", and
    the build stays unknown.
    """
    avail = _bool(f.get("Is CUDA available"))
    return avail is False


_CONDA_CUDA_BUILD = re.compile(r"(?:^|_)cuda_?(\d{1,2})\.?(\d)(?:\.\d+)?(?:_|$)|^cuda(\d{2})(\d)py", re.IGNORECASE)
_CONDA_CPU_BUILD = re.compile(r"(?:^|_)cpu(?:_|$)", re.IGNORECASE)


def _listed_build(r: _Reader, version: str) -> Optional[str]:
    """'cpu', or the CUDA version ('11.3'), of the torch the package lists name at this version: pip's
    local tag (``torch==1.11.0+cpu``, ``+cu113``) or conda's build string (``py3.8_cpu_0``,
    ``py3.9_cuda11.3_cudnn8.2.0_0``, conda-forge's ``cpu_mkl_py39h…`` / ``cuda112py39h…``). None when no
    listed torch of that version says."""
    base = version.split("+")[0]
    for d in _distributions(r)[0]:
        if _norm(d["name"]) != "torch" or str(d.get("version") or "").split("+")[0] != base:
            continue
        v = str(d.get("version") or "")
        m = re.search(r"\+cu(\d{2,3})$", v)
        if m:
            return f"{m.group(1)[:-1]}.{m.group(1)[-1]}"
        if v.endswith("+cpu"):
            return "cpu"
        build = str(d.get("build") or "")
        m = _CONDA_CUDA_BUILD.search(build)
        if m:
            major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            return f"{int(major)}.{minor}"
        if _CONDA_CPU_BUILD.search(build):
            return "cpu"
    return None


def _listed_torch(r: _Reader) -> bool:
    for d in _distributions(r)[0]:
        if _norm(d["name"]) == "torch":
            return True
    return False


_ARCHES = r"x86_64|aarch64|arm64|ppc64le|ppc64|s390x|i686|i386|armv7l|armv6l|riscv64|loongarch64|AMD64"
# "Ubuntu 22.04.5 LTS (x86_64)": collect_env appends platform.machine() (since torch 1.7);
# "Red Hat Enterprise Linux Server 7.6 (Maipo)" is a release name, not a machine.
_LINUX_DESC = re.compile(r"^(?P<desc>.*?)\s*\((?P<arch>" + _ARCHES + r")\)\s*$")


def _system(facts: Dict[str, Any], f: Dict[str, str], r: _Reader) -> None:
    s = facts["system"]
    os_raw = f.get("OS")
    plat = f.get("Python platform")
    plat = None if plat is None or _unknown(plat) else plat.strip()
    if os_raw is not None and not _unknown(os_raw) and os_raw.strip() != "None":
        v = os_raw.strip()
        m = _LINUX_DESC.match(v)
        desc, arch = (m.group("desc"), m.group("arch")) if m else (v, None)
        low = v.lower()
        wsl = re.search(r"\bwsl\s*([12])?\b", low)
        if wsl:
            # a hand-written field ("WSL 1 on Microsoft Windows 10", "Ubuntu 22.04 (WSL2)"): Linux under WSL, its version
            s["wsl"] = True
            if wsl.group(1):
                s["wsl_version"] = int(wsl.group(1))
            low = "linux"
        if low.startswith("microsoft windows") or low.startswith("windows"):
            s["os"] = "Windows"
            if low != "windows":
                s["distro"] = v.split("\n")[0]
            m2 = re.search(r"\(([\d.]+)\s+(64|32)-bit\)", v)
            if m2:
                s["windows_version"] = m2.group(1)
        elif low.startswith("macos") or low.startswith("mac osx") or low.startswith("mac os x"):
            s["os"] = "Darwin"
            s["distro"] = desc
            if arch:
                s["arch"] = arch
        elif re.fullmatch(r"[a-z]+\d*", v) and v != "linux":
            s["os"] = v  # collect_env prints sys.platform for an unknown platform
        else:
            # Every other description comes from collect_env's Linux branch (lsb_release,
            # /etc/*-release, or "linux (machine)").
            s["os"] = "Linux"
            if desc and desc.lower() != "linux":
                s["distro"] = desc
            if arch:
                s["arch"] = arch
    if plat:
        low = plat.lower()
        if low.startswith("linux-"):
            s.setdefault("os", "Linux")
            m = re.match(
                r"^Linux-(?P<kernel>.+?)-(?P<arch>x86_64|aarch64|arm64|ppc64le|s390x|armv7l|i686|riscv64)(?:-with-(?P<libc>.*))?$",
                plat,
            )
            if m:
                s["kernel"] = m.group("kernel")
                s.setdefault("arch", m.group("arch"))
                lib = m.group("libc") or ""
                lm = re.match(r"^glibc(\d+\.\d+)", lib)
                if lm and "libc" not in s:
                    s["libc_from_platform"] = f"glibc {lm.group(1)}"
            kernel = s.get("kernel") or plat
            s["wsl"] = bool(s.get("wsl") or re.search(r"microsoft|wsl", kernel, re.IGNORECASE))
        elif low.startswith("windows-"):
            s.setdefault("os", "Windows")
            m = re.match(r"^Windows-(?P<release>[^-]+)-(?P<version>[\d.]+)", plat)
            if m:
                s.setdefault("windows_release", m.group("release"))
                s.setdefault("windows_version", m.group("version"))
        elif low.startswith("macos-") or low.startswith("darwin-"):
            s.setdefault("os", "Darwin")
            m = re.search(r"-(x86_64|arm64)-", plat)
            if m:
                s.setdefault("arch", m.group(1))
    libc = f.get("Libc version")
    if libc is not None and not _unknown(libc):
        m = re.match(r"^(glibc|musl)[-\s]?([\d.]+)$", libc.strip())
        s["libc"] = f"{m.group(1)} {m.group(2)}" if m else libc.strip()
    elif "libc_from_platform" in s:
        s["libc"] = s["libc_from_platform"]
    s.pop("libc_from_platform", None)
    if "arch" not in s:
        for line in r.cpu_lines[:5]:
            m = re.match(r"^Architecture:\s*(x86_64|aarch64|arm64|ppc64le|s390x|i686|riscv64)$", line)
            if m:
                s["arch"] = m.group(1)
                break


def _python(facts: Dict[str, Any], f: Dict[str, str], os_name: Optional[str]) -> None:
    p = facts["python"]
    raw = f.get("Python version")
    if raw is not None and not _unknown(raw):
        v = raw.strip()
        m = re.match(r"^(\d+\.\d+(?:\.\d+)?(?:[abc]\d+|rc\d+)?\+?)", v)
        if m:
            p["version"] = m.group(1)
        b = re.search(r"\((32|64)-bit runtime\)", v)
        if b:
            p["bits"] = int(b.group(1))
        full = re.sub(r"\s*\((?:32|64)-bit runtime\)\s*$", "", v).strip()
        if full and full != p.get("version"):
            p["version_full"] = full
        if "PyPy" in v:
            p["implementation"] = "pypy"
    if os_name:
        platform = {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}.get(os_name)
        if platform:
            p["platform"] = platform


def _gpu_and_driver(facts: Dict[str, Any], f: Dict[str, str], r: _Reader, hip_build: bool) -> None:
    n = facts["nvml"]
    driver_raw = f.get("Nvidia driver version")
    gpu_raw = f.get("GPU models and configuration")
    no_cuda = [
        k
        for k in ("Nvidia driver version", "GPU models and configuration", "CUDA runtime version", "cuDNN version")
        if (f.get(k) or "").strip() == "No CUDA"
    ]
    driver = _version(driver_raw)
    if driver:
        n["driver_version"] = driver
    darwin = facts["system"].get("os") == "Darwin"
    devices: List[Dict[str, Any]] = []
    if hip_build or darwin:
        # There the field is torch.cuda.get_device_name(), not nvidia-smi -L.
        if gpu_raw and not _unknown(gpu_raw) and gpu_raw.strip() != "No CUDA":
            facts["torch"]["devices"] = [{"index": 0, "name": gpu_raw.strip()}]
    else:
        for line in r.gpu_lines:
            m = _GPU_LINE.match(line)
            if not m or not m.group("name"):
                continue
            d: Dict[str, Any] = {"index": int(m.group("index")), "name": m.group("name")}
            if m.group("uuid"):
                d["uuid"] = m.group("uuid")
            if all(x["index"] != d["index"] for x in devices):
                devices.append(d)
        if devices:
            n["devices"] = devices
            n["device_count"] = len(devices)
        elif gpu_raw and not _unknown(gpu_raw) and gpu_raw.strip() != "No CUDA":
            # Not nvidia-smi -L's "GPU 0: ..." form: a name written in by hand ("GPU models and configuration: RTX 4060
            # mobile"), as templates filled from memory do. The GPU is stated, not seen by nvidia-smi: its name
            # (the GPU table's, as the prose reader finds it) is kept, the driver's status is not set from it.
            from .prose import gpus_named

            named = gpus_named(gpu_raw)
            if named:
                n["devices"] = [
                    {
                        "index": i,
                        "name": name,
                        "compute_capability": cap,
                        "from": "collect_env GPU field, not nvidia-smi -L's form",
                    }
                    for i, (name, cap) in enumerate(named)
                ]
    if driver or devices:
        n["status"] = "ok"
    elif "Nvidia driver version" in no_cuda or "GPU models and configuration" in no_cuda:
        n["status"] = "no-nvidia-smi"
        n["error"] = (
            "collect_env printed 'No CUDA': nvidia-smi gave no driver version and no GPU list, and torch could not use CUDA"
        )


def _cudnn_version(n: int) -> str:
    # cudnnGetVersion(): 7605 = 7.6.5 (before 9), 90100 = 9.1.0 (9 and later).
    if n >= 10000:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def _cudnn_entry(text: str) -> Optional[Dict[str, Any]]:
    t = text.strip()
    if not t:
        return None
    if re.fullmatch(r"\d{4,6}", t):
        return {"version": _cudnn_version(int(t))}
    if re.fullmatch(r"\d+(?:\.\d+){0,3}", t):
        return {"version": t}
    if not re.search(r"[/\\]", t):
        return None
    entry: Dict[str, Any] = {"path": t}
    name = re.split(r"[/\\]", t)[-1]
    m = (
        re.search(r"\.so\.(\d+(?:\.\d+)*)$", name)
        or re.search(r"cudnn\w*?64_(\d+)\.dll$", name, re.IGNORECASE)
        or re.search(r"libcudnn\w*\.(\d+(?:\.\d+)*)\.dylib$", name)
    )
    if m:
        entry["version"] = m.group(1)
    return entry


def _toolkit(facts: Dict[str, Any], f: Dict[str, str], r: _Reader) -> None:
    tk = facts["toolkit"]
    rt = _version(f.get("CUDA runtime version"))
    if rt:
        parts = vtuple(rt) if re.match(r"\d+\.\d+", rt) else None
        if parts and len(parts) >= 2:
            tk["nvcc_version"] = mm_str(parts)
            if len(parts) >= 3:
                tk["nvcc_version_full"] = rt
    raw = f.get("cuDNN version")
    if raw is None or _unknown(raw) or raw.strip() == "No CUDA":
        return
    candidates = r.cudnn_lines if raw.lower().startswith("probably one of the following") else [raw]
    entries = [e for e in (_cudnn_entry(c) for c in candidates) if e]
    if entries:
        tk["system_cudnn"] = entries


def _distributions(r: _Reader) -> Tuple[List[Dict[str, Any]], Dict[str, str]]:
    dists: List[Dict[str, Any]] = []
    listings: Dict[str, str] = {}
    for tool, lines in (("pip", r.pip), ("conda", r.conda)):
        for rest in lines:
            low = rest.strip().lower()
            if low in ("could not collect", "could not collect."):
                listings.setdefault(tool, "not-collected")
                continue
            if low == "no relevant packages":
                listings.setdefault(tool, "none")
                continue
            d = _pip_line(rest) if tool == "pip" else _conda_line(rest)
            if d:
                listings[tool] = "listed"
                dists.append(d)
    # conda lists pip-installed packages too (build pypi_0, channel pypi): one distribution.
    pip_seen = {(_norm(d["name"]), d.get("version")) for d in dists if d["listed_by"] == "pip"}
    out = [
        d
        for d in dists
        if not (d["listed_by"] == "conda" and d["installer"] == "pip" and (_norm(d["name"]), d.get("version")) in pip_seen)
    ]
    return out, listings


def _packages(facts: Dict[str, Any], r: _Reader, truncated: bool) -> None:
    dists, listings = _distributions(r)
    if not listings:
        return
    pk = facts["packages"]
    pk["distributions"] = dists
    pk["listings"] = listings
    pk["complete"] = not truncated


def _vllm(facts: Dict[str, Any], f: Dict[str, str]) -> None:
    """vLLM's collect_env prints its own version apart from the package lists: a package with CUDA kernels of its own."""
    version = _version(f.get("vLLM Version"))
    if version is None:
        return
    dists = facts["packages"].setdefault("distributions", [])
    if not any(_norm(str(d.get("name", ""))) == "vllm" for d in dists):
        dists.append({"name": "vllm", "version": version, "listed_by": "collect_env"})


def _environment(facts: Dict[str, Any], r: _Reader, layout: str) -> None:
    if r.env_section or r.env:
        facts["environment"]["vars"] = dict(sorted(r.env.items()))
        facts["environment"]["secret_names_skipped"] = True
        facts["environment"]["source"] = "vllm collect_env"
        if r.env_skipped:
            facts["collect_env"]["secret_env_vars_dropped"] = r.env_skipped
        ld = r.env.get("LD_LIBRARY_PATH")
        if ld is not None:
            facts["environment"]["ld_library_path"] = [p for p in ld.split(":") if p]
