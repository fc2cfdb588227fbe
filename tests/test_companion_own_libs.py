"""An undefined symbol in torchvision's or torchaudio's own library is the companion not paired with torch
(torchvision-mismatch), not a third-party extension to rebuild — also when the report states no companion version."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cudadoctor.cli import cli

# https://github.com/RangiLyu/nanodet/issues/547 (torch 1.13.1 with a newer torchaudio)
NANODET = (
    "OSError: /usr/local/lib/python3.8/dist-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: "
    "_ZNK3c107SymBool10guard_boolEPKcl"
)
# https://github.com/pytorch/audio/issues/2532 (a self-built torch 1.12 with a torchaudio binary for another torch)
AUDIO_2532 = "libtorchaudio.so: undefined symbol: _ZNK5torch8autograd4Node4nameEv"


def _errors(tmp_path: Path, text: str) -> list:
    p = tmp_path / "paste.txt"
    p.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["check", "--from-text", str(p), "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    return [f["code"] for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]


def test_torchaudio_own_library_without_versions_is_the_companion_pair(tmp_path):
    for text in (NANODET, AUDIO_2532):
        errors = _errors(tmp_path, text)
        assert errors and errors[0] == "torchvision-mismatch", errors
    assert "extension-abi-mismatch" not in _errors(tmp_path, NANODET)
