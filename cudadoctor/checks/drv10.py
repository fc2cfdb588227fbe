"""A program that states its own minimum driver (kb/program_driver_min.json): the release of the program and the driver
named in the text or the facts decide driver-too-old, with both numbers. Pure helpers; the finding is made by
checks/driver_compat.py (the driver-too-old check)."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from cudadoctor.errortext import stated_floor
from cudadoctor.facts import Facts
from cudadoctor.interpret import driver_version, gpus, vtuple

#: A program's release as people and the program write it: "ollama version is 0.5.7" (ollama -v), "Ollama versions
#: v0.30.0 through v0.32.1", "Ollama v0.12.3", the issue form's "### Ollama version" heading followed by the number,
#: the server log's "Listening on 127.0.0.1:11434 (version 0.12.0)", an image tag "ollama/ollama:0.12.3", an upgrade
#: "from 0.7.0 to 0.9.3".
_RELEASE = r"v?(?P<v1>\d+\.\d+(?:\.\d+)?)\b(?:\s*(?:through|to|and|-|–)\s*v?(?P<v2>\d+\.\d+(?:\.\d+)?)\b)?"


def _release_patterns(names: str) -> List["re.Pattern[str]"]:
    return [
        re.compile(rf"{names}(?:\s+versions?)?(?:\s+is)?\s*[:=]?\s*{_RELEASE}", re.I),
        re.compile(rf"#+\s*{names}\s+version\s*\n+\s*{_RELEASE}", re.I),
        re.compile(rf"{names}/{names}:{_RELEASE}", re.I),
        # "ollama be upgraded from 0.7.0 to 0.9.3", "updated ollama from 0.9.6 to 0.11.3"
        re.compile(rf"{names}\b[^\n.]{{0,40}}?\bfrom\s+v?(?P<v1>\d+\.\d+(?:\.\d+)?)\s+to\s+v?(?P<v2>\d+\.\d+(?:\.\d+)?)", re.I),
    ]


#: ollama's server log line naming its own release.
_LISTENING = re.compile(r"Listening on \S+ \(version (?P<v1>\d+\.\d+\.\d+)\)(?P<v2>)")


def _table() -> Dict[str, Any]:
    from cudadoctor.kb import _load

    return dict(_load("program_driver_min")["programs"])


def program_releases(text: str) -> Dict[str, str]:
    """program -> the newest release of it the text names (a bisecting report names the broken one last or highest)."""
    out: Dict[str, str] = {}
    for prog, row in _table().items():
        names = str(row["names"])
        if not re.search(names, text, re.I):
            continue
        seen: List[str] = []
        pats = _release_patterns(names) + ([_LISTENING] if prog == "ollama" else [])
        for rx in pats:
            for m in rx.finditer(text):
                seen += [v for v in (m.group("v1"), m.group("v2")) if v]
        if seen:
            out[prog] = max(seen, key=_v3)
    return out


def _v3(v: str) -> Tuple[int, ...]:
    """'0.30' -> (0, 30, 0): a release named without its patch level is its first."""
    t = vtuple(v) or ()
    return t + (0,) * (3 - len(t))


def _floor(prog: str, release: str, cc: Optional[str]) -> Optional[Tuple[str, str]]:
    """(minimum driver, why) for this release of the program on a GPU of this compute capability."""
    row: Optional[Dict[str, Any]] = None
    for r in _table()[prog]["floors"]:
        if _v3(r["from"]) <= _v3(release):
            row = r
    if row is None:
        return None
    legacy = row.get("legacy_cc_below")
    if legacy and cc and (vtuple(cc) or ()) < (vtuple(legacy) or ()):
        return str(row["legacy_driver"]), f"{prog} {row['from']}+ on a GPU of compute capability {cc} (below {legacy})"
    return str(row["driver"]), f"{prog} {row['from']}+"


def program_floor(fx: Facts, text: str) -> Optional[Dict[str, Any]]:
    """The first program whose stated driver floor the driver shown is below: {program, release, driver, floor, why, gpu}."""
    driver = driver_version(fx)
    if not driver:
        return None
    caps = [(str(g.get("name") or ""), g.get("capability")) for g in gpus(fx)]
    cc = min((c for _, c in caps if c), key=lambda c: vtuple(c) or (), default=None)
    for prog, release in program_releases(text).items():
        got = _floor(prog, release, cc)
        if not got:
            continue
        floor, why = got
        if (vtuple(driver) or ())[:1] < (vtuple(floor) or ())[:1]:
            gpu = next((n for n, c in caps if c == cc), None) if cc else None
            return {"program": prog, "release": release, "driver": driver, "floor": floor, "why": why, "gpu": gpu, "cc": cc}
    return None


def stated_floor_unmet(fx: Facts, text: str) -> Optional[Dict[str, Any]]:
    """A driver floor stated in the text that the driver shown (facts, or the prose reader's) is below:
    {driver, floor, line}, or None."""
    got = stated_floor(text)
    driver = driver_version(fx)
    if not got or not driver:
        return None
    floor, line = got
    have, need = vtuple(driver), vtuple(floor)
    if not have or not need or have[:1] == need[:1] and len(have) == 1:
        return None  # "535" against "535.54": the branch alone cannot say it is below
    if have >= need:
        return None
    return {"driver": driver, "floor": floor, "line": line}


#: A CUDA forward-compatibility libcuda named in the text: its directory (/usr/local/cuda[-X.Y]/compat), NVIDIA's package
#: (cuda-compat, cuda-compat-12-4), or the words for it ("the `compat` library", "compat libraries", "compat libcuda").
#: NVIDIA's CUDA compatibility guide names both the package and the directory; "forward compatibility was attempted"
#: (error 804's own text) is not a mention of the libraries and does not match.
COMPAT_TEXT = re.compile(
    r"/usr/local/cuda(?:-\d+(?:\.\d+)?)?/compat\b|\bcuda-compat(?:-\d+-\d+)?\b"
    r"|[`'\"]?\bcompat[`'\"]?\s+(?:librar(?:y|ies)|director(?:y|ies)|package)|\bcompat(?:ibility)?\s+libcuda",
    re.I,
)


#: The banner of NVIDIA's NGC container images (nvcr.io/nvidia/...: their entrypoint's CUDA check), which ship the CUDA
#: forward-compatibility libraries and put them on the path when the host driver is older than the image's CUDA: with
#: error 803 under it, those libraries are what does not fit the host driver (NVIDIA/NeMo#9334: nvcr.io NeMo 24.03 on an
#: RTX A6000, solved with another image tag).
NGC_BANNER = re.compile(r"The NVIDIA Driver (?:is|was) present, but CUDA failed to initiali[sz]e", re.I)


def compat_named(text: str) -> bool:
    """Whether the text names a forward-compatibility libcuda (see COMPAT_TEXT), or shows an NGC image's CUDA check
    (NGC_BANNER), whose images carry those libraries."""
    return bool(COMPAT_TEXT.search(text) or NGC_BANNER.search(text))
