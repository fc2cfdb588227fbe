"""The Windows build read from winver's "OS build with revision" form on a line naming Windows 10/11 (readers/prose.py,
plat10): the fact wsl-gpu-unsupported compares with Windows 10 21H2 (19044), the first release build with GPU in WSL 2."""

from __future__ import annotations

from cudadoctor.readers import prose


def test_build_with_revision_beside_windows_10_or_11():
    # a public QA bug-report template's environment line (a GitHub README, found with find_string "Windows 10 Pro 19042.")
    got = prose.read(["<Environment> Windows 10 Pro 19042.1415 , Google Chrome v.96.0.4664.110"])
    assert got["windows_build"]["value"] == "19042"
    assert prose.read(["Windows 10 Pro, 20H2, 19042.928"])["windows_build"]["value"] == "19042"
    assert prose.read(["Windows 11 Pro 22631.3593"])["windows_build"]["value"] == "22631"


def test_other_dotted_numbers_are_not_builds():
    assert "windows_build" not in prose.read(["Windows 10, Chrome 96.0.4664.110, driver 531.41"])
    assert "windows_build" not in prose.read(["windows 10 21H2", "Version 2.1.5.0"])
