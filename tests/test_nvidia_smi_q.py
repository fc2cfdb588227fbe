"""The `nvidia-smi -q` reader on its own, and the value spellings the banner and -q share.

Inputs are the real pastes of tests/fixtures/pasted/ (README.md there names each source); where a
test changes one line of a real paste it says which.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from cudadoctor.readers import _smi_values, nvidia_smi, nvidia_smi_q

PASTED = FIXTURES / "pasted"
MIB = 1024 * 1024


def text(name: str) -> str:
    return (PASTED / name).read_text(encoding="utf-8")


def lines(t: str) -> list:
    return t.replace("\r\n", "\n").split("\n")


def test_read_query_alone_gives_what_parse_reports_for_a_q_paste():
    t = text("nvidia-smi-q-460-a100x8-hw-thermal-gpu0.txt")
    q = nvidia_smi_q.read_query(lines(t))
    assert q["seen"] is True and q["attached_gpus"] == 8 and q["driver_version"] == "460.32.03"
    assert [d["index"] for d in q["devices"]] == list(range(8))
    assert q["devices"] == nvidia_smi.parse(t)["devices"]
    assert q["devices"][0]["clock_event_reasons"]["mask"] & 0x40  # HW Thermal Slowdown, from interpret.gpus' bits


def test_read_query_ignores_a_banner():
    assert nvidia_smi_q.read_query(lines(text("nvidia-smi-460-v100x8-banner.txt"))) == {}


@pytest.mark.parametrize("printed", ["Exclusive_Process", "E. Process", "exclusive_process"])
def test_compute_mode_spellings_of_q_are_nvml_names(printed):
    # the healthy A100 paste with its first "Compute Mode : Default" line changed
    t = text("nvidia-smi-q-460-a100x8-healthy.txt").replace(": Default", ": " + printed, 1)
    devices = nvidia_smi_q.read_query(lines(t))["devices"]
    assert devices[0]["compute_mode"] == "Exclusive_Process" and devices[1]["compute_mode"] == "Default"


def test_banner_abbreviation_is_the_same_nvml_name():
    (d,) = nvidia_smi.parse(text("nvidia-smi-390-k80-e-process.txt"))["devices"]
    assert d["compute_mode"] == "Exclusive_Process"


def test_unknown_compute_mode_is_kept_as_printed_and_na_is_absent():
    t = text("nvidia-smi-q-460-a100x8-healthy.txt")
    first, second = (nvidia_smi_q.read_query(lines(t.replace(": Default", ": " + v, 1)))["devices"][0] for v in ("Shared", "N/A"))
    assert first["compute_mode"] == "Shared" and "compute_mode" not in second


@pytest.mark.parametrize(
    "cell, read",
    [
        ("[N/A]", (None, None, None, None)),
        ("  Not Active ", ("Not Active", None, None, False)),
        ("16x", ("16x", 16, None, None)),
        ("40536 MiB", ("40536 MiB", 40536, 40536 * MIB, None)),
        ("Enabled", ("Enabled", None, None, True)),
        ("[Insufficient Permissions]", (None, None, None, None)),
    ],
)
def test_one_printed_value(cell, read):
    v = _smi_values
    assert (v.value(cell), v.number(cell), v.mib(cell), v.yes(cell)) == read
