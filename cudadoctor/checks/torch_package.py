"""Is the torch package whole, and can pip find one for this interpreter?

Codes: torch-install-incomplete; python-unsupported (the situations the main check in platform.py leaves:
pip's own candidate list or a lower-bound requirement that shows no wheel fits the interpreter, a 32-bit OS).
"""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import environment, torch_version
from cudadoctor.interpret.versions import release_of
from cudadoctor.model import Code, Finding, Fix, check

from cudadoctor.errortext import kb_document

from ._common import PIP, error_match, kb, search
from ._fixes import python_fix

TORCH_INSTALL_INCOMPLETE = Code(
    code="torch-install-incomplete",
    title="The torch package is half-present (an interrupted install or uninstall left a broken tree)",
    area="torch",
    severity="error",
    explanation={
        "what": "`import torch` finds a torch directory, but not a whole package: `No module named 'torch._C'`, "
        "`cannot import name '_C' from 'torch' (unknown location)`, `module 'torch' has no attribute "
        "'__version__'`, or torch's own libraries (libtorch*, libc10*) missing or from two versions.",
        "why": "An interrupted `pip install`/`uninstall`, two installers writing the same site-packages (pip over "
        "conda), or an upgrade that failed half-way leaves files of one version, or an empty `torch/` directory "
        "that Python imports as a namespace package.",
        "confirm": "`python -c \"import torch, sys; print(torch.__file__, getattr(torch, '__version__', None))\"` "
        "(None or no file means a leftover directory); `python -m pip show -f torch | head`; "
        "`ls $(python -c 'import site; print(site.getsitepackages()[0])')/torch`.",
        "fix": "Uninstall torch until pip says it is not installed, delete the leftover `torch/` directory, and "
        "install it again with one installer.",
    },
    links=("https://pytorch.org/get-started/locally/",),
)


@check(TORCH_INSTALL_INCOMPLETE)
def torch_install_incomplete(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, TORCH_INSTALL_INCOMPLETE)
    if not said:
        return
    where = fx.str("torch.location") or '$(python -c "import site; print(site.getsitepackages()[0])")/torch'
    version = torch_version(fx)
    cmds = [
        f"{PIP} uninstall -y torch  # repeat until it says 'not installed'",
        f"rm -rf {where}  # the leftover directory (check the path first)",
        f"{PIP} install --no-cache-dir torch"
        + (f"=={version.split('+')[0]}" if version else "")
        + "  # from the index for your CUDA: https://pytorch.org/get-started/locally/",
    ]
    yield TORCH_INSTALL_INCOMPLETE.finding(
        title="torch is half-installed: its package directory is incomplete or mixed",
        evidence={said[0]: said[1], "torch.location": fx.str("torch.location"), "torch.version": version},
        fix=Fix(tuple(cmds), "A clean tree from one installer replaces the leftover files of an interrupted install."),
    )


# ---------------------------------------------------------------- python-unsupported: what pip's words show

#: pip's two sentences (pip/_internal/index/package_finder.py: "Could not find a version that satisfies the
#: requirement {req} (from versions: {versions})" and "No matching distribution found for {req}"), for torch,
#: with the requirement's specifier and the candidate list pip saw for this interpreter.
_PIP_NO_TORCH = re.compile(
    r"(?:satisfies the requirement|No matching distribution found for)\s+torch(?![\w-])"
    r"(?:\[[^\]]*\])?\s*(?P<op>==|>=|~=|>|<=|<|!=)?\s*(?P<ver>\d[\w.+]*)?[^\n(]{0,40}"
    r"(?:\(from versions:\s*(?P<list>[^)]*)\))?",
    re.IGNORECASE,
)
#: An OS that is 32-bit (collect_env's "Microsoft Windows 7 (32-bit)", "Ubuntu 16.04 i686", a Raspberry Pi's armv7l).
_OS_32 = re.compile(r"\b32[- ]?bit\b|\bi[3-6]86\b|\barmv[67]", re.IGNORECASE)


