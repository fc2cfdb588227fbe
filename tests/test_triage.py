"""Triage: error texts users reported (as pasted in issues) -> the right code first.

Real texts are excerpts of public issue threads, quoted with their source. Signatures come from
the registry only (Code.signatures next to each check); the ranking mechanism is tested with
small codes made here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXTURES, load_fixture, run_cli, write_json
from cudadoctor import registry
from cudadoctor.model import Code
from cudadoctor.registry import Registry
from cudadoctor.report import diagnose
from cudadoctor.errortext import line_roles, normalize, specificity, triage

REG = registry.load(plugins=False)
_HERE = Path(__file__).resolve()
CASES = next((p for p in (_HERE.parents[2] / "shared" / "cases", _HERE.parents[3] / "shared" / "cases") if p.is_dir()),
             _HERE.parents[2] / "shared" / "cases")


def needs(*codes: str) -> None:
    missing = [c for c in codes if REG.code(c) is None]
    if missing:
        pytest.skip(f"code(s) {missing} not in this build's catalogue")


def first(text: str, report=None, reg=REG) -> str:
    res = triage(text, reg, report)
    assert res["candidates"], text
    return res["candidates"][0]["code"]


# --- real texts users reported ---------------------------------------------------------------

# https://github.com/facebookresearch/detectron2/issues/460 (fenced in the issue)
DETECTRON2_460 = '''I followed the documentation，then....

```
File "/home/xx/anaconda3/envs/tf-gpu/lib/python3.7/site-packages/torch/cuda/__init__.py", line 95, in _check_driver
    raise AssertionError("Torch not compiled with CUDA enabled")
AssertionError: Torch not compiled with CUDA enabled
```'''

# https://github.com/wuhuikai/FastFCN/issues/37 (frames run together on one line, message on the next lines)
FASTFCN_37 = '''Hi, can you tell me how to solve this problem:

Traceback (most recent call last):
  File "train.py", line 182, in <module>    trainer.validation(epoch)  File "train.py", line 149, in validation    correct, labeled, inter, union = eval_batch(self.model, image, target)
  File "train.py", line 134, in eval_batch    target = target.cuda()  File "/home/weizhaoxiang/anaconda3/envs/pytorch1.0/lib/python3.6/site-packages/torch/cuda/__init__.py", line 178, in _lazy_init    _check_driver()
  File "/home/weizhaoxiang/anaconda3/envs/pytorch1.0/lib/python3.6/site-packages/torch/cuda/__init__.py", line 108, in _check_driver
    of the CUDA driver.""".format(str(torch._C._cuda_getDriverVersion())))
AssertionError: 
The NVIDIA driver on your system is too old (found version 9000).
Please update your GPU driver by downloading and installing a new
version from the URL: http://www.nvidia.com/Download/index.aspx
Alternatively, go to: https://pytorch.org to install
a PyTorch version that has been compiled with your version
of the CUDA driver.'''

# https://github.com/pytorch/pytorch/issues/133076 (a Jupyter traceback, Windows paths with ~)
PYTORCH_133076 = r'''---------------------------------------------------------------------------
OSError                                   Traceback (most recent call last)
Cell In[2], line 2
      1 import numpy as np
----> 2 import torch
      3 import torch.nn as nn

File ~\Downloads\SPORTS\anaconda\Lib\site-packages\torch\__init__.py:148
    146                 err = ctypes.WinError(ctypes.get_last_error())
    147                 err.strerror += f' Error loading "{dll}" or one of its dependencies.'
--> 148                 raise err

OSError: [WinError 126] The specified module could not be found. Error loading "C:\Users\DELL\Downloads\SPORTS\anaconda\Lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.'''

