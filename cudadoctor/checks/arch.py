"""Does the torch build contain kernels (SASS or compatible PTX) for each GPU's compute capability?

Code: gpu-arch-unsupported.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from cudadoctor.errortext import CUDA_TENSOR_PRINTED, program_patterns
from cudadoctor.facts import Facts
from cudadoctor.interpret import (
    arch_bound,
    arch_number,
    arch_runs,
    build_arch_list,
    cap_number,
    container,
    driver_version,
    environment,
    gpus,
    is_cuda_build,
    is_wsl,
    newer_than_all,
    old_release_cuda,
    os_key,
    os_known,
    torch_cuda,
    torch_release,
    torch_version,
    variant,
)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import companion_below_minimum, error_match, kb, text_of
from ._fixes import arch_fix
from .torch_package import cpu_build_in_text

GPU_ARCH_UNSUPPORTED = Code(
    code="gpu-arch-unsupported",
    title="This PyTorch build has no kernels for the GPU's architecture",
    area="gpu",
    severity="error",
    explanation={
        "what": "The GPU's compute capability (sm_XY) is covered neither by a compiled kernel "
        "(SASS for the same major version with an equal or lower minor) nor by PTX the driver "
        "could compile for it. Either the GPU is newer than the build (an RTX 50-series sm_120 "
        "with a cu126 wheel) or older than the oldest architecture the build still includes "
        "(Kepler sm_35 after torch 1.3, Maxwell sm_50 and Pascal sm_61 in the newest wheels).",
        "why": "torch.cuda.is_available() is still True — the driver works — but every kernel "
        'launch fails with "CUDA error: no kernel image is available for execution on the '
        'device", and torch warns "... with CUDA capability sm_120 is not compatible with the '
        'current PyTorch installation".',
        "confirm": '`python -c "import torch; print(torch.cuda.get_device_capability(), '
        'torch.cuda.get_arch_list())"`: the capability (e.g. (12, 0)) has no matching sm_ entry.',
        "fix": "Install a release/variant whose wheel includes the architecture (the finding names "
        "the newest one your driver runs); for GPUs dropped from every current wheel, use the last "
        "release that still shipped them or build PyTorch from source with TORCH_CUDA_ARCH_LIST.",
    },
    links=(
        "https://developer.nvidia.com/cuda-gpus",
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
        "https://pytorch.org/get-started/locally/",
        "https://github.com/pytorch/pytorch/issues/150733",
    ),
)


_TORCH_SAYS = re.compile(r"is not compatible with the current PyTorch installation|PyTorch no longer supports this GPU", re.I)

#: The traceback's last call, just above "no kernel image": one of torch's own operations (torch.inverse(...),
#: x.cuda(), x.to("cuda")), with no frame of another package after it; or a REPL line and its result as a comment.
#: "invalid device function" is the same failure as older CUDA runtimes report it (_NO_KERNEL_LINE).
_TORCH_OP_LINE = re.compile(
    r"^[^\n]*(?:\btorch\.(?!ops\.|utils\.cpp_extension)[a-z_][\w.]*\(|\.cuda\(\)|\.to\(\s*(?:device|['\"]cuda))[^\n]*\n"
    r"\s*(?:#\s*)?RuntimeError: CUDA error: (?:no kernel image is available|invalid device function)",
    re.M,
)


def torch_op_failed(text: str) -> bool:
    """Does the error text show torch's own operation as the call that found no kernel image?"""
    return bool(_TORCH_OP_LINE.search(text))


_NO_KERNEL_LINE = re.compile(
    r"no kernel image is available|cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU|invalid device function"
    # the same by number (cudaErrorNoKernelImageForDevice = 209, CUDA_ERROR_NO_BINARY_FOR_GPU = 209: kb/cuda_errors.json)
    r"|\bcuda\s*error\s*[:=(]?\s*209\b|\berror\s*(?:code\s*)?[:=(]?\s*209\b",
    re.I,
)
_FRAME_PATH = re.compile(r'File "([^"]+)", line \d+')


def _owner_data() -> Dict[str, Any]:
    from cudadoctor.errortext import kb_document

    return dict(kb_document("arch3.json").get("kernel_owner") or {})


def _rx(key: str, field: str = "regex") -> "re.Pattern[str]":
    return re.compile(str(_owner_data()[key][field]), re.I)


def _torch_raised(text: str, at: int) -> Optional[str]:
    """Why the text shows torch's own kernel as the one without an image (None when it does not)."""
    if _TORCH_SAYS.search(text):
        return "torch's own warning names the GPU's capability"
    if torch_op_failed(text):
        return "the call that failed is torch's own operation"
    torch_paths = _rx("source_site", "torch_paths")
    for near in text[at:].split("\n")[:2]:  # the error's line and the next: "at /pytorch/.../THCTensorMath.cu:15"
        if torch_paths.search(near) and re.search(r"\.(?:cu|cuh|cpp|cc|c|h)\b", near):
            return f"the error names torch's own source ({near.strip()[:160]})"
    frames = _FRAME_PATH.findall(text[:at])
    if frames and re.search(r"[/\\](?:site|dist)-packages[/\\]torch[/\\]", frames[-1]):
        return f"the last frame is inside torch ({frames[-1]})"
    return None


