"""Compiled extensions (flash-attn, xformers, mmcv, detectron2, apex, torch-scatter, triton...) against this torch and GPU.

Codes: extension-abi-mismatch, extension-build-isolation, companion-arch-unsupported, ptxas-arch-unsupported.
These read the error text through the error-text engine's signatures (cudadoctor/kb/errors/error_signatures.json)
and take the package, versions and GPU from the text and the facts.
"""

from __future__ import annotations

import dataclasses

import re
from typing import Any, Dict, Iterator, Optional, Tuple

from cudadoctor.errortext import program_patterns
from cudadoctor.facts import Facts
from cudadoctor.interpret import arch_runs, build_arch_list, cap_number, gpus, torch_cuda, torch_version
from cudadoctor.model import Code, Finding, Fix, check

from ._common import INDEX, PIP, companion_below_minimum, error_match, search, text_of
from .arch import any_build_gpu, kernel_owner, program_not_torch, torch_named, torch_op_failed, user_says_unsupported
from .profilers24 import PROFILER_UNSUPPORTED_GPU

EXTENSION_ABI_MISMATCH = Code(
    code="extension-abi-mismatch",
    title="A compiled extension was built against another torch than the one installed",
    area="packages",
    severity="error",
    explanation={
        "what": "A package with compiled code that links against torch (flash-attn, xformers, mmcv, detectron2, "
        "apex, torch-scatter, transformer-engine...) fails to load with `undefined symbol: _ZN3c10...` / "
        "`_ZN2at...`, or says it was built for another PyTorch.",
        "why": "torch's C++ API (c10, ATen) is not stable across releases, CUDA variants or C++ ABI flags: an "
        "extension compiled or downloaded for torch X cannot load in torch Y. It happens after torch is "
        "upgraded (often pulled in by another package) while the extension stays, or when a prebuilt wheel for "
        "another torch/CUDA/cxx11abi combination is installed.",
        "confirm": "`python -m pip show torch <package>`; the missing symbol names the torch function "
        "(`c++filt _ZN3c104cuda9SetDeviceEi`); the package's wheel name or `xformers.info` shows the torch it was built for.",
        "fix": "Reinstall the extension for the installed torch: a wheel built for exactly this torch version, CUDA "
        "variant and C++ ABI, or rebuild it from source with `--no-build-isolation --no-cache-dir` so it compiles "
        "against the torch in the environment. Or pin torch back to the version the extension was built for.",
    },
    links=(
        "https://github.com/Dao-AILab/flash-attention/issues/723",
        "https://github.com/facebookresearch/xformers#installing-xformers",
    ),
)

EXTENSION_BUILD_ISOLATION = Code(
    code="extension-build-isolation",
    title="pip's build isolation hides the installed torch from an extension's build",
    area="packages",
    severity="error",
    explanation={
        "what": "Installing a package that compiles against torch (flash-attn, apex, detectron2, mamba-ssm, "
        "pytorch3d...) from source fails with `No module named 'torch'` in `Getting requirements to build wheel` "
        "or `setup.py egg_info`, although torch is installed.",
        "why": "pip (and uv) build source packages in a fresh, isolated environment that has only the build "
        "requirements the package declares; its setup.py imports torch, which is not among them, so the build "
        "cannot see the torch you installed.",
        "confirm": "The traceback passes through `pip-build-env-*` / `get_requires_for_build_wheel`, and "
        '`python -c "import torch"` works in the same environment.',
        "fix": "Install the build tools into the environment, then build without isolation so the extension "
        "compiles against the installed torch: `python -m pip install --no-build-isolation <package>` "
        "(uv: `uv pip install --no-build-isolation`, or `no-build-isolation-package` in pyproject). Or install a "
        "prebuilt wheel that matches your torch.",
    },
    links=(
        "https://pip.pypa.io/en/stable/reference/build-system/#build-isolation",
        "https://github.com/Dao-AILab/flash-attention#installation-and-features",
    ),
)

COMPANION_ARCH_UNSUPPORTED = Code(
    code="companion-arch-unsupported",
    title="A companion package ships no kernels for this GPU, although torch does",
    area="packages",
    severity="error",
    explanation={
        "what": "torch itself runs on the GPU, but a package with its own CUDA kernels (flash-attn, xformers, "
        "vLLM, bitsandbytes, mamba-ssm...) was built without this GPU's architecture, or does not support it "
        "at all (FlashAttention 2 needs Ampere or newer; bf16 needs compute capability 8.0).",
        "why": "Each extension is compiled for its own list of architectures. A wheel built before a GPU "
        'generation existed, or a package that requires newer hardware, fails with "no kernel image" or an '
        "explicit capability check, while plain torch code keeps working.",
        "confirm": "`python -c \"import torch; x=torch.ones(1,device='cuda'); print(x+1, torch.cuda.get_device_capability())\"` "
        "works; the failing frame is inside the package; its docs list the GPUs it supports.",
        "fix": "Install a build of the package that includes your GPU's architecture (a newer release, or build "
        "it with `TORCH_CUDA_ARCH_LIST=<X.Y>`), or use the fallback path the application offers "
        '(e.g. `attn_implementation="sdpa"` instead of flash-attn, float16 instead of bfloat16).',
    },
    links=("https://github.com/Dao-AILab/flash-attention#installation-and-features",),
)

PTXAS_ARCH_UNSUPPORTED = Code(
    code="ptxas-arch-unsupported",
    title="Triton (torch.compile's GPU compiler) cannot compile for this GPU",
    area="packages",
    severity="error",
    explanation={
        "what": "Triton kernels (torch.compile / inductor, vLLM, unsloth...) fail to compile: the `ptxas` bundled "
        "with triton does not know the GPU's architecture (`Value 'sm_120a' is not defined for option "
        "'gpu-name'`), or the GPU is older than triton supports (compute capability below 7.0).",
        "why": "triton ships its own ptxas from a specific CUDA release; GPUs newer than that release need a newer "
        "triton or a newer ptxas. Old GPUs are outside triton's support entirely.",
        "confirm": '`python -c "import triton, torch; print(triton.__version__, torch.cuda.get_device_capability())"`; '
        "the error's `Repro command` names the bundled ptxas and the `--gpu-name`.",
        "fix": "Point triton at a CUDA toolkit's ptxas that knows the GPU (`export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas`, "
        "CUDA 12.8+ for Blackwell), or upgrade torch/triton together; on an old GPU run without torch.compile "
        "(`TORCHDYNAMO_DISABLE=1`) or with the eager backend.",
    },
    links=("https://github.com/triton-lang/triton/issues/8539", "https://github.com/vllm-project/vllm/pull/31338"),
)

