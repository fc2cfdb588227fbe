"""Is torch installed, does it import, and is it a build that can use a GPU at all?"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from cudadoctor.errortext import kb_document, of_facts
from cudadoctor.facts import Facts
from cudadoctor.interpret import (
    build_kind,
    driver_version,
    environment,
    installer,
    no_gpu_stated,
    nvidia_gpu_present,
    os_family,
    os_key,
    release_of,
    variant,
    variant_of_tag,
)
from cudadoctor.model import Code, Finding, Fix, check

from ._common import INDEX, PIP, error_match, kb, search, text_of
from .codes5 import only_other_gpus
from .torch_package import said_row as _said_row
from ._fixes import companion_pins, install_commands, newest_variant_for_driver

TORCH_NOT_INSTALLED = Code(
    code="torch-not-installed",
    title="PyTorch is not installed in this Python environment",
    area="torch",
    severity="error",
    explanation={
        "what": "The interpreter being diagnosed cannot find a `torch` package.",
        "why": "Usually torch went into another environment (another venv, conda env, or the "
        "system Python), or `pip` and `python` on PATH belong to different interpreters.",
        "confirm": '`python -c "import sys; print(sys.executable)"` and `python -m pip show torch`.',
        "fix": "Install torch with the same interpreter: `python -m pip install torch`, choosing the "
        "wheel index for your driver.",
    },
    links=("https://pytorch.org/get-started/locally/",),
)

TORCH_IMPORT_FAILED = Code(
    code="torch-import-failed",
    title="`import torch` fails",
    area="torch",
    severity="error",
    explanation={
        "what": "Importing torch raised an exception, crashed the interpreter (a signal such as "
        "SIGSEGV), or hung. cudadoctor imports torch in a child process, so it can say which.",
        "why": "Typical causes: a shared library torch needs is missing or shadowed by another "
        "copy (LD_LIBRARY_PATH, a system CUDA), a NumPy ABI mismatch, a half-finished upgrade that "
        "left files of two versions, or on Windows a DLL that cannot load. Other findings in the "
        "same report often name the root cause.",
        "confirm": '`python -c "import torch"` shows the same error; the evidence has the '
        "exception and the end of its traceback.",
        "fix": "Fix the root cause named by the other findings; otherwise reinstall torch cleanly in a fresh environment.",
    },
    links=("https://pytorch.org/get-started/locally/",),
)

CPU_ONLY_TORCH = Code(
    code="cpu-only-torch",
    title="The installed torch is a CPU-only build",
    area="torch",
    severity="error",
    explanation={
        "what": "torch was built without CUDA (version ends in `+cpu`, `torch.version.cuda` is None, "
        "or a conda `cpuonly` build) on a machine that has an NVIDIA GPU.",
        "why": "A CPU build contains no GPU code: `torch.cuda.is_available()` is False and `.cuda()` "
        'raises "Torch not compiled with CUDA enabled", whatever the driver.',
        "confirm": '`python -c "import torch; print(torch.__version__, torch.version.cuda)"` prints `+cpu` or `None`.',
        "fix": "Reinstall the same release from the CUDA wheel index that your driver supports "
        "(the exact command is in the finding).",
    },
    links=("https://pytorch.org/get-started/locally/", "https://pytorch.org/get-started/previous-versions/"),
)


LOCAL_SHADOW = Code(
    code="shadowed-by-local-file",
    title="A file or folder in the working directory is imported instead of the installed torch",
    area="torch",
    severity="error",
    explanation={
        "what": "The directory you run Python from holds `torch.py` or a `torch/` package (or the same "
        "for torchvision, torchaudio or numpy). Every `python script.py`, `python -c` or REPL started "
        "there puts that directory first on `sys.path`, so `import torch` loads your file, not PyTorch.",
        "why": "Your file has none of torch's contents: \"module 'torch' has no attribute 'cuda'\", or, when "
        "the file itself imports torch, \"partially initialized module 'torch' has no attribute ... (most "
        'likely due to a circular import)". In a PyTorch source checkout that was not built, `import '
        "torch` finds the sources instead of the installed wheel and fails on `torch._C`.",
        "confirm": '`python -c "import torch; print(torch.__file__)"` in that directory prints the local '
        "file instead of a path in site-packages.",
        "fix": "Rename the file (e.g. `torch.py` → `torch_test.py`) and delete its `__pycache__/torch.*.pyc`; "
        "for a source checkout, run from another directory.",
    },
    links=("https://docs.python.org/3/library/sys_path_init.html", "https://github.com/obss/sahi/issues/402"),
)


#: A traceback from inside a torch package, or torch's own compiled part missing: Python found a torch.
_TORCH_FOUND = (
    r"torch[/\\]__init__\.py|No module named '?(?:torch\.)?_C'?(?![\w.])|from torch\._C import|"
    r"[/\\]torch[/\\]lib[/\\][\w.-]+\.(?:dll|so)"
)


@check(TORCH_NOT_INSTALLED)
def torch_not_installed(fx: Facts) -> Iterator[Finding]:
    status = fx.str("torch.status")
    definite = status == "not-installed" or (status == "skipped" and fx.get("torch.installed") is False)
    # collect_env printed "PyTorch version: N/A" with no package list to tell (or one from the pip on
    # PATH, which may be another interpreter's): torch cannot be imported, and may well be absent.
    maybe = (
        fx.get("torch.importable") is False
        and (status is None or (status == "import-failed" and fx.bool("collect_env.pip_on_path") is True))
        and not search(fx, _TORCH_FOUND)  # the traceback runs inside a torch package: one was found
    )
    if not (definite or maybe):
        yield from _runtime_no_torch(fx)
        return
    py = fx.str("python.version")
    k = kb()
    release = None
    if k and py:
        release = k.newest_torch_for_python(py)
    variant = newest_variant_for_driver(release, driver_version(fx), os_family(fx)) if release else None
    cmd = f"{PIP} install torch torchvision"
    if variant:
        cmd += f" --index-url {INDEX}{variant}"
    title = f"PyTorch is not installed for {fx.str('python.executable') or 'this Python'}"
    cmds = [cmd]
    if not definite:
        listed = (fx.distribution("torch") or {}).get("version")
        title = "This Python cannot import torch, and it may not be installed for it" + (
            f" (torch {listed} is listed, by the pip/conda on PATH, which may be another Python's)" if listed else ""
        )
        cmds = ["python -c \"import torch\"  # the error says which: No module named 'torch' = not installed here", cmd]
    yield TORCH_NOT_INSTALLED.finding(
        title=title,
        severity="error" if definite else "warning",
        evidence={
            "python.executable": fx.str("python.executable"),
            "python.version": py,
            "nvml.driver_version": driver_version(fx),
            "torch.importable": fx.get("torch.importable"),
            "collect_env.pip_on_path": fx.get("collect_env.pip_on_path"),
        },
        fix=Fix(
            tuple(cmds),
            "Installing with `python -m pip` puts torch into the interpreter you run."
            + (f" {variant} is the newest CUDA variant your driver runs." if variant else ""),
        ),
    )


def _runtime_no_torch(fx: Facts) -> Iterator[Finding]:
    """The text shows "No module named 'torch'" raised by a program's import (a notebook cell, the prompt, `python -c`,
    a program's log) and no build output (kb/errors/torch10.json): the Python that ran it has no torch, most often
    because torch went into another environment (a notebook kernel, another conda env, the Microsoft Store Python).
    A warning: the facts do not say which Python ran."""
    if fx.get("torch.importable") is True or fx.str("torch.version") or search(fx, _TORCH_FOUND):
        return
    said = _torch10_row(fx, "no_torch_module")
    where = _torch10_row(fx, "runtime_import") if said else None
    if not (said and where):
        return
    yield TORCH_NOT_INSTALLED.finding(
        title="Likely: the Python that ran this has no torch (\"No module named 'torch'\" from a program's import, "
        "not from a build); torch went into another environment or kernel",
        severity="warning",
        evidence={f"{said[0]} (the error)": said[1], f"{where[0]} (where it ran)": where[1]},
        fix=Fix(
            (
                'python -c "import sys; print(sys.executable)"  # in a notebook: import sys; sys.executable',
                "python -m pip install torch torchvision --index-url "
                f"{INDEX}<cuXYZ for your driver: nvidia-smi shows its CUDA>  # with that same Python",
            ),
            "A notebook's kernel, an IDE or a launcher may run another Python than the one torch was installed into; "
            "installing with that interpreter's `python -m pip` (or selecting the kernel of the environment that has "
            "torch) puts torch where the program looks.",
        ),
    )


@check(TORCH_IMPORT_FAILED)
def torch_import_failed(fx: Facts) -> Iterator[Finding]:
    if fx.str("torch.status") != "import-failed":
        return
    err = fx.dict("torch.error") or {}
    how = err.get("how") or "raised"
    etype = str(err.get("type") or "Error")
    msg = str(err.get("message") or "").strip()
    first = msg.splitlines()[0][:300] if msg else ""
    if how == "crashed":
        title = f"`import torch` crashed the interpreter ({fx.str('torch.failure.how') or msg})"
    elif how == "hung":
        title = f"`import torch` hung: no answer after {fx.num('torch.failure.timeout_s') or '?'} s"
    else:
        title = f"`import torch` fails: {etype}: {first}" if first else f"`import torch` fails with {etype}"
    tb = str(err.get("traceback_tail") or "")
    evidence = {
        "torch.error.type": etype,
        "torch.error.message": msg[:1000],
        "how": how,
        "torch.location": fx.str("torch.location"),
    }
    if tb:
        evidence["traceback_tail"] = "\n".join(tb.strip().splitlines()[-8:])
    release = release_of(fx.str("torch.version")) or release_of((fx.distribution("torch") or {}).get("version"))
    pin = f"torch=={release}" if release else "torch"
    var = variant(fx)  # the same build again, from its own index (PyPI's wheel of a release is one variant)
    idx = f" --index-url {INDEX}{var}" if release and var and re.fullmatch(r"cu\d+|cpu|rocm[\d.]+|xpu", var) else ""
    cmds = [f"{PIP} uninstall -y torch", f"{PIP} install --no-cache-dir --force-reinstall {pin}{idx}"]
    if how == "hung":
        cmds = ['python -X importtime -c "import torch" 2>&1 | tail -20  # where it stalls'] + cmds
    yield TORCH_IMPORT_FAILED.finding(
        title=title,
        evidence=evidence,
        fix=Fix(
            tuple(cmds), "Other findings name a specific cause when there is one; a clean reinstall clears half-upgraded files."
        ),
    )


def _rocm_build_on_nvidia(fx: Facts) -> Iterator[Finding]:
    """A ROCm (AMD) build of torch on a machine with an NVIDIA GPU: it has no CUDA code, as a CPU build has none
    (an installer that saw an AMD iGPU and chose the ROCm wheel, a requirements file pinning +rocm)."""
    names = [str(d.get("name") or "") for d in fx.dicts("nvml.devices") + fx.dicts("torch.devices")]
    nvidia = nvidia_gpu_present(fx) is True or any(re.search(r"\bNVIDIA\b|GeForce|Quadro|Tesla|\bRTX\b", n) for n in names)
    if not nvidia or (not fx.str("nvml.driver_version") and not any("NVIDIA" in n for n in names)):
        return  # an NVIDIA GPU and its driver shown: a ROCm torch's devices alone could be AMD ones
    version = fx.str("torch.version") or ""
    release = release_of(version)
    variant = newest_variant_for_driver(release, driver_version(fx), os_family(fx))
    idx = f" --index-url {INDEX}{variant}" if variant else f" --index-url {INDEX}<cuXYZ for your driver>"
    yield CPU_ONLY_TORCH.finding(
        title=f"torch {version} is a ROCm (AMD) build, without CUDA, on a machine with an NVIDIA GPU",
        evidence={
            "torch.version": version,
            "torch.hip": fx.str("torch.hip"),
            "gpus": [d.get("name") for d in fx.dicts("nvml.devices")] or None,
        },
        fix=Fix(
            (
                f"{PIP} uninstall -y torch torchvision torchaudio",
                f"{PIP} install {'torch==' + release if release else 'torch'} torchvision{idx}",
            ),
            "ROCm builds run on AMD GPUs only; an NVIDIA GPU needs a CUDA build (an installer that saw an AMD iGPU may "
            "have chosen the ROCm wheel).",
        ),
    )


@check(CPU_ONLY_TORCH)
def cpu_only_torch(fx: Facts) -> Iterator[Finding]:
    if only_other_gpus(fx):
        return  # no NVIDIA GPU, only AMD / Intel / Apple ones (or a Mac): a CPU torch is not the fault (non-nvidia-gpu)
    said = error_match(fx, CPU_ONLY_TORCH)
    build = build_kind(fx)
    if build is None and _cpu_by_packages(fx):
        build = "cpu"  # the package lists show it: a +cpu torch, or conda's cpuonly / cpu-only selector installed
    if build == "rocm" and not said:
        yield from _rocm_build_on_nvidia(fx)
        return
    if build != "cpu":
        if said and build is None:
            # The program that failed imported a CPU build; the facts cannot say which torch that was.
            shown = said[1] if len(said[1]) <= 100 else said[1][:97] + "..."
            no_gpu = no_gpu_stated(fx, text_of(fx))
            if no_gpu:
                yield _cpu_build_on_gpu_less_machine(said, shown, no_gpu)
                return
            yield CPU_ONLY_TORCH.finding(
                title=f'The torch in use is a CPU-only build (the text shows it: "{shown}")',
                evidence={said[0]: said[1], "torch.version": fx.str("torch.version")},
                fix=Fix(
                    (
                        'python -c "import torch; print(torch.__version__, torch.version.cuda)"  # +cpu / None confirms it',
                        f"{PIP} uninstall -y torch torchvision torchaudio",
                        f"{PIP} install torch torchvision --index-url {INDEX}<cuXYZ for your driver: nvidia-smi shows its CUDA>",
                    ),
                    "Only a CUDA build of torch has GPU code; the error is raised by the CPU build.",
                ),
            )
        elif build is None and not said:
            found = (
                list(_jetson_generic_wheel(fx))
                or list(_aarch64_pypi_wheel(fx))
                or list(_windows_pypi_wheel(fx))
                or list(_cpu_build_named(fx))
                or list(_runs_on_cpu(fx))
            )
            yield from found[:1]
        return
    if _cpu_only_from_could_not_collect(fx) and _cuda_ran(fx):
        return  # "Could not collect" beside an error only CUDA code gives: the build is not shown to be CPU
    gpu = nvidia_gpu_present(fx)
    if gpu is False:
        return  # a CPU build on a machine without an NVIDIA GPU is the right build
    version = fx.str("torch.version") or (fx.distribution("torch") or {}).get("version")
    release = release_of(version)
    driver = driver_version(fx)
    variant = newest_variant_for_driver(release, driver, os_family(fx))
    pins = companion_pins(environment(fx), release)
    evidence = {
        "torch.version": version,
        "torch.cuda": None,
        "nvml.driver_version": driver,
        "gpus": [d.get("name") for d in fx.dicts("nvml.devices")] or None,
    }
    cmds: List[str]
    if installer(fx) == "conda":
        # the channel this env's torch came from, and what it publishes (checks/_installer.py, kb/installers.json)
        cmds = install_commands(environment(fx), release, variant)
        why = (
            "conda's CPU build is pinned by a selector package (cpuonly, pytorch-cpu); "
            "the CUDA build comes from the channel that publishes this release."
        )
    else:
        idx = f" --index-url {INDEX}{variant}" if variant else ""
        target = " ".join([f"torch=={release}" if release else "torch"] + pins)
        cmds = [f"{PIP} uninstall -y torch torchvision torchaudio", f"{PIP} install {target}{idx}"]
        why = (
            f"{variant} is the newest CUDA variant of torch {release} that driver {driver} runs."
            if variant
            else "Pick the CUDA index for your driver at https://pytorch.org/get-started/locally/."
        )
    yield CPU_ONLY_TORCH.finding(
        title=(f"torch {version} is a CPU-only build" if version else "The installed torch is a CPU-only build")
        + (" on a machine with an NVIDIA GPU" if gpu else " (could not tell whether this machine has an NVIDIA GPU)"),
        evidence=evidence,
        fix=Fix(tuple(cmds), why),
        severity="error" if gpu else "warning",
    )


def _cpu_build_on_gpu_less_machine(said: Tuple[str, str], shown: str, no_gpu: str) -> Finding:
    """A CPU torch that refused CUDA on a machine the report says has no GPU (session 21, detectron2#1416): the build is
    the right one there; the program asked for CUDA (its default device). A warning: run it on the CPU."""
    return CPU_ONLY_TORCH.finding(
        title=f'The torch in use is a CPU-only build ("{shown}"), and the report says this machine has no GPU: '
        "the program asked for CUDA; run it on the CPU",
        evidence={said[0]: said[1], "the report says": no_gpu},
        fix=Fix(
            (
                "# run the program on its CPU path: device='cpu' (detectron2: cfg.MODEL.DEVICE = 'cpu'; "
                "mmdet/mmpose demos: --device cpu; torch.load(..., map_location='cpu'))",
                "nvidia-smi -L  # an NVIDIA GPU listed here after all: then install a CUDA build of torch",
            ),
            "A CPU build of torch is the right one on a machine without an NVIDIA GPU; the program's default device is "
            "CUDA, which needs an NVIDIA GPU and a CUDA build.",
        ),
        severity="warning",
    )


def _cpu_by_packages(fx: Facts) -> bool:
    """The package lists name a CPU build: torch (pytorch, pytorch-nightly) listed as +cpu, or conda's selector
    package that pins CPU builds (cpuonly; cpu-only for the 2019 nightlies; Anaconda's defaults channel
    _pytorch_select in its cpu build, 0.1-cpu_0 / 1.0-cpu_2 beside 0.2-gpu_0 / 2.0-cuda_2) installed."""
    for name in ("torch", "pytorch", "pytorch-nightly"):
        v = (fx.distribution(name) or {}).get("version")
        if isinstance(v, str) and variant_of_tag(v) == "cpu":
            return True
    if str((fx.distribution("_pytorch_select") or {}).get("build") or "").lower().startswith("cpu"):
        return True
    return bool(fx.distribution("cpuonly") or fx.distribution("cpu-only") or fx.get("packages.conda.cpuonly"))


#: A Jetson named (the board, JetPack, L4T, the Tegra kernel): its GPU is integrated and CUDA comes with JetPack.
_JETSON = re.compile(r"\bjetson\b|\bjetpack\b|\bL4T\b|-tegra\b|\btegra\b", re.I)
#: NVIDIA's own Jetson builds of torch carry an ".nvYY.MM" / "+nvYY.MM" tag (the NGC / JetPack wheels).
_NV_BUILD = re.compile(r"[.+]nv\d{2}\.\d{2}", re.I)


def _jetson_generic_wheel(fx: Facts) -> Iterator[Finding]:
    """A Jetson, torch says CUDA is not available, and the torch is not one of NVIDIA's Jetson builds: the wheels
    that `pip install torch` gets on aarch64 (PyPI, pytorch.org's selector) carry no CUDA for the Jetson's
    integrated GPU (NVIDIA's "Installing PyTorch for Jetson Platform": install the JetPack wheel). A warning: a
    JetPack without CUDA, or a container without the runtime, also makes CUDA unavailable."""
    if fx.get("torch.cuda_available") is not False:
        return
    where = " ".join(x for x in (fx.str("system.os"), fx.str("system.distro"), fx.str("system.kernel")) if x)
    m = _JETSON.search(where) or _JETSON.search(fx.user_error() or "")
    if not m:
        return
    version = fx.str("torch.version") or (fx.distribution("torch") or {}).get("version")
    if version and _NV_BUILD.search(version):
        return  # NVIDIA's Jetson build: then the driver side (JetPack, the container runtime) is the suspect
    yield CPU_ONLY_TORCH.finding(
        title="Likely: on a Jetson, the torch installed with pip (PyPI's aarch64 wheel) has no CUDA for its "
        "integrated GPU; NVIDIA's JetPack build of torch is the one that does",
        evidence={"jetson": m.group(0), "torch.version": version, "torch.cuda_available": False},
        fix=Fix(
            (
                'python3 -c "import torch; print(torch.__version__, torch.version.cuda)"  # no .nvYY.MM tag / None: '
                "not NVIDIA's Jetson build",
                "cat /etc/nv_tegra_release  # the L4T release: pick the wheel built for its JetPack",
                f"{PIP} uninstall -y torch torchvision",
                f"{PIP} install <the torch wheel for your JetPack from "
                "https://developer.download.nvidia.com/compute/redist/jp/ (or a jetson-containers image)>",
            ),
            "The aarch64 torch on PyPI is built for servers, not for Jetson's integrated GPU and JetPack's CUDA; "
            "NVIDIA publishes Jetson builds per JetPack release (and per its Python: build from source for another).",
        ),
        severity="warning",
    )


_AARCH64 = re.compile(r"\b(?:aarch64|arm64|sbsa)\b", re.I)


def _aarch64_pypi_wheel(fx: Facts) -> Iterator[Finding]:
    """Linux on aarch64 (a Grace Hopper / Grace Blackwell / DGX Spark server, not a Jetson), a torch release without a
    local tag, whose PyPI wheel for linux-aarch64 is the CPU build (kb/torch_releases.json default_variant: CUDA
    dependencies only from 2.11): `pip install torch` got a CPU-only torch. A warning: the build is not shown."""
    where = " ".join(
        x for x in (fx.str("system.arch"), fx.str("system.os"), fx.str("system.distro"), fx.str("python.platform")) if x
    )
    if os_key(fx) in ("windows", "macos") or not _AARCH64.search(where) or _JETSON.search(where):
        return
    if fx.get("torch.cuda_available") is True or nvidia_gpu_present(fx) is False:
        return
    version = fx.str("torch.version") or (fx.distribution("torch") or {}).get("version")
    release = release_of(version)
    info = kb().torch_release(release) if release and not variant_of_tag(version) else None
    if not info or (info.get("default_variant") or {}).get("linux-aarch64") != "cpu":
        return
    cuda = [v for v in info.get("variants") or [] if v.startswith("cu")]
    yield CPU_ONLY_TORCH.finding(
        title=f"Likely: torch {version} from PyPI on Linux aarch64 is a CPU-only build (PyPI's aarch64 wheels carry "
        "CUDA only from torch 2.11); the CUDA builds for aarch64 come from the PyTorch index",
        evidence={
            "platform": where,
            "torch.version": version,
            "kb": f"torch {release}: PyPI's linux-aarch64 wheel is the CPU build",
        },
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__, torch.version.cuda)"  # None: the CPU build',
                f"{PIP} install --force-reinstall torch=={release} --index-url {INDEX}{cuda[-1] if cuda else '<cuXYZ>'}"
                "  # the PyTorch index's aarch64 CUDA wheel (for the GPU's driver: nvidia-smi), or torch 2.11+ from PyPI",
            ),
            "Before torch 2.11 the aarch64 wheels on PyPI were built without CUDA; the CUDA ones for aarch64 servers "
            "are on download.pytorch.org (Jetson: NVIDIA's JetPack builds instead).",
        ),
        severity="warning",
    )


#: The reporter's words for torch.cuda.is_available() being False: CUDA "not detected" / "not available" / "unavailable"
#: (and the Chinese 未检测到 / 检测不到 / 不可用), in one sentence after the word CUDA.
_CUDA_NOT_SEEN = re.compile(
    r"(?<![A-Za-z])cuda(?![A-Za-z])[^\n.。]{0,30}?(?:\bnot\s+(?:be\s+)?(?:detected|available)\b|\bunavailable\b|未检测到|检测不到|不可用)",
    re.I,
)


def _stated_on_cpu(fx: Facts) -> Optional[Tuple[str, str]]:
    """The reporter's words that the program runs on the CPU (kb/errors/torch-builds.json symptoms.runs_on_cpu), when the
    text is not about another GPU runtime (its "unless" list)."""
    row = kb_document("torch-builds.json").get("symptoms", {}).get("runs_on_cpu") or {}
    said = search(fx, row["regex"]) if row.get("regex") else None
    said = said or _said_row(fx, "program_on_cpu")  # or the program's own log (kb/errors/cpu8.json: Bark, SD.Next...)
    return None if not said or _other_runtime_only(fx) else said


def _other_runtime_only(fx: Facts) -> bool:
    """The text names another GPU runtime (kb/errors/torch-builds.json's runs_on_cpu "unless": ollama, TensorFlow,
    llama.cpp, onnxruntime...) and never torch: a "fell back to the CPU" there is not torch's."""
    row = kb_document("torch-builds.json").get("symptoms", {}).get("runs_on_cpu") or {}
    return bool(row.get("unless") and search(fx, row["unless"]) and not search(fx, r"(?<![A-Za-z])(?:py)?torch(?![A-Za-z])"))


def _windows_pypi_wheel(fx: Facts) -> Iterator[Finding]:
    """Windows, torch says CUDA is unavailable, and nothing shows its build: PyPI's Windows wheels are CPU-only builds
    (kb/torch_releases.json default_variant; the CUDA ones live on download.pytorch.org with a +cuXXX tag). A warning:
    a missing or old driver also makes CUDA unavailable. kb/errors/torch10.json adds the reporter's other words for
    "torch sees no CUDA" (is_available() False in any language, "torch has no CUDA", a switch to the CPU), "Windows"
    named in prose beside them, and a `pip install torch` line without a wheel index (PyPI's torch: on Windows, with an
    NVIDIA GPU named, the cause itself)."""
    # a `pip install torch` line with no wheel index: PyPI's torch, a CPU build on Windows (kb/errors/torch10.json)
    command = _torch10_row(fx, "pypi_torch_command")
    no_cuda = _torch10_row(fx, "torch_sees_no_cuda")  # torch.cuda.is_available() False, or a fall back to the CPU
    if os_family(fx) != "windows" and (
        fx.str("system.os")
        or not (_said_row(fx, "windows_signs") or ((command or no_cuda) and _torch10_row(fx, "windows_named")))
    ):
        return  # not Windows, or no OS stated and no Windows path / .bat launcher / win_amd64 wheel / "Windows" in the text
    seen = fx.get("torch.cuda_available") is None and (
        _CUDA_NOT_SEEN.search(fx.user_error() or "") or _said_row(fx, "no_gpu_fallback") or no_cuda or _stated_on_cpu(fx)
    )
    if fx.get("torch.cuda_available") is not False and not seen and not (command and nvidia_gpu_present(fx)):
        return
    if nvidia_gpu_present(fx) is False or of_facts(fx).matches:
        return
    version = fx.str("torch.version") or (fx.distribution("torch") or {}).get("version")
    if version and variant_of_tag(version):
        return
    if not version and _other_runtime_only(fx):
        return  # the text is about ollama, TensorFlow, llama.cpp...: their own builds decide, not a torch wheel
    said = seen if isinstance(seen, tuple) else None
    release = release_of(version)
    variant = newest_variant_for_driver(release, driver_version(fx), "windows") if release else None
    target = " ".join([f"torch=={release}" if release else "torch"] + companion_pins(environment(fx), release))
    idx = f"{INDEX}{variant}" if variant else f"{INDEX}<cuXYZ for your driver: nvidia-smi shows its CUDA>"
    yield CPU_ONLY_TORCH.finding(
        title=(
            f'Likely: on Windows, "{command[1][:80]}" installs PyPI\'s torch, a CPU-only build (no wheel index given)'
            if command
            else (
                "The program runs on the CPU on Windows"
                if said and said == _stated_on_cpu(fx)
                else "torch says CUDA is not available on Windows"
            )
            + " and torch's build is not shown: most often PyPI's torch, which is a CPU-only build on Windows"
        ),
        evidence={
            "os": fx.str("system.os"),
            "torch.version": version,
            "torch.cuda_available": fx.get("torch.cuda_available"),
            **({f"{command[0]} (install command)": command[1]} if command else {}),
            **({f"{said[0]} (torch sees no CUDA)": said[1]} if said else {}),
        },
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__, torch.version.cuda)"  # +cpu or None: a CPU build',
                f"{PIP} uninstall -y torch torchvision torchaudio",
                f"{PIP} install {target} --index-url {idx}",
            ),
            "On Windows, `pip install torch` from PyPI gets a CPU-only build; CUDA builds come from download.pytorch.org. "
            "If it prints a CUDA version, paste nvidia-smi's output instead: then the driver is the suspect.",
        ),
        severity="warning",
    )