def _other_raised(fx: Facts, text: str, line: str, at: int) -> Optional[str]:
    """Why the text or facts show the kernel without an image as another package's or program's (None: no sign)."""
    if _rx("package_prints").search(line):
        return "the error is a program's own kernel-launch check, not torch's 'CUDA error:'"
    torch_paths = _rx("source_site", "torch_paths")
    for site in _rx("source_site").finditer(line):  # on the error's own line: a log prefix elsewhere is not the kernel
        if not torch_paths.search(site.group(0)):
            return f"the failing kernel's source is {site.group(0).strip()}, not one of torch's"
    frames = _FRAME_PATH.findall(text[:at])
    pkgs = _rx("kernel_packages")
    if frames and pkgs.search(frames[-1]):
        return f"the last frame is inside a package with its own kernels ({frames[-1]})"
    m = pkgs.search(text)
    if m:
        return f"the report names {m.group(0)}, a package with its own CUDA kernels"
    b = _rx("built_here").search(text)
    if b:
        return f"the report built something itself ({b.group(0).strip()})"
    for d in fx.dicts("packages.distributions"):
        name = str(d.get("name") or "")
        if name and pkgs.fullmatch(name):
            return f"{name} (a package with its own CUDA kernels) is installed"
    listed = [str(d.get("name") or "") for d in fx.dicts("packages.distributions") + fx.dicts("packages.stated")]
    named = fx.dict("pasted.programs") or {}  # the paste's programs, its title and prose included (readers/issue.py)
    if not torch_unknown(fx) or torch_named(fx, text) or any(re.fullmatch(r"torch|pytorch", n, re.I) for n in listed):
        return None
    # other frameworks (b19.json) and programs that ship their own kernels or their own libtorch (b20.json)
    either = program_patterns()[0]
    m = either.search(text)
    prog = (
        m.group(0) if m else next((n for n in listed if either.fullmatch(n)), None) or next(iter(named.get("names") or []), None)
    )
    return f"the program is {prog}, which has its own CUDA kernels; torch is named nowhere" if prog else None


def _release_lists(fx: Facts) -> List[List[str]]:
    """The arch lists of every CUDA wheel of the installed torch release (its variant unknown); [] if none known."""
    rel = torch_release(fx)
    if not rel:
        return []
    rows = kb()._load("torch_arch_lists")["builds"].get(".".join(rel.split(".")[:2])) or {}
    return [list(a) for a in rows.values() if a]


def _candidates(g: Dict[str, Any]) -> List[str]:
    """The capabilities a GPU may have: its own, else every chip its (ambiguous) name is sold as."""
    if g.get("capability"):
        return [str(g["capability"])]
    return list(g.get("capability_candidates") or [])


def kernel_owner(fx: Facts) -> Optional[Tuple[str, str, Tuple[str, str]]]:
    """Who raised 'no kernel image' (or 'invalid device function'): ("torch" | "other" | "unknown", why, said).

    torch: torch's warning, its own operation or frame, or the facts (GPU and build known: the build lacks it).
    other: the facts say torch's build covers the GPU (every candidate capability of its name), or the text
    points at another kernel (a program's own launch check, a non-torch source file, a kernel package's
    frame or name, something built locally). unknown: neither torch nor the GPU is known and the text
    names no owner. None when no such error was reported."""
    said = error_match(fx, GPU_ARCH_UNSUPPORTED)
    if not said or not _NO_KERNEL_LINE.search(said[1]):
        return None
    text = text_of(fx) or said[1]
    at = max(0, text.find(said[1][:60]))
    printed = (fx.dict("pasted.cuda_tensor_printed") or {}).get("text") or (
        m.group(0) if (m := CUDA_TENSOR_PRINTED.search(text[:at])) else None
    )
    if printed and not _TORCH_SAYS.search(text):
        # printing a CUDA tensor runs torch's kernels on the device (its formatter's isfinite/ne/masked_select): torch's
        # build has this GPU's code, so the kernel that failed beside it is another package's, whatever torch call the
        # asynchronous error surfaced in (b101-07: torch.arange printed, then torch_scatter's scatter_mul failed and the
        # next torch.arange reported it); readers/issue.py pasted.cuda_tensor_printed
        return "other", f"torch's own kernels ran on this GPU (the report prints a CUDA tensor: {printed[:120]})", said
    why = _torch_raised(text, at)
    if why:
        return "torch", why, said
    archs, source, devices = _build_and_devices(fx, said)
    if archs and devices:
        verdicts = [bool(arch_runs(c, archs)) for g in devices for c in _candidates(g)]
        if verdicts and all(verdicts):
            return "other", f"torch's build ({source}) has kernels for every GPU here", said
        if verdicts and not any(verdicts):
            return "torch", f"torch's build ({source}) has no kernels for the GPU", said
    lists = _release_lists(fx) if not archs else []
    caps_here = [c for g in devices for c in _candidates(g)]
    if lists and caps_here:  # the release is known, its CUDA variant not: every variant's list gives one verdict
        runs = [bool(arch_runs(c, a)) for a in lists for c in caps_here]
        if all(runs):
            return "other", f"every CUDA build of torch {torch_release(fx)} has kernels for this GPU", said
        if not any(runs):
            return "torch", f"no CUDA build of torch {torch_release(fx)} has kernels for this GPU", said
    if devices and torch_unknown(fx):
        caps = [c for g in devices for c in _candidates(g)]
        if caps and all(every_build_runs(c) for c in caps):
            return "other", "every official torch build has kernels for this GPU", said
    other = _other_raised(fx, text, said[1], at)
    if other:
        return "other", other, said
    if torch_unknown(fx) and not any(_candidates(g) for g in devices):
        return "unknown", "neither the torch build nor the GPU's capability is known, and the text names no other kernel", said
    if torch_unknown(fx) and not torch_named(fx, text) and any(_dropped_by_some_current_builds(c) for c in caps_here):
        return (
            "unknown",
            "the torch build is not shown, and the newest torch release still has kernels for this GPU in some of its CUDA "
            "variants (only the newer-CUDA ones dropped it): a package's kernels are as likely",
            said,
        )
    return None


def torch_named(fx: Facts, text: str) -> bool:
    """Whether the report names torch at all: in ``text`` (its error text) or anywhere in the paste, title and prose
    included (readers/issue.py pasted.programs)."""
    return bool((fx.dict("pasted.programs") or {}).get("torch")) or bool(program_patterns()[2].search(text))


@functools.lru_cache(maxsize=64)
def _dropped_by_some_current_builds(cap: str) -> bool:
    """An older GPU that official torch builds have covered and later builds dropped as too old (Kepler, Maxwell, Pascal,
    Volta: kb/torch_arch_lists.json): without the torch build shown, 'no kernel image' on it is not known to be torch's,
    since the torch in use may be one that covers it. Not a GPU newer than some builds (those lack it as too new: an old
    torch is the usual cause there)."""
    builds = kb()._load("torch_arch_lists")["builds"]
    lists = [list(a) for rows in builds.values() for a in rows.values() if a]
    runs = [bool(arch_runs(cap, a)) for a in lists]
    if not (any(runs) and not all(runs)):
        return False
    number = cap_number(cap) or 0
    lacking = [a for a, r in zip(lists, runs) if not r]
    return all(number < min((arch_number(x) or 999) for x in a) for a in lacking)  # dropped as too old, not too new