_SITE = re.compile(r"(?:site|dist)-packages[\\/]+([A-Za-z_][\w.-]*)")
_SO = re.compile(r"([A-Za-z_][\w]*?)(?:\.cpython-[\w-]+|\.cp\d+[\w-]*|\.abi3)?\.(?:so|pyd)\b")
_DISTS = {
    "flash_attn": "flash-attn",
    "flash_attn_2_cuda": "flash-attn",
    "xformers": "xformers",
    "mmcv": "mmcv",
    "detectron2": "detectron2",
    "apex": "apex",
    "torch_scatter": "torch-scatter",
    "torch_sparse": "torch-sparse",
    "torch_cluster": "torch-cluster",
    "transformer_engine": "transformer-engine",
    "transformer_engine_extensions": "transformer-engine",
    "bitsandbytes": "bitsandbytes",
    "torchao": "torchao",
    "vllm": "vllm",
    "mamba_ssm": "mamba-ssm",
    "causal_conv1d": "causal-conv1d",
    "pytorch3d": "pytorch3d",
    "deepspeed": "deepspeed",
    "torchaudio": "torchaudio",
    "sgl_kernel": "sgl-kernel",
}


def _package(line: str) -> Optional[str]:
    """The distribution the failing extension belongs to, from the matched line."""
    m = _SITE.search(line)
    if m:
        top = m.group(1).split(".")[0]
        top = re.sub(r"(?:_2_cuda|_cuda|_C|_ext)$", "", top) if top not in _DISTS else top
        return _DISTS.get(top, top.replace("_", "-"))
    m = _SO.search(line)
    if m:
        top = m.group(1)
        if top in _DISTS:
            return _DISTS[top]
        top = re.sub(r"(?:_2_cuda|_cuda|_C|_ext)$", "", top)
        return _DISTS.get(top, top.replace("_", "-")) if top and top not in ("_C", "lib") else None
    if re.search(r"flash[-_ ]?att(?:n|ention)", line, re.I):
        return "flash-attn"
    for key, dist in _DISTS.items():
        if re.search(rf"\b{key}\b", line, re.I):
            return dist
    if re.search(r"xFormers", line):
        return "xformers"
    if _TENSORRT_SM.search(line):
        return "tensorrt"
    return None


#: TensorRT's own refusal of the GPU's architecture (kb/errors/b24.json): its release predates the GPU.
_TENSORRT_SM = re.compile(r"\bUnsupported SM\b|\btrtSmToCask\b|not supported by this TensorRT release", re.I)


def _all_text(fx: Facts) -> str:
    return text_of(fx)  # the error texts as the engine normalised them


@check(EXTENSION_ABI_MISMATCH)
def extension_abi_mismatch(fx: Facts) -> Iterator[Finding]:
    """`undefined symbol: _ZN3c10...` in an extension .so, or an extension saying it was built for another torch."""
    said = error_match(fx, EXTENSION_ABI_MISMATCH)
    if not said:
        bare = search(fx, r"(?:ImportError|OSError): libcudart\.so\.\d+(?:\.\d+)?: cannot open shared object file")
        if bare:
            yield from _bare_cudart(fx, bare)
            return
        other = _wheel_for_other_torch(fx)
        if other:
            yield other
        return
    if re.search(r"error while loading shared libraries: lib(?:torch|c10)", said[1]):
        return  # the loader starting a compiled program without LibTorch's lib/ (torch-lib-dir-not-on-loader-path)
    from .ext22 import imported_first

    if imported_first(text_of(fx)):
        return  # torch's library not found because the extension was imported first (extension-imported-before-torch)
    if re.search(r"[/\\]torch[/\\]lib[/\\][^/\\\s:]+:\s*undefined symbol", said[1]):
        return  # torch's own library missing a symbol of its own: torch is mixed or half-installed, not an extension
    if re.search(
        r"(?:[/\\](?:torchvision|torchaudio)[/\\][\w./\\-]*|\blib(?:torchaudio|torchvision)\w*)\.(?:so|pyd):\s*undefined symbol",
        said[1],
    ):
        return  # torchvision's/torchaudio's own library: the companion is not torch's pair (torchvision-mismatch)
    cudart = search(fx, r"libcudart\.so\.(\d+)(?:\.\d+)?: cannot open shared object file")
    if cudart:
        yield from _other_cuda_runtime(fx, said, cudart)
        return
    pkg = _package(said[1])
    if not pkg or _TORCH_LIB.match(pkg):  # the line names a library of torch's: the package is the one importing it
        lib = re.search(r"lib(?:torch|c10)\w*\.so", said[1])
        pkg = _importer(_all_text(fx), lib.group(0) if lib else said[1])
    if pkg in _COMPANIONS:
        return  # torchvision's/torchaudio's own load failing: the companion is not torch's pair (torchvision-mismatch)
    if not pkg and _TORCH_IMPORTS_ITSELF.search(_all_text(fx)) and re.search(r"\blib(?:c10|torch)\w*\.so", said[1]):
        return  # torch's own import cannot find its own libraries: a broken torch install, not an extension
    if _TORCHAO_SKIPS.search(said[1]):
        yield _torchao_skips(fx, said)
        return
    pkg = pkg or "<the package named in the error>"
    torch = torch_version(fx)
    built = re.search(r"built for:?\s*PyTorch ([\w.+]+)", said[1])
    pin = f"torch=={built.group(1)}" if built else None
    cmds = [
        f"{PIP} show torch {pkg}  # the versions that must fit",
        f"{PIP} uninstall -y {pkg}",
        f"{PIP} install --no-build-isolation --no-cache-dir {pkg}  # rebuilds against the installed torch"
        + (f" {torch}" if torch else ""),
    ]
    if pkg == "xformers" and torch:
        cmds[-1] = (
            f"{PIP} install xformers --index-url https://download.pytorch.org/whl/<cuXYZ of torch {torch}>  # a wheel built for this torch"
        )
    if pin:
        cmds.append(f"# or go back to the torch it was built for: {PIP} install {pin}")
    yield EXTENSION_ABI_MISMATCH.finding(
        title=f"{pkg} was built against another torch than the one installed" + (f" ({torch})" if torch else ""),
        evidence={said[0]: said[1], "package": pkg, "torch.version": torch},
        fix=Fix(
            tuple(cmds),
            "An extension's compiled code only loads in the torch release (and CUDA variant, C++ ABI) it was built for.",
        ),
    )


