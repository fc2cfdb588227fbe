"""gpuid9: nvidia-smi-not-on-path — Windows cannot find nvidia-smi by name while the NVIDIA GPU and driver are there.

Real texts from public threads (none from the blind batches), each with its URL.
"""

from __future__ import annotations

from checkcli import codes, paste_findings, severities

from cudadoctor.checks import gpuid9


def test_gputil_winerror2_with_an_nvidia_gpu_named(tmp_path):
    # https://github.com/anderskm/gputil/issues/8 (the maintainer: PATH must cover nvidia-smi's folder)
    text = (
        'File "C:\\Users\\dylan\\AppData\\Local\\Programs\\Python\\Python36\\Lib\\site-packages\\GPUtil\\GPUtil.py", line 64, '
        "in getGPUs\n"
        '    p = Popen(["nvidia-smi","--query-gpu=index,uuid,utilization.gpu,memory.total,memory.used,memory.free,'
        'driver_version,name,gpu_serial,display_active,display_mode", "--format=csv,noheader,nounits"], stdout=PIPE)\n'
        "FileNotFoundError: [WinError 2] The system cannot find the file specified\n"
        'Also, I have a "NVIDIA GeForce GTX 1060 with Max-Q Design" with 8 GB VRAM'
    )
    got = severities(paste_findings(tmp_path, text))
    assert got.get("nvidia-smi-not-on-path") == "error", got


def test_not_recognized_with_driver_stated(tmp_path):
    # The facts of https://github.com/Kruk2/jasna/issues/124 (RTX 3080, driver 595.97, Windows 11; the maintainer: "It
    # looks like nvidia-smi is not in your path") beside Windows cmd's own words for it (verbatim in
    # https://github.com/RichardKav/zabbix-nvidia-smi-integration/issues/5): composed from the two threads.
    text = (
        " - OS: windows 11 pro 26200\n - GPU RTX 3080\n- Nvidia Driver version: 595.97\n"
        "'nvidia-smi' is not recognized as an internal or external command,\noperable program or batch file."
    )
    assert "nvidia-smi-not-on-path" in codes(paste_findings(tmp_path, text))


def test_not_recognized_alone_is_not_this_code(tmp_path):
    # https://github.com/RichardKav/zabbix-nvidia-smi-integration/issues/5: nothing shows a GPU or driver, so the
    # words alone say no more than "no driver or not on PATH" (kdrv3's no-nvidia-driver reads them)
    text = (
        "Value \"'nvidia-smi' is not recognized as an internal or external command,\noperable program or batch file.\" "
        'of type "string" is not suitable for value type "Numeric (float)"'
    )
    assert "nvidia-smi-not-on-path" not in codes(paste_findings(tmp_path, text))


def test_linux_command_not_found_is_not_this_code(tmp_path):
    # https://github.com/keylase/nvidia-patch/issues/501 (Linux: another tool's words, another fix)
    text = "nvidia-smi utility not found. Probably driver is not installed.\nbash: nvidia-smi: command not found"
    assert "nvidia-smi-not-on-path" not in codes(paste_findings(tmp_path, text))


def test_program_that_runs_nvidia_smi_lists_no_gpu_on_windows(tmp_path):
    # a composed report (the program's mechanism is in its source, chaiNNer's src/main/nvidiaSmi.ts, see the kb table;
    # the real threads of this form are in the blind batches and stay out of the tests)
    text = (
        "chaiNNer 0.18 on Windows 11: the settings say No GPU available and it only uses CPU, but I have an RTX 3060 "
        "with the latest drivers"
    )
    got = severities(paste_findings(tmp_path, text))
    assert got.get("nvidia-smi-not-on-path") == "warning", got
    # the same words with an AMD GPU: not this code
    amd = text.replace("an RTX 3060", "an AMD Radeon RX 6600")
    assert "nvidia-smi-not-on-path" not in codes(paste_findings(tmp_path, amd))


def test_every_program_in_the_table_has_a_source():
    for a in gpuid9._kb()["apps"]:
        assert a["source"].startswith("https://") and a["how"] and a["regex"], a
