"""The prose reader on a bare torch version with its CPU-build tag ("System Info says 2.0.0+cpu", vladmandic/automatic's
wording): a CPU build of torch, and not when the version is another package's or an install command's."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings

from cudadoctor.readers import prose


def _torch(text: str):
    return (prose.read(text.splitlines()).get("torch") or {}).get("value")


def test_bare_cpu_tagged_torch_version():
    text = 'I have an RTX2060 6Gb, but in the "System Info" section it says "2.0.0+cpu Autocast half"'
    assert _torch(text) == "2.0.0+cpu"


@pytest.mark.parametrize(
    "text",
    [
        "torchvision 0.15.1+cpu installed",  # not a torch release number
        "torchaudio: 2.0.1+cpu",  # torchaudio's 2.x numbers look like torch's
        "pip install torch==2.1.0+cpu --index-url https://download.pytorch.org/whl/cpu",  # asked for, not installed
        "version 9.9.9+cpu",  # no torch release
    ],
)
def test_not_torch(text):
    assert _torch(text) is None


def test_it_diagnoses_the_cpu_build(tmp_path):
    text = 'does not detect GPU, generates on CPU\nI have an RTX2060 6Gb, but System Info says "2.0.0+cpu Autocast half"'
    assert "cpu-only-torch" in codes(paste_findings(tmp_path, text))