_TORCH_LIB = re.compile(r"lib-?(?:torch|c10)", re.I)

#: torchao's own words when its compiled extensions do not fit the installed torch (kb/errors/b25.json), with the torch
#: it found and, in newer releases, the torch it needs ("Please upgrade to torch >= 2.11.0 (found 2.9.1+cu128)").
_TORCHAO_SKIPS = re.compile(r"Skipping import of cpp extensions due to incompatible torch version", re.I)
_TORCHAO_NEEDS = re.compile(r"upgrade to torch\s*>=\s*(?P<need>\d+\.\d+(?:\.\d+)?)\s*\(found (?P<found>[\w.+]+)\)", re.I)
_TORCHAO_OLD = re.compile(r"incompatible torch version (?P<found>\d[\w.+]*) for torchao version (?P<ao>\d[\w.+]*)", re.I)


def _torchao_skips(fx: Facts, said: Tuple[str, str]) -> Finding:
    """torchao skipped its C++/CUDA extensions: its release was built for another torch (pytorch/ao#2919)."""
    text = said[1] + "\n" + _all_text(fx)
    need, old = _TORCHAO_NEEDS.search(text), _TORCHAO_OLD.search(text)
    found = (need.group("found") if need else old.group("found") if old else None) or torch_version(fx)
    ao = old.group("ao") if old else None
    cmds = [f"{PIP} show torch torchao  # the pair that must fit"]
    if need:
        cmds.append(f'{PIP} install "torch>={need.group("need")}"  # the torch this torchao was built for (with its CUDA index)')
    cmds.append(
        f'{PIP} install "torchao<{ao}"  # or an older torchao built for torch {found}'
        if ao and found
        else f"{PIP} install torchao==<the release built for torch {found or 'X'}>  # or an older torchao"
    )
    return EXTENSION_ABI_MISMATCH.finding(
        title=f"torchao{(' ' + ao) if ao else ''} was built for another torch than the one installed"
        + (f" ({found})" if found else "")
        + (f"; it needs torch >= {need.group('need')}" if need else "")
        + ": it skips its C++/CUDA kernels, so its quantized layers fail",
        evidence={said[0]: said[1], "package": "torchao", "torch.version": found, "torchao": ao},
        fix=Fix(
            tuple(cmds),
            "torchao's compiled extensions load only in the torch release they were built for; torchao skips them "
            "otherwise (pytorch/ao#2919).",
        ),
    )


# ---------------------------------------------------------------- a prebuilt wheel names the torch it was built for
#: The local version prebuilt extension wheels carry (task build10): flash-attn's setup.py and the packages that copy it
#: (causal-conv1d, mamba-ssm, selective-scan) name their release wheels
#: ``{name}-{version}+cu{CUDA}torch{major.minor}cxx11abi{TRUE|FALSE}-...whl``; PyG's wheels (torch-scatter,
#: torch-sparse, torch-cluster, pyg-lib) are ``{version}+pt{major}{minor}cu{CUDA}`` / ``+pt{major}{minor}cpu``.
_WHEEL_TORCH = re.compile(
    r"\b(?P<name>[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z][A-Za-z0-9]*)*)[-=]=?(?P<ver>\d+(?:\.\d+)*(?:\.post\d+)?)"
    r"\+(?:(?:cu(?P<cu>\d{2,3}))?torch(?P<torch>\d+\.\d+)(?:cxx11abi(?P<abi>TRUE|FALSE))?|pt(?P<ptmaj>\d)(?P<ptmin>\d{1,2})(?:cu(?P<cu2>\d{2,3})|cpu)\b)"
)
#: NVIDIA's own torch builds: NGC containers' '2.1.0a0+4136153' (a pre-release from a commit), Jetson wheels' '+nv22.4'.
_NVIDIA_TORCH = re.compile(r"^\d+\.\d+\.\d+a0\+[0-9a-f]{7,}|\+nv\d{2}\.\d{1,2}|\.nv\d{2}\.\d{1,2}")
#: The text says something went wrong (import, load, symbol): a version difference alone is not a failure.
_FAILED = re.compile(
    r"\b(?:\w*Error|undefined symbol|cannot open shared object|DLL load failed|errors? (?:happened|occurred|when)|"
    r"fail(?:s|ed|ing)? to (?:import|load)|can(?:no|')t import|unable to (?:import|load))\b",
    re.I,
)


def _wheel_builds(fx: Facts) -> Iterator[Tuple[str, str, str, Optional[str]]]:
    """(distribution, its version string, the torch major.minor it was built for, its cxx11abi) from the text and the
    listed packages."""
    texts = [text_of(fx)] + [f"{d.get('name')}=={d.get('version')}" for d in fx.dicts("packages.distributions")]
    for t in texts:
        for m in _WHEEL_TORCH.finditer(t or ""):
            torch = m.group("torch") or f"{m.group('ptmaj')}.{m.group('ptmin')}"
            yield m.group("name"), m.group(0), torch, m.group("abi")


def _wheel_for_other_torch(fx: Facts) -> Optional[Finding]:
    """A prebuilt extension wheel whose version names the torch it was built for, on another torch — another
    release, or NVIDIA's own build of the same release (NGC, Jetson), whose C++ symbols are not PyPI's — with the
    text showing that package failing."""
    installed = torch_version(fx)
    mm = re.match(r"(\d+)\.(\d+)", installed or "")
    text = text_of(fx)
    if not mm or not _FAILED.search(text):
        return None
    have = f"{mm.group(1)}.{mm.group(2)}"
    nvidia = bool(_NVIDIA_TORCH.search(installed or ""))
    for name, tag, built, abi in _wheel_builds(fx):
        if name.lower() in ("torch", "pytorch", "torchvision", "torchaudio"):
            continue
        module = name.replace("-", "_")
        if not re.search(rf"\b{re.escape(module)}\b|\b{re.escape(name)}\b", _failed_context(text), re.I):
            continue  # the failure the text shows is not this package's
        if built != have:
            why = f"it was built for torch {built}, torch {installed} is installed"
        elif nvidia:
            why = (
                f"it was built against PyPI's torch {built}; {installed} is NVIDIA's own build (NGC/Jetson), whose C++ "
                "symbols differ"
            )
        else:
            continue
        pkg = _DISTS.get(module, name.replace("_", "-"))
        return EXTENSION_ABI_MISMATCH.finding(
            title=f"{pkg} ({tag}) does not fit the installed torch: {why}",
            evidence={"wheel": tag, "package": pkg, "built_for_torch": built, "cxx11abi": abi, "torch.version": installed},
            severity="error" if built != have else "warning",
            fix=Fix(
                (
                    f'{PIP} show torch {pkg}; python -c "import torch; print(torch.__version__, torch._C._GLIBCXX_USE_CXX11_ABI)"',
                    f"{PIP} uninstall -y {pkg}",
                    f"{PIP} install --no-build-isolation --no-cache-dir --no-binary :all: {pkg}  # built here, against torch {installed}"
                    if nvidia
                    else f"# install the {pkg} wheel whose tag names torch {have} (and torch's CUDA and C++ ABI), or build it: "
                    f"{PIP} install --no-build-isolation --no-cache-dir {pkg}",
                ),
                "A prebuilt extension only loads in the torch release, CUDA and C++ ABI named in its wheel tag; NVIDIA's "
                "torch builds (NGC, Jetson) need extensions built against them.",
            ),
        )
    return None


