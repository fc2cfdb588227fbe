"""Task ext6 (issue 21, round 6): classes covered from their sources, checked on real texts they were not written from.

Each text is a real thread's line (tests/data/error_corpus/ext6.jsonl, with its URL); none comes from the blind batches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from typing import Any, Dict

from cudadoctor import registry
from cudadoctor.checks.ext6 import _first_torch
from cudadoctor.errortext.signatures import kb_document
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)


def _got(text: str, **more: Any) -> Dict[str, Any]:
    facts = new_facts("collect_env")
    facts["user_error"] = {"text": text}
    facts.update(more)
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def codes_for_text(text: str) -> set:
    return set(_got(text))


CORPUS = Path(__file__).parent / "data" / "error_corpus" / "ext6.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("case", CASES, ids=[c["source"].rsplit("/", 2)[-2] + "-" + c["code"] for c in CASES])
def test_real_text_gives_its_class(case):
    assert case["code"] in codes_for_text(case["text"])


@pytest.mark.parametrize(
    "text",
    [
        # torch's own arch sentences are gpu-arch-unsupported, Triton's ptxas-arch-unsupported, bf16 gpu-lacks-bf16
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
        "GPUTooOldForTriton: Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, "
        "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of "
        "CUDA capability 6.0",
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
        "compute capability 7.5.",
        "nvcc fatal   : Unsupported gpu architecture 'compute_89'",
        "TensorFlow was not built with CUDA kernel binaries compatible with compute capability 8.6. CUDA kernels will "
        "be jit-compiled from PTX, which could take 30 minutes or longer.",
    ],
)
def test_other_owners_sentences_are_not_a_companion(text):
    assert "companion-arch-unsupported" not in codes_for_text(text)


def test_compile_table_has_sources_and_grows():
    doc = kb_document("ext6.json")["torch_compile_python"]
    assert doc["sources"] and doc["checked"]
    table = _first_torch()
    order = [tuple(int(x) for x in table[p].split(".")) for p in sorted(table, key=lambda p: int(p.split(".")[1]))]
    assert order == sorted(order)  # a newer Python never needs an older torch


def test_compile_finding_names_the_release():
    got = _got("RuntimeError: Dynamo is not supported on Python 3.13+")
    f = got["torch-compile-unsupported-on-python-version"]
    assert "3.13" in f.title and "2.6" in f.title


@pytest.mark.parametrize(
    "text",
    [
        # a stdlib attribute removed in Python 3.10, raised from a package's own file: not shadowing
        'Traceback (most recent call last):\n  File "/home/u/venv/lib/python3.10/site-packages/tensorboardX/x2num.py", '
        "line 5, in <module>\n    from collections import Iterable\n"
        "AttributeError: module 'collections' has no attribute 'Iterable'",
        # Python 3.8+ names the file when it has none to name: unknown location is a broken install, not a shadow
        "ImportError: cannot import name 'Random' from 'random' (unknown location)",
        # the stdlib module found where it belongs
        "ImportError: cannot import name 'Self' from 'typing' (/usr/lib/python3.10/typing.py)",
    ],
)
def test_stdlib_attribute_errors_that_are_not_shadowing(text):
    assert "shadowed-by-local-file" not in codes_for_text(text)


def test_python313_hint_names_the_users_file():
    # CPython 3.13's own hint (Objects/moduleobject.c), as a user's traceback shows it
    got = _got(
        'File "/home/me/proj/random.py", line 1, in <module>\n    import torch\n'
        "AttributeError: module 'random' has no attribute 'randint' (consider renaming '/home/me/proj/random.py' since "
        "it has the same name as the standard library module named 'random' and prevents importing that standard "
        "library module)"
    )
    assert "random.py" in got["shadowed-by-local-file"].title


@pytest.mark.parametrize(
    "text",
    [
        # face_recognition#354: a CUDA build of dlib with low GPU use (one frame at a time): not a CPU build
        'I build dlib with CUDA support, I try to use the facerec_from_webcam.py, but I find a low gpu usage,\nI pass model = "cnn", still low usage.',
        # NVIDIA/vid2vid#43: DLIB_USE_CUDA is true; the landmark detector is CPU code
        "I added a debug output to double-check if dlib makes use of CUDA:\n`print (dlib.DLIB_USE_CUDA)` for which I get true.",
    ],
)
def test_dlib_with_cuda_is_not_called_a_cpu_build(text):
    assert "companion-cpu-only-build" not in codes_for_text(text)


def test_dlib_not_compiled_with_cuda_names_dlib():
    # face_recognition#796, the reporter's own finding
    got = _got("my cpu load goes astronomical and the gpu does nothing\ni found the problem. dlib was not compiled with cuda.")
    assert got["companion-cpu-only-build"].title.startswith("dlib")
    assert got["companion-cpu-only-build"].severity == "error"
