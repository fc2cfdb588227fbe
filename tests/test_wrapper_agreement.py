"""One text engine: whatever a paste went through, the diagnosis is the one of the plain text.

Every real error text of the corpus (tests/data/error_corpus/*.jsonl) goes through `check --error-file`,
`check --from-text` and `triage` (the CLI, in-process) as it was written, and again under each
wrapper an issue, a mail, a terminal, a notebook or a log puts around text: `> ` quoting, ANSI colours,
HTML escapes, a notebook's JSON (a whole .ipynb with the text as an error output's traceback), a
journalctl prefix on every line, Windows CRLF, a Markdown code fence inside <details>. Each command must
name the same top cause (or refuse the same way) under every wrapper as on the plain text.
"""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest
from click.testing import CliRunner

from cudadoctor.cli import cli
from cudadoctor.facts import new_facts

CORPUS = Path(__file__).parent / "data" / "error_corpus"


def corpus() -> List[Tuple[str, str]]:
    rows = []
    for f in sorted(CORPUS.glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                rows.append((f"{f.name}:{n}", json.loads(line)["text"]))
    return rows


# --- the wrappers ------------------------------------------------------------------------------


def quoted(t: str) -> str:
    """A reply quoting the report (GitHub, e-mail)."""
    return "\n".join("> " + x if x else ">" for x in t.split("\n"))


def ansi(t: str) -> str:
    """A coloured terminal (IPython, rich, pytest): bold lines, red exception names."""
    red = re.sub(r"\b(\w*(?:Error|Exception|error))\b", "\x1b[0;31m\\1\x1b[0m", t)
    return "\n".join(f"\x1b[1m{x}\x1b[22m" if x else x for x in red.split("\n"))


def html_escaped(t: str) -> str:
    """Text taken from a web page's source or an HTML mail: &lt; &gt; &amp; &quot; &#x27;."""
    return html.escape(t, quote=True)


def notebook(t: str) -> str:
    """A whole .ipynb whose cell failed: the text is its error output's traceback, coloured, as stored."""
    lines = ansi(t).split("\n")
    cell = {
        "cell_type": "code",
        "execution_count": 3,
        "metadata": {},
        "source": ["import torch\n", "x = torch.zeros(1).cuda()\n"],
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["starting\n"]},
            {"output_type": "error", "ename": "Exception", "evalue": "see traceback", "traceback": lines},
        ],
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def journalctl(t: str) -> str:
    """A service's log read with journalctl: every line prefixed with date, host and program."""
    out = []
    for x in t.split("\n"):
        who = "kernel" if "NVRM" in x else "python3[4242]"
        out.append(f"Mar 01 12:00:{len(out) % 60:02d} gpu-node-7 {who}: {x}")
    return "\n".join(out)


def crlf(t: str) -> str:
    return t.replace("\n", "\r\n")


def markdown(t: str) -> str:
    """A GitHub issue: the traceback in a code fence inside a collapsed <details> block."""
    return f"<details>\n<summary>Full traceback</summary>\n\n```python\n{t}\n```\n\n</details>\n"


WRAPPERS: Dict[str, Callable[[str], str]] = {
    "quoted": quoted,
    "ansi": ansi,
    "html": html_escaped,
    "notebook": notebook,
    "journalctl": journalctl,
    "crlf": crlf,
    "markdown": markdown,
}

# --- the three commands, in-process ------------------------------------------------------------

_RUNNER = CliRunner()


def _doc(args: List[str]) -> Optional[dict]:
    r = _RUNNER.invoke(cli, args)
    if r.exit_code == 2:
        return None  # refused: bad input
    assert r.exit_code in (0, 1), (args, r.output[-400:], r.exception)
    return json.JSONDecoder().raw_decode(r.stdout)[0]


def _check_top(args: List[str]) -> str:
    d = _doc(args)
    if d is None:
        return "(refused)"
    diag = (d.get("extra") or {}).get("diagnosis")
    if diag:
        return diag["code"]
    named = [f["code"] for f in d["findings"] if f["severity"] in ("error", "warning")]
    return named[0] if named else "(none)"


def tops(text: str, tmp: Path) -> Tuple[str, str, str]:
    """The top cause `check --error-file`, `check --from-text` and `triage` name for ``text``."""
    p = tmp / "error.txt"
    p.write_bytes(text.encode("utf-8"))
    facts = tmp / "facts.json"
    if not facts.exists():
        facts.write_text(json.dumps(new_facts("collect_env")), encoding="utf-8")
    a = _check_top(["check", "--facts", str(facts), "--error-file", str(p), "--format", "json"])
    b = _check_top(["check", "--from-text", str(p), "--format", "json"])
    d = _doc(["triage", "-f", str(p), "--format", "json"])
    c = "(refused)" if d is None else (d["candidates"][0]["code"] if d["candidates"] else "(none)")
    return a, b, c


@functools.lru_cache(maxsize=None)
def plain_tops(tmp: str) -> Dict[str, Tuple[str, str, str]]:
    return {where: tops(text, Path(tmp)) for where, text in corpus()}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("wrappers")


@pytest.fixture(autouse=True)
def _no_plugins(monkeypatch):
    monkeypatch.setenv("CUDADOCTOR_NO_PLUGINS", "1")  # the built-in catalogue only: the same verdicts anywhere
    monkeypatch.setenv("NO_COLOR", "1")


def test_the_corpus_is_there_and_the_plain_texts_are_diagnosed(workdir):
    rows = corpus()
    assert len(rows) >= 250
    plain = plain_tops(str(workdir))
    # Not a tautology: most plain texts get a cause (the corpus test scores them); `--from-text` reads
    # a whole paste, and a bare error line is the least of what it is made for.
    for i, name, share in ((0, "check --error-file", 0.9), (1, "check --from-text", 0.75), (2, "triage", 0.9)):
        named = sum(1 for t in plain.values() if t[i] not in ("(none)", "(refused)"))
        assert named >= share * len(rows), (name, named, len(rows))


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_every_wrapper_gives_the_plain_texts_top_cause(wrapper, workdir):
    plain = plain_tops(str(workdir))
    wrap = WRAPPERS[wrapper]
    wdir = workdir / wrapper
    wdir.mkdir(exist_ok=True)
    differ = []
    for where, text in corpus():
        got = tops(wrap(text), wdir)
        for name, want, have in zip(("check --error-file", "check --from-text", "triage"), plain[where], got):
            if want != have:
                differ.append(f"{where} {name}: plain {want}, {wrapper} {have}")
    assert not differ, f"{len(differ)} differ under {wrapper}:\n" + "\n".join(differ[:30])