def _torch10_row(fx: Facts, key: str) -> Optional[Tuple[str, str]]:
    """(where, text) of symptom row ``key`` of kb/errors/torch10.json (see torch_package.said_row)."""
    return _said_row(fx, key, "torch10.json")


def _cpu_build_named(fx: Facts) -> Iterator[Finding]:
    """The text names a CPU-only torch build as installed or about to be (a `+cpu` version, conda's `cpuonly` /
    `cpu-only` selector or a `_cpu_` build string, pip's CPU index: kb/errors/reader3.json), while the facts do not
    show which build is installed and no fact says this machine has no NVIDIA GPU: the likely cause, as a warning
    naming the line and the command that confirms it."""
    if nvidia_gpu_present(fx) is False:
        return
    rows = kb_document("reader3.json").get("symptoms", {})
    said = next(
        (s for s in (search(fx, rows[k]["regex"]) for k in ("cpu_build_named", "cpu_build_said") if k in rows) if s), None
    )
    if said is None and not of_facts(fx).matches:
        said = _said_row(fx, "cpu_build_words")  # the build's own name in other words (kb/errors/cpu8.json)
    if said is None:
        pasted = fx.dict("pasted.cpu_build") or {}
        if not pasted.get("text"):
            return
        said = (f"pasted text, line {pasted.get('line')}", str(pasted["text"]))
    shown = said[1] if len(said[1]) <= 120 else said[1][:117] + "..."
    yield CPU_ONLY_TORCH.finding(
        title=f'Likely: a CPU-only torch build (the text names one: "{shown}")',
        evidence={said[0]: said[1], "torch.version": fx.str("torch.version")},
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"'
                "  # with the program's own Python: +cpu / None confirms a CPU-only build",
                f"{PIP} uninstall -y torch torchvision torchaudio",
                f"{PIP} install torch torchvision --index-url {INDEX}<cuXYZ for your driver: nvidia-smi shows its CUDA>"
                "  # conda: drop cpuonly and install pytorch-cuda / a CUDA build instead",
            ),
            "A CPU build has no GPU code, so CUDA is unavailable whatever the driver. The line above names one as "
            "installed or about to be; the first command shows which build the program really imports.",
        ),
        severity="warning",
    )


