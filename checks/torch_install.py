"""Is torch installed, does it import, and is it a build that can use a GPU at all?"""

from __future__ import annotations

from typing import Iterator, List

from cudadoctor.facts import Facts
from cudadoctor.model import Code, Finding, Fix, check

from ._common import (INDEX, PIP, companion_pins, driver_version, find_text, installer, kb, nvidia_gpu_present,
                      newest_variant_for_driver, os_family, release_of, torch_build)

TORCH_NOT_INSTALLED = Code(
    code="torch-not-installed",
    title="PyTorch is not installed in this Python environment",
    area="torch",
    severity="error",
    explanation={
        "what": "The interpreter being diagnosed cannot find a `torch` package.",
        "why": "Usually torch went into another environment (another venv, conda env, or the "
        "system Python), or `pip` and `python` on PATH belong to different interpreters.",
        "confirm": "`python -c \"import sys; print(sys.executable)\"` and `python -m pip show torch`.",
        "fix": "Install torch with the same interpreter: `python -m pip install torch`, choosing the "
        "wheel index for your driver.",
    },
    links=("https://pytorch.org/get-started/locally/",),
    signatures=(r"No module named '?torch'?(?!\w)",),
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
        "confirm": "`python -c \"import torch\"` shows the same error; the evidence has the "
        "exception and the end of its traceback.",
        "fix": "Fix the root cause named by the other findings; otherwise reinstall torch cleanly "
        "in a fresh environment.",
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
        "raises \"Torch not compiled with CUDA enabled\", whatever the driver.",
        "confirm": "`python -c \"import torch; print(torch.__version__, torch.version.cuda)\"` prints "
        "`+cpu` or `None`.",
        "fix": "Reinstall the same release from the CUDA wheel index that your driver supports "
        "(the exact command is in the finding).",
    },
    links=("https://pytorch.org/get-started/locally/", "https://pytorch.org/get-started/previous-versions/"),
    signatures=(r"Torch not compiled with CUDA enabled", r"CUDA used to build PyTorch: None"),
)


@check(TORCH_NOT_INSTALLED)
def torch_not_installed(fx: Facts) -> Iterator[Finding]:
    if fx.str("torch.status") != "not-installed" and not (
        fx.str("torch.status") == "skipped" and fx.get("torch.installed") is False
    ):
        return
    py = fx.str("python.version")
    k = kb()
    release = None
    if k and py:
        try:
            release = k.newest_torch_for_python(py)
        except Exception:
            release = None
    variant = newest_variant_for_driver(release, driver_version(fx), os_family(fx)) if release else None
    cmd = f"{PIP} install torch torchvision"
    if variant:
        cmd += f" --index-url {INDEX}{variant}"
    yield TORCH_NOT_INSTALLED.finding(
        title=f"PyTorch is not installed for {fx.str('python.executable') or 'this Python'}",
        evidence={"python.executable": fx.str("python.executable"), "python.version": py,
                  "nvml.driver_version": driver_version(fx)},
        fix=Fix((cmd,), "Installing with `python -m pip` puts torch into the interpreter you run."
                + (f" {variant} is the newest CUDA variant your driver runs." if variant else "")),
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
    evidence = {"torch.error.type": etype, "torch.error.message": msg[:1000], "how": how,
                "torch.location": fx.str("torch.location")}
    if tb:
        evidence["traceback_tail"] = "\n".join(tb.strip().splitlines()[-8:])
    release = release_of(fx.str("torch.version")) or release_of((fx.distribution("torch") or {}).get("version"))
    pin = f"torch=={release}" if release else "torch"
    cmds = [f"{PIP} uninstall -y torch", f"{PIP} install --no-cache-dir --force-reinstall {pin}"]
    if how == "hung":
        cmds = ["python -X importtime -c \"import torch\" 2>&1 | tail -20  # where it stalls"] + cmds
    yield TORCH_IMPORT_FAILED.finding(
        title=title,
        evidence=evidence,
        fix=Fix(tuple(cmds), "Other findings name a specific cause when there is one; a clean reinstall clears half-upgraded files."),
    )


@check(CPU_ONLY_TORCH)
def cpu_only_torch(fx: Facts) -> Iterator[Finding]:
    said = find_text(fx, CPU_ONLY_TORCH.signatures[0])
    build = torch_build(fx)
    if build != "cpu":
        if said and build is None:
            # The program that failed imported a CPU build; the facts cannot say which torch that was.
            yield CPU_ONLY_TORCH.finding(
                title="The torch that raised this error is a CPU-only build (\"Torch not compiled with CUDA enabled\")",
                evidence={said[0]: said[1], "torch.version": fx.str("torch.version")},
                fix=Fix(("python -c \"import torch; print(torch.__version__, torch.version.cuda)\"  # +cpu / None confirms it",
                         f"{PIP} uninstall -y torch torchvision torchaudio",
                         f"{PIP} install torch torchvision --index-url {INDEX}<cuXYZ for your driver: nvidia-smi shows its CUDA>"),
                        "Only a CUDA build of torch has GPU code; the error is raised by the CPU build."),
            )
        return
    gpu = nvidia_gpu_present(fx)
    if gpu is False:
        return  # a CPU build on a machine without an NVIDIA GPU is the right build
    version = fx.str("torch.version") or (fx.distribution("torch") or {}).get("version")
    release = release_of(version)
    driver = driver_version(fx)
    variant = newest_variant_for_driver(release, driver, os_family(fx))
    pins = companion_pins(fx, release)
    evidence = {"torch.version": version, "torch.cuda": None, "nvml.driver_version": driver,
                "gpus": [d.get("name") for d in fx.dicts("nvml.devices")] or None}
    cmds: List[str]
    if installer(fx) == "conda":
        cuda = f"{variant[2:-1]}.{variant[-1]}" if variant and variant.startswith("cu") else "12.1"
        cmds = ["conda remove --force cpuonly",
                f"conda install pytorch=={release or '<version>'} {' '.join(p.replace('==', '==') for p in pins)} pytorch-cuda={cuda} -c pytorch -c nvidia".replace("  ", " ")]
        why = "conda's cpuonly package pins the CPU build; the pytorch-cuda package selects the CUDA build."
    else:
        idx = f" --index-url {INDEX}{variant}" if variant else ""
        target = " ".join([f"torch=={release}" if release else "torch"] + pins)
        cmds = [f"{PIP} uninstall -y torch torchvision torchaudio",
                f"{PIP} install {target}{idx}"]
        why = (f"{variant} is the newest CUDA variant of torch {release} that driver {driver} runs."
               if variant else "Pick the CUDA index for your driver at https://pytorch.org/get-started/locally/.")
    yield CPU_ONLY_TORCH.finding(
        title=f"torch {version or ''} is a CPU-only build" + (" on a machine with an NVIDIA GPU" if gpu else
                                                             " (could not tell whether this machine has an NVIDIA GPU)"),
        evidence=evidence,
        fix=Fix(tuple(cmds), why),
        severity="error" if gpu else "warning",
    )


def register():
    return [torch_not_installed, torch_import_failed, cpu_only_torch]