def _text_cap(text: str) -> Optional[str]:
    m = re.search(r"capability sm_(\d+)(\d)\b", text) or re.search(r"cuda capability (\d+)\.(\d+)", text, re.IGNORECASE)
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def _text_archs(text: str) -> Optional[List[str]]:
    m = re.search(r"supports CUDA capabilities ((?:(?:sm|compute)_\d+\w*\s*)+)", text)
    return m.group(1).split() if m else None


def _oldest_ever() -> str:
    """The lowest compute capability any official PyTorch binary was built for (kb/torch_arch_lists.json)."""
    return str(kb()._load("torch_arch_lists").get("oldest_binary_capability") or "0.0")


def _newest_min() -> int:
    """The lowest architecture any variant of the newest known release still ships (e.g. 75)."""
    newest = kb().newest_release()
    lows = []
    for v in (kb().torch_release(newest) or {}).get("variants", []):
        a = kb().arch_list(newest, v)
        if a:
            lows += [n for n in (arch_number(x) for x in a["sass"] + a["ptx"]) if n]
    return min(lows) if lows else 0


def every_build_runs(cap: Optional[str]) -> bool:
    """Does a GPU of ``cap`` run every official torch wheel the kb knows (every release, every CUDA variant)?
    True for Turing (7.5: sm_70 SASS runs on it, and no build dropped both); False where some build lacks it."""
    if not cap:
        return False
    builds = kb()._load("torch_arch_lists")["builds"]
    lists = [archs for rows in builds.values() for archs in rows.values()]
    return bool(lists) and all(arch_runs(cap, list(a)) for a in lists)


def torch_unknown(fx: Facts) -> bool:
    """Nothing about the torch build is known: no version, no CUDA variant, no arch list."""
    return not (torch_version(fx) or variant(fx) or fx.list("torch.arch_list"))


def any_build_gpu(fx: Facts, devices: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """With the torch build unknown: the GPU every official build has kernels for (a 'no kernel image' is not torch's)."""
    if not devices or not torch_unknown(fx):
        return None
    return devices[0] if all(every_build_runs(g.get("capability")) for g in devices) else None


def _build_and_devices(fx: Facts, said: Optional[Tuple[str, str]]):
    """(archs, source, devices): the build's arch list and the GPUs, from the facts, else the error text."""
    archs, source = build_arch_list(fx)
    archs_text = _text_archs(said[1]) if said else None
    if archs_text and source != "torch.cuda.get_arch_list()":
        archs, source = archs_text, "the error message"  # the running build's own list beats the kb's for its release
    devices = gpus(fx)
    if said and not devices and _text_cap(said[1]):
        devices = [{"index": 0, "name": None, "capability": _text_cap(said[1]), "capability_source": "the error message"}]
    lone = _lone_arch(text_of(fx)) if archs and not devices and not said else None
    if lone:
        devices = [{"index": 0, "name": None, "capability": lone, "capability_source": "the text (the one sm_ it names)"}]
    return archs, source, devices


#: An architecture named in the text: sm_70 / sm70 / SM 7.0, not inside a compiler flag or a list of them.
_ARCH_WORD = re.compile(r"(?<![\w=,;-])sm[_ ]?(\d{1,2})(\d)(?![\d.])(?!\s*[,;]\s*sm)", re.I)
_FLAG_CONTEXT = re.compile(r"(?:gencode|code=|arch=|gpu-name|ARCH_LIST|CUDA_ARCHITECTURES)[^\n]{0,40}$", re.I)


def _lone_arch(text: str) -> Optional[str]:
    """The one GPU architecture a text names outside flags and lists (as '7.0'), None for none or several."""
    caps = {f"{int(m.group(1))}.{m.group(2)}" for m in _ARCH_WORD.finditer(text) if not _FLAG_CONTEXT.search(text[: m.start()])}
    return caps.pop() if len(caps) == 1 else None


def _kernel_error(fx: Facts, g: Dict[str, Any]) -> Optional[str]:
    """The live test kernel's 'no kernel image' error on this GPU, if it ran and failed."""
    err = None
    for d in fx.dicts("torch.devices"):
        if (
            d.get("index") == g.get("index")
            and d.get("kernel_ok") is False
            and "no kernel image" in str(d.get("kernel_error") or "")
        ):
            err = str(d.get("kernel_error"))
    return err


def _classify(
    fx: Facts, devices: List[Dict[str, Any]], archs: Optional[List[str]], source: Optional[str], bound: Optional[List[str]] = None
):
    """(bad, unknown): GPUs the build has no kernels for (with why), and GPUs that could not be checked.
    With the build's own list unknown, ``bound`` (what any build with its CUDA has) still rules out a GPU
    newer than all of it."""
    bad, unknown = [], []
    for g in devices:
        cands = _candidates(g)
        if not g.get("capability") and cands:  # an ambiguous name: one verdict only if every chip gives it
            if archs and not any(arch_runs(c, archs) for c in cands):
                bad.append((_as_candidate(g, cands), f"{source}: {' '.join(archs)}"))
            elif not archs and not any(kb().releases_with_arch(c) for c in cands):
                bad.append((_as_candidate(g, cands), "no official build in the kb (torch 1.7 onward) runs it"))
            else:
                unknown.append(g)
            continue
        cap = g.get("capability")
        kernel_err = _kernel_error(fx, g)
        if kernel_err:
            bad.append((g, "the test kernel: " + kernel_err[:200]))
        elif cap and (cap_number(cap) or 99) < (cap_number(_oldest_ever()) or 0):
            bad.append((g, f"no PyTorch binary was ever built for compute capability below {_oldest_ever()}"))
        elif cap and not archs and newer_than_all(cap, bound):
            bad.append((g, "bound"))
        elif not cap or not archs:
            unknown.append(g)
        elif arch_runs(cap, archs) is None:
            bad.append((g, f"{source}: {' '.join(archs)}"))
    return bad, unknown


def _as_candidate(g: Dict[str, Any], cands: List[str]) -> Dict[str, Any]:
    """An ambiguously named GPU as the finding shows it: its newest candidate capability, every one named."""
    best = max(cands, key=lambda c: cap_number(c) or 0)
    return {
        **g,
        "name": f"{g.get('name') or 'the GPU'} (compute capability {' or '.join(cands)}, by its name)",
        "capability": best,
        "capability_source": "kb (by GPU name; every chip sold under it)",
    }


def _too_old_for_every_build(fx: Facts, devices: List[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], str]]:
    """With the torch build unknown: GPUs no official build in the kb (torch 1.7 onward) has kernels for."""
    if not torch_unknown(fx):
        return []
    out = []
    for g in devices:
        cands = _candidates(g)
        if g.get("capability") and cands and not any(kb().releases_with_arch(c) for c in cands):
            out.append((g, "no official build in the kb (torch 1.7 onward) runs it"))
    return out


