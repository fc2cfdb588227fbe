"""The commands README.md and docs/*.md quote (beside their figures, in tables, in examples) exist.

Every ``cudadoctor ...`` command (also ``python -m cudadoctor``, ``torchrun ... -m cudadoctor``) in a code span
or a code block: its subcommand (and a group's subcommand, ``kb driver``) exists, answers ``--help`` with exit 0,
and has every option the docs give it. Every ``benchmarks/X.py`` named: the script exists, ``--help`` parses
(exit 0, in a subprocess) and lists every option the docs give it. Every ``pytest tests/X.py``: the file exists.
A figure whose command no longer exists (a renamed flag, a removed script) fails here (issue 23 item 9).
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from typing import Dict, List, Set, Tuple

import click
import pytest
from click.testing import CliRunner

from conftest import REPO, run_cli
from cudadoctor.cli import cli

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

#: Shown in docs/cli.md as the mistakes they are (what a mistyped command or option answers): must fail.
MISTAKES = {"cudadoctor chek", "cudadoctor check --formt json"}

_SPAN = re.compile(r"`([^`]+)`")  # a span may run over a line break, never a paragraph
_BLOCK = re.compile(r"```[^\n]*\n(.*?)```", re.S)
# "cudadoctor" as a command word: at the start, after a space or a pipe, or as `-m cudadoctor`; not a path
# part (git+https://.../cudadoctor), a namespace (`-n cudadoctor`) or "cudadoctor:" (an error line).
_CLI = re.compile(r"(?:^|(?<=[\s|]))(?<!-n )cudadoctor\s+(?=[a-z-])")
# in a comment only where a command starts: "# cudadoctor fleet ...", "# or: pbpaste | cudadoctor triage -"
_CLI_IN_COMMENT = re.compile(r"(?:^\s*|:\s+|\|\s+)cudadoctor\s+(?=[a-z-])")
_COMMENT = re.compile(r"\s#\s|\s#$")
_SCRIPT = re.compile(r"benchmarks/(\w+\.py)")
_PYTEST = re.compile(r"\bpytest\s+(tests/\w+\.py)")
_OPTION = re.compile(r"(?<![\w/{}.-])(--?[A-Za-z][\w-]*)")


def _snippets() -> List[Tuple[str, str]]:
    """(doc, snippet): every code span outside code blocks, and every line of a code block."""
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in _BLOCK.findall(text):
            out += [(doc.name, line) for line in block.splitlines()]
        spans = (m.group(1) for m in _SPAN.finditer(_BLOCK.sub("", text)))
        out += [(doc.name, " ".join(s.split("\n"))) for s in spans if "\n\n" not in s]
    return out


def _command(rest: str) -> str:
    """The command's own words: up to a comment, a shell pipe, a redirection or the next command; the quoted
    arguments blanked (an error text is not an option); Markdown's ``\\|`` is the synopsis' ``|``."""
    rest = re.split(r"\s#\s|\s#$|\s\|\s|\s>>?\s|\s&&\s|;\s", rest + " ", maxsplit=1)[0]
    rest = re.sub(r'"[^"]*"|\'[^\']*\'', '""', rest)
    return rest.replace("\\|", "|").strip()


def _split(snippet: str) -> Tuple[str, str, str]:
    """(code, "#", comment) of one line; the comment empty when there is none."""
    m = _COMMENT.search(snippet)
    return (snippet[: m.start()], "#", snippet[m.end() :]) if m else (snippet, "", "")


def cli_commands() -> Dict[str, Set[str]]:
    """'check --format -o ...' (the words after `cudadoctor`) -> the docs quoting it."""
    found: Dict[str, Set[str]] = {}
    for doc, snippet in _snippets():
        code, _, comment = _split(snippet)
        starts = [code[m.end() :] for m in _CLI.finditer(code)] + [comment[m.end() :] for m in _CLI_IN_COMMENT.finditer(comment)]
        for rest in starts:
            cmd = _command(rest)
            if cmd and f"cudadoctor {cmd}" not in MISTAKES:
                found.setdefault(cmd, set()).add(doc)
    return found


def scripts() -> Dict[str, Set[str]]:
    """'fleet_10k.py' -> the options the docs give it anywhere."""
    found: Dict[str, Set[str]] = {}
    for _doc, snippet in _snippets():
        for m in _SCRIPT.finditer(snippet):
            found.setdefault(m.group(1), set()).update(_OPTION.findall(_command(snippet[m.end() :])))
    return found


def resolve(words: List[str]) -> Tuple[click.Command, List[str], List[str]]:
    """The (sub)command the words name, the path to it and the words after it (global options skipped)."""
    ctx = click.Context(cli, info_name="cudadoctor")
    cmd: click.Command = cli
    path: List[str] = []
    i = 0
    while i < len(words) and isinstance(cmd, click.Group):
        w = words[i].strip("[]")  # a synopsis' optional part: `kb [driver 12.8 | ...]`, `[--format json]`
        if w.startswith("-"):  # a global option, and its value when it takes one
            opt = next((p for p in cmd.params if w in p.opts), None)
            i += 2 if isinstance(opt, click.Option) and not opt.is_flag else 1
            continue
        sub = cmd.get_command(ctx, w)
        if sub is None:
            break
        cmd, path, i = sub, path + [w], i + 1
    return cmd, path, words[i:]


def options_of(cmd: click.Command) -> Set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}


@lru_cache(maxsize=None)
def cli_help(path: Tuple[str, ...]) -> Tuple[int, str]:
    r = CliRunner().invoke(cli, [*path, "--help"])
    return r.exit_code, r.output


@lru_cache(maxsize=None)
def script_help(name: str) -> Tuple[int, str]:
    r = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / name), "--help"], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    return r.returncode, r.stdout + r.stderr


def test_the_docs_quote_commands_and_scripts():
    """The finders see what the docs really quote (so an empty parametrisation cannot pass for a check)."""
    cmds = cli_commands()
    assert "check --format json -o DIR/{host}.json" in cmds  # docs/cluster.md's recipe
    assert "kb driver 12.8" in cmds and "triage --github-event FILE --format github-comment" in cmds
    assert {"fleet_10k.py", "check_speed.py", "gpu_validate.py", "score_blind.py"} <= set(scripts())
    assert "--rounds" in scripts()["check_speed.py"] and "--nodes" in scripts()["fleet_10k.py"]
    assert not any(c.startswith(("0.1.0", "error")) for c in cmds)  # output lines are not commands


@pytest.mark.parametrize("cmd", sorted(cli_commands()))
def test_every_quoted_command_exists_with_its_options(cmd):
    words = cmd.split()
    target, path, rest = resolve(words)
    if not path and rest and rest[0].isupper():  # `cudadoctor COMMAND --help`: a placeholder
        return
    assert path or not rest, f"`cudadoctor {cmd}` ({', '.join(sorted(cli_commands()[cmd]))}): no such command {rest[0]!r}"
    if isinstance(target, click.Group) and rest and not rest[0].strip("[]").startswith("-"):
        assert rest[0].isupper(), f"`cudadoctor {cmd}`: {' '.join(path)} has no command {rest[0]!r}"
    code, out = cli_help(tuple(path))
    assert code == 0, (cmd, out)
    # an option of the command, or of the groups above it (`cudadoctor --color never check`)
    allowed = options_of(target) | options_of(cli)
    if path[:-1]:
        allowed |= options_of(resolve(path[:-1])[0])
    unknown = [o for o in _OPTION.findall(cmd) if o not in allowed]
    assert not unknown, f"`cudadoctor {cmd}` ({', '.join(sorted(cli_commands()[cmd]))}): no option {unknown}"


@pytest.mark.parametrize("cmd", sorted(MISTAKES))
def test_the_mistakes_docs_show_are_mistakes(cmd):
    r = run_cli(*cmd.split()[1:])
    assert r.returncode == 2 and "did you mean" in r.stderr.lower(), r.stderr


@pytest.mark.parametrize("name", sorted(scripts()))
def test_every_benchmark_script_named_parses_its_options(name):
    assert (REPO / "benchmarks" / name).is_file(), name
    code, out = script_help(name)
    assert code == 0, out[-2000:]
    missing = [o for o in sorted(scripts()[name]) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", out)]
    assert not missing, f"benchmarks/{name} --help does not list {missing}"


def test_every_test_file_named_exists():
    named = {m.group(1) for _doc, s in _snippets() for m in _PYTEST.finditer(s)}
    assert "tests/test_holdout_cases.py" in named
    assert all((REPO / n).is_file() for n in named), sorted(n for n in named if not (REPO / n).is_file())
