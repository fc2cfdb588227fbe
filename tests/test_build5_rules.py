"""Round 5 of the build-log rules (kb/errors/build5.json, checks/builds.py, checks/extensions.py) on real public texts
(not the blind batches'): nvcc's unknown -arch value, ptxas under any of its names, xFormers' built-for line without
its CUDA part, a relative torch/__init__.py frame, `nvcc: not found` in a build while nvcc works for the user, and a
"GPU too old" error with triton on a GPU below triton's minimum."""

from __future__ import annotations

import re
from typing import Any, Dict, List

import pytest

from cudadoctor import registry
from cudadoctor.errortext import kb_document
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose


def _sig(code: str) -> List[re.Pattern]:
    return [re.compile(s["regex"]) for s in kb_document("build5.json")["signatures"] if s["code"] == code]


def _hit(code: str, text: str) -> bool:
    return any(rx.search(text) for rx in _sig(code))


def test_every_build5_signature_has_sources_and_compiles():
    doc = kb_document("build5.json")
    assert doc["checked"]
    for s in doc["signatures"]:
        re.compile(s["regex"])
        assert len(s["sources"]) >= 2 and all(u.startswith("https://") for u in s["sources"])


@pytest.mark.parametrize(
    "text",
    [
        "nvcc fatal   : Value 'sm_89' is not defined for option 'gpu-architecture'",  # pycuda#440
        "nvcc fatal : Value 'sm_80' is not defined for option 'gpu-architecture'",  # amazon-science/FeatGraph#12
    ],
)
def test_nvcc_unknown_real_arch(text: str) -> None:
    assert _hit("toolkit-arch-unsupported", text)
    assert not _hit("toolkit-arch-unsupported", "nvcc fatal : value 'arch' is not defined for option 'gpu-architecture'")


def test_ptxas_under_any_name() -> None:
    assert _hit("ptxas-arch-unsupported", "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'")  # triton#8539
    assert _hit("ptxas-arch-unsupported", "ptxas-blackwell fatal   : Value 'sm_110a' is not defined for option 'gpu-name'")


def test_xformers_built_for_with_and_without_cuda_part() -> None:
    # deforum/deforum-stable-diffusion#377 (with the CUDA part); the same line as xformers#874 quotes it, without
    assert _hit(
        "extension-abi-mismatch", "xFormers was built for:\n    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.3.0+cu121)"
    )
    assert _hit("extension-abi-mismatch", "xFormers was built for: PyTorch 2.0.1 (you have 2.1.0+cu121)")
    # open-mmlab/PIA#30: a CPU-only torch is another cause
    assert not _hit(
        "extension-abi-mismatch", "xFormers was built for:\n    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)"
    )


def test_relative_torch_frame_is_a_local_checkout() -> None:
    text = (  # pytorch/pytorch#574
        '  File "<stdin>", line 1, in <module>\n  File "torch/__init__.py", line 45, in <module>\n'
        "    from torch._C import *\nImportError: No module named _C"
    )
    assert _hit("shadowed-by-local-file", text)
    installed = (  # the installed package's frame is an absolute path: not shadowing
        '  File "/usr/lib/python3/site-packages/torch/__init__.py", line 45, in <module>\nImportError: No module named _C'
    )
    assert not _hit("shadowed-by-local-file", installed)


REG = registry.load(plugins=False)


