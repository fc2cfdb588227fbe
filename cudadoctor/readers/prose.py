"""Facts written as prose: "CUDA Version：11.3", "pytorch:1.10", "torch 2.1.0+cu121", "Graphics card: rtx4090",
"my gcc is 13.2.1", "driver 535", "Treiberversion: 470", "显卡: 3090", "系统: Ubuntu 20.04", "python3.10",
"Windows 11", "WSL2", a Markdown table of versions — in any order, with labels in several languages and any
punctuation (full-width colons and commas are read as their ASCII forms).

Lenient but never guessing: a value is read only where the text writes it beside its label (or, for GPU
names, where the name is one NVIDIA's table knows: kb.compute_capability). A fact the text states twice
with different values is left unset, and said to be (``conflicts``). Install commands (``pip install
torch==X``) say what was asked for, not what is there, and are not read. :func:`read` returns what it
read; :func:`fill` puts it into a facts document only where the structured readers left a value unset.
Pure functions of the text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..errortext import TENSORFLOW_VERSION, WRONG_NUMBERS, floor_spans

#: Lines longer than this are cut before matching (no label and value are this far apart).
MAX_LINE = 2000
#: At most this many lines are read (prose around a paste is short; logs are not prose).
MAX_LINES = 5000

_SEP = r"\s*(?:[:=]=?|\bis\b|\bist\b|\bes\b|\best\b|是|为|->|=>)?\s*"
_TEMPLATE_HINT = re.compile(r"\((?:e\.\s?g\.?|eg|z\.\s?b\.|例如|如)[^)]*\)", re.I)
#: Lines that name what was asked for, not what is there: install commands and pip's resolver output, and pip's lines
#: about what it removes ("Found existing installation: torch 1.13.1+cu117", "Successfully uninstalled torch-...").
_INSTALL = re.compile(
    r"\b(?:pip3?|conda|mamba|uv\s+pip|poetry)\s+(?:install|add|create)\b|\binstall(?:ing)?\s+(?:torch|pytorch)==|"
    r"\brequirements?\b|matching distribution|^\s*(?:Collecting|Downloading|Looking in|Obtaining)\b|\.whl\b|"
    r"^\W*(?:Found existing installation|Attempting uninstall|Uninstalling|Successfully uninstalled)\b|"
    # what an installer could not install: uv's "Distribution `torch==X @ ...` can't be installed", its hint "`torch` (vX)
    # only has wheels ...", Poetry's "Installing torch (X): Failed" / "Unable to find installation candidates for torch (X)"
    r"\b(?:can't|cannot) be installed\b|\bonly has wheels\b|\binstallation candidates\b|\bInstalling\s+[\w.-]+\s+\([^)]*\):\s*Failed",
    re.I,
)

_VERSION = r"v?(?P<v>\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc)\d+)?(?:\.?(?:dev|post)\d+)?(?:\+\w+(?:\.\w+)*)?)"
_TORCH = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:py)?torch(?:[\s_-]*version|\s*版本|\s*バージョン|\s*versi[oó]n)?(?:-(?=\d)|"
    + _SEP
    + r")['\"]?"
    + _VERSION,
    re.I,
)
#: Words before a torch version that make it the one a package was built for or asks for, not the installed one.
_BUILT_FOR = re.compile(r"\b(?:built|compiled)\s+(?:for|with|against)\b|\brequires?\b|\brequired\b|\bexpects?\b", re.I)
#: A line ending so continues on the next: "xFormers was built for:" / "PyTorch 2.1.2+cu121 with CUDA 1201".
_ENDS_BUILT_FOR = re.compile(r"(?:\b(?:built|compiled)\s+(?:for|with|against)|\brequires?|\brequired|\bexpects?)\s*:?\s*$", re.I)
#: A LibTorch archive as download.pytorch.org names it (libtorch-shared-with-deps-2.3.0+cu118.zip,
#: libtorch-cxx11-abi-shared-with-deps-2.1.0%2Bcu121.zip; https://pytorch.org/get-started/locally/ "LibTorch"): the C++
#: distribution a program links, its release and CUDA variant in the name (task build10).
_LIBTORCH_ARCHIVE = re.compile(
    r"\blibtorch-(?:win-|cxx11-abi-)?(?:shared|static)-with(?:out)?-deps-(?:debug-)?"
    r"(?P<v>\d+\.\d+\.\d+(?:\.dev\d+)?(?:%2[Bb]|\+)(?:cu\d{2,3}|cpu|rocm[\d.]+))(?=\.zip|\b)"
)
#: The installed torch in a package's own mismatch message: xFormers' "... was built for: PyTorch X (you have Y)".
_YOU_HAVE = re.compile(r"\(you have (?:torch |pytorch )?" + _VERSION + r"\)", re.I)
_DRIVER = re.compile(
    r"(?:(?:nvidia\s*)?drivers?(?:'s)?(?:\s*version)?|nvidia[- ]driver|treiber(?:version)?|驱动(?:程序)?(?:版本)?|"
    r"ドライバー?(?:の)?(?:バージョン)?|versi[oó]n\s+del\s+controlador|controlador(?:\s+nvidia)?|"
    r"version\s+du\s+pilote|pilote(?:\s+nvidia)?|드라이버(?:\s*버전)?)"
    + _SEP
    + r"(?:version\s*)?v?(?P<v>[1-9]\d{2}(?:\.\d{1,3}){0,2})(?![\d.]*\d)",
    re.I,
)
#: "nvidia530.30", "NVIDIA 535.104.05": a driver's dotted version right after the vendor's name (no GPU is named so).
_NVIDIA_DOTTED = re.compile(r"(?<![A-Za-z0-9_./-])nvidia[- ]?(?P<v>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)(?![\d.]*\d)", re.I)
#: NVIDIA's container images' start-up banner, wrapped after "but" on every image (nvidia_entrypoint.sh): "ERROR: This
#: container was built for NVIDIA Driver Release 450.36 or later, but\n       version 440.100 was detected and
#: compatibility mode is UNAVAILABLE." The second line names the host's driver without the word "driver".
_BANNER_DETECTED = re.compile(r"^\s*(?:but\s+)?version\s+(?P<v>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)\s+was\s+detected\b", re.I)
_DRIVER_PACKAGE = re.compile(r"\bnvidia-(?:driver-)?(?P<v>[1-9]\d{2})(?:-(?:open|server))?\b", re.I)
#: The NVIDIA driver as Windows numbers it (Device Manager, DxDiag, WMI, pnputil: "31.0.15.3623", "27.21.14.5671"): the
#: NVIDIA release is the last five digits of the last two fields (15|3623 -> 536.23; 14|5671 -> 456.71), as Chromium
#: reads it from the registry (https://crrev.com/1241aea53e75dab24b82f20e705fd290c5d445ea). Only NVIDIA's third field
#: is 1x (Intel's is 100/101, AMD's five digits); read beside a driver label or NVIDIA's name.
_WIN_DRIVER = re.compile(
    r"(?:driver|treiber|驱动|ドライバ|controlador|pilote|nvidia)[^\n]{0,40}?(?<![\d.])(?P<a>\d{2}\.\d{1,2}\.)(?P<b>1\d)\.(?P<c>\d{4})(?![\d.]*\d)",
    re.I,
)
#: The kernel module's own line (/proc/driver/nvidia/version, dmesg): "NVRM version: NVIDIA UNIX x86_64 Kernel Module
#: 470.82.01 ...", "NVIDIA UNIX Open Kernel Module for x86_64  535.104.05".
_NVRM_MODULE = re.compile(
    r"NVIDIA UNIX (?:Open )?(?:[\w-]+ )?Kernel Module(?: for [\w-]+)?\s+(?P<v>[1-9]\d{2}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.]*\d)",
    re.I,
)
#: The CUDA level the driver offers, said in words: "nvidia-smi shows CUDA Version: 11.4", "my driver supports CUDA 12.2",
#: "driver (supports up to CUDA 11.4)".
_DRIVER_CUDA = re.compile(
    r"(?:nvidia-smi\b[^\n]{0,60}?|(?:driver|\bhost)[^\n]{0,40}?\bsupport(?:s|ed|ing)?\s+(?:only\s+)?(?:up\s+to\s+|max(?:imum)?\s+)?)"
    r"CUDA(?:\s*version)?\s*[:=]?\s*(?P<v>\d{1,2}\.\d)(?![\d.]*\d)",
    re.I,
)
#: numba's release stated in prose: "numba=0.59.1", "Numba version 0.61.2", "numba 0.62.0" (not numba-cuda's, a
#: separate package; not "downgraded numba to 0.58", which names what was tried).
_NUMBA = re.compile(r"\bnumba(?![-_.]\w)\s*(?:version\s*)?(?:[:=]=?\s*|\s+)v?(?P<v>0\.\d{2}(?:\.\d{1,2})?)(?![\d.]*\d)", re.I)
_SMI_INLINE = re.compile(r"Driver Version:\s*(?P<d>[1-9]\d{2}(?:\.\d{1,3}){0,2})\s+CUDA Version:\s*(?P<c>\d{1,2}\.\d)", re.I)
_CUDA = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:cuda(?:\s*toolkit)?(?P<pair>\s*/\s*cudnn)?(?:[\s_-]*(?:version|ver\b\.?)|\s*版本|\s*バージョン|\s*versi[oó]n)?|cudatoolkit)"
    + _SEP
    + r"(?:cuda[\s_-]*)?v?(?P<v>\d{1,2}\.\d(?:\.\d{1,3})?)(?![\d.]*\d)",
    re.I,
)
_NVCC = re.compile(
    r"(?:\bnvcc\b[^\n]{0,40}?(?:release\s*|\bV)|\bnvcc(?:\s*(?:-V|--version|version))?"
    + _SEP
    + r")(?P<v>\d{1,2}\.\d(?:\.\d{1,3})?)",
    re.I,
)
#: nvcc by its path in a versioned toolkit directory ("/home/u/cuda-11.7/bin/nvcc", "/usr/local/cuda-12.1/bin/nvcc",
#: "C:\\...\\CUDA\\v11.8\\bin\\nvcc.exe"): the toolkit a build uses, its release in the directory's name (task build10).
_NVCC_PATH = re.compile(r"[/\\]cuda(?:[-_]|[/\\]+v)?(?P<v>\d{1,2}\.\d)[/\\]+bin[/\\]+nvcc\b", re.I)
_CUDNN = re.compile(
    r"(?<![A-Za-z0-9_./-])cudnn(?:[\s_-]*version|\s*版本)?" + _SEP + r"v?(?P<v>\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)", re.I
)
_PYTHON = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:python|py)(?:[\s_-]*version|\s*版本|\s*バージョン|\s*versi[oó]n)?"
    + r"(?:-(?=[23]\.)|"
    + _SEP
    + ")"
    + r"v?(?P<v>[23]\.\d{1,2}(?:\.\d{1,2})?)(?![\d.]*\d)",
    re.I,
)
_GCC = re.compile(
    r"(?<![A-Za-z0-9_./\[-])(?:gcc|g\+\+)(?:\s*version|\s*版本)?"
    + _SEP
    + r"(?:\([^)]{0,60}\)\s*)?v?(?P<v>\d{1,2}(?:\.\d{1,2}){1,2})(?![\d.]*\d)",
    re.I,
)
#: "32 bit windows 7 system", "Python 3.8 (64-bit)", "a 32-bit Python": the word size, on a line naming an OS or Python.
_BITS = re.compile(r"(?<![A-Za-z0-9_.-])(?P<v>32|64)[- ]?bits?(?![A-Za-z0-9_])", re.I)
_BITS_CONTEXT = re.compile(r"\b(?:windows?|win\d*|python|py\d|os|system|linux|ubuntu|interpreter)\b|系统|系統", re.I)
_WSL = re.compile(r"(?<![A-Za-z0-9_-])WSL\s*(?P<n>[12])?(?![A-Za-z0-9_-])", re.I)
#: An issue template's unchecked option ("- [ ] WSL 1"): a choice not taken, no fact.
_UNCHECKED = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\[ \]\s")
#: `wsl -l -v` (wsl.exe --list --verbose): its header and rows "* Ubuntu-20.04    Running    1" (the default marked *).
_WSL_LIST_HEAD = re.compile(r"^\s*NAME\s+STATE\s+VERSION\s*$")
_WSL_LIST_ROW = re.compile(
    r"^\s*(?P<star>\*)?\s*(?P<name>[^\s*][^\s]*)\s+(?:Running|Stopped|Installing|Converting|Uninstalling)\s+(?P<v>[12])\s*$"
)
#: The Windows build a text names: `ver` ("Microsoft Windows [Version 10.0.21343.1000]"), winver / Settings
#: ("OS build 19044.1288", "Build 22631"), or a Windows label and a build number ("windows：20231.1005").
#: A WSL kernel release, in /proc/version, `uname -r` or a package named after it: WSL 1's names the Windows build with a
#: capital M ("4.4.0-19041-Microsoft", "linux-headers-4.4.0-43-Microsoft"), WSL 2's says "microsoft-standard"
#: ("5.15.153.1-microsoft-standard-WSL2", "4.19.128-microsoft-standard").
_WSL_KERNEL = re.compile(r"\b\d+\.\d+\.\d+-\d+-Microsoft\b|\b\d+\.\d+\.\d+(?:\.\d+)?-microsoft-standard(?:-WSL2)?\b")
_WINDOWS_BUILD = re.compile(
    r"\[(?:Version|版本|バージョン)?\s*10\.0\.(?P<a>\d{5})(?:\.\d+)?\]|\bOS\s*build\s*[:#]?\s*(?P<b>\d{5})(?:\.\d+)?\b|"
    r"\bwindows(?:\s*(?:10|11))?(?:\s*(?:insider|version|build|preview))*\s*(?:[:=]|\bbuild\b)\s*(?:10\.0\.)?(?P<c>[12]\d{4})(?:\.\d+)?\b|"
    # "Windows 10 Pro, 20H2, 19042.928": winver's OS build with its revision on a line naming Windows 10/11 (plat10)
    r"\bwindows\s*1[01]\b[^\n]{0,60}?\b(?P<d>1[5-9]\d{3}|2[0-6]\d{3})\.\d{1,5}\b",
    re.I,
)
_OS_LABEL = re.compile(r"\b(?:os|operating\s+system|system|platform|environment|env)\b\s*[:=]|系统|系統|环境|環境", re.I)
_BARE_LINUX = re.compile(r"(?<![A-Za-z0-9_-])linux(?![A-Za-z0-9_-])", re.I)
_WINDOWS = re.compile(
    r"(?<![A-Za-z0-9_-])(?:windows?|win)\s*(?P<n>7|8\.1|8|10|11|server\s*20\d\d)(?![A-Za-z0-9_]|\.\d)", re.I
)  # "on Windows 11." ends a sentence; "Windows 10.0.19045" is a build
#: "on a clean windows install", "Windows machine": Windows without its release ("Windows Subsystem for Linux" is WSL).
_WINDOWS_BARE = re.compile(r"(?<![A-Za-z0-9_-])windows(?![A-Za-z0-9_-])(?!\s+subsystem)", re.I)
#: What only Windows shows: a drive-letter path ("C:\\Users", "PS E:\\PIA>") or a DLL / an .exe by name.
#: What only macOS shows: a home folder under /Users/ ("/Users/sukai/Documents/...").
_MAC_SIGN = re.compile(r"(?<![\w.~-])/Users/[A-Za-z0-9._-]+/")
_WINDOWS_SIGN = re.compile(r"(?<![\w])[A-Za-z]:\\|(?<=\w)\.(?:dll|exe)\b", re.I)
#: The 64-bit ARM architecture named: aarch64 (Linux's word), arm64 (Apple's and Windows'), sbsa (NVIDIA's server ARM).
_ARM64 = re.compile(r"(?<![A-Za-z0-9])(?:aarch64|arm64|sbsa)(?![A-Za-z0-9])", re.I)
#: macOS by name, or by a machine that runs only macOS as shipped: Apple silicon ("Apple M2"), a MacBook, iMac, Mac mini/Studio.
_MAC = re.compile(
    r"(?<![A-Za-z0-9_-])(?:(?:macos|mac\s*os\s*x?|osx)(?:\s+(?P<n>\d{2}(?:\.\d{1,2}){0,2}))?"
    r"|apple\s+m[1-9](?:\s+(?:pro|max|ultra))?|macbook(?:\s*(?:pro|air))?|imac|mac\s*(?:mini|studio|pro)"
    # "on an M1", "my M2 Max", "M3 chip": Apple silicon without "Apple" (not an M.2 / "M2 SSD" slot)
    r"|(?:\b(?:an|my)\s+)m[1-4](?:\s+(?:pro|max|ultra))?(?!\s*(?:ssd|nvme|slot|drive|\.))|m[1-4](?:\s+(?:pro|max|ultra))?\s+(?:mac|chip)"
    # "on Mac", "my Mac laptop", "a Mac with": the word capitalised after a preposition or article (not a MAC address)
    r"|(?:\b(?:on|my|a|the|with|using)\s+)(?-i:Mac)(?!\s*(?-i:address|ADDRESS)))"
    r"(?![A-Za-z0-9_])",
    re.I,
)
_LINUX = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<d>ubuntu|debian|centos|fedora|rhel|red\s*hat(?:\s*enterprise\s*linux)?|rocky(?:\s*linux)?|"
    r"alma(?:\s*linux)?|arch\s*linux|manjaro|linux\s*mint|linuxmint|opensuse(?:\s*(?:leap|tumbleweed))?|pop!?_?os)"
    r"(?:\s*(?P<n>\d{1,2}(?:\.\d{1,2}){0,2})(?![\w.-]))?(?:\s*LTS)?(?![A-Za-z0-9_-])",
    re.I,
)
_AVAILABLE = re.compile(
    r"torch\.cuda\.is_available(?:\(\))?[\"'\u201c\u201d`]?\s*(?:\)\s*)?(?:,\s*(?:it|this|that|which)\s+)?(?:(?:still|always|indeed|now|just|only|also|then)\s+)?(?:returns?|returned|is|shows?|gives?|outputs?|prints?|=+|-+>|=>|:|→|返回|为|是)?\s*"
    r"\**[\"'\u201c\u201d]?(?P<v>true|false)\b",
    re.I,
)
#: "print(torch.__version__)" / ">>> torch.version.cuda" and the value on the next line (a REPL or a script's output).
_CODE_LABEL = re.compile(
    r"(?P<k>torch\.__version__|torch\.version\.cuda|torch\.cuda\.is_available\(\))\)?\s*['\"]?\s*\)?\s*$", re.I
)
#: A script's print of several values at once ("print(torch.__version__, torch.cuda.is_available(), torch.version.cuda)"):
#: its output line holds them in that order ("2.1.0+cu121 True 12.1").
_PRINT_MANY = re.compile(r"\bprint\((?P<args>[^()]*(?:\(\)[^()]*)*)\)")
_PRINT_KEYS = ("torch.__version__", "torch.version.cuda", "torch.cuda.is_available()")
#: "CUDA available: False", "Torch CUDA Available: True", "cuda available? true": a script's or tool's own printout.
_CUDA_AVAILABLE_SAID = re.compile(r"(?<![\w.])CUDA\s+(?:is\s+)?available\s*\??\s*[:=]?\s*(?P<v>true|false)\b", re.I)
#: A version number in a build tool's mismatch sentence, bare or in brackets: "11.7", "(11.8)", "Cuda 10.2", "CUDA version 12.2".
_MV = r"(?:cuda\s*)?(?:version\s*|版本\s*)?\(?v?(?P<v>\d{1,2}\.\d(?:\.\d{1,3})?)\)?(?![\d.]*\d)"
#: The CUDA torch was built with, as the extension builders write it (torch.utils.cpp_extension "the version that was
#: used to compile PyTorch (11.8)", apex "Pytorch binaries were compiled with Cuda 10.2", DeepSpeed "the version torch
#: was compiled with 11.7", and translations "用于编译 PyTorch (11.8)"): torch's CUDA, not the installed toolkit.
_TORCH_BUILT_CUDA = re.compile(
    r"(?:(?:py)?torch(?:\s+binar(?:y|ies))?\s+(?:was|were|is)\s+(?:compiled|built)\s+(?:with|against|for)\s*:?\s*"
    r"|(?:used\s+to\s+compile|用于编译|用來編譯|编译)\s*(?:py)?torch\s*(?:binar(?:y|ies)\s*)?(?:with\s*)?:?\s*)" + _MV,
    re.I,
)
#: The CUDA toolkit a build found (nvcc of CUDA_HOME): "The detected CUDA version (12.1)", "Installed CUDA version 12.2",
#: "bare metal CUDA 11.2", "检测到的 CUDA 版本 (12.1)" — said in the same builders' mismatch sentences.
_FOUND_CUDA = re.compile(
    r"(?:\bdetected|\binstalled|\bbare[- ]metal|\bsystem|检测到的|檢測到的|系统的?)\s*cuda(?:\s*toolkit)?\s*(?:version\s*|版本\s*)?"
    r"\(?v?(?P<v>\d{1,2}\.\d(?:\.\d{1,3})?)\)?(?![\d.]*\d)",
    re.I,
)
#: torchvision's, torchaudio's and the PyG extensions' own check of the CUDA torch was built with (torch.version.cuda):
#: "Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch has CUDA Version=11.7 and
#: torchvision has CUDA Version=11.8" (torchvision/extension.py, https://github.com/pytorch/vision/blob/v0.15.2/torchvision/extension.py),
#: "PyTorch has CUDA version 12.1 whereas TorchAudio has ...", "PyTorch has CUDA version 10.1 and torch_sparse has ...".
_TORCH_HAS_CUDA = re.compile(r"\bPyTorch has CUDA version\s*[=:]?\s*(?P<v>\d{1,2}\.\d{1,2})(?![\d.]*\d)", re.I)
#: "torch.__version__ = 1.9.0+cu102", "torch.__version__: 2.1.0": a script's printout of the installed torch.
_TORCH_DUNDER = re.compile(r"torch\.__version__\s*\)?\s*(?:[:=]=?|->|=>)\s*['\"]?" + _VERSION, re.I)
#: "my torch.version.cuda is 9.0.176", "torch.version.cuda = '11.8'", "torch.version.cuda returns 10.2": the CUDA the
#: installed torch was built with, as the reporter read it from torch itself (torch/version.py's ``cuda``).
_TORCH_VERSION_CUDA = re.compile(
    r"torch\.version\.cuda\s*\)?\s*(?:[:=]=?|->|=>|\bis\b|\breturns?\b|\breturned\b|\bgives?\b|\bshows?\b|\bprints?\b|是|为)\s*"
    r"['\"]?(?P<v>\d{1,2}\.\d(?:\.\d{1,3})?)(?![\d.]*\d)",
    re.I,
)
#: Words before a CUDA version that make it one wanted, supported or offered, not the one there: "only CUDA 8.0 is
#: officially supported", "Download and install CUDA 8.0" (TensorFlow's message), "requires CUDA 11.8".
_WANTED = re.compile(
    r"\b(?:requires?|required|supports?|supported|download(?:\s+and\s+install)?|needs?|needed|expects?|wants?|only|"
    r"instead\s+of|rather\s+than|upgrade\s+to|downgrade\s+to)\b[^.;,]{0,25}$",
    re.I,
)
#: "CUDA 11.1 and 11.2 both installed", "CUDA 10.2/11.3": a version followed by another names several.
_TWO_VERSIONS = re.compile(r"\s*(?:and|or|&|/|,)\s*v?\d{1,2}\.\d", re.I)
#: nvcc's own build tag, as `nvcc --version` prints it ("Build cuda_11.0_bu.TC445_37.28845127_0", from 11.1 on
#: "Build cuda_11.7.r11.7/compiler.31442593_0") and mmcv/mmdet's
#: environment printout repeats it ("NVCC: Build cuda_11.0_bu..."): the toolkit's release.
_NVCC_BUILD = re.compile(r"\bBuild\s+cuda_(?P<v>\d{1,2}\.\d)(?:\.\d{1,3})?(?:_bu|\.r\d)", re.I)
#: A toolkit's own installer by file name ("cuda_11.3.1_win10_network", "cuda_11.8.0_522.06_windows",
#: "cuda_11.5.0_495.29.05_linux.run", "cuda_9.1.85_windows"): the toolkit release the user installed.
_CUDA_INSTALLER = re.compile(
    r"(?<![\w.-])cuda_(?P<v>\d{1,2}\.\d)(?:\.\d{1,3})?_(?:\d{3}\.\d{2}(?:\.\d{2})?_)?(?:win10|windows|linux|network|local|mac)",
    re.I,
)
#: A toolkit's install directory ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.3\\...",
#: "/usr/local/cuda-11.7/bin/nvcc"): a toolkit of that release is installed there. Several named say nothing.
_CUDA_DIR = re.compile(
    r"GPU Computing Toolkit[/\\]+CUDA[/\\]+v(?P<a>\d{1,2}\.\d)(?![\d.]*\d)|/cuda-(?P<b>\d{1,2}\.\d)(?![\d.]*\d)(?=/|\b)",
    re.I,
)
#: `apt policy PKG` / `apt-cache policy PKG`: the package's name on its own line, then "  Installed: VERSION" (apt's
#: policy output, apt-pkg's cachefile; "(none)" when not installed). The driver's packages and the toolkit's carry
#: their versions: "nvidia-driver-470: / Installed: 470.199.02-1pop0~..." is driver 470.199.02.
_APT_POLICY_HEAD = re.compile(r"^\s*(?:\S*\$\s*(?:sudo\s+)?apt(?:-cache)?\s+policy\s+\S+\s*$|(?P<pkg>[a-z0-9][a-z0-9+.-]*):\s*$)")
_APT_INSTALLED = re.compile(r"^\s+Installed:\s*(?P<v>\S+)\s*$")
_APT_DRIVER_PKG = re.compile(
    r"^(?:nvidia-(?:driver|utils|dkms|kernel-common|compute-utils|headless)(?:-\d{3})?(?:-server|-open)?|nvidia)$"
)
_APT_TOOLKIT_PKG = re.compile(r"^(?:cuda-toolkit(?:-\d+-\d+)?|nvidia-cuda-toolkit|cuda(?:-\d+-\d+)?)$")
_FRAME = re.compile(r'\s*File "[^"]*", line \d+')
#: A torch version with its build tag ("2.5.1+cu124", "2.6.0.dev20241112+cu121", "2.1.0+cpu"): torch's own wheels'
#: local versions, so read a few words after "torch" ("My pytorch and cuda version is 2.5.1+cu124", "PyTorch nightly
#: (2.6.0.dev20241112+cu121)"). The words between hold no digit and name no other package (torchvision's, xFormers').
_TORCH_TAGGED = re.compile(
    r"(?<![A-Za-z0-9_./-])(?:py)?torch(?![\w.-])(?P<mid>[^\d\n]{1,50}?)(?<![\w.+-])"
    r"(?P<v>\d+\.\d+(?:\.\d+)?(?:\.dev\d+)?\+(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*))(?![\w.])",
    re.I,
)
_OTHER_PACKAGE = re.compile(r"vision|audio|text|xformers|scatter|sparse|cluster|geometric|lightning|\bfor\b", re.I)
#: The interpreter a path shows: "/usr/local/lib/python3.10/dist-packages/...", "...\\Programs\\Python\\Python310\\lib",
#: "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so" (an extension module is named for the interpreter that loads it,
#: PEP 3149). Packages live under their interpreter's own directory, so the path says which Python ran.
_PYTHON_PATH = re.compile(
    r"[/\\]lib[/\\]python(?P<a>[23]\.\d{1,2})[/\\](?:site|dist)-packages\b|[/\\]python(?P<b>3)(?P<c>\d{1,2})[/\\]|"
    r"\.cpython-(?P<d>3)(?P<e>\d{1,2})m?(?:-|\.so\b)",
    re.I,
)
#: What only a Linux system shows: a shared library by its soname ("libcudart.so.11.0"), a GNU target triple, a Debian
#: dist-packages directory, a path under the Linux tree (/usr/..., /home/..., /content/ in Colab), "manylinux" wheels.
#: A weaker sign than a line naming the OS, read only where no line names one (as the Windows signs are).
_LINUX_SIGN = re.compile(
    r"(?<![\w.])lib[\w+-]+\.so(?:\.\d+)*(?![\w])|\blinux-gnu\b|\bdist-packages\b|"
    r"(?:^|[\s'\"(=:\[])/(?:usr|home|opt|root|content|lib64|etc|var|proc|sys)/",
    re.I,
)
#: What only a Mac shows (its home directories, its dynamic libraries, its kernel's name): no Linux sign where one is.
_MAC_SIGN = re.compile(r"/Users/|\.dylib\b|\bdarwin\b|/opt/homebrew/|\bmacos\b", re.I)
#: "没有使用WSL", "not using WSL", "without WSL", "no WSL": an OS named as what is not used.
_NOT_BEFORE = re.compile(
    r"(?:没有|沒有|不是|未|无|\bnot|\bno|\bwithout|n't|\bnever)\s*(?:(?:using|use|used|on|in|running|run)\s*)*(?:使用|用|在)?\s*$",
    re.I,
)
#: An issue form's heading ("### PyTorch version", "### GPU", "**OS**"): the value is on the next line that is not
#: blank ("### Python version\n\n3.12"). Read as "label: value" when the heading names a fact and holds no value.
_HEADING = re.compile(r"^\s*(?:#{1,6}\s*(?P<a>[^#\n]{1,50}?)|(?:\*\*|__)(?P<b>[^*_\n]{1,50}?)(?:\*\*|__))\s*[:：]?\s*$")
_HEADING_FACT = re.compile(
    r"\b(?:version|versions|gpus?|graphics|os|operating system|platform|driver|cuda|cudnn|python|(?:py)?torch|system)\b|"
    r"版本|显卡|系统|驱动",
    re.I,
)
_BARE = re.compile(r"^\s*['\"]?(?P<v>[\w.+]{1,40})['\"]?\s*$")

_GPU_LABELS = re.compile(
    r"(?:\bgpus?\b|gpu\s*(?:型号|名称|型號)|graphics?\s*card|video\s*card|\bcard\b|显卡(?:型号)?|顯示卡|グラフィック(?:ボード|カード)|グラボ|"
    r"grafikkarte|tarjeta\s+gr[aá]fica|carte\s+graphique|placa\s+de\s+v[ií]deo|видеокарта|그래픽\s*카드)",
    re.I,
)
_FAMILIES = {"rtx", "gtx", "gt", "gts", "mx", "titan", "quadro", "tesla", "grid", "jetson", "geforce", "nvidia"}
#: Words the GPU table ignores that are the sentence's, not the name's ("RTX 4090 with CUDA capability").
_NOT_NAME = {"with", "and", "or", "on", "gpu", "gpus", "card"}
#: A token that may start a GPU name without a family word: "A100", "V100-SXM2-32GB", "T4", "K80", "L40S", "GP100".
_MODEL = re.compile(r"^[a-z]{1,3}\d{1,4}[a-z]{0,3}(?:-[a-z0-9]+)*$")
_SPLIT_MODEL = re.compile(r"(?i)^(rtx|gtx|gts|gt|mx|gpu|nvidia)(\d{2,4}\w*)$")
_SPLIT_SUFFIX = re.compile(r"(?i)^(\d{3,4})(ti|super|s|d)$")


def _clean(line: str) -> str:
    line = unicodedata.normalize("NFKC", line[:MAX_LINE])
    line = _TEMPLATE_HINT.sub("", line)
    s = line.strip()
    if s.startswith("|") and s.count("|") >= 3:
        cells = [c.strip() for c in s.strip("|").split("|")]
        if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            line = ": ".join(c for c in cells if c)
    return line.replace("**", "").replace("`", "").replace('\\"', '"')


#: Where a clause of a line ends: a comma, semicolon or sentence stop before a space (a version's dots are not).
_CLAUSE_END = re.compile(r"[;,!?，；。](?=\s|$)|\.(?=\s|$)")


def _install_clauses(line: str) -> List[Tuple[int, int]]:
    """(start, end) of each clause of the line that names an install (a command, pip's resolver output, a wheel file):
    the versions in it were asked for. The line's other clauses ("My PyTorch is 1.4.0, torch_scatter is
    torch_scatter-2.0.3-cp36-cp36m-linux_x86_64.whl") state facts."""
    if not _INSTALL.search(line):
        return []
    out: List[Tuple[int, int]] = []
    start = 0
    for end in [m.start() for m in _CLAUSE_END.finditer(line)] + [len(line)]:
        if end > start and _INSTALL.search(line[start:end]):
            out.append((start, end))
        start = end + 1
    return out


def _gpu_lookup(words: List[str]) -> Optional[str]:
    return _lookup(" ".join(words).lower())


@functools.lru_cache(maxsize=4096)
def _lookup(name: str) -> Optional[str]:
    from .. import kb

    return kb.compute_capability(name)


def _ambiguous(words: List[str]) -> Optional[str]:
    """ "?" for a name sold with several capabilities ("TITAN X", "GT 740M"): a GPU, its capability unknown."""
    from ..interpret.gpus import capability_candidates

    return "?" if capability_candidates(" ".join(words)) else None


def _gpu_key(words: List[str]) -> str:
    from .. import kb

    return kb._norm_gpu(" ".join(words))


def _tokens(line: str) -> List[str]:
    out: List[str] = []
    for t in re.findall(r"[A-Za-z0-9][A-Za-z0-9+-]*", line):
        m = _SPLIT_MODEL.match(t)
        parts = [m.group(1), m.group(2)] if m else [t]
        for p in parts:
            s = _SPLIT_SUFFIX.match(p)
            out.extend([s.group(1), s.group(2)] if s else [p])
    return out


_MODEL_NUMBER = re.compile(r"^\d{4}$")


def _numbered(toks: List[str], i: int) -> Optional[Tuple[str, int]]:
    """(capability, tokens used) of the RTX/GTX card a bare model number names ("3090", "2080 Ti", "4060 super"), where
    only one family has that number and the number with its suffix is a card NVIDIA's table knows; else None."""
    n = 2 if i + 1 < len(toks) and toks[i + 1].lower() in ("ti", "super") else 1
    caps = {c for c in (_gpu_lookup([f, *toks[i : i + n]]) for f in ("rtx", "gtx")) if c}
    return (caps.pop(), n) if len(caps) == 1 else None


#: GPUs named as a comparison, not as the reporter's ("crash on GPUs older than Ada Lovelace (RTX 4000) / Hopper (H100)",
#: "works on cards such as the A100", "unlike the 4090"): from the comparative word to the end of the sentence
#: (session 21, OneTrainer's fp8 report read as an H100).
_COMPARISON = re.compile(
    r"\b(?:(?:older|newer|slower|faster|smaller|larger|bigger|better|worse|less|more|other)\s+than|such\s+as|e\.g\.|"
    r"unlike|compared\s+(?:to|with)|instead\s+of|except(?:\s+for)?|rather\s+than)\b[^.;!?\n]*",
    re.I,
)
_COMPARATIVES = ("than", "such as", "e.g.", "unlike", "compared", "instead of", "except")


def _gpus_in(line: str, labelled: bool) -> List[Tuple[str, str]]:
    """(name as written, compute capability) of each NVIDIA GPU named in the line."""
    toks = _tokens(line)
    found: List[Tuple[str, str]] = []
    i = 0
    while i < len(toks):
        low = toks[i].lower()
        hit = None
        family = low in _FAMILIES
        if family or _MODEL.match(low):
            for n in range(min(5 if family else 3, len(toks) - i), 0, -1):
                words = toks[i : i + n]
                if n == 1 and len(low) <= 3 and not labelled and (i == 0 or toks[i - 1].lower() not in _FAMILIES):
                    continue  # "T4", "P4", "K80" alone are too short to be a GPU without a label or a family name
                cap = _gpu_lookup(words) or _ambiguous(words)
                if cap:
                    while n > 1 and words[-1].lower() in _NOT_NAME and _gpu_key(toks[i : i + n - 1]) == _gpu_key(words):
                        n -= 1  # "RTX 4090 with": the words that add nothing to the name are not part of it
                        words = toks[i : i + n]
                    hit = (" ".join(words), cap, n)
                    break
            if hit is None and low in ("rtx", "gtx") and i + 1 < len(toks) and toks[i + 1].isdigit():
                # "GTX 3090": the model number names the card when only one family has it.
                caps = {c for c in (_gpu_lookup([f, toks[i + 1]]) for f in ("rtx", "gtx")) if c}
                if len(caps) == 1:
                    hit = (" ".join(toks[i : i + 2]), caps.pop(), 2)
            if hit is None and low in ("nvidia", "geforce") and i + 1 < len(toks) and _MODEL_NUMBER.match(toks[i + 1]):
                # "Nvidia 2080 Ti", "NVIDIA 3070 8GB", "nvidia3090": the vendor's name and a model number, no family word
                got = _numbered(toks, i + 1)
                if got:
                    hit = (" ".join(toks[i : i + 1 + got[1]]), got[0], 1 + got[1])
        elif (
            low.isdigit()
            and len(low) == 4
            and (
                labelled
                or (i > 0 and toks[i - 1].lower() == "gpu")
                or (i + 1 < len(toks) and toks[i + 1].lower() in ("ti", "super"))
            )
        ):
            # "GPU: 3060", and "3090ti", "2080Ti", "5070 Ti" anywhere: a model number with its tier suffix is a card's
            got = _numbered(toks, i)
            if got:
                hit = (" ".join(toks[i : i + got[1]]), got[0], got[1])
        elif low.isdigit() and len(low) == 4 and i + 1 < len(toks) and toks[i + 1].lower() in ("rtx", "gtx"):
            # "5090 rtx", "4090 RTX": the family word after the number, as some write it
            cap = _gpu_lookup([toks[i + 1], toks[i]])
            if cap:
                hit = (" ".join(toks[i : i + 2]), cap, 2)
        if hit:
            found.append((hit[0], hit[1]))
            i += hit[2]
        else:
            i += 1
    return found


def gpus_named(line: str) -> List[Tuple[str, Optional[str]]]:
    """(name, compute capability or None when the name is sold with several) of each NVIDIA GPU a labelled line names."""
    return [(name, None if cap == "?" else cap) for name, cap in _gpus_in(line, True)]


def _os_of(line: str) -> List[Tuple[str, str, Optional[str]]]:
    """(os, distro, wsl version) for each OS the line names."""
    out: List[Tuple[str, str, Optional[str]]] = []
    for m in _WSL.finditer(line):
        if _NOT_BEFORE.search(line[max(0, m.start() - 24) : m.start()]):
            continue  # "没有使用WSL", "not using WSL": named as what is not used
        out.append(("Linux", "", m.group("n") or "?"))
    for m in _WINDOWS.finditer(line):
        out.append(("Windows", "Windows " + re.sub(r"\s+", " ", m.group("n")).title(), None))
    for m in _MAC.finditer(line):
        out.append(("Darwin", ("macOS " + (m.group("n") or "")).strip(), None))
    distros = [m for m in _LINUX.finditer(line) if not line[: m.start()].rstrip().endswith("(")]  # "(Ubuntu 7.5.0-3…)": a package
    for m in distros:
        name = re.sub(r"\s+", " ", m.group("d")).strip()
        if name.lower() == "ubuntu" and m.group("n") and not re.fullmatch(r"\d{2}\.\d{2}(?:\.\d{1,2})?", m.group("n")):
            out.append(("Linux", "Ubuntu", None))  # Ubuntu's releases are YY.MM; "Ubuntu 22" names no release
            continue
        out.append(("Linux", (name.title() if name.islower() else name) + (f" {m.group('n')}" if m.group("n") else ""), None))
    if not distros and _BARE_LINUX.search(line):
        # "OS: Linux" states it; "only on linux", "a Linux wheel" name it in passing: a sign, as a bare "Windows" is
        out.append(("Linux" if _OS_LABEL.search(line) else "Linux?", "", None))
    if not out and (_WINDOWS_BARE.search(line) or _WINDOWS_SIGN.search(line)):
        out.append(("Windows?", "", None))  # a weaker sign: read only where no line names an OS (see read)
    elif not out and _MAC_SIGN.search(line):
        out.append(("Darwin?", "", None))  # a home folder under /Users/: macOS's, read as the Windows signs are
    return out


#: (field, pattern, words one of which the line must hold, skipped on install lines) — the words keep long logs fast.
_FIELDS: Tuple[Tuple[str, "re.Pattern[str]", Tuple[str, ...], bool], ...] = (
    ("torch", _TORCH, ("torch",), True),
    ("driver", _DRIVER, ("driver", "treiber", "驱动", "ドライバ", "controlador", "pilote", "드라이버"), False),
    ("driver", _DRIVER_PACKAGE, ("nvidia-",), True),
    ("driver", _NVIDIA_DOTTED, ("nvidia",), True),
    ("driver", _BANNER_DETECTED, ("was detected",), False),
    ("cuda", _CUDA, ("cuda",), True),
    ("nvcc", _NVCC, ("nvcc",), False),
    ("nvcc", _NVCC_PATH, ("nvcc",), False),
    ("cudnn", _CUDNN, ("cudnn",), False),
    ("python", _PYTHON, ("py",), True),
    ("gcc", _GCC, ("gcc", "g++"), False),
    ("tensorflow", TENSORFLOW_VERSION, ("tensor", "tf"), True),
    ("numba", _NUMBA, ("numba",), True),
)
_OS_WORDS = (
    "wsl", ":\\", ".dll", ".exe", "win", "mac", "osx", "linux", "ubuntu", "debian", "centos", "fedora", "rhel", "red hat", "rocky", "alma",
    "arch", "manjaro", "mint", "suse", "pop", "apple", "an m", "my m", "m1 ", "m2 ", "m3 ", "m4 ", "/users/",
)  # fmt: skip


def read(lines: Iterable[str]) -> Dict[str, Any]:
    """Every fact the prose states: ``{field: [(value, line_no, text)]}``, plus ``gpus``."""
    lines = list(lines)
    got: Dict[str, List[Tuple[str, int, str]]] = {}
    gpus: List[Tuple[str, str, int]] = []
    prev_label: Optional[str] = None

    def add(field: str, value: str, n: int, text: str) -> None:
        got.setdefault(field, []).append((value, n, text.strip()[:200]))

    wsl_rows: Optional[List[Tuple[str, bool, int, str]]] = None
    wsl_tables: List[List[Tuple[str, bool, int, str]]] = []
    prev_tail = ""  # the end of the line before: "xFormers was built for:" continues on the next line
    apt_pkg: Optional[Tuple[str, int]] = None  # the package an `apt policy` printout names, waiting for "Installed:"
    prev_many: Optional[List[str]] = None  # the values a print() of several asked for, in order
    heading: Optional[Tuple[str, int]] = None  # an issue form's heading waiting for its value: (label, line number)
    for n, raw in enumerate(lines, 1):
        if n > MAX_LINES:
            break
        tail, prev_tail = prev_tail, raw.rstrip()[-40:]
        if "python" in raw.lower() or "cpython" in raw.lower():
            for hit in _PYTHON_PATH.finditer(raw[:MAX_LINE]):
                v = hit.group("a") or (
                    f"{hit.group('b')}.{hit.group('c')}" if hit.group("b") else f"{hit.group('d')}.{hit.group('e')}"
                )
                add("python_path", v, n, raw)
        if ("/" in raw or ".so" in raw) and not _MAC_SIGN.search(raw) and _LINUX_SIGN.search(raw[:MAX_LINE]):
            add("os_hint", "Linux", n, raw)  # "libcudart.so.11.0", "/usr/local/lib/...", "x86_64-linux-gnu"
        if "cuda" in raw.lower():
            for hit in _CUDA_DIR.finditer(raw[:MAX_LINE]):
                add("cuda_dir", hit.group("a") or hit.group("b"), n, raw)
            for hit in _NVCC_BUILD.finditer(raw[:MAX_LINE]):
                add("nvcc", hit.group("v"), n, raw)
            for hit in _CUDA_INSTALLER.finditer(raw[:MAX_LINE]):
                add("cuda", hit.group("v"), n, raw)
        if _FRAME.match(raw):
            if _WINDOWS_SIGN.search(raw):
                add("os_hint", "Windows", n, raw)  # File "C:\\Users\\...": the frames of a Windows interpreter
            continue  # a traceback frame: a path and a line number, no fact
        if apt_pkg and n - apt_pkg[1] <= 2:
            ai = _APT_INSTALLED.match(raw)
            if ai:
                pkg, v = apt_pkg[0], ai.group("v")
                dv = re.match(r"(?:\d+:)?(?P<d>[1-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)", v)
                tv = re.match(r"(?:\d+:)?(?P<t>\d{1,2}\.\d)(?:\.\d+)*[-~+]", v)
                if _APT_DRIVER_PKG.match(pkg) and dv:
                    add("driver", dv.group("d"), n, f"{pkg}: Installed: {v}")
                elif _APT_TOOLKIT_PKG.match(pkg) and tv:
                    add("nvcc", tv.group("t"), n, f"{pkg}: Installed: {v}")
                apt_pkg = None
                continue
        ah = _APT_POLICY_HEAD.match(raw) if raw.rstrip().endswith(":") or "policy" in raw else None
        if ah:
            if ah.group("pkg"):
                apt_pkg = (ah.group("pkg"), n)
            continue  # the query and the package's name: its "Installed:" line says which version is there, or "(none)"
        if not ah:
            apt_pkg = None
        if heading and n - heading[1] > 4:
            heading = None
        h = _HEADING.match(raw[:200])
        if h:
            label = (h.group("a") or h.group("b") or "").strip()
            heading = (label, n) if _HEADING_FACT.search(label) and not re.search(r"\d", label) else None
            if heading:
                continue
        line = _clean(raw)
        if not line.strip() or _UNCHECKED.match(line):
            continue
        if heading:
            if len(line.strip()) <= 120:
                line = f"{heading[0]}: {line.strip()}"  # "### PyTorch version" + "2.7.0+cu128"
            heading = None
        if wsl_rows is not None:
            r = _WSL_LIST_ROW.match(line)
            if r:
                wsl_rows.append((r.group("v"), bool(r.group("star")), n, raw))
                continue
            wsl_rows = None
        if _WSL_LIST_HEAD.match(line):
            wsl_rows = []
            wsl_tables.append(wsl_rows)
            continue
        if "icrosoft" in raw:
            for wk in _WSL_KERNEL.finditer(raw[:MAX_LINE]):
                add("kernel", wk.group(0), n, raw)  # /proc/version, uname -r, a headers package: WSL's own kernel
        if "build" in line.lower() or "version" in line.lower() or "windows" in line.lower():
            for wb in _WINDOWS_BUILD.finditer(line):
                add("windows_build", wb.group("a") or wb.group("b") or wb.group("c") or wb.group("d"), n, raw)
        if prev_many is not None:
            printed = line.split()
            if len(printed) == len(prev_many):
                for k, v in zip(prev_many, printed):
                    if k == "torch.__version__" and re.fullmatch(r"\d+\.\d+[\w.+]*", v):
                        add("torch", v, n, raw)
                    elif k == "torch.version.cuda" and re.fullmatch(r"\d{1,2}\.\d(?:\.\d+)?", v):
                        add("torch_cuda", v, n, raw)
                    elif k == "torch.cuda.is_available()" and v.lower() in ("true", "false"):
                        add("cuda_available", v.lower(), n, raw)
            prev_many = None
        if prev_label is not None:
            b = _BARE.match(line)
            if b:
                v = b.group("v")
                if prev_label == "torch.__version__" and re.match(r"\d+\.\d+", v):
                    add("torch", v, n, raw)
                elif prev_label == "torch.version.cuda" and re.fullmatch(r"\d{1,2}\.\d(?:\.\d+)?", v):
                    add("torch_cuda", v, n, raw)
                elif prev_label == "torch.cuda.is_available()" and v.lower() in ("true", "false"):
                    add("cuda_available", v.lower(), n, raw)
            prev_label = None
        low = line.lower()
        c = _CODE_LABEL.search(line) if "torch." in low else None
        if c:
            prev_label = c.group("k").lower()
        pm = _PRINT_MANY.search(line) if "print(" in low and "torch." in low else None
        if pm and "," in pm.group("args"):
            args = [a.strip() for a in pm.group("args").split(",")]
            if any(a.lower() in _PRINT_KEYS for a in args) and all(re.fullmatch(r"[\w.()]+", a) for a in args):
                prev_many, prev_label = [a.lower() for a in args], None
        if "available" in low and "cuda" in low:
            for said in _CUDA_AVAILABLE_SAID.finditer(line):
                add("cuda_available", said.group("v").lower(), n, raw)
        m = _AVAILABLE.search(line) if "is_available" in low else None
        if m:
            add("cuda_available", m.group("v").lower(), n, raw)
        # "... the version that was used to compile" wrapped before "PyTorch (12.1)": read across the break.
        joined = tail + " " + line if re.search(r"(?:compile|compiled\s+with|built\s+with)\s*$", tail, re.I) else line
        jlow = joined.lower()
        if "torch" in low and ("compile" in jlow or "built" in jlow or "编译" in line or "編譯" in line):
            for m in _TORCH_BUILT_CUDA.finditer(joined):
                if m.end() > len(joined) - len(line):
                    add("torch_cuda", m.group("v"), n, raw)
        if (
            "cuda" in low
            and any(w in low for w in ("detected", "installed", "bare", "system"))
            or "检测" in line
            or "檢測" in line
        ):
            for m in _FOUND_CUDA.finditer(line):
                add("nvcc", m.group("v"), n, raw)
        if "has cuda" in low:
            for m in _TORCH_HAS_CUDA.finditer(line):
                add("torch_cuda", m.group("v"), n, raw)
        if "__version__" in low:
            for m in _TORCH_DUNDER.finditer(line):
                add("torch", m.group("v"), n, raw)
        if "version.cuda" in low:
            for m in _TORCH_VERSION_CUDA.finditer(line):
                add("torch_cuda", m.group("v"), n, raw)
        installs = _install_clauses(line)
        for field, rx, words, skip_install in _FIELDS:
            if not any(w in low for w in words):
                continue
            if field == "driver" and (m3 := _WIN_DRIVER.search(line)):
                add("driver", f"{m3.group('b')}{m3.group('c')}"[-5:-2] + "." + m3.group("c")[-2:], n, raw)
                continue
            if field == "driver" and "driver version" in low:
                m2 = _SMI_INLINE.search(line)
                if m2:  # nvidia-smi's header written inline: its CUDA is the driver's
                    add("driver", m2.group("d"), n, raw)
                    add("driver_cuda", m2.group("c"), n, raw)
                    continue
            floors = list(floor_spans(line)) if field == "driver" else []
            for m in rx.finditer(line):
                if m.group("v") is None:
                    continue  # a pattern's other alternative ("tf-nightly" named with no version): nothing to state
                if skip_install and any(a <= m.start() < b for a, b in installs):
                    continue  # "pip install torch==2.1.0": what was asked for, in that clause of the line
                if any(a <= m.start("v") < b for a, b in floors):
                    continue  # "driver 546.33 and later is supported": a stated minimum, not the installed driver
                if field == "cuda" and (
                    _WANTED.search(line[max(0, m.start() - 40) : m.start()])
                    or (not m.group("pair") and _TWO_VERSIONS.match(line, m.end()))
                ):
                    continue  # "only CUDA 8.0 is supported", "CUDA 11.1 and 11.2 both installed": not the one in use
                if field == "torch" and _BUILT_FOR.search(
                    (tail + " " if m.start() < 40 and _ENDS_BUILT_FOR.search(tail) else "")
                    + line[max(0, m.start() - 40) : m.start()]
                ):
                    continue  # "xFormers was built for: PyTorch 2.1.2+cu121": what a package wants, not what is there
                add(field, m.group("v"), n, raw)
            if field == "torch":
                for m in _YOU_HAVE.finditer(line):
                    add("torch", m.group("v"), n, raw)
                for m in _LIBTORCH_ARCHIVE.finditer(line):  # the libtorch fetched and unzipped is the torch in use
                    add("torch", re.sub("%2[Bb]", "+", m.group("v")), n, raw)
                for m in _TORCH_TAGGED.finditer(line):
                    if any(a <= m.start() < b for a, b in installs) or _OTHER_PACKAGE.search(m.group("mid")):
                        continue
                    if _BUILT_FOR.search(
                        (tail + " " if m.start() < 40 and _ENDS_BUILT_FOR.search(tail) else "")
                        + line[max(0, m.start() - 40) : m.start("v")]
                    ):
                        continue
                    add("torch", m.group("v"), n, raw)
        if ("nan" in low or "black" in low or "green" in low or "training" in low) and WRONG_NUMBERS.search(line):
            add("nan_symptom", line.strip()[:200], n, raw)
        if "kernel module" in low:
            for m in _NVRM_MODULE.finditer(line):
                add("driver", m.group("v"), n, raw)
        if "cuda" in low and ("nvidia-smi" in low or "driver" in low):
            for m in _DRIVER_CUDA.finditer(line):
                add("driver_cuda", m.group("v"), n, raw)
        if "bit" in low and _BITS_CONTEXT.search(line):
            for m in _BITS.finditer(line):
                add("bits", m.group("v"), n, raw)
        if any(w in low for w in _OS_WORDS):
            for os_name, distro, wsl in _os_of(line):
                add("os" if not os_name.endswith("?") else "os_hint", os_name.rstrip("?"), n, raw)
                if distro:
                    add("distro", distro, n, raw)
                if wsl:
                    add("wsl", wsl, n, raw)
        if ("aarch64" in low or "arm64" in low or "sbsa" in low) and _ARM64.search(line):
            add("arch", "aarch64", n, raw)  # "Linux aarch64", "manylinux_2_28_aarch64.whl", "arm64 server"
        if re.search(r"\d", low) or any(f in low for f in ("titan", "quadro", "tesla", "jetson", "geforce", "orin", "xavier")):
            own = _COMPARISON.sub(" ", line) if any(w in low for w in _COMPARATIVES) else line
            for name, cap in _gpus_in(own, bool(_GPU_LABELS.search(line))):
                gpus.append((name, cap, n))
    for rows in wsl_tables:
        # the default distribution (marked *), else the only one listed: the one `wsl` opens
        pick = [r for r in rows if r[1]] or (rows if len(rows) == 1 else [])
        for v, _, n, raw in pick[:1]:
            add("wsl", v, n, raw)
    if "torch" not in got:
        for n, raw in enumerate(lines[:MAX_LINES], 1):
            for m in _BARE_CPU_BUILD.finditer(raw[:MAX_LINE]):
                before = raw[max(0, m.start() - 30) : m.start()].lower()
                if not re.search(r"vision|audio|text|xformers|torch_?\w", before) and _is_torch_release(m.group("v")):
                    add("torch", m.group("v") + "+cpu", n, raw)  # "it says 2.0.0+cpu": torch's CPU build by its tag
    hint = got.pop("os_hint", None)
    if hint and "os" not in got:
        got["os"] = hint  # "on a clean windows install", "C:\\...", "fbgemm.dll" and no line naming the OS otherwise
    cuda_dir = got.pop("cuda_dir", None)
    if cuda_dir and "cuda" not in got and "nvcc" not in got:
        got["cuda"] = cuda_dir  # "/usr/local/cuda-11.7/bin/nvcc": the toolkit installed, where nothing else names one
    path_py = got.pop("python_path", None)
    if path_py and "python" not in got:
        got["python"] = path_py  # "/usr/lib/python3.10/site-packages/...": the interpreter whose packages these are
    out: Dict[str, Any] = {}
    conflicts: Dict[str, List[str]] = {}
    for field, vals in got.items():
        distinct = _most_specific(list(dict.fromkeys(v for v, _, _ in vals)))
        if field == "wsl":
            distinct = [v for v in distinct if v != "?"] or ["?"]
        if field == "os" and "Linux" in distinct and "Windows" in distinct and "wsl" in got:
            distinct = ["Linux"]  # WSL is Linux on Windows: both are named, the Linux one is where torch runs
        if field == "distro" and "wsl" in got:
            distinct = [d for d in distinct if not d.startswith("Windows")]  # the host's, not the Linux torch runs in
            if not distinct:
                continue
        if len(distinct) == 1:
            v = distinct[0]
            line_no, text = next((ln, t) for x, ln, t in vals if x == v)
            out[field] = {"value": v, "line": line_no, "text": text}
        else:
            conflicts[field] = distinct[:6]
    names: Dict[str, Dict[str, Any]] = {}
    for name, cap, line_no in gpus:
        key = _gpu_key(name.split())  # "NVIDIA GeForce GT 740M" and "GeForce GT 740M" are one GPU
        bare = re.fullmatch(r"\d{4}(?: (?:ti|super|s))?", key)
        if bare and any(
            (k.startswith(key) or key.startswith(k)) and v["compute_capability"] == (None if cap == "?" else cap)
            for k, v in names.items()
        ):
            continue  # "a 1660S" and later "1660 Super": a bare model number names the card already named, not another
        names.setdefault(key, {"name": name, "compute_capability": None if cap == "?" else cap, "line": line_no})
    if names:
        out["gpus"] = list(names.values())[:16]
    if conflicts:
        out["conflicts"] = conflicts
    return out


#: A bare version with torch's CPU-build tag ("System Info says 2.0.0+cpu"), not after another package's name:
#: torchvision and torchaudio carry the same tag, xformers and others their own.
_BARE_CPU_BUILD = re.compile(r"(?<![\w.=-])(?P<v>[12]\.\d{1,2}\.\d{1,2})\+cpu\b")


def _is_torch_release(v: str) -> bool:
    from cudadoctor import kb

    return kb.torch_release(v) is not None


def _agree(short: str, long: str) -> bool:
    """Does the less specific value say the same as the more specific one ("1.7" / "1.7.0+cu110",
    "8.5" / "8.5.0", "Debian" / "Debian 12")?"""
    if re.match(r"\d", short) and re.match(r"\d", long):
        a = short.split("+")[0].split(".")
        b = long.split("+")[0].split(".")
        if "+" in short and short != long:
            return False
        return len(a) <= len(b) and b[: len(a)] == a or (len(a) > len(b) and a[: len(b)] == b and set(a[len(b) :]) <= {"0"})
    return long.lower().startswith(short.lower())


def _most_specific(values: List[str]) -> List[str]:
    """The values, less those a more specific one agrees with."""
    out = [v for v in values if not any(w != v and len(w) > len(v) and _agree(v, w) for w in values)]
    return out or values


def _mm(v: str) -> str:
    return ".".join(v.split(".")[:2])


def fill(facts: Dict[str, Any], got: Dict[str, Any]) -> List[str]:
    """Put what :func:`read` found into ``facts`` where the structured readers left it unset.
    Returns the fact paths filled."""
    filled: List[str] = []

    def val(field: str) -> Optional[str]:
        d = got.get(field)
        return d["value"] if isinstance(d, dict) else None

    def put(section: str, key: str, value: Any) -> None:
        sec = facts.setdefault(section, {})
        if sec.get(key) in (None, "", [], {}):
            sec[key] = value
            filled.append(f"{section}.{key}")

    t = facts.get("torch") or {}
    tv = val("torch")
    if tv and not t.get("version"):
        put("torch", "version", tv)
        m = re.search(r"\+cu(\d{2,3})$", tv)
        if m and "cuda" not in t:
            d = m.group(1)
            put("torch", "cuda", f"{d[:-1]}.{d[-1]}")
        elif tv.endswith("+cpu") and "cuda" not in t:
            put("torch", "cuda", None)  # a CPU build
    tc = val("torch_cuda")
    if tc and "cuda" not in (facts.get("torch") or {}):
        put("torch", "cuda", tc)
    avail = val("cuda_available")
    if avail and "cuda_available" not in (facts.get("torch") or {}):
        put("torch", "cuda_available", avail == "true")
    n = facts.get("nvml") or {}
    if val("driver") and not n.get("driver_version"):
        put("nvml", "driver_version", val("driver"))
    if val("driver_cuda") and not n.get("cuda_driver_version"):
        put("nvml", "cuda_driver_version", val("driver_cuda"))
    if got.get("gpus") and not n.get("devices") and not (facts.get("torch") or {}).get("devices"):
        put(
            "nvml",
            "devices",
            [
                {"index": i, "name": g["name"], "compute_capability": g["compute_capability"], "from": "prose"}
                for i, g in enumerate(got["gpus"])
            ],
        )
    if val("nvcc") and not (facts.get("toolkit") or {}).get("nvcc_version"):
        put("toolkit", "nvcc_version", _mm(val("nvcc") or ""))
    elif (
        val("cuda")
        and not val("nvcc")
        and not val("driver_cuda")
        and not (facts.get("toolkit") or {}).get("nvcc_version")
        and (facts.get("torch") or {}).get("cuda") in (None, "")
    ):
        # "cuda12.1", "CUDA Version: 11.3", "装的cuda是11.8": the CUDA the user installed, as collect_env's "CUDA runtime
        # version" names it (nvcc's), where nothing names the toolkit, torch's CUDA or the driver's otherwise.
        put("toolkit", "nvcc_version", _mm(val("cuda") or ""))
        facts["toolkit"]["from"] = "prose: " + str((got.get("cuda") or {}).get("text", ""))[:120]
    if val("python") and not (facts.get("python") or {}).get("version"):
        put("python", "version", val("python"))
    if val("bits") and not (facts.get("python") or {}).get("bits"):
        put("python", "bits", int(val("bits") or 0))
    s = facts.get("system") or {}
    if val("os") and not s.get("os"):
        put("system", "os", val("os"))
        if val("distro") and not s.get("distro"):
            put("system", "distro", val("distro"))
    if val("wsl") in ("1", "2") and s.get("wsl") is None:
        put("system", "wsl", True)
        facts["system"]["wsl_version"] = int(val("wsl") or 0)
    elif val("wsl") == "?" and s.get("wsl") is None:
        put("system", "wsl", True)  # "in WSL", "on WSL": under WSL, its version not stated (wsl_version stays unknown)
    if val("arch") and not (facts.get("system") or {}).get("arch"):
        put("system", "arch", val("arch"))
    if val("windows_build") and not (facts.get("system") or {}).get("windows_build"):
        put("system", "windows_build", val("windows_build"))
    kernel = val("kernel")
    if kernel and not (facts.get("system") or {}).get("kernel"):
        put("system", "kernel", kernel)
        if (facts.get("system") or {}).get("wsl") is None:
            put("system", "wsl", True)  # a WSL kernel's name: this ran under WSL (1 or 2: the kernel says which)
    nan = got.get("nan_symptom") or (got.get("conflicts") or {}).get("nan_symptom")
    if nan:
        said = nan["value"] if isinstance(nan, dict) else nan[0]
        put("pasted", "symptoms", [{"kind": "wrong-numbers", "text": said}])
    stated: List[Dict[str, str]] = []
    tfs: List[str] = [
        str(v) for v in ([val("tensorflow")] if val("tensorflow") else (got.get("conflicts") or {}).get("tensorflow") or [])
    ]
    if tfs:
        # a version the text states, not a listing of the environment: kept apart from packages.distributions. Of
        # several ("tf 2.10 works, 2.12 does not"), the newest: the one tried last, as a rule.
        tf = max(tfs, key=lambda v: tuple(int(x) for x in v.split(".")))
        where = str((got.get("tensorflow") or {}).get("text") or f"tensorflow {', '.join(tfs)}")[:120]
        stated.append({"name": "tensorflow", "version": tf, "from": "prose: " + where})
    numba = val("numba")
    if numba:
        where = str((got.get("numba") or {}).get("text") or "numba")[:120]
        stated.append({"name": "numba", "version": numba, "from": "prose: " + where})
    if stated:
        put("packages", "stated", stated)
    return filled


# --- environment variables the paste assigns -------------------------------------------------

#: The variables whose value decides which GPUs and libraries a process sees (the checks read them).
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME")
_ENV_NAME = "(?P<k>" + "|".join(ENV_NAMES) + ")"
#: An assignment as a shell, a Dockerfile, docker run, Windows' cmd / PowerShell or Python writes it, or a script's
#: printout of one: "export X=v", "X=v cmd", "ENV X v", "-e X=v", "set X=v", "$env:X=\"v\"", "os.environ['X'] = 'v'",
#: "os.environ['X']: v".
_ENV_SET = re.compile(
    r"(?:(?<![\w$])(?:export\s+|set\s+|ENV\s+|-e\s+|--env[= ]|\$env:)?" + _ENV_NAME + r"(?:\s*=\s*|(?<=ENV\s" + r")\s+)"
    r"|os\.environ\[['\"]" + _ENV_NAME.replace("?P<k>", "?P<k2>") + r"['\"]\]\s*(?:=|:)\s*)"
    r"(?P<v>\"[^\"\n]*\"|'[^'\n]*'|[^\s`'\";)]*)",
)


#: Values that are not one: "...", "<path>", "xxx", a command substitution whose output the text does not show.
_ENV_UNKNOWN = re.compile(r"^(?:\.{2,}|<[^>]*>|x{3,}|\$\(.*|`.*)$", re.I)


def env_assignments(lines: Iterable[str]) -> Dict[str, Dict[str, Any]]:
    """``{name: {"value", "line", "text"}}`` for each variable of :data:`ENV_NAMES` the text assigns one value to
    (a variable assigned two different values is left out: which one the failing run had is unknown)."""
    seen: Dict[str, List[Tuple[str, int, str]]] = {}
    for n, raw in enumerate(lines, 1):
        if n > MAX_LINES:
            break
        if not any(k in raw for k in ENV_NAMES):
            continue
        line = raw[:MAX_LINE].replace("**", "")
        for m in _ENV_SET.finditer(line):
            name = m.group("k") or m.group("k2")
            v = m.group("v")
            if v[:1] in "\"'" and v[-1:] == v[:1] and len(v) >= 2:
                v = v[1:-1]
            elif not _ENV_UNKNOWN.match(v):
                v = v.rstrip(".,")  # the sentence's full stop or comma after the value
            if _ENV_UNKNOWN.match(v) or (not v and m.group("k2")):
                continue  # a placeholder, a command's output ("$(find ...)"), or a printout that shows nothing
            if name:
                seen.setdefault(name, []).append((v.strip(), n, raw.strip()[:200]))
    out: Dict[str, Dict[str, Any]] = {}
    for name, vals in seen.items():
        if len({v for v, _, _ in vals}) == 1:
            v, n, text = vals[0]
            out[name] = {"value": v, "line": n, "text": text}
    return out