# https://github.com/pytorch/pytorch/issues/131662 (a notebook error pasted as JSON: escaped quotes and newlines)
PYTORCH_131662 = r'''{"name": "OSError",
	"message": "[WinError 126] The specified module could not be found. Error loading \"c:\\Users\\Noor\\anaconda3\\envs\\DL\\Lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies.",
	"stack": "---------------------------------------------------------------------------\nOSError                                   Traceback (most recent call last)\nCell In[4], line 1\n----> 1 import torch\n\nFile c:\\Users\\Noor\\anaconda3\\envs\\DL\\Lib\\site-packages\\torch\\__init__.py:148\n    146                 err = ctypes.WinError(ctypes.get_last_error())\n--> 148                 raise err\n\nOSError: [WinError 126] The specified module could not be found. Error loading \"c:\\Users\\Noor\\anaconda3\\envs\\DL\\Lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies."
}'''

# https://github.com/chn-lee-yumi/MaterialSearch/issues/105 (the OS message in Chinese)
MATERIALSEARCH_105 = r'''Traceback (most recent call last):
  File "E:\MaterialSearch_tmp\MaterialSearchWindows\process_assets.py", line 9, in <module>
    import torch
  File "E:\MaterialSearch_tmp\MaterialSearchWindows\lib\site-packages\torch\__init__.py", line 148, in <module>
    raise err
OSError: [WinError 126] 找不到指定的模块。 Error loading "E:\MaterialSearch_tmp\MaterialSearchWindows\lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.'''

# https://github.com/vladmandic/sdnext/issues/3375 (title; the OS message in Portuguese)
SDNEXT_3375 = r'''[Issue]: OSError: [WinError 126] Não foi possível encontrar o módulo especificado. Error loading "E:\ia\automatic\venv\lib\site-packages\torch\lib\fbgemm.dll" or one of its dependencies.'''

# https://github.com/ademakdogan/nails_segmentation/issues/8
NAILS_8 = '''Thanks for releasing the code. I found that after switching the device to `cuda:0`, I got the following error.

```
  File "/home/yanhao/anaconda3/envs/nailseg/lib/python3.8/site-packages/torch/nn/modules/batchnorm.py", line 148, in forward
    self.num_batches_tracked.add_(1)  # type: ignore[has-type]
RuntimeError: CUDA error: no kernel image is available for execution on the device
```'''

# https://github.com/hustvl/Vim/issues/42 (the message block torch prints after a CUDA error)
VIM_42 = '''this is my error
CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
Can you help me? thx'''


def recorded_no_driver_traceback() -> str:
    """The traceback recorded on this project's machine (torch 2.14.1+cu130, no driver), in colour."""
    tb = load_fixture("live-torch2141-cu130-nodriver.json")["torch"]["cuda_init_error"]["traceback_tail"]
    lines = tb.rstrip("\n").split("\n")
    lines[-1] = "\x1b[31;1m" + lines[-1].replace("RuntimeError", "\x1b[0mRuntimeError\x1b[31m") + "\x1b[0m"
    return "\n".join(lines)


REAL = [
    ("detectron2#460", DETECTRON2_460, "cpu-only-torch"),
    ("recorded, ANSI colour", recorded_no_driver_traceback(), "no-nvidia-driver"),
    ("FastFCN#37", FASTFCN_37, "driver-too-old"),
    ("pytorch#133076", PYTORCH_133076, "dll-load-failure"),
    ("pytorch#131662", PYTORCH_131662, "dll-load-failure"),
    ("MaterialSearch#105", MATERIALSEARCH_105, "dll-load-failure"),
    ("sdnext#3375", SDNEXT_3375, "dll-load-failure"),
    ("nails_segmentation#8", NAILS_8, "gpu-arch-unsupported"),
    ("Vim#42", VIM_42, "gpu-arch-unsupported"),
]


@pytest.mark.parametrize("source,text,code", REAL, ids=[r[0] for r in REAL])
def test_real_error_texts(source, text, code):
    needs(code)
    res = triage(text, REG)
    top = res["candidates"][0]
    assert top["code"] == code, (source, [c["code"] for c in res["candidates"]])
    assert top["matches"][0]["role"] == "final", top["matches"]
    assert top["confidence"] in ("high", "medium")