#: A CUDA failure at the first kernels torch runs, in the words cuDNN, cuBLAS and the runtime use when a build has no
#: code for the GPU (cuDNN/cuBLAS cannot initialise or execute there; "invalid device function" is CUDA before 11's
#: "no kernel image"). Read only where torch's own "no kernel image" / "not compatible" words are absent. NOT_SUPPORTED
#: is left out: it is a data type or an operation the GPU lacks far more often (bf16 on Maxwell).
_FIRST_KERNEL_FAILED = re.compile(
    r"CUDNN_STATUS_(?:NOT_INITIALIZED|EXECUTION_FAILED|ARCH_MISMATCH)"
    r"|CUBLAS_STATUS_(?:NOT_INITIALIZED|EXECUTION_FAILED|ARCH_MISMATCH)|invalid device function",
    re.I,
)
#: A data type the GPU may lack named beside the failure (bf16 below Ampere: gpu-lacks-bf16), not an architecture.
_DTYPE_NAMED = re.compile(r"\bbf16\b|bfloat16|\bfp8\b|float8", re.I)


def _only_older_builds_run(fx: Facts, devices: List[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], str]]:
    """With the torch build unknown and its first kernels failing (cuDNN/cuBLAS statuses, "invalid device function"):
    GPUs that older official builds run but no variant of the newest release does (a K80, sm_37; a Maxwell card once
    its architecture is dropped). A program that installs the current torch for them (a web UI's update, a fresh
    environment) gets one without their kernels: a hypothesis from the GPU's name and the kb's tables."""
    text = text_of(fx)
    if not torch_unknown(fx) or fx.bool("torch.cuda_available") is True or not _FIRST_KERNEL_FAILED.search(text):
        return []
    if _DTYPE_NAMED.search(text):
        return []
    newest = kb().newest_release()
    lists = [a for a in (kb().arch_list(newest, v) for v in (kb().torch_release(newest) or {}).get("variants", [])) if a]
    out = []
    for g in devices:
        cap = g.get("capability")
        older = kb().releases_with_arch(cap) if cap else None
        if not lists or not older or any(arch_runs(cap, a) for a in lists):
            return []
        last = max(older, key=lambda r: _release_key(r[0]))
        out.append((g, f"torch {last[0]} ({last[1]}) is the newest official build with kernels for it; torch {newest} has none"))
    return out


#: The program side named: torch, Python, pip/conda, a wheel.
_PROGRAM_SIDE = re.compile(r"torch|python|\bpip3?\b|\bconda\b|\.whl\b", re.I)
#: What a program that reached the GPU reports: its memory allocated, used or exhausted, or a job that hung there. A build
#: without kernels for the GPU fails at the first kernel with "no kernel image" instead (b154: CI runners' B200s held
#: by orphaned servers).
_RAN_ON_GPU = re.compile(
    r"out of memory|\bOOM\b|\d+(?:\.\d+)?\s*[GM]i?B\s+(?:used|in use|allocated|occupied)\b|memory (?:usage|held|occupied)"
    r"|\b(?:hung|hangs)\b|zombie|orphan(?:ed)? (?:GPU )?(?:process|server)",
    re.I,
)
#: The driver side named as the trouble: the kernel module's flavour, DKMS/modprobe/nouveau, nvidia-smi finding none.
_DRIVER_SIDE = re.compile(
    r"nvidia-open|open kernel modules?|kernel-module-type|No devices were found|\bdkms\b|\bmodprobe\b|\bnouveau\b", re.I
)


def _only_newest_builds_run(fx: Facts, devices: List[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], str]]:
    """With the torch build unknown and nothing showing CUDA working: GPUs that only a small share (under a third)
    of the official builds in the kb run, the newest ones (Blackwell: torch 2.7 with CUDA 12.8 on). A program that
    bundles or pins its torch ("UVR5", a webui's installer, an old requirements file) most likely ships one from
    before them: a hypothesis from the GPU's name and the kb's tables, confirmed by torch's own arch list."""
    if not torch_unknown(fx) or fx.bool("torch.cuda_available") is True or fx.dicts("torch.devices"):
        return []
    linux_host = os_known(fx) and os_key(fx) == "linux" and not is_wsl(fx)
    if linux_host and container(fx) in (None, "none") and not _PROGRAM_SIDE.search(text_of(fx)):
        return []  # a Linux host where only the driver is spoken of: its kernel-module flavour comes first
    if fx.int("nvml.device_count") == 0 or _DRIVER_SIDE.search(text_of(fx)):
        return []  # the driver does not serve the GPU (or its module is the subject): not yet a question of torch
    if _RAN_ON_GPU.search(text_of(fx)):
        return []  # memory was allocated on the GPU or a job ran there until it hung: CUDA served it, no missing kernels
    builds = kb()._load("torch_arch_lists")["builds"]
    total = sum(len(rows) for rows in builds.values())
    out = []
    for g in devices:
        cands = _candidates(g)
        runs = max((len(kb().releases_with_arch(c) or []) for c in cands), default=0) if cands else 0
        if g.get("capability") and total and 0 < runs * 3 < total:
            first = min(kb().releases_with_arch(cands[0]) or [("?", "?")], key=lambda r: _release_key(r[0]))
            out.append((g, f"only torch {first[0]} ({first[1]}) and newer run it ({runs} of the kb's {total} builds)"))
    return out if len(out) == len(devices) else []


