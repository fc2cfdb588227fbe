"""Small pure helpers shared by the built-in checks: what the error texts say (through the one text engine).

What the facts mean lives in :mod:`cudadoctor.interpret`; fix commands in :mod:`._fixes`.
Nothing here does I/O. The knowledge base (``cudadoctor.kb``) is read-only package data.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from cudadoctor import kb as _kb
from cudadoctor.errortext import error_texts, search, text_of  # noqa: F401  (for the checks)
from cudadoctor.errortext import said as _said
from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix

INDEX = "https://download.pytorch.org/whl/"
PIP = "python -m pip"


def kb():
    return _kb


def error_match(fx: Facts, code: Code) -> Optional[Tuple[str, str]]:
    """(where, line) of the first error text line a signature of ``code`` matches: the run's one
    evidence pass (cudadoctor.errortext.evidence), never a second matcher."""
    return _said(fx, code)


def said_or_pasted(fx: Facts, pattern: str, key: str) -> Optional[Tuple[str, str]]:
    """(where, line) of ``pattern`` in the facts' error texts, else the line a paste reader recorded as ``pasted.<key>``
    (a line of prose the reader set aside: ComfyUI's Device: line, a URL naming Triton); None when neither has it."""
    found = search(fx, pattern)
    if found:
        return found
    line = (fx.dict(f"pasted.{key}") or {}).get("text")
    return ("pasted text", str(line)) if line else None


def text_finding(
    code: Code, fx: Facts, title: str, cmds: Sequence[str], why: str, severity: Optional[str] = None
) -> Iterator[Finding]:
    """The finding ``code`` gives from the user's error text alone (the matched line is the evidence)."""
    said = error_match(fx, code)
    if said:
        yield code.finding(title=title, evidence={said[0]: said[1]}, fix=Fix(tuple(cmds), why), severity=severity)


# ---------------------------------------------------------------- the GPUs NVML lists (health, gpu_state)


def nvml_devices(fx: Facts) -> List[Dict[str, Any]]:
    return [d for d in fx.dicts("nvml.devices") if isinstance(d.get("index"), int)]


def gpu_who(d: Dict[str, Any]) -> Dict[str, Any]:
    return {"gpu": d.get("index"), "name": d.get("name"), "pci_bus_id": d.get("pci_bus_id")}


def gpu_target(d: Dict[str, Any]) -> str:
    """How nvidia-smi's ``-i`` names this GPU: its index, else its PCI bus id (``-i`` takes either), else ``<N>``."""
    if isinstance(d.get("index"), int):
        return str(d["index"])
    bus = d.get("pci_bus_id")
    return bus if isinstance(bus, str) and bus else "<N>"


def gpu_label(d: Dict[str, Any]) -> str:
    """``GPU 0 (NVIDIA H100)``; a GPU NVML gave no index (only its bus id, as nvidia-smi's errors do) by its bus id."""
    name = d.get("name") if isinstance(d.get("name"), str) else None
    who = gpu_target(d)
    head = f"GPU {who}" if who != "<N>" else "A GPU"
    return f"{head} ({name})" if name else head


def companion_below_minimum(fx: Facts) -> Optional[Tuple[str, str, Dict[str, Any], str]]:
    """(package, line, gpu, minimum): the error text names a package or program (kb/errors/companion.json
    min_capability: flash-attn, vLLM, Ollama, PG-Strom) that supports no GPU as old as one here."""
    from cudadoctor.errortext import kb_document
    from cudadoctor.interpret import cap_number, gpus

    devices = [g for g in gpus(fx) if g.get("capability")]
    if not devices:
        return None
    for row in kb_document("companion.json").get("min_capability", {}).get("packages", []):
        hit = search(fx, row["names"])
        low = min(devices, key=lambda g: cap_number(g["capability"]) or 0)
        if hit and (cap_number(low["capability"]) or 99) < (cap_number(row["min_capability"]) or 0):
            return row["package"], hit[1], low, row["min_capability"]
    return None


#: pip refusing a requirement, and the name it refused (extras kept: "jax[cuda12]"): platform26 and wheels26 read it.
PIP_REFUSED = re.compile(
    r"(?:No matching distribution found for|Could not find a version that satisfies the requirement)\s+"
    r"(?P<pkg>[A-Za-z0-9_.\-]+(?:\[[\w,\s-]+\])?)",
    re.I,
)