def test_shared_cases_text_alone_names_the_label_or_its_secondary():
    """Every real case with an error text: the first code is its label (or, without the user's
    facts, a secondary label that the text itself names)."""
    cases = sorted(CASES.glob("*.error.txt"))
    if not cases:
        pytest.skip(f"no shared cases at {CASES}")
    wrong = []
    for err in cases:
        meta = json.loads(err.with_name(err.name.replace(".error.txt", ".json")).read_text())
        needs(meta["label"])
        got = first(err.read_text())
        if got not in [meta["label"]] + list(meta.get("secondary") or []):
            wrong.append((err.name, meta["label"], got))
    assert not wrong, wrong


def test_shared_cases_with_their_facts_put_the_label_first(tmp_path):
    """With the facts the user posted (their collect_env output), the label comes first for every case."""
    cases = sorted(CASES.glob("*.error.txt"))
    if not cases:
        pytest.skip(f"no shared cases at {CASES}")
    try:
        from cudadoctor.readers.collect_env import parse_collect_env
    except ImportError:
        pytest.skip("this build cannot read collect_env output")
    wrong = []
    for err in cases:
        meta = json.loads(err.with_name(err.name.replace(".error.txt", ".json")).read_text())
        needs(meta["label"])
        env = err.with_name(err.name.replace(".error.txt", ".txt"))
        facts = parse_collect_env(env.read_text())
        facts["user_error"] = {"text": err.read_text()}
        res = triage(err.read_text(), REG, diagnose(facts, REG))
        codes = [c["code"] for c in res["candidates"]]
        if not codes or codes[0] != meta["label"]:
            wrong.append((err.name, meta["label"], codes))
    assert not wrong, wrong


# --- normalising what people paste -----------------------------------------------------------


def test_normalize_strips_ansi_fences_quotes_and_entities():
    text = ("> ```python\n> \x1b[31mRuntimeError\x1b[0m: CUDA error: no kernel image\n> ```\n"
            "[1;31mE   [0m&lt;b&gt; x\\_y `code`")
    out = normalize(text)
    assert out.split("\n") == ["RuntimeError: CUDA error: no kernel image", "E   <b> x_y code"]


def test_normalize_full_width_punctuation_and_windows_line_ends():
    out = normalize("RuntimeError：CUDA error：out of memory\r\nnext\rline")
    assert out == "RuntimeError:CUDA error:out of memory\nnext\nline"


def test_final_exception_spans_the_message_lines_that_follow_it():
    lines = normalize(FASTFCN_37).split("\n")
    roles = line_roles(lines)
    finals = [l for l, r in zip(lines, roles) if r == "final"]
    assert finals[0] == "AssertionError:" and finals[1].startswith("The NVIDIA driver on your system is too old")
    assert finals[-1] == "of the CUDA driver."
    assert roles[lines.index("Traceback (most recent call last):")] == "frame"


def test_jupyter_and_json_pasted_tracebacks_find_the_final_error():
    for text in (PYTORCH_133076, PYTORCH_131662):
        res = triage(text, Registry())
        assert res["input"]["final_exception"].startswith("OSError: [WinError 126]"), res["input"]


# --- the ranking mechanism (codes made here) -------------------------------------------------

EXPL = {"what": "x" * 30, "why": "x" * 30, "confirm": "x" * 30, "fix": "x" * 30}


def reg_of(*codes: Code) -> Registry:
    r = Registry()
    for c in codes:
        r.codes[c.code] = (c, "test")
    return r


GENERIC = Code("generic-cuda-error", "A CUDA error", "torch", "error", EXPL, signatures=(r"CUDA error",))
SPECIFIC = Code("specific-kernel-image", "No kernel image", "gpu", "error", EXPL,
                signatures=(r"no kernel image is available for execution on the device",))
