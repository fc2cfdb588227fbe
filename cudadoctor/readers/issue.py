"""Read a whole pasted GitHub issue body or ticket into one facts document and the error text.

Users paste, in any order, fenced (```` ``` ````, ``~~~``, ``<details>``) or not: collect_env's
report, the ``nvidia-smi`` banner or ``nvidia-smi -q``, ``deviceQuery``, ``nvcc --version``,
``pip list`` / ``pip freeze`` / ``conda list``, tracebacks, and prose. :func:`read` finds each part
(by line range), reads the parts it knows with the readers beside this module, and keeps what looks
like an error (tracebacks, error lines) as the error text the checks match. Template prose
(headings, HTML comments, check boxes) and sentences without an error in them are ignored, and
said to be. Pure function of the text, like every reader: no I/O, no guessing.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .. import __version__
from ..facts import FactsError, new_facts, sanitize
from . import containers, devicequery, multigpu, nogpu, nvidia_smi, packages, uvm
from ._collect_env_lines import _KEY_RX, CORE_KEYS, _CANON
from ._text import is_fence, raw_lines

MAX_TEXT_CHARS = 2 * 1024 * 1024
MAX_LINES = 50_000
MAX_ERROR_CHARS = 20000

#: Part kinds, in the order they are looked for.
KINDS = (
    "nvidia-smi",
    "nvidia-smi-q",
    "devicequery",
    "collect_env",
    "pip-list",
    "conda-list",
    "pip-freeze",
    "nvcc",
    "system-packages",
    "traceback",
    "error",
    "text",
    "ignored",
)

_SMI_TABLE = re.compile(r"^\s*[|+]")
_SMI_HEADER = re.compile(r"NVIDIA-SMI\s+\S+\s+(?:Driver|KMD)\s+Version", re.I)
#: A GPU row's Memory-Usage cell ("|  15514MiB / 16130MiB |"): a banner table pasted without its header line.
_SMI_MEMORY_CELL = re.compile(r"\|\s*\d+\s*MiB\s*/\s*\d+\s*MiB\s*\|")
_SMI_ONE_LINE = re.compile(
    r"NVIDIA-SMI has failed|Failed to initialize NVML|^\s*No devices were found\s*$|"
    r"Unable to determine the device handle for GPU|NVIDIA-SMI couldn'?t find libnvidia-ml",
    re.I,
)
_TIMESTAMP = re.compile(r"^\s*(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+\w{3}\s+\d{1,2}\s+\d\d:\d\d:\d\d\s+\d{4}\s*$")
_Q_START = re.compile(
    r"=+\s*NVSMI LOG\s*=+|^\s*Attached GPUs\s*:|^GPU\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]\s*$"
)
_Q_SECTIONS = re.compile(
    r"^\s+(?:Remapped Rows|ECC Errors|Ecc Errors|Retired Pages|Clocks (?:Throttle|Event) Reasons|"
    r"FB Memory Usage|GPU Link Info|PCIe Generation|Product Name\s*:|Compute Mode\s*:|"
    r"Persistence Mode\s*:|MIG Mode)\s*$|^\s+(?:Product Name|Compute Mode|Persistence Mode)\s*:",
    re.I,
)
_Q_LINE = re.compile(r"^(?:\s+\S|[A-Za-z][\w .()/-]{0,80}?\s{0,80}:|GPU\s+[0-9A-Fa-f:.]+$)")
_NVCC = re.compile(r"Cuda compilation tools,\s*release\s+(\d+\.\d+),\s*V(\d+(?:\.\d+)+)")
#: A system package manager's listing: `apt list --installed` ("libnccl2/unknown,now 2.8.4-1+cuda11.2 amd64 [installed]")
#: and `dpkg -l` ("ii  nvidia-driver-535  535.104.05-0ubuntu1  amd64  NVIDIA driver metapackage").
_APT_ROW = re.compile(
    r"^\s*[a-z0-9][a-z0-9+.-]*/[\w.,/-]+\s+\S+\s+(?:amd64|arm64|i386|all|ppc64el|armhf|s390x)(?:\s+\[[^\]]*\])?\s*$"
)
_DPKG_ROW = re.compile(
    r"^\s*(?:ii|hi|rc|iU|iF|un|pn)\s+[a-z0-9][a-z0-9+.:-]*\s+\S+\s+(?:amd64|arm64|i386|all|ppc64el|armhf|s390x)\b"
)
_TB_START = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_EXC_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)|[\w.]*Error)\b\s*(?::|$)")
#: Words that make a line error text (matched as lower-case substrings: linear in the line).
_ERROR_WORDS = (
    "error",
    "exception",
    "failed",
    "failure",
    "fatal",
    "not compatible",
    "undefined symbol",
    "no module named",
    "cannot open shared object",
    "insufficient",
    "warning",
    "segmentation fault",
    "core dumped",
    "cuda_error",
    "cudnn_status",
    "cublas_status",
    "nccl",
    "out of memory",
    "not found",
    "unable to",
    "no kernel image",
    "is not available",
    "torch not compiled",
    "unknown error",
    "illegal",
    "assert",
    "mismatch",  # NVRM: API mismatch: the client ... has the version ...
    "nvrm:",  # kernel log lines of the NVIDIA driver
)
#: What else reads like an error, whatever the program that printed it: a severity word, a refusal
#: ("cannot", "not supported", "too old"), a log-level prefix (glog's ``E0000 12:00:00``, ``[E ...]``,
#: apt's ``E:``, ``ERROR``/``FATAL``), kernel lines (``NVRM``, ``Xid``, dmesg timestamps), and the
#: names every CUDA tool's errors carry (enum prefixes, ``sm_``/``compute_`` targets, nvcc, ptxas,
#: stub libraries, nouveau).
_ERROR_TOKENS = frozenset(
    "err errno panic abort aborted aborting critical crash crashed crashes killed denied refused rejected timeout "
    "traceback fault oops cannot unable unsupported incompatible invalid missing mismatch mismatched degraded "
    "downgraded nvrm xid nvcc ptxas stub stubs nouveau dkms modprobe secureboot".split()
)
_ERROR_PHRASES = (
    "can't",
    "can not",
    "could not",
    "couldn't",
    "couldnt",
    "couldn\u2018t",
    "couldn\u2019t",
    "too old",
    "too new",
    "no longer",
    "no such",
    "has no attribute",
    "timed out",
    "time out",
    "secure boot",
    "kernel driver in use",
    # package resolvers' refusals (uv's "× No solution found when resolving dependencies:", "...we can conclude that
    # your project's requirements are unsatisfiable"; pip's "ResolutionImpossible"; Poetry's "version solving failed")
    "no solution found",
    "unsatisfiable",
    "there is no version of",
    "we can conclude that",
    "resolutionimpossible",
    "version solving failed",
    # the same words in the other languages reporters write in (a title "import fluid提示找不到libcudart.so.9.0")
    "报错",
    "錯誤",
    "错误",
    "失败",
    "失敗",
    "找不到",
    "无法",
    "無法",
    "缺少",
    "不存在",
    "不支持",
    "エラー",
    "見つかりません",
    "できません",
    "오류",
    "에러",
    "실패",
    "찾을 수 없",
    "ошибк",
    "не удает",
    "не удалось",
    "не найден",
    "fehler",
    "nicht gefunden",
    "erreur",
    "introuvable",
    "no se puede",
    "no se encontr",
    "não foi possível",
)
_WORD = re.compile(r"[a-z]+")
#: A refusal: "not supported", "doesn't support", ...
_NEGATION = re.compile(
    r"\bnot (?:an? )?(?:found|supported|compatible|available|installed|loaded|enabled|recogni[sz]ed|allowed|permitted|"
    r"detected|initiali[sz]ed|present|built|compiled|defined)\b|\bdoes ?n[o'\u2019]?t (?:support|exist|match|work|have)\b"
)
#: Log-level prefixes: glog's "E0000 12:00:00", "[E ...]", apt's "E:", ERROR/FATAL/WARN. (A dmesg timestamp alone is
#: not one: a kernel log is mostly harmless lines, and its NVRM/Xid lines are found by their words.)
_LEVEL_PREFIX = re.compile(r"\s*(?:[EFW]\d{4}\s|\[[EFW](?:\s|\d)|E:\s|(?:ERROR|FATAL|CRITICAL|WARN(?:ING)?)\b)")
#: The names every CUDA tool's errors carry: enum prefixes, status types, sm_/compute_ targets.
_CUDA_NAMES = re.compile(
    r"\bCU(?:DA)?_?ERROR_|\bcuda(?:Error|_error)\w*|\bcu[a-z]+Status\w*|\bnccl\w*(?:Error|Failure)|\bsm_\d{2,3}\b|\bcompute_\d{2,3}\b",
    re.IGNORECASE,
)
_BOILERPLATE = re.compile(r"^\s*(?:#{1,6}\s|<!--|-->|[-*]\s*\[[ xX]\]|!\[|cc\s+@|</?\w+>\s*$)")
#: The reporter's own sentences ("I have installed NCCL by apt:", "It seems that ... it can't work.", "Can
#: anyone help?"): a person writing in the first person or asking, which no program prints. ("I" before a
#: path is glog's info level: ``I tensorflow/core/...``.)
_NARRATIVE = re.compile(
    r"(?<![\w'])(?:I(?:'m|'ve|'d|'ll|\u2019m|\u2019ve)?(?=\s+[A-Za-z]{2,}\b(?![/.:_\-\]]))|i(?:'m|'ve)\s|[Mm]y|[Ww]e(?:'ve|'re)?|"
    r"[Oo]ur|[Mm]e)(?![\w'])|\b(?:[Ii]t seems|[Ss]eems like|[Ll]ooks like|[Aa]ny (?:idea|help|suggestion|solution)s?|"
    r"[Cc]an (?:any ?one|some ?one|you) |[Ii]s there (?:any|a) |[Hh]ow (?:can|do|to) |[Tt]hanks?\b|[Tt]hank you)"
)
#: What marks a sentence as quoting a program's error all the same: an exception's name, an error code with a colon
#: ("error: command 'gcc' failed", "fatal:") or a number ("error code 126"), a loader's words ("undefined symbol",
#: "cannot open shared object", a library file), the names CUDA tools' errors carry, or a quoted/backticked error.
_QUOTED_ERROR = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\b(?:error|fatal|E)\s*:\s|\berror\s*(?:code\s*)?[:=]?\s*-?\d+|"
    r"undefined symbol|cannot open shared object|no kernel image|\.so(?:\.\d+)*:|\w\.dll\b|"
    r"[`'\"][^`'\"]{0,200}(?:error|fail|not found|cannot)[^`'\"]{0,200}[`'\"]|"
    # a resolver's explanation (uv's PubGrub: "╰─▶ Because there is no version of torch==X and your project depends on
    # torch==X, we can conclude that your project's requirements are unsatisfiable"): its "we" and "your" are not a reporter's
    r"\bwe can conclude that\b|^\s*(?:[×╰├│]|\u2570\u2500\u25b6)",
    re.I,
)
#: A build tool's echo of the command it runs ("[1/2] /usr/local/cuda/bin/nvcc -DTORCH_EXTENSION_NAME=... -gencode=...",
#: "gcc -pthread -B ... -c src/x.cpp -o build/x.o"): the command, not its outcome. Its flags name architectures and paths
#: that read like an error (nvcc, compute_86) and push the real error lines out of what the classifier weighs.
_COMMAND_ECHO = re.compile(
    r"^\s*(?:\[\d+/\d+\]\s+)?(?:\S*/)?(?:nvcc|gcc|g\+\+|c\+\+|cc|clang(?:\+\+)?|x86_64-linux-gnu-g(?:cc|\+\+)|ld|ninja)"
    r"(?:-\d+(?:\.\d+)*)?(?:\.exe)?\s+(?:-{1,2}[A-Za-z]|\S+\.(?:cu|cpp|cc|cxx|c|o|so)\b)"
)
_OUTCOME_WORDS = re.compile(r"\b(?:error|fatal|failed|failure|cannot|unable|warning)\b|not found|no such file", re.I)
#: A "label: value" line or an item of a list of versions ("- GPU: 3060", "4) 系统环境: win10, python3.8", "OS: Ubuntu 20.04").
_LABELLED = re.compile(r"^\s*(?:[-*\u2022]\s*)?(?:\(?\d{1,2}[).\u3001:]\s*)?(?P<label>[^:\n]{1,40}?)\s*[:=]\s*\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]\s+|\(?\d{1,2}[).\u3001]\s*)")
#: Labels of a fact (any language the prose reader knows; lower-case substrings).
_FACT_LABELS = (
    "version", "versi", "版本", "バージョン", "环境", "環境", "系统", "系統", "gpu", "cpu", "显卡", "os", "system", "driver",
    "treiber", "驱动", "cuda", "cudnn", "python", "torch", "gcc", "compiler", "platform", "hardware", "memory", "ram",
)  # fmt: skip
#: The facts a line of versions states (the prose reader's fields; a GPU named in a message's sentence is no such line).
_VERSION_FIELDS = ("torch", "driver", "cuda", "nvcc", "cudnn", "python", "gcc", "os", "distro", "wsl")


@functools.lru_cache(maxsize=1)
def _terminal_vs_ide_rx() -> "re.Pattern[str]":
    from ..errortext import kb_document

    return re.compile(kb_document("b20.json")["symptoms"]["terminal_vs_ide"]["regex"], re.I)


def _terminal_vs_ide(lines: List[str]) -> Dict[str, Any]:
    """The reporter's sentence that it works in a terminal but not in Jupyter / PyCharm / VS Code (or the reverse), from
    the prose too (kb/errors/b20.json symptoms.terminal_vs_ide): {"line": n, "text": the words}. Read by checks/ide20.py."""
    rx = _terminal_vs_ide_rx()
    text = "\n".join(lines)
    m = rx.search(text)
    if not m:
        return {}
    return {"line": text.count("\n", 0, m.start()) + 1, "text": " ".join(m.group(0).split())[:240]}


#: The reporter saying CUDA_HOME / CUDA_PATH (or "the CUDA environment variables") are set, beside a build that says they
#: are not ("CUDA_PATH error despite having it set up", "CUDA_HOME is definitely in my environment variables", "regardless
#: if you actually have CUDA_HOME or CUDA_PATH set", "all environment variables related to CUDA are set correctly"): the
#: build runs where they do not reach (pip's isolated build, checks/extensions.py). onnxruntime's own "CUDA_PATH is set
#: but CUDA wasn't able to be loaded" is not the reporter's statement. Session 21.
_CUDA_HOME_SET = re.compile(
    r"\b(?:CUDA_HOME|CUDA_PATH)\b[^\n]{0,60}?\b(?:is|are)\s+(?:definitely\s+|correctly\s+|already\s+|properly\s+)?"
    r"(?:set(?!\s+but\s+CUDA\s+was)|in my (?:system\s+)?(?:environment|env|path))|"
    r"\bdespite\s+(?:having\s+)?(?:it|them|CUDA_HOME|CUDA_PATH)\s+(?:being\s+)?set\b|"
    r"\bregardless\s+(?:of\s+)?(?:if|whether)\s+you\s+(?:actually\s+)?have\s+(?:CUDA_HOME|CUDA_PATH)|"
    r"environment variables? (?:related to|for) CUDA (?:is|are)\s+(?:\w+\s+)?set",
    re.I,
)


#: The NVIDIA container library's version as `nvidia-container-cli -V` prints it ("version: 1.3.3", "cli-version: 1.11.0")
#: or a package listing names it ("libnvidia-container1 1.3.3-1", "libnvidia-container-tools-1.3.3"); and cgroup v2 named
#: ("cgroups v2", "cgroupv2", "systemd.unified_cgroup_hierarchy", "cgroup2fs"). Read by checks/cgroup21.py.
_CTK_VERSION = re.compile(r"^\s*(?:cli-|lib-)?version:\s*(\d+\.\d+\.\d+)\b", re.I)
_CTK_PACKAGE = re.compile(r"\blibnvidia-container(?:1|-tools)?(?::\w+)?[\s=_-]+v?(\d+\.\d+\.\d+)\b", re.I)
_CGROUP_V2 = re.compile(r"\bcgroups?\s*v2\b|\bcgroupv2\b|unified_cgroup_hierarchy|\bcgroup2fs\b|\bcgroup2\b", re.I)


def _container_library(lines: List[str]) -> Dict[str, Any]:
    """What the paste shows of the NVIDIA container library: {"version": "1.3.3", "line": n} (from nvidia-container-cli -V
    within a few lines of the command, or a package row) and {"cgroup_v2": {"line", "text"}}; {} when neither."""
    out: Dict[str, Any] = {}
    cli_at = -10
    for n, line in enumerate(lines, 1):
        low = line[:2000]
        if "nvidia-container-cli" in low.lower():
            cli_at = n
        if "version" not in out:
            m = _CTK_VERSION.search(low) if n - cli_at <= 4 else None
            m = m or _CTK_PACKAGE.search(low)
            if m:
                out["version"], out["line"] = m.group(1), n
        if "cgroup_v2" not in out and _CGROUP_V2.search(low):
            out["cgroup_v2"] = {"line": n, "text": line.strip()[:300]}
    return out


#: The program started on the CPU on purpose: a command line's --device cpu, a device="cpu" argument (a program's CPU
#: log is then the user's choice, not a CPU-only torch: b29-19's whispering --device cpu).
_CPU_CHOSEN = re.compile(r"--device[= ]+['\"]?cpu\b|\bdevice\s*=\s*['\"]cpu['\"]", re.I)


#: Triton named anywhere in a paste (its package, a git clone of it, a traceback through triton/): its own ptxas made the
#: kernels a "device kernel image is invalid" is about (checks/driver_compat.py).
_TRITON_NAMED = re.compile(r"(?i)\btriton\b")


def _first_line(lines: List[str], rx: "re.Pattern[str]") -> Dict[str, Any]:
    """The first line ``rx`` matches: {"line": n, "text": the line}, or {}."""
    for n, line in enumerate(lines, 1):
        if rx.search(line[:2000]):
            return {"line": n, "text": line.strip()[:300]}
    return {}


def _validated_app(lines: List[str]) -> Dict[str, Any]:
    """An application kb/app_validated_drivers.json lists, named anywhere (the title and an issue form included), with
    the release the text states ("### Isaac Sim version\\n\\n5.1.0" spans lines): {"app", "line", "text", "release"}
    or {} (checks/drvreg23.py)."""
    from .. import kb

    joined = "\n".join(ln[:2000] for ln in lines[:400])
    for app, row in kb.app_validated_drivers().items():
        named = _first_line(lines, re.compile(row["names"]))
        if named:
            stated = re.search(row["version"], joined)
            return {"app": app, **named, "release": stated.group(1) if stated else None}
    return {}


_DOCKER_DESKTOP = re.compile(r"\bdocker\s+desktop\b", re.I)
_MPS_NAMED = re.compile(r"nvidia-cuda-mps-(?:control|server)|\bMPS (?:control )?daemon\b|\bCUDA_MPS_\w+", re.I)
_RELEASE = re.compile(r"(?<![\w.])(\d{1,2}\.\d{1,2}\.\d{1,2})(?![\w.])")


def _docker_desktop(lines: List[str]) -> Dict[str, Any]:
    """Docker Desktop named anywhere, with the releases the text states (X.Y.Z on any line of a report that names it:
    "Docker Desktop Version: 4.17.1", "works with 3.3.0 but not with 3.3.3"): {"line", "text", "releases"} or {}
    (checks/dockerdesk25.py)."""
    named = _first_line(lines, _DOCKER_DESKTOP)
    if not named:
        return {}
    releases = list(dict.fromkeys(m.group(1) for ln in lines[:400] for m in _RELEASE.finditer(ln[:2000])))
    return {**named, "releases": releases[:40]}


def _programs_named(lines: List[str]) -> Dict[str, Any]:
    """The GPU programs the paste names anywhere, the title and prose included (kb/errors/b19.json other_frameworks,
    b20.json own_kernel_programs), and whether it names torch at all: {"names": [...], "torch": line or None}. Only the
    names are kept, not the sentences. Read by checks/arch.py: whose kernel lacked the GPU's architecture."""
    from ..errortext import program_patterns

    either, _own, torch_rx = program_patterns()
    names: List[str] = []
    torch_line = None
    for n, ln in enumerate(lines, 1):
        for m in either.finditer(ln):
            if m.group(0).lower() not in (x.lower() for x in names):
                names.append(m.group(0))
        if torch_line is None and torch_rx.search(ln):
            torch_line = n
    return {"names": names, "torch": torch_line} if names or torch_line else {}


