"""Version strings -> comparable values. Pure, no dependencies: the one version parser of the package.

Every function takes any value (facts files come from elsewhere) and answers None when it cannot
tell: a bool, a list, a number too long to be a version or text without a number is never a crash.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Tuple

_NUMBER = re.compile(r"\d+(?:\.\d+)*")
#: The local version tags of the PyTorch wheels: cpu, cu118, cu130, rocm6.2, xpu.
_VARIANT = re.compile(r"(cpu|cu\d+|rocm[\d.]*\d|xpu)")


def vtuple(v: Any) -> Optional[Tuple[int, ...]]:
    """Leading dotted integers of a version, tolerant of decoration.

    "2.6.0+cu126" -> (2, 6, 0); "535.104.05" -> (535, 104, 5); "v2.1.0a0" -> (2, 1, 0);
    "3.11.7 (main, ...)" -> (3, 11, 7); 12 -> (12,). None for no number, a bool or a non-scalar.
    """
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        return None
    m = _NUMBER.search(str(v))
    if not m:
        return None
    try:
        return tuple(int(p) for p in m.group(0).split("."))
    except ValueError:  # a number longer than int() reads (sys.int_info): not a version
        return None


def mm(v: Any) -> Optional[Tuple[int, int]]:
    """major.minor of a version (or of a version tuple) as a 2-tuple, minor 0 when missing."""
    t = v if isinstance(v, tuple) and all(isinstance(x, int) for x in v) else vtuple(v)
    if not t:
        return None
    return (t[0], t[1] if len(t) > 1 else 0)


def mm_str(v: Any) -> Optional[str]:
    """'12.4.131' -> '12.4'."""
    t = mm(v)
    return f"{t[0]}.{t[1]}" if t else None


def release_of(version: Any) -> Optional[str]:
    """'2.6.0+cu126' -> '2.6.0' (the public part of a version)."""
    if not isinstance(version, str) or not version:
        return None
    return version.split("+", 1)[0] or None


def local_tag(version: Any) -> Optional[str]:
    """'2.6.0+cu126' -> 'cu126'; '2.1.0a0+git1234' -> 'git1234'; None without a local part."""
    if not isinstance(version, str) or "+" not in version:
        return None
    return version.split("+", 1)[1].strip().lower() or None


def variant_of_tag(version: Any) -> Optional[str]:
    """The wheel variant named by the local tag: '+cu126' -> 'cu126', '+rocm6.2' -> 'rocm6.2', '+cpu' ->
    'cpu'; None for no tag or another one (a '+git...' source build)."""
    m = _VARIANT.match(local_tag(version) or "")
    return m.group(1) if m else None


def variant_of_cuda(cuda: Any) -> Optional[str]:
    """'12.6' -> 'cu126' (the variant name of a CUDA version)."""
    t = mm(cuda)
    return f"cu{t[0]}{t[1]}" if t else None


def cuda_of_variant(variant: Any) -> Optional[str]:
    """'cu124' -> '12.4', 'cu102' -> '10.2', 'cu92' -> '9.2'; None for anything else."""
    m = re.fullmatch(r"cu(\d{1,4})(\d)", variant) if isinstance(variant, str) else None
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def rocm_of_variant(variant: Any) -> Optional[str]:
    """'rocm6.2' -> '6.2'."""
    return variant[4:] if isinstance(variant, str) and variant.startswith("rocm") and len(variant) > 4 else None


def decode_cudnn(n: Any) -> Optional[Tuple[int, int, int]]:
    """cuDNN's integer version: 7102 -> (7, 1, 2); 8902 -> (8, 9, 2); 92400 -> (9, 24, 0)."""
    if isinstance(n, str):
        t = vtuple(n)
        if t and len(t) >= 2 and t[0] < 100:
            return (t[0], t[1], t[2] if len(t) > 2 else 0)
        if t and len(t) == 1:
            n = t[0]
        else:
            return None
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return None
    if n >= 10000:
        return (n // 10000, (n % 10000) // 100, n % 100)
    return (n // 1000, (n % 1000) // 100, n % 100)


def fmt_cudnn(t: Optional[Tuple[int, int, int]]) -> str:
    return ".".join(str(x) for x in t) if t else "unknown"
