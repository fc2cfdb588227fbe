"""collect_env text, line by line: one pass over the cleaned lines, with a little state for the
multi-line fields (GPU list, cuDNN candidates, CPU block, package lists, vLLM sections and variables)."""

from __future__ import annotations

import re
from typing import Dict, List, Optional

from ..probes.system import SECRET_NAME, scrub_value

#: Longest raw value kept as evidence.
MAX_VALUE_CHARS = 4096
#: Most lines of CPU information / surrounding text kept as evidence.
MAX_CPU_LINES = 200
MAX_OTHER_TEXT = 20000
MAX_LINE_CHARS = 8192

# The keys collect_env prints, spelled as printed; matched case-insensitively with any run of
# spaces (vLLM aligns its keys with spaces before the colon).
KNOWN_KEYS = (
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "XPU used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "MSVC",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Is XPU available",
    "XPU runtime version",
    "Intel GPU models",
    "Intel GPU driver version",
    "Intel GPU models onboard",
    "Intel GPU models detected",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "Caching allocator config",
    "CPU",
    "Versions of relevant libraries",
    "Version of relevant libraries",
    "ROCM Version",
    "Neuron SDK Version",
    "vLLM Version",
    "vLLM Build Flags",
    "GPU Topology",
)
_CANON = {re.sub(r"\s+", " ", k).lower(): k for k in KNOWN_KEYS}
_KEY_RX = re.compile(
    r"^(?P<key>"
    + "|".join(re.escape(k).replace(r"\ ", r"\s+") for k in sorted(KNOWN_KEYS, key=len, reverse=True))
    + r")\s*[:\uff1a](?:\s?(?P<value>.*))?$",
    re.IGNORECASE,
)
# Fields whose presence makes the text recognisably collect_env output.
CORE_KEYS = {
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Versions of relevant libraries",
    "Version of relevant libraries",
    "HIP runtime version",
    "Is XNNPACK available",
    "CUDA_MODULE_LOADING set to",
}
# vLLM's section banners: a title between two lines of '='.
SECTION_TITLES = {
    "system info": "system",
    "pytorch info": "pytorch",
    "python environment": "python",
    "cuda / gpu info": "gpu",
    "intel xpu / gpu info": "xpu",
    "cpu info": "cpu",
    "versions of relevant libraries": "libs",
    "vllm info": "vllm",
    "environment variables": "env",
}

_BANNER = re.compile(r"^={5,}\s*$")
_GPU_LINE = re.compile(r"^GPU\s*(?P<index>\d{1,4})\s*[:\uff1a]\s*(?P<name>.*?)\s*(?:\(UUID:\s*(?P<uuid>[^)\s]+)\s*\))?\s*$")
_PKG_LINE = re.compile(r"^\[(?P<tool>pip3?|conda)\]\s*(?P<rest>.*)$", re.IGNORECASE)
_ENV_LINE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]{0,200})=(?P<value>.*)$")