def _runs_on_cpu(fx: Facts) -> Iterator[Finding]:
    """The user says the program runs on the CPU (kb/errors/torch-builds.json symptoms), nothing shows which torch
    is installed, no error signature matched and no fact says there is no NVIDIA GPU: the most common cause, as
    a warning with the command that settles it."""
    if nvidia_gpu_present(fx) is False or fx.str("torch.version") or fx.distribution("torch") or of_facts(fx).matches:
        return
    row = kb_document("torch-builds.json").get("symptoms", {}).get("runs_on_cpu")
    said = search(fx, row["regex"]) if row else None
    if not said or (row.get("unless") and search(fx, row["unless"])):
        said = _said_row(fx, "program_on_cpu")  # the program's log: the torch device it chose (kb/errors/cpu8.json)
    if not said:
        return  # no symptom, or the program is another runtime (ollama, TensorFlow, JAX...), not torch
    yield CPU_ONLY_TORCH.finding(
        title="The program runs on the CPU and nothing shows which torch is installed: most often a CPU-only torch build",
        evidence={said[0]: said[1], "torch.version": None},
        fix=Fix(
            (
                'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())"'
                "  # run it with the program's own Python: +cpu / None means a CPU-only build",
                f"{PIP} install --force-reinstall torch torchvision torchaudio --index-url {INDEX}<cuXYZ for your driver: "
                "nvidia-smi shows its CUDA>  # only if it printed +cpu / None",
            ),
            "Only a CUDA build of torch has GPU code; a CPU build runs everything on the CPU without an error. "
            "If it prints a CUDA version and False, paste that and nvidia-smi's output instead.",
        ),
        severity="warning",
    )