def _failed_context(text: str) -> str:
    """The lines around each failure the text shows (three either side): where the failing package is named."""
    lines = text.split("\n")
    keep: "set[int]" = set()
    for i, ln in enumerate(lines):
        if _FAILED.search(ln):
            keep.update(range(max(0, i - 3), min(len(lines), i + 4)))
    return "\n".join(lines[i] for i in sorted(keep))


#: torch's own companions: their load failures are torchvision-mismatch (checks/companions.py), not an extension's.
_COMPANIONS = ("torchvision", "torchaudio")
#: The traceback's last frames are torch's own import (torch/__init__.py loading its libraries), with no package between.
_TORCH_IMPORTS_ITSELF = re.compile(
    r"[/\\]torch[/\\]__init__\.py\W[^\n]*\n(?:[^\n]*\n){0,3}[^\n]*lib(?:c10|torch)\w*\.so: cannot open"
)


def _importer(text: str, needle: str) -> Optional[str]:
    """The package whose import (``import x`` / ``from x import``, or a frame in site-packages/x/) comes last
    before the error naming ``needle``: the one whose compiled module failed to load."""
    at = text.rfind(needle)
    before = text[: at if at > 0 else len(text)]
    names = re.findall(
        r"(?:^|\s)(?:from|import(?:ing)?)\s+(?!import)([A-Za-z_][\w.]*)|(?:site|dist)-packages[\\/]+([A-Za-z_][\w]*)", before
    )
    for a, b in reversed(names):
        p = _package((a or b).split(".")[0]) if (a or b) else None
        if p and p != "torch" and not _TORCH_LIB.match(p):
            return p
    return None


#: Programs whose own CUDA libraries decide a missing libcudart (cuda-library-missing and the like), and torch itself.
_NOT_A_TORCH_EXTENSION = (
    r"import torch\b|torch[/\\]__init__\.py|\b(?:tensorflow|jax|jaxlib|paddle\w*|cupy|onnxruntime|ctranslate2|mxnet|"
    r"tensorrt|llama[._-]?cpp|ollama|numba)\b"
)


def _bare_cudart(fx: Facts, said: Tuple[str, str]) -> Iterator[Finding]:
    """'libcudart.so.N: cannot open' with no importer named, on a machine whose CUDA (torch's, else the toolkit's) is
    another major: a compiled package built for CUDA N (a prebuilt mmcv, detectron2, flash-attn...). A warning: the
    text does not name the package."""
    m = re.search(r"libcudart\.so\.(\d+)((?:\.\d+)?)", said[1])
    have = torch_cuda(fx) or fx.str("toolkit.nvcc_version")
    if not m or not have or have.split(".")[0] == m.group(1) or search(fx, _NOT_A_TORCH_EXTENSION):
        return
    want = m.group(1) + m.group(2)
    yield EXTENSION_ABI_MISMATCH.finding(
        title=f"A compiled package wants CUDA {want}'s runtime (libcudart.so.{want}) where CUDA is {have}: "
        "it was built for another CUDA (most often a prebuilt mmcv, detectron2 or flash-attn wheel)",
        evidence={
            said[0]: said[1],
            "package": None,
            "torch.cuda": torch_cuda(fx),
            "toolkit.nvcc_version": fx.str("toolkit.nvcc_version"),
        },
        fix=Fix(
            (
                f"{PIP} list  # packages with compiled CUDA code: mmcv, mmcv-full, detectron2, flash-attn, apex, torch-scatter...",
                'python -c "import torch; print(torch.__version__, torch.version.cuda)"  # the CUDA that package must be built for',
                f"{PIP} uninstall -y <that package> && {PIP} install <that package's build for this torch and CUDA>",
            ),
            f"A module linked against libcudart.so.{want} loads only where CUDA {want}'s runtime is; reinstall it built "
            "for the installed torch's CUDA.",
        ),
        severity="warning",
    )


def _other_cuda_runtime(fx: Facts, said: Tuple[str, str], cudart: Tuple[str, str]) -> Iterator[Finding]:
    """A package's compiled module wants libcudart.so.N: it was built for a torch with CUDA N. Nothing when the
    installed torch's CUDA is that major (then the runtime is merely not found: a path problem) or torch has no CUDA."""
    m = re.search(r"libcudart\.so\.(\d+)", cudart[1])
    want = m.group(1) if m else None
    have = torch_cuda(fx)
    if not want or (have and have.split(".")[0] == want) or str(torch_version(fx) or "").endswith("+cpu"):
        return
    pkg = _importer(_all_text(fx), f"libcudart.so.{want}") or "<the package named in the error>"
    torch = torch_version(fx)
    index = {"11": "cu118", "12": "cu128", "13": "cu130"}.get(want, f"cu{want}x")
    yield EXTENSION_ABI_MISMATCH.finding(
        title=f"{pkg} was built for CUDA {want} (it needs libcudart.so.{want}), the installed torch is not"
        + (f" ({torch}, CUDA {have})" if torch and have else f" (CUDA {have})" if have else ""),
        evidence={said[0]: said[1], "missing": cudart[1], "package": pkg, "torch.version": torch, "torch.cuda": have},
        fix=Fix(
            (
                f'python -c "import torch; print(torch.__version__, torch.version.cuda)"; {PIP} show {pkg}  # the CUDA each was built for',
                f"{PIP} install --force-reinstall torch torchvision torchaudio --index-url {INDEX}{index}"
                f"  # a torch with CUDA {want}, as {pkg} expects (keep the torch version {pkg} pins)",
                f"# or install the {pkg} build made for your torch's CUDA (its release page lists wheels per CUDA and torch)",
            ),
            f"pip torch brings its own CUDA runtime (nvidia-cuda-runtime-cu{want[:2]} for CUDA {want}); a package compiled "
            f"against CUDA {want} finds libcudart.so.{want} only beside a torch of the same CUDA major.",
        ),
    )