class _Reader:
    def __init__(self) -> None:
        self.fields: Dict[str, str] = {}
        self.order: List[str] = []
        self.gpu_lines: List[str] = []
        self.cudnn_lines: List[str] = []
        self.cpu_lines: List[str] = []
        self.pip: List[str] = []
        self.conda: List[str] = []
        self.env: Dict[str, str] = {}
        self.env_skipped = 0
        self.env_section = False
        self.sections: List[str] = []
        self.banners = 0
        self.other: List[str] = []
        self.other_chars = 0
        self.repeats = 0
        self.stopped = False
        self.block: Optional[str] = None
        self.section: Optional[str] = None
        self.saw_libs_header = False
        self.saw_conda_line = False
        self.saw_marker = False
        self.cut_line: Optional[str] = None

    def feed(self, lines: List[str], cut_last: bool = False) -> None:
        """``cut_last``: the text ends mid-line, so its last line may be cut short."""
        last = len(lines) - 1
        while last >= 0 and not lines[last]:
            last -= 1
        for i, line in enumerate(lines):
            if self.stopped:
                self._other(line)
                continue
            if cut_last and i == last:
                self.cut_line = line
                continue
            if line.lower().startswith("python version") and i + 1 < len(lines):
                line = self._join_wrapped(line, lines[i + 1])
            self._line(line, lines, i)

    @staticmethod
    def _join_wrapped(line: str, nxt: str) -> str:
        """A terminal or mail client wrapped sys.version: '... [Clang 15.0.0' / '(clang-...)] (64-bit runtime)'."""
        if line.count("[") > line.count("]") and nxt and not _KEY_RX.match(nxt) and "runtime)" in nxt:
            return line + " " + nxt
        return line

    def _other(self, line: str) -> None:
        if line and self.other_chars < MAX_OTHER_TEXT:
            self.other.append(line)
            self.other_chars += len(line) + 1

    def _line(self, line: str, lines: List[str], i: int) -> None:
        if line.lower().startswith("collecting environment information"):
            if not self.saw_marker and 0 < len(self.fields) < 5:
                # "PyTorch version: 1.4" in the prose above the report is not the report.
                for k in self.order:
                    self._other(f"{k}: {self.fields[k]}")
                self.fields.clear()
                self.order.clear()
                self.gpu_lines.clear()
                self.cudnn_lines.clear()
            self.saw_marker = True
            self.block = None
            return
        if _BANNER.match(line):
            self.banners += 1
            return
        title = SECTION_TITLES.get(re.sub(r"\s+", " ", line).lower())
        if title and (self.banners or (i > 0 and _BANNER.match(lines[i - 1] or ""))):
            self.section = title
            self.sections.append(title)
            self.block = {"cpu": "cpu", "libs": "libs", "env": "env"}.get(title)
            if title == "libs":
                self.saw_libs_header = True
            if title == "env":
                self.env_section = True
            return
        m = _KEY_RX.match(line)
        if m:
            self._field(_CANON[re.sub(r"\s+", " ", m.group("key")).lower()], (m.group("value") or "").strip())
            return
        m = _PKG_LINE.match(line)
        if m:
            tool = m.group("tool").lower()
            rest = m.group("rest").strip()
            if tool == "conda":
                self.saw_conda_line = True
                self.conda.append(rest)
            else:
                self.pip.append(rest)
            if self.block not in ("libs", "env"):
                self.block = "libs"
            return
        if self.block == "gpu":
            if _GPU_LINE.match(line):
                self.gpu_lines.append(line)
                return
            if not line:
                if self.gpu_lines:
                    self.block = None
                return
            self.block = None
        elif self.block == "cudnn":
            if re.search(r"cudnn", line, re.IGNORECASE) and re.search(r"[/\\]", line):
                self.cudnn_lines.append(line)
                return
            self.block = None
        elif self.block == "cpu":
            if line and len(self.cpu_lines) < MAX_CPU_LINES:
                self.cpu_lines.append(line)
            return
        elif self.block == "env":
            m = _ENV_LINE.match(line)
            if m:
                self._env(m.group("name"), m.group("value"))
                return
            if not line:
                return
        elif self.block == "topology":
            # vLLM before its sectioned layout printed the variables right after the topology.
            m = _ENV_LINE.match(line)
            if m:
                self._env(m.group("name"), m.group("value"))
                return
            return
        elif self.block == "xpu":
            if line.startswith("*") or re.match(r"^GPU \d+:", line):
                return
            self.block = None
        self._other(line)

    def _field(self, key: str, value: str) -> None:
        if key in self.fields:
            # A second report pasted after the first: read only the first.
            if key in CORE_KEYS and len(self.fields) >= 5:
                self.repeats += 1
                self.stopped = True
                self._other(f"{key}: {value}")
            return
        self.fields[key] = value[:MAX_VALUE_CHARS]
        self.order.append(key)
        self.block = None
        if key == "GPU models and configuration":
            if not value:
                self.block = "gpu"
            elif _GPU_LINE.match(value):
                self.gpu_lines.append(value)
                self.block = "gpu"
        elif key == "cuDNN version":
            if value.lower().startswith("probably one of the following"):
                self.block = "cudnn"
        elif key == "CPU" and not value:
            self.block = "cpu"
        elif key in ("Versions of relevant libraries", "Version of relevant libraries"):
            self.saw_libs_header = True
            self.block = "libs"
        elif key == "GPU Topology":
            self.block = "topology"
        elif key in ("Is XPU available", "Intel GPU driver version", "Intel GPU models onboard", "Intel GPU models detected"):
            self.block = "xpu"

    def _env(self, name: str, value: str) -> None:
        if SECRET_NAME.search(name):
            self.env_skipped += 1  # counted, never kept: not even the name
            return
        if name not in self.env:
            self.env[name] = scrub_value(value)[:MAX_VALUE_CHARS]