def _cpu_only_from_could_not_collect(fx: Facts) -> bool:
    """Is the CPU build read from collect_env's "CUDA used to build PyTorch: Could not collect" alone
    (no +cpu tag, no literal None, no CPU build string in the package lists)?"""
    said = (fx.dict("collect_env.fields") or {}).get("CUDA used to build PyTorch")
    if not isinstance(said, str) or said.strip().lower() not in ("could not collect", "could not collect."):
        return False
    return variant_of_tag(fx.str("torch.version")) is None


def _cuda_ran(fx: Facts) -> bool:
    """Does anything show that CUDA code of this torch ran: torch saw CUDA, or the error is one only a CUDA
    build raises (no kernel image / sm_XX not compatible, the driver-version check, cuDNN's errors)?"""
    if fx.bool("torch.cuda_available"):
        return True
    from .arch import GPU_ARCH_UNSUPPORTED
    from .driver_compat import DRIVER_TOO_OLD
    from .libraries import CUDNN_MISMATCH

    return any(error_match(fx, c) for c in (GPU_ARCH_UNSUPPORTED, DRIVER_TOO_OLD, CUDNN_MISMATCH))


def _inside(path: str, folder: str) -> bool:
    p, f = path.replace("\\", "/").rstrip("/"), folder.replace("\\", "/").rstrip("/")
    return p == f or p.startswith(f + "/")