_BUILDING = re.compile(
    r"(?:Collecting|Building wheel for|Failed to (?:download and )?build|Downloading|Using cached|Preparing metadata \(\w+\) for"
    r"|Failed to fetch wheel:|Failed to prepare metadata for)\s+`?([A-Za-z][\w.-]*?)(?:-\d[\w.]*\.tar\.gz|[=<>~ (\n`@]|$)",
    re.M,
)


@check(EXTENSION_BUILD_ISOLATION)
def extension_build_isolation(fx: Facts) -> Iterator[Finding]:
    """`No module named 'torch'` inside pip's isolated build of a source package. A bare one while
    torch imports here (no pip lines pasted) is the same situation, or another interpreter: a warning."""
    said = error_match(fx, EXTENSION_BUILD_ISOLATION)
    if not said:
        bare = search(fx, r"No module named '?torch'?(?![\w.])")
        shown = search(fx, _TORCH_SHOWN_INSTALLED) if bare else None
        if bare and ((torch_version(fx) and fx.str("torch.status") in (None, "ok")) or shown):
            yield _bare_no_torch(fx, bare)
        elif not bare:
            yield from _one_step_with_torch(fx)
            yield from _cuda_home_set_yet_unset(fx)
        return
    text = _all_text(fx)
    names = [m.group(1) for m in _BUILDING.finditer(text) if m.group(1).lower() not in ("torch", "pip", "setuptools", "wheel")]
    pkg = names[-1] if names else "<package>"
    pkg = re.sub(r"[-_]\d[\w.]*$", "", pkg)
    uv = bool(re.search(r"\buv\b|uv pip|uv add|uv sync", text))
    torch = torch_version(fx)
    cmds = [
        f"{PIP} install setuptools wheel ninja packaging  # the build tools the isolated environment provided",
        ("uv pip install --no-build-isolation " if uv else f"{PIP} install --no-build-isolation ") + pkg,
    ]
    if uv:
        cmds.append(f'# or in pyproject.toml: [tool.uv] no-build-isolation-package = ["{pkg}"]')
    yield EXTENSION_BUILD_ISOLATION.finding(
        title=f"Building {pkg} cannot see the installed torch: {'uv' if uv else 'pip'} builds it in an isolated environment",
        evidence={said[0]: said[1], "package": pkg, "torch.version": torch, "torch installed here": True if torch else "unknown"},
        fix=Fix(tuple(cmds), "--no-build-isolation builds the package in this environment, against the torch already installed."),
    )


#: The text shows torch installed in this environment (pip's own words), whatever the facts say.
_TORCH_SHOWN_INSTALLED = (
    r"Name: torch[ \t]*\r?\n[ \t]*Version: \d|Requirement already satisfied: torch(?:[=<>~ \t(]|$)|"
    r"Successfully installed[^\n]*\btorch-\d"
)
#: Packages whose setup.py imports torch to build (their install docs say --no-build-isolation).
_BUILDS_AGAINST_TORCH = (
    r"\b(?:flash[-_]attn|mamba[-_]ssm|causal[-_]conv1d|apex|detectron2|pytorch3d|gptqmodel|auto[-_]gptq|"
    r"torch[-_](?:scatter|sparse|cluster)|natten|sageattention|gsplat)\b"
)


def _cuda_home_set_yet_unset(fx: Facts) -> Iterator[Finding]:
    """torch's "CUDA_HOME environment variable is not set" from a pip install of a source package while the reporter says
    CUDA_HOME / CUDA_PATH is set (readers/issue.py pasted.cuda_home_said_set): the build ran in pip's isolated environment
    (a torch of its own, without CUDA), not in the reporter's (sam2#19's class: b26-16, b61-09, b103-07). A warning."""
    said = search(fx, r"CUDA_HOME environment variable is not set")
    home = fx.dict("pasted.cuda_home_said_set") or {}
    if not (said and home.get("text")):
        return
    yield EXTENSION_BUILD_ISOLATION.finding(
        title="Likely: the package is built in pip's isolated environment, which does not see this CUDA setup (the "
        "report says CUDA_HOME is set)",
        evidence={said[0]: said[1], "the report says": home["text"]},
        fix=Fix(
            (
                f"{PIP} install setuptools wheel ninja  # the build tools the isolated environment provided",
                f"{PIP} install --no-build-isolation -e .  # build against this environment's torch and CUDA_HOME",
            ),
            "pip builds a source package in a fresh environment with a torch of its own; --no-build-isolation builds it "
            "here, where torch has CUDA and CUDA_HOME is set.",
        ),
        severity="warning",
    )


def _one_step_with_torch(fx: Facts) -> Iterator[Finding]:
    """One pip run (a requirements file, one command) that installs torch AND a package that compiles against it, and
    fails building a wheel: pip builds that package in an isolated environment before torch is installed. A warning."""
    failed = search(fx, r"\b(?:wheel build|build(?:ing)?(?: the)?(?: wheel)?)\s*errors?\b|Failed (?:to build|building wheel)")
    # torch in the same run: pinned beside it, or named with the requirements file
    pinned = search(fx, r"(?<![\w-])torch==\d|\btorch\b[^\n]{0,80}\brequirements\b|\brequirements\b[^\n]{0,80}\btorch\b")
    pkg = search(fx, _BUILDS_AGAINST_TORCH)
    if not (failed and pinned and pkg):
        return
    name = re.search(_BUILDS_AGAINST_TORCH, pkg[1])
    dist = name.group(0) if name else "<package>"
    yield EXTENSION_BUILD_ISOLATION.finding(
        title=f"Likely: {dist} is built in one pip run with torch, in an isolated environment that has no torch yet",
        evidence={failed[0]: failed[1], "torch pinned": pinned[1], "builds against torch": dist},
        fix=Fix(
            (
                f"{PIP} install torch==<version> setuptools wheel ninja packaging  # first step: torch and the build tools",
                f"{PIP} install --no-build-isolation {dist}  # second step: builds against the installed torch",
                f"# one file only? keep {dist} out of requirements.txt and install it after, or use a prebuilt wheel for this torch",
            ),
            "pip builds a source package in a fresh environment before installing anything else from the same run.",
        ),
        severity="warning",
    )