#: The user's own words that the GPU or its architecture is not supported by what was installed: a not-supported /
#: too-old / no-longer / incompatible phrase in one sentence with an architecture entity (sm_XX, a compute or CUDA
#: capability, a wheel's CUDA variant cuXYZ, an architecture family, a GPU series). nvcc's "Unsupported gpu
#: architecture 'compute_XX'" (toolkit-arch-unsupported) names none of these entities.
_NOT_SUPPORTED = (
    r"(?:(?:does|do|did|is|are|was|were|has|have)[ \t]*(?:n['’]?t|not)[ \t]+(?:\w+[ \t]+){0,2}?(?:support|compatible|work)"
    r"|no longer (?:\w+[ \t]+)?(?:support|work)|not (?:be )?(?:supported|compatible)|unsupported|incompatib\w+|不支持|不兼容"
    r"|drop(?:s|ped)\b|drop(?:ping)?\s+(?=support|Kepler|Maxwell|Pascal|Volta|sm_?\d)|removed support|too old|stopped working)"
)
_ARCH_ENTITY = (
    r"(?:\bsm_?\d{2,3}\b|\b(?:compute|cuda) capabilit\w*|\bcc\s?\d\.\d\b|\bcu1\d{2}\b"
    r"|\b(?:Kepler|Maxwell|Pascal|Volta|Blackwell)\b|\b(?:[GR]TX\s*)?(?:9|10|16|20|30|40|50)(?:\s?[x0]0?|\s?xx)?[\s-]?series\b"
    r"|\b(?:[GR]TX\s*)?(?:10|16|20|30|40|50)xx\b"
    # Chinese: "50系显卡", "40系列" (the N0 series)
    r"|(?<![0-9])(?:[GR]TX\s*)?(?:9|10|16|20|30|40|50)\s*系)"
)
_USER_SAYS_UNSUPPORTED = re.compile(
    rf"{_NOT_SUPPORTED}[^\n.]{{0,120}}?{_ARCH_ENTITY}|{_ARCH_ENTITY}[^\n.]{{0,120}}?{_NOT_SUPPORTED}", re.I
)
#: torch (the subject) said not to support the card or GPU (the object) in one sentence: an architecture claim only where
#: the facts name the GPU and its capability (the finding checks it).
_TORCH_NOT_FOR_CARD = re.compile(rf"\b(?:py)?torch\b[^\n.]{{0,80}}?{_NOT_SUPPORTED}[^\n.]{{0,80}}?\b(?:card|gpu)s?\b", re.I)
#: Other classes' subjects in the same sentence: the driver, the toolkit's compiler, a data type, Triton.
_OTHER_SUBJECT = re.compile(
    r"driver|nvcc|compute_\d|gpu architecture|bf16|bfloat16|fp8|triton|flash.?attn|python\s*3|\bpy3\d"
    r"|but you have|\brequires \S+\s*(?:==|>=|<=|~=|<|>)",  # pip's resolver: a version conflict, not an architecture
    re.I,
)
#: The capability an architecture family or GPU series stands for (the newest of the family where it has several:
#: the finding names it as the text's, and the check only asks whether a build lacks it).
_FAMILY_CAP = {"kepler": "3.5", "maxwell": "5.2", "pascal": "6.1", "volta": "7.0", "blackwell": "12.0"}
#: GeForce series by their first digits (desktop cards; NVIDIA's compute-capability table): 9 = GTX 900 (Maxwell GM20x).
_SERIES_CAP = {"9": "5.2", "10": "6.1", "16": "7.5", "20": "7.5", "30": "8.6", "40": "8.9", "50": "12.0"}
_FAMILY_WORD = re.compile(
    r"\b(Kepler|Maxwell|Pascal|Volta|Blackwell)\b|\b(?:[GR]TX\s*)?(9|10|16|20|30|40|50)(?:(?:\s?[x0]0?|\s?xx)?[\s-]?series|xx)\b"
    r"|(?<![0-9])(?:[GR]TX\s*)?(9|10|16|20|30|40|50)\s*系",
    re.I,
)


def user_says_unsupported(text: str) -> Optional[Tuple[str, Optional[str]]]:
    """(the sentence, the capability it names or None): the text's own claim that the GPU's architecture is not
    supported by the torch installed (the user's paraphrase of torch's warning, or of the project's answer)."""
    for m in _USER_SAYS_UNSUPPORTED.finditer(text or ""):
        said = m.group(0)
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start : end if end >= 0 else len(text)]
        before = line[: m.start() - start].rsplit(". ", 1)[-1]  # the claim's sentence: from its last full stop
        after = re.split(r"(?<=[.!?])\s", line[m.start() - start :], maxsplit=1)[0]  # to its next one
        if _OTHER_SUBJECT.search(before + after):
            continue
        cap = _text_cap(said) or _text_cap(line)
        sm = None if cap else re.search(r"\bsm_?(\d{1,2})(\d)\b", said, re.I)
        cap = f"{int(sm.group(1))}.{sm.group(2)}" if sm else cap
        fam = _FAMILY_WORD.search(line)
        if not cap and fam:
            cap = _FAMILY_CAP[fam.group(1).lower()] if fam.group(1) else _SERIES_CAP[fam.group(2) or fam.group(3)]
        return line.strip()[:240], cap  # the whole line as the evidence: the claim and what it names
    card = _TORCH_NOT_FOR_CARD.search(text or "")
    return (card.group(0).strip(), None) if card and not _OTHER_SUBJECT.search(card.group(0)) else None


#: The classes whose own error messages name an architecture that is not torch's build's: their finding answers.
_OTHER_ARCH_CODES = (
    "companion-arch-unsupported",
    "ptxas-arch-unsupported",
    "toolkit-arch-unsupported",
    "gpu-lacks-bf16",
    "gpu-needs-legacy-driver",
    "profiler-unsupported-gpu",
)


def _likely(f: Finding, title: str, evidence: Dict[str, Any], *first: str) -> Finding:
    """A 'Likely' warning made from the facts' arch finding ``f``: ``title``, its evidence with ``evidence`` over it, and
    the commands ``first`` that would confirm it before ``f``'s own fix."""
    return GPU_ARCH_UNSUPPORTED.finding(
        title=title, evidence={**f.evidence, **evidence}, fix=Fix(first + tuple(f.fix.commands), f.fix.why), severity="warning"
    )


