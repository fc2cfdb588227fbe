"""wsl-gpu-unsupported: WSL 1, or WSL 2 without the GPU bridge; never on a working WSL 2 or plain Linux."""

from __future__ import annotations

from cudadoctor.checks.wsl import wsl_gpu_unsupported
from cudadoctor.facts import Facts, new_facts


def _fx(kernel, wsl=True, lib_dir=None):
    f = new_facts("live")
    f["system"].update({"os": "Linux", "kernel": kernel, "wsl": wsl})
    if lib_dir is not None:
        f["system"]["wsl_lib_dir"] = lib_dir
    return Facts(f)


def test_wsl1_kernel_names_the_windows_build():
    # the kernel release WSL 1 reports (microsoft/WSL#3847: Windows 10 build 17763)
    (f,) = list(wsl_gpu_unsupported(_fx("4.4.0-17763-Microsoft")))
    assert f.severity == "error" and "WSL 1 (Windows build 17763)" in f.title
    assert f.evidence["windows_build"] == "17763"
    assert any("wsl --set-version" in c for c in f.fix.commands)


def test_wsl2_without_the_gpu_bridge():
    (f,) = list(wsl_gpu_unsupported(_fx("4.19.104-microsoft-standard", lib_dir=False)))
    assert "/usr/lib/wsl/lib is missing" in f.title and f.evidence["windows_build"] is None


def test_working_wsl2_and_plain_linux_say_nothing():
    assert not list(wsl_gpu_unsupported(_fx("5.15.153.1-microsoft-standard-WSL2", lib_dir=True)))
    assert not list(wsl_gpu_unsupported(_fx("5.15.153.1-microsoft-standard-WSL2")))  # bridge unknown: no claim
    assert not list(wsl_gpu_unsupported(_fx("6.8.0-45-generic", wsl=False, lib_dir=False)))