def _bare_no_torch(fx: Facts, said: Tuple[str, str]) -> Finding:
    return EXTENSION_BUILD_ISOLATION.finding(
        title=f"torch {torch_version(fx) or '(shown by pip)'} is installed, yet something could not import it: a package built in pip's "
        "isolated environment (most often), or a script run by another interpreter",
        evidence={said[0]: said[1], "torch.version": torch_version(fx)},
        fix=Fix(
            (
                f"{PIP} install --no-build-isolation <the package you were installing>  # builds against the installed torch",
                '# running a script instead? compare: which python; python -c "import sys, torch; print(sys.executable)"',
            ),
            "pip builds source packages in a fresh environment without torch unless told not to.",
        ),
        severity="warning",
    )


_NO_KERNEL = re.compile(r"no kernel image is available for execution on the device|CUDA_ERROR_NO_BINARY_FOR_GPU", re.I)
#: xFormers lists every backend with its reasons; this one means its compiled extension did not load.
_NOT_LOADED = re.compile(r"xFormers wasn't build with CUDA support|xFormers can't load C\+\+/CUDA extensions", re.I)
_TORCH_OWN_ARCH = re.compile(
    r"is not compatible with the current PyTorch installation|The current PyTorch install supports CUDA capabilities", re.I
)


def _no_kernel_beside_torch(fx: Facts) -> Optional[Tuple[str, str]]:
    """'no kernel image' while torch's own build has kernels for every GPU (known capability and arch
    list): the kernel that failed belongs to a separately built package."""
    said = search(fx, _NO_KERNEL.pattern)
    if said and torch_op_failed(_all_text(fx)):
        return None  # torch's own operation failed: the torch that ran lacks the kernels (gpu-arch-unsupported)
    archs, _source = build_arch_list(fx)
    caps = [g.get("capability") for g in gpus(fx)]
    if not said or not archs or not caps or not all(isinstance(c, str) and arch_runs(c, archs) for c in caps):
        return None
    return said


def _no_kernel_any_torch(fx: Facts) -> Optional[Tuple[str, str]]:
    """'no kernel image' with the torch build unknown, on a GPU every official torch build has kernels for."""
    said = search(fx, _NO_KERNEL.pattern)
    return said if said and any_build_gpu(fx, gpus(fx)) else None


def _below_minimum(fx: Facts) -> Optional[Tuple[str, str, Dict[str, Any], str]]:
    """(package, line, gpu, minimum): the error text names a package that supports no GPU as old as one here
    (checks/_common.companion_below_minimum, which arch.py reads too)."""
    return companion_below_minimum(fx)


def _kernel_package(fx: Facts) -> Optional[str]:
    """An installed package that ships its own CUDA kernels (the first one listed), when the text names none."""
    kernels = set(_DISTS.values()) - {"torchaudio"}
    for d in fx.dicts("packages.distributions"):
        name = str(d.get("name") or "").lower().replace("_", "-")
        if name in kernels:
            return name
    return None


def _program_cuda_predates(fx: Facts) -> Optional[Finding]:
    """A program other than torch built with a CUDA older than the GPU, its CUDA library failing at the first calls
    (checks/arch22.py): the CUDA the report states (nvcc's, or the runtime's) is the program's where torch is neither
    named nor known."""
    from .arch import torch_unknown
    from .arch22 import predates

    if not torch_unknown(fx) or torch_named(fx, _all_text(fx)):
        return None
    cuda = fx.str("toolkit.nvcc_version") or fx.str("cuda.runtime_version")
    prog = program_not_torch(fx) or "the program"

    def fix(g: Dict[str, Any], first: str) -> Tuple[str, ...]:
        return (
            f"# rebuild {prog} with CUDA {first} or newer (and the cuDNN of that CUDA), or install its build for that CUDA",
            f"nvcc --version  # the CUDA toolkit {prog} is built with; its GPU needs {first}+",
        )

    return predates(fx, COMPANION_ARCH_UNSUPPORTED, cuda, prog, fix)


