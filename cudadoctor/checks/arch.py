"""Does the torch build contain kernels (SASS or compatible PTX) for each GPU's compute capability?

Code: gpu-arch-unsupported.
"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from cudadoctor.facts import Facts
from cudadoctor.interpret import (environment, arch_number, build_arch_list, cap_number, driver_os, driver_version, gpus,
                                  is_cuda_build, mm, torch_release, torch_version)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import INDEX, PIP, any_of, find_text, kb
from ._fixes import install_commands, newest_patch, python_rejected

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
        "launch fails with \"CUDA error: no kernel image is available for execution on the "
        "device\", and torch warns \"... with CUDA capability sm_120 is not compatible with the "
        "current PyTorch installation\".",
        "confirm": "`python -c \"import torch; print(torch.cuda.get_device_capability(), "
        "torch.cuda.get_arch_list())\"`: the capability (e.g. (12, 0)) has no matching sm_ entry.",
        "fix": "Install a release/variant whose wheel includes the architecture (the finding names "
        "the newest one your driver runs); for GPUs dropped from every current wheel, use the last "
        "release that still shipped them or build PyTorch from source with TORCH_CUDA_ARCH_LIST.",
    },
    links=("https://developer.nvidia.com/cuda-gpus",
           "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility",
           "https://pytorch.org/get-started/locally/",
           "https://github.com/pytorch/pytorch/issues/150733"),
    signatures=(r"no kernel image is available for execution on the device",
                r"CUDA capability sm_\d+ is not compatible with the current PyTorch installation",
                r"which is of cuda capability \d+\.\d+\.?\s+PyTorch no longer supports this GPU because it is too old",
                r"cudaErrorNoKernelImageForDevice",
                r"invalid device function"),
)


def _text_cap(text: str) -> Optional[str]:
    m = re.search(r"capability sm_(\d+)(\d)\b", text) or re.search(r"cuda capability (\d+)\.(\d+)", text, re.IGNORECASE)
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


def _text_archs(text: str) -> Optional[List[str]]:
    m = re.search(r"supports CUDA capabilities ((?:(?:sm|compute)_\d+\w*\s*)+)", text)
    return m.group(1).split() if m else None


def _candidates(cap: str, driver: Optional[str], os_name: str, python: Optional[str], release: Optional[str]) -> List[Tuple[str, str]]:
    """(series, variant) whose official wheel runs on `cap`, filtered by driver and Python; this release first."""
    k = kb()
    if not k:
        return []
    try:
        pairs = list(k.releases_with_arch(cap))
    except Exception:
        return []
    out = []
    for series, var in pairs:
        if driver:
            try:
                if k.driver_supports_cuda(driver, k.cuda_of_variant(var), os_name) is False:
                    continue
            except Exception:
                pass
        if python_rejected(series, python):
            continue
        out.append((series, var))
    if release:
        same = [p for p in out if mm(p[0]) == mm(release)]
        out = same + [p for p in out if p not in same]
    return out


def _newest_min() -> int:
    """The lowest architecture any variant of the newest known release still ships (e.g. 75)."""
    k = kb()
    if not k:
        return 0
    try:
        newest = k.newest_release()
        info = k.torch_release(newest) or {}
        lows = []
        for v in info.get("variants", []):
            a = k.arch_list(newest, v)
            if a:
                lows += [n for n in (arch_number(x) for x in a["sass"] + a["ptx"]) if n]
        return min(lows) if lows else 0
    except Exception:
        return 0


@check(GPU_ARCH_UNSUPPORTED)
def gpu_arch_unsupported(fx: Facts) -> Iterator[Finding]:
    """Each GPU's capability against the build's arch list (live list first, else the kb's)."""
    if is_cuda_build(fx) is False:
        return
    said = find_text(fx, any_of(GPU_ARCH_UNSUPPORTED.signatures))
    archs, source = build_arch_list(fx)
    if said and not archs:
        archs_text = _text_archs(said[1])
        if archs_text:
            archs, source = archs_text, "the error message"
    devices = gpus(fx)
    if said and not devices and _text_cap(said[1]):
        devices = [{"index": 0, "name": None, "capability": _text_cap(said[1]), "capability_source": "the error message"}]
    k = kb()
    bad = []
    unknown = []
    for g in devices:
        cap = g.get("capability")
        kernel_err = None
        for d in fx.dicts("torch.devices"):
            if d.get("index") == g.get("index") and d.get("kernel_ok") is False and "no kernel image" in str(d.get("kernel_error") or ""):
                kernel_err = str(d.get("kernel_error"))
        if kernel_err:
            bad.append((g, "the test kernel: " + kernel_err[:200]))
            continue
        if not cap:
            unknown.append(g)
            continue
        if archs and k:
            try:
                how = k.arch_runs(cap, archs)
            except Exception:
                how = "?"
            if how is None:
                bad.append((g, f"{source}: {' '.join(archs)}"))
        elif not archs:
            unknown.append(g)
    if not bad and said:
        g = devices[0] if devices else {"index": 0, "name": None, "capability": _text_cap(said[1]), "capability_source": None}
        cap = g.get("capability")
        runs = None
        if k and cap and archs:
            try:
                runs = k.arch_runs(cap, archs)
            except Exception:
                runs = None
        if runs:
            # torch itself has kernels for this GPU: the failing kernel belongs to something built
            # separately (a CUDA extension: flash-attn, xformers, bitsandbytes, the user's own ops).
            sm = f"sm_{cap.replace('.', '')}"
            yield GPU_ARCH_UNSUPPORTED.finding(
                title=f"torch {torch_version(fx) or ''} has kernels for {g.get('name') or 'the GPU'} ({sm}), so the "
                      f"'no kernel image' error comes from a CUDA extension built without {sm}",
                evidence={"gpu": g.get("name"), "capability": cap, "torch.version": torch_version(fx),
                          "build_archs": archs, "build_archs_source": source, said[0]: said[1]},
                fix=Fix(("# find the extension in the traceback (the module that launched the kernel), then rebuild it for this GPU:",
                         f'TORCH_CUDA_ARCH_LIST="{cap}" {PIP} install --no-build-isolation --no-cache-dir --force-reinstall <that package>',
                         "# or install a prebuilt wheel of it made for your torch, CUDA and GPU"),
                        f"torch's own build runs on {sm} ({runs}); an extension compiled for other architectures does not."),
            )
            return
        # The error itself is the evidence; name the GPU when the facts know one.
        bad.append((g, said[1]))
    if not bad:
        kernels_ran = any(d.get("kernel_ok") is True for d in fx.dicts("torch.devices"))
        if unknown and not kernels_ran and torch_version(fx) and any(g.get("capability") for g in unknown) \
                and fx.str("torch.status") != "import-failed":
            g = next(g for g in unknown if g.get("capability"))
            yield GPU_ARCH_UNSUPPORTED.finding(
                title=f"Could not check torch {torch_version(fx)} against {g.get('name') or 'the GPU'} "
                      f"(sm_{g['capability'].replace('.', '')}): the build's architecture list is unknown",
                evidence={"torch.version": torch_version(fx), "gpu": g.get("name"), "capability": g.get("capability")},
                fix=Fix(("python -c \"import torch; print(torch.cuda.get_arch_list())\"",),
                        "The build must list an sm_ entry with the GPU's major version and an equal or lower minor."),
                severity="info",
            )
        return
    release, ver = torch_release(fx), torch_version(fx)
    driver, os_name, py = driver_version(fx), driver_os(fx), fx.str("python.version")
    for g, why_bad in bad[:1] + [b for b in bad[1:] if b[0].get("capability") != bad[0][0].get("capability")]:
        cap = g.get("capability")
        sm = f"sm_{cap.replace('.', '')}" if cap else "its architecture"
        name = g.get("name") or "The GPU"
        evidence = {"gpu": g.get("name"), "capability": cap, "capability_source": g.get("capability_source"),
                    "torch.version": ver, "build_archs": archs, "build_archs_source": source,
                    "nvml.driver_version": driver}
        if said:
            evidence[said[0]] = said[1]
        nums = [n for n in (arch_number(a) for a in archs or []) if n]
        capn = cap_number(cap) if cap else None
        too_old = bool(capn and ((nums and capn < min(nums)) or (not nums and capn < _newest_min())))
        cmds: List[str] = []
        why = ""
        cands = _candidates(cap, driver, os_name, py, release) if cap else []
        if cands:
            series, v = cands[0]
            target = release if (release and mm(series) == mm(release)) else newest_patch(series)
            cmds = install_commands(environment(fx), target, v, reinstall=target == release)
            others = ", ".join(f"{s} {x}" for s, x in cands[1:4])
            why = (f"The official torch {series} {v} wheel includes kernels for {sm}"
                   + (f" and driver {driver} runs it" if driver else "") + "."
                   + (f" Also: {others}." if others else ""))
        elif cap and too_old:
            last = None
            if k:
                try:
                    last = next(iter(k.releases_with_arch(cap)), None)
                except Exception:
                    last = None
            if last:
                cmds = install_commands(environment(fx), newest_patch(last[0]), last[1])
                why = f"torch {last[0]} {last[1]} is the newest official wheel with kernels for {sm}."
            else:
                cmds = ["# No official wheel in cudadoctor's tables (torch 1.8 and later) has kernels for " + sm + ":",
                        f"# build from source for it: TORCH_CUDA_ARCH_LIST={cap} python setup.py develop  (see https://github.com/pytorch/pytorch#from-source)",
                        "# or use an older torch release that still shipped " + sm + " (see https://pytorch.org/get-started/previous-versions/)"]
                why = f"{sm} was dropped from PyTorch's official builds; only a source build or an older release has kernels for it."
        elif not cap:
            cmds = ["nvidia-smi --query-gpu=name,compute_cap --format=csv  # the GPU's capability, e.g. 12.0 = sm_120",
                    "python -c \"import torch; print(torch.__version__, torch.cuda.get_arch_list())\"  # what this build has",
                    "# then install a release/variant whose list has that sm_ (newer GPUs: the newest CUDA variant; "
                    "older GPUs: an older release): https://pytorch.org/get-started/previous-versions/"]
            why = "Every kernel launch needs SASS for the GPU's architecture or PTX it can compile."
        else:
            if driver:
                cmds = ["# No release in cudadoctor's tables has kernels for " + sm + " in a variant driver " + driver + " runs:",
                        "# upgrade the driver, then install the newest CUDA variant: https://pytorch.org/get-started/locally/"]
            else:
                cmds = [f"{PIP} install --pre torch torchvision --index-url {INDEX}nightly/cu130  # nightlies support the newest GPUs first"]
            why = f"The GPU is newer than the architectures in this build; a newer CUDA variant adds {sm}."
        if cands and not driver and k:
            try:
                need = k.min_driver_for_cuda(k.cuda_of_variant(cands[0][1]), os_name)
            except Exception:
                need = None
            if need:
                cmds.append(f"# the {cands[0][1]} build needs NVIDIA driver >= {need} (check: nvidia-smi)")
        title = (f"{name}{(' (' + sm + ')') if cap else ''} has no kernels in " + (f"torch {ver}" if ver else "this torch build")
                 + (f" (built for {archs[0]}…{archs[-1]})" if archs else "")
                 + (": the GPU is too old for this build" if too_old else ""))
        yield GPU_ARCH_UNSUPPORTED.finding(title=title, evidence=evidence, fix=Fix(tuple(cmds), why))


def register():
    return [gpu_arch_unsupported]
