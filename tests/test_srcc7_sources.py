"""Task srcc7 (issue 21, round 7): the torch ecosystem's CUDA-setup messages, taken from the packages' sources.

kb/errors/srcc7.json holds the signatures and a `sites` table (every message site read, at release tags, with the code
it maps to or why it stays unmapped). The texts here are real threads' lines (tests/data/error_corpus/srcc7.jsonl,
each with its URL; none from the blind batches), run through both forms a support engineer uses:
`check --from-collect-env ... --error-file` (facts) and `check --from-text` (the verbatim paste).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict

import pytest

from cudadoctor import registry
from cudadoctor.commands.check import attach_error, read_pasted_text
from cudadoctor.errortext.signatures import kb_document, parse
from cudadoctor.facts import new_facts
from cudadoctor.report import diagnose

REG = registry.load(plugins=False)
CORPUS = Path(__file__).parent / "data" / "error_corpus" / "srcc7.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
DOC = kb_document("srcc7.json")


def _findings(facts: Dict[str, Any]) -> Dict[str, Any]:
    rep = diagnose(facts, REG)
    return {f.code: f for f in rep.findings if f.severity in ("error", "warning") and f.source != "cudadoctor:learned"}


def facts_form(text: str, **more: Any) -> Dict[str, Any]:
    """check --from-collect-env (here: no collect_env facts) --error-file TEXT."""
    facts = new_facts("collect_env")
    for k, v in more.items():
        facts[k].update(v)
    attach_error(facts, text)
    return _findings(facts)


def paste_form(text: str, tmp_path: Path) -> Dict[str, Any]:
    """check --from-text TEXT."""
    p = tmp_path / "paste.txt"
    p.write_text(text, encoding="utf-8")
    return _findings(read_pasted_text(str(p)))


def _id(c: Dict[str, Any]) -> str:
    return c["source"].split("github.com/")[1].replace("/issues/", "#").replace("/pull/", "#") + "-" + c["code"]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_real_line_gives_its_code_in_both_forms(case, tmp_path):
    assert case["code"] in facts_form(case["text"])
    assert case["code"] in paste_form(case["text"], tmp_path)


def test_corpus_lines_are_threads_with_a_note():
    for c in CASES:
        assert re.match(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+$", c["source"]), c["source"]
        assert c["note"] and REG.code(c["code"]) is not None


def test_table_parses_and_every_signature_cites_the_source_at_a_tag_and_threads():
    sigs = parse(DOC)
    assert len(sigs) == len(DOC["signatures"]) >= 7
    source_only = {d["regex"] for d in DOC["signatures"] if d.get("threads_found") is False}
    assert len(source_only) <= 1  # a wording seen only at its source says so
    for s in sigs:
        assert s.checked == DOC["checked"]
        at_tag = [u for u in s.sources if re.search(r"/blob/(?!main/|master/)[^/]+/", u)]
        threads = [u for u in s.sources if re.search(r"/(issues|pull)/\d+$", u)]
        assert at_tag, f"{s.code}: no source file at a release tag"
        assert threads or s.regex in source_only, f"{s.code}: no real thread"
        assert REG.code(s.code) is not None


def test_sites_table_is_complete_and_honest():
    sites = DOC["sites"]
    assert len(sites) >= 25
    for r in sites:
        assert r["sources"] and all(re.search(r"/blob/[^/]+/", u) for u in r["sources"]), r["message"]
        if r["code"] is None:
            assert r["unmapped_because"].startswith(("unmapped", "not an error"))
        else:
            assert REG.code(r["code"]) is not None
            assert r["after"] == {"facts": True, "paste": True}, r["message"]
    # the measured gain, as recorded: sites this task mapped were silent (or another code) on 719f188
    new = [r for r in sites if r["code"] and not (r["before_719f188"]["facts"] and r["before_719f188"]["paste"])]
    assert len(new) >= 8


# ------------------------------------------------------------------ wordings seen only at their source (no thread yet)


@pytest.mark.parametrize(
    "text, code",
    [
        # dgl v2.4.0 python/dgl/graphbolt/__init__.py (v2.1.0 said "Cannot find DGL C++ graphbolt library at")
        (
            "FileNotFoundError: Unable to locate the DGL C++ GraphBolt library at /usr/lib/python3/dist-packages/dgl/"
            "graphbolt/libgraphbolt_pytorch_2.5.0.so. This error typically occurs due to a version mismatch between the "
            "installed DGL and the PyTorch version you are currently using.",
            "extension-abi-mismatch",
        ),
        # xformers _cpp_lib.py, xFormersInvalidLibException without build metadata (v0.0.22 .. v0.0.28.post3)
        (
            "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for a different version of "
            "PyTorch or Python.\n  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)",
            "extension-abi-mismatch",
        ),
        # bitsandbytes 0.48 cextension.py, the version-mismatch analysis
        (
            "\U0001f6a8 CUDA VERSION MISMATCH \U0001f6a8\nRequested CUDA version:          13.0\nDetected PyTorch CUDA version:   "
            "13.0\nAvailable pre-compiled versions: \n  - 11.8\n  - 12.1\n\nThis means:\nThe version you're trying to use is "
            "NOT distributed with this package",
            "companion-cpu-only-build",
        ),
    ],
)
def test_source_wordings_give_their_code(text, code, tmp_path):
    assert code in facts_form(text)
    assert code in paste_form(text, tmp_path)


# ------------------------------------------------------------------ healthy and other owners' lines stay quiet


@pytest.mark.parametrize(
    "text",
    [
        # flash-attn's nvcc warning, then its prebuilt wheel installs (setup.py's CachedWheelsCommand)
        "  /tmp/pip-install-x/flash-attn_1/setup.py:78: UserWarning: flash_attn was requested, but nvcc was not found.  "
        "Are you sure your environment has nvcc available?  If you're installing within a container from "
        "https://hub.docker.com/r/pytorch/pytorch, only images whose names contain 'devel' will provide nvcc.\n"
        "    warnings.warn(\n  Guessing wheel URL:  https://github.com/Dao-AILab/flash-attention/releases/download/"
        "v2.5.6/flash_attn-2.5.6+cu122torch2.2cxx11abiFALSE-cp310-cp310-linux_x86_64.whl\n"
        "Successfully installed flash-attn-2.5.6",
        # vllm#248 (macOS): same torch on both sides, CUDA None by design: not an ABI mismatch
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for: PyTorch 2.0.1 with CUDA "
        "None (you have 2.0.1) Python 3.10.8 (you have 3.10.8) Please reinstall xformers",
        # vLLM's INFO line before it picks another attention backend (vllm/attention/selector.py)
        "INFO 05-10 12:00:01 selector.py:51] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.\n"
        "INFO 05-10 12:00:01 selector.py:33] Using XFormers backend.",
    ],
)
def test_healthy_lines_give_no_error(text, tmp_path):
    for got in (facts_form(text), paste_form(text, tmp_path)):
        assert not [f for f in got.values() if f.severity == "error"], got


def test_deepspeed_accepting_a_minor_difference_is_not_an_error():
    # op_builder/builder.py prints this and goes on building (DeepSpeed v0.9.0 .. v0.16.0)
    got = facts_form(
        "Installed CUDA version 12.6 does not match the version torch was compiled with 12.4 but since the APIs are "
        "compatible, accepting this combination"
    )
    assert all(f.severity != "error" for f in got.values())
    assert "cuda-home-not-set" not in got


# ------------------------------------------------------------------ the stated-mismatch finding (checks/libraries.py)

APEX = (
    "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
    "compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 10.2."
)


def test_apex_refusal_without_nvcc_version_names_torchs_cuda():
    f = facts_form(APEX)["cuda-toolkit-mismatch"]
    assert f.severity == "error" and "10.2" in f.title
    assert any("cuda-10.2" in c for c in f.fix.commands)


def test_a_toolkit_the_facts_show_equal_to_torchs_keeps_it_quiet():
    # the text came from another time: the facts' own nvcc is torch's CUDA, so no mismatch is claimed
    got = facts_form(APEX, torch={"cuda": "10.2", "version": "1.6.0"}, toolkit={"nvcc_version": "10.2"})
    assert "cuda-toolkit-mismatch" not in got


def test_flash_attn_floor_with_versions_in_the_facts_uses_them():
    got = facts_form(
        "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported "
        "version by running nvcc -V.",
        torch={"cuda": "12.1", "version": "2.3.1+cu121"},
        toolkit={"nvcc_version": "10.1"},
    )
    f = got["cuda-toolkit-mismatch"]
    assert "10.1" in f.title and "12.1" in f.title and f.severity == "error"
