"""Where error texts live in a facts document: the user's pasted error and what the probes recorded."""

from __future__ import annotations

from typing import Any, List, Tuple

#: Single-string error texts, in the order they are read.
TEXT_PATHS = (
    "torch.error.message",
    "torch.cuda_init_error.message",
    "torch.cudnn_error.message",
    "torch.failure.stderr_tail",
    "torch.stderr_tail",
)
LIST_PATHS = ("torch.import_warnings", "torch.cuda_init_warnings")


def error_texts(fx: Any) -> List[Tuple[str, str]]:
    """Every error text the facts hold, as (where, text): the user's error, what torch said, NVML's error."""
    out: List[Tuple[str, str]] = []
    if fx.user_error():
        out.append(("user_error", fx.user_error()))
    for path in TEXT_PATHS:
        s = fx.str(path)
        if s:
            out.append((path, s))
    for path in LIST_PATHS:
        for w in fx.list(path) or []:
            if isinstance(w, str):
                out.append((path, w))
    for name in ("torchvision", "torchaudio"):
        s = fx.str(f"torch.companions.{name}.error.message")
        if s:
            out.append((f"torch.companions.{name}.error", s))
    s = fx.str("nvml.error")
    if s:
        out.append(("nvml.error", s))
    return out