def _got(text: str, **more: Any) -> Dict[str, Any]:
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    facts.update(more)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def test_nvcc_not_found_while_nvcc_works_for_the_user() -> None:
    # cudamat/cudamat#98's pattern without the sudo line: the build cannot find nvcc, `nvcc --version` works
    got = _got(
        "unable to execute 'nvcc': No such file or directory\n$ nvcc --version\nCuda compilation tools, release 9.0, V9.0.176"
    )
    assert got["sudo-resets-path-nvcc-not-found"].severity == "warning"
    # the same line with sudo on the command: the signature's error
    got = _got("$ sudo python setup.py install\nunable to execute 'nvcc': No such file or directory")
    assert got["sudo-resets-path-nvcc-not-found"].severity == "error"
    # a Docker image without the toolkit (a runtime image): nvcc is nowhere, nothing shows it working
    assert "sudo-resets-path-nvcc-not-found" not in _got("RUN nvcc --version\n/bin/sh: 1: nvcc: not found")
    # a malformed CUDA_HOME shows as a path: cuda-home-malformed's, not this
    got = _got("/bin/sh: 1: :/usr/local/cuda/bin/nvcc: not found\nCuda compilation tools, release 11.8, V11.8.89")
    assert "sudo-resets-path-nvcc-not-found" not in got and "cuda-home-malformed" in got


def test_gpu_too_old_with_triton_below_its_minimum() -> None:
    gpu = {"nvml": {"status": "ok", "device_count": 1, "devices": [{"index": 0, "name": "Tesla P100-PCIE-16GB"}]}}
    pk = {"packages": {"complete": True, "distributions": [{"name": "triton", "version": "3.1.0", "installer": "pip"}]}}
    got = _got("Unsloth: Your GPU is too old!", **gpu, **pk)
    assert got["ptxas-arch-unsupported"].severity == "warning"
    # torch's own refusal is gpu-arch-unsupported's
    torch_own = "Found GPU0 Tesla P100-PCIE-16GB which is of cuda capability 6.0. PyTorch no longer supports this GPU because it is too old."
    assert "ptxas-arch-unsupported" not in _got(torch_own, **gpu, **pk)
    # no triton: nothing
    assert "ptxas-arch-unsupported" not in _got("Unsloth: Your GPU is too old!", **gpu)


def test_libtorch_linked_with_an_older_toolkit_cudart() -> None:
    # pytorch/pytorch#73829: linking the libtorch example with the local toolkit's libcudart, older than libtorch's CUDA
    line = (
        "/home/me/libtorch/lib/libtorch_cuda_cpp.so: undefined reference to "
        "`cudaStreamUpdateCaptureDependencies@libcudart.so.11.0'"
    )
    got = _got(line, torch={"version": "1.11.0+cu113", "cuda": "11.3"}, toolkit={"nvcc_version": "11.2"})
    assert got["cuda-toolkit-mismatch"].severity == "warning"
    # the same versions with nothing being built or linked: only worth knowing (info), not a cause
    got = _got(
        "RuntimeError: CUDA error: out of memory",
        torch={"version": "1.11.0+cu113", "cuda": "11.3"},
        toolkit={"nvcc_version": "11.2"},
    )
    assert "cuda-toolkit-mismatch" not in got


def test_no_torch_while_pip_shows_torch_installed() -> None:
    # Wan-Video/Wan2.2#344: pip says torch is there, then flash_attn's build cannot import it (pip's isolated build)
    text = (
        "Requirement already satisfied: torch>=2.4.0 in /home/u/miniconda3/envs/ai/lib/python3.12/site-packages "
        "(from -r requirements.txt (line 1)) (2.10.0)\n"
        "Collecting flash_attn\n"
        "      ModuleNotFoundError: No module named 'torch'"
    )
    assert "extension-build-isolation" in _got(text)
    # nothing shows torch installed: torch may truly be missing, so no build-isolation claim from these words alone
    assert "extension-build-isolation" not in _got("import torch\nModuleNotFoundError: No module named 'torch'")


def test_one_pip_run_with_torch_and_a_package_built_against_it() -> None:
    # a constructed line of the class (LongCat-Video PR #135 and Emu3#5 describe it: torch and flash-attn in one
    # requirements.txt, flash-attn built before torch is there)
    text = "pip install -r requirements.txt (torch==2.6.0 and flash-attn==2.7.4.post1): Failed to build flash-attn"
    assert _got(text)["extension-build-isolation"].severity == "warning"
    assert "extension-build-isolation" not in _got(
        "pip install -r requirements.txt (torch==2.6.0 and pandas==2.2.0): Failed to build pandas"
    )