def _libraries_predate(fx: Facts) -> Optional[Finding]:
    """A warning when torch's CUDA (its build's, or the newest of an old release's wheels) predates the GPU and a CUDA
    library failed at its first calls (checks/arch22.py): cuDNN/cuBLAS of that CUDA have no kernels for it."""
    from .arch22 import predates

    cuda = torch_cuda(fx) or old_release_cuda(fx)[0]

    def fix(g: Dict[str, Any], _first: str) -> Tuple[str, ...]:
        return tuple(arch_fix(environment(fx), g.get("capability"), None, driver_version(fx), False)[0])  # a current build

    return predates(fx, GPU_ARCH_UNSUPPORTED, cuda, f"torch {torch_version(fx) or ''}".strip(), fix)


def _user_says_finding(fx: Facts, devices: List[Dict[str, Any]], archs: Optional[List[str]], source: Optional[str]):
    """A warning from the user's own words that the installed torch does not support the GPU's architecture; None when
    the facts contradict it (the GPU's capability is in the build's known arch list) or the text does not say so."""
    from cudadoctor.errortext import of_facts

    ev = of_facts(fx)  # the classes' own messages are kb/errors wordings (their modules import this one)
    if any(ev.first(code) for code in _OTHER_ARCH_CODES):
        return None  # the text shows another architecture class's own error: that code answers it
    said = user_says_unsupported(text_of(fx))
    if not said or program_not_torch(fx):
        return None  # no such words, or they are about another program (LM Studio, Ollama...): not torch's build
    quote, text_cap = said
    g = next((d for d in devices if d.get("capability")), None)
    if g is None and _TORCH_NOT_FOR_CARD.fullmatch(quote):
        return None  # "torch does not support my card" with no GPU of known capability: nothing to check it against
    if g is None and text_cap:
        g = {"index": 0, "name": None, "capability": text_cap, "capability_source": "the text (" + quote[:80] + ")"}
    if g is None:
        g = devices[0] if devices else {"index": 0, "name": None, "capability": None, "capability_source": None}
    if g.get("capability") and archs and arch_runs(g["capability"], archs):
        return None  # the build the facts name has kernels for this GPU: the claim is about something else
    return _likely(
        _arch_finding(fx, g, archs, source, None),
        f"Likely: the torch installed has no kernels for {g.get('name') or 'the GPU'}"
        + (f" (sm_{g['capability'].replace('.', '')})" if g.get("capability") else "")
        + ", as the report says; the torch build "
        + (f"is {torch_version(fx)}" if torch_version(fx) else "is not stated"),
        {"text_says": quote[:240]},
        'python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list(), '
        "torch.cuda.get_device_capability())\"  # in the program's own Python: the GPU's sm_XY must be in the list",
    )


def _release_key(v: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _unknown_list_finding(fx: Facts, unknown: List[Dict[str, Any]]) -> Optional[Finding]:
    """A GPU of known capability but no arch list to check it against (torch did not run a kernel)."""
    kernels_ran = any(d.get("kernel_ok") is True for d in fx.dicts("torch.devices"))
    if not unknown or kernels_ran or not torch_version(fx) or fx.str("torch.status") == "import-failed":
        return None
    g = next((g for g in unknown if g.get("capability")), None)
    if g is None:
        return None
    return GPU_ARCH_UNSUPPORTED.finding(
        title=f"Could not check torch {torch_version(fx)} against {g.get('name') or 'the GPU'} "
        f"(sm_{g['capability'].replace('.', '')}): the build's architecture list is unknown",
        evidence={"torch.version": torch_version(fx), "gpu": g.get("name"), "capability": g.get("capability")},
        fix=Fix(
            ('python -c "import torch; print(torch.cuda.get_arch_list())"',),
            "The build must list an sm_ entry with the GPU's major version and an equal or lower minor.",
        ),
        severity="info",
    )


def _arch_finding(
    fx: Facts, g: Dict[str, Any], archs: Optional[List[str]], source: Optional[str], said: Optional[Tuple[str, str]]
) -> Finding:
    """The finding for one GPU the build has no kernels for, with the release/variant that has them."""
    cap = g.get("capability")
    sm = f"sm_{cap.replace('.', '')}" if cap else "its architecture"
    ver, driver = torch_version(fx), driver_version(fx)
    evidence = {
        "gpu": g.get("name"),
        "capability": cap,
        "capability_source": g.get("capability_source"),
        "torch.version": ver,
        "build_archs": archs,
        "build_archs_source": source,
        "nvml.driver_version": driver,
    }
    if said:
        evidence[said[0]] = said[1]
    nums = [n for n in (arch_number(a) for a in archs or []) if n]
    capn = cap_number(cap) if cap else None
    too_old = bool(capn and ((nums and capn < min(nums)) or (not nums and capn < _newest_min())))
    cmds, why = arch_fix(environment(fx), cap, torch_release(fx), driver, too_old)
    if capn and capn < (cap_number(_oldest_ever()) or 0):  # Tesla/Fermi: nothing to install or build will run
        cmds = [
            f"# no PyTorch release, and no build from source with a CUDA toolkit PyTorch supports, runs on {sm}",
            "# use a GPU of compute capability 5.0 or newer (current wheels: 7.5+), or run on the CPU:",
            "python -m pip install --force-reinstall "
            + " ".join(["torch"] + [n for n in ("torchvision", "torchaudio") if fx.distribution(n)])  # one build for all
            + " --index-url https://download.pytorch.org/whl/cpu",
        ]
        why = f"PyTorch's builds start at compute capability {_oldest_ever()}; CUDA itself dropped 1.x in 7.0 and 2.x in 9.0."
    title = (
        f"{g.get('name') or 'The GPU'}{(' (' + sm + ')') if cap else ''} has no kernels in "
        + (f"torch {ver}" if ver else "this torch build")
        + (_built_for(archs, source) if archs else "")
        + (": the GPU is too old for this build" if too_old else "")
    )
    if cap and archs and arch_runs(cap, archs):  # torch's own operation failed although the named build has kernels
        title = (
            f"torch's own operation found no kernel for {g.get('name') or 'the GPU'} ({sm}), although torch "
            f"{ver or ''}{_built_for(archs, source)} has them: the torch that ran is another build"
        )
        cmds = [
            'python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list())"  # in the failing environment'
        ] + list(cmds)
    return GPU_ARCH_UNSUPPORTED.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why))