def _vt(v: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", release_of(v) or v)[:3])


def _pip_reason(text: str) -> Optional[Tuple[str, str]]:
    """(line, reason) when pip's words show no torch wheel fits the interpreter: a lower bound (or no version)
    that no candidate met while every torch release would, or a pinned release that pip's candidate list (the
    releases with a wheel for this interpreter) does not hold while it lists only newer or only older ones."""
    ms = list(_PIP_NO_TORCH.finditer(text))
    pin = next((m.group("ver") for m in ms if m.group("op") == "==" and m.group("ver")), None)
    for m in ms:
        lst = m.group("list")
        seen = [v.strip() for v in (lst or "").split(",") if re.match(r"\s*\d", v)]
        if not seen or not pin or (kb().torch_release(release_of(pin) or pin) or {}).get("version") != release_of(pin):
            continue  # no list, or a pin the kb does not know as a published release (a typo, a future one)
        want, bases = _vt(pin), sorted({_vt(v) for v in seen})
        if bases == [(0, 1, 2)]:
            return m.group(0).strip(), "pip finds only torch 0.1.2 (a placeholder on PyPI): the tell-tale sign of a 32-bit Python"
        if want in bases:
            return None  # the release is there: a local tag (+cuXXX) or an index problem, not the interpreter
        lo = ".".join(map(str, bases[0]))
        first = _python_of_first(lo)  # the list starts where this Python's wheels start
        if first is None or kb().python_supported(release_of(pin) or pin, first[0], first[1]) is not False:
            return None  # the list's start names no Python, or one the pinned release has wheels for: an index problem
        side = "newer" if want < bases[0] else "older"
        return m.group(0).strip(), (
            f"torch {release_of(pin)} has no wheel for this Python: the releases pip finds for it start at {lo}, the "
            f"first with wheels for Python {first[0]}, so the interpreter is {side} than torch {release_of(pin)} supports"
        )
        return None
    if any(m.group("list") is not None and not re.search(r"\d", m.group("list")) for m in ms) or (
        ms and "(from versions:" not in text and all(m.group("op") in (None, ">=", ">") for m in ms)
    ):
        m = ms[-1]
        op, ver = m.group("op"), m.group("ver")
        return m.group(0).strip(), "pip found no torch release with a wheel for this interpreter" + (
            f", although every release from {ver} on satisfies `torch{op}{ver}`" if op in (">=", ">") and ver else ""
        )
    return None


def _python_of_first(release: str) -> Optional[Tuple[str, str]]:
    """The Python minor whose first torch wheels came with ``release`` (kb/python_wheels.json), if one did."""
    for minor in ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"):
        for plat in ("linux-x86_64", "windows"):
            first = kb().first_torch_for_python(minor, plat)
            if first and first[0] == release:
                return minor, plat
    return None


def python_unsupported_pip_words(fx: Facts, code: Code) -> Iterator[Finding]:
    """Findings of `code` (python-unsupported, declared and checked in platform.py, which calls this when its
    own reading finds nothing) for what that check leaves: pip's candidate list or a lower bound that shows no wheel fits the interpreter, and a 32-bit
    operating system (so a 32-bit Python)."""
    if fx.str("torch.status") == "ok" or fx.bool("torch.cuda_available") is True:
        return
    said = error_match(fx, code)
    text = "\n".join(t for t in (fx.user_error(), said[1] if said else "") if t)
    evidence: Dict[str, Optional[str]] = {}
    reasons: List[str] = []
    got = _pip_reason(text) if text else None
    if got:
        evidence["pip"] = got[0]
        reasons.append(got[1])
        m = re.search(r"from versions:\s*(\d[\w.]*)", got[0])
        first = _python_of_first(release_of(m.group(1)) or "") if m else None
        if first:
            evidence["python_inferred"] = f"{m.group(1) if m else ''} is the first torch with wheels for Python {first[0]}"
    os_text = " ".join(x for x in (fx.str("system.distro"), fx.str("system.os_name"), fx.str("system.arch")) if x)
    bits = fx.int("python.bits")
    if not got and (bits == 32 or (bits is None and _OS_32.search(os_text))):
        if fx.str("torch.status") == "ok" and fx.bool("torch.cuda_available") is None:
            return
        evidence["os"] = os_text or None
        reasons.append(
            "this is a 32-bit system, so a 32-bit Python: PyTorch publishes CUDA builds only for 64-bit Python on a 64-bit OS"
        )
        bits = 32
    if not reasons:
        return
    evidence["python.version"] = fx.str("python.version")
    req = None
    if got:
        m = re.search(r"torch\s*==\s*(\d[\w.+]*)", got[0])
        req = m.group(1) if m else None
    cmds, why = python_fix(environment(fx), bits, False, req)
    yield code.finding(title="No PyTorch wheel for this interpreter: " + reasons[0], evidence=evidence, fix=Fix(tuple(cmds), why))


# --- round 8: cpu8 (text that names a CPU-only torch build; used by torch_install.py and arch.py) ---


def cpu_build_in_text(fx: Facts) -> Optional[Tuple[str, str]]:
    """(where, line) where the text names a CPU-only torch build as installed or about to be (kb/errors/reader3.json's
    rows, cpu8.json's other words, a pasted line the issue reader kept), or None. For the other checks' priority: a
    guess about what the CUDA code lacks (checks/arch.py) yields to a build that has no CUDA code at all."""
    rows = kb_document("reader3.json").get("symptoms", {})
    for k in ("cpu_build_named", "cpu_build_said"):
        said = search(fx, rows[k]["regex"]) if k in rows else None
        if said:
            return said
    said = said_row(fx, "cpu_build_words")
    if said:
        return said
    pasted = fx.dict("pasted.cpu_build") or {}
    return (f"pasted text, line {pasted.get('line')}", str(pasted["text"])) if pasted.get("text") else None


def said_row(fx: Facts, key: str, document: str = "cpu8.json") -> Optional[Tuple[str, str]]:
    """(where, text) of the first match of symptom row ``key`` of kb/errors/<document> (cpu8.json, torch10.json), unless
    the row's 'unless' pattern (another runtime or another vendor named) is in the text too."""
    row = kb_document(document).get("symptoms", {}).get(key)
    if not row:
        return None
    said = search(fx, row["regex"])
    if said and row.get("unless") and search(fx, row["unless"]):
        return None
    if said and key == "program_on_cpu" and fx.dict("pasted.cpu_chosen"):
        return None  # the paste starts the program with --device cpu: running on the CPU was the user's choice
    return said


def register():
    return [torch_install_incomplete]
