"""Round 5 of the paste reader, WSL: which WSL and which Windows build a paste states (`wsl -l -v`'s table, `ver`'s
"[Version 10.0.N]", an issue template's checked option), and checks/wsl.py reasoning over them. Texts from real
microsoft/WSL threads (URLs beside each)."""

from __future__ import annotations

from cudadoctor.facts import Facts
from cudadoctor.readers import issue, prose
from cudadoctor.checks.wsl import wsl_gpu_unsupported


def _system(text: str) -> dict:
    return issue.read(text)["facts"].get("system") or {}


def _codes(text: str) -> list:
    return [f.code for f in wsl_gpu_unsupported(Facts(issue.read(text)["facts"]))]


# https://github.com/microsoft/WSL/issues/5554 (licanhua's answer: the table `wsl -l -v` prints)
WSL_LIST_2 = "`wsl -l -v` on windows and check the version column. 2 is WSL 2\n\n```\n  NAME            STATE           VERSION\n* Ubuntu-20.04    Stopped         2\n```\n"
# https://github.com/microsoft/WSL/issues/8361 (the same table with Markdown's spaces collapsed)
WSL_LIST_COLLAPSED = "PS C:\\Users\\Jesper> wsl -l -v\nNAME STATE VERSION\n* Ubuntu-22.04 Running 2\n"
# https://github.com/microsoft/WSL/issues/5554: the reporter's table; his kernel 4.4.0-19041-Microsoft is WSL 1's,
# as the maintainer answered ("That kernel version indicates that you are using WSL1").
WSL_LIST_1 = (
    "I got the following error messages:\nError! Your kernel headers for kernel 4.4.0-19041-Microsoft cannot be found.\n"
    "wsl -l -v\n  NAME            STATE           VERSION\n* Ubuntu-20.04    Running         1\n"
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running.\n"
)
# https://github.com/microsoft/WSL/issues/7056 (June 2021: Windows 10 20H2, before GPU compute reached release builds)
WSL_7056 = (
    "### Windows Build Number\n\nMicrosoft Windows [Version 10.0.19042.1052]\n\n### WSL Version\n\n- [X] WSL 2\n- [ ] WSL 1\n\n"
    "### Kernel Version\n\n5.4.72\n\n### Distro Version\n\nUbuntu 20.04\n\n"
    "7. While using the pytorch package in python, 'torch.cuda.is_available()' always returns 'false' in wsl (ubuntu).\n"
)
# https://github.com/microsoft/WSL/issues/7716 (Windows 11 22000: GPU in WSL supported; the cause was elsewhere)
WSL_7716 = (
    "### Version\n\nMicrosoft Windows [Version 10.0.22000.318]\n\n### WSL Version\n\n- [X] WSL 2\n- [ ] WSL 1\n\n"
    "### Kernel Version\n\n5.10.74.3\n\n### Distro Version\n\nUbuntu 20.04\n\nNVIDIA-SMI has failed because it couldn't "
    "communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n"
)


def test_wsl_list_table_gives_the_default_distributions_version():
    assert _system(WSL_LIST_2)["wsl_version"] == 2
    assert _system(WSL_LIST_COLLAPSED)["wsl_version"] == 2
    assert _system(WSL_LIST_1)["wsl_version"] == 1


def test_unchecked_template_option_is_no_fact():
    # "- [X] WSL 2" / "- [ ] WSL 1": the checked one is the fact (before, both were read and cancelled out)
    s = _system(WSL_7056)
    assert s["wsl_version"] == 2 and s["windows_build"] == "19042"


def test_windows_build_forms():
    got = prose.read(["Microsoft Windows [Version 10.0.21343.1000]"])
    assert got["windows_build"]["value"] == "21343"
    assert prose.read(["Edition Windows 10 Pro, OS build 19044.1288"])["windows_build"]["value"] == "19044"
    assert "windows_build" not in prose.read(["windows 10 21H2", "Version 2.1.5.0"])


def test_wsl1_stated_is_wsl_gpu_unsupported():
    assert _codes(WSL_LIST_1) == ["wsl-gpu-unsupported"]


def test_windows_build_before_wsl_gpu_support():
    assert _codes(WSL_7056) == ["wsl-gpu-unsupported"]
    assert _codes(WSL_7716) == []  # build 22000 (Windows 11) has GPU support in WSL
    assert _codes(WSL_LIST_2) == []