@check(COMPANION_ARCH_UNSUPPORTED)
def companion_arch_unsupported(fx: Facts) -> Iterator[Finding]:
    """A companion package's kernels do not cover this GPU while torch's do."""
    if error_match(fx, PROFILER_UNSUPPORTED_GPU):
        return  # a profiler's own "not supported on devices with compute capability X" (checks/profilers24.py)
    said = error_match(fx, COMPANION_ARCH_UNSUPPORTED) or _no_kernel_beside_torch(fx)
    inferred = None
    if not said:
        said = inferred = _no_kernel_any_torch(fx)
    owner = kernel_owner(fx) if not said else None  # who raised it, from the text and the facts (checks/arch.py)
    unknown = bool(owner and owner[0] == "unknown")
    if owner and owner[0] in ("other", "unknown"):
        said = owner[2]
    if not said:
        low = _below_minimum(fx)
        if low:
            yield _below_minimum_finding(*low)
            return
        prog = program_not_torch(fx)
        words = user_says_unsupported(_all_text(fx)) if prog else None
        if prog and words:  # "recent LM Studio versions no longer support the P4000 (sm_61)": the program's own build
            likely = _program_lacks_arch(fx, prog, ("text_says", words[0]), None)
            yield dataclasses.replace(likely, title="Likely: " + likely.title, severity="warning")
            return
        from .ct2_21 import ctranslate2_on_blackwell  # CTranslate2's "cuBLAS failed" on an RTX 50 (session 21)

        ct2 = ctranslate2_on_blackwell(fx, COMPANION_ARCH_UNSUPPORTED)
        if ct2 is not None:
            yield ct2
            return
        late = _program_cuda_predates(fx)
        if late is not None:
            yield late
        return
    text = _all_text(fx)
    if _TORCH_OWN_ARCH.search(text):
        return  # torch itself lacks the architecture: gpu-arch-unsupported
    if _NOT_LOADED.search(text):
        return  # the extension did not load at all (extension-abi-mismatch); a capability line is one backend's aside
    found = _package(said[1]) or _package(text) or _kernel_package(fx)
    # a program's own libtorch (dorado's libc10.so in its lib/ directory) is the program's build, not a package's
    program = _program_named(fx, text) if not found or re.match(r"lib(?:c10|torch)", found) else None
    if program:
        yield _program_lacks_arch(fx, program, said, owner)
        return
    pkg = _package(said[1]) or _package(text) or _kernel_package(fx) or "<the package in the traceback>"
    caps = [g["capability"] for g in gpus(fx) if g.get("capability")]
    names = [g["name"] for g in gpus(fx) if g.get("name")]
    cap = caps[0] if caps else '<X.Y: python -c "import torch; print(torch.cuda.get_device_capability())">'
    cmds = [
        f'TORCH_CUDA_ARCH_LIST="{cap}" {PIP} install --no-build-isolation --no-cache-dir --no-binary {pkg} {pkg}  # build it for this GPU'
    ]
    too_old = re.search(
        r"only supports|\(too old\)|at least \d|capability [\d.]+(?: \([A-Za-z ]+\))? or (?:higher|newer|above) is required"
        r"|capability (?:< ?[\d.]+|\d+ \d+) (?:are|is) not supported"
        r"|GPU with NV\w+ \w+\W{0,4} (?:or newer architecture|architecture or better)",  # RAPIDS's generation check
        said[1],
        re.I,
    )
    if too_old:  # the package does not support this GPU generation at all: rebuilding will not help
        cmds = [f"# {pkg} does not support this GPU; use the application's fallback instead:"]
    if pkg == "tensorrt":  # closed source: its releases list the GPUs they support
        cmds = [
            f"# this TensorRT release predates the GPU (compute capability {cap}): install a TensorRT release whose support "
            "matrix lists it, with the CUDA that release needs (NVIDIA's TensorRT support matrix)",
            'python -c "import tensorrt; print(tensorrt.__version__)"  # or: dpkg -l | grep nvinfer; in a container, a newer image',
            "# then rebuild the engine (.engine/.plan) on this GPU",
        ]
    if pkg == "flash-attn":
        cmds.append('# or do without it: model = AutoModel.from_pretrained(..., attn_implementation="sdpa")')
    elif too_old and pkg == "xformers":
        cmds.append(f"{PIP} uninstall -y xformers  # applications fall back to PyTorch's own attention (sdpa)")
    elif too_old and not pkg.startswith("<"):
        cmds = [
            f"# {pkg} supports no GPU this old: rebuilding it will not help",
            f"# run it on a GPU of the generation its message names, or use an older {pkg} release whose requirements still "
            "list this GPU",
        ]
    if re.search(r"Bfloat16", said[1], re.I):
        cmds = ["# run the model in float16: vllm serve <model> --dtype float16  (or torch_dtype=torch.float16)"]
    gpu = f" ({names[0]}, compute capability {caps[0]})" if names and caps else ""
    unnamed = pkg.startswith("<")
    if unnamed and too_old:  # a package's own minimum-capability check: no build of it runs here
        cmds = [
            "# the package that raised it (in the traceback) supports no GPU this old: rebuilding it will not help",
            "# run on a GPU of the capability it names, or without that package (the application's fallback)",
        ]
    elif unnamed:  # find the package first; the rebuild line keeps a placeholder
        cmds = [
            f"{PIP} list  # the packages with their own CUDA kernels: xformers, flash-attn, mmcv, detectron2, bitsandbytes, "
            "vllm, torch-scatter...; the failing one is in the traceback",
            f'TORCH_CUDA_ARCH_LIST="{cap}" {PIP} install --no-build-isolation --no-cache-dir --no-binary <package> <package>'
            "  # build it for this GPU (or install its release that lists this GPU)",
        ]
    if unknown:  # nothing shows whose kernel it was: the other hypothesis beside gpu-arch-unsupported's
        title = "Or: a separately compiled package's kernels (not torch's) lack this GPU's architecture"
        cmds = [
            "python -c \"import torch; print(torch.ones(1, device='cuda') + 1)\"  # works: torch is fine, the failing kernel "
            "is the package's in the traceback"
        ] + cmds
    elif inferred:  # torch's build is unknown; every official one has kernels for this GPU
        title = f"Every official torch build has kernels for this GPU{gpu}: the kernel without one is " + (
            f"{pkg}'s" if not unnamed else "a separately built package's (or a torch built from source)"
        )
        cmds = ['python -c "import torch; print(torch.__version__, torch.cuda.get_arch_list())"  # torch\'s own list'] + cmds
    elif unnamed and too_old:
        title = f"A package with its own GPU kernels refuses this GPU{gpu}: it supports only newer GPUs"
    elif pkg.startswith("<") and owner:
        title = (
            f"A separately compiled package's or program's kernels (not torch's) lack this GPU's architecture{gpu}: {owner[1]}"
        )
    elif pkg.startswith("<") and _no_kernel_beside_torch(fx):
        title = "A package with its own CUDA kernels (not torch, whose build covers this GPU) has none for it" + gpu
    elif pkg.startswith("<"):
        title = "A package with its own CUDA kernels (not torch) has none for this GPU" + gpu
    else:
        title = f"{pkg} has no kernels for this GPU" + gpu
    yield COMPANION_ARCH_UNSUPPORTED.finding(
        title=title,
        evidence={
            said[0]: said[1],
            "package": None if unnamed else pkg,
            "gpus": names or None,
            "capabilities": caps or None,
            **({"torch.version": None, "torch.arch_list": None} if inferred or unknown else {}),  # what it lacks
            **({"why": owner[1]} if owner else {}),
        },
        fix=Fix(
            tuple(cmds),
            "The package's own kernels must be compiled for this GPU's architecture (or the GPU must meet its minimum).",
        ),
        severity="warning" if inferred or unknown else None,
    )


def _program_named(fx: Facts, text: str) -> Optional[str]:
    """A program with its own CUDA code (kb/errors/b20.json own_kernel_programs) the report names (its title and prose
    too: readers/issue.py pasted.programs), when it names no torch."""
    if torch_named(fx, text):
        return None
    own = program_patterns()[1]
    m = own.search(text)
    names = (fx.dict("pasted.programs") or {}).get("names") or []
    return m.group(0) if m else next((str(n) for n in names if own.fullmatch(str(n))), None)


