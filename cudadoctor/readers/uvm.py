"""What a pasted report says about the nvidia_uvm kernel module (round 10, plat10): the entities that separate
"nvidia_uvm is not loaded" (nvidia-uvm-not-loaded-after-reboot) from "nvidia_uvm is loaded but stale after a
suspend" (nvidia-uvm-stale). Both make CUDA fail at initialisation with CUDA_ERROR_UNKNOWN (999) / "CUDA unknown
error" while nvidia-smi works, so the error line cannot tell them apart; the report's other lines can:

- the module list itself: `lsmod` lines of nvidia modules with no nvidia_uvm among them, or a sentence saying
  nvidia-uvm is not loaded / /dev/nvidia-uvm does not exist;
- what made it work: loading the module (`modprobe nvidia-uvm`, `nvidia-modprobe -u`, running nvidia-settings or
  nvidia-bug-report.sh, which load it) versus reloading it (`rmmod`/`modprobe -r` then modprobe: the stale case);
- when it fails: after a boot versus after a suspend/resume;
- the platform: NixOS has no setuid nvidia-modprobe (the helper the CUDA driver calls to load nvidia_uvm and create
  /dev/nvidia-uvm on first use: NVIDIA's driver README, "nvidia-modprobe"), so there the module is loaded only by
  its module configuration (`softdep nvidia post: nvidia-uvm`, which does not fire with the open kernel modules:
  nixpkgs issues 272413, 286028, 334180, PR 398355; NVIDIA/open-gpu-kernel-modules#689).

:func:`read` returns ``{lsmod_nvidia, lsmod_has_uvm, not_loaded, load_fix, reload_fix, suspend, boot, nixos,
open_module}`` (each ``{line, text}``, lsmod's as booleans) or None. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Optional

MAX_LINE = 2000

#: An lsmod line: module name, size, use count (https://man7.org/linux/man-pages/man8/lsmod.8.html).
_LSMOD = re.compile(r"^\s*(nvidia\w*)\s+\d{3,}\s+\d+\b")
_PATTERNS = (
    (
        "not_loaded",
        re.compile(
            r"(?<![\w-])(?:nvidia[-_])?uvm\b[^\n]{0,60}?\b(?:is|was|are|were)?\s*(?:not|n't|never)\s+(?:being\s+|getting\s+|get\s+|be\s+)?loaded|"
            r"nvidia[-_]uvm\b[^\n]{0,40}?\b(?:isn't|wasn't|doesn't|does not|did not|didn't)\s+(?:get\s+)?load|"
            r"(?:softdep|lazily loaded)[^\n]{0,60}nvidia[-_]uvm|"
            r"/dev/nvidia-uvm\b[^\n]{0,40}?(?:does not exist|doesn't exist|is missing|not (?:present|there|exist))",
            re.I,
        ),
    ),
    (
        "load_fix",
        re.compile(
            r"modprobe\s+(?!-r\b)(?:-\w+\s+)*nvidia[-_]uvm|nvidia-modprobe\s+-u|nvidia-bug-report\.sh|nvidia-settings\b", re.I
        ),
    ),
    ("reload_fix", re.compile(r"rmmod\s+(?:-\w+\s+)*nvidia[-_]uvm|modprobe\s+-r\s+(?:-\w+\s+)*nvidia[-_]uvm", re.I)),
    (
        "suspend",
        re.compile(r"\b(?:suspend\w*|resum(?:e|ed|ing)\b|hibernat\w*|sleep mode|standby|wak(?:e|es|ing) (?:up|from))", re.I),
    ),
    ("boot", re.compile(r"\b(?:reboot\w*|(?:after|on|at|every|each) (?:a )?(?:re)?boot\b|boot(?:ed|ing)? up|startup)", re.I)),
    ("nixos", re.compile(r"\bNixOS\b|\bnixpkgs\b|configuration\.nix|hardware\.nvidia\.", re.I)),
    (
        "open_module",
        re.compile(
            r"open[- ]gpu[- ]kernel[- ]modules|NVIDIA Open GPU Kernel Modules|hardware\.nvidia\.open\s*=\s*true|\bopen\s*=\s*true;|nvidia-open\b",
            re.I,
        ),
    ),
)


def read(lines: Iterable[str]) -> Optional[Dict[str, Any]]:
    """The nvidia_uvm entities the lines show (first line of each), or None when none is shown."""
    got: Dict[str, Any] = {}
    lsmod = set()
    for n, raw in enumerate(lines, 1):
        line = raw[:MAX_LINE]
        m = _LSMOD.match(line)
        if m:
            lsmod.add(m.group(1).lower())
        for name, pat in _PATTERNS:
            if name not in got:
                hit = pat.search(line)
                if hit:
                    got[name] = {"line": n, "text": line.strip()[:300], "said": hit.group(0)}
    if lsmod:
        got["lsmod_nvidia"] = sorted(lsmod)
        got["lsmod_has_uvm"] = "nvidia_uvm" in lsmod
    return got or None


def fill(facts: Dict[str, Any], got: Optional[Dict[str, Any]]) -> bool:
    """Record ``got`` as ``pasted.uvm``; returns whether anything was recorded."""
    if not got:
        return False
    facts.setdefault("pasted", {})["uvm"] = dict(got)
    return True
