"""The paste reader keeps the reporter's own sentences, lists of versions and system package listings out of
the error text (readers/issue.py), so that a verbatim paste gives the checks and the learned fallback the same
error lines as the error line alone. Real pastes from the unsealed blind batches (their threads in each .json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.readers import issue

BLIND = Path(__file__).parent / "data" / "blind"
CORPUS = Path(__file__).parent / "data" / "error_corpus"


def _paste(case: str) -> str:
    return (BLIND / case.split("-")[0] / f"{case}.paste.txt").read_text(encoding="utf-8")


def _error_lines(text: str) -> list:
    return [ln.strip() for ln in issue.read(text)["error_text"].splitlines() if ln.strip()]


def test_sentences_and_apt_rows_are_not_error_text_but_the_nccl_errors_are():
    # https://github.com/NVIDIA/nccl/issues/473
    got = _error_lines(_paste("b11-07-nccl-tests-unhandled-system-error-docker-ipc"))
    assert "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'" in got
    assert "RuntimeError: NCCL Error 2: unhandled system error" in got
    assert not [ln for ln in got if ln.startswith(("I have installed", "However, when I ran", "It seems", "Similar problem"))], (
        got
    )
    assert not [ln for ln in got if "[installed]" in ln], got  # apt list's rows


def test_apt_and_dpkg_rows_are_a_system_package_listing():
    text = (
        "libnccl-dev/unknown,now 2.8.4-1+cuda11.2 amd64 [installed]\n"  # https://github.com/NVIDIA/nccl/issues/473
        "ii  nvidia-driver-535  535.104.05-0ubuntu1  amd64  NVIDIA driver metapackage\n"  # `dpkg -l` (its columns)
        "RuntimeError: NCCL Error 2: unhandled system error\n"
    )
    r = issue.read(text)
    assert [p["kind"] for p in r["parts"]] == ["system-packages", "error"]
    assert r["error_text"] == "RuntimeError: NCCL Error 2: unhandled system error"
    assert r["facts"]["nvml"]["driver_version"] == "535"  # the listing is still read for versions (prose)


def test_a_list_of_versions_beside_the_error_is_facts_not_error_text():
    # https://github.com/PaddlePaddle/Paddle/issues/38663 (labels in Chinese, full-width punctuation)
    r = issue.read(_paste("b11-45-paddle-win-cublas64-11-error126"))
    lines = [ln.strip() for ln in r["error_text"].splitlines()]
    assert any("cublas64_11.dll" in ln and "error code is 126" in ln for ln in lines)
    assert not [ln for ln in lines if ln.startswith(("3)GPU", "4)", "6)Driver API"))], lines
    assert r["facts"]["python"]["version"] == "3.8"  # "4) 系统环境: win10, python3.8" read as a fact


def test_a_sentence_quoting_the_error_stays_error_text():
    # https://github.com/NVIDIA/nccl/issues/328 (b11-08): the reporter names the exception inside a sentence
    got = _error_lines(_paste("b11-08-nccl-shm-open-permission-denied-chmod"))
    assert any(ln.startswith("I came across this error `RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290") for ln in got)


def test_a_message_continuation_with_a_version_label_stays_error_text():
    # https://github.com/conda-forge/jax-feedstock/issues/149: "Version JAX was built against: 8907" is the message's
    (d,) = [
        json.loads(ln)
        for ln in (CORPUS / "missing-libraries.jsonl").read_text(encoding="utf-8").splitlines()
        if "jax-feedstock/issues/149" in ln
    ]
    got = _error_lines(d["text"])
    assert "Version JAX was built against: 8907" in got and "Installed version: 8907" in got


def test_glog_info_lines_are_not_first_person_sentences():
    # https://github.com/tensorflow/tensorflow/issues/5473 (b12-36): glog's "I" level letter before a path
    text = (
        "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:140] kernel driver does not appear to be running on "
        "this host (gzhao-b1208): /proc/driver/nvidia/version does not exist"
    )
    assert issue._narrative(text) is False
    assert _error_lines(text) == [text]


def test_a_paste_of_sentences_only_is_still_read_whole():
    # No line a program printed: the whole text is the error text (the reader never refuses text).
    text = "I have installed NCCL by apt.\nIt seems that though NCCL is installed, it can't work."
    r = issue.read(text)
    assert [p["kind"] for p in r["parts"]] == ["text"] and "it can't work" in r["error_text"]


@pytest.mark.parametrize(
    "case,code",
    [
        ("b11-07-nccl-tests-unhandled-system-error-docker-ipc", "shm-exhausted"),
        ("b11-45-paddle-win-cublas64-11-error126", "dll-load-failure"),
    ],
)
def test_the_paste_gives_what_the_error_line_gives(tmp_path, case, code):
    folder = BLIND / case.split("-")[0]
    runner = CliRunner()
    by_line = runner.invoke(
        cli,
        [
            "check",
            "--from-collect-env",
            str(folder / f"{case}.txt"),
            "--error-file",
            str(folder / f"{case}.error.txt"),
            "--format",
            "json",
        ],
    )
    by_paste = runner.invoke(cli, ["check", "--from-text", str(folder / f"{case}.paste.txt"), "--format", "json"])
    for r in (by_line, by_paste):
        assert r.exit_code in (0, 1), r.output
        codes = [f["code"] for f in json.loads(r.stdout)["findings"] if f["severity"] in ("error", "warning")]
        assert code in codes, codes