def _program_lacks_arch(fx: Facts, program: str, said: Tuple[str, str], owner: Optional[Tuple[str, str, Any]]) -> Finding:
    """A standalone program (Ollama, dorado, Caffe, GROMACS, a miner...) whose build has no kernels for this GPU."""
    caps = [g["capability"] for g in gpus(fx) if g.get("capability")]
    stated = re.search(r"compute capability (\d{1,2}\.\d)", said[1])
    caps = caps or ([stated.group(1)] if stated else [])
    names = [g["name"] for g in gpus(fx) if g.get("name")]
    gpu = (
        f" ({names[0]}, compute capability {caps[0]})" if names and caps else (f" (compute capability {caps[0]})" if caps else "")
    )
    cap = caps[0] if caps else "<X.Y: nvidia-smi --query-gpu=compute_cap --format=csv>"
    return COMPANION_ARCH_UNSUPPORTED.finding(
        title=f"{program}'s build has no kernels for this GPU{gpu}: the program's own CUDA code, not torch's",
        evidence={
            said[0]: said[1],
            "program": program,
            "gpus": names or None,
            "capabilities": caps or None,
            **({"why": owner[1]} if owner else {}),
        },
        fix=Fix(
            (
                f"# {program}'s release notes or hardware page list the GPUs each release supports: install one that "
                f"covers compute capability {cap} (often an older release, for a GPU a new one dropped)",
                f"# or, where {program} can be built from source, build it with {cap} in its CUDA architecture list",
            ),
            f"{program} ships kernels compiled for a list of GPU architectures; this GPU's is not in the list of the "
            "release installed.",
        ),
    )


def _below_minimum_finding(pkg: str, line: str, gpu: Dict[str, Any], minimum: str) -> Finding:
    cap = gpu["capability"]
    cmds = [f"# {pkg} supports no GPU below compute capability {minimum}; run without it:"]
    if pkg == "flash-attn":
        cmds += [
            '# transformers: model = AutoModel.from_pretrained(..., attn_implementation="sdpa")  (not "flash_attention_2")',
            f"{PIP} uninstall -y flash-attn  # applications that import it when present fall back to PyTorch's attention",
        ]
    else:
        cmds += [f"# use a GPU of compute capability {minimum} or newer, or another runtime for this model"]
    return COMPANION_ARCH_UNSUPPORTED.finding(
        title=f"{pkg} does not support {gpu.get('name') or 'this GPU'} (compute capability {cap}; it needs {minimum} or newer)",
        evidence={"user_error": line, "package": pkg, "gpu": gpu.get("name"), "capability": cap, "package_minimum": minimum},
        fix=Fix(tuple(cmds), f"{pkg}'s kernels exist only for GPUs of compute capability {minimum} and newer."),
        severity="warning",
    )


@check(PTXAS_ARCH_UNSUPPORTED)
def ptxas_arch_unsupported(fx: Facts) -> Iterator[Finding]:
    """triton's ptxas does not know this GPU, or the GPU is older than triton supports."""
    said = error_match(fx, PTXAS_ARCH_UNSUPPORTED)
    if not said:
        low = _below_triton(fx)
        if low:
            yield low
        return
    text = _all_text(fx)
    too_old = re.search(r"too old to be supported by the triton|Triton only supports devices of CUDA Capability", text, re.I)
    arch = re.search(r"sm_(\d+)a?", said[1]) or re.search(r"--gpu-name=sm_(\d+)a?", text)
    if too_old:
        cmds = [
            "export TORCHDYNAMO_DISABLE=1  # run without torch.compile on this GPU",
            '# or in code: torch.compile(model, backend="eager") / remove torch.compile',
        ]
        title = "This GPU is older than triton (torch.compile's compiler) supports"
    else:
        cmds = [
            "ls /usr/local/cuda/bin/ptxas && /usr/local/cuda/bin/ptxas --version  # needs CUDA 12.8+ for sm_120, 13.0 for sm_110/121",
            "export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas",
            f"# or upgrade torch and triton together: {PIP} install --upgrade torch triton --index-url https://download.pytorch.org/whl/<cuXYZ>",
        ]
        title = "triton's bundled ptxas does not know this GPU" + (f" (sm_{arch.group(1)})" if arch else "")
    yield PTXAS_ARCH_UNSUPPORTED.finding(
        title=title,
        evidence={said[0]: said[1], "gpus": [g["name"] for g in gpus(fx) if g.get("name")] or None},
        fix=Fix(tuple(cmds), "triton compiles every kernel with ptxas, which must know the GPU's architecture."),
    )


#: torch's own check before it compiles with triton (torch/_dynamo/device_interface.py, torch/utils/_triton.py):
#: "Triton only supports devices of CUDA Capability >= 7.0".
_TRITON_MIN_CAPABILITY = 70  # cap_number("7.0")
_TOO_OLD = r"(?:GPU|device|card|capability)[^\n]{0,40}?\btoo old\b|\btoo old\b[^\n]{0,40}?(?:GPU|device|triton)"


def _triton_here(fx: Facts) -> bool:
    names = {str(d.get("name") or "").lower().replace("_", "-") for d in fx.dicts("packages.distributions")}
    return bool(names & {"triton", "pytorch-triton", "triton-windows"}) or bool(search(fx, r"\bTriton\b[: ]+\d+\.\d+"))


def _below_triton(fx: Facts) -> Optional[Finding]:
    """An error saying the GPU is too old, with triton installed and a GPU below triton's minimum capability (7.0):
    the package's kernels are triton kernels (unsloth, torch.compile, vLLM's), and triton does not support this GPU."""
    said = search(fx, _TOO_OLD)
    if not said or not _triton_here(fx) or search(fx, _TORCH_OWN_ARCH.pattern + r"|PyTorch no longer supports this GPU"):
        return None  # torch's own kernels refuse the GPU: gpu-arch-unsupported
    old = [g for g in gpus(fx) if g.get("capability") and (cap_number(g["capability"]) or 99) < _TRITON_MIN_CAPABILITY]
    if not old:
        return None
    gpu = old[0]
    return PTXAS_ARCH_UNSUPPORTED.finding(
        title=f"Likely: {gpu.get('name') or 'this GPU'} (compute capability {gpu['capability']}) is older than triton "
        "supports (7.0): the kernels that refuse it are triton kernels",
        evidence={said[0]: said[1], "gpu": gpu.get("name"), "capability": gpu["capability"], "triton minimum": "7.0"},
        fix=Fix(
            (
                'python -c "import torch; print(torch.cuda.get_device_capability())"  # below (7, 0): triton cannot compile for it',
                "export TORCHDYNAMO_DISABLE=1  # run without torch.compile, where the program allows it",
                "# a package built on triton kernels (unsloth, liger-kernel...) needs a GPU of compute capability 7.0 or newer",
            ),
            "triton supports GPUs of compute capability 7.0 (Volta) and newer only.",
        ),
        severity="warning",
    )


def register():
    return [extension_abi_mismatch, extension_build_isolation, companion_arch_unsupported, ptxas_arch_unsupported]