#: The file that shadows a module, as the matched text names it: a frame running X.py, Python's "cannot import name
#: 'Y' from 'X' (<path>/X.py)", Python 3.13's "consider renaming '<path>/X.py'" (task ext6).
_OWN_FILE = re.compile(
    r"(?:^|[/\\\s\"])(\w+)\.py\", line \d+|cannot import name '\w+' from '(\w+)' \(|consider renaming '(?:[^'\n]*[/\\])?(\w+)\.py'"
)


@check(LOCAL_SHADOW)
def shadowed_by_local_file(fx: Facts) -> Iterator[Finding]:
    cwd = fx.str("python.cwd")
    torch_loc = fx.str("torch.location") or ""
    for sh in fx.dicts("python.cwd_shadows"):
        name, entry, path = sh.get("name"), sh.get("entry"), sh.get("path")
        if not isinstance(name, str) or not isinstance(entry, str):
            continue
        if name == "torch" and cwd and torch_loc and _inside(torch_loc, cwd):
            continue  # the torch in use *is* the one in this directory (a source build, or run from site-packages)
        source_tree = bool(sh.get("pytorch_source_tree"))
        if source_tree:
            title = f"This is a PyTorch source checkout: `import {name}` here finds ./{entry}/, not the installed torch"
            cmds = ["cd ..  # or any directory outside the source tree, then run your program from there"]
            why = "Run Python outside the checkout, or build it (`python setup.py develop`) if you mean to use it."
        elif sh.get("kind") == "module":
            new = f"{name}_local.py"
            title = f"./{entry} in the working directory is imported instead of the installed {name}"
            cmds = [f"mv {entry} {new}  # any name that is not a package's", f"rm -f __pycache__/{name}.*.pyc"]
            why = f"Python imports ./{entry} first in this directory; rename it (and whatever imports it by that name)."
        else:
            title = f"./{entry}/ in the working directory is imported instead of the installed {name}"
            cmds = [f"mv {entry} {name}_local  # or run your program from another directory"]
            why = f"./{entry}/ has an __init__.py, so it is a package that Python finds before site-packages."
        yield LOCAL_SHADOW.finding(
            title=title,
            evidence={"python.cwd": cwd, "shadow": path, "kind": sh.get("kind"), "torch.location": torch_loc or None},
            fix=Fix(tuple(cmds), why),
        )
        return
    said = error_match(fx, LOCAL_SHADOW)
    if said and re.search(r"[/\\](?:site|dist)-packages[/\\]torch[/\\]__init__\.py", said[1]):
        said = None  # Python names the module's file: the installed torch itself (a circular import inside torch)
    own = _OWN_FILE.search(said[1]) if said else None
    name = next((g for g in own.groups() if g), "") if own else ""
    if said and name and name != "torch" and not name.startswith("__") and not fx.dicts("python.cwd_shadows"):
        # the user's own X.py imported for the module X (kb/errors/ext6.json, task ext6)
        yield LOCAL_SHADOW.finding(
            title=f"Your own {name}.py is imported instead of Python's or a package's module {name!r}: rename it",
            evidence={said[0]: said[1], "shadowing_file": f"{name}.py"},
            fix=Fix(
                (f"mv {name}.py my_{name}.py && rm -rf __pycache__/{name}.*.pyc  # any name no module has",),
                f"Python puts the script's folder first on sys.path, so every `import {name}` (torch's own too) gets "
                "this file instead of the real module.",
            ),
        )
        return
    if said and not fx.dicts("python.cwd_shadows"):
        # The program that failed saw a torch without torch's contents; the facts come from elsewhere.
        yield LOCAL_SHADOW.finding(
            title="The torch your program imported is not PyTorch: most likely a torch.py or torch/ beside your script",
            evidence={said[0]: said[1]},
            fix=Fix(
                (
                    'python -c "import torch; print(torch.__file__)"  # run where your program runs: a path '
                    "outside site-packages is the culprit",
                ),
                "Rename the file or folder named torch (or numpy) next to your script, and its __pycache__ entry.",
            ),
            severity="warning",
        )


