"""Extractors: the knowledge tables (kb/) found anywhere in any text. Pure: no I/O.

* :func:`errors`: CUDA driver/runtime, NCCL, cuDNN and cuBLAS errors named in a text, by enum name
  (``CUDA_ERROR_NO_DEVICE``, ``cudaErrorInsufficientDriver``, ``ncclSystemError``,
  ``CUDNN_STATUS_NOT_INITIALIZED``, ``CUBLAS_STATUS_ARCH_MISMATCH``), by their library's own message
  text ("CUDA driver version is insufficient for CUDA runtime version") or by number after a CUDA
  word and "error"/"code"/"status"/"returned" ("CUDA error 35", "cuda runtime error (38)",
  "cudaGetDeviceCount returned 100", "CudaAPIError: [34]", "(35 vs. 0)");
* :func:`xids`: the driver's Xid lines (``NVRM: Xid (PCI:0000:01:00): 79, pid=...``);
* :func:`gpus`: NVIDIA GPU names, each with its compute capability (kb/gpu_compute_capability.json);
* :func:`versions`: versions beside their labels (CUDA, driver, torch, Python, gcc, cuDNN, NCCL) in any label
  style ("CUDA Version：11.3", "pytorch:1.10", "my gcc is 13.2.1", "driver 535").

:func:`table_signatures` turns each table entry that maps to a catalogue code into a signature
(kb/cuda_errors.json, kb/library_errors.json, kb/xid.json are the data; the entry's ``why`` is what the match
implies); ``match.for_codes`` adds them to every code's signatures, so the engine's evidence pass, triage
and the checks' own ``error_match`` all see them, weighed by position, confidence and the facts'
contradictions as any signature. A number names
an error only where the tables agree on its meaning (the current headers first; the pre-CUDA-10.1 runtime
numbering only for numbers they do not define).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from .. import kb
from .signatures import Contradiction, Signature, kb_signatures

CHECKED = "2026-11-27"
_LOWER = {"high": "medium", "medium": "low"}

# A CUDA API word: "CUDA", "cuda runtime", "cudaGetDeviceCount", "cuInit", "cuCtxCreate", "libcuda"...
_CUDA_WORD = r"(?:cuda\w*|\bcu(?:Init|Ctx\w*|Device\w*|Mem\w*|Module\w*|Launch\w*|Stream\w*|Event\w*|Link\w*|Graph\w*|DriverGetVersion|GetProcAddress\w*)\b)"
# ... then, within a few words, what introduces a status number.
_NUMBER_AFTER = (
    r"[^.;\n]{0,40}?\b(?:errors?|failure|fail(?:s|ed)?(?: with)?|status|code|returned|result)\b(?:\s*code)?\s*[:=#]?\s*[\[(]?\s*"
)


def _number_regex(n: "int | str") -> str:
    """Where a CUDA status number is written in real texts: after a CUDA word and an error word ("CUDA error 35",
    "cuda runtime error (38)", "cudaGetDeviceCount returned 100", "cuInit: UNKNOWN ERROR (303)", "CUDA initialization
    fails with 802 system error"), before one ("cuda version and 804 error"), numba's "CudaAPIError: [34]", Caffe's
    "== cudaSuccess (35 vs. 0)", a driver call's return printed after it ("cuDriverGetVersion(): 34", hashcat's
    form, NixOS/nixpkgs#310234)."""
    return (
        rf"{_CUDA_WORD}{_NUMBER_AFTER}{n}\b(?![.\d])"
        rf"|{_CUDA_WORD}[^.;\n]{{0,40}}?(?<![\d.]){n}\s+(?:[a-z]+\s+)?errors?\b"
        rf"|\bCudaAPIError:?\s*\[{n}\]"
        rf"|\bcu(?:da)?[A-Z]\w*\(\)\s*(?:[:=]|returned)\s*\(?{n}\)?(?![.\d\w])"
        rf"|==\s*cudaSuccess\s*\({n} vs\. 0\)"
    )


def _xid_regex(n: "int | str") -> str:
    """An Xid as the driver logs it ("NVRM: Xid (PCI:0000:01:00): 79, pid=...") or as people write it
    ("Xid 79", "XID error 48", "xid=94")."""
    return rf"\bXid\b(?:\s*\((?:PCI:)?[^)]{{0,40}}\))?\s*[:=]?\s*(?:errors?\s*[:=]?\s*)?{n}\b(?![.\d])"


_GENERIC_MESSAGES = {"unknown error", "no error", "success", "timeout", "initialization error"}


def _message_ok(msg: str) -> bool:
    """A library message specific enough to name its error alone (not "unknown error")."""
    m = msg.strip().rstrip(".").lower()
    return len(m) >= 20 and m not in _GENERIC_MESSAGES and len(m.split()) >= 3


def _contradictions(code: str) -> Tuple[Contradiction, ...]:
    """The facts the knowledge base's own signatures of ``code`` name as contradicting it."""
    out: List[Contradiction] = []
    for s in kb_signatures():
        if s.code == code:
            out += [c for c in s.contradicted_by if c not in out]
    return tuple(out)


def _sources(table: str) -> Tuple[str, ...]:
    return tuple(s["url"] for s in kb.tables()[table]["sources"])


@functools.lru_cache(maxsize=None)
def table_signatures() -> Tuple[Signature, ...]:
    """Signatures made from the error and Xid tables' entries that map to a catalogue code."""
    sigs: List[Signature] = []
    seen = set()

    def add(code: str, regex: str, confidence: str, implies: str, table: str) -> None:
        if (code, regex) in seen:
            return
        seen.add((code, regex))
        sigs.append(
            Signature(
                code=code,
                regex=regex,
                confidence=confidence,
                implies=implies,
                contradicted_by=_contradictions(code),
                sources=_sources(table),
                checked=CHECKED,
                origin="kb-table",
            )
        )

    for label, rows in kb.error_tables().items():
        table = "cuda_errors" if label.startswith("CUDA") else "library_errors"
        for e in rows:
            if not e.get("code"):
                continue
            what = f"{label} {e['name']} ({e['value']}): {e['why']}"
            add(e["code"], rf"\b{re.escape(e['name'])}\b", e["confidence"], what, table)
            msg = e.get("message", "")
            if msg and _message_ok(msg):
                add(e["code"], re.escape(msg.strip().rstrip(".")), e["confidence"], what, table)
    # One signature per (code, confidence) for all its numbers: a long paste is scanned once per code, not per number.
    groups: Dict[Tuple[str, str], List[int]] = {}
    for n, (code, conf, _what) in sorted(_unambiguous_numbers().items()):
        if conf in _LOWER:
            groups.setdefault((code, _LOWER[conf]), []).append(n)
    for (code, conf), ns in groups.items():
        what = "; ".join(f"CUDA error {n} = {_unambiguous_numbers()[n][2]}" for n in ns)
        add(code, _number_regex("(?:" + "|".join(map(str, ns)) + ")"), conf, what, "cuda_errors")
    for r in kb._load("xid")["xids"]:
        if r.get("code"):
            what = f"Xid {r['xid']} ({r.get('description') or r.get('mnemonic')}): {r['why']}"
            add(r["code"], _xid_regex(r["xid"]), r["confidence"], what, "xid")
    return tuple(sigs)


@functools.lru_cache(maxsize=None)
def _unambiguous_numbers() -> Dict[int, Tuple[str, str, str]]:
    """CUDA status number -> (code, weakest confidence, what) where every entry the number names maps to
    that one code."""
    out: Dict[int, Tuple[str, str, str]] = {}
    order = ("low", "medium", "high")
    for n, entries in kb._cuda_numbers().items():
        codes = {e.get("code") for _label, e in entries}
        if len(codes) != 1 or None in codes:
            continue
        conf = min((e["confidence"] for _l, e in entries), key=order.index)
        names = " / ".join(e["name"] for _l, e in entries)
        out[n] = (entries[0][1]["code"], conf, f"{names}: {entries[0][1]['why']}")
    return out


# ---------------------------------------------------------------- plain extractors


@dataclass(frozen=True)
class ErrorRef:
    """One error named in a text."""

    api: str  # "CUDA runtime API", "NCCL", ...
    name: str
    value: Optional[int]
    code: Optional[str]  # the catalogue code it means, if any
    how: str  # "name" | "message" | "number"
    text: str  # what matched


@functools.lru_cache(maxsize=None)
def _name_rx() -> "re.Pattern[str]":
    return re.compile(
        r"\b(CUDA_ERROR_[A-Z0-9_]+|cudaError[A-Za-z0-9]+|nccl(?:UnhandledCudaError|SystemError|InternalError|InvalidArgument|InvalidUsage|RemoteError|InProgress|Timeout)|CUDNN_STATUS_[A-Z0-9_]+|CUBLAS_STATUS_[A-Z0-9_]+)\b"
    )


@functools.lru_cache(maxsize=None)
def _message_rx() -> Tuple[Tuple["re.Pattern[str]", str, dict], ...]:
    out = []
    for label, rows in kb.error_tables().items():
        for e in rows:
            msg = e.get("message", "")
            if msg and _message_ok(msg) and "legacy" not in label and "older" not in label:
                out.append((re.compile(re.escape(msg.strip().rstrip(".")), re.IGNORECASE), label, e))
    return tuple(out)


def errors(text: str) -> List[ErrorRef]:
    """Every CUDA / NCCL / cuDNN / cuBLAS error named in ``text``, in order of appearance (each name once)."""
    found: List[Tuple[int, ErrorRef]] = []
    flat = re.sub(r"\s+", " ", text or "")
    for m in _name_rx().finditer(flat):
        hit = kb.error_entry(m.group(1))
        if hit and hit[1]["value"] != 0:  # cudaSuccess, CUDA_SUCCESS, ...: not an error
            label, e = hit
            found.append((m.start(), ErrorRef(label, e["name"], e["value"], e.get("code"), "name", m.group(0))))
    for rx, label, e in _message_rx():
        for m in rx.finditer(flat):
            found.append((m.start(), ErrorRef(label, e["name"], e["value"], e.get("code"), "message", m.group(0))))
    num = re.compile(_number_regex(r"(\d{1,5})"), re.IGNORECASE)
    for m in num.finditer(flat):
        n = int(next(g for g in m.groups() if g))
        entries = kb.errors_numbered(n)
        if entries:
            codes = {e.get("code") for _l, e in entries}
            label, e = entries[0]
            code = codes.pop() if len(codes) == 1 else None
            name = " / ".join(x["name"] for _l, x in entries)
            found.append((m.start(), ErrorRef(label, name, n, code, "number", m.group(0))))
    found.sort(key=lambda p: p[0])
    out: List[ErrorRef] = []
    for _pos, ref in found:
        if all(not (o.name == ref.name and o.how == ref.how) for o in out):
            out.append(ref)
    return out


@dataclass(frozen=True)
class XidRef:
    xid: int
    description: Optional[str]
    code: Optional[str]
    text: str


def xids(text: str) -> List[XidRef]:
    """Every Xid in ``text`` (each number once), with NVIDIA's description and our code where one applies."""
    out: List[XidRef] = []
    for m in re.finditer(_xid_regex(r"(\d{1,3})"), text or "", re.IGNORECASE):
        n = int(m.group(1))
        if any(x.xid == n for x in out):
            continue
        r = kb.xid(n) or {}
        out.append(XidRef(n, r.get("description") or r.get("mnemonic"), r.get("code"), m.group(0)))
    return out


# Where a GPU name may start: a brand word or a model number ("A100", "K40m", "4090"); what follows on
# the same line, up to a quote, bracket, comma or table bar, is tried longest first against the table.
_GPU_START = re.compile(
    r"(?<![\w.-])(?:NVIDIA|GeForce|Quadro|Tesla|TITAN|Jetson|RTX|GTX|GT|MX|NVS|[A-Z]{1,2}\d{1,4}[A-Za-z]{0,2}|\d{3,4}[A-Za-z]{0,2})(?![\w.])"
)
_NOT_NAME = {"with", "and", "or", "on", "in", "for", "is", "was", "the", "a", "an", "to", "from", "card", "graphics"}
_GLUED = re.compile(r"\b(RTX|GTX|GT|MX)(\d{2,4})", re.IGNORECASE)
_GPU_STOP = re.compile(r"[\"'`,;:()\[\]|<>{}=]")


def gpus(text: str) -> List[Tuple[str, str]]:
    """NVIDIA GPU names in ``text`` that the capability table knows: [(name as written, "8.6"), ...], each
    name once, the longest reading first ("RTX 3060 Ti" rather than "RTX 3060"; "TITAN Xp")."""
    out: List[Tuple[str, str]] = []
    for line in (text or "").splitlines():
        line = _GLUED.sub(r"\1 \2", line)  # "RTX3090", "rtx4090", "GTX1080Ti" as people write them
        done = 0
        for m in _GPU_START.finditer(line):
            if m.start() < done:
                continue
            words: List[str] = []
            for w in line[m.start() :].split()[:7]:
                cut = _GPU_STOP.search(w)
                if cut:
                    if cut.start():
                        words.append(w[: cut.start()])
                    break
                words.append(w)
            for k in range(len(words), 0, -1):
                if k > 1 and words[k - 1].lower() in _NOT_NAME:
                    continue  # "RTX 3090 with ...": prose after the name, not part of it
                name = " ".join(words[:k])
                cc = kb.compute_capability(name)
                if cc:
                    if all(name != n for n, _c in out):
                        out.append((name, cc))
                    done = m.start() + len(name)
                    break
    return out


# ---------------------------------------------------------------- versions beside labels

#: (markdown emphasis or code ticks around the number, "driver **595.79**", "torch `2.1.0`", count as nothing.)
_SEP = r"[ \t]*(?:[:：=]|\bis\b|\bversion\b|\bver\.?|\bv(?=\d))?[ \t]*(?:[:：=][ \t]*)?(?:==)?[ \t]*[*`]{0,2}v?"
#: label -> (regex of the label, regex of its version). A label, then at most a few words on the same line
#: ("my gcc is 13.2.1", "CUDA Version：11.3", "pytorch:1.10", "driver 535", "Python version I use is 3.10").
_VERSION_LABELS = {
    "cuda": (r"\bCUDA(?:[ \t]+(?:runtime|toolkit|toolchain))?", r"(\d{1,2}\.\d)(?:\.\d+)?(?![\d.])"),
    "driver": (r"\b(?:NVIDIA[ \t]+)?driver", r"(\d{3}(?:\.\d{1,3}){0,2})(?![\d.])"),
    "torch": (r"\b(?:py)?torch", r"(\d\.\d{1,2}(?:\.\d{1,2})?(?:\+\w+|a0\+\w+|\.dev\d+)?)(?![\d.])"),
    "python": (r"\bpython3?", r"(\d\.\d{1,2}(?:\.\d{1,2})?)(?![\d.])"),
    "gcc": (r"\b(?:gcc|g\+\+)", r"(\d{1,2}(?:\.\d{1,2}){0,2})(?![\d.])"),
    "cudnn": (r"\bcuDNN", r"(\d{1,2}(?:\.\d{1,2}){1,3})(?![\d.])"),
    "nccl": (r"\bNCCL", r"(\d\.\d{1,2}(?:\.\d{1,2})?)(?![\d.])"),
}
_BETWEEN = r"(?:[ \t]+(?:[A-Za-z]+[ \t]+){0,3}?)?"


@functools.lru_cache(maxsize=None)
def _version_rx() -> Dict[str, "re.Pattern[str]"]:
    return {
        k: re.compile(rf"{label}(?![\w.]){_BETWEEN}{_SEP}{ver}", re.IGNORECASE) for k, (label, ver) in _VERSION_LABELS.items()
    }


def versions(text: str) -> Dict[str, List[str]]:
    """Versions written beside their label anywhere in ``text``, in order of appearance, each once:
    {"cuda": ["11.3"], "torch": ["1.10"], "gcc": ["13.2.1"], "driver": ["535"], ...}. Labels in any case, with
    ':', full-width '：', '=', '==', 'is', 'version' or a few words between ("my gcc is 13.2.1"). A label with no
    version beside it gives nothing: never a guess."""
    out: Dict[str, List[str]] = {}
    for k, rx in _version_rx().items():
        for m in rx.finditer(text or ""):
            v = m.group(1)
            if v not in out.setdefault(k, []):
                out[k].append(v)
    return {k: v for k, v in out.items() if v}
