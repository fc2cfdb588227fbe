"""The report's own words that the installed torch does not support the GPU's architecture (arch9).

Real wordings from public threads (tests/data/error_corpus/arch9.jsonl, with their URLs); the rule must stay silent
where the text is another architecture class's own error (nvcc, a package's capability check) or where the facts
show a build that has kernels for the GPU."""

from __future__ import annotations

import json
from pathlib import Path

from checkcli import codes, paste_findings, run_check

from cudadoctor.checks.arch import user_says_unsupported

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "arch9.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _by(source: str) -> str:
    return next(r["text"] for r in ROWS if r["source"].endswith(source))


CLAIMS = [r for r in ROWS if "no kernel image" not in r["text"]]
SHORT_209 = [r for r in ROWS if "no kernel image" in r["text"]]


def test_every_corpus_text_is_read_as_an_arch_claim_with_its_capability(tmp_path):
    assert len(CLAIMS) >= 3
    for row in CLAIMS:
        said = user_says_unsupported(row["text"])
        assert said and said[1] == "6.1", (row["source"], said)
        found = paste_findings(tmp_path, row["text"])
        assert "gpu-arch-unsupported" in codes(found), (row["source"], found)
        f = next(f for f in found if f["code"] == "gpu-arch-unsupported")
        assert f["severity"] == "warning" and f["title"].startswith("Likely:")  # a hypothesis, the build not stated
        assert "sm_61" in f["title"] and f["evidence"]["text_says"]


def test_series_and_variant_words(tmp_path):
    said = user_says_unsupported(_by("stable-diffusion-webui/pull/17172"))
    assert said == ("apparently 10 series and older gpus don't work with `cu128`", "6.1")
    said = user_says_unsupported("The dependencies install torch 2.6 which is not compatible with 50 series GPUs.")
    assert said and said[1] == "12.0"


def test_other_subjects_and_ordinary_words_stay_silent():
    assert user_says_unsupported("Python 3.12 is not supported by the cu118 wheels") is None  # no wheel for Python
    assert user_says_unsupported("drop the batch size for the 30 series") is None  # 'drop' as a verb, no support
    assert user_says_unsupported("my RTX 3090 works with cu118 fine") is None
    assert user_says_unsupported("Your driver does not support CUDA capability sm_61 any more") is None  # the driver
    # one claim per sentence: words on the next line are not read into it
    assert user_says_unsupported("errors out if CUDA is not found\nIt works fine on Jetson without an Nvidia GPU") is None


def test_another_arch_class_error_answers_instead(tmp_path):
    # a package's own capability check (starcoder's): companion-arch-unsupported, not a claim about torch's build
    found = paste_findings(tmp_path, "Error: GPU with CUDA capability 7 0 is not supported\n")
    assert "gpu-arch-unsupported" not in codes(found)
    # nvcc's own words: toolkit-arch-unsupported
    found = paste_findings(tmp_path, "nvcc fatal   : Unsupported gpu architecture 'compute_86'\nmy RTX 3090 with cu110\n")
    assert "gpu-arch-unsupported" not in codes(found)


def _facts_form(tmp_path, env: str, error: str):
    (tmp_path / "env.txt").write_text(env, encoding="utf-8")
    (tmp_path / "err.txt").write_text(error, encoding="utf-8")
    return run_check("--from-collect-env", str(tmp_path / "env.txt"), "--error-file", str(tmp_path / "err.txt"))


def test_silent_when_the_stated_build_has_kernels_for_the_gpu(tmp_path):
    env = "PyTorch version: {t}\nCUDA used to build PyTorch: {c}\nGPU models and configuration: GPU 0: NVIDIA GeForce {g}\n"
    claim = "I think {v} is not compatible with the {s} series."
    ok = _facts_form(tmp_path, env.format(t="2.1.0+cu118", c="11.8", g="RTX 3090"), claim.format(v="cu118", s="30"))
    assert "gpu-arch-unsupported" not in codes(ok)  # torch 2.1 cu118 has sm_86: the claim is not about its kernels
    bad = _facts_form(tmp_path, env.format(t="2.8.0+cu128", c="12.8", g="GTX 1070"), claim.format(v="cu128", s="10"))
    assert "gpu-arch-unsupported" in codes(bad)  # torch 2.8 cu128 has no sm_61 (the build's own list decides)


def test_error_209_quoted_short_is_read_in_both_forms(tmp_path):
    assert len(SHORT_209) >= 2
    for row in SHORT_209:
        assert "gpu-arch-unsupported" in codes(paste_findings(tmp_path, row["text"])), row["source"]
        assert "gpu-arch-unsupported" in codes(
            _facts_form(tmp_path, "PyTorch version: 1.7.0\nIs CUDA available: True\n", row["text"])
        ), row["source"]


def test_release_without_variant_no_variant_runs_the_gpu(tmp_path):
    env = "PyTorch version: 2.1.2\nIs debug build: False\nGPU models and configuration: NVIDIA GeForce {g}\n"
    (tmp_path / "env.txt").write_text(env.format(g="RTX 5070 Ti"), encoding="utf-8")
    found = run_check("--from-collect-env", str(tmp_path / "env.txt"))
    assert "gpu-arch-unsupported" in codes(found)  # neither 2.1's cu118 nor its cu121 wheel has sm_120 or its PTX
    (tmp_path / "env.txt").write_text(env.format(g="RTX 3090"), encoding="utf-8")
    assert "gpu-arch-unsupported" not in codes(run_check("--from-collect-env", str(tmp_path / "env.txt")))