# --- round 6: paste6 ---

INSTALL_COMMAND_NAMES_MISSING_WHEEL = Code(
    code="install-command-names-missing-wheel",
    title="The install command pins a torch build (a +cuXXX / +cpu local version) that the index it searched does not have",
    area="torch",
    severity="error",
    explanation={
        "what": 'pip answers "Could not find a version that satisfies the requirement torch==X+cuXXX (from versions: '
        '...)" / "No matching distribution found for torch==X+cuXXX" while its candidate list holds release X '
        "itself: the release exists for this Python and platform, the build the command names does not.",
        "why": "A local version tag (+cu118, +cpu) names one build of a release. PyPI never hosts such builds (its "
        "list shows plain versions only), so without the PyTorch index (`--index-url "
        "https://download.pytorch.org/whl/cuXXX`, or `-f https://download.pytorch.org/whl/torch_stable.html` for "
        "old releases) pip cannot find it; and a CUDA variant is published only for some releases and platforms "
        "(a requirements file, a README or an installer generator naming a variant that was never built for this "
        "OS fails the same way).",
        "confirm": "pip's candidate list (from versions: ...) contains X but not X+cuXXX; "
        "`pip download torch==X+cuXXX --no-deps --index-url https://download.pytorch.org/whl/cuXXX` finds it or not.",
        "fix": "Give pip the PyTorch index for that variant, or pin a variant that pip's list (or the index's "
        "listing) shows for this release.",
    },
    links=(
        "https://pytorch.org/get-started/previous-versions/",
        "https://packaging.python.org/en/latest/specifications/version-specifiers/#local-version-identifiers",
        "https://github.com/Nerogar/OneTrainer/issues/138",
        "https://github.com/OpenSQZ/MiniCPM-V-CookBook/issues/40",
    ),
)