NUMPY = Code("numpy-warning", "NumPy", "packages", "warning", EXPL, signatures=(r"Failed to initialize NumPy",))
EARLY = Code("early-error", "An earlier error", "torch", "error", EXPL, signatures=(r"No module named 'apex'",))


def test_specific_signature_beats_generic_one_on_the_same_line():
    assert first(NAILS_8, reg=reg_of(GENERIC, SPECIFIC)) == "specific-kernel-image"
    assert specificity(SPECIFIC.signatures[0], "no kernel image is available for execution on the device") > \
        specificity(GENERIC.signatures[0], "CUDA error")
    assert specificity(r"sm_\d+", "sm_120") < specificity(r"sm_120 is not compatible", "sm_120 is not compatible")


def test_final_exception_beats_an_earlier_warning_and_an_earlier_exception():
    text = ("/usr/lib/python3/site-packages/torch/_tensor.py:12: UserWarning: Failed to initialize NumPy: _ARRAY_API not found\n"
            "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import apex\n"
            "ModuleNotFoundError: No module named 'apex'\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    x.cuda()\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    res = triage(text, reg_of(NUMPY, EARLY, SPECIFIC))
    assert [c["code"] for c in res["candidates"]] == ["specific-kernel-image", "early-error", "numpy-warning"]
    assert res["candidates"][0]["matches"][0]["role"] == "final"
    assert res["candidates"][1]["matches"][0]["role"] == "exception"


def test_only_warnings_the_last_warning_is_final():
    res = triage("UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
                 "torch/csrc/utils/tensor_numpy.cpp:84)", reg_of(NUMPY))
    assert res["candidates"][0]["matches"][0]["role"] == "final"


def test_signatures_come_from_the_registry_only():
    assert triage(DETECTRON2_460, Registry())["candidates"] == []
    plugin = Code("plugin-thing", "From a plugin", "system", "error", EXPL, signatures=(r"compiled with CUDA",))
    assert first(DETECTRON2_460, reg=reg_of(plugin)) == "plugin-thing"


def test_a_broken_signature_is_reported_not_fatal():
    bad = Code("bad-regex", "Bad", "system", "error", EXPL, signatures=(r"([unclosed",))
    res = triage("anything", reg_of(bad, SPECIFIC))
    assert res["problems"] and "bad-regex" in res["problems"][0]


def test_facts_confirm_and_reorder():
    """The recorded facts (no driver) confirm no-nvidia-driver over a generic text match."""
    facts = load_fixture("live-torch2141-cu130-nodriver.json")
    report = diagnose(facts, REG)
    generic = Code("generic-runtime", "A runtime error", "torch", "error", EXPL,
                   signatures=(r"RuntimeError: Found no NVIDIA driver on your system\. Please check",))
    reg = reg_of(generic, REG.code("no-nvidia-driver"))
    text = recorded_no_driver_traceback()
    assert first(text, reg=reg) == "generic-runtime"  # the longer, more specific signature wins on text alone
    res = triage(text, reg, report)
    assert res["candidates"][0]["code"] == "no-nvidia-driver"
    assert res["candidates"][0]["confirmed_by_facts"] is True
    assert res["candidates"][0]["fix"]["from"] == "facts" and res["candidates"][0]["fix"]["commands"]


def test_a_lower_layer_error_in_the_facts_is_named_as_root_cause():
    """Text names a companion-package symptom; the facts confirm it and show a torch-layer error below it."""
    tv = Code("tv-broken", "torchvision broken", "packages", "error", EXPL, signatures=(r"operator torchvision::nms does not exist",))
    from cudadoctor.model import Finding, Fix

    class FakeReport:
        findings = [Finding("tv-broken", "error", "tv", {}, Fix()), Finding("two-torches", "error", "two torch installs", {}, Fix(("pip uninstall torch",)))]
        checks = []

    two = Code("two-torches", "Two torch installs", "torch", "error", EXPL)
    res = triage("RuntimeError: operator torchvision::nms does not exist", reg_of(tv, two), FakeReport())
    assert [c["code"] for c in res["candidates"]] == ["two-torches", "tv-broken"]
    assert res["candidates"][0]["root_cause_of"] == "tv-broken"
    # Not when the facts do not confirm the text's code.
    FakeReport.findings = FakeReport.findings[1:]
    res = triage("RuntimeError: operator torchvision::nms does not exist", reg_of(tv, two), FakeReport())
    assert res["candidates"][0]["code"] == "tv-broken"


# --- the command -----------------------------------------------------------------------------


def test_cli_text_file_and_stdin(tmp_path):
    p = tmp_path / "err.txt"
    p.write_text(DETECTRON2_460)
    for args, inp in ((["Torch not compiled with CUDA enabled"], None), (["-f", str(p)], None), (["-"], DETECTRON2_460)):
        r = run_cli("triage", *args, input=inp)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[2].startswith("1. ✗ cpu-only-torch"), r.stdout
    r = run_cli("triage", "-f", str(p), "--format", "json")
    res = json.loads(r.stdout)
    assert res["kind"] == "cudadoctor-triage" and res["candidates"][0]["code"] == "cpu-only-torch"
    assert "/home/xx" not in r.stdout  # redacted like every output


def test_cli_nothing_recognised_and_bad_input(tmp_path):
    r = run_cli("triage", "everything is fine, just slow")
    assert r.returncode == 1 and "No known error signature" in r.stdout
    r = run_cli("triage", "", input="")
    assert r.returncode == 2 and r.stderr.startswith("cudadoctor: error:") and len(r.stderr.splitlines()) == 1
    r = run_cli("triage", "-f", str(tmp_path / "missing.txt"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_cli_with_facts_file_and_newer_schema(tmp_path):
    f = FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"
    r = run_cli("triage", "--facts", str(f), "RuntimeError: Found no NVIDIA driver on your system")
    assert r.returncode == 0 and "confirmed by the facts" in r.stdout, r.stdout
    newer = load_fixture("live-torch2141-cu130-nodriver.json")
    newer["schema_version"] = 99
    r = run_cli("triage", "--facts", str(write_json(tmp_path / "n.json", newer)), "x")
    assert r.returncode == 2 and "newer cudadoctor" in r.stderr and len(r.stderr.splitlines()) == 1


def test_cli_live_quick_is_fast_and_confirms():
    r = run_cli("triage", "--live", "--quick", "--format", "json", "RuntimeError: Found no NVIDIA driver on your system")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["with_facts"] is True


def test_markdown_output_is_escaped():
    cmarkgfm = pytest.importorskip("cmarkgfm")
    r = run_cli("triage", "--format", "markdown", "RuntimeError: Torch not compiled with CUDA enabled <img src=x> [a](https://e.example) @octocat")
    assert "### 1. `cpu-only-torch`" in r.stdout
    h = cmarkgfm.github_flavored_markdown_to_html(r.stdout, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)
    assert "<img" not in h and "e.example\"" not in h and "&lt;img src=x&gt;" in h


def test_triage_is_linear_on_hostile_pastes():
    import time

    for text in ("a" * 250_000, "a." * 120_000 + "Error: x", "RuntimeError: " * 20_000, "\x1b[" * 100_000,
                 "File \"x\", line 1\n" * 15_000, ("> " * 50_000) + "```", "&amp;" * 50_000, "\n" * 250_000,
                 "E" * 200_000 + "rror: x", "[31m" * 60_000):
        t = time.perf_counter()
        triage(text, REG)
        assert time.perf_counter() - t < 3.0, text[:30]


# --- text from another machine or time: the facts disagree ----------------------------------------

# https://github.com/pytorch/pytorch/issues/150733 (the warning and error a RTX 5090 D prints with a torch without sm_120)
SM120_TEXT = (
    "UserWarning: \nNVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch "
    "installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
)
# https://github.com/rikdz/GraphWriter/issues/6
DRIVER_OLD_TEXT = (
    "The NVIDIA driver on your system is too old (found version 6050).\nPlease update your GPU driver by downloading and "
    "installing a new\nversion from the URL: http://www.nvidia.com/Download/index.aspx\n"
)
NO_GPU_FACTS = FIXTURES / "facts" / "live-torch2141-cu130-nodriver.json"  # probed: no NVIDIA device, no driver


@pytest.mark.parametrize("text,code", [(SM120_TEXT, "gpu-arch-unsupported"), (DRIVER_OLD_TEXT, "driver-too-old")])
def test_text_the_facts_rule_out_is_never_confirmed(tmp_path, text, code):
    err = tmp_path / "err.txt"
    err.write_text(text)
    r = run_cli("triage", "-f", str(err), "--facts", str(NO_GPU_FACTS), "--format", "json")
    cands = {c["code"]: c for c in json.loads(r.stdout)["candidates"]}
    assert cands[code]["confirmed_by_facts"] is False, cands[code]
    facts_against = {d["fact"] for d in cands[code]["contradicted_by"]}
    assert "system.pci_nvidia_devices" in facts_against
    if code == "driver-too-old":
        assert "nvml.status" in facts_against
    first = json.loads(r.stdout)["candidates"][0]
    assert first["code"] == "no-nvidia-driver" and first["confirmed_by_facts"] is True
    text_out = run_cli("triage", "-f", str(err), "--facts", str(NO_GPU_FACTS)).stdout
    line = next(ln for ln in text_out.splitlines() if f" {code}: " in ln)
    assert "confirmed by the facts" not in line and "but the facts disagree: this machine has no NVIDIA GPU" in line
    # check, with the same facts and error: an info naming the fact, not an error
    r = run_cli("check", "--facts", str(NO_GPU_FACTS), "--error-file", str(err), "--format", "json")
    doc = json.loads(r.stdout)
    f = next(x for x in doc["findings"] if x["code"] == code)
    assert f["severity"] == "info" and "the facts disagree" in f["title"], f
    assert doc["extra"]["diagnosis"]["confirmed_by_facts"] is not True


def test_pasted_facts_never_rule_a_cause_out():
    """Only probed facts can: a collect_env that says "No CUDA" shows what the report lacked, not the machine."""
    from cudadoctor.facts import Facts
    from cudadoctor.interpret.agreement import disagreements

    facts = json.loads(NO_GPU_FACTS.read_text())
    facts = facts.get("facts", facts)
    assert disagreements(Facts(facts), "gpu-arch-unsupported")
    facts = {**facts, "origin": "collect_env"}
    assert disagreements(Facts(facts), "gpu-arch-unsupported") == []


def test_facts_read_from_the_error_itself_never_confirm_it(tmp_path):
    """The GPU named in torch's sm_120 warning is a fact of the text, not a second witness: triage of the
    error alone has no facts; a GPU and torch stated apart from the error are facts, and do confirm."""
    err = tmp_path / "err.txt"
    err.write_text(SM120_TEXT)
    doc = json.loads(run_cli("triage", "-f", str(err), "--format", "json").stdout)
    assert doc["with_facts"] is False and doc["candidates"][0]["confirmed_by_facts"] is None
    err.write_text("My GPU is RTX 3090, torch 1.8.1+cu102\n\n" + NAILS_8.split("\n", 2)[2])
    doc = json.loads(run_cli("triage", "-f", str(err), "--format", "json").stdout)
    top = doc["candidates"][0]
    assert doc["with_facts"] is True and top["code"] == "gpu-arch-unsupported" and top["confirmed_by_facts"] is True
