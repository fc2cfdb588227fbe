"""gpu-memory-occupied from the NUMBERS an out-of-memory message reports (kb/errors/occupied8.json memory_figures).

Memory held outside the failing process = the GPU's total - what was free - what the process itself held. When that
is at least half the GPU, another process (another user's job, a killed run's workers) took it: a warning naming the
numbers. When the process held it itself, it is an ordinary out-of-memory (a model or batch too large): no finding.
Every text here is verbatim from the public thread named beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudadoctor import registry
from cudadoctor.errortext import triage
from cudadoctor.errortext.memfigures import held_elsewhere, oom_figures, pool_figures
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
GIB = 2**30
CORPUS = Path(__file__).parent / "data" / "error_corpus" / "occupied8.jsonl"


def _occupied(text: str, origin: str = "collect_env"):
    facts = new_facts(origin)
    facts["user_error"] = {"text": text}
    return [(f.severity, f.title) for f in diagnose(facts, REG).findings if f.code == "gpu-memory-occupied"]


def _corpus():
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- held elsewhere (the corpus: torch 1.x with an extra field, TensorFlow 0.x-1.x start-up figures) -------------


@pytest.mark.parametrize("row", _corpus(), ids=lambda r: r["source"].rsplit("/", 3)[-3])
def test_figures_showing_memory_held_elsewhere_give_a_warning_with_the_numbers(row):
    got = _occupied(row["text"])
    assert got and got[0][0] == "warning", got
    assert "GiB" in got[0][1] and ("held outside this process" in got[0][1] or "held by other processes" in got[0][1])
    # triage reads the same figures (one evidence pass): its top cause is the same code
    assert triage(row["text"], REG)["candidates"][0]["code"] == "gpu-memory-occupied"


def test_torch_1x_figures_with_a_field_after_cached_are_read():
    # https://github.com/horovod/horovod/issues/2719: "...; 77.13 MiB cached; 0 bytes inactive)"
    gpu, total, free, mine, _ = oom_figures(_corpus()[0]["text"])
    assert gpu == "1" and round(total / GIB, 2) == 15.78 and round(mine / GIB, 2) == 2.76 and round(free / 2**20, 2) == 53.75


def test_tensorflow_start_up_figures_count_nothing_as_the_process_own():
    got = held_elsewhere(_corpus()[1]["text"])  # tensorflow#8170: Total memory 7.92GiB, Free memory 190.31MiB
    assert got and got["mine"] == 0.0 and got["failed"] is True
    assert round(got["elsewhere"] / GIB, 2) == round((7.92 * GIB - 190.31 * 2**20) / GIB, 2)


# https://github.com/mozilla/DeepSpeech/issues/463 (the maintainer quoting the reporter's log: "It looks like your
# GPUs have very little free memory. Are you perhaps running another process that uses TensorFlow concurrently?")
DEEPSPEECH_463 = (
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:885] Found device 0 with properties:\nname: GeForce GTX 780 Ti\n"
    "major: 3 minor: 5 memoryClockRate (GHz) 1.0455\npciBusID 0000:01:00.0\nTotal memory: 2.94GiB\nFree memory: 105.88MiB\n"
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:885] Found device 1 with properties:\nname: Tesla K40c\n"
    "major: 3 minor: 5 memoryClockRate (GHz) 0.745\npciBusID 0000:02:00.0\nTotal memory: 11.17GiB\nFree memory: 227.88MiB"
)


def test_start_up_figures_without_a_failure_are_information_naming_the_fullest_gpu():
    got = _occupied(DEEPSPEECH_463)
    assert [s for s, _ in got] == ["info"], got
    assert got[0][1].startswith("GPU 1 had only 227.9 MiB of 11.2 GiB free when TensorFlow started")
    assert not [c for c in triage(DEEPSPEECH_463, REG)["candidates"] if c["code"] == "gpu-memory-occupied"]


# --- the process held it itself: ordinary out-of-memory, no finding --------------------------------------------

ORDINARY = [
    # https://github.com/cupy/cupy/issues/2537 (CuPy 7: the pool already held 3.6 GB)
    "Exception in main training loop: Out of memory allocating 25,600,000 bytes (allocated so far: 3,635,267,072 bytes).",
    # https://github.com/soskek/attention_is_all_you_need/issues/6
    "Exception in main training loop: Out of memory allocating 255,688,704 bytes (allocated so far: 3,670,475,776 bytes).",
    # https://github.com/cupy/cupy/issues/1912 (CuPy 5: "total" is what the pool would hold, 11.5 GB)
    'cupy.cuda.memory.OutOfMemoryError: out of memory to allocate 1073741824 bytes (total 12373894656 bytes)"',
    # https://github.com/chainer/chainer/issues/5621 (batch size too large; fine at 16)
    "Exception in main training loop: out of memory to allocate 205520896 bytes (total 16068929536 bytes)",
    # https://github.com/Bartzi/see/issues/23
    "Exception in main training loop: out of memory to allocate 747110400 bytes (total 5722942464 bytes)",
    # https://github.com/cupy/cupy/pull/2242 (the new wording's example: a 200 GB request is just too large)
    "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 200,000,000,000 bytes (allocated so far: 4,096 bytes).",
    # https://github.com/RenYurui/StructureFlow/issues/35 (torch 1.x: an 8 GiB request with 8.2 GiB free: its own size)
    "RuntimeError: CUDA out of memory. Tried to allocate 8.13 GiB (GPU 0; 10.76 GiB total capacity; 643.57 MiB already "
    "allocated; 8.20 GiB free; 32.43 MiB cached)",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_memory_the_process_held_itself_gives_no_finding(text):
    assert _occupied(text) == []
    assert _occupied(text, origin="text") == []
    if "total capacity" not in text:  # CuPy: no wording signature reads it, only the figures (torch: error_signatures.json)
        assert not [c for c in triage(text, REG)["candidates"] if c["code"] == "gpu-memory-occupied"]


def test_cupy_both_wordings_give_what_the_pool_held_before_the_request():
    assert pool_figures(ORDINARY[0])[:2] == (25_600_000, 3_635_267_072)
    assert pool_figures(ORDINARY[2])[:2] == (1073741824, 12373894656 - 1073741824)


def test_every_template_has_its_sources_and_compiles():
    from cudadoctor.errortext import kb_document

    doc = kb_document("occupied8.json")["memory_figures"]
    for t in doc["templates"] + doc["pool_templates"]:
        assert t["sources"] and all(s.startswith("https://github.com/") for s in t["sources"]), t["id"]
    for t in doc["templates"]:
        if "example" in t:
            assert oom_figures(t["example"]) is not None, t["id"]
    assert 0 < doc["thresholds"]["held_elsewhere_share"] < 1


def test_start_up_figures_of_a_free_gpu_in_a_batch_case_it_was_not_written_from_say_nothing_held_elsewhere():
    # tests/data/blind/b17/b17-29 (TensorFlow 0.x log on a K40m, cause: an exclusive compute mode): the figures are read
    # (11.25 GiB total, 11.15 GiB free) and show nothing held elsewhere, so the memory is not blamed.
    case = Path(__file__).parent / "data" / "blind" / "b17" / "b17-29-tf-k40m-exclusive-thread-compute-mode.paste.txt"
    text = case.read_text(encoding="utf-8")
    gpu, total, free, mine, _ = oom_figures(text)
    assert round(total / GIB, 2) == 11.25 and round(free / GIB, 2) == 11.15 and mine == 0.0
    assert held_elsewhere(text) is None and _occupied(text, origin="text") == []


# --- the text saying another process / program / user holds the GPU (kb/errors/occupied8.json signature) ----------

SAID_ELSEWHERE = [
    # https://github.com/horovod/horovod/issues/2719 (the reporter)
    "Is it because some other users are sharing the same GPU on the cluser?",
    # https://github.com/donaldlab/OSPREY3/issues/67 (the maintainer's diagnosis, confirmed)
    "Since those are shared machines, I'm guessing another process is eating up all the GPU memory",
    # https://github.com/tensorflow/tensorflow/issues/30594 (the answer the reporter confirmed: "multiple programs are
    # executing on server")
    "This is an error that usually shows when the GPU resources are already locked by another process.",
    # https://github.com/ml-struct-bio/cryodrgn/issues/111 (the maintainer)
    "There might be another process running on the machine that is using the GPU memory?",
]
NOT_SAID = [
    "No other process is using the GPU.",
    "I don't have any other programs using the GPU memory",
    # https://github.com/nanoporetech/dorado/issues/541 (an ordinary out-of-memory: nothing else ran)
    "Hi vellamike, thanks for your reply. Nothing else was running at the same time though.",
    # https://github.com/Pointcept/Pointcept/issues/134 (its own data workers on GPU 0, not another program)
    "I find there are many processes on the first GPU, while there is only one process on the other GPU.",
]


@pytest.mark.parametrize("text", SAID_ELSEWHERE)
def test_the_text_saying_another_process_holds_the_gpu_is_a_warning(text):
    got = _occupied(text, origin="text")
    assert [s for s, _ in got] == ["warning"], got


@pytest.mark.parametrize("text", NOT_SAID)
def test_negated_or_unrelated_mentions_of_other_processes_say_nothing(text):
    assert _occupied(text, origin="text") == []


def test_figures_showing_the_process_held_the_memory_outweigh_a_guess_about_other_processes():
    # https://github.com/RenYurui/StructureFlow/issues/35's figures (an 8.13 GiB request, 8.20 GiB free) with a guess
    assert _occupied(ORDINARY[-1] + "\nmaybe another process is using the GPU?") == []


def test_the_processes_torch_21_names_are_given_in_the_evidence_and_the_fix():
    from test_memdrv_memory import OOM_21_ELSEWHERE  # torch 2.1: Process 224599 (21.48 GiB) held the GPU

    facts = new_facts("text")
    facts["user_error"] = {"text": OOM_21_ELSEWHERE}
    (f,) = [f for f in diagnose(facts, REG).findings if f.code == "gpu-memory-occupied"]
    assert f.evidence["processes"][0] == "pid 224599: 21.5 GiB"
    assert any(c.startswith("ps -o pid,user,etime,cmd -p 224599,277412") for c in f.fix.commands)


# https://github.com/tensorflow/tensorflow/issues/6698 (TensorFlow 1.x on a 2 GB GT 750M: the desktop held 0.46 GiB;
# the cuDNN handle failed because TensorFlow itself took the rest, fixed with allow_growth): not another process's.
TF_6698 = (
    "Crash: Could not create cuDNN handle when convnets are used\n"
    "2017-07-05 22:16:54.532257: I tensorflow/core/common_runtime/gpu/gpu_device.cc:940] Found device 0 with properties: \n"
    "name: GeForce GT 750M\nmajor: 3 minor: 0 memoryClockRate (GHz) 0.9255\npciBusID 0000:01:00.0\n"
    "Total memory: 2.00GiB\nFree memory: 1.54GiB\n"
)


def test_start_up_figures_with_most_memory_free_do_not_blame_a_cudnn_failure_on_other_processes():
    assert held_elsewhere(TF_6698) is None and _occupied(TF_6698, origin="text") == []


def test_a_cudnn_handle_failure_after_start_up_figures_of_a_full_gpu_is_the_shortage_biting():
    # tensorflow#8170's start-up figures (190 MiB free of 7.92 GiB) with TensorFlow 1.x's cuDNN line in place of its
    # allocation failure (tensorflow/stream_executor/cuda/cuda_dnn.cc: "could not create cudnn handle: ...")
    head = _corpus()[1]["text"].split("E tensorflow")[0]
    got = held_elsewhere(head)
    assert got and got["failed"] is False  # the figures alone: information
    got = held_elsewhere(
        head + "E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"
    )
    assert got and got["failed"] is True


# https://github.com/tensorflow/tensorflow/issues/3864: the title and a commenter's TensorFlow log (148.69 MiB free
# of 7.91 GiB at start-up; "our vram has been allocated to other places"). Given as the error text (check --error-file)
# the figures are read; pasted whole, the issue reader keeps only the title line as the error (the device block is
# not next to an error line), so --from-text does not see the figures yet (a reader follow-up, not in this corpus).
TF_3864 = "Tensorflow r.0.10, CUDA 8.0, cuDNN 5.1 core dumped, CUDA_ERROR_OUT_OF_MEMORY\n\nname: GeForce GTX 1070\nmajor: 6 minor: 1 memoryClockRate (GHz) 1.683\npciBusID 0000:01:00.0\nTotal memory: 7.91GiB\nFree memory: 148.69MiB\n\nTotal memory we have is 7.91GiB, but available is only 148.69MiB.\nThis mean that our vram has been allocated to other places."


def test_start_up_figures_given_as_the_error_text_are_read_without_the_framework_banner():
    got = _occupied(TF_3864)
    assert [s for s, _ in got] == ["warning"] and got[0][1].startswith("The GPU had only 148.7 MiB of 7.9 GiB free"), got