#: pip's two sentences (pip/_internal/index/package_finder.py) for a torch-family requirement pinned to a local
#: version, with the candidate list pip saw when it printed one.
#: uv's resolver says it as "Because there is no version of torch==2.4.0+cu124 and ...". pip names a requirements
#: file's line before its list: "(from -r requirements.txt (line 1)) (from versions: ...)".
_PIP_LOCAL_PIN = re.compile(
    r"(?:satisfies the requirement|No matching distribution found for|there is no version of)\s+"
    r"(?P<pkg>torch|torchvision|torchaudio)"
    r"\s*===?\s*(?P<rel>\d+(?:\.\d+){1,2})\+(?P<tag>cu\d{2,3}|cpu|rocm[\d.]+)\b"
    r"(?:[^\n(]{0,40}(?:\(from -r [^\n()]*(?:\(line \d+\))?\)\s*)?\(from versions:\s*(?P<list>[^)]*)\))?",
    re.IGNORECASE,
)


def _never_published_finding(line: str, rel: str, tag: str, patches: List[str]) -> Finding:
    """torch==X+tag where the series never had patch X: the newest patch of the series, with the build asked for if
    that series has it, else its newest CUDA build."""
    series = kb().torch_release(rel) or {}
    variants = [v for v in series.get("variants") or [] if v.startswith("cu")]
    newest = patches[-1]  # kb.torch_patches lists them in order
    pick = tag if tag in variants or tag == "cpu" else (variants[-1] if variants else None)
    cmd = f"{PIP} install torch=={newest}" + (f"+{pick} --extra-index-url {INDEX}{pick}" if pick else "")
    if pick and pick != tag:
        cmd += f"  # {series.get('series', rel)} has no {tag} build; its CUDA builds: {', '.join(variants)}"
    return INSTALL_COMMAND_NAMES_MISSING_WHEEL.finding(
        title=f"The install command asks for torch=={rel}+{tag}, a release that was never published "
        f"(the {series.get('series', rel)} series is {', '.join(patches)})",
        evidence={"user_error": line, "released_patches": patches, "cuda_variants": variants or None},
        fix=Fix(
            (cmd,),
            "pip can only install releases that were published; a README or requirements file naming another is a typo.",
        ),
    )


def _release_never_published(text: str) -> Optional[Finding]:
    """The finding when pip was asked for a torch patch release the kb's table (torch_releases.json: every patch of
    each series) says never existed, e.g. torch==1.11.1+cu111 (the 1.11 series is 1.11.0 only); None otherwise."""
    for m in _PIP_LOCAL_PIN.finditer(text):
        rel, pkg = m.group("rel"), m.group("pkg").lower()
        if pkg != "torch" or len(rel.split(".")) != 3:
            continue
        patches = kb().torch_patches(rel)
        if patches and rel not in patches:
            return _never_published_finding(m.group(0).strip(), rel, m.group("tag").lower(), patches)
    return None


