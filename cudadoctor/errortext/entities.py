"""Entities in error text: a missing NVIDIA library, a pair of versions that disagree.

Not sentences but things: any line where a CUDA-family library name (kb/cuda_libraries.json: Linux
sonames ``libcusolver.so.10``, ldd's ``libcudart.so.10.0 => not found``, Windows ``cudart64_80.dll``,
macOS dylibs, "The cuSPARSE library") stands beside any failure phrase (cannot open, not found, could
not load / find / locate, DLL load failed, ...) is a :class:`MissingLibrary`, whatever tool wrote it
(TensorFlow, MXNet, CuPy, JAX, onnxruntime, CTranslate2, Paddle, ctypes, ldd, dlopen). Any sentence
naming a library with a built / compiled / required version and a found / loaded / installed one is
a :class:`VersionPair`. :func:`entity_matches` is an evidence provider (errortext/evidence.py
PROVIDERS): it turns each entity into a match of the code the kb table names for its family, at
medium confidence, so the specific signatures (kb/errors/) still win where they match.

Pure: no I/O (the table is read-only package data).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .match import Match
from .normalize import ROLE_WEIGHT, line_roles
from .extract import table_signatures
from .signatures import Signature, compiled, kb_signatures, prefilter


@functools.lru_cache(maxsize=1)
def table() -> Dict[str, Any]:
    """kb/cuda_libraries.json: the library families, what their numbers mean, the code per kind."""
    from cudadoctor import kb  # the kb's one reader of its tables (imported here: kb imports interpret)

    doc: Dict[str, Any] = kb._load("cuda_libraries")
    return doc


@functools.lru_cache(maxsize=1)
def _by_name() -> Dict[str, Dict[str, Any]]:
    out: Dict[str, Dict[str, Any]] = {}
    for fam in table()["families"]:
        for n in fam["names"]:
            out[n.lower()] = fam
        for p in fam["prose"]:
            out[p.lower()] = fam
    return out


def _alt(names: List[str]) -> str:
    return "|".join(re.escape(n) for n in sorted(set(names), key=lambda n: (-len(n), n)))


@functools.lru_cache(maxsize=1)
def _token() -> "re.Pattern[str]":
    fams = table()["families"]
    names = _alt([n for f in fams for n in f["names"]])
    prose = _alt([p for f in fams for p in f["prose"]])
    return re.compile(
        rf"\blib(?P<so>{names})\.so(?P<sov>(?:\.\d+){{0,3}})(?![\w-])"
        rf"|\blib(?P<dy>{names})(?:\.(?P<dyv>\d+(?:\.\d+)*))?\.dylib\b"
        # "cublas64_xx.dll", "cublasxx.dll", "cudnn*.dll": a program's or a FAQ's placeholder for the number
        rf"|\b(?P<dll>{names})(?:64_(?P<dllv>\d+(?:_\d+)?)|64_?(?:xx|XX|\*)|xx|XX|\*|64)?\.dll\b"
        rf"|\b(?:The |Unable to load |Could not load |Failed to load )(?P<pr>{prose})(?: library| libraries)?\b",
        re.IGNORECASE,
    )


#: Any tool's words for "this file could not be loaded" (the loader's, ldd's, Windows', Python's, the tools' own).
FAILURE = re.compile(
    r"cannot open shared object file|No such file or directory|=>\s*not found|\bnot found\b|"
    r"\bcould(?: not|n'?t) (?:be )?(?:load|find|locate|open|dlopen)|\bcan(?:not|'t) (?:be )?(?:load|find|locate|open|loaded|found)|"
    r"\bunable to (?:load|find|locate|open)|\bfailed to (?:load|find|locate|open|dlopen)|DLL load failed|"
    r"\b(?:is|was|were|are) (?:not found|missing|not installed)|\bnot (?:be )?loaded\b|\bis missing\b|\bmissing\b|"
    r"Library not loaded|image not found|error while loading shared libraries|\bdlerror\b|"
    r"\b(?:does not|doesn'?t) exist\b|\blooking for\b[^\n]{0,80}?\bbut\b|"
    # the same in the other languages users write and Windows localises ERROR_MOD_NOT_FOUND into ("找不到指定的模块",
    # "Das angegebene Modul wurde nicht gefunden", "Не найден указанный модуль", "No se puede encontrar el módulo
    # especificado", "Le module spécifié est introuvable", "지정된 모듈을 찾을 수 없습니다")
    r"找不到|无法(?:打开|加载|找到)|無法(?:開啟|載入|找到)|缺少|缺失|不存在|未找到|没有找到|沒有找到|見つかりません|見つからない|"
    r"読み込めません|찾을 수 없|로드할 수 없|не найден|не удается (?:найти|загрузить)|не удалось (?:найти|загрузить)|"
    r"отсутству|nicht gefunden|konnte nicht (?:geladen|gefunden)|fehlt\b|no se (?:puede|pudo) (?:encontrar|cargar)|"
    r"no se encontr|introuvable|impossible de (?:charger|trouver)|não (?:foi possível|pode) (?:encontrar|carregar)|"
    r"não encontrad|non trovat|impossibile (?:caricare|trovare)",
    re.IGNORECASE,
)

#: Lines where the library is present but wrong (a symbol, a version node): the shadowing signatures read those.
_NOT_MISSING = re.compile(
    r"undefined symbol|version [`'‘]\S+' not found|=>\s*/|Successfully opened|opened dynamic library|"
    r"no version information available",
    re.IGNORECASE,
)

#: A package that loads its own cuDNN (not torch's): its missing cuDNN is its missing dependency.
_OWN_CUDNN_PACKAGE = re.compile(
    r"ctranslate2|faster[_-]?whisper|whisperx|onnxruntime|libonnxruntime|paddle|mxnet|cupy",
    re.IGNORECASE,
)

#: The text sets the loader's path by hand (JAX's install guide: LD_LIBRARY_PATH overrides the pip CUDA libraries).
_LOADER_PATH_SET = re.compile(r"\b(?:export\s+)?LD_(?:PRELOAD|LIBRARY_PATH)=\S", re.IGNORECASE)


@dataclass(frozen=True)
class MissingLibrary:
    """A library a program could not load: as written, its family, what its number means."""

    name: str  # as written: libcusolver.so.10, cudart64_80.dll, cuSPARSE
    family: str  # cudart, cublas, ..., cudnn, nccl, driver, tensorrt
    kind: str  # cuda | cudnn | nccl | driver | tensorrt
    number: Optional[str]  # the number in the file name: "10", "9.0", "80"; None for prose
    means: Tuple[str, ...]  # the CUDA releases (or cuDNN majors) that number belongs to, per the kb table
    line: int  # 1-based, in the text
    line_text: str

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "family": self.family,
            "kind": self.kind,
            "number": self.number,
            "means": list(self.means),
            "line": self.line,
        }


def _means(fam: Dict[str, Any], number: Optional[str], dll: bool) -> Tuple[str, ...]:
    if not number:
        return ()
    tab = fam["dlls"] if dll else fam["sonames"]
    if number in tab:
        return tuple(tab[number])
    head = number.split(".")[0] if not dll else number.split("_")[0]
    return tuple(tab.get(head, ()))


def missing_libraries(text: str) -> List[MissingLibrary]:
    """Every library in ``text`` that a line (or the line after it, ldd / dlerror style) says could not be loaded."""
    out: List[MissingLibrary] = []
    lines = text.split("\n")
    rx = _token()
    for i, line in enumerate(lines):
        if len(line) > 4096:
            line = line[:2048] + " " + line[-2048:]
        ms = list(rx.finditer(line))
        if not ms or _NOT_MISSING.search(line):
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        fail = FAILURE.search(line) or (FAILURE.search(nxt) if re.match(r"\s*(?:=>|dlerror|Error|Reason|OSError)", nxt) else None)
        if not fail:
            continue
        seen = set()
        for m in ms:
            written = m.group(0)
            base = m.group("so") or m.group("dy") or m.group("dll") or m.group("pr")
            fam = _by_name().get(base.lower())
            if fam is None:
                continue
            dll = m.group("dll") is not None
            number = (m.group("sov") or "").lstrip(".") or m.group("dyv") or m.group("dllv") or None
            if m.group("pr"):
                written = base
            key = (fam["family"], written.lower())
            if key in seen:
                continue
            seen.add(key)
            out.append(
                MissingLibrary(written, fam["family"], fam["kind"], number, _means(fam, number, dll), i + 1, line.strip()[:400])
            )
    return out


# --- version pairs ---------------------------------------------------------------------------

_V = r"v?(\d+(?:\.\d+){0,3})"
_LIBS = r"(cuDNN|CuDNN|CUDNN|NCCL|TensorRT|CUDA driver|driver|nvenc API|CUDA(?: runtime| toolkit)?|cudart)"
#: "<lib> ... <built word> <v1> ... <found word> <v2>" in one sentence, and the reverse order.
_BUILT = r"(?:compiled (?:with|against)|built (?:with|against|for)|source was compiled with|requires?|required|expects?|needs?|minimum(?: required)?)"
_FOUND = r"(?:found|loaded|installed|in your (?:machine|system)|linked against|runtime version|detected|current(?:ly)?|but (?:got|have)|on your system)"
_PAIR = re.compile(
    rf"{_LIBS}[^.;\n]{{0,80}}?\b{_BUILT}\b[^\d\n]{{0,30}}{_V}[^\n]{{0,90}}?\b{_FOUND}\b[^\d\n]{{0,30}}{_V}"
    rf"|{_LIBS}[^.;\n]{{0,80}}?\b{_FOUND}\b[^\d\n]{{0,30}}{_V}[^\n]{{0,90}}?\b{_BUILT}\b[^\d\n]{{0,30}}{_V}"
    rf"|{_BUILT}\b[^\d\n]{{0,12}}{_LIBS}[^\d\n]{{0,30}}{_V}[^\n]{{0,90}}?\b{_LIBS}[^\d\n]{{0,50}}?{_FOUND}[^\d\n]{{0,30}}{_V}"
    rf"|\b{_FOUND}[^\d\n]{{0,12}}{_LIBS}[^\d\n]{{0,30}}{_V}[^\n]{{0,90}}?\b{_BUILT}\b[^\d\n]{{0,30}}{_V}"
    rf"|Required:\s*{_V}\s*Found:\s*{_V}"
    # a header (what the build compiled against) and a library (what loads) of another version: Theano's "Mixed dnn
    # version. The header is version 5005 while the library is version 5110", cudnn.h vs libcudnn in any order
    rf"|(?P<hl>(?:cu)?dnn|cuDNN|NCCL)[^\n]{{0,60}}?\bheaders?\b[^\d\n]{{0,30}}{_V}[^\n]{{0,60}}?\blibrary\b[^\d\n]{{0,30}}{_V}",
    re.IGNORECASE,
)
_DRIVER_WORDS = re.compile(r"driver|nvenc", re.IGNORECASE)


@dataclass(frozen=True)
class VersionPair:
    """A library named with the version something was built for and the version found."""

    library: str  # cudnn | cuda | driver | nccl | tensorrt
    required: str
    found: str
    line: int
    line_text: str


def _lib_kind(name: str) -> str:
    n = name.lower()
    if "cudnn" in n or n == "dnn":
        return "cudnn"
    if "nccl" in n:
        return "nccl"
    if "tensorrt" in n:
        return "tensorrt"
    if "driver" in n or "nvenc" in n:
        return "driver"
    return "cuda"


def version_pairs(text: str) -> List[VersionPair]:
    """Every sentence naming a library with a required (built, compiled) version and a found (loaded, installed) one."""
    out: List[VersionPair] = []
    for i, line in enumerate(text.split("\n")):
        for m in _PAIR.finditer(line[:4096]):
            g = m.groups()
            if g[0]:  # lib, built v1, found v2
                lib, req, found = g[0], g[1], g[2]
            elif g[3]:  # lib, found v1, built v2
                lib, found, req = g[3], g[4], g[5]
            elif g[6]:  # built lib v1 ... lib found v2
                lib, req, found = g[6], g[7], g[9]
            elif g[10]:  # found lib v1 ... built v2
                lib, found, req = g[10], g[11], g[12]
            elif m.group("hl"):  # <lib> ... header X ... library Y
                lib, req, found = m.group("hl"), g[16], g[17]
            else:  # Required: X Found: Y (the sentence before names the library)
                lib = "driver" if _DRIVER_WORDS.search(line) else ""
                req, found = g[13], g[14]
                if not lib:
                    continue
            if req == found:
                continue
            out.append(VersionPair(_lib_kind(lib), req, found, i + 1, line.strip()[:400]))
    return out


def _vt(v: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v))


def _pair_code(p: VersionPair) -> Optional[str]:
    if p.library == "cudnn":
        return "cudnn-mismatch"
    if p.library == "driver":
        return "driver-too-old" if _vt(p.found) < _vt(p.required) else None
    if p.library == "cuda":
        return "cuda-toolkit-mismatch"
    return None


# --- undefined symbols of a CUDA library's API ----------------------------------------------


@dataclass(frozen=True)
class UndefinedSymbol:
    """The loader could not resolve a symbol of a CUDA library's API: the copy it found is older than the caller's."""

    symbol: str
    family: str  # cudnn, cublas, ..., driver (kb/cuda_libraries.json "symbols")
    line: int
    line_text: str


@functools.lru_cache(maxsize=1)
def _symbol_rx() -> "re.Pattern[str]":
    pre = table()["symbols"]["prefixes"]
    alts = "|".join(f"(?P<{fam}>{rx})" for fam, rx in pre.items())
    return re.compile(rf"\bundefined symbol:?\s*(?P<sym>(?:{alts})\w*)(?!\w|, version)")


def undefined_symbols(text: str) -> List[UndefinedSymbol]:
    """Every ``undefined symbol: <API name>`` of a CUDA library (not cudart's cudaXxx: see the kb table's note)."""
    out: List[UndefinedSymbol] = []
    rx = _symbol_rx()
    for i, line in enumerate(text.split("\n")):
        for m in rx.finditer(line[:4096]):
            fam = next(k for k, v in m.groupdict().items() if v and k != "sym")
            out.append(UndefinedSymbol(m.group("sym"), fam, i + 1, line.strip()[:400]))
    return out


# --- the provider ----------------------------------------------------------------------------

CHECKED = "2026-11-28"


def _library_code(lib: MissingLibrary, text: str) -> Optional[str]:
    codes = table()["codes"]
    if lib.kind == "cudnn" and _OWN_CUDNN_PACKAGE.search(text):
        return str(codes["cudnn_other_package"])
    code = codes.get(lib.kind)
    return str(code) if code else None


def _signature(code: str, implies: str, regex: str) -> Signature:
    return Signature(
        code=code,
        regex=regex,
        confidence="medium",
        implies=implies,
        sources=tuple(s["url"] for s in table()["sources"]),
        checked=CHECKED,
        origin="entity",
    )


def _score(roles: List[str], idx: int, n: int, literal: int) -> float:
    spec = 0.3 + 0.7 * min(literal, 60) / 60
    return spec * ROLE_WEIGHT[roles[idx]] * 0.85 * (1 + 0.1 * idx / max(n, 1))


def _said_otherwise(line: str) -> bool:
    """Whether a signature (kb/errors/, the kb tables) already reads this line: the entity then adds nothing."""
    low = line.lower()
    for sig in (*kb_signatures(), *table_signatures()):
        need = prefilter(sig.regex)
        if need is not None and not any(lit in low for lit in need):
            continue
        if compiled(sig.regex).search(line):
            return True
    return False


def entity_find(text: str, where: str) -> Tuple[Dict[str, List[Match]], List[str]]:
    """The matches the entities of one normalised text give, by code."""
    out: Dict[str, List[Match]] = {}
    libs = missing_libraries(text)
    pairs = version_pairs(text)
    syms = undefined_symbols(text)
    if not libs and not pairs and not syms:
        return out, []
    lines = text.split("\n")
    roles = line_roles(lines)
    n = len(lines)
    for lib in libs:
        code = _library_code(lib, text)
        if not code or _said_otherwise(lib.line_text):
            continue
        means = f" (its number {lib.number} means {', '.join(lib.means)})" if lib.means else ""
        implies = f"missing library {lib.name}: {lib.family}{means}"
        sig = _signature(code, implies, re.escape(lib.name))
        s = _score(roles, lib.line - 1, n, 20 + len(lib.name))
        out.setdefault(code, []).append(Match(sig.regex, lib.name, lib.line, lib.line_text, roles[lib.line - 1], s, where, sig))
        if lib.kind == "cuda" and _LOADER_PATH_SET.search(text):
            # JAX's install guide: a hand-set LD_LIBRARY_PATH / LD_PRELOAD overrides the pip CUDA libraries.
            sh = _signature("library-shadowing", implies + ", with the loader path set by hand", re.escape(lib.name))
            out.setdefault("library-shadowing", []).append(
                Match(sh.regex, lib.name, lib.line, lib.line_text, roles[lib.line - 1], s * 0.9, where, sh)
            )
    for u in syms:
        if _said_otherwise(u.line_text):
            continue
        who = "the driver's libcuda" if u.family == "driver" else u.family
        sig = _signature(
            "library-shadowing",
            f"undefined symbol {u.symbol}: the {who} found by the loader is older than the one the caller was linked against",
            re.escape(u.symbol),
        )
        s = _score(roles, u.line - 1, n, 30 + len(u.symbol))
        out.setdefault("library-shadowing", []).append(
            Match(sig.regex, u.symbol, u.line, u.line_text, roles[u.line - 1], s, where, sig)
        )
    for p in pairs:
        code = _pair_code(p)
        if not code or _said_otherwise(p.line_text):
            continue
        sig = _signature(code, f"{p.library}: required {p.required}, found {p.found}", re.escape(p.line_text[:80]))
        s = _score(roles, p.line - 1, n, 50)
        out.setdefault(code, []).append(
            Match(sig.regex, p.line_text[:300], p.line, p.line_text, roles[p.line - 1], s, where, sig)
        )
    return out, []


def _major(v: str) -> Optional[int]:
    m = re.match(r"(\d+)", v)
    return int(m.group(1)) if m else None


def wanted_cuda(lib: MissingLibrary) -> Dict[str, Any]:
    """What a missing library says about the CUDA the program was built for (kb/cuda_libraries.json):
    ``release`` (CUDA release(s), as text), ``old`` (a pre-11 release whose sonames carry major.minor:
    install that release's libraries), ``wheel`` (the pip wheel that ships it, nvidia-<name>-cu<major>, or None)."""
    fam = next((f for f in table()["families"] if f["family"] == lib.family), None)
    concrete = [m for m in lib.means if re.match(r"\d+(?:\.\d+)?\+?$", m)]
    majors = sorted({x for x in (_major(m) for m in concrete) if x is not None})
    release = (", ".join(concrete[:-1]) + " or " + concrete[-1] if len(concrete) > 1 else "".join(concrete)) or (lib.number or "")
    old = len(concrete) == 1 and "." in concrete[0] and (_major(concrete[0]) or 99) < 11
    wheel = None
    # pip wheels exist from CUDA 11.1 on; a soname that also (or only) belongs to an earlier release has none
    pip_era = bool(concrete) and all((_major(m) or 0) >= 11 and m != "11.0" for m in concrete)
    if fam and fam.get("wheel") and lib.kind == "cuda" and pip_era:
        num = _major(lib.number or "")
        wmajor = num if num in majors else majors[-1]
        wheel = f"nvidia-{fam['wheel']}-cu{wmajor}"
    module = str(fam["wheel"]).replace("-", "_") if fam and fam.get("wheel") else None
    return {"release": release, "old": old, "wheel": wheel, "module": module, "majors": majors}


def short_name(lib: MissingLibrary) -> str:
    """The library's name without prefix, number and extension: libcusolver.so.10 -> cusolver, cudart64_80.dll -> cudart."""
    return re.sub(r"(?:64)?(?:_\d+)*(?:\.\d+)*\.(?:so|dll|dylib)(?:\.[\d.]*)?$", "", re.sub(r"^lib", "", lib.name))
