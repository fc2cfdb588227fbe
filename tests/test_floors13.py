"""A minimum driver stated in words (errortext/floors.py): read as a requirement, not as the installed driver, and
weighed by driver-too-old against the driver the text or the facts show."""

from __future__ import annotations

import pytest
from checkcli import codes, paste_findings, severities

from cudadoctor.errortext.floors import stated_floor

# HandBrake/HandBrake#5725 (the reporter quoting HandBrake's NVENC page)
HANDBRAKE = (
    "Nvidia nvencode support for v1.7.x with Nvidia driver 535.x on Ubuntu\n"
    "https://handbrake.fr/docs/en/latest/technical/video-nvenc.html states only Nvidia driver 546.33 and later is "
    "supported but the latest Nvidia driver on Ubuntu/Linux is only 535.x.  I tried v1.7.2 on Ubuntu and nvencode is "
    "not available (in the UI settings)."
)


@pytest.mark.parametrize(
    "text, floor",
    [
        (HANDBRAKE, "546.33"),
        # a GCP installer thread: the toolkit's release note quoted
        ("It appears the CUDA toolkit version installed (12.5) requires driver version 555.42.02", "555.42.02"),
        ("This container was built for NVIDIA Driver Release 530.30 or later", "530.30"),  # NGC images' banner
        ("Minimum required driver version: >= 525.60.13", "525.60.13"),
        ("you need the NVIDIA driver 530+ for this build", "530"),
    ],
)
def test_stated_minimums(text, floor):
    got = stated_floor(text)
    assert got and got[0] == floor


@pytest.mark.parametrize(
    "text",
    [
        "RTX 3090 + ubuntu 20.04 + driver 455.45 + CUDA 11.1",  # "+" joining the parts of a setup
        "hangs with A100 SXM4 (driver 570.172.08 + CUDA 12.8) but works on driver 550.163.01",
        "I have driver 535.104.05 installed",
        "it requires a newer driver, my driver is 470",
    ],
)
def test_setups_are_not_minimums(text):
    assert stated_floor(text) is None


def test_the_stated_minimum_is_not_read_as_the_driver_and_the_driver_below_it_is_too_old(tmp_path):
    f = paste_findings(tmp_path, HANDBRAKE)
    assert codes(f)[:1] == ["driver-too-old"]
    too_old = next(x for x in f if x["code"] == "driver-too-old")
    assert "535" in too_old["title"] and "546.33" in too_old["title"]


def test_a_driver_at_or_above_the_stated_minimum_is_no_finding(tmp_path):
    text = HANDBRAKE.replace("535.x", "550.x").replace("546.33", "545")
    assert "driver-too-old" not in codes(paste_findings(tmp_path, text))
    same_branch = "Driver 535 or later is required. My driver: 535"
    assert "driver-too-old" not in codes(paste_findings(tmp_path, same_branch))


# --- a CUDA toolkit newer than the driver runs, no torch stated ---------------------------------------------------------


def _env(cuda: str, driver: str, torch: str = "Could not collect") -> str:
    return (
        f"Collecting environment information...\nPyTorch version: {torch}\nOS: Ubuntu 20.04\n"
        f"CUDA runtime version: {cuda}\nNvidia driver version: {driver}\n"
    )


@pytest.mark.parametrize("cuda, driver", [("10.2", "430.64"), ("13.0", "550.54.14"), ("12.4", "470.256.02")])
def test_toolkit_newer_than_the_driver_runs_is_a_warning(tmp_path, cuda, driver):
    f = paste_findings(tmp_path, _env(cuda, driver), source="--from-collect-env")
    assert severities(f).get("driver-too-old") == "warning"


@pytest.mark.parametrize(
    "cuda, driver, torch",
    [
        ("12.4", "535.104.05", "Could not collect"),  # CUDA 12's minor-version compatibility: 525.60.13 is enough
        ("10.2", "440.33.01", "Could not collect"),
        ("13.0", "550.54.14", "2.5.1+cu124"),  # torch brings its own CUDA runtime; its build decides, not nvcc's
    ],
)
def test_no_warning_when_the_driver_runs_it_or_torch_decides(tmp_path, cuda, driver, torch):
    f = paste_findings(tmp_path, _env(cuda, driver, torch), source="--from-collect-env")
    assert "driver-too-old" not in codes(f)