def read(text: str) -> Dict[str, Any]:
    """The whole pasted text -> ``{"facts", "error_text", "parts"}``.

    ``parts`` lists each part found, ``{"kind", "lines": [first, last], "used": bool, "why"}``
    (1-based line numbers of the text given). Any text is read: what is not a known output is
    searched for error lines and for facts written as prose (:mod:`.prose`). Raises
    :class:`FactsError` (one line) only for input that is not text: empty, binary or oversized.
    """
    if isinstance(text, bytes):
        from ._text import _decode

        text = _decode(text)
    if not isinstance(text, str):
        raise FactsError(f"pasted text: expected text, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise FactsError(f"pasted text: larger than {MAX_TEXT_CHARS // (1024 * 1024)} MiB")
    if text.count("\n") > MAX_LINES:
        raise FactsError(f"pasted text: more than {MAX_LINES} lines")
    if _binary(text):
        raise FactsError("pasted text: binary data, not text (paste the output as text)")
    if not _printable(text).strip():
        raise FactsError("pasted text: empty")
    lines = raw_lines(text)
    kinds = _segment(lines)
    _whole_text_fallback(lines, kinds)
    parts = _parts(kinds)
    starts, spans = _signature_lines(text) if "ignored" in kinds else (set(), [])
    if starts:
        # Lines no rule above calls error text (a kernel log, a build log, a library's warning) that an error
        # signature knows (where a match starts, or inside a match over several lines) are error text. With
        # nothing else recognised, the whole paste is.
        alone = not any(p["kind"] not in ("ignored", "fence") for p in parts)

        def known(line: str) -> bool:
            key = _norm_line(line)[:200]
            if key in starts or (len(key) >= 12 and any(key[:24] in span for span in spans)):
                return True
            # a match over several lines is quoted whole (its first line then the next ones): this line opens one
            return len(key) >= 12 and any(st.startswith(key) for st in starts)

        kinds = ["error" if k == "ignored" and (alone or known(lines[i])) else k for i, k in enumerate(kinds)]
        parts = _parts(kinds)
    facts, error_text, parts = _facts(lines, parts)
    return {"facts": sanitize(facts), "error_text": sanitize(error_text), "parts": [p for p in parts if p["kind"] != "fence"]}


#: Characters that are in no text: C0 controls other than tab, newline, carriage return, form feed and
#: escape (ANSI colours), DEL, and U+FFFD (bytes that were not UTF-8).
_NON_TEXT = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f\ufffd]")


def _printable(text: str) -> str:
    return _NON_TEXT.sub("", text)


def _binary(text: str) -> bool:
    """More than one character in ten of the head is no text (UTF-16 read as UTF-8 is text: its NULs
    are dropped, as the cleaner drops them)."""
    head = text[:65536]
    if head.count("\x00") > len(head) // 4:
        head = head.replace("\x00", "")
    return len(_NON_TEXT.findall(head)) * 10 > max(len(head), 1)


def _whole_text_fallback(lines: List[str], kinds: List[Optional[str]]) -> None:
    """Text with no known output and no line that reads like an error (a sentence, a title, a log
    in words of its own) is read as error text as a whole: the signatures decide what it names.
    Template prose (headings, comments, check boxes) stays ignored."""
    if any(k not in (None, "ignored", "fence") for k in kinds):
        return
    for i, line in enumerate(lines):
        if kinds[i] == "ignored" and not _BOILERPLATE.match(line):
            kinds[i] = "text"


# ---------------------------------------------------------------------------------------------
# Segmenting: give every line a kind. Structured parts first; what is left is error or prose.


def _segment(lines: List[str]) -> List[Optional[str]]:
    kinds: List[Optional[str]] = ["fence" if is_fence(ln) else None for ln in lines]
    for finder in (
        _find_smi,
        _find_query,
        _find_devicequery,
        _find_collect_env,
        _find_pip_list,
        _find_pip_show,
        _find_conda_list,
        _find_conda_rows,
        _find_pip_rows,
        _find_env_yml,
        _find_freeze,
        _find_nvcc,
        _find_system_packages,
        _find_traceback,
    ):
        finder(lines, kinds)
    fenced = False
    for i, line in enumerate(lines):
        if kinds[i] == "fence":
            fenced = not fenced
        if kinds[i] is None and line.strip():
            # Inside a code block "# ..." is a script's comment, often its printed result ("# RuntimeError: CUDA
            # error: ..." under the call that raised it), not a Markdown heading.
            boiler = _BOILERPLATE.match(line) and not (fenced and _CODE_COMMENT.match(line))
            # ... unless it is the source line Python's warnings module prints under "file.py:62: UserWarning: ..."
            if _message_in_source(line) and not (i and (_FRAME_LINE.match(lines[i - 1]) or _WARNING_HEAD.search(lines[i - 1]))):
                kinds[i] = "code"  # a script's own message, to print if it ever fails: not what was printed
                continue
            kinds[i] = "error" if _errorish(line) and not boiler and not _aside(line) else "ignored"
    _error_paragraphs(lines, kinds)
    return kinds


#: A comment line of a script in a code block: "# " then text (Markdown headings outside fences are boilerplate).
_CODE_COMMENT = re.compile(r"^\s*#\s")
#: The first line of a warning Python's warnings module printed ("inference_gfpgan.py:62: UserWarning: The unoptimized
#: RealESRGAN is slow on CPU..."): the indented line under it is the warn() call's source, shown by the module.
_WARNING_HEAD = re.compile(r"(?:^|:\s)[A-Z]\w*Warning:\s")
#: A line of a pasted script that hands a message literal to print / a logger / warn: print("nvidia-smi command not
#: found. Please make sure NVIDIA drivers are installed") in a debug script is what the script would say, not an error
#: it printed. (``raise X("...")`` is not one: pasted alone it is nearly always a library's frame of a traceback whose
#: message line was cut, e.g. torch's raise RuntimeError("Distributed package doesn't have NCCL built in").)
_MESSAGE_IN_SOURCE = re.compile(
    r"^\s*(?:print|(?:self\.)?(?:logger|logging|log|LOGGER)\.(?:debug|info|warning|warn|error|exception|critical)|"
    r"warnings\.warn|sys\.exit|console\.(?:log|error|warn))"
    r"\s*\(\s*(?:[fFrRbBuU]{0,2}(?:\"|')|`)"
)


#: A Python handler's first line ("except FileNotFoundError:", "except (OSError, RuntimeError) as e:"): source, not an error.
_EXCEPT_CLAUSE = re.compile(r"^\s*except\b[\w\s.,()]*(?:\bas\s+\w+)?\s*:\s*(?:#.*)?$")


#: A traceback frame's location line: the source line under it is the library's, shown because it ran.
_FRAME_LINE = re.compile(r'^\s*File "[^"]*", line \d+')


def _message_in_source(line: str) -> bool:
    return bool(_MESSAGE_IN_SOURCE.match(line[:2000]) or _EXCEPT_CLAUSE.match(line[:2000]))


def _norm_line(line: str) -> str:
    from ..errortext import normalize

    return re.sub(r"\s+", " ", normalize(line)).strip()


def _signature_lines(text: str) -> Tuple[Set[str], List[str]]:
    """Where error signatures of the knowledge base match: the lines they start on (normalised, whitespace
    collapsed) and the matched texts (a match may run over several lines)."""
    from ..errortext import find_matches, kb_signatures, normalize

    norm = normalize(text)
    found, _problems = find_matches((), norm, sigs=kb_signatures())
    matches = [m for ms in found.values() for m in ms]
    starts = {re.sub(r"\s+", " ", m.line_text).strip()[:200] for m in matches}
    for rx in _stated_symptoms():
        starts.update(re.sub(r"\s+", " ", ln).strip()[:200] for ln in norm.splitlines() if rx.search(ln))
    return starts, [m.text for m in matches]


@functools.lru_cache(maxsize=1)
def _stated_symptoms() -> Tuple["re.Pattern[str]", ...]:
    """The kb's symptom rows marked ``stated_symptom`` (kb/errors/*.json): a line saying the program runs on the
    CPU, found no GPU, that ``is_available()`` is False, or naming a CPU build. Printed by a program or written by
    the reporter, such a line is the report's symptom: error text, though no error word is on it."""
    from ..errortext import compiled, kb_documents

    return tuple(
        compiled(row["regex"])
        for _name, doc in kb_documents()
        for row in (doc.get("symptoms") or {}).values()
        if isinstance(row, dict) and row.get("stated_symptom") and row.get("regex")
    )


def _narrative(line: str) -> bool:
    """The reporter's own sentence about the problem, not a line a program printed: written in the first
    person or asking for help, quoting no error (no exception name, no ``error:``, no CUDA error name, no
    error in quotes). Such lines are prose: read for facts, and left out of the error text unless an error
    signature matches them (a sentence naming the error in its words: see :func:`read`)."""
    line = line[:2000]
    return bool(_NARRATIVE.search(line)) and not _QUOTED_ERROR.search(line) and not _CUDA_NAMES.search(line)


def _command_echo(line: str) -> bool:
    """A build tool's echo of a compiler command with no outcome word on it (see :data:`_COMMAND_ECHO`)."""
    return bool(_COMMAND_ECHO.match(line[:2000])) and not _OUTCOME_WORDS.search(line[:4000])


def _aside(line: str) -> bool:
    """A line beside the error, not the error: the reporter's sentence, or a command echoed by a build tool. (An error
    signature that matches it makes it error text again: see :func:`read`.)"""
    return _narrative(line) or _command_echo(line)


def _stated_fact(line: str) -> bool:
    """A line of a list of versions, not a message's continuation: a list item labelled with a fact's name
    ("3) GPU: 3060", "- Driver API Version: 11.5"), or a list item, a "label: value" line or a short line from
    which the prose reader reads a version ("5) cuda11.2, cudnn8.2.1", "cudnn 8.2.1"). (A message's own
    "Version JAX was built against: 8907" states no version the prose reader reads: it stays error text.)"""
    item = _LIST_ITEM.match(line)
    m = _LABELLED.match(line)
    if item and m and any(w in m.group("label").lower() for w in _FACT_LABELS):
        return True
    if not (item or m or len(line.strip()) <= 60):
        return False
    from . import prose

    got = prose.read([line])
    return any(f in got for f in _VERSION_FIELDS)


def _errorish(line: str) -> bool:
    """Does the line read like an error, whatever printed it? A severity word, a refusal ("cannot", "not
    supported", "too old"), a log-level prefix (glog's ``E0000 …``, ``[E …]``, apt's ``E:``, ``ERROR``/
    ``FATAL``), a kernel line (``NVRM``, ``Xid``, dmesg's timestamp), or the names CUDA tools' errors
    carry (``CUDA_ERROR_…``, ``cudaError…``, ``cudnnStatus…``, ``sm_NN``, ``compute_NN``, nvcc, ptxas,
    stubs, nouveau). Word and substring tests first: linear in the line, and fast on long logs."""
    line = line[:2000]
    low = line.lower()
    if any(w in low for w in _ERROR_WORDS) or any(p in low for p in _ERROR_PHRASES):
        return True
    if _LEVEL_PREFIX.match(line) or not _ERROR_TOKENS.isdisjoint(_WORD.findall(low)):
        return True
    if ("not " in low or "n't" in low or "nt " in low or "n\u2019t" in low) and _NEGATION.search(low):
        return True
    return ("_" in low or "status" in low) and bool(_CUDA_NAMES.search(line))


#: A paragraph longer than this is a log, not a message.
_PARAGRAPH_LINES = 40


def _error_paragraphs(lines: List[str], kinds: List[Optional[str]]) -> None:
    """A paragraph (lines between blank lines and fences) with an error line in it is error text as a
    whole: the lines after "...is not compatible..." say which architectures the build has."""
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and lines[j].strip() and kinds[j] in ("error", "ignored"):
            j += 1
        if "error" in kinds[i:j]:
            # A message's paragraph; in a long log (hundreds of lines, no blank line), only the few lines after
            # each error line, so that the log's harmless lines do not push its errors out of the kept tail.
            near = None if j - i <= _PARAGRAPH_LINES else {k + d for k in range(i, j) if kinds[k] == "error" for d in (1, 2, 3)}
            for k in range(i, j):
                if (
                    kinds[k] == "ignored"
                    and not _BOILERPLATE.match(lines[k])
                    and (near is None or k in near)
                    and not _aside(lines[k])
                    and not _stated_fact(lines[k])
                ):
                    kinds[k] = "error"
        i = max(j, i + 1)


def _free(kinds: List[Optional[str]], i: int) -> bool:
    return 0 <= i < len(kinds) and kinds[i] is None


def _claim(kinds: List[Optional[str]], start: int, end: int, kind: str) -> None:
    for j in range(start, end + 1):
        if kinds[j] is None:
            kinds[j] = kind


def _find_smi(lines: List[str], kinds: List[Optional[str]]) -> None:
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _free(kinds, i):
            i += 1
            continue
        if _SMI_ONE_LINE.search(line):
            kinds[i] = "nvidia-smi"
        elif _SMI_TABLE.match(line) and (
            _SMI_HEADER.search(line) or re.search(r"\|\s*(?:MIG devices|Processes):", line) or _SMI_MEMORY_CELL.search(line)
        ):
            start = i
            while (
                start > 0
                and _free(kinds, start - 1)
                and (_SMI_TABLE.match(lines[start - 1]) or _TIMESTAMP.match(lines[start - 1]))
            ):
                start -= 1
            end = i
            while end + 1 < len(lines) and _free(kinds, end + 1):
                nxt = lines[end + 1]
                if _SMI_TABLE.match(nxt) or (not nxt.strip() and end + 2 < len(lines) and _SMI_TABLE.match(lines[end + 2])):
                    end += 1
                else:
                    break
            _claim(kinds, start, end, "nvidia-smi")
            i = end
        i += 1


def _find_query(lines: List[str], kinds: List[Optional[str]]) -> None:
    i = 0
    while i < len(lines):
        if _free(kinds, i) and (_Q_START.search(lines[i]) or _Q_SECTIONS.match(lines[i])):
            end = i
            while (
                end + 1 < len(lines) and _free(kinds, end + 1) and (not lines[end + 1].strip() or _Q_LINE.match(lines[end + 1]))
            ):
                end += 1
            while end > i and not lines[end].strip():
                end -= 1
            if end > i or _Q_START.search(lines[i]):
                _claim(kinds, i, end, "nvidia-smi-q")
            i = end
        i += 1


def _find_devicequery(lines: List[str], kinds: List[Optional[str]]) -> None:
    i = 0
    while i < len(lines):
        if _free(kinds, i) and devicequery._START.search(lines[i]):
            start = i - 1 if i > 0 and _free(kinds, i - 1) and "deviceQuery" in lines[i - 1] else i
            end = i
            for j in range(i + 1, min(len(lines), i + 400)):
                if not _free(kinds, j):
                    break
                end = j
                if devicequery._RESULT.search(lines[j]):
                    break
            _claim(kinds, start, end, "devicequery")
            i = end
        i += 1


def _collect_env_key(line: str) -> Optional[str]:
    m = _KEY_RX.match(line.strip().strip("`"))
    return _CANON[re.sub(r"\s+", " ", m.group("key")).lower()] if m else None


def _find_collect_env(lines: List[str], kinds: List[Optional[str]]) -> None:
    """From 'Collecting environment information' (or the first core field) to the end of its fence,
    or else to its last field / package line. A region the collect_env reader cannot read as a report
    (another tool's "CUDA Runtime Version: 12080" line) is not claimed: its lines are read as any others,
    so that an error line inside it is kept."""
    from .collect_env import parse_collect_env

    fence_end = _fence_ends(lines)
    i = 0
    while i < len(lines):
        start = None
        for k in range(i, len(lines)):
            if not _free(kinds, k):
                continue
            s = lines[k].strip()
            if s.lower().startswith("collecting environment information") or _collect_env_key(s) in CORE_KEYS:
                start = k
                break
        if start is None:
            return
        last = start
        for j in range(start, len(lines)):
            if not _free(kinds, j) and kinds[j] != "fence":
                break
            s = lines[j].strip()
            if (
                _collect_env_key(s)
                or re.match(r"^\[(?:pip3?|conda)\]", s, re.I)
                or re.match(r"^GPU \d+:", s)
                or re.match(r"^={5,}$", s)
                or ("cudnn" in s.lower() and "/" in s)
            ):
                last = j
        end = fence_end.get(start)
        keys = sum(1 for j in range(start, last + 1) if _collect_env_key(lines[j].strip()))
        report = lines[start].strip().lower().startswith("collecting environment information") or keys >= 3
        if end is None or end < last or not report:
            end = last  # a field or two in a fenced block of prose claim only their lines, not the block's error lines
        try:
            parse_collect_env("\n".join(ln for ln in lines[start : end + 1] if not is_fence(ln)))
        except FactsError:
            i = start + 1  # not a report: look for one further down
            continue
        _claim(kinds, start, end, "collect_env")
        return


def _fence_ends(lines: List[str]) -> Dict[int, int]:
    """For each line inside a fenced block: the last line of that block's content."""
    out: Dict[int, int] = {}
    open_at = None
    for i, line in enumerate(lines):
        if is_fence(line):
            if open_at is None:
                open_at = i
            else:
                for j in range(open_at + 1, i):
                    out[j] = i - 1
                open_at = None
    return out


def _run(lines: List[str], kinds: List[Optional[str]], start: int, ok: Callable[[str], bool]) -> int:
    end = start
    while end + 1 < len(lines) and _free(kinds, end + 1) and ok(lines[end + 1]):
        end += 1
    return end


def _find_pip_list(lines: List[str], kinds: List[Optional[str]]) -> None:
    for i, line in enumerate(lines):
        if (
            _free(kinds, i)
            and packages._PIP_LIST_HEAD.match(line)
            and i + 1 < len(lines)
            and packages._DASHES.match(lines[i + 1])
        ):
            end = _run(lines, kinds, i + 1, lambda s: bool(packages._PIP_LIST_ROW.match(s)))
            _claim(kinds, i, end, "pip-list")


def _find_pip_show(lines: List[str], kinds: List[Optional[str]]) -> None:
    """`pip show` blocks: a "Name:" line with "Version:" right after it, and the metadata fields that follow."""
    for i, line in enumerate(lines[:-1]):
        if _free(kinds, i) and packages.PIP_SHOW_NAME.match(line) and packages.PIP_SHOW_VERSION.match(lines[i + 1]):
            start = i - 1 if i > 0 and _free(kinds, i - 1) and packages.PIP_SHOW_FIELD.match(lines[i - 1]) else i
            end = _run(lines, kinds, i, lambda s: bool(packages.PIP_SHOW_FIELD.match(s)) or s.startswith((" ", "\t")))
            _claim(kinds, start, end, "pip-show")


def _find_conda_list(lines: List[str], kinds: List[Optional[str]]) -> None:
    for i, line in enumerate(lines):
        if _free(kinds, i) and packages._CONDA_HEAD.match(line):
            end = _run(lines, kinds, i, lambda s: s.lstrip().startswith("#") or packages._conda_line(s.strip()) is not None)
            _claim(kinds, i, end, "conda-list")


def _conda_row(line: str) -> bool:
    """A `conda list` row without the header (`conda list | grep torch`): name, version, build[, channel]."""
    f = line.split()
    return 3 <= len(f) <= 5 and packages._conda_line(line.strip()) is not None and not re.match(r"^[A-Za-z]:|^/|^~", f[2])


def _find_conda_rows(lines: List[str], kinds: List[Optional[str]]) -> None:
    i = 0
    while i < len(lines):
        if _free(kinds, i) and _conda_row(lines[i]):
            end = _run(lines, kinds, i, _conda_row)
            if end - i >= 2:
                _claim(kinds, i, end, "conda-list")
            i = end
        i += 1


#: A `pip list` row without its header (`pip list | grep torch`): a name, the column padding pip adds, a version.
_PIP_ROW = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s{2,}\d[\w.+!-]*\s*$")


def _find_pip_rows(lines: List[str], kinds: List[Optional[str]]) -> None:
    """Two or more header-less `pip list` rows in a row (`pip list | grep torch`, task build10): a listing."""
    i = 0
    while i < len(lines):
        if _free(kinds, i) and _PIP_ROW.match(lines[i]):
            end = _run(lines, kinds, i, lambda s: bool(_PIP_ROW.match(s)))
            if end > i:
                _claim(kinds, i, end, "pip-rows")
            i = end
        i += 1


def _find_env_yml(lines: List[str], kinds: List[Optional[str]]) -> None:
    """A pasted environment.yml: "dependencies:" and its "- name=version" rows (a "- pip:" list among them)."""
    for i, line in enumerate(lines):
        if _free(kinds, i) and packages.ENV_YML_HEAD.match(line) and i + 1 < len(lines):
            end = _run(lines, kinds, i, lambda s: bool(packages.ENV_YML_ROW.match(s)))
            if end > i and packages.read_environment_yml(lines[i + 1 : end + 1]):
                _claim(kinds, i, end, "environment-yml")


def _find_freeze(lines: List[str], kinds: List[Optional[str]]) -> None:
    i = 0
    while i < len(lines):
        if _free(kinds, i) and packages._FREEZE_ROW.match(lines[i]):
            end = _run(lines, kinds, i, lambda s: bool(packages._FREEZE_ROW.match(s)) or s.lstrip().startswith("# "))
            if end - i >= 2:  # three lines or more: a listing, not a version quoted in a sentence
                _claim(kinds, i, end, "pip-freeze")
            i = end
        i += 1


def _find_nvcc(lines: List[str], kinds: List[Optional[str]]) -> None:
    for i, line in enumerate(lines):
        if _free(kinds, i) and _NVCC.search(line):
            start = i
            while (
                start > 0
                and i - start < 4
                and _free(kinds, start - 1)
                and re.search(r"nvcc|Copyright .*NVIDIA|Built on", lines[start - 1])
            ):
                start -= 1
            end = i + 1 if i + 1 < len(lines) and _free(kinds, i + 1) and lines[i + 1].strip().startswith("Build cuda") else i
            _claim(kinds, start, end, "nvcc")


def _find_system_packages(lines: List[str], kinds: List[Optional[str]]) -> None:
    for i, line in enumerate(lines):
        if _free(kinds, i) and (_APT_ROW.match(line) or _DPKG_ROW.match(line)):
            kinds[i] = "system-packages"


def _find_traceback(lines: List[str], kinds: List[Optional[str]]) -> None:
    i = 0
    while i < len(lines):
        if _free(kinds, i) and _TB_START.match(lines[i]):
            end = i
            while end + 1 < len(lines) and _free(kinds, end + 1):
                nxt = lines[end + 1]
                end += 1
                if nxt.strip() and not nxt[:1].isspace() and _EXC_LINE.match(nxt):
                    while end + 1 < len(lines) and _free(kinds, end + 1) and lines[end + 1].strip():
                        end += 1  # the message's continuation lines
                    break
            _claim(kinds, i, end, "traceback")
            i = end
        i += 1


def _parts(kinds: List[Optional[str]]) -> List[Dict[str, Any]]:
    parts: List[Dict[str, Any]] = []
    for i, k in enumerate(kinds):
        if k is None:
            continue
        if parts and parts[-1]["kind"] == k and parts[-1]["lines"][1] >= i - 1:
            parts[-1]["lines"][1] = i + 1
        elif (
            parts
            and parts[-1]["kind"] == k
            and k in ("ignored", "error", "text")
            and all(x is None for x in kinds[parts[-1]["lines"][1] : i])
        ):
            parts[-1]["lines"][1] = i + 1  # blank lines do not split a run of prose
        else:
            parts.append({"kind": k, "lines": [i + 1, i + 1]})
    return parts


# ---------------------------------------------------------------------------------------------
# Reading the parts and merging them into one facts document.


def _facts(lines: List[str], parts: List[Dict[str, Any]]) -> Tuple[Dict[str, Any], str, List[Dict[str, Any]]]:
    from .collect_env import parse_collect_env

    base: Optional[Dict[str, Any]] = None
    smi: List[str] = []
    dq_nvml: List[Dict[str, Any]] = []
    dq: Dict[str, Any] = {}
    dists: List[Dict[str, Any]] = []
    tools: List[str] = []
    errors: List[str] = []
    nvcc: Optional[Tuple[str, str]] = None
    for p in parts:
        a, b = p["lines"]
        body = [ln for ln in lines[a - 1 : b] if not is_fence(ln)]
        text = "\n".join(body)
        kind = p["kind"]
        p["used"], p["why"] = True, ""
        if kind == "collect_env":
            if base is not None:
                p["used"], p["why"] = False, "a second collect_env report: the first one is read"
                continue
            try:
                base = parse_collect_env(text)
            except FactsError as e:
                p["used"], p["why"] = False, str(e)
        elif kind in ("nvidia-smi", "nvidia-smi-q"):
            if not nvidia_smi.parse(text):
                if any(_errorish(ln) for ln in body):
                    p["kind"] = "error"  # nvidia-smi's own failure line, in a wording the reader has no value for
                    errors.append(text.strip())
                else:
                    p["used"], p["why"] = False, "no value could be read from it"
                continue
            smi.append(text)
            if any(rx.search(text) for rx, _, _ in nvidia_smi.INIT_FAILURES) or "Unable to determine" in text:
                errors.append(text.strip())
        elif kind == "devicequery":
            got = devicequery.parse(text)
            if not got["nvml"] and not got["devicequery"]:
                if any(_errorish(ln) for ln in body):
                    p["kind"] = "error"  # a failure in a wording the reader has no value for: error text
                    errors.append(text.strip())
                else:
                    p["used"], p["why"] = False, "no value could be read from it"
                continue
            dq_nvml.append(got["nvml"])
            dq.update(got["devicequery"])
            if "error" in dq:
                errors.append(f"{dq.get('failed_call', 'cuda')} returned {dq.get('error_code')}\n-> {dq['error']}")
        elif kind == "pip-show":
            dists.extend(packages.read_pip_show(body))  # the packages asked about: not a complete listing
        elif kind == "pip-rows":
            dists.extend(packages.read_pip_list(body))  # a filtered listing (`| grep torch`): not a complete one
        elif kind in ("pip-list", "pip-freeze", "conda-list"):
            reader = {
                "pip-list": packages.read_pip_list,
                "pip-freeze": packages.read_pip_freeze,
                "conda-list": packages.read_conda_list,
            }[kind]
            dists.extend(reader(body))
            tools.append("conda" if kind == "conda-list" else "pip")
        elif kind == "environment-yml":
            dists.extend(packages.read_environment_yml(body))  # pinned requests: not a complete listing
        elif kind == "nvcc":
            m = _NVCC.search(text)
            nvcc = (m.group(1), m.group(2)) if m else None
        elif kind == "system-packages":
            p["used"], p["why"] = False, "a system package listing (apt, dpkg): read for the versions it names only"
        elif kind in ("traceback", "error"):
            errors.append(text.strip())
        elif kind == "text":
            errors.append(text.strip())
            p["why"] = "no known output and no error line in the text: read as error text as a whole"
        elif kind == "ignored":
            p["used"], p["why"] = False, "prose or issue-template text with no error in it"
        elif kind == "code":
            p["used"], p["why"] = False, "a script's source: the messages it would print are not ones it printed"
    named = {packages._norm(d["name"]) for d in dists if d.get("name")}
    dists.extend(d for d in packages.read_pip_conflicts(lines) if packages._norm(d["name"]) not in named)
    # All nvidia-smi parts are read together: the reader prefers -q's full names to the banner's cut ones.
    nvml = nvidia_smi.parse("\n".join(smi)) if smi else {}
    for got in dq_nvml:
        _merge_nvml(nvml, got)
    facts = _assemble(base, nvml, dq, dists, tools, nvcc)
    if base is not None and (base.get("user_error") or {}).get("text"):
        errors.append(base["user_error"]["text"])  # what collect_env's region held besides the report
    error_text = "\n".join(e for e in errors if e)[-MAX_ERROR_CHARS:]
    if error_text.strip():
        facts["user_error"] = {"text": error_text, "source": "pasted text"}
    facts["pasted"] = {"parts": [{k: v for k, v in p.items() if k != "why" or v} for p in parts if p["kind"] != "fence"]}
    _prose_facts(facts, lines, parts)
    containers.fill(facts, containers.read(lines))  # where it ran: docker run / compose / k8s ... (readers/containers.py)
    multigpu.fill(facts, multigpu.read(lines))  # GPUs talking to each other: NCCL, P2P, PCIe/NVLink (readers/multigpu.py)
    uvm.fill(facts, uvm.read(lines))  # nvidia_uvm: lsmod, loaded or reloaded, boot or suspend (readers/uvm.py)
    nogpu.fill(facts, nogpu.read(lines))  # a person saying the machine has no GPU at all (readers/nogpu.py)
    return facts, error_text, parts


#: A conda environment named in the text: a path inside one, or a conda command.
_CONDA_MENTION = re.compile(
    r"(?:ana|mini)conda\d?[/\\]|mini(?:forge|mamba)\d?[/\\]|mambaforge[/\\]|/conda/envs/|/opt/conda/|"
    r"\b(?:conda|mamba)\s+(?:install|create|activate|list)\b",
    re.I,
)
#: Parts whose lines may state facts in prose: all but the outputs a structured reader has read.
_PROSE_KINDS = ("error", "text", "ignored", "traceback")


def _prose_facts(facts: Dict[str, Any], lines: List[str], parts: List[Dict[str, Any]]) -> None:
    """Facts written as prose (readers/prose.py) fill what the structured parts left unset."""
    from . import prose

    body: List[str] = [""] * len(lines)
    for p in parts:
        if p["kind"] in _PROSE_KINDS or not p.get("used"):
            a, b = p["lines"]
            for i in range(a - 1, b):
                if not is_fence(lines[i]):
                    body[i] = lines[i]
    conda = next(
        ((n, m) for n, ln in enumerate(lines, 1) if "conda" in ln.lower() for m in [_CONDA_MENTION.search(ln)] if m), None
    )
    if conda:
        # The text shows a conda environment (a path in one, a conda command): which loader paths torch has depends on
        # it. Only the words that show it are kept (the line's path may hold a user name the report redacts).
        facts["pasted"]["conda"] = {"line": conda[0], "text": conda[1].group(0)}
    from ..errortext import ASYNC_ALLOCATOR, ASYNC_ALLOCATOR_DEFAULT, CUDA_TENSOR_PRINTED, ROCM_IN_USE, gpu_vendors

    other = gpu_vendors.other_gpus(lines)  # AMD / Intel / Apple GPUs (or a Mac) named anywhere, the title included
    if other:
        facts["pasted"]["other_gpus"] = other
    nv = gpu_vendors.nvidia_named(lines)
    if nv:
        facts["pasted"]["nvidia_named"] = {"line": nv[0], "text": nv[1]}
    cpu = _cpu_build_line(lines)
    if cpu:
        facts["pasted"]["cpu_build"] = {"line": cpu[0], "text": cpu[1]}
    for key, got in (
        ("programs", _programs_named(lines)),
        ("cuda_home_said_set", _first_line(lines, _CUDA_HOME_SET)),  # CUDA_HOME "is set" (checks/extensions.py)
        ("container_library", _container_library(lines)),  # nvidia-container-cli's version, cgroup v2 (checks/cgroup21.py)
        ("cuda_tensor_printed", _first_line(lines, CUDA_TENSOR_PRINTED)),  # torch ran kernels here (checks/arch.py)
        ("allocator", _first_line(lines, ASYNC_ALLOCATOR)),  # torch's cudaMallocAsync in use (checks/alloc21.py)
        ("allocator_default", _first_line(lines, ASYNC_ALLOCATOR_DEFAULT)),  # a program using it by default (alloc21)
        ("triton_named", _first_line(lines, _TRITON_NAMED)),  # Triton anywhere, a URL included (checks/driver_compat.py)
        ("cpu_chosen", _first_line(lines, _CPU_CHOSEN)),  # the user ran it on the CPU on purpose (checks/torch_package.py)
        ("rocm_in_use", _first_line(lines, ROCM_IN_USE)),  # ROCm said to run the AMD GPU (checks/codes5.py)
        ("terminal_vs_ide", _terminal_vs_ide(lines)),
        # an application validated on one driver branch (checks/drvreg23.py)
        ("validated_app", _validated_app(lines)),
        # Docker Desktop and the releases stated (checks/dockerdesk25.py)
        ("docker_desktop", _docker_desktop(lines)),
        # an MPS control daemon in the report (checks/mps25.py)
        ("mps_named", _first_line(lines, _MPS_NAMED)),
    ):
        if got:
            facts["pasted"][key] = got
    env = prose.env_assignments(lines)
    if env:
        # Variables the paste assigns (a shell line, a Dockerfile, a script's printout): the values the checks read. Only
        # these are known; ``vars_partial`` says the rest of the environment was not recorded.
        e = facts.setdefault("environment", {})
        if e.get("vars") is None:
            e["vars"] = {k: v["value"] for k, v in sorted(env.items())}
            e["vars_partial"] = True
            e["source"] = "assignments in the pasted text"
            facts["pasted"]["environment"] = env
    got = prose.read(body)
    if not got:
        return
    filled = prose.fill(facts, got)
    # Which facts were stated apart from the error lines: those alone may confirm what the error says.
    error_lines = {
        i for p in parts if p["kind"] in ("error", "traceback", "text") for i in range(p["lines"][0], p["lines"][1] + 1)
    }
    stated = [v["line"] for v in got.values() if isinstance(v, dict) and "line" in v]
    stated += [g["line"] for g in got.get("gpus") or []]
    facts["pasted"]["prose"] = {**got, "filled": filled, "apart_from_errors": any(n not in error_lines for n in stated)}


def _cpu_build_line(lines: List[str]) -> Optional[Tuple[int, str]]:
    """(line number, line) of the first line, any part of the paste (a package plan, a requirements file, an install
    log, prose), naming a CPU-only torch build (kb/errors/reader3.json ``symptoms.cpu_build_named`` and
    ``cpu_build_said``)."""
    from ..errortext import compiled, kb_document

    rows = kb_document("reader3.json").get("symptoms", {})
    rxs = [compiled(rows[k]["regex"]) for k in ("cpu_build_named", "cpu_build_said") if k in rows]
    for n, line in enumerate(lines, 1):
        low = line[:2000].lower()
        if ("cpu" in low or "without" in low or "longer" in low or "anymore" in low or "cuda" in low) and any(
            rx.search(low) for rx in rxs
        ):
            return n, line.strip()[:300]
    return None


def _merge_nvml(into: Dict[str, Any], got: Dict[str, Any]) -> None:
    """Fill ``into`` with what ``got`` adds (the first source of a value wins; GPUs matched by index)."""
    for k, v in got.items():
        if k == "devices" and into.get("devices"):
            _merge_devices(into["devices"], v)
        elif k not in into:
            into[k] = v


def _merge_devices(have: List[Dict[str, Any]], new: List[Dict[str, Any]]) -> None:
    for d in new:
        same = next((h for h in have if h.get("index") == d.get("index") and d.get("index") is not None), None)
        if same is None:
            have.append(d)
            continue
        for k, v in d.items():
            same.setdefault(k, v)


def _assemble(
    base: Optional[Dict[str, Any]],
    nvml: Dict[str, Any],
    dq: Dict[str, Any],
    dists: List[Dict[str, Any]],
    tools: List[str],
    nvcc: Optional[Tuple[str, str]],
) -> Dict[str, Any]:
    facts = base if base is not None else new_facts("text")
    if base is None:
        facts["tool"] = {"version": __version__, "source": "pasted text"}
    if nvml:
        old = facts.get("nvml") or {}
        if old.get("driver_version") and nvml.get("driver_version") and old["driver_version"] != nvml["driver_version"]:
            nvml["conflict"] = {"collect_env_driver_version": old["driver_version"]}
        for k, v in old.items():
            if k not in ("devices", "device_count") or not nvml.get("devices"):
                nvml.setdefault(k, v)
        facts["nvml"] = nvml
    if dq:
        facts["devicequery"] = dq
    if dists:
        pk = facts.setdefault("packages", {})
        seen = {(packages._norm(d["name"]), d.get("listed_by")) for d in pk.get("distributions") or []}
        pk.setdefault("distributions", [])
        pk["distributions"] += [d for d in dists if (packages._norm(d["name"]), d.get("listed_by")) not in seen]
        listings = pk.setdefault("listings", {})
        for t in tools:
            listings[t] = "listed"
        if tools:  # an environment.yml alone pins some packages; it does not list what is installed
            pk["complete"] = True
    _torch_from_listing(facts, dists)
    if nvcc and not (facts.get("toolkit") or {}).get("nvcc_version"):
        facts.setdefault("toolkit", {})["nvcc_version"] = nvcc[0]
        facts["toolkit"]["nvcc_version_full"] = nvcc[1]
    return facts


def _torch_from_listing(facts: Dict[str, Any], dists: List[Dict[str, Any]]) -> None:
    """The installed torch where a package listing names it (pip list / freeze / show, conda list) and no report
    did: one version only (two listings that disagree say nothing). Its local tag names its CUDA ("+cu121") or a
    CPU build ("+cpu"), as torch.version.cuda would."""
    t = facts.get("torch") or {}
    if t.get("version"):
        return
    from .collect_env import _CONDA_CPU_BUILD, _CONDA_CUDA_BUILD

    torches = [d for d in dists if packages._norm(d.get("name") or "") == "torch" and d.get("version")]
    versions = {str(d["version"]) for d in torches}
    if len(versions) != 1:
        return
    v = versions.pop()
    if not re.match(r"\d+\.\d+", v):
        return
    t = facts.setdefault("torch", {})
    t["version"] = v
    t["version_from"] = "package listing"
    builds = {str(d.get("build") or "") for d in torches}
    m = re.search(r"\+cu(\d{2,3})$", v)
    c = _CONDA_CUDA_BUILD.search(builds.pop()) if len(builds) == 1 else None
    if m and "cuda" not in t:
        t["cuda"] = f"{m.group(1)[:-1]}.{m.group(1)[-1]}"
    elif c and "cuda" not in t:
        # conda's build string: "py3.7_cuda10.2_cudnn7.6.5_0", conda-forge's "cuda112py39h..." (as collect_env reads it)
        major, minor = (c.group(1), c.group(2)) if c.group(1) else (c.group(3), c.group(4))
        t["cuda"] = f"{int(major)}.{minor}"
    elif (v.endswith("+cpu") or any(_CONDA_CPU_BUILD.search(str(d.get("build") or "")) for d in torches)) and "cuda" not in t:
        t["cuda"] = None


def summary(parts: List[Dict[str, Any]]) -> str:
    """One line: which parts were read and which were ignored, by line range."""

    def rng(p: Dict[str, Any]) -> str:
        a, b = p["lines"]
        return f"{a}" if a == b else f"{a}-{b}"

    used = [f"{p['kind']} (lines {rng(p)})" for p in parts if p.get("used")]
    ignored = [rng(p) for p in parts if not p.get("used")]
    out = "read " + (", ".join(used) if used else "nothing")
    if ignored:
        out += "; ignored lines " + ", ".join(ignored)
    return out
