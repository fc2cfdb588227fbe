"""What one value printed by ``nvidia-smi`` means, in the banner table and in ``-q`` alike.

A cell that reads ``N/A``, ``[N/A]``, ``ERR!``, ``[Not Supported]``, ``Unknown Error`` (and the
like) is no value, never a reading.
"""

from __future__ import annotations

import re
from typing import Optional

#: Cell values that mean "no value" (never a reading).
_NONE_VALUES = {
    "n/a",
    "[n/a]",
    "err!",
    "[err!]",
    "[not supported]",
    "not supported",
    "unknown error",
    "[unknown error]",
    "[insufficient permissions]",
    "insufficient permissions",
    "[gpu is lost]",
    "gpu is lost",
    "[requires root]",
    "requires root",
    "unknown",
    "[unknown]",
    "",
}

MIB = 1024 * 1024

#: NVML's compute mode names, and how nvidia-smi spells them (lower case: the banner abbreviates).
COMPUTE_MODES = {name.lower(): name for name in ("Default", "Exclusive_Process", "Exclusive_Thread", "Prohibited")}
COMPUTE_MODES.update({"e. process": "Exclusive_Process", "e. thread": "Exclusive_Thread"})


def value(text: Optional[str]) -> Optional[str]:
    """The cell's value, or None for every spelling of 'no value'."""
    if text is None:
        return None
    v = text.strip()
    return None if v.lower() in _NONE_VALUES else v


def number(text: Optional[str]) -> Optional[int]:
    """A whole number, with the unit nvidia-smi may print after it ('16x', '45 %', '1410 MHz', '34 C')."""
    v = value(text)
    if v is None:
        return None
    m = re.fullmatch(r"(\d+)\s*(?:x|%|MiB|MHz|C)?", v)
    return int(m.group(1)) if m else None


def mib(val: str) -> Optional[int]:
    """'40536 MiB' -> bytes."""
    m = re.fullmatch(r"(\d+)\s*MiB", value(val) or "")
    return int(m.group(1)) * MIB if m else None


def yes(val: str) -> Optional[bool]:
    """Yes / Enabled / Active / On, or their opposites; None for anything else."""
    v = (value(val) or "").lower()
    return True if v in ("yes", "enabled", "active", "on") else False if v in ("no", "disabled", "not active", "off") else None