def _built_for(archs: List[str], source: Optional[str]) -> str:
    if source and source.startswith("kb: every official"):  # the bound from the CUDA version alone
        sass = [a for a in archs if a.startswith("sm_")] or archs
        return f" (no official build with its CUDA {torch_cuda_of(source)} has it: they stop at {sass[-1]})"
    return f" (built for {archs[0]}…{archs[-1]})"


def torch_cuda_of(source: str) -> str:
    return source.rsplit("CUDA ", 1)[-1]


#: The entrypoint of NVIDIA's NGC images (kb/errors/prose13.json) refusing the GPU: "not yet supported in this version"
#: for a GPU newer than the image, "not supported by this container" for one older than it supports.
_NGC_REFUSES = re.compile(
    r"Detected NVIDIA\s+(?:NVIDIA\s+)?(?P<gpu>[^\n]{1,80}?)\s+GPU,? which is not (?P<yet>yet )?supported (?:in|by) this",
    re.I,
)


def _ngc_finding(fx: Facts, said: Tuple[str, str], m: "re.Match[str]") -> Finding:
    gpu = re.sub(r"^(?:NVIDIA\s+)+|\s+GPU$", "", m.group("gpu").strip())
    if re.fullmatch(r"Graphics Device|Device [0-9a-f]{4}", gpu, re.I):  # a driver too old to name the GPU
        gpu = next((str(g["name"]) for g in gpus(fx) if g.get("name")), gpu)
    newer = bool(m.group("yet"))
    title = (
        f"The NGC container image predates the {gpu}: its CUDA, cuDNN, TensorRT and framework builds have no code for "
        "this GPU's architecture (the image's entrypoint refuses it)"
        if newer
        else f"The NGC container image no longer supports the {gpu}: its builds start above this GPU's architecture"
    )
    cmds = (
        "docker image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' IMAGE | grep -E 'CUDA_VERSION|NVIDIA_.*VERSION'  # the image's CUDA and NGC release (the start banner says 'NVIDIA Release YY.MM')",
        "# the NGC Frameworks Support Matrix lists, per release, the CUDA and the GPU architectures it supports:",
        "#   https://docs.nvidia.com/deeplearning/frameworks/support-matrix/index.html",
        (
            "# use a later release of the image (FROM nvcr.io/nvidia/<pytorch|tensorrt|tritonserver>:<YY.MM>-py3) that "
            "supports this GPU; models compiled by one TensorRT release must be rebuilt with the new one"
            if newer
            else "# use an earlier release of the image that still supports this GPU (and a driver that runs its CUDA)"
        ),
    )
    return GPU_ARCH_UNSUPPORTED.finding(
        title=title,
        evidence={said[0]: said[1], "gpu": gpu},
        fix=Fix(cmds, "Each NGC release is built for the GPU architectures of its CUDA release; its entrypoint checks the GPU."),
    )


#: Faults that only a kernel running on the GPU raises (cuda.h / driver_types.h: 700 illegal address, 715 illegal
#: instruction, 716 misaligned address, 719 launch failure; torch's device-side assert): code for this GPU existed.
_KERNEL_RAN = re.compile(
    r"CUDA_ERROR_(?:ILLEGAL_ADDRESS|MISALIGNED_ADDRESS|ILLEGAL_INSTRUCTION|LAUNCH_FAILED)|cudaError(?:IllegalAddress|"
    r"MisalignedAddress|IllegalInstruction|LaunchFailure)|an illegal memory access was encountered|misaligned address|"
    r"unspecified launch failure|device-side assert triggered",
    re.I,
)


_NVRTC_ARCH = re.compile(r"nvrtc: error: invalid value for --gpu-architecture \(-arch\)")


def nvrtc_of_other_program(fx: Facts) -> Optional[Tuple[str, str]]:
    """(program, line) when NVRTC refused the GPU's architecture in a report that names a program with its own CUDA code
    (OpenMM, CuPy...: kb/errors/b19.json other_frameworks, b20.json own_kernel_programs) and never torch: the NVRTC
    is that program's CUDA toolkit's, too new (or too old) for the GPU (toolkit-arch-unsupported), not torch's build."""
    said = error_match(fx, GPU_ARCH_UNSUPPORTED)
    if not said or not _NVRTC_ARCH.search(said[1]):
        return None
    prog = program_not_torch(fx)
    return (prog, said[1]) if prog else None


def program_not_torch(fx: Facts) -> Optional[str]:
    """The program a pasted report is about when it names one with its own CUDA code or framework (readers/issue.py
    pasted.programs: kb/errors/b19.json other_frameworks, b20.json own_kernel_programs) and names torch nowhere, and
    nothing about a torch build is known: an architecture the report says is unsupported is that program's."""
    if not torch_unknown(fx) or torch_named(fx, text_of(fx)):
        return None
    names = (fx.dict("pasted.programs") or {}).get("names") or []
    return str(names[0]) if names else None


def _other_code_explains(fx: Facts) -> bool:
    """The error text matches another code's wording (kb/errors), none of this code's: that code is the lead."""
    from cudadoctor.errortext import of_facts

    codes = set(of_facts(fx).matches)
    return bool(codes) and "gpu-arch-unsupported" not in codes and "companion-arch-unsupported" not in codes


