"""Round 8, srca8: the wordings PyTorch ITSELF raises, warns or logs (torch/cuda/__init__.py's capability warnings of
0.4, 2.6-2.10 and 2.11+, the jiterator's NVRTC, torch/serialization.py, the dispatcher, torch/__init__.py,
torch/utils/cpp_extension.py, torch/_ops.py load_library), mined from pytorch/pytorch's source at release tags. The
table of every site examined (covered before / after, and why a site stays unmapped) is cudadoctor/kb/errors/srca8.json.
Every real instance (tests/data/error_corpus/srca8.jsonl, public threads) must give its code in both forms,
`check --from-collect-env X --error-file E` and `check --from-text PASTE` (also quoted, inside a traceback and as a
notebook's error output); the readings that would be wrong (a GPU above the maximum, device_count() 0, torchcodec's
FFmpeg libraries, a CUDA torch in the facts) must not give them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List

import pytest

from checkcli import run_check, severities
from cudadoctor.errortext.signatures import parse

HERE = Path(__file__).parent
KB = HERE.parent / "cudadoctor" / "kb" / "errors" / "srca8.json"
CORPUS = HERE / "data" / "error_corpus" / "srca8.jsonl"
#: The one real instance of the 2.6-2.10 'Minimum and Maximum' wording below the minimum is a holdout case (kept there).
HOLDOUT_H87 = HERE / "data" / "holdout_cases" / "h87-titanxp-sm61-torch-cu128-anomalib.error.txt"
#: A collect_env report that says nothing about torch's build or the GPU.
THIN_ENV = "PyTorch version: N/A\nIs debug build: N/A\nCUDA used to build PyTorch: N/A\nOS: Ubuntu 22.04.3 LTS (x86_64)\nPython version: 3.10.12\n"
TAGGED = re.compile(r"^https://github\.com/pytorch/(?:pytorch|vision|audio)/blob/v\d+(?:\.\d+)+/\S+$")
THREAD = re.compile(r"^https://github\.com/[^/]+/[^/]+/(?:issues|pull)/\d+$")


def _rows() -> List[Dict[str, str]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _check(*args: str) -> Dict[str, str]:
    return severities(run_check(*args))


def _both_forms(tmp_path: Path, text: str, env: str = THIN_ENV) -> Dict[str, Dict[str, str]]:
    e, err = tmp_path / "env.txt", tmp_path / "error.txt"
    e.write_text(env, encoding="utf-8")
    err.write_text(text + "\n", encoding="utf-8")
    return {
        "facts": _check("--from-collect-env", str(e), "--error-file", str(err)),
        "paste": _check("--from-text", str(err)),
    }


def _paste(tmp_path: Path, text: str) -> Dict[str, str]:
    p = tmp_path / "paste.txt"
    p.write_text(text, encoding="utf-8")
    return _check("--from-text", str(p))


def test_the_table_parses_and_every_entry_names_its_source_at_a_tag():
    doc = json.loads(KB.read_text(encoding="utf-8"))
    sigs = parse(doc)
    assert len(sigs) == len(doc["signatures"]) >= 9
    for s in doc["signatures"]:
        assert any(TAGGED.match(u) for u in s["sources"]), f"{s['regex'][:60]}: no source file at a release tag"
        assert any(THREAD.match(u) for u in s["sources"]), f"{s['regex'][:60]}: no public thread quoting it"
    assert len(doc["sites"]) >= 50
    for site in doc["sites"]:
        assert TAGGED.match(site["source"]), site
        assert site["covered_before"] and site["covered_after"], site
        assert site["code"] or site["why"], f"an unmapped site says why: {site['message'][:60]}"
    mapped = {site["code"] for site in doc["sites"] if site["code"]}
    assert {s["code"] for s in doc["signatures"]} <= mapped


def test_each_signature_has_a_real_instance():
    doc = json.loads(KB.read_text(encoding="utf-8"))
    texts = [re.sub(r"\s+", " ", r["text"]) for r in _rows()]
    texts.append(re.sub(r"\s+", " ", HOLDOUT_H87.read_text(encoding="utf-8")))
    for s in doc["signatures"]:
        assert [t for t in texts if re.search(s["regex"], t, re.I)], f"no real text for {s['regex'][:60]}"


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["source"].rsplit("/", 3)[-3] + "#" + r["source"].rsplit("/", 1)[-1])
def test_each_real_instance_gives_its_code_in_both_forms(tmp_path, row):
    for form, codes in _both_forms(tmp_path, row["text"]).items():
        assert row["code"] in codes, f"{form}: {codes}"


def _wrapped(text: str) -> Dict[str, str]:
    lines = text.splitlines()
    return {
        "quoted": "Getting this when I start training:\n\n" + "\n".join("> " + line for line in lines) + "\n\nAny idea?\n",
        "traceback": 'Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n    main()\n' + text + "\n",
        "notebook": json.dumps({"output_type": "error", "ename": "RuntimeError", "evalue": lines[-1], "traceback": lines}),
    }


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["source"].rsplit("/", 3)[-3] + "#" + r["source"].rsplit("/", 1)[-1])
def test_each_real_instance_is_read_quoted_in_a_traceback_and_in_a_notebook(tmp_path, row):
    for how, text in _wrapped(row["text"]).items():
        codes = _paste(tmp_path, text)
        assert row["code"] in codes, f"{how}: {codes}"


def test_the_holdout_pascal_under_a_cu128_wheel_is_read_in_both_forms(tmp_path):
    # The 2.6-2.10 wording, read here only because the GPU (6.1) is below the build's minimum (7.0).
    text = HOLDOUT_H87.read_text(encoding="utf-8")
    only = "\n".join(line for line in text.splitlines() if "no kernel image" not in line and "sm_61 is not" not in line)
    for form, codes in _both_forms(tmp_path, only).items():
        assert codes.get("gpu-arch-unsupported") == "error", (form, codes)


#: Texts from real threads where the cause is NOT the one the nearby signature names.
NOT_THESE = [
    # pytorch/pytorch#172629, eugr/spark-vllm-docker#15: a GB10 (12.1) above the build's maximum 12.0 runs fine.
    (
        "UserWarning:\n    Found GPU0 NVIDIA GB10 which is of cuda capability 12.1.\n    Minimum and Maximum cuda capability "
        "supported by this version of PyTorch is\n    (8.0) - (12.0)\n",
        "gpu-arch-unsupported",
    ),
    # mikel-brostrom/boxmot#1476: device_count() is 0, no GPU is usable at all (not an index past the count).
    (
        "RuntimeError: Attempting to deserialize object on CUDA device 0 but torch.cuda.device_count() is 0. Please use "
        "torch.load with map_location to map your storages to an existing device.",
        "device-ordinal-invalid",
    ),
    # torchcodec's FFmpeg libraries (a missing FFmpeg, not a torch/companion mismatch).
    (
        "FFmpeg version 8: Could not load this library: /workspace/venv/lib/python3.12/site-packages/torchcodec/"
        "libtorchcodec_core8.so",
        "torchvision-mismatch",
    ),
    # CuPy's own NVRTC: the companion's CUDA is the old one, not torch's.
    ("cupy.cuda.compiler.CompileException: nvrtc: error: invalid value for --gpu-architecture", "gpu-arch-unsupported"),
]


@pytest.mark.parametrize("text,code", NOT_THESE, ids=["gb10-above-max", "device-count-0", "torchcodec-ffmpeg", "cupy-nvrtc"])
def test_neighbouring_wordings_do_not_give_the_code(tmp_path, text, code):
    for form, codes in _both_forms(tmp_path, text).items():
        assert codes.get(code) != "error", (form, codes)


def test_a_cuda_torch_in_the_facts_contradicts_the_cpu_reading_of_the_dispatcher_error(tmp_path):
    env = (
        "PyTorch version: 2.1.2+cu121\nIs debug build: False\nCUDA used to build PyTorch: 12.1\n"
        "OS: Ubuntu 22.04.3 LTS (x86_64)\nPython version: 3.10.12\nIs CUDA available: True\n"
    )
    row = next(r for r in _rows() if r["code"] == "cpu-only-torch")
    codes = _both_forms(tmp_path, row["text"], env=env)["facts"]
    assert codes.get("cpu-only-torch") != "error", codes
