"""Programs that state their own minimum driver (kb/program_driver_min.json, from ollama's docs/gpu.md(x) and
discover/cuda_compat.go at tags): the release named in the text, the GPU and the driver decide driver-too-old.
Texts verbatim from public threads (URLs beside them), none from the blind batches."""

from __future__ import annotations

import re

from checkcli import codes, paste_findings

from cudadoctor.checks.drv10 import _floor, program_releases


def test_the_table_agrees_with_ollamas_own_log():
    # https://github.com/ollama/ollama/issues/16415 : title and ollama's own discovery line (0.30, GTX 1070 Ti, cc 6.1)
    title = "Performance regression in Ollama v0.30 on 5x GTX 1070 Ti: much slower than v0.24, low GPU clocks/utilization"
    log = 'msg="NVIDIA driver too old" device="NVIDIA GeForce GTX 1070 Ti" compute=6.1 driver=535 required_driver="570 or newer"'
    release = program_releases(title)["ollama"]
    assert release == "0.30"
    floor = _floor("ollama", release, "6.1")
    assert floor and floor[0] == re.search(r'required_driver="(\d+)', log).group(1)
    # and a Turing card on the same release needs only the general floor of 0.30.0 (531; 550 from 0.30.11)
    assert _floor("ollama", "0.30.0", "7.5")[0] == "531" and _floor("ollama", "0.32.1", "7.5")[0] == "550"


def test_release_wordings():
    assert program_releases("ollama version is 0.9.0") == {"ollama": "0.9.0"}  # ollama -v (ollama#11055)
    assert program_releases("### Ollama version\n\n0.1.41") == {"ollama": "0.1.41"}  # the issue form (ollama#4891)
    log = 'msg="Listening on 127.0.0.1:11434 (version 0.1.38)"'  # the server log (ollama#4563)
    assert program_releases("ollama serve\n" + log) == {"ollama": "0.1.38"}
    assert program_releases("Can ollama be upgraded from 0.7.0 to 0.9.3 with NVIDIA TITAN X (Pascal)") == {"ollama": "0.9.3"}
    assert program_releases("no program named here, version 0.30.0") == {}


def test_driver_at_the_floor_is_not_too_old(tmp_path):
    # https://github.com/ollama/ollama/issues/11269 : 0.9.3 needs 531; the maintainer: 535 is fine
    text = (
        "Can ollama be upgraded from 0.7.0 to 0.9.3 with NVIDIA TITAN X (Pascal) and driver 535.230.02?\n"
        "My hardware configuration is: NVIDIA TITAN X (Pascal) GPU, NVIDIA driver version 535.230.02. This version only "
        "supports up to CUDA 12.2 and cannot be upgraded due to hardware limitations.\n"
    )
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))


def test_releases_without_a_stated_floor_claim_nothing(tmp_path):
    # https://github.com/ollama/ollama/issues/4563 : ollama 0.1.38 (no floor documented then) on driver 555
    text = (
        "Nvidia 555 driver does not work with Ollama\n"
        'time=2024-05-21T21:31:02.077Z level=INFO source=routes.go:1054 msg="Listening on 127.0.0.1:11434 (version 0.1.38)"\n'
    )
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))