def _local_pin_missing(text: str):
    """(sentence, package, release, tag, tags listed for the release) when pip's candidate list holds the pinned
    release but not the pinned local build; None otherwise (no list, or the release itself is missing: then the
    interpreter or platform is the question, python-unsupported)."""
    for m in _PIP_LOCAL_PIN.finditer(text):
        lst = m.group("list")
        if not lst:
            continue
        seen = [v.strip() for v in lst.split(",") if v.strip()]
        rel, tag = m.group("rel"), m.group("tag").lower()
        same = [v for v in seen if v.split("+")[0] in (rel, rel + ".0") or rel in (v.split("+")[0] + ".0",)]
        if not same or any(v.lower() == f"{rel}+{tag}" for v in seen):
            continue
        tags = sorted({v.split("+", 1)[1] for v in same if "+" in v})
        return m.group(0).strip(), m.group("pkg").lower(), rel, tag, tags
    return None


@check(INSTALL_COMMAND_NAMES_MISSING_WHEEL)
def install_command_names_missing_wheel(fx: Facts) -> Iterator[Finding]:
    """pip's candidate list shows the pinned release but not the pinned build (+cuXXX / +cpu)."""
    text = fx.user_error() or ""
    if os_key(fx) == "macos" and re.search(r"\+cu\d{2,3}\b", text):
        return  # no CUDA build exists for macOS at all: python-unsupported (platform.py) says so
    got = _local_pin_missing(text)
    if not got:
        never = _release_never_published(text)
        yield from [never] if never else _local_pin_python_fits(fx, text)
        return
    line, pkg, rel, tag, tags = got
    if tags:
        why = (
            f"The index pip searched has {pkg} {rel} only as " + ", ".join(f"+{t}" for t in tags) + f": no +{tag} "
            "build of it was published for this platform and Python. Pin one of the listed builds."
        )
        cmd = f"{PIP} install {pkg}=={rel}+{tags[-1]}  # with the same -f / --index-url as the failing command"
    else:
        why = (
            f"pip's list shows {pkg} {rel} without local tags: it searched PyPI, which hosts no +{tag} builds. "
            "Builds with a local tag come from the PyTorch index."
        )
        cmd = f"{PIP} install {pkg}=={rel}+{tag} --extra-index-url {INDEX}{tag}"
    yield INSTALL_COMMAND_NAMES_MISSING_WHEEL.finding(
        title=f"The install command asks for {pkg}=={rel}+{tag}, which the index pip searched does not have "
        f"({pkg} {rel} itself is there)",
        evidence={"user_error": line, "listed_builds_of_release": tags or None},
        fix=Fix((cmd,), why),
    )


#: The text names the PyTorch index (an --index-url / -f / requirements line): pip searched it, not PyPI alone.
_PYTORCH_INDEX = re.compile(r"download\.pytorch\.org", re.IGNORECASE)


def _local_pin_not_on_pypi(ms: List["re.Match[str]"], text: str) -> Iterator[Finding]:
    """No candidate list and no Python version, but the pin is a build the PyTorch index publishes (kb's
    torch_releases.json variants) and the text names no PyTorch index: pip searched PyPI (or a mirror of it), which
    never hosts +cuXXX builds. A warning: pip's list would tell for sure."""
    if _PYTORCH_INDEX.search(text):
        return
    for m in ms:
        rel, tag = m.group("rel"), m.group("tag").lower()
        info = kb().torch_release(rel) if m.group("pkg").lower() == "torch" else None
        if not info or tag not in info["variants"]:
            continue
        yield INSTALL_COMMAND_NAMES_MISSING_WHEEL.finding(
            title=f"Likely: torch=={rel}+{tag} is published only on the PyTorch index, and the install searched PyPI "
            "(or a mirror of it), which hosts no +cuXXX builds",
            evidence={"user_error": m.group(0).strip(), "kb": f"torch {rel} has a {tag} build on {INDEX}{tag}"},
            fix=Fix(
                (
                    f"{PIP} install torch=={rel}+{tag} --extra-index-url {INDEX}{tag}"
                    "  # or: put --extra-index-url on the requirements file's first line",
                ),
                "A local version tag (+cu121) names a build that only the PyTorch index hosts; pip looks there only "
                "when told to.",
            ),
            severity="warning",
        )
        return


def _local_pin_python_fits(fx: Facts, text: str) -> Iterator[Finding]:
    """No candidate list, but pip found nothing for a torch pin with a local tag while the kb says that release has
    wheels for this Python on this OS (kb/python_wheels.json): the build the command names, or the index it
    searched, is the question, not the interpreter. A warning: pip's list would tell which."""
    py = fx.str("python.version")
    ms = list(_PIP_LOCAL_PIN.finditer(text))
    if any(m.group("list") is not None for m in ms) or "(from versions:" in text:
        return  # pip's own list is the better witness (read above, or by python-unsupported)
    if not py:
        yield from _local_pin_not_on_pypi(ms, text)
        return
    for m in ms:
        if m.group("list") is not None or m.group("pkg").lower() != "torch":
            continue
        rel, tag = m.group("rel"), m.group("tag").lower()
        plat = "windows" if os_family(fx) == "windows" else "linux-x86_64"
        minor = ".".join(py.split(".")[:2])
        if kb().python_supported(rel, minor, plat) is not True:
            return
        yield INSTALL_COMMAND_NAMES_MISSING_WHEEL.finding(
            title=f"Likely: torch {rel} has wheels for Python {minor} on this OS, but not as +{tag} on the index pip "
            "searched (PyPI has no +cuXXX builds; the PyTorch index has each variant only for some releases)",
            evidence={"user_error": m.group(0).strip(), "python.version": py, "kb": f"torch {rel} supports Python {minor}"},
            fix=Fix(
                (
                    f"{PIP} install torch=={rel}+{tag} --extra-index-url {INDEX}{tag} -v  # pip lists what it finds",
                    f"{PIP} index versions torch --index-url {INDEX}{tag}  # the builds that index has",
                ),
                "Pin a variant the PyTorch index publishes for this release and OS, and give pip that index.",
            ),
            severity="warning",
        )
        return


def register():
    return [
        torch_not_installed,
        torch_import_failed,
        cpu_only_torch,
        shadowed_by_local_file,
        install_command_names_missing_wheel,
    ]