@check(GPU_ARCH_UNSUPPORTED)
def gpu_arch_unsupported(fx: Facts) -> Iterator[Finding]:
    """Each GPU's capability against the build's arch list (live list first, else the kb's)."""
    if is_cuda_build(fx) is False:
        return
    said = error_match(fx, GPU_ARCH_UNSUPPORTED)
    if said and nvrtc_of_other_program(fx):
        return  # another program's NVRTC, its CUDA toolkit's (toolkit-arch-unsupported, checks/text_classes.py)
    ngc = _NGC_REFUSES.search(said[1]) if said else None
    if said and ngc:
        yield _ngc_finding(fx, said, ngc)
        return
    if torch_unknown(fx) and not torch_named(fx, text_of(fx)):
        if companion_below_minimum(fx):
            return  # a program that is not torch names its own GPU floor (companion-arch-unsupported): PG-Strom, vLLM...
    archs, source, devices = _build_and_devices(fx, said)
    bound, bound_source = arch_bound(fx) if not archs else (None, None)
    bad, unknown = _classify(fx, devices, archs, source, bound)
    lists = _release_lists(fx) if not archs and not bad else []
    for g in unknown if lists else []:  # the release known, its CUDA variant not: no variant of it runs the GPU
        if g.get("capability") and not any(arch_runs(g["capability"], a) for a in lists):
            archs = sorted({x for a in lists for x in a}, key=lambda x: (arch_number(x) or 0, x))
            source = f"kb: every CUDA build of torch {torch_release(fx)} (its CUDA variant not stated)"
            bad.append((g, source))
    if any(why == "bound" for _g, why in bad):
        archs, source = bound, bound_source  # partial facts: the CUDA the build was made with is the evidence
    if not bad and not said:
        if torch_unknown(fx) and cpu_build_in_text(fx):
            return  # the text names a CPU-only torch: it has no CUDA kernels at all, so no arch is the reason (cpu-only-torch)
        ran = _KERNEL_RAN.search(text_of(fx))  # a kernel ran on this GPU and faulted: its architecture was served
        bad = [] if ran else _too_old_for_every_build(fx, devices)  # the torch a user installs today has no kernels for it
        # not where another cause's wording explains the error: a new GPU named beside an error of another kind (b239:
        # NVML's unsupported memory query on DGX Spark's GB10 in device-plugin reports) says nothing of a torch build
        explained = _other_code_explains(fx)
        newest_only = [] if bad or ran or explained else _only_newest_builds_run(fx, devices)
        older_only = [] if bad or ran or newest_only else _only_older_builds_run(fx, devices)
    owner = kernel_owner(fx) if not bad else None
    if owner and owner[0] == "other":
        return  # another package's or program's kernel lacks the architecture (companion-arch-unsupported)
    if not bad and said:
        g = devices[0] if devices else {"index": 0, "name": None, "capability": _text_cap(said[1]), "capability_source": None}
        cap = g.get("capability")
        torch_says = _TORCH_SAYS.search(said[1])  # torch's own verdict on this GPU (it counts sm_ entries, not PTX)
        if isinstance(cap, str) and arch_runs(cap, archs) and not torch_says and not torch_op_failed(text_of(fx)):
            return  # torch has kernels for this GPU: a separately built package lacks them (companion-arch-unsupported)
        bad.append((g, said[1]))  # the error itself is the evidence; name the GPU when the facts know one
    if not bad and not said and newest_only:
        g, why = newest_only[0]
        yield _likely(
            _arch_finding(fx, g, archs, source, said),
            f"Likely: {g.get('name') or 'the GPU'} (compute capability {g.get('capability')}) runs only with the "
            "newest PyTorch builds, and the torch in use is not stated: a program bundling or pinning an older torch "
            "cannot use it",
            {"why_likely": why},
            'python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list())"  # the GPU\'s sm_XY '
            "must be in the list (in the program's own Python)",
        )
        return
    if not bad and not said and older_only:
        g, why = older_only[0]
        yield _likely(
            _arch_finding(fx, g, archs, source, said),
            f"Likely: {g.get('name') or 'the GPU'} (compute capability {g.get('capability')}) has no kernels in "
            "current PyTorch builds, and the torch in use is not stated: its first CUDA kernels fail",
            {"why_likely": why},
            'python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list())"  # the GPU\'s sm_XY '
            "must be in the list (in the program's own Python)",
        )
        return
    if not bad and not said:
        late = None if _KERNEL_RAN.search(text_of(fx)) else _libraries_predate(fx)
        if late:
            yield late
            return
        claim = _user_says_finding(fx, devices, archs, source)
        if claim:
            yield claim
            return
    if not bad:
        info = _unknown_list_finding(fx, unknown)
        if info:
            yield info
        return
    for g, _why_bad in bad[:1] + [b for b in bad[1:] if b[0].get("capability") != bad[0][0].get("capability")]:
        f = _arch_finding(fx, g, archs, source, said)
        if _why_bad.startswith("no official build in the kb") and not said:  # torch unknown: what any wheel lacks
            f = GPU_ARCH_UNSUPPORTED.finding(
                title=f"{g.get('name') or 'The GPU'} has no kernels in any official PyTorch wheel from torch 1.7 on "
                "(the installed torch is not stated): PyTorch cannot use this GPU",
                evidence={**f.evidence, "build_archs_source": "kb/torch_arch_lists.json (every release and CUDA variant)"},
                fix=f.fix,
                severity="warning",
            )
        if str(g.get("capability_source") or "").startswith("the text"):  # the GPU's arch only as the text names it
            f = GPU_ARCH_UNSUPPORTED.finding(title=f.title, evidence=f.evidence, fix=f.fix, severity="warning")
        if owner and owner[0] == "unknown":  # a hypothesis: which kernel lacked the image is not shown
            cap = g.get("capability")
            known = f"{g.get('name') or 'this GPU'}" + (f" (sm_{str(cap).replace('.', '')})" if cap else "")
            f = _likely(
                f,
                (
                    f"Likely: the torch in use has no kernels for {known}: its build is not shown and later official "
                    "builds dropped this GPU (a separately compiled package's kernels are the other possibility)"
                    if cap
                    else "Likely: this torch build has no kernels for the GPU's architecture (unknown: the torch "
                    "build and the GPU; a separately compiled package's kernels are the other possibility)"
                ),
                {"torch.version": None, "gpu": g.get("name") if cap else None, "why_likely": owner[1]},
                'python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list(), '
                "torch.cuda.get_device_capability())\"  # the GPU's sm_XY must be in the list",
                "python -c \"import torch; print(torch.ones(1, device='cuda') + 1)\"  # works: the failing kernel is "
                "another package's (rebuild it with TORCH_CUDA_ARCH_LIST)",
            )
        yield f


def register():
    return [gpu_arch_unsupported]
