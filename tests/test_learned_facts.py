"""The learned fallback reads the stated facts as well as the error text's words (issue 21 item 4): the facts
become tokens of their own (cudadoctor.learned.fact_tokens), never paired with words or cut into pieces."""

from __future__ import annotations

import sys
from pathlib import Path

from cudadoctor import learned

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import learned_heldout as lh  # noqa: E402

B14 = REPO / "tests" / "data" / "blind" / "b14"
B15 = REPO / "tests" / "data" / "blind" / "b15"


def test_a_windows_collect_env_with_paddle_and_a_gpu():
    """Real report (b15-04, PaddlePaddle on Windows with an RTX 3060): its collect_env facts as tokens."""
    t = learned.fact_tokens(lh._facts(B15 / "b15-04-paddle-win-rtx3060-cudnn811-built-82", paste=False))
    assert {"origin_collectenv", "os_windows", "gpu_yes", "driver_unknown", "pkg_paddle", "nvcc_yes"} <= set(t)
    assert not {"os_linux", "gpu_no", "torch_cpu", "torch_cuda"} & set(t)


def test_a_cpu_torch_build_is_a_fact():
    """Real report (b15-108, torch 2.1.2+cpu beside xformers on Windows): the CPU build and the package."""
    t = learned.fact_tokens(lh._facts(B15 / "b15-108-pia-xformers-warning-torch-212-cpu", paste=False))
    assert {"os_windows", "torch_cpu", "pkg_xformers"} <= set(t) and "torch_cuda" not in t


def test_a_thin_paste_says_what_is_unknown():
    """Real paste (b14-03): nothing about the GPU, driver or torch stated - unknown is a value of its own (the OS is
    read from the Windows paths in the paste)."""
    t = learned.fact_tokens(lh._facts(B14 / "b14-03-pytranscriber-whisper-cpu-torch-win", paste=True))
    assert {"origin_text", "os_windows", "gpu_unknown", "driver_unknown", "torch_unknown", "available_unknown"} <= set(t)


def test_fact_tokens_are_features_of_their_own():
    text = "RuntimeError: CUDA error: no kernel image\n" + " ".join(learned.FACT_PREFIX + t for t in ("os_windows", "gpu_yes"))
    f = learned.features(text)
    assert f[-2:] == ["f:os_windows", "f:gpu_yes"]
    assert not any("cdfact" in x for x in f)  # no word, pair or piece of the facts line


def test_text_of_adds_the_facts_line_only_for_a_report_or_an_error():
    from cudadoctor.facts import new_facts

    assert learned.text_of([], new_facts("live")) == ""  # a live run with nothing failing is not guessed about
    line = learned.text_of([], new_facts("collect_env"))
    assert line.startswith(learned.FACT_PREFIX + "origin_collectenv ")
    both = learned.text_of([("user_error", "CUDA error: out of memory")], new_facts("live"))
    assert both.splitlines()[0] == "CUDA error: out of memory" and "cdfact_origin_live" in both
