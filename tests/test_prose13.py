"""Causes said in words (kb/errors/prose13.json): a container's /dev/shm too small for DataLoader workers, in the
wordings of maintainers and reporters (tests/data/error_corpus/prose13.jsonl), and not GPU shared memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checkcli import codes, paste_findings

from cudadoctor.errortext import signatures

CORPUS = Path(__file__).parent / "data" / "error_corpus" / "prose13.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SIGS = signatures.parse(signatures.kb_document("prose13.json"))


def _codes(text: str) -> set:
    return {s.code for s in SIGS if signatures.compiled(s.regex).search(text)}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["source"].rsplit("/", 2)[-1])
def test_real_wordings_read_as_their_cause(row):
    assert _codes(row["text"]) == {row["code"]}


def test_a_pull_request_stating_the_cause_is_diagnosed(tmp_path):
    # azavea/raster-vision#1077's description (a maintainer's fix of its own Docker image)
    text = (
        "Avoid shared memory-related errors when doing training with num_workers > 0\n"
        "Currently, running a training job with `num_workers > 0` leads to a cryptic error message from the "
        "`DataLoader`. This error is known to occur when the shared memory in the Docker container is insufficient."
    )
    assert "shm-exhausted" in codes(paste_findings(tmp_path, text))


@pytest.mark.parametrize(
    "text",
    [
        # GPU shared memory: per block, Triton's resource check, ptxas
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. "
        "Reducing block sizes or `num_stages` may help.",
        "ptxas error   : Entry function '_Z3fooPf' uses too much shared data (0x10000 bytes, 0xc000 max)",
        "my kernel fails: shared memory per block is not enough for this tile size",
        # memory of a container, not its /dev/shm
        "I run it in a docker container with 64GB of RAM and an A100",
    ],
)
def test_other_memories_are_not_shm(text):
    assert _codes(text) == set()
